#include "known_hosts.h"

#include "base64.h"

#include <ctype.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

static int
append(const char *file, const char *host, int port, const char *type,
       const char *key, size_t len)
{
    char *b64 = malloc(len * 2 + 8), line[8192];
    int fd, n, r = -1;

    if (b64 == NULL)
        return -1;
    base64_encode((const unsigned char *)key, len, b64, len * 2 + 8, 1);
    if (port == 22)
        n = snprintf(line, sizeof(line), "%s %s %s\n", host, type, b64);
    else
        n = snprintf(line, sizeof(line), "[%s]:%d %s %s\n", host, port, type,
                     b64);
    free(b64);
    fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && n < (int)sizeof(line) && write(fd, line, (size_t)n) == n)
        r = 0;
    if (fd >= 0)
        close(fd);
    return r;
}

int
known_hosts_check(LIBSSH2_SESSION *s, const char *file, const char *host,
                  int port, int accept_new, char *fp, size_t fpsize)
{
    size_t len;
    int type, bits, r;
    const char *key = libssh2_session_hostkey(s, &len, &type), *name;
    const char *hash = libssh2_hostkey_hash(s, LIBSSH2_HOSTKEY_HASH_SHA256);
    LIBSSH2_KNOWNHOSTS *kh;
    struct libssh2_knownhost *entry;
    char b64[64];

    fp[0] = '\0';
    if (hash) {
        base64_encode((const unsigned char *)hash, 32, b64, sizeof(b64), 0);
        snprintf(fp, fpsize, "SHA256:%s", b64);
    }
    if (key == NULL || (bits = key_kind(type, &name)) < 0 ||
        (kh = libssh2_knownhost_init(s)) == NULL)
        return KH_ERROR;
    /* a missing file is an empty one */
    libssh2_knownhost_readfile(kh, file, LIBSSH2_KNOWNHOST_FILE_OPENSSH);
    r = libssh2_knownhost_checkp(kh, host, port, key, len,
                                 LIBSSH2_KNOWNHOST_TYPE_PLAIN |
                                     LIBSSH2_KNOWNHOST_KEYENC_RAW | bits,
                                 &entry);
    libssh2_knownhost_free(kh);
    if (r == LIBSSH2_KNOWNHOST_CHECK_MATCH)
        return KH_MATCH;
    if (r == LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
        return KH_CHANGED;
    if (r != LIBSSH2_KNOWNHOST_CHECK_NOTFOUND)
        return KH_ERROR;
    if (!accept_new)
        return KH_UNKNOWN;
    return append(file, host, port, name, key, len) == 0 ? KH_ADDED : KH_ERROR;
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

int
known_hosts_config_accepts_new(void)
{
    const char *h = home_dir();
    char path[4096], line[1024], *key, *val;
    FILE *f;
    int global = 1, accepts = 0;

    if (h == NULL)
        return 0;
    snprintf(path, sizeof(path), "%s/.ssh/config", h);
    if ((f = fopen(path, "re")) == NULL)
        return 0;
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
    fclose(f);
    return accepts;
}
