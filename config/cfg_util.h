/* Small parsing helpers shared by the config/ parsers and the launcher. */
#ifndef CFG_UTIL_H
#define CFG_UTIL_H

#include <stddef.h>

/* Parses all of s as a decimal integer in [min, max]. Leading and trailing
 * blanks, signs where min >= 0, and trailing garbage are refused.
 * Returns 0 or -1. */
int cfg_parse_long(const char *s, long min, long max, long *out);

/* Parses all of s as a finite number in [min, max]. Returns 0 or -1. */
int cfg_parse_double(const char *s, double min, double max, double *out);

/* Parses YAML-style booleans (true/false, yes/no, on/off, 1/0, any case).
 * Returns 0 or -1. */
int cfg_parse_bool(const char *s, int *out);

/* Returns a malloc'd copy of s[0..n) with blanks trimmed at both ends, or
 * NULL when out of memory. The caller frees it. */
char *cfg_strndup_trim(const char *s, size_t n);

#include "cfg_error.h"

/* Reads a whole file (at most 16 MiB) into a malloc'd, NUL-terminated
 * buffer that the caller frees. Errors name the path. */
int cfg_read_file(const char *path, char **text, size_t *len, cfg_err *e);
#endif
