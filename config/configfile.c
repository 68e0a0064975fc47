/* The YAML config file (--config-file): Horovod's sections and our keys. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_util.h"
#include "options.h"
#include "yaml_doc.h"

typedef struct walk {
    ydoc *d;
    cfg_values *vals;
    const char *dir; /* the config file's folder, for relative host files */
    cfg_err *e;
} walk;

static int
set_scalar(walk *w, const cfg_option *o, const yaml_node_t *v,
           const char *value)
{
    char path[4096];
    cfg_err sub;

    if (o->id == CFG_OPT_HOSTFILE && value[0] != '/' && value[0] != '\0') {
        int n = snprintf(path, sizeof(path), "%s/%s", w->dir, value);
        if (n < 0 || (size_t)n >= sizeof(path))
            return cfg_ydoc_fail(w->d, v, w->e, CFG_ERANGE, "'%s' is too long",
                                 o->key);
        value = path;
    }
    if (cfg_values_set(w->vals, o->id, value, &sub) != 0)
        return cfg_ydoc_fail(w->d, v, w->e, CFG_EINVAL, "'%s' %s", o->key,
                             sub.msg);
    return 0;
}

/* env: a list of "NAME[=VALUE]" or a NAME: VALUE mapping. */
static int
set_list(walk *w, const cfg_option *o, yaml_node_t *v)
{
    char buf[4096];
    int r = 0;

    if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = v->data.sequence.items.start;
             r == 0 && i < v->data.sequence.items.top; i++) {
            yaml_node_t *item = cfg_ydoc_node(w->d, *i);
            if (cfg_ydoc_scalar(item) == NULL)
                return cfg_ydoc_fail(w->d, item, w->e, CFG_EINVAL,
                                     "'%s' expects NAME or NAME=VALUE", o->key);
            r = set_scalar(w, o, item, cfg_ydoc_scalar(item));
        }
        return r;
    }
    FOR_PAIRS(p, v)
    {
        const char *k = cfg_ydoc_scalar(cfg_ydoc_node(w->d, p->key));
        const char *val = cfg_ydoc_scalar(cfg_ydoc_node(w->d, p->value));
        if (k == NULL || val == NULL)
            return cfg_ydoc_fail(w->d, v, w->e, CFG_EINVAL,
                                 "'%s' expects NAME: VALUE pairs", o->key);
        if ((size_t)snprintf(buf, sizeof(buf), "%s=%s", k, val) >= sizeof(buf))
            return cfg_ydoc_fail(w->d, cfg_ydoc_node(w->d, p->value), w->e,
                                 CFG_ERANGE, "'%s' value longer than %zu bytes",
                                 o->key, sizeof(buf) - 1);
        if ((r = set_scalar(w, o, cfg_ydoc_node(w->d, p->value), buf)) != 0)
            return r;
    }
    return 0;
}

/* hosts: "a:2,b:2" or a list of "a:2" items. */
static int
set_hosts(walk *w, const cfg_option *o, yaml_node_t *v)
{
    char buf[65536] = "";
    size_t used = 0;

    for (yaml_node_item_t *i = v->data.sequence.items.start;
         i < v->data.sequence.items.top; i++) {
        yaml_node_t *item = cfg_ydoc_node(w->d, *i);
        const char *s = cfg_ydoc_scalar(item);
        if (s == NULL)
            return cfg_ydoc_fail(w->d, item, w->e, CFG_EINVAL,
                                 "'hosts' expects \"host:slots\" items");
        used += snprintf(buf + used, sizeof(buf) - used, "%s%s",
                         used ? "," : "", s);
        if (used >= sizeof(buf))
            return cfg_ydoc_fail(w->d, v, w->e, CFG_ERANGE,
                                 "'hosts' is too long");
    }
    return set_scalar(w, o, v, buf);
}

static int
set_value(walk *w, const cfg_option *o, yaml_node_t *v)
{
    if (o->type == CFG_T_LIST && v->type != YAML_SCALAR_NODE)
        return set_list(w, o, v);
    if (o->id == CFG_OPT_HOSTS && v->type == YAML_SEQUENCE_NODE)
        return set_hosts(w, o, v);
    if (v->type != YAML_SCALAR_NODE)
        return cfg_ydoc_fail(w->d, v, w->e, CFG_EINVAL,
                             "'%s' expects a single value, found %s", o->key,
                             cfg_ydoc_kind(v));
    return set_scalar(w, o, v, cfg_ydoc_scalar(v));
}

static int
walk_map(walk *w, yaml_node_t *n, const char *prefix)
{
    char path[256];
    int r;

    FOR_PAIRS(p, n)
    {
        yaml_node_t *k = cfg_ydoc_node(w->d, p->key),
                    *v = cfg_ydoc_node(w->d, p->value);
        const cfg_option *o;
        if (cfg_ydoc_scalar(k) == NULL)
            return cfg_ydoc_fail(w->d, k, w->e, CFG_EINVAL, "expected a key");
        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "",
                 cfg_ydoc_scalar(k));
        if ((o = cfg_option_by_key(path)) != NULL)
            r = set_value(w, o, v);
        else if (v->type == YAML_MAPPING_NODE && prefix[0] == '\0' &&
                 cfg_option_section_exists(path))
            r = walk_map(w, v, path);
        else
            r = cfg_ydoc_fail(w->d, k, w->e, CFG_EINVAL, "unknown key '%s'",
                              path);
        if (r != 0)
            return r;
    }
    return 0;
}

int
cfg_configfile_parse(const char *text, size_t len, const char *file,
                     cfg_values *vals, cfg_err *e)
{
    char *copy = strdup(file);
    walk w = {.vals = vals, .e = e};
    ydoc d;
    int r;

    if (copy == NULL)
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    w.d = &d;
    w.dir = dirname(copy);
    if ((r = cfg_ydoc_load(&d, text, len, file, e)) == 0) {
        if (cfg_ydoc_root(&d)->type != YAML_MAPPING_NODE)
            r = cfg_ydoc_fail(&d, cfg_ydoc_root(&d), e, CFG_EINVAL,
                              "expected a mapping of settings, found %s",
                              cfg_ydoc_kind(cfg_ydoc_root(&d)));
        else
            r = walk_map(&w, cfg_ydoc_root(&d), "");
    }
    cfg_ydoc_release(&d);
    free(copy);
    return r;
}

int
cfg_configfile_load(const char *path, cfg_values *vals, cfg_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int r;

    if ((r = cfg_read_file(path, &text, &len, e)) != 0)
        return r;
    r = cfg_configfile_parse(text, len, path, vals, e);
    free(text);
    return r;
}
