/* Element i of a buffer of any non-16-bit libcollective type, as a
 * double: what the tests use to fill buffers and read results (the
 * values they use are exact in every type). */
#ifndef HVD_TESTS_TYPED_H
#define HVD_TESTS_TYPED_H

#include <stddef.h>
#include <stdint.h>

#include "collective.h"

static inline void
typed_put(void *buf, coll_dtype dt, size_t i, double v)
{
    switch (dt) {
    case COLL_DT_U8:
        ((uint8_t *)buf)[i] = (uint8_t)v;
        break;
    case COLL_DT_I8:
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case COLL_DT_I32:
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case COLL_DT_I64:
        ((int64_t *)buf)[i] = (int64_t)v;
        break;
    case COLL_DT_F32:
        ((float *)buf)[i] = (float)v;
        break;
    default:
        ((double *)buf)[i] = v;
    }
}

static inline double
typed_get(const void *buf, coll_dtype dt, size_t i)
{
    switch (dt) {
    case COLL_DT_U8:
        return ((const uint8_t *)buf)[i];
    case COLL_DT_I8:
        return ((const int8_t *)buf)[i];
    case COLL_DT_I32:
        return ((const int32_t *)buf)[i];
    case COLL_DT_I64:
        return (double)((const int64_t *)buf)[i];
    case COLL_DT_F32:
        return ((const float *)buf)[i];
    default:
        return ((const double *)buf)[i];
    }
}

#endif
