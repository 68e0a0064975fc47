/* The handshake of srun_auth.h, on libsodium's HMAC-SHA256 and random
 * bytes. Not OpenSSL's: hvdrun-srun-agent runs once per node and job,
 * and OpenSSL 3 sets up its providers on the first HMAC, which made a
 * process that only loads the library and does the handshake's two MACs
 * cost 3.4 ms of CPU against 0.8 with libsodium (perf stat -r 50); under
 * Slurm the nodes of a job start at once, often on shared CPUs. */
#include "srun_auth.h"

#include <sodium.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static void
hex(char *out, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* MAC_role over everything the handshake binds, in hex. */
static int
mac(const char *secret, char role, const char *node, int stream,
    const char *where, const char *snonce, const char *cnonce, char out[65])
{
    char msg[SRUN_AUTH_LINE];
    unsigned char md[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    int n = snprintf(msg, sizeof(msg), "hvdrun-srun-1\n%c\n%s\n%d\n%s\n%s\n%s",
                     role, node, stream, where, snonce, cnonce);

    /* (the _init form: the secret is a key of any length, not 32 bytes) */
    if (n < 0 || (size_t)n >= sizeof(msg) || sodium_init() < 0 ||
        crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret,
                                    strlen(secret)) != 0 ||
        crypto_auth_hmacsha256_update(&st, (const unsigned char *)msg,
                                      (size_t)n) != 0 ||
        crypto_auth_hmacsha256_final(&st, md) != 0)
        return -1;
    sodium_memzero(&st, sizeof(st));
    hex(out, md, sizeof(md));
    return 0;
}

static int
fresh_nonce(char out[SRUN_AUTH_NONCE])
{
    unsigned char b[16];

    if (sodium_init() < 0)
        return -1;
    randombytes_buf(b, sizeof(b));
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
                 int stream, const char *where, char *answer, size_t n,
                 char expect[65])
{
    char snonce[SRUN_AUTH_NONCE], cnonce[SRUN_AUTH_NONCE], mine[65];

    if (sscanf(hello, "HVDS1 %32s", snonce) != 1 || !is_hex(snonce, 32) ||
        fresh_nonce(cnonce) != 0 ||
        mac(secret, 'a', node, stream, where, snonce, cnonce, mine) != 0 ||
        mac(secret, 'h', node, stream, where, snonce, cnonce, expect) != 0)
        return -1;
    snprintf(answer, n, "%s %d %s %s\n", node, stream, cnonce, mine);
    return 0;
}

int
srun_auth_check(const char *secret, const char *nonce, const char *where,
                const char *answer, char *node, size_t nodelen, int *stream,
                char *proof, size_t n)
{
    char name[256], cnonce[SRUN_AUTH_NONCE], theirs[65], want[65], ours[65];

    if (sscanf(answer, "%255s %d %32s %64s", name, stream, cnonce, theirs) !=
            4 ||
        *stream < 0 || *stream > 2 || !is_hex(cnonce, 32) ||
        !is_hex(theirs, 64) ||
        mac(secret, 'a', name, *stream, where, nonce, cnonce, want) != 0 ||
        !srun_auth_equal(want, theirs) ||
        mac(secret, 'h', name, *stream, where, nonce, cnonce, ours) != 0)
        return -1;
    snprintf(node, nodelen, "%s", name);
    snprintf(proof, n, "%s\n", ours);
    return 0;
}

int
srun_auth_equal(const char *a, const char *b)
{
    size_t n = strlen(a);

    return n == strlen(b) && sodium_memcmp(a, b, n) == 0;
}

int
srun_auth_where(int fd, int peer, char *out, size_t n)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof(a);
    char ip[INET6_ADDRSTRLEN];
    int port;

    if ((peer ? getpeername(fd, (struct sockaddr *)&a, &len)
              : getsockname(fd, (struct sockaddr *)&a, &len)) != 0)
        return -1;
    if (a.ss_family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&a;
        inet_ntop(AF_INET, &v4->sin_addr, ip, sizeof(ip));
        port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
        inet_ntop(AF_INET6, &v6->sin6_addr, ip, sizeof(ip));
        port = ntohs(v6->sin6_port);
    } else {
        return -1;
    }
    snprintf(out, n, "%s %d", ip, port);
    return 0;
}
