/* Error codes and the error buffer shared by every config/ parser. */
#ifndef CFG_ERROR_H
#define CFG_ERROR_H

#include <stddef.h>

/* One list of error codes; it only grows. */
#define CFG_ERRNO_MAP(X)                                                       \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid input")                                             \
    X(EIO, -3, "cannot read file")                                             \
    X(ERANGE, -4, "value out of range")                                        \
    X(EUNSUPPORTED, -5, "not supported")

enum {
#define CFG_ERRNO_ENUM(name, val, text) CFG_##name = (val),
    CFG_ERRNO_MAP(CFG_ERRNO_ENUM)
#undef CFG_ERRNO_ENUM
};

/* Caller-owned buffer for the detailed one-line message of the last
 * failure; every parser accepts NULL when the caller only wants the code. */
typedef struct cfg_err {
    char msg[512];
} cfg_err;

/* Static text for a CFG_* code; never NULL. */
const char *cfg_strerror(int code);

/* Formats the message into e (when e is not NULL) and returns code. */
int cfg_fail(cfg_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
