/* A loaded YAML document with positions for error messages (libyaml). */
#ifndef CFG_YAML_DOC_H
#define CFG_YAML_DOC_H

#include <yaml.h>

#include "cfg_error.h"

/* Iterate over a mapping's key/value pairs or a sequence's items. */
#define FOR_PAIRS(p, n)                                                        \
    for (yaml_node_pair_t *p = (n)->data.mapping.pairs.start;                  \
         p < (n)->data.mapping.pairs.top; p++)
#define FOR_ITEMS(i, n)                                                        \
    for (yaml_node_item_t *i = (n)->data.sequence.items.start;                 \
         i < (n)->data.sequence.items.top; i++)

typedef struct ydoc {
    yaml_document_t doc;
    const char *file;
    int loaded;
} ydoc;

/* Loads the one document of text. A syntax error, an empty document, a
 * second document, an alias (*name), nesting deeper than 64 or a key
 * given twice in a mapping fail with "file:line:column: problem". Release
 * with cfg_ydoc_release. */
int cfg_ydoc_load(ydoc *d, const char *text, size_t len, const char *file,
                  cfg_err *e);
void cfg_ydoc_release(ydoc *d);

yaml_node_t *cfg_ydoc_root(ydoc *d);
yaml_node_t *cfg_ydoc_node(ydoc *d, int id);

/* The node's text when it is a scalar, else NULL. */
const char *cfg_ydoc_scalar(const yaml_node_t *n);

/* Formats "file:line:column: <message>" for node n into e; returns code. */
int cfg_ydoc_fail(const ydoc *d, const yaml_node_t *n, cfg_err *e, int code,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Name of the node's kind for "expected a mapping, found a sequence". */
const char *cfg_ydoc_kind(const yaml_node_t *n);

#endif
