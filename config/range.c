/* Host name ranges: "node[01-04]", "rack[0-1]_blade[0-3]" and
 * "10.0.0.2-10.0.0.9", as cluster descriptions (and Slurm) write them. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "hvd_numbers.h"
#include "internal.h"

static int
add_name(const char *name, const cfg_host *tmpl, const char *where,
         cfg_hostlist *out, cfg_err *e)
{
    cfg_host h = *tmpl;

    if (!cfg_host_name_valid(name))
        return cfg_fail(e, CFG_EINVAL, "%s: bad host name '%s'", where, name);
    h.name = (char *)name;
    return cfg_hostlist_add_at(out, &h, where, e);
}

static int
parse_ipv4(const char *s, uint32_t *out)
{
    struct in_addr a;

    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = ntohl(a.s_addr);
    return 0;
}

/* "A.B.C.D-A.B.C.E" or "A.B.C.D-E"; returns 1 when s is not such a range. */
static int
expand_ipv4(const char *s, const cfg_host *tmpl, const char *where,
            cfg_hostlist *out, cfg_err *e)
{
    char left[64], name[INET_ADDRSTRLEN];
    const char *dash = strchr(s, '-');
    uint32_t lo, hi, ip;
    long last;
    int r;

    if (dash == NULL || (size_t)(dash - s) >= sizeof(left))
        return 1;
    memcpy(left, s, dash - s);
    left[dash - s] = '\0';
    if (parse_ipv4(left, &lo) != 0)
        return 1;
    if (parse_ipv4(dash + 1, &hi) != 0) {
        if (hvd_parse_long(dash + 1, 0, 255, &last) != 0)
            return cfg_fail(e, CFG_EINVAL, "%s: bad address range '%s'", where,
                            s);
        hi = (lo & 0xffffff00u) | (uint32_t)last;
    }
    if (hi < lo || hi - lo >= CFG_MAX_HOSTS)
        return cfg_fail(e, CFG_ERANGE,
                        "%s: address range '%s' is empty or too large", where,
                        s);
    for (ip = lo;; ip++) {
        struct in_addr a = {htonl(ip)};
        inet_ntop(AF_INET, &a, name, sizeof(name));
        if ((r = add_name(name, tmpl, where, out, e)) != 0 || ip == hi)
            return r;
    }
}

static int expand_brackets(char *s, char *open, const cfg_host *tmpl,
                           const char *where, cfg_hostlist *out, cfg_err *e);

/* One "a-b" or "a" item of a bracket list, names built around it. */
static int
expand_item(const char *prefix, const char *item, const char *suffix,
            const cfg_host *tmpl, const char *where, cfg_hostlist *out,
            cfg_err *e)
{
    char lo_s[16] = "", name[300];
    const char *dash = strchr(item, '-');
    long lo, hi, i;
    int width, r = 0;

    size_t lo_len = dash ? (size_t)(dash - item) : strlen(item);

    /* (a longer bound, zeros before it included, would be cut short) */
    if (lo_len >= sizeof(lo_s))
        return cfg_fail(e, CFG_EINVAL, "%s: bound too long in '[%s]'", where,
                        item);
    snprintf(lo_s, sizeof(lo_s), "%.*s", (int)lo_len, item);
    if (hvd_parse_long(lo_s, 0, 999999999, &lo) != 0 ||
        hvd_parse_long(dash ? dash + 1 : lo_s, 0, 999999999, &hi) != 0)
        return cfg_fail(e, CFG_EINVAL, "%s: bad range '%s' in '[...]'", where,
                        item);
    if (hi < lo || hi - lo >= CFG_MAX_HOSTS)
        return cfg_fail(e, CFG_ERANGE, "%s: range '%s' is empty or too large",
                        where, item);
    width = lo_s[0] == '0' ? (int)strlen(lo_s) : 0;
    for (i = lo; i <= hi && r == 0; i++) {
        if (snprintf(name, sizeof(name), "%s%0*ld%s", prefix, width, i,
                     suffix) >= (int)sizeof(name))
            return cfg_fail(e, CFG_EINVAL, "%s: host name too long", where);
        /* a further bracket ("rack[0-1]_blade[0-3]"): the first one
         * varies slowest, as Slurm writes them */
        r = strchr(name, '[')
                ? expand_brackets(name, strchr(name, '['), tmpl, where, out, e)
                : add_name(name, tmpl, where, out, e);
    }
    return r;
}

static int
expand_brackets(char *s, char *open, const cfg_host *tmpl, const char *where,
                cfg_hostlist *out, cfg_err *e)
{
    char *close = strchr(open, ']'), *item, *next;
    int r = 0;

    if (close == NULL)
        return cfg_fail(e, CFG_EINVAL, "%s: '%s' has a '[' without its ']'",
                        where, s);
    *open = '\0';
    *close = '\0';
    for (item = open + 1; r == 0 && item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        r = expand_item(s, item, close + 1, tmpl, where, out, e);
    }
    return r;
}

static int
expand_one(char *s, const cfg_host *tmpl, const char *where, cfg_hostlist *out,
           cfg_err *e)
{
    char *open = strchr(s, '[');
    int r;

    if (s[0] == '\0')
        return cfg_fail(e, CFG_EINVAL, "%s: empty host name", where);
    if (open)
        return expand_brackets(s, open, tmpl, where, out, e);
    if ((r = expand_ipv4(s, tmpl, where, out, e)) != 1)
        return r;
    return add_name(s, tmpl, where, out, e);
}

int
cfg_range_expand(const char *pattern, const cfg_host *tmpl, const char *where,
                 cfg_hostlist *out, cfg_err *e)
{
    const char *p = pattern, *q;
    int depth = 0, r = 0;

    /* Split on commas outside brackets: "n[1-2,5],m" is two patterns. */
    for (q = p;; q++) {
        if (*q == '[')
            depth++;
        else if (*q == ']')
            depth--;
        if ((*q == ',' && depth == 0) || *q == '\0') {
            char *one = cfg_strndup_trim(p, q - p);
            if (one == NULL)
                return cfg_fail(e, CFG_ENOMEM, "out of memory");
            r = expand_one(one, tmpl, where, out, e);
            free(one);
            if (r != 0 || *q == '\0')
                return r;
            p = q + 1;
        }
    }
}
