/* The -H host spec: "host[:slots],..." as horovodrun and mpirun take it. */
#include "hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "hvd_numbers.h"
#include "internal.h"

/* Splits "name" or "name:slots" (name may be "[v6]") in place. */
static int
split_slots(char *s, char **name, char **slots, const char *where, cfg_err *e)
{
    char *colon;

    *slots = NULL;
    if (s[0] == '[') {
        char *close = strchr(s, ']');
        if (close == NULL)
            return cfg_fail(e, CFG_EINVAL, "%s '%s': missing ']'", where, s);
        *close = '\0';
        *name = s + 1;
        if (close[1] == ':')
            *slots = close + 2;
        else if (close[1] != '\0')
            return cfg_fail(e, CFG_EINVAL, "%s: unexpected text after ']'",
                            where);
        return 0;
    }
    *name = s;
    colon = strchr(s, ':');
    if (colon && strchr(colon + 1, ':'))
        return cfg_fail(e, CFG_EINVAL,
                        "%s '%s': an IPv6 address needs brackets, "
                        "as in '[fe80::1]:2'",
                        where, s);
    if (colon) {
        *colon = '\0';
        *slots = colon + 1;
    }
    return 0;
}

int
cfg_hostentry_parse(char *s, const char *where, cfg_host *h, cfg_err *e)
{
    char *at = strchr(s, '@'), *slots;
    long n = 1;
    int r;

    if (at != NULL) {
        *at = '\0';
        if (!cfg_host_name_valid(s) || strchr(s, ':'))
            return cfg_fail(e, CFG_EINVAL, "%s: bad user name '%s'", where, s);
        h->user = s;
        s = at + 1;
    }
    if ((r = split_slots(s, &h->name, &slots, where, e)) != 0)
        return r;
    if (!cfg_host_name_valid(h->name))
        return cfg_fail(e, CFG_EINVAL, "%s: bad host name '%s'", where,
                        h->name);
    if (slots && hvd_parse_long(slots, 1, CFG_MAX_SLOTS, &n) != 0)
        return cfg_fail(e, CFG_EINVAL,
                        "%s '%s': slots must be an integer from 1 "
                        "to %d, not '%s'",
                        where, h->name, CFG_MAX_SLOTS, slots);
    h->slots = (int)n;
    return 0;
}

int
cfg_hostspec_parse(const char *spec, cfg_hostlist *out, cfg_err *e)
{
    const char *p = spec, *comma;
    int pos = 1, r = 0;

    for (;; pos++) {
        cfg_host h = {0};
        char *entry;

        comma = strchr(p, ',');
        entry = cfg_strndup_trim(p, comma ? (size_t)(comma - p) : strlen(p));
        if (entry == NULL)
            return cfg_fail(e, CFG_ENOMEM, "out of memory");
        if (entry[0] == '\0')
            r = cfg_fail(e, CFG_EINVAL, "host entry %d is empty", pos);
        else {
            char where[32];
            snprintf(where, sizeof(where), "host entry %d", pos);
            if ((r = cfg_hostentry_parse(entry, where, &h, e)) == 0)
                r = cfg_hostlist_add_at(out, &h, where, e);
        }
        free(entry);
        if (r != 0 || comma == NULL)
            return r;
        p = comma + 1;
    }
}
