#include "base64.h"

void
base64_encode(const unsigned char *in, size_t n, char *out, size_t size,
              int pad)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;

    for (size_t i = 0; i < n && o + 5 < size; i += 3) {
        unsigned v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        if (i + 1 < n || pad)
            out[o++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        if (i + 2 < n || pad)
            out[o++] = i + 2 < n ? abc[v & 63] : '=';
    }
    if (size > 0)
        out[o < size ? o : size - 1] = '\0';
}
