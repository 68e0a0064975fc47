/* Small helpers shared by the config/ parsers; private to config/. */
#ifndef CFG_UTIL_H
#define CFG_UTIL_H

#include <stddef.h>

/* Returns a malloc'd copy of s[0..n) with blanks trimmed at both ends, or
 * NULL when out of memory. The caller frees it. */
char *cfg_strndup_trim(const char *s, size_t n);

#include "cfg_error.h"

/* Reads a whole file (at most 16 MiB) into a malloc'd, NUL-terminated
 * buffer that the caller frees. Errors name the path. */
int cfg_read_file(const char *path, char **text, size_t *len, cfg_err *e);
#endif
