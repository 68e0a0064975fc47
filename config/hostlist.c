#include "hostlist.h"

#include <stdlib.h>
#include <string.h>

void
cfg_hostlist_init(cfg_hostlist *l)
{
    memset(l, 0, sizeof(*l));
}

void
cfg_hostlist_release(cfg_hostlist *l)
{
    size_t i;

    for (i = 0; i < l->count; i++) {
        free(l->hosts[i].name);
        free(l->hosts[i].user);
        free(l->hosts[i].identity_file);
    }
    free(l->hosts);
    cfg_hostlist_init(l);
}

static int
dup_or_null(const char *s, char **out)
{
    *out = NULL;
    if (s == NULL)
        return 0;
    *out = strdup(s);
    return *out == NULL ? CFG_ENOMEM : 0;
}

static int
merge_slots(cfg_host *have, const cfg_host *h, cfg_err *e)
{
    if ((long)have->slots + h->slots > CFG_MAX_SLOTS)
        return cfg_fail(e, CFG_ERANGE, "host '%s' has more than %d slots",
                        h->name, CFG_MAX_SLOTS);
    have->slots += h->slots;
    if (have->max_slots && h->max_slots)
        have->max_slots += h->max_slots;
    return 0;
}

int
cfg_hostlist_add(cfg_hostlist *l, const cfg_host *h, cfg_err *e)
{
    cfg_host copy = {0};
    size_t i;
    int r;

    for (i = 0; i < l->count; i++)
        if (strcmp(l->hosts[i].name, h->name) == 0)
            return merge_slots(&l->hosts[i], h, e);
    if (l->count >= CFG_MAX_HOSTS)
        return cfg_fail(e, CFG_ERANGE, "more than %d hosts", CFG_MAX_HOSTS);
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        cfg_host *n = realloc(l->hosts, cap * sizeof(*n));
        if (n == NULL)
            return cfg_fail(e, CFG_ENOMEM, "out of memory");
        l->hosts = n;
        l->cap = cap;
    }
    copy = *h;
    if ((r = dup_or_null(h->name, &copy.name)) != 0 ||
        (r = dup_or_null(h->user, &copy.user)) != 0 ||
        (r = dup_or_null(h->identity_file, &copy.identity_file)) != 0)
        goto out;
    l->hosts[l->count++] = copy;
    return 0;
out:
    free(copy.name);
    free(copy.user);
    free(copy.identity_file);
    return cfg_fail(e, r, "out of memory");
}

long
cfg_hostlist_slots(const cfg_hostlist *l)
{
    long n = 0;
    size_t i;

    for (i = 0; i < l->count; i++)
        n += l->hosts[i].slots;
    return n;
}

static int
ipv6_literal(const char *s)
{
    int colons = 0;

    for (; *s; s++) {
        if (*s == ':')
            colons++;
        else if (!strchr("0123456789abcdefABCDEF.%", *s))
            return 0;
    }
    return colons >= 2;
}

int
cfg_host_name_valid(const char *name)
{
    const char *p;
    size_t n = strlen(name);

    if (n == 0 || n > 253)
        return 0;
    if (strchr(name, ':'))
        return ipv6_literal(name);
    for (p = name; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz"
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.",
                    *p))
            return 0;
    return name[0] != '-' && name[0] != '.';
}
