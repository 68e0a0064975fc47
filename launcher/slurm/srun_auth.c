/* The handshake of srun_auth.h, on OpenSSL's HMAC and random bytes. */
#include "srun_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

static void
hex(char *out, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* MAC_role over everything the handshake binds, in hex. */
static int
mac(const char *secret, char role, const char *node, int stream,
    const char *snonce, const char *cnonce, char out[65])
{
    char msg[SRUN_AUTH_LINE];
    unsigned char md[32];
    unsigned int len = 0;
    int n = snprintf(msg, sizeof(msg), "hvdrun-srun-1\n%c\n%s\n%d\n%s\n%s",
                     role, node, stream, snonce, cnonce);

    if (n < 0 || (size_t)n >= sizeof(msg) ||
        HMAC(EVP_sha256(), secret, (int)strlen(secret),
             (const unsigned char *)msg, (size_t)n, md, &len) == NULL ||
        len != sizeof(md))
        return -1;
    hex(out, md, sizeof(md));
    return 0;
}

static int
fresh_nonce(char out[SRUN_AUTH_NONCE])
{
    unsigned char b[16];

    if (RAND_bytes(b, sizeof(b)) != 1)
        return -1;
    hex(out, b, sizeof(b));
    return 0;
}

static int
is_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

int
srun_auth_hello(char nonce[SRUN_AUTH_NONCE], char *line, size_t n)
{
    if (fresh_nonce(nonce) != 0)
        return -1;
    snprintf(line, n, "HVDS1 %s\n", nonce);
    return 0;
}

int
srun_auth_answer(const char *secret, const char *hello, const char *node,
                 int stream, char *answer, size_t n, char expect[65])
{
    char snonce[SRUN_AUTH_NONCE], cnonce[SRUN_AUTH_NONCE], mine[65];

    if (sscanf(hello, "HVDS1 %32s", snonce) != 1 || !is_hex(snonce, 32) ||
        fresh_nonce(cnonce) != 0 ||
        mac(secret, 'a', node, stream, snonce, cnonce, mine) != 0 ||
        mac(secret, 'h', node, stream, snonce, cnonce, expect) != 0)
        return -1;
    snprintf(answer, n, "%s %d %s %s\n", node, stream, cnonce, mine);
    return 0;
}

int
srun_auth_check(const char *secret, const char *nonce, const char *answer,
                char *node, size_t nodelen, int *stream, char *proof, size_t n)
{
    char name[256], cnonce[SRUN_AUTH_NONCE], theirs[65], want[65], ours[65];

    if (sscanf(answer, "%255s %d %32s %64s", name, stream, cnonce, theirs) !=
            4 ||
        *stream < 0 || *stream > 2 || !is_hex(cnonce, 32) ||
        !is_hex(theirs, 64) ||
        mac(secret, 'a', name, *stream, nonce, cnonce, want) != 0 ||
        !srun_auth_equal(want, theirs) ||
        mac(secret, 'h', name, *stream, nonce, cnonce, ours) != 0)
        return -1;
    snprintf(node, nodelen, "%s", name);
    snprintf(proof, n, "%s\n", ours);
    return 0;
}

int
srun_auth_equal(const char *a, const char *b)
{
    size_t n = strlen(a);

    return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}
