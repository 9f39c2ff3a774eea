/*
 * f16 and bf16 conversions and the user ops that reduce them (mpi_half.h).
 * Rounding is to nearest, ties to even; NaN stays NaN.
 */
#include "mpi_half.h"

#include <string.h>

static uint32_t float_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float bits_float(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

float mpi__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f)
        return bits_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
        /* Zero or subnormal: mantissa * 2^-24, exact in f32. */
        float magnitude = (float)mantissa * (1.0f / 16777216.0f);
        return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t mpi__f32_to_f16(float value)
{
    uint32_t bits = float_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)(sign | 0x7e00u);
    if (magnitude >= 0x477ff000u) /* rounds to 65520 or more: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (magnitude < 0x38800000u) {
        /* Below f16's smallest normal: a subnormal in units of 2^-24,
         * rounded to nearest even by the FPU's own rounding. */
        float scaled = bits_float(magnitude) * 16777216.0f;
        uint32_t units = (uint32_t)scaled;
        float rest = scaled - (float)units;
        if (rest > 0.5f || (rest == 0.5f && (units & 1u)))
            units++;
        return (uint16_t)(sign | units);
    }
    uint32_t rebased = magnitude - (112u << 23);
    uint32_t half = rebased >> 13;
    uint32_t rest = rebased & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++;
    return (uint16_t)(sign | half);
}

float mpi__bf16_to_f32(uint16_t bits)
{
    return bits_float((uint32_t)bits << 16);
}

uint16_t mpi__f32_to_bf16(float value)
{
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits >> 16) | 0x40u);
    uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)((bits + rounding) >> 16);
}

static float combine(accel_reduce_op op, float a, float b)
{
    switch (op) {
    case ACCEL_REDUCE_SUM:
        return a + b;
    case ACCEL_REDUCE_PROD:
        return a * b;
    case ACCEL_REDUCE_MIN:
        return b < a ? b : a;
    default:
        return b > a ? b : a;
    }
}

static void reduce_f16(accel_reduce_op op, const void *in, void *inout,
                       int count)
{
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < count; i++)
        b[i] = mpi__f32_to_f16(
            combine(op, mpi__f16_to_f32(a[i]), mpi__f16_to_f32(b[i])));
}

static void reduce_bf16(accel_reduce_op op, const void *in, void *inout,
                        int count)
{
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < count; i++)
        b[i] = mpi__f32_to_bf16(
            combine(op, mpi__bf16_to_f32(a[i]), mpi__bf16_to_f32(b[i])));
}

/* MPI passes no user pointer to a user op: one function per pair. */
#define HALF_FN_(type, op, OP)                                                 \
    static void type##_##op(void *in, void *inout, int *len, void *dt)         \
    {                                                                          \
        (void)dt;                                                              \
        reduce_##type(OP, in, inout, *len);                                    \
    }
HALF_FN_(f16, sum, ACCEL_REDUCE_SUM)
HALF_FN_(f16, prod, ACCEL_REDUCE_PROD)
HALF_FN_(f16, min, ACCEL_REDUCE_MIN)
HALF_FN_(f16, max, ACCEL_REDUCE_MAX)
HALF_FN_(bf16, sum, ACCEL_REDUCE_SUM)
HALF_FN_(bf16, prod, ACCEL_REDUCE_PROD)
HALF_FN_(bf16, min, ACCEL_REDUCE_MIN)
HALF_FN_(bf16, max, ACCEL_REDUCE_MAX)
#undef HALF_FN_

mpi_user_fn *mpi__half_reduce_fn(accel_elem_type type, accel_reduce_op op)
{
    static mpi_user_fn *const f16[ACCEL_REDUCE_OP_COUNT] = {
        f16_sum, f16_prod, f16_min, f16_max};
    static mpi_user_fn *const bf16[ACCEL_REDUCE_OP_COUNT] = {
        bf16_sum, bf16_prod, bf16_min, bf16_max};
    if ((unsigned)op >= ACCEL_REDUCE_OP_COUNT)
        return NULL;
    if (type == ACCEL_F16)
        return f16[op];
    if (type == ACCEL_BF16)
        return bf16[op];
    return NULL;
}
