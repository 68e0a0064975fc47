/* YAML host files: our host list schema and the "cluster:" shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "hvd_numbers.h"
#include "hostfile.h"
#include "internal.h"
#include "yaml_doc.h"

static void
where_of(const ydoc *d, const yaml_node_t *n, char *buf, size_t size)
{
    snprintf(buf, size, "%s:%zu:%zu", d->file, n->start_mark.line + 1,
             n->start_mark.column + 1);
}

static int
expect(const ydoc *d, const yaml_node_t *n, yaml_node_type_t type,
       const char *what, cfg_err *e)
{
    if (n->type == type)
        return 0;
    return cfg_ydoc_fail(d, n, e, CFG_EINVAL, "expected %s, found %s", what,
                         cfg_ydoc_kind(n));
}

static int
get_int(const ydoc *d, const yaml_node_t *v, const char *key, long max,
        int *out, cfg_err *e)
{
    const char *s = cfg_ydoc_scalar(v);
    long n;

    if (s == NULL || hvd_parse_long(s, 1, max, &n) != 0)
        return cfg_ydoc_fail(d, v, e, CFG_EINVAL,
                             "'%s' expects an integer from 1 to %ld", key, max);
    *out = (int)n;
    return 0;
}

static int
get_str(const ydoc *d, const yaml_node_t *v, const char *key, char **out,
        cfg_err *e)
{
    const char *s = cfg_ydoc_scalar(v);

    if (s == NULL || s[0] == '\0')
        return cfg_ydoc_fail(d, v, e, CFG_EINVAL, "'%s' expects a string", key);
    *out = (char *)s;
    return 0;
}

static int
host_field(const ydoc *d, const yaml_node_t *k, const yaml_node_t *v,
           cfg_host *h, const char **name, cfg_err *e)
{
    const char *key = cfg_ydoc_scalar(k);

    if (strcmp(key, "name") == 0)
        return get_str(d, v, key, (char **)name, e);
    if (strcmp(key, "slots") == 0)
        return get_int(d, v, key, CFG_MAX_SLOTS, &h->slots, e);
    if (strcmp(key, "max_slots") == 0)
        return get_int(d, v, key, CFG_MAX_SLOTS, &h->max_slots, e);
    if (strcmp(key, "ssh_port") == 0)
        return get_int(d, v, key, 65535, &h->ssh_port, e);
    if (strcmp(key, "user") == 0)
        return get_str(d, v, key, &h->user, e);
    if (strcmp(key, "identity_file") == 0)
        return get_str(d, v, key, &h->identity_file, e);
    return cfg_ydoc_fail(d, k, e, CFG_EINVAL,
                         "unknown key '%s' (expected name, slots, max_slots, "
                         "ssh_port, user or identity_file)",
                         key);
}

static int
parse_host_map(ydoc *d, yaml_node_t *n, cfg_hostlist *out, cfg_err *e)
{
    cfg_host h = {.slots = 1};
    const char *name = NULL;
    char where[300];
    int r;

    FOR_PAIRS(p, n)
    {
        yaml_node_t *k = cfg_ydoc_node(d, p->key),
                    *v = cfg_ydoc_node(d, p->value);
        if (cfg_ydoc_scalar(k) == NULL)
            return cfg_ydoc_fail(d, k, e, CFG_EINVAL, "expected a key");
        if ((r = host_field(d, k, v, &h, &name, e)) != 0)
            return r;
    }
    if (name == NULL)
        return cfg_ydoc_fail(d, n, e, CFG_EINVAL, "host without 'name'");
    if (h.max_slots && h.max_slots < h.slots)
        return cfg_ydoc_fail(d, n, e, CFG_EINVAL, "max_slots is below slots");
    where_of(d, n, where, sizeof(where));
    return cfg_range_expand(name, &h, where, out, e);
}

static int
parse_host_item(ydoc *d, yaml_node_t *n, cfg_hostlist *out, cfg_err *e)
{
    char where[300], *copy;
    cfg_host h = {0};
    int r;

    if (n->type == YAML_MAPPING_NODE)
        return parse_host_map(d, n, out, e);
    if (n->type != YAML_SCALAR_NODE)
        return expect(d, n, YAML_MAPPING_NODE, "a host", e);
    where_of(d, n, where, sizeof(where));
    if ((copy = strdup(cfg_ydoc_scalar(n))) == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    if ((r = cfg_hostentry_parse(copy, where, &h, e)) == 0)
        r = cfg_hostlist_add_at(out, &h, where, e);
    free(copy);
    return r;
}

static int
parse_host_list(ydoc *d, yaml_node_t *n, cfg_hostlist *out, cfg_err *e)
{
    int r;

    if ((r = expect(d, n, YAML_SEQUENCE_NODE, "a list of hosts", e)) != 0)
        return r;
    FOR_ITEMS(i, n)
    if ((r = parse_host_item(d, cfg_ydoc_node(d, *i), out, e)) != 0)
        return r;
    return 0;
}

/* master/workers: a pattern ("node[1-4]", "10.0.0.2-10.0.0.9") or a list. */
static int
add_patterns(ydoc *d, yaml_node_t *v, const cfg_host *tmpl, cfg_hostlist *out,
             cfg_err *e)
{
    char where[300];
    int r;

    where_of(d, v, where, sizeof(where));
    if (v->type == YAML_SCALAR_NODE)
        return cfg_range_expand(cfg_ydoc_scalar(v), tmpl, where, out, e);
    if ((r = expect(d, v, YAML_SEQUENCE_NODE, "a host or a list", e)) != 0)
        return r;
    FOR_ITEMS(i, v)
    if ((r = add_patterns(d, cfg_ydoc_node(d, *i), tmpl, out, e)) != 0)
        return r;
    return 0;
}

static int
parse_cluster_item(ydoc *d, yaml_node_t *n, cfg_hostlist *out, cfg_err *e)
{
    yaml_node_t *master = NULL, *workers = NULL;
    cfg_host tmpl = {.slots = 1};
    int r;

    if ((r = expect(d, n, YAML_MAPPING_NODE, "master/workers", e)) != 0)
        return r;
    FOR_PAIRS(p, n)
    {
        yaml_node_t *k = cfg_ydoc_node(d, p->key),
                    *v = cfg_ydoc_node(d, p->value);
        const char *key = cfg_ydoc_scalar(k) ? cfg_ydoc_scalar(k) : "";
        if (strcmp(key, "master") == 0)
            master = v;
        else if (strcmp(key, "workers") == 0)
            workers = v;
        else if (strcmp(key, "slots") == 0)
            r = get_int(d, v, key, CFG_MAX_SLOTS, &tmpl.slots, e);
        else
            r = cfg_ydoc_fail(d, k, e, CFG_EINVAL,
                              "unknown key '%s' (expected master, workers or "
                              "slots)",
                              key);
        if (r != 0)
            return r;
    }
    if (master == NULL && workers == NULL)
        return cfg_ydoc_fail(d, n, e, CFG_EINVAL,
                             "expected 'master' or 'workers'");
    if (master && (r = add_patterns(d, master, &tmpl, out, e)) != 0)
        return r;
    return workers ? add_patterns(d, workers, &tmpl, out, e) : 0;
}

static int
parse_root_map(ydoc *d, yaml_node_t *n, cfg_hostlist *out, cfg_err *e)
{
    int r = 0;

    FOR_PAIRS(p, n)
    {
        yaml_node_t *k = cfg_ydoc_node(d, p->key),
                    *v = cfg_ydoc_node(d, p->value);
        const char *key = cfg_ydoc_scalar(k) ? cfg_ydoc_scalar(k) : "";
        if (strcmp(key, "hosts") == 0) {
            r = parse_host_list(d, v, out, e);
        } else if (strcmp(key, "cluster") == 0) {
            if ((r = expect(d, v, YAML_SEQUENCE_NODE, "a list", e)) != 0)
                return r;
            FOR_ITEMS(i, v)
            if ((r = parse_cluster_item(d, cfg_ydoc_node(d, *i), out, e)) != 0)
                return r;
        } else {
            r = cfg_ydoc_fail(d, k, e, CFG_EINVAL,
                              "unknown key '%s' (expected hosts or cluster)",
                              key);
        }
        if (r != 0)
            return r;
    }
    return 0;
}

int
cfg_hostfile_parse_yaml(const char *text, size_t len, const char *file,
                        cfg_hostlist *out, cfg_err *e)
{
    yaml_node_t *root;
    ydoc d;
    int r;

    if ((r = cfg_ydoc_load(&d, text, len, file, e)) != 0)
        goto out;
    root = cfg_ydoc_root(&d);
    if (root->type == YAML_SEQUENCE_NODE)
        r = parse_host_list(&d, root, out, e);
    else if (root->type == YAML_MAPPING_NODE)
        r = parse_root_map(&d, root, out, e);
    else
        r = cfg_ydoc_fail(&d, root, e, CFG_EINVAL,
                          "expected a list of hosts or a mapping with 'hosts' "
                          "or 'cluster', found %s",
                          cfg_ydoc_kind(root));
    if (r == 0 && out->count == 0)
        r = cfg_fail(e, CFG_EINVAL, "%s: no hosts", file);
out:
    cfg_ydoc_release(&d);
    return r;
}
