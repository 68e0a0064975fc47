#include <math.h>
#include <string.h>

#include "halfprec.h"
#include "unit.h"

START_TEST(f16_round_trip_and_specials)
{
    /* every finite half survives a trip through float */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue; /* inf and NaN below */
        ck_assert_uint_eq(coll_f32_to_f16(coll_f16_to_f32((uint16_t)h)), h);
    }
    ck_assert(coll_f16_to_f32(0x3c00) == 1.0f);
    ck_assert(coll_f16_to_f32(0xc000) == -2.0f);
    ck_assert(coll_f16_to_f32(0x0001) == ldexpf(1, -24)); /* subnormal */
    ck_assert(isinf(coll_f16_to_f32(0x7c00)));
    ck_assert(isnan(coll_f16_to_f32(0x7e00)));
    ck_assert_uint_eq(coll_f32_to_f16(70000.0f), 0x7c00); /* overflow */
    ck_assert_uint_eq(coll_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert(isnan(coll_f16_to_f32(coll_f32_to_f16(NAN))));
    /* ties to even: 1 + 2^-11 lies between 1 and 1 + 2^-10 */
    ck_assert_uint_eq(coll_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
    ck_assert_uint_eq(coll_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
}
END_TEST

START_TEST(bf16_rounding)
{
    ck_assert(coll_bf16_to_f32(0x3f80) == 1.0f);
    ck_assert_uint_eq(coll_f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(coll_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
    ck_assert_uint_eq(coll_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
    ck_assert(isnan(coll_bf16_to_f32(coll_f32_to_bf16(NAN))));
    ck_assert(coll_bf16_to_f32(coll_f32_to_bf16(3.0e38f)) > 2.9e38f);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("halfprec");
    TCase *tc = tcase_create("convert");

    ADD(tc, f16_round_trip_and_specials);
    ADD(tc, bf16_rounding);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
