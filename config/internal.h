/* Helpers shared by the config/ parsers; not part of the public API. */
#ifndef CFG_INTERNAL_H
#define CFG_INTERNAL_H

#include "hostlist.h"

/* Parses one "[user@]host[:slots]" entry in place: h's strings point into
 * s. `where` names the entry in error messages ("host entry 2",
 * "hosts:4"). Slots default to 1. */
int cfg_hostentry_parse(char *s, const char *where, cfg_host *h, cfg_err *e);

/* Expands a host pattern into names: "node[01-04]" (zero padding kept,
 * "node[1-3,7]" lists), "10.0.0.2-10.0.0.9" and "10.0.0.2-9" address
 * ranges, and comma-separated lists of these. Each name is added to out
 * with the fields of tmpl. `where` prefixes error messages. */
int cfg_range_expand(const char *pattern, const cfg_host *tmpl,
                     const char *where, cfg_hostlist *out, cfg_err *e);

#endif
