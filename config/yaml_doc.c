#include "yaml_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any file of ours needs. libyaml's scanner takes time that
 * grows with the square of the depth (100000 '[' took 23 s), and a
 * recursive walk of the tree would run out of stack. */
#define MAX_DEPTH 64

static int
syntax_error(const yaml_parser_t *p, const char *file, cfg_err *e)
{
    return cfg_fail(e, CFG_EINVAL, "%s:%zu:%zu: %s%s%s", file,
                    p->problem_mark.line + 1, p->problem_mark.column + 1,
                    p->problem ? p->problem : "invalid YAML",
                    p->context ? " " : "", p->context ? p->context : "");
}

static int __attribute__((format(printf, 4, 5)))
refuse(const yaml_event_t *ev, const char *file, cfg_err *e, const char *fmt,
       ...)
{
    char why[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return cfg_fail(e, CFG_EINVAL, "%s:%zu:%zu: %s", file,
                    ev->start_mark.line + 1, ev->start_mark.column + 1, why);
}

/* The events of the whole text, before anything is built: one document,
 * no alias (*name: with a few, a file of a few hundred bytes stands for
 * billions of hosts, or for a list inside itself), nesting at most
 * MAX_DEPTH deep; each refused where it starts. */
static int
check_events(const char *text, size_t len, const char *file, cfg_err *e)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int depth = 0, docs = 0, r = 0, end = 0;

    if (!yaml_parser_initialize(&p))
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (r == 0 && !end) {
        if (!yaml_parser_parse(&p, &ev)) {
            r = syntax_error(&p, file, e);
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT)
            end = 1;
        else if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
            r = refuse(&ev, file, e,
                       "a second YAML document; the file must hold one");
        else if (ev.type == YAML_ALIAS_EVENT)
            r = refuse(&ev, file, e,
                       "YAML aliases (*name) are not supported here");
        else if ((ev.type == YAML_SEQUENCE_START_EVENT ||
                  ev.type == YAML_MAPPING_START_EVENT) &&
                 ++depth > MAX_DEPTH)
            r = refuse(&ev, file, e, "nested more than %d deep", MAX_DEPTH);
        else if (ev.type == YAML_SEQUENCE_END_EVENT ||
                 ev.type == YAML_MAPPING_END_EVENT)
            depth--;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return r;
}

typedef struct key_at {
    const char *key;
    yaml_node_t *node;
} key_at;

static int
by_key_then_place(const void *a, const void *b)
{
    const key_at *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* A key given twice in one mapping is refused where it comes again
 * (libyaml keeps both, and the last silently won): each mapping's keys
 * sorted, neighbours compared (a mapping may be a long env list). */
static int
check_keys(ydoc *d, cfg_err *e)
{
    size_t cap = 0;
    key_at *keys = NULL;
    int r = 0;

    for (yaml_node_t *n = d->doc.nodes.start; r == 0 && n < d->doc.nodes.top;
         n++) {
        size_t k = 0, count;
        if (n->type != YAML_MAPPING_NODE)
            continue;
        count =
            (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
        if (count > cap) {
            key_at *more = realloc(keys, count * sizeof(*keys));
            if (more == NULL) {
                r = cfg_fail(e, CFG_ENOMEM, "out of memory");
                break;
            }
            keys = more;
            cap = count;
        }
        FOR_PAIRS(p, n)
        {
            yaml_node_t *key = cfg_ydoc_node(d, p->key);
            if (cfg_ydoc_scalar(key))
                keys[k++] = (key_at){cfg_ydoc_scalar(key), key};
        }
        if (k < 2) /* (keys is NULL for a mapping of none) */
            continue;
        qsort(keys, k, sizeof(*keys), by_key_then_place);
        for (size_t i = 1; r == 0 && i < k; i++)
            if (strcmp(keys[i - 1].key, keys[i].key) == 0)
                r = cfg_ydoc_fail(d, keys[i].node, e, CFG_EINVAL,
                                  "'%s' given twice", keys[i].key);
    }
    free(keys);
    return r;
}

int
cfg_ydoc_load(ydoc *d, const char *text, size_t len, const char *file,
              cfg_err *e)
{
    yaml_parser_t p;
    int r = 0;

    memset(d, 0, sizeof(*d));
    d->file = file;
    if ((r = check_events(text, len, file, e)) != 0)
        return r;
    if (!yaml_parser_initialize(&p))
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &d->doc)) {
        r = syntax_error(&p, file, e);
        goto out;
    }
    d->loaded = 1;
    if (yaml_document_get_root_node(&d->doc) == NULL)
        r = cfg_fail(e, CFG_EINVAL, "%s: empty document", file);
    else
        r = check_keys(d, e);
out:
    yaml_parser_delete(&p);
    return r;
}

void
cfg_ydoc_release(ydoc *d)
{
    if (d->loaded)
        yaml_document_delete(&d->doc);
    d->loaded = 0;
}

yaml_node_t *
cfg_ydoc_root(ydoc *d)
{
    return yaml_document_get_root_node(&d->doc);
}

yaml_node_t *
cfg_ydoc_node(ydoc *d, int id)
{
    return yaml_document_get_node(&d->doc, id);
}

const char *
cfg_ydoc_scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                       : NULL;
}

const char *
cfg_ydoc_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

int
cfg_ydoc_fail(const ydoc *d, const yaml_node_t *n, cfg_err *e, int code,
              const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cfg_fail(e, code, "%s:%zu:%zu: %s", d->file, n->start_mark.line + 1,
                    n->start_mark.column + 1, msg);
}
