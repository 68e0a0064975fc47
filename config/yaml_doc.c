#include "yaml_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
cfg_ydoc_load(ydoc *d, const char *text, size_t len, const char *file,
              cfg_err *e)
{
    yaml_parser_t p;
    int r = 0;

    memset(d, 0, sizeof(*d));
    d->file = file;
    if (!yaml_parser_initialize(&p))
        return cfg_fail(e, CFG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &d->doc)) {
        r = cfg_fail(e, CFG_EINVAL, "%s:%zu:%zu: %s%s%s", file,
                     p.problem_mark.line + 1, p.problem_mark.column + 1,
                     p.problem ? p.problem : "invalid YAML",
                     p.context ? " " : "", p.context ? p.context : "");
        goto out;
    }
    d->loaded = 1;
    if (yaml_document_get_root_node(&d->doc) == NULL)
        r = cfg_fail(e, CFG_EINVAL, "%s: empty document", file);
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
