/* Plain host files, in the formats OpenMPI, Horovod and Hydra users have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "hvd_numbers.h"
#include "hostfile.h"
#include "internal.h"

static int
parse_field(const char *tok, cfg_host *h, int *saw_slots, const char *where,
            cfg_err *e)
{
    const char *eq = strchr(tok, '=');
    long v;

    if (eq == NULL)
        return cfg_fail(e, CFG_EINVAL,
                        "%s: unexpected '%s' (expected slots=N or "
                        "max_slots=N)",
                        where, tok);
    if (hvd_parse_long(eq + 1, 1, CFG_MAX_SLOTS, &v) != 0)
        return cfg_fail(e, CFG_EINVAL, "%s: '%s' needs an integer from 1 to %d",
                        where, tok, CFG_MAX_SLOTS);
    if (strncmp(tok, "slots=", 6) == 0) {
        if (*saw_slots)
            return cfg_fail(e, CFG_EINVAL, "%s: slots given twice", where);
        *saw_slots = 1;
        h->slots = (int)v;
    } else if (strncmp(tok, "max_slots=", 10) == 0 ||
               strncmp(tok, "max-slots=", 10) == 0) {
        h->max_slots = (int)v;
    } else {
        return cfg_fail(e, CFG_EINVAL,
                        "%s: unknown field '%.*s' (expected slots or "
                        "max_slots)",
                        where, (int)(eq - tok), tok);
    }
    return 0;
}

/* One line, comments already cut; modified in place. */
static int
parse_line(char *line, const char *where, cfg_hostlist *out, cfg_err *e)
{
    char *tok, *save = NULL;
    cfg_host h = {0};
    const char *host;
    int saw_slots = 0, r;

    tok = strtok_r(line, " \t\r", &save);
    if (tok == NULL)
        return 0;
    /* Hydra's "host:N" already gives the slots ("user@[v6]:N" too) */
    host = strchr(tok, '@') ? strchr(tok, '@') + 1 : tok;
    saw_slots =
        host[0] == '[' ? strstr(host, "]:") != NULL : strchr(host, ':') != NULL;
    if ((r = cfg_hostentry_parse(tok, where, &h, e)) != 0)
        return r;
    while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL)
        if ((r = parse_field(tok, &h, &saw_slots, where, e)) != 0)
            return r;
    if (h.max_slots && h.max_slots < h.slots)
        return cfg_fail(e, CFG_EINVAL, "%s: max_slots=%d is below slots=%d",
                        where, h.max_slots, h.slots);
    return cfg_hostlist_add_at(out, &h, where, e);
}

int
cfg_hostfile_parse_plain(const char *text, size_t len, const char *file,
                         cfg_hostlist *out, cfg_err *e)
{
    const char *p = text, *end = text + len;
    int lineno = 0, r = 0;

    while (r == 0 && p < end) {
        const char *nl = memchr(p, '\n', end - p);
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = strndup(p, n), *hash, where[300];

        if (line == NULL)
            return cfg_fail(e, CFG_ENOMEM, "out of memory");
        if ((hash = strchr(line, '#')) != NULL)
            *hash = '\0';
        snprintf(where, sizeof(where), "%s:%d", file, ++lineno);
        if (strlen(line) != n && hash == NULL)
            r = cfg_fail(e, CFG_EINVAL, "%s: NUL byte in line", where);
        else
            r = parse_line(line, where, out, e);
        free(line);
        p += n + 1;
    }
    return r;
}
