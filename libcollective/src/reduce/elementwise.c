/* The element loops of libcollective's own reductions: the small-buffer
 * allreduce and the TCP ring's (elem_reduce_to), and avg's division
 * (elem_scale_avg), which runs over every byte of a large or fused
 * allreduce. Type and op are
 * chosen outside the loops, so that each loop is one plain operation the
 * compiler can vectorise (this file is built with -O3).
 *
 * Each loop is written once, as an inlined body, and built twice on
 * x86-64: for any CPU (the elem_* functions) and for AVX2 (the _local
 * ones, where this CPU has it). The two can differ in one thing: which
 * NaN's payload a sum or product of two NaNs keeps (the compiler orders
 * the operands of + and * as it likes). So only reductions whose every
 * element is computed on this host alone take the _local ones: the
 * shared-memory transport's. The others (the small-buffer allreduce,
 * where every rank reduces every element itself, and the TCP ring's
 * recursive doubling) may run on hosts with different CPUs and must
 * give the same bits everywhere. */
#include <stdint.h>

#include "elementwise.h"
#include "halfprec.h"

#define BODY static inline __attribute__((always_inline))

/* buf[i] = EXPR of u = buf[i], for one type. */
#define EACH(T, buf, n, EXPR)                                                  \
    do {                                                                       \
        T *b_ = (T *)(buf);                                                    \
        for (size_t i_ = 0; i_ < (n); i_++) {                                  \
            T u = b_[i_];                                                      \
            b_[i_] = (T)(EXPR);                                                \
        }                                                                      \
    } while (0)

BODY void
scale_avg_body(void *buf, size_t count, coll_dtype dt, int size)
{
    uint16_t *h = buf;
    /* x * 2^-k is x / 2^k exactly (both round the same exact value), and
     * division took about 6% of a fused 2-rank step */
    int pow2 = (size & (size - 1)) == 0;

    switch (dt) {
    case COLL_DT_F16:
        for (size_t i = 0; i < count; i++)
            h[i] = coll_f32_to_f16(coll_f16_to_f32(h[i]) / (float)size);
        break;
    case COLL_DT_BF16:
        for (size_t i = 0; i < count; i++)
            h[i] = coll_f32_to_bf16(coll_bf16_to_f32(h[i]) / (float)size);
        break;
    case COLL_DT_F32:
        if (pow2) /* the same bits as dividing, without the divider */
            EACH(float, buf, count, u *(1.0f / (float)size));
        else
            EACH(float, buf, count, u / (float)size);
        break;
    case COLL_DT_F64:
        if (pow2)
            EACH(double, buf, count, u *(1.0 / (double)size));
        else
            EACH(double, buf, count, u / (double)size);
        break;
    case COLL_DT_I32:
        EACH(int32_t, buf, count, u / size);
        break;
    case COLL_DT_I64:
        EACH(int64_t, buf, count, u / size);
        break;
    case COLL_DT_I8:
        EACH(int8_t, buf, count, u / size);
        break;
    case COLL_DT_U8:
        EACH(uint8_t, buf, count, u / size);
        break;
    }
}

/* dst[i] = a[i] op b[i] for one type (dst may be a). Sums and products
 * go in U: for the signed integers their unsigned twin, so that one that
 * overflows wraps as two's complement does instead of being undefined
 * (UBSan stopped on an I32 sum of large values). MIN and MAX take b when
 * it is a NaN (b != b; never for an integer): a NaN on either side is
 * the result, as with torch.minimum (`b < a ? b : a` alone kept a NaN
 * only as a, so a job's result depended on which rank held it). A
 * selection, not arithmetic: both builds give the same bits (of two
 * NaNs, b's). */
#define REDUCE_AS(T, U, dst, a, b, n, op)                                      \
    do {                                                                       \
        T *d_ = (T *)(dst);                                                    \
        const T *a_ = (const T *)(a), *b_ = (const T *)(b);                    \
        switch (op) {                                                          \
        case COLL_OP_MIN:                                                      \
            for (size_t i_ = 0; i_ < (n); i_++)                                \
                d_[i_] =                                                       \
                    b_[i_] < a_[i_] || b_[i_] != b_[i_] ? b_[i_] : a_[i_];     \
            break;                                                             \
        case COLL_OP_MAX:                                                      \
            for (size_t i_ = 0; i_ < (n); i_++)                                \
                d_[i_] =                                                       \
                    b_[i_] > a_[i_] || b_[i_] != b_[i_] ? b_[i_] : a_[i_];     \
            break;                                                             \
        case COLL_OP_PROD:                                                     \
            for (size_t i_ = 0; i_ < (n); i_++)                                \
                d_[i_] = (T)((U)a_[i_] * (U)b_[i_]);                           \
            break;                                                             \
        default:                                                               \
            for (size_t i_ = 0; i_ < (n); i_++)                                \
                d_[i_] = (T)((U)a_[i_] + (U)b_[i_]);                           \
        }                                                                      \
    } while (0)

static float
half_op(float a, float b, coll_op op)
{
    switch (op) {
    case COLL_OP_MIN: /* a NaN either side, as REDUCE_AS */
        return b < a || b != b ? b : a;
    case COLL_OP_MAX:
        return b > a || b != b ? b : a;
    case COLL_OP_PROD:
        return a * b;
    default:
        return a + b;
    }
}

BODY void
reduce_to_body(void *dst, const void *a, const void *b, size_t n, coll_dtype dt,
               coll_op op)
{
    uint16_t *h = dst;
    const uint16_t *ha = a, *hb = b;

    switch (dt) {
    case COLL_DT_U8:
        REDUCE_AS(uint8_t, uint8_t, dst, a, b, n, op);
        break;
    case COLL_DT_I8:
        REDUCE_AS(int8_t, uint8_t, dst, a, b, n, op);
        break;
    case COLL_DT_I32:
        REDUCE_AS(int32_t, uint32_t, dst, a, b, n, op);
        break;
    case COLL_DT_I64:
        REDUCE_AS(int64_t, uint64_t, dst, a, b, n, op);
        break;
    case COLL_DT_F32:
        REDUCE_AS(float, float, dst, a, b, n, op);
        break;
    case COLL_DT_F64:
        REDUCE_AS(double, double, dst, a, b, n, op);
        break;
    case COLL_DT_F16:
        for (size_t i = 0; i < n; i++)
            h[i] = coll_f32_to_f16(
                half_op(coll_f16_to_f32(ha[i]), coll_f16_to_f32(hb[i]), op));
        break;
    case COLL_DT_BF16:
        for (size_t i = 0; i < n; i++)
            h[i] = coll_f32_to_bf16(
                half_op(coll_bf16_to_f32(ha[i]), coll_bf16_to_f32(hb[i]), op));
        break;
    }
}

/* One pass instead of two over the segment: the division was a separate
 * 3% of a fused 2-rank step's samples. Each sum is rounded, then divided
 * (or multiplied by 2^-k, exactly), as the two passes do. */
BODY void
sum_scaled_body(void *dst, const void *a, const void *b, size_t n,
                coll_dtype dt, int size)
{
    int pow2 = (size & (size - 1)) == 0;

    if (dt == COLL_DT_F32) {
        float *d = dst, k = 1.0f / (float)size;
        const float *x = a, *y = b;
        for (size_t i = 0; i < n; i++) {
            float s = x[i] + y[i];
            d[i] = pow2 ? s * k : s / (float)size;
        }
    } else if (dt == COLL_DT_F64) {
        double *d = dst, k = 1.0 / (double)size;
        const double *x = a, *y = b;
        for (size_t i = 0; i < n; i++) {
            double s = x[i] + y[i];
            d[i] = pow2 ? s * k : s / (double)size;
        }
    } else {
        reduce_to_body(dst, a, b, n, dt, COLL_OP_SUM);
        scale_avg_body(dst, n, dt, size);
    }
}

void
elem_scale_avg(void *buf, size_t count, coll_dtype dt, int size)
{
    scale_avg_body(buf, count, dt, size);
}

void
elem_reduce_to(void *dst, const void *a, const void *b, size_t n, coll_dtype dt,
               coll_op op)
{
    reduce_to_body(dst, a, b, n, dt, op);
}

void
elem_sum_scaled(void *dst, const void *a, const void *b, size_t n,
                coll_dtype dt, int size)
{
    sum_scaled_body(dst, a, b, n, dt, size);
}

/* The same loops for AVX2, chosen by a look at the CPU (not an ifunc,
 * which musl has not). The wider vectors pay even though the
 * shared-memory reductions mostly wait on memory: coll_bench's 1 MiB
 * allreduce, medians of 8 runs in turns, 101.6 -> 83.5 us on 2 ranks,
 * 374 -> 357 on 4. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AVX2 __attribute__((target("avx2")))

static AVX2 void
scale_avg_avx2(void *buf, size_t count, coll_dtype dt, int size)
{
    scale_avg_body(buf, count, dt, size);
}

static AVX2 void
reduce_to_avx2(void *dst, const void *a, const void *b, size_t n, coll_dtype dt,
               coll_op op)
{
    reduce_to_body(dst, a, b, n, dt, op);
}

static AVX2 void
sum_scaled_avx2(void *dst, const void *a, const void *b, size_t n,
                coll_dtype dt, int size)
{
    sum_scaled_body(dst, a, b, n, dt, size);
}

static int avx2_wanted = -1; /* -1: the CPU decides */

static int
cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

static int
avx2(void)
{
    int w = __atomic_load_n(&avx2_wanted, __ATOMIC_RELAXED);

    if (w < 0) {
        w = cpu_has_avx2();
        __atomic_store_n(&avx2_wanted, w, __ATOMIC_RELAXED);
    }
    return w;
}

int
elem_local_avx2(int on)
{
    if (on && !cpu_has_avx2())
        return -1;
    __atomic_store_n(&avx2_wanted, on ? 1 : 0, __ATOMIC_RELAXED);
    return 0;
}
#else
#define avx2() 0
#define scale_avg_avx2 scale_avg_body
#define reduce_to_avx2 reduce_to_body
#define sum_scaled_avx2 sum_scaled_body

int
elem_local_avx2(int on)
{
    return on ? -1 : 0;
}
#endif

void
elem_scale_avg_local(void *buf, size_t count, coll_dtype dt, int size)
{
    if (avx2())
        scale_avg_avx2(buf, count, dt, size);
    else
        scale_avg_body(buf, count, dt, size);
}

void
elem_reduce_to_local(void *dst, const void *a, const void *b, size_t n,
                     coll_dtype dt, coll_op op)
{
    if (avx2())
        reduce_to_avx2(dst, a, b, n, dt, op);
    else
        reduce_to_body(dst, a, b, n, dt, op);
}

void
elem_reduce_into_local(void *acc, const void *x, size_t n, coll_dtype dt,
                       coll_op op)
{
    elem_reduce_to_local(acc, acc, x, n, dt, op);
}

void
elem_sum_scaled_local(void *dst, const void *a, const void *b, size_t n,
                      coll_dtype dt, int size)
{
    if (avx2())
        sum_scaled_avx2(dst, a, b, n, dt, size);
    else
        sum_scaled_body(dst, a, b, n, dt, size);
}

void
elem_reduce_into(void *acc, const void *x, size_t n, coll_dtype dt, coll_op op)
{
    elem_reduce_to(acc, acc, x, n, dt, op);
}

size_t
elem_block_start(size_t count, int size, int r, size_t *len)
{
    size_t base = count / (size_t)size, extra = count % (size_t)size;

    *len = base + ((size_t)r < extra);
    return base * (size_t)r + ((size_t)r < extra ? (size_t)r : extra);
}
