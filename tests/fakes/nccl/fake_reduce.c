/* Element-wise reductions of the fake NCCL (fake_reduce.h). */
#include "fake_reduce.h"

#include <math.h>
#include <string.h>

#include "nccl_api.h"

size_t fake_reduce_type_bytes(int type)
{
    switch (type) {
    case ANCL_ncclInt8:
    case ANCL_ncclUint8:
        return 1;
    case ANCL_ncclFloat16:
    case ANCL_ncclBfloat16:
        return 2;
    case ANCL_ncclInt32:
    case ANCL_ncclUint32:
    case ANCL_ncclFloat32:
        return 4;
    case ANCL_ncclInt64:
    case ANCL_ncclUint64:
    case ANCL_ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

float fake_half_to_float(uint16_t half)
{
    int exponent = (half >> 10) & 0x1f;
    float magnitude, mantissa = (float)(half & 0x3ff);

    if (exponent == 0)
        magnitude = ldexpf(mantissa, -24);
    else if (exponent == 31)
        magnitude = mantissa != 0.0f ? NAN : INFINITY;
    else
        magnitude = ldexpf(mantissa + 1024.0f, exponent - 25);
    return (half & 0x8000) != 0 ? -magnitude : magnitude;
}

/* `value` >> shift, rounded to nearest even. */
static uint32_t shift_round(uint32_t value, unsigned shift)
{
    uint32_t kept = value >> shift;
    uint32_t rest = value & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);

    return kept + (rest > half || (rest == half && (kept & 1u) != 0));
}

uint16_t fake_float_to_half(float value)
{
    uint32_t bits, sign, mantissa;
    int exponent;

    memcpy(&bits, &value, sizeof(bits));
    sign = (bits >> 16) & 0x8000u;
    mantissa = bits & 0x7fffffu;
    if (((bits >> 23) & 0xffu) == 0xffu)
        return (uint16_t)(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u));
    exponent = (int)((bits >> 23) & 0xffu) - 127 + 15;
    if (exponent >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exponent <= 0) {
        if (exponent < -10)
            return (uint16_t)sign;
        return (uint16_t)(sign | shift_round(mantissa | 0x800000u,
                                             (unsigned)(14 - exponent)));
    }
    /* A carry out of the mantissa moves into the exponent, as it should. */
    return (uint16_t)(sign |
                      (((uint32_t)exponent << 10) + shift_round(mantissa, 13)));
}

float fake_bf16_to_float(uint16_t bf16)
{
    uint32_t bits = (uint32_t)bf16 << 16;
    float value;

    memcpy(&value, &bits, sizeof(value));
    return value;
}

uint16_t fake_float_to_bf16(float value)
{
    uint32_t bits;

    memcpy(&bits, &value, sizeof(bits));
    if (isnan(value))
        return (uint16_t)((bits >> 16) | 0x40u);
    return (uint16_t)(shift_round(bits, 16) & 0xffffu);
}

#define APPLY(op, a, b)                                                        \
    ((op) == ANCL_ncclSum    ? (a) + (b)                                       \
     : (op) == ANCL_ncclProd ? (a) * (b)                                       \
     : (op) == ANCL_ncclMax  ? ((a) > (b) ? (a) : (b))                         \
                             : ((a) < (b) ? (a) : (b)))

/* Integers through their unsigned type for sum and product: they wrap. */
#define REDUCE_INT(T, U)                                                       \
    do {                                                                       \
        T *io = inout;                                                         \
        const T *src = in;                                                     \
        for (size_t i = 0; i < count; i++) {                                   \
            if (op == ANCL_ncclSum)                                            \
                io[i] = (T)(U)((U)io[i] + (U)src[i]);                          \
            else if (op == ANCL_ncclProd)                                      \
                io[i] = (T)(U)((U)io[i] * (U)src[i]);                          \
            else                                                               \
                io[i] = APPLY(op, io[i], src[i]);                              \
        }                                                                      \
    } while (0)

#define REDUCE_FLOAT(T)                                                        \
    do {                                                                       \
        T *io = inout;                                                         \
        const T *src = in;                                                     \
        for (size_t i = 0; i < count; i++)                                     \
            io[i] = APPLY(op, io[i], src[i]);                                  \
    } while (0)

#define REDUCE_HALF(to_float, from_float)                                      \
    do {                                                                       \
        uint16_t *io = inout;                                                  \
        const uint16_t *src = in;                                              \
        for (size_t i = 0; i < count; i++) {                                   \
            float a = to_float(io[i]), b = to_float(src[i]);                   \
            io[i] = from_float(APPLY(op, a, b));                               \
        }                                                                      \
    } while (0)

void fake_reduce(int type, int op, void *inout, const void *in, size_t count)
{
    switch (type) {
    case ANCL_ncclInt8:
        REDUCE_INT(int8_t, uint8_t);
        break;
    case ANCL_ncclUint8:
        REDUCE_INT(uint8_t, uint8_t);
        break;
    case ANCL_ncclInt32:
        REDUCE_INT(int32_t, uint32_t);
        break;
    case ANCL_ncclUint32:
        REDUCE_INT(uint32_t, uint32_t);
        break;
    case ANCL_ncclInt64:
        REDUCE_INT(int64_t, uint64_t);
        break;
    case ANCL_ncclUint64:
        REDUCE_INT(uint64_t, uint64_t);
        break;
    case ANCL_ncclFloat32:
        REDUCE_FLOAT(float);
        break;
    case ANCL_ncclFloat64:
        REDUCE_FLOAT(double);
        break;
    case ANCL_ncclFloat16:
        REDUCE_HALF(fake_half_to_float, fake_float_to_half);
        break;
    case ANCL_ncclBfloat16:
        REDUCE_HALF(fake_bf16_to_float, fake_float_to_bf16);
        break;
    default:
        break;
    }
}
