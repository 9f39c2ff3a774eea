/*
 * Element-wise reductions shared by the communication providers
 * (plugins/comm/NAME): `dst op= src` for every accel_elem_type and
 * accel_reduce_op, and the f16/bf16 conversions they need.
 *
 * The rules every provider gives its users, whatever library runs the
 * collective underneath:
 *  - f16 and bf16 are reduced in f32 arithmetic and rounded back to
 *    nearest, ties to even (NaN stays NaN);
 *  - ACCEL_BYTE reduces as u8;
 *  - integer SUM and PROD wrap modulo 2^bits, signed types included (they
 *    are computed as the unsigned type of the same width);
 *  - MIN and MAX compare as the type's values (signed for signed types).
 */
#ifndef ACCEL_COMM_REDUCE_H
#define ACCEL_COMM_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include <accel/types.h>

/* Bytes of one element of `type`; 0 for a value out of range. */
size_t accel__comm_elem_size(uint32_t type);
/* "f32", "u8", ...; "?" for a value out of range. */
const char *accel__comm_elem_name(uint32_t type);
/* "sum", "prod", "min", "max"; "?" for a value out of range. */
const char *accel__comm_reduce_name(uint32_t op);

/*
 * dst[i] = dst[i] op src[i] for i < count. dst and src do not overlap.
 * type and op must be in range (the caller checked them).
 */
void accel__comm_reduce(uint32_t type, uint32_t op, void *dst, const void *src,
                        size_t count);

/* IEEE binary16 and bfloat16 to and from f32, round to nearest even. */
float accel__comm_f16_to_f32(uint16_t half);
uint16_t accel__comm_f32_to_f16(float value);
float accel__comm_bf16_to_f32(uint16_t half);
uint16_t accel__comm_f32_to_bf16(float value);

#endif /* ACCEL_COMM_REDUCE_H */
