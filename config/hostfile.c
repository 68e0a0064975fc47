/* Host file format detection and loading. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "hostfile.h"

/* A "key:" at the start of a line, followed by a blank or the line's end:
 * Hydra's "node1:4" has no blank after its colon, YAML's "hosts:" has. */
static int
yaml_key_line(const char *p, const char *end)
{
    if (!isalpha((unsigned char)*p) && *p != '_')
        return 0;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
        p++;
    return p < end && *p == ':' &&
           (p + 1 == end || p[1] == ' ' || p[1] == '\t' || p[1] == '\r');
}

int
cfg_hostfile_is_yaml(const char *text, size_t len)
{
    const char *p = text, *end = text + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        const char *eol = nl ? nl : end, *q = p;
        while (q < eol && (*q == ' ' || *q == '\t'))
            q++;
        if (q < eol && *q != '#' && *q != '\r') {
            if (*q == '-' && (q + 1 == eol || strchr(" \t\r-", q[1])))
                return 1;
            return yaml_key_line(q, eol);
        }
        p = eol + 1;
    }
    return 0;
}

int
cfg_hostfile_parse(const char *text, size_t len, const char *file,
                   cfg_hostlist *out, cfg_err *e)
{
    int r;

    if (cfg_hostfile_is_yaml(text, len))
        return cfg_hostfile_parse_yaml(text, len, file, out, e);
    r = cfg_hostfile_parse_plain(text, len, file, out, e);
    if (r == 0 && out->count == 0)
        r = cfg_fail(e, CFG_EINVAL, "%s: no hosts", file);
    return r;
}

int
cfg_hostfile_load(const char *path, cfg_hostlist *out, cfg_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int r;

    if ((r = cfg_read_file(path, &text, &len, e)) != 0)
        return r;
    r = cfg_hostfile_parse(text, len, path, out, e);
    free(text);
    return r;
}
