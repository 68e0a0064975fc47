#include "cfg_error.h"

#include <stdarg.h>
#include <stdio.h>

const char *
cfg_strerror(int code)
{
    switch (code) {
#define CFG_ERRNO_CASE(name, val, text)                                        \
    case val:                                                                  \
        return text;
        CFG_ERRNO_MAP(CFG_ERRNO_CASE)
#undef CFG_ERRNO_CASE
    case 0:
        return "success";
    }
    return "unknown error";
}

int
cfg_fail(cfg_err *e, int code, const char *fmt, ...)
{
    va_list ap;

    if (e == NULL)
        return code;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}
