#include "cfg_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
