/*
 * f16 and bf16 reductions for MPI, which has no portable datatype for
 * either: the provider moves them as 16-bit integers and reduces them
 * through user ops (MPI_Op_create) that compute in f32 and round back, as
 * types.h says every reduction of these types does.
 *
 * When plugins/comm/common/reduce.c (the host provider's) is merged, these
 * conversions are to be replaced by it; they are kept small until then.
 */
#ifndef ACCEL_COMM_MPI_HALF_H
#define ACCEL_COMM_MPI_HALF_H

#include <stdint.h>

#include <accel/types.h>

#include "mpi_lib.h"

float mpi__f16_to_f32(uint16_t bits);
uint16_t mpi__f32_to_f16(float value);
float mpi__bf16_to_f32(uint16_t bits);
uint16_t mpi__f32_to_bf16(float value);

/* The user function reducing `type` (ACCEL_F16 or ACCEL_BF16) by `op`. */
mpi_user_fn *mpi__half_reduce_fn(accel_elem_type type, accel_reduce_op op);

#endif /* ACCEL_COMM_MPI_HALF_H */
