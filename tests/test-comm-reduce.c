/*
 * The reductions every communication provider shares
 * (plugins/comm/common/reduce.c), against hand-worked values: f16 and
 * bf16 rounding, integer wrapping, signed and unsigned comparison.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reduce.h"

static uint16_t f16_of(float value)
{
    return accel__comm_f32_to_f16(value);
}

static void test_half_conversions_round_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(f16_of(1.0f), 0x3c00);
    assert_int_equal(f16_of(-2.0f), 0xc000);
    assert_int_equal(f16_of(65504.0f), 0x7bff);
    assert_int_equal(f16_of(65519.0f), 0x7bff);
    assert_int_equal(f16_of(65520.0f), 0x7c00); /* the tie goes to infinity */
    assert_int_equal(f16_of(2049.0f), 0x6800);  /* tie: to even, 2048 */
    assert_int_equal(f16_of(2051.0f), 0x6802);  /* tie: to even, 2052 */
    assert_int_equal(f16_of(0x1p-24f), 0x0001); /* the smallest subnormal */
    assert_int_equal(f16_of(0x1p-25f), 0x0000); /* tie: to even, zero */
    assert_int_equal(f16_of(0x3p-25f), 0x0002); /* tie: to even, 2 */
    assert_int_equal(f16_of(-0.0f), 0x8000);
    assert_int_equal(f16_of(__builtin_inff()), 0x7c00);
    assert_true((f16_of(__builtin_nanf("")) & 0x7fff) > 0x7c00);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
    assert_true((accel__comm_f32_to_bf16(__builtin_nanf("")) & 0x7fff) > 0x7f80);
    /* Every half that is a number survives the trip through f32. */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0)
            continue;
        assert_int_equal(f16_of(accel__comm_f16_to_f32((uint16_t)h)), h);
        if ((h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0)
            continue;
        assert_int_equal(
            accel__comm_f32_to_bf16(accel__comm_bf16_to_f32((uint16_t)h)), h);
    }
}

static void test_reductions_wrap_compare_and_round(void **state)
{
    (void)state;
    int8_t i8[2] = {127, -128}, i8s[2] = {1, 127};
    accel__comm_reduce(ACCEL_I8, ACCEL_REDUCE_SUM, i8, i8s, 2);
    assert_int_equal(i8[0], -128); /* wraps */
    assert_int_equal(i8[1], -1);
    int8_t m[2] = {-128, 5}, ms[2] = {127, -6};
    accel__comm_reduce(ACCEL_I8, ACCEL_REDUCE_MIN, m, ms, 2);
    assert_int_equal(m[0], -128); /* signed compare */
    assert_int_equal(m[1], -6);
    uint8_t b[1] = {200}, bs[1] = {100};
    accel__comm_reduce(ACCEL_BYTE, ACCEL_REDUCE_MAX, b, bs, 1);
    assert_int_equal(b[0], 200); /* bytes compare unsigned */
    uint16_t u16[1] = {65535}, u16s[1] = {65535};
    accel__comm_reduce(ACCEL_U16, ACCEL_REDUCE_PROD, u16, u16s, 1);
    assert_int_equal(u16[0], 1);
    int32_t i32[1] = {INT32_MAX}, i32s[1] = {2};
    accel__comm_reduce(ACCEL_I32, ACCEL_REDUCE_PROD, i32, i32s, 1);
    assert_int_equal(i32[0], -2);
    int64_t i64[1] = {INT64_MAX}, i64s[1] = {1};
    accel__comm_reduce(ACCEL_I64, ACCEL_REDUCE_SUM, i64, i64s, 1);
    assert_true(i64[0] == INT64_MIN);
    uint64_t u64[1] = {3}, u64s[1] = {UINT64_MAX};
    accel__comm_reduce(ACCEL_U64, ACCEL_REDUCE_MIN, u64, u64s, 1);
    assert_true(u64[0] == 3);
    double f64[1] = {1.5}, f64s[1] = {-2.25};
    accel__comm_reduce(ACCEL_F64, ACCEL_REDUCE_PROD, f64, f64s, 1);
    assert_true(f64[0] == -3.375);
    float f32[2] = {1.0f, -3.0f}, f32s[2] = {0.5f, 2.0f};
    accel__comm_reduce(ACCEL_F32, ACCEL_REDUCE_MAX, f32, f32s, 2);
    assert_true(f32[0] == 1.0f && f32[1] == 2.0f);
    /* f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even, 1; from
     * 1 + 2^-10 the same step goes up to 1 + 2^-9. */
    uint16_t h[2] = {0x3c00, 0x3c01},
             hs[2] = {f16_of(0x1p-11f), f16_of(0x1p-11f)};
    accel__comm_reduce(ACCEL_F16, ACCEL_REDUCE_SUM, h, hs, 2);
    assert_int_equal(h[0], 0x3c00);
    assert_int_equal(h[1], 0x3c02);
    uint16_t bf[1] = {0x3f80}, bfs[1] = {accel__comm_f32_to_bf16(3.0f)};
    accel__comm_reduce(ACCEL_BF16, ACCEL_REDUCE_PROD, bf, bfs, 1);
    assert_int_equal(bf[0], accel__comm_f32_to_bf16(3.0f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_conversions_round_to_nearest_even),
        cmocka_unit_test(test_reductions_wrap_compare_and_round),
    };
    /* ACCEL_TEST_FILTER=name runs the tests that match (cmocka's pattern). */
    if (getenv("ACCEL_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("ACCEL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
