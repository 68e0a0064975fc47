#include "hostlist.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <net/if.h>
#include <stdio.h>
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
    free(l->slot_of);
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

/* 1 when a and b are both given and differ. */
static int
clash(const char *a, const char *b)
{
    return a && b && strcmp(a, b) != 0;
}

/* Takes s for *have when only the new line gives it. 0 or CFG_ENOMEM. */
static int
take_missing(char **have, const char *s)
{
    if (*have || s == NULL)
        return 0;
    return (*have = strdup(s)) ? 0 : CFG_ENOMEM;
}

/* A host named again: its slots added (OpenMPI's repeated lines); a bound
 * (max_slots) only while every line gives one; who logs in and how taken
 * from whichever line gives it, and two lines that say differently are
 * refused (one would be dropped without a word). Nothing changes on
 * failure. */
static int
merge_slots(cfg_host *have, const cfg_host *h, cfg_err *e)
{
    const char *other =
        clash(have->user, h->user)                     ? "user"
        : clash(have->identity_file, h->identity_file) ? "identity file"
        : have->ssh_port && h->ssh_port && have->ssh_port != h->ssh_port
            ? "SSH port"
            : NULL;

    if (other)
        return cfg_fail(e, CFG_EINVAL, "host '%s' given again with another %s",
                        h->name, other);
    if ((long)have->slots + h->slots > CFG_MAX_SLOTS)
        return cfg_fail(e, CFG_ERANGE, "host '%s' has more than %d slots",
                        h->name, CFG_MAX_SLOTS);
    if (take_missing(&have->user, h->user) != 0 ||
        take_missing(&have->identity_file, h->identity_file) != 0)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    if (have->ssh_port == 0)
        have->ssh_port = h->ssh_port;
    have->slots += h->slots;
    have->max_slots =
        have->max_slots && h->max_slots ? have->max_slots + h->max_slots : 0;
    return 0;
}

static size_t
hash(const char *s)
{
    size_t h = 14695981039346656037ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The hash slot holding name, or the empty slot where it would go. */
static size_t *
find_slot(const cfg_hostlist *l, const char *name)
{
    size_t i = hash(name) & (l->nslots - 1);

    while (l->slot_of[i] != 0 &&
           strcmp(l->hosts[l->slot_of[i] - 1].name, name) != 0)
        i = (i + 1) & (l->nslots - 1);
    return &l->slot_of[i];
}

/* Keeps the table at most half full, so that lookups stay short even for
 * a 65536-host range. */
static int
grow_index(cfg_hostlist *l)
{
    size_t n = l->nslots ? l->nslots * 2 : 64, i;
    size_t *fresh = calloc(n, sizeof(*fresh));

    if (fresh == NULL)
        return CFG_ENOMEM;
    free(l->slot_of);
    l->slot_of = fresh;
    l->nslots = n;
    for (i = 0; i < l->count; i++)
        *find_slot(l, l->hosts[i].name) = i + 1;
    return 0;
}

int
cfg_hostlist_add(cfg_hostlist *l, const cfg_host *h, cfg_err *e)
{
    cfg_host copy = {0};
    size_t *slot;
    int r;

    if (l->slots + h->slots > CFG_MAX_SLOTS)
        return cfg_fail(e, CFG_ERANGE, "more than %d slots in all",
                        CFG_MAX_SLOTS);
    if ((l->count + 1) * 2 > l->nslots && grow_index(l) != 0)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    slot = find_slot(l, h->name);
    if (*slot != 0) {
        if ((r = merge_slots(&l->hosts[*slot - 1], h, e)) == 0)
            l->slots += h->slots;
        return r;
    }
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
    *slot = l->count;
    l->slots += h->slots;
    return 0;
out:
    free(copy.name);
    free(copy.user);
    free(copy.identity_file);
    return cfg_fail(e, r, "out of memory");
}

int
cfg_hostlist_add_at(cfg_hostlist *l, const cfg_host *h, const char *where,
                    cfg_err *e)
{
    int r = cfg_hostlist_add(l, h, e);

    if (r != 0 && r != CFG_ENOMEM && e != NULL) {
        char why[sizeof(e->msg)];
        snprintf(why, sizeof(why), "%s", e->msg);
        cfg_fail(e, r, "%s: %s", where, why);
    }
    return r;
}

long
cfg_hostlist_slots(const cfg_hostlist *l)
{
    return l->slots;
}

/* An IPv6 address as inet_pton reads it, with an optional zone: an
 * interface's name or number ("fe80::1%eth0"). */
static int
ipv6_literal(const char *s)
{
    char addr[INET6_ADDRSTRLEN];
    struct in6_addr a;
    const char *zone = strchr(s, '%');
    size_t n = zone ? (size_t)(zone - s) : strlen(s);

    if (n >= sizeof(addr))
        return 0;
    memcpy(addr, s, n);
    addr[n] = '\0';
    if (inet_pton(AF_INET6, addr, &a) != 1)
        return 0;
    if (zone == NULL)
        return 1;
    if (zone[1] == '\0' || strlen(zone + 1) >= IF_NAMESIZE)
        return 0;
    for (const char *c = zone + 1; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("-_.", *c))
            return 0;
    return 1;
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
