/* libcollective's element loops (elementwise.c): dst = a op b for every
 * type and op, and avg's scaling, whose power-of-two sizes multiply by
 * the reciprocal on the claim that this gives the bits division gives. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elementwise.h"
#include "halfprec.h"
#include "typed.h"
#include "unit.h"

/* A spread of float bit patterns: normal, subnormal, huge, both signs. */
static uint64_t
next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 11;
}

/* 0 when got holds the bits of want (any NaN for a NaN). */
static int
differs(const void *want, const void *got, size_t n, int is_nan)
{
    return is_nan ? 0 : memcmp(want, got, n) != 0;
}

START_TEST(avg_by_power_of_two_is_division)
{
    enum { N = 50000 };
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 1024};
    static float f[N], fout[N];
    static double d[N], dout[N];
    uint64_t state = 42;

    for (size_t i = 0; i < N; i++) {
        uint32_t fb = (uint32_t)next(&state);
        uint64_t db = next(&state) << 11 | next(&state) % 2048;
        if (i % 7 == 0)
            fb &= 0x807fffffu; /* subnormal */
        memcpy(&f[i], &fb, sizeof(fb));
        memcpy(&d[i], &db, sizeof(db));
    }
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int size = sizes[s];
        size_t bad = 0;
        memcpy(fout, f, sizeof(f));
        memcpy(dout, d, sizeof(d));
        elem_scale_avg(fout, N, COLL_DT_F32, size);
        elem_scale_avg(dout, N, COLL_DT_F64, size);
        for (size_t i = 0; i < N; i++) {
            volatile float fq = f[i] / (float)size;
            volatile double dq = d[i] / (double)size;
            float fw = fq;
            double dw = dq;
            bad += (size_t)differs(&fw, &fout[i], sizeof(fw), isnan(fw));
            bad += (size_t)differs(&dw, &dout[i], sizeof(dw), isnan(dw));
        }
        ck_assert_msg(bad == 0, "size %d: %zu values differ from division",
                      size, bad);
    }
}
END_TEST

START_TEST(avg_of_integers_and_halves)
{
    int32_t i32[3] = {7, -7, 8};
    uint16_t h[2] = {coll_f32_to_f16(3.0f), coll_f32_to_bf16(3.0f)};

    elem_scale_avg(i32, 3, COLL_DT_I32, 2);
    ck_assert_int_eq(i32[0], 3);
    ck_assert_int_eq(i32[1], -3); /* C division truncates */
    ck_assert_int_eq(i32[2], 4);
    elem_scale_avg(&h[0], 1, COLL_DT_F16, 4);
    elem_scale_avg(&h[1], 1, COLL_DT_BF16, 4);
    ck_assert(coll_f16_to_f32(h[0]) == 0.75f);
    ck_assert(coll_bf16_to_f32(h[1]) == 0.75f);
}
END_TEST

/* a op b in double, for the values used below (all exact). */
static double
expect(double a, double b, coll_op op)
{
    switch (op) {
    case COLL_OP_MIN:
        return a < b ? a : b;
    case COLL_OP_MAX:
        return a > b ? a : b;
    case COLL_OP_PROD:
        return a * b;
    default:
        return a + b;
    }
}

/* typed.h's, with the 16-bit types through float. */
static void
put(void *buf, coll_dtype dt, size_t i, double v)
{
    if (dt == COLL_DT_F16 || dt == COLL_DT_BF16)
        ((uint16_t *)buf)[i] = dt == COLL_DT_F16 ? coll_f32_to_f16((float)v)
                                                 : coll_f32_to_bf16((float)v);
    else
        typed_put(buf, dt, i, v);
}

static double
get(const void *buf, coll_dtype dt, size_t i)
{
    uint16_t h = ((const uint16_t *)buf)[i];

    if (dt == COLL_DT_F16)
        return coll_f16_to_f32(h);
    if (dt == COLL_DT_BF16)
        return coll_bf16_to_f32(h);
    return typed_get(buf, dt, i);
}

START_TEST(reduce_every_type_and_op)
{
    static const double a[] = {3, 0, 9, 1, 12, 5, 2},
                        b[] = {4, 7, 2, 1, 5, 11, 6};
    enum { N = sizeof(a) / sizeof(a[0]) };
    const coll_op ops[] = {COLL_OP_SUM, COLL_OP_MIN, COLL_OP_MAX, COLL_OP_PROD};

    for (int dt = COLL_DT_U8; dt <= COLL_DT_F64; dt++)
        for (size_t o = 0; o < 4; o++) {
            char x[N * 8], y[N * 8], out[N * 8], acc[N * 8];
            for (size_t i = 0; i < N; i++) {
                put(x, (coll_dtype)dt, i, a[i]);
                put(y, (coll_dtype)dt, i, b[i]);
            }
            memcpy(acc, x, sizeof(x));
            elem_reduce_to(out, x, y, N, (coll_dtype)dt, ops[o]);
            elem_reduce_into(acc, y, N, (coll_dtype)dt, ops[o]); /* dst a */
            for (size_t i = 0; i < N; i++) {
                double want = expect(a[i], b[i], ops[o]);
                ck_assert_msg(get(out, (coll_dtype)dt, i) == want,
                              "dt %d op %d [%zu]: %g, want %g", dt, ops[o], i,
                              get(out, (coll_dtype)dt, i), want);
                ck_assert(get(acc, (coll_dtype)dt, i) == want);
                ck_assert(get(x, (coll_dtype)dt, i) == a[i]); /* a kept */
            }
        }
}
END_TEST

/* MIN and MAX of a NaN and a number are the NaN, whichever operand it is
 * (as torch.minimum and torch.maximum): a NaN kept only as the first
 * operand made a reduction's result depend on which rank held it. Every
 * float type, both builds of the shared-memory loops, a length with a
 * vector tail. */
START_TEST(min_and_max_keep_a_nan_either_side)
{
    enum { N = 37 };
    const coll_dtype types[] = {COLL_DT_F16, COLL_DT_BF16, COLL_DT_F32,
                                COLL_DT_F64};
    const coll_op ops[] = {COLL_OP_MIN, COLL_OP_MAX};
    char x[N * 8], y[N * 8], out[N * 8];
    int tried = 0;

    for (int avx2 = 0; avx2 <= 1; avx2++) {
        if (elem_local_avx2(avx2) != 0)
            continue;
        tried++;
        for (size_t t = 0; t < 4; t++)
            for (size_t o = 0; o < 2; o++)
                for (int side = 0; side < 2; side++) {
                    for (size_t i = 0; i < N; i++) {
                        int nan_here = i % 3 == 1;
                        put(x, types[t], i, nan_here && side == 0 ? NAN : 1.0);
                        put(y, types[t], i, nan_here && side == 1 ? NAN : 2.0);
                    }
                    for (int local = 0; local < 2; local++) {
                        if (local)
                            elem_reduce_to_local(out, x, y, N, types[t],
                                                 ops[o]);
                        else
                            elem_reduce_to(out, x, y, N, types[t], ops[o]);
                        for (size_t i = 0; i < N; i++) {
                            double v = get(out, types[t], i);
                            int want_nan = i % 3 == 1;
                            ck_assert_msg(
                                want_nan ? isnan(v)
                                         : v == (ops[o] == COLL_OP_MIN ? 1 : 2),
                                "avx2 %d local %d dt %d op %d NaN in %s [%zu]: "
                                "%g",
                                avx2, local, types[t], ops[o], side ? "b" : "a",
                                i, v);
                        }
                    }
                }
    }
    ck_assert_int_ge(tried, 1);
}
END_TEST

/* elem_sum_scaled in one pass gives the bits of the sum then the
 * division, for floats (spread bit patterns) and, through the two-pass
 * fallback, integers. */
START_TEST(sum_scaled_is_sum_then_division)
{
    enum { N = 20000 };
    static const int sizes[] = {2, 3, 4, 6, 8};
    static float fa[N], fb[N], fout[N];
    static double da[N], db[N], dout[N];
    int32_t ia[3] = {7, -9, 100}, ib[3] = {2, 4, 1}, iout[3];
    uint64_t state = 7;

    for (size_t i = 0; i < N; i++) {
        uint32_t x = (uint32_t)next(&state), y = (uint32_t)next(&state);
        uint64_t u = next(&state) << 11, v = next(&state) << 11;
        memcpy(&fa[i], &x, sizeof(x));
        memcpy(&fb[i], &y, sizeof(y));
        memcpy(&da[i], &u, sizeof(u));
        memcpy(&db[i], &v, sizeof(v));
    }
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int size = sizes[s];
        size_t bad = 0;
        elem_sum_scaled(fout, fa, fb, N, COLL_DT_F32, size);
        elem_sum_scaled(dout, da, db, N, COLL_DT_F64, size);
        for (size_t i = 0; i < N; i++) {
            volatile float fs = fa[i] + fb[i];
            volatile double ds = da[i] + db[i];
            float fw = fs / (float)size;
            double dw = ds / (double)size;
            bad += (size_t)differs(&fw, &fout[i], sizeof(fw), isnan(fw));
            bad += (size_t)differs(&dw, &dout[i], sizeof(dw), isnan(dw));
        }
        ck_assert_msg(bad == 0, "size %d: %zu values differ", size, bad);
    }
    elem_sum_scaled(iout, ia, ib, 3, COLL_DT_I32, 3);
    ck_assert_int_eq(iout[0], 3);
    ck_assert_int_eq(iout[1], -1);
    ck_assert_int_eq(iout[2], 33);
}
END_TEST

/* Bytes of one element (collectives.c's coll_dtype_size is not linked
 * here). */
static size_t
esize(coll_dtype dt)
{
    return dt == COLL_DT_U8 || dt == COLL_DT_I8      ? 1
           : dt == COLL_DT_F16 || dt == COLL_DT_BF16 ? 2
           : dt == COLL_DT_I32 || dt == COLL_DT_F32  ? 4
                                                     : 8;
}

/* 1 when element i of buf is a NaN (never for the integer types). */
static int
nan_at(const void *buf, coll_dtype dt, size_t i)
{
    return isnan(get(buf, dt, i));
}

/* Elements of got whose bits differ from want's (a NaN for a NaN: which
 * NaN's payload an op of two keeps may differ, elementwise.h). */
static size_t
bits_differ(const void *want, const void *got, coll_dtype dt, size_t n)
{
    size_t es = esize(dt), bad = 0;

    for (size_t i = 0; i < n; i++)
        if (nan_at(want, dt, i) ? !nan_at(got, dt, i)
                                : memcmp((const char *)want + i * es,
                                         (const char *)got + i * es, es) != 0)
            bad++;
    return bad;
}

/* The _local loops (AVX2 where the CPU has it, and the plain ones when
 * told) give the plain loops' results: every type and op, spread bit
 * patterns, a length with a tail after any vector width. */
START_TEST(local_loops_match_the_plain_ones)
{
    enum { N = 4099 };
    static unsigned char a[N * 8], b[N * 8], want[N * 8], got[N * 8];
    const coll_op ops[] = {COLL_OP_SUM, COLL_OP_MIN, COLL_OP_MAX, COLL_OP_PROD};
    uint64_t state = 99;
    int tried = 0;

    for (size_t i = 0; i < sizeof(a); i++) {
        a[i] = (unsigned char)next(&state);
        b[i] = (unsigned char)next(&state);
    }
    for (int avx2 = 0; avx2 <= 1; avx2++) {
        if (elem_local_avx2(avx2) != 0) {
            printf("local_loops: no AVX2 loops on this CPU or build: the "
                   "plain ones only\n");
            continue;
        }
        tried++;
        for (int dt = COLL_DT_U8; dt <= COLL_DT_F64; dt++) {
            coll_dtype t = (coll_dtype)dt;
            size_t bytes = N * esize(t);
            for (size_t o = 0; o < 4; o++) {
                elem_reduce_to(want, a, b, N, t, ops[o]);
                elem_reduce_to_local(got, a, b, N, t, ops[o]);
                ck_assert_msg(bits_differ(want, got, t, N) == 0,
                              "avx2 %d dt %d op %d: reduce_to", avx2, dt,
                              ops[o]);
                memcpy(got, a, bytes);
                elem_reduce_into_local(got, b, N, t, ops[o]);
                ck_assert_msg(bits_differ(want, got, t, N) == 0,
                              "avx2 %d dt %d op %d: reduce_into", avx2, dt,
                              ops[o]);
            }
            for (int size = 2; size <= 3; size++) {
                elem_sum_scaled(want, a, b, N, t, size);
                elem_sum_scaled_local(got, a, b, N, t, size);
                ck_assert_msg(bits_differ(want, got, t, N) == 0,
                              "avx2 %d dt %d size %d: sum_scaled", avx2, dt,
                              size);
                memcpy(want, a, bytes);
                memcpy(got, a, bytes);
                elem_scale_avg(want, N, t, size);
                elem_scale_avg_local(got, N, t, size);
                ck_assert_msg(bits_differ(want, got, t, N) == 0,
                              "avx2 %d dt %d size %d: scale_avg", avx2, dt,
                              size);
            }
        }
    }
    ck_assert_int_ge(tried, 1);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("elementwise");
    TCase *tc = tcase_create("loops");

    tcase_set_timeout(tc, 60);
    ADD(tc, avg_by_power_of_two_is_division);
    ADD(tc, avg_of_integers_and_halves);
    ADD(tc, reduce_every_type_and_op);
    ADD(tc, min_and_max_keep_a_nan_either_side);
    ADD(tc, sum_scaled_is_sum_then_division);
    ADD(tc, local_loops_match_the_plain_ones);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
