#include "halfprec.h"

#include <math.h>
#include <string.h>

static uint32_t
bits(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    return u;
}

static float
from_bits(uint32_t u)
{
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

float
coll_bf16_to_f32(uint16_t b)
{
    return from_bits((uint32_t)b << 16);
}

uint16_t
coll_f32_to_bf16(float f)
{
    uint32_t u = bits(f);

    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40); /* stay a NaN */
    u += 0x7fff + ((u >> 16) & 1);           /* round to nearest even */
    return (uint16_t)(u >> 16);
}

float
coll_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;

    if (exp == 0) /* zero or subnormal: man * 2^-24 */
        return from_bits(sign) +
               (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24);
    if (exp == 31)
        return from_bits(sign | 0x7f800000 | (man << 13));
    return from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t
coll_f32_to_f16(float f)
{
    uint32_t u = bits(f), sign = (u >> 16) & 0x8000;
    float a = fabsf(f);

    if (isnan(f))
        return (uint16_t)(sign | 0x7e00);
    if (a >= 65520.0f) /* rounds past the largest half: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (a < 6.103515625e-05f) /* subnormal half: units of 2^-24 */
        return (uint16_t)(sign | (uint16_t)lrintf(ldexpf(a, 24)));
    u = bits(a);
    uint32_t exp = (u >> 23) - 112, man = u & 0x7fffff;
    uint32_t h = (exp << 10) | (man >> 13), rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++; /* may carry into the exponent, which is right */
    return (uint16_t)(sign | h);
}
