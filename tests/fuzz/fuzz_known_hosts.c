/* libFuzzer target: host keys against known_hosts without a connection.
 * The input is split on NUL bytes into a known_hosts text, a host name, a
 * port, a key type (its first byte) and the key the server sent (the
 * rest). The whole input is also read as an ~/.ssh/config.
 *
 * libssh2 parses the known_hosts lines (plain and "|1|salt|hash" hosts,
 * "[host]:port"); this target reads them as libssh2_knownhost_readfile
 * does, asks known_hosts_lookup about the key, and when the key is
 * unknown, appends the line known_hosts_check would write and reads the
 * whole text again: the key must then match, or hvdrun would record a
 * key that it cannot find the next time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "known_hosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant broken: abort, which libFuzzer reports with the input. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)

static LIBSSH2_SESSION *session; /* never connected: only for allocation */

const char *__lsan_default_suppressions(void);

/* LeakSanitizer's hook: libssh2 1.10 leaks an HMAC context (from
 * libcrypto) in libssh2_knownhost_checkp for each hashed entry whose hash
 * is not 20 bytes long. Not ours to fix, and the stack of such a leak may
 * end in libcrypto (built without frame pointers); none of our code
 * calls libcrypto itself. */
const char *
__lsan_default_suppressions(void)
{
    return "leak:libcrypto.so\n";
}

/* The next NUL-terminated field of the input; the last one takes the rest,
 * NULs and all. NULL at the end. */
static const char *
field(const char **p, const char *end, size_t *len, int last)
{
    const char *start = *p, *nul;

    if (start >= end)
        return NULL;
    nul = last ? NULL : memchr(start, '\0', (size_t)(end - start));
    *len = (size_t)((nul ? nul : end) - start);
    *p = nul ? nul + 1 : end;
    return start;
}

/* Entries of text as libssh2_knownhost_readfile reads a file: lines of at
 * most 4091 bytes, until the first one it cannot parse. 0, or -1 when the
 * reading stopped early. */
static int
read_text(LIBSSH2_KNOWNHOSTS *kh, const char *text, size_t len)
{
    char buf[4092];
    FILE *f;
    int r = 0;

    if (len == 0)
        return 0;
    if ((f = fmemopen((void *)text, len, "r")) == NULL)
        return -1;
    while (r == 0 && fgets(buf, sizeof(buf), f))
        if (libssh2_knownhost_readline(kh, buf, strlen(buf),
                                       LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
            r = -1;
    fclose(f);
    return r;
}

/* The verdict for the key against text, read into a fresh list. */
static int
lookup(const char *text, size_t len, const char *host, int port, int type,
       const char *key, size_t keylen, int *complete)
{
    LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(session);
    int r;

    REQUIRE(kh != NULL);
    *complete = read_text(kh, text, len) == 0;
    r = known_hosts_lookup(kh, host, port, type, key, keylen);
    libssh2_knownhost_free(kh);
    return r;
}

static int
parse_port(const char *s, size_t len)
{
    long port = 0;

    if (len == 0 || len > 5)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        port = port * 10 + (s[i] - '0');
    }
    return port >= 1 && port <= 65535 ? (int)port : -1;
}

/* Appends the line for a new key to text and checks that it is found. */
static void
record_and_find(const char *text, size_t len, const char *host, int port,
                int type, const char *key, size_t keylen)
{
    char line[KH_LINE_MAX + 2], *grown;
    int n = known_hosts_entry(line, sizeof(line), len ? text[len - 1] : 0, host,
                              port, type, key, keylen),
        complete;

    if (n < 0)
        return; /* known_hosts_check refuses the key */
    REQUIRE((grown = malloc(len + (size_t)n)) != NULL);
    memcpy(grown, text, len);
    memcpy(grown + len, line, (size_t)n);
    REQUIRE(lookup(grown, len + (size_t)n, host, port, type, key, keylen,
                   &complete) == KH_MATCH);
    free(grown);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data, *p = in, *end = in + size;
    const char *text, *host, *port_s, *type_s, *key;
    size_t len, hostlen, portlen, typelen, keylen;
    char name[256];
    int port, type, r, complete;

    known_hosts_config_text_accepts_new(in, size);
    if (session == NULL && (session = libssh2_session_init()) == NULL)
        return 0;
    if ((text = field(&p, end, &len, 0)) == NULL ||
        (host = field(&p, end, &hostlen, 0)) == NULL ||
        (port_s = field(&p, end, &portlen, 0)) == NULL ||
        (type_s = field(&p, end, &typelen, 0)) == NULL ||
        (key = field(&p, end, &keylen, 1)) == NULL)
        return 0;
    /* hvdrun checks only host names its host list accepts, and keys that
     * libssh2 took in a handshake: none is shorter than ssh-ed25519's 51
     * bytes (libssh2's reader refuses a key under 20 characters) */
    if (hostlen >= sizeof(name) || typelen == 0 || keylen < 51 ||
        (port = parse_port(port_s, portlen)) < 0)
        return 0;
    memcpy(name, host, hostlen);
    name[hostlen] = '\0';
    if (!cfg_host_name_valid(name))
        return 0;
    type = (unsigned char)type_s[0] % 8; /* every LIBSSH2_HOSTKEY_TYPE_* */
    r = lookup(text, len, name, port, type, key, keylen, &complete);
    /* libssh2 1.10 reads a host field of 1 or 2 characters as a broken
     * hashed one and drops the line: nothing hvdrun writes can help */
    if (r == KH_UNKNOWN && complete && hostlen > 2)
        record_and_find(text, len, name, port, type, key, keylen);
    return 0;
}
