/* The programs installed beside hvdrun (hvdd, hvdrun-agent, hvdrun-ssh):
 * found next to the running binary, in the build tree and once installed
 * alike. */
#ifndef HVD_SIBLING_H
#define HVD_SIBLING_H

#include <stddef.h>

/* Writes "<directory of this binary>/name" to out. Returns 0, or -1 when
 * the binary's path cannot be read or does not fit. */
int sibling_path(const char *name, char *out, size_t size);

#endif
