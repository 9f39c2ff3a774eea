/*
 * Element-wise reductions for the communication providers (reduce.h).
 * Each (type, op) pair is its own plain loop over restrict pointers, so
 * that the compiler vectorises it; f16 and bf16 go through f32.
 */
#include "reduce.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} elem_table[ACCEL_ELEM_TYPE_COUNT] = {
    [ACCEL_BYTE] = {"byte", 1}, [ACCEL_F16] = {"f16", 2},
    [ACCEL_BF16] = {"bf16", 2}, [ACCEL_F32] = {"f32", 4},
    [ACCEL_F64] = {"f64", 8},   [ACCEL_I8] = {"i8", 1},
    [ACCEL_I16] = {"i16", 2},   [ACCEL_I32] = {"i32", 4},
    [ACCEL_I64] = {"i64", 8},   [ACCEL_U8] = {"u8", 1},
    [ACCEL_U16] = {"u16", 2},   [ACCEL_U32] = {"u32", 4},
    [ACCEL_U64] = {"u64", 8},
};

size_t accel__comm_elem_size(uint32_t type)
{
    return type < ACCEL_ELEM_TYPE_COUNT ? elem_table[type].size : 0;
}

const char *accel__comm_elem_name(uint32_t type)
{
    return type < ACCEL_ELEM_TYPE_COUNT ? elem_table[type].name : "?";
}

const char *accel__comm_reduce_name(uint32_t op)
{
    static const char *const names[ACCEL_REDUCE_OP_COUNT] = {"sum", "prod",
                                                             "min", "max"};
    return op < ACCEL_REDUCE_OP_COUNT ? names[op] : "?";
}

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

float accel__comm_f16_to_f32(uint16_t half)
{
    uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
    uint32_t exponent = (half >> 10) & 0x1fu;
    uint32_t mantissa = half & 0x3ffu;
    if (exponent == 0) {
        /* Zero or subnormal: mantissa * 2^-24, exact in f32. */
        float value = (float)mantissa * 0x1p-24f;
        return sign ? -value : value;
    }
    if (exponent == 31)
        return bits_float(sign | 0x7f800000u | (mantissa << 13));
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t accel__comm_f32_to_f16(float value)
{
    uint32_t bits = float_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) /* NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7e00u);
    if (magnitude >= 0x477ff000u) /* 65520 and up round to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (magnitude < 0x38800000u) {
        /* Below the smallest normal: adding 0.5 puts the subnormal's
         * bits at the bottom of the mantissa, and the FPU's own rounding
         * (to nearest even) rounds them. */
        float shifted = bits_float(magnitude) + 0.5f;
        return (uint16_t)(sign | (float_bits(shifted) - 0x3f000000u));
    }
    /* Rebias the exponent and round the 13 dropped bits to nearest even. */
    uint32_t odd = (magnitude >> 13) & 1u;
    magnitude += 0xc8000fffu + odd; /* (15 - 127) << 23, plus half - 1 */
    return (uint16_t)(sign | (magnitude >> 13));
}

float accel__comm_bf16_to_f32(uint16_t half)
{
    return bits_float((uint32_t)half << 16);
}

uint16_t accel__comm_f32_to_bf16(float value)
{
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* The four operations on a value type V computed in arithmetic type A
 * (the unsigned type of the same width for integers, so that SUM and PROD
 * wrap instead of overflowing). */
#define OP_SUM(A, d, s) ((A)(d) + (A)(s))
#define OP_PROD(A, d, s) ((A)(d) * (A)(s))
#define OP_MIN(A, d, s) ((s) < (d) ? (s) : (d))
#define OP_MAX(A, d, s) ((s) > (d) ? (s) : (d))

#define REDUCE_LOOP(NAME, V, A, OP)                                            \
    static void NAME(void *dst, const void *src, size_t count)                 \
    {                                                                          \
        V *restrict d = dst;                                                   \
        const V *restrict s = src;                                             \
        for (size_t i = 0; i < count; i++)                                     \
            d[i] = (V)OP(A, d[i], s[i]);                                       \
    }

#define REDUCE_TYPE(T, V, A)                                                   \
    REDUCE_LOOP(reduce_##T##_sum, V, A, OP_SUM)                                \
    REDUCE_LOOP(reduce_##T##_prod, V, A, OP_PROD)                              \
    REDUCE_LOOP(reduce_##T##_min, V, A, OP_MIN)                                \
    REDUCE_LOOP(reduce_##T##_max, V, A, OP_MAX)

REDUCE_TYPE(f32, float, float)
REDUCE_TYPE(f64, double, double)
REDUCE_TYPE(i8, int8_t, uint32_t)
REDUCE_TYPE(i16, int16_t, uint32_t)
REDUCE_TYPE(i32, int32_t, uint32_t)
REDUCE_TYPE(i64, int64_t, uint64_t)
REDUCE_TYPE(u8, uint8_t, uint32_t)
REDUCE_TYPE(u16, uint16_t, uint32_t)
REDUCE_TYPE(u32, uint32_t, uint32_t)
REDUCE_TYPE(u64, uint64_t, uint64_t)

/* f16 and bf16: widen, reduce in f32, round back. */
#define REDUCE_HALF_LOOP(NAME, TO_F32, FROM_F32, OP)                           \
    static void NAME(void *dst, const void *src, size_t count)                 \
    {                                                                          \
        uint16_t *restrict d = dst;                                            \
        const uint16_t *restrict s = src;                                      \
        for (size_t i = 0; i < count; i++) {                                   \
            float a = TO_F32(d[i]), b = TO_F32(s[i]);                          \
            d[i] = FROM_F32(OP(float, a, b));                                  \
        }                                                                      \
    }

#define REDUCE_HALF(T, TO_F32, FROM_F32)                                       \
    REDUCE_HALF_LOOP(reduce_##T##_sum, TO_F32, FROM_F32, OP_SUM)               \
    REDUCE_HALF_LOOP(reduce_##T##_prod, TO_F32, FROM_F32, OP_PROD)             \
    REDUCE_HALF_LOOP(reduce_##T##_min, TO_F32, FROM_F32, OP_MIN)               \
    REDUCE_HALF_LOOP(reduce_##T##_max, TO_F32, FROM_F32, OP_MAX)

REDUCE_HALF(f16, accel__comm_f16_to_f32, accel__comm_f32_to_f16)
REDUCE_HALF(bf16, accel__comm_bf16_to_f32, accel__comm_f32_to_bf16)

typedef void (*reduce_fn)(void *dst, const void *src, size_t count);

#define REDUCE_ROW(T)                                                          \
    {reduce_##T##_sum, reduce_##T##_prod, reduce_##T##_min, reduce_##T##_max}

static const reduce_fn reduce_table[ACCEL_ELEM_TYPE_COUNT]
                                   [ACCEL_REDUCE_OP_COUNT] = {
                                       [ACCEL_BYTE] = REDUCE_ROW(u8),
                                       [ACCEL_F16] = REDUCE_ROW(f16),
                                       [ACCEL_BF16] = REDUCE_ROW(bf16),
                                       [ACCEL_F32] = REDUCE_ROW(f32),
                                       [ACCEL_F64] = REDUCE_ROW(f64),
                                       [ACCEL_I8] = REDUCE_ROW(i8),
                                       [ACCEL_I16] = REDUCE_ROW(i16),
                                       [ACCEL_I32] = REDUCE_ROW(i32),
                                       [ACCEL_I64] = REDUCE_ROW(i64),
                                       [ACCEL_U8] = REDUCE_ROW(u8),
                                       [ACCEL_U16] = REDUCE_ROW(u16),
                                       [ACCEL_U32] = REDUCE_ROW(u32),
                                       [ACCEL_U64] = REDUCE_ROW(u64),
};

void accel__comm_reduce(uint32_t type, uint32_t op, void *dst, const void *src,
                        size_t count)
{
    if (count == 0)
        return;
    reduce_table[type][op](dst, src, count);
}
