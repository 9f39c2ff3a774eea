/*
 * Element-wise reduction of NCCL's data types, for the fake NCCL: the
 * arithmetic a GPU's NCCL does, in the element type (integers wrap,
 * halves round to nearest even at each step).
 */
#ifndef FAKE_REDUCE_H
#define FAKE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of an ncclDataType_t; 0 for a value NCCL does not have. */
size_t fake_reduce_type_bytes(int type);
/* inout[i] = inout[i] OP in[i] for `count` elements of ncclDataType_t `type`, ncclRedOp_t `op`. */
void fake_reduce(int type, int op, void *inout, const void *in, size_t count);

/* IEEE half and bfloat16 from and to float, rounding to nearest even. */
float fake_half_to_float(uint16_t half);
uint16_t fake_float_to_half(float value);
float fake_bf16_to_float(uint16_t bf16);
uint16_t fake_float_to_bf16(float value);

#endif /* FAKE_REDUCE_H */
