#include "hvd_numbers.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
hvd_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        if (s == NULL || min >= 0 || s[0] != '-' ||
            !isdigit((unsigned char)s[1]))
            return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int
hvd_parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0' || isspace((unsigned char)s[0]))
        return -1;
    /* decimal only: strtod also reads "0x10" (16), "inf" and "nan" */
    for (const char *c = s; *c; c++)
        if (!strchr("0123456789.eE+-", *c))
            return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int
hvd_parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"true", "yes", "on", "1"};
    static const char *no[] = {"false", "no", "off", "0"};
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}
