#include "hvdd_token.h"

#include <ctype.h>
#include <string.h>
#include <sys/random.h>

int
hvdd_token_new(char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[HVDD_TOKEN_LEN / 2];
    size_t got = 0;

    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[HVDD_TOKEN_LEN] = '\0';
    memset(raw, 0, sizeof(raw));
    return 0;
}

int
hvdd_token_valid(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return i == HVDD_TOKEN_LEN;
}
