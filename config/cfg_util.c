#include "cfg_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
cfg_parse_long(const char *s, long min, long max, long *out)
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
cfg_parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0' || isspace((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int
cfg_parse_bool(const char *s, int *out)
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

char *
cfg_strndup_trim(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)s[0]))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

int
cfg_read_file(const char *path, char **text, size_t *len, cfg_err *e)
{
    enum { LIMIT = 16 << 20 };
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    int r = 0;

    if (f == NULL)
        return cfg_fail(e, CFG_EIO, "cannot open '%s': %s", path,
                        strerror(errno));
    if ((buf = malloc(LIMIT + 1)) == NULL) {
        r = cfg_fail(e, CFG_ENOMEM, "out of memory");
        goto out;
    }
    n = fread(buf, 1, LIMIT + 1, f);
    if (ferror(f))
        r = cfg_fail(e, CFG_EIO, "cannot read '%s': %s", path, strerror(errno));
    else if (n > LIMIT)
        r = cfg_fail(e, CFG_ERANGE, "'%s' is larger than 16 MiB", path);
out:
    fclose(f);
    if (r != 0) {
        free(buf);
        return r;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
