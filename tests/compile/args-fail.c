/*
 * Uses of the ACCEL_ARG_<TYPE> value macros that must not compile: a
 * pointer or a struct where a number is wanted, and anything but an
 * accel_f16 (accel_bf16) for ACCEL_ARG_F16 (ACCEL_ARG_BF16). run.sh
 * compiles this file once per case, with -DCASE_name, and expects the
 * compiler to refuse it with a message matching the extended regular
 * expression after the case. Without a case the file compiles (the same
 * macros with numbers), so that each refusal is the case's own.
 */
/* run.sh finds each case by its lines as written: */
// clang-format off
#include <accel/accel.h>

struct pair {
    float a, b;
};

accel_arg arg(float a, uint32_t n);

accel_arg arg(float a, uint32_t n)
{
    float floats[2] = { 0 };
    struct pair pair = { 0, 0 };
    accel_f16 half = { 0 };
    accel_arg out = ACCEL_ARG_U32(n + 1);
    (void)floats;
    (void)pair;
    (void)half;
    (void)a;
#if defined(CASE_f32_from_pointer) /* '(unary plus|unary expression)' */
    out = ACCEL_ARG_F32(floats);
#elif defined(CASE_u64_from_pointer) /* '(unary plus|unary expression)' */
    out = ACCEL_ARG_U64(&n);
#elif defined(CASE_u32_from_struct) /* '(unary plus|unary expression)' */
    out = ACCEL_ARG_U32(pair);
#elif defined(CASE_f16_from_float) /* "(_Generic' selector of type|controlling expression type) 'float'" */
    out = ACCEL_ARG_F16(2.0f * a);
#elif defined(CASE_bf16_from_f16) /* "(_Generic' selector of type|controlling expression type) '(struct )?accel_f16'" */
    out = ACCEL_ARG_BF16(half);
#else
    out = ACCEL_ARG_F32(2.0f * a);
    out = ACCEL_ARG_F16(half);
#endif
    return out;
}
