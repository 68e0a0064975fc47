/* Numbers from text, strictly: part of hvdbase, the small library every
 * component of the tree may link (options, host files, hvdd's arguments
 * and requests all parse numbers the same way). */
#ifndef HVD_NUMBERS_H
#define HVD_NUMBERS_H

/* Parses all of s as a decimal integer in [min, max]. Leading and trailing
 * blanks, signs where min >= 0, and trailing garbage are refused.
 * Returns 0 or -1. */
int hvd_parse_long(const char *s, long min, long max, long *out);

/* Parses all of s as a finite number in [min, max]. Returns 0 or -1. */
int hvd_parse_double(const char *s, double min, double max, double *out);

/* Parses YAML-style booleans (true/false, yes/no, on/off, 1/0, any case).
 * Returns 0 or -1. */
int hvd_parse_bool(const char *s, int *out);

#endif
