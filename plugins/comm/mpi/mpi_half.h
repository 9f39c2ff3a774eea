/*
 * f16 and bf16 reductions for MPI, which has no portable datatype for
 * either: the provider moves them as 16-bit integers and reduces them
 * through user ops (MPI_Op_create) that call the providers' common
 * reduction (plugins/comm/common/reduce.h: f32 arithmetic, rounded back).
 */
#ifndef ACCEL_COMM_MPI_HALF_H
#define ACCEL_COMM_MPI_HALF_H

#include <accel/types.h>

#include "mpi_lib.h"

/* The user function reducing `type` (ACCEL_F16 or ACCEL_BF16) by `op`;
 * NULL for other types. */
mpi_user_fn *mpi__half_reduce_fn(accel_elem_type type, accel_reduce_op op);

#endif /* ACCEL_COMM_MPI_HALF_H */
