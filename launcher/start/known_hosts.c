#include "known_hosts.h"

#include "base64.h"

#include <ctype.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *
home_dir(void)
{
    const char *h = getenv("HOME");
    struct passwd *pw;

    if (h && h[0])
        return h;
    pw = getpwuid(getuid());
    return pw ? pw->pw_dir : NULL;
}

void
known_hosts_default(char *path, size_t size)
{
    const char *h = home_dir();

    snprintf(path, size, "%s%s", h ? h : "", h ? "/.ssh/known_hosts" : "");
}

/* libssh2's host key type to its known_hosts bits and OpenSSH name. */
static int
key_kind(int type, const char **name)
{
    switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA:
        *name = "ssh-rsa";
        return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
        *name = "ecdsa-sha2-nistp256";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
        *name = "ecdsa-sha2-nistp384";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
        *name = "ecdsa-sha2-nistp521";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_ED25519:
        *name = "ssh-ed25519";
        return LIBSSH2_KNOWNHOST_KEY_ED25519;
    }
    *name = NULL;
    return -1;
}

int
known_hosts_entry(char *line, size_t size, int last, const char *host, int port,
                  int type, const char *key, size_t len)
{
    /* else the new line would run on from the file's last one */
    const char *nl = last != 0 && last != '\n' ? "\n" : "";
    const char *name;
    char *b64, field[300];
    int n;

    /* a key recorded under a host field libssh2 cannot match would read as
     * unknown at every login: refuse it instead */
    if (port == 22)
        n = snprintf(field, sizeof(field), "%s", host);
    else
        n = snprintf(field, sizeof(field), "[%s]:%d", host, port);
    if (n < 0 || n > KH_HOST_FIELD_MAX)
        return -1;
    if (key_kind(type, &name) < 0 || (b64 = malloc(len * 2 + 8)) == NULL)
        return -1;
    base64_encode((const unsigned char *)key, len, b64, len * 2 + 8, 1);
    n = snprintf(line, size, "%s%s %s %s\n", nl, field, name, b64);
    free(b64);
    if (n < 0 || (size_t)n >= size || (size_t)n - strlen(nl) > KH_LINE_MAX)
        return -1;
    return n;
}

/* Appends the line for a new key to file, which may not end in a newline
 * (a file edited by hand often does not). */
static int
append(const char *file, const char *host, int port, int type, const char *key,
       size_t len)
{
    char line[KH_LINE_MAX + 2], last = 0;
    struct stat st;
    int fd, n, r = -1;

    fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 ||
        (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1))
        goto out;
    n = known_hosts_entry(line, sizeof(line), last, host, port, type, key, len);
    if (n >= 0 && write(fd, line, (size_t)n) == n)
        r = 0;
out:
    close(fd);
    return r;
}

int
known_hosts_lookup(LIBSSH2_KNOWNHOSTS *kh, const char *host, int port, int type,
                   const char *key, size_t len)
{
    struct libssh2_knownhost *entry;
    const char *name;
    int bits = key_kind(type, &name), r;

    if (bits < 0)
        return KH_ERROR;
    r = libssh2_knownhost_checkp(kh, host, port, key, len,
                                 LIBSSH2_KNOWNHOST_TYPE_PLAIN |
                                     LIBSSH2_KNOWNHOST_KEYENC_RAW | bits,
                                 &entry);
    if (r == LIBSSH2_KNOWNHOST_CHECK_MATCH)
        return KH_MATCH;
    if (r == LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
        return KH_CHANGED;
    return r == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND ? KH_UNKNOWN : KH_ERROR;
}

int
known_hosts_check(LIBSSH2_SESSION *s, const char *file, const char *host,
                  int port, int accept_new, char *fp, size_t fpsize)
{
    size_t len;
    int type, r;
    const char *key = libssh2_session_hostkey(s, &len, &type), *name;
    const char *hash = libssh2_hostkey_hash(s, LIBSSH2_HOSTKEY_HASH_SHA256);
    LIBSSH2_KNOWNHOSTS *kh;
    char b64[64];

    fp[0] = '\0';
    if (hash) {
        base64_encode((const unsigned char *)hash, 32, b64, sizeof(b64), 0);
        snprintf(fp, fpsize, "SHA256:%s", b64);
    }
    if (key == NULL || key_kind(type, &name) < 0 ||
        (kh = libssh2_knownhost_init(s)) == NULL)
        return KH_ERROR;
    /* a missing file is an empty one */
    libssh2_knownhost_readfile(kh, file, LIBSSH2_KNOWNHOST_FILE_OPENSSH);
    r = known_hosts_lookup(kh, host, port, type, key, len);
    libssh2_knownhost_free(kh);
    if (r != KH_UNKNOWN || !accept_new)
        return r;
    return append(file, host, port, type, key, len) == 0 ? KH_ADDED : KH_ERROR;
}

/* The first word of a config line and its value, lower-cased key. */
static int
config_pair(char *line, char **key, char **val)
{
    char *p = line;

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '#' || *p == '\0')
        return -1;
    *key = p;
    while (*p && !isspace((unsigned char)*p) && *p != '=')
        p++;
    if (*p)
        *p++ = '\0';
    while (isspace((unsigned char)*p) || *p == '=')
        p++;
    *val = p;
    p[strcspn(p, " \t\r\n")] = '\0';
    return 0;
}

/* The loop of known_hosts_config_accepts_new, on any stream. */
static int
config_accepts_new(FILE *f)
{
    char line[1024], *key, *val;
    int global = 1, accepts = 0;

    while (fgets(line, sizeof(line), f))
        if (config_pair(line, &key, &val) == 0) {
            if (strcasecmp(key, "Host") == 0 || strcasecmp(key, "Match") == 0)
                global = strcmp(val, "*") == 0;
            else if (global && strcasecmp(key, "StrictHostKeyChecking") == 0) {
                accepts = strcasecmp(val, "accept-new") == 0 ||
                          strcasecmp(val, "no") == 0 ||
                          strcasecmp(val, "off") == 0;
                break; /* ssh uses the first value it reads */
            }
        }
    return accepts;
}

int
known_hosts_config_accepts_new(void)
{
    const char *h = home_dir();
    char path[4096];
    FILE *f;
    int accepts;

    if (h == NULL)
        return 0;
    snprintf(path, sizeof(path), "%s/.ssh/config", h);
    if ((f = fopen(path, "re")) == NULL)
        return 0;
    accepts = config_accepts_new(f);
    fclose(f);
    return accepts;
}

int
known_hosts_config_text_accepts_new(const char *text, size_t len)
{
    FILE *f;
    int accepts;

    /* the same stream reads as the file's, so that lines are cut alike */
    if (len == 0 || (f = fmemopen((void *)text, len, "r")) == NULL)
        return 0;
    accepts = config_accepts_new(f);
    fclose(f);
    return accepts;
}
