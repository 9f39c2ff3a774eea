/*
 * The user ops that reduce f16 and bf16 (mpi_half.h).
 */
#include "mpi_half.h"

#include "reduce.h"

/* MPI passes no user pointer to a user op: one function per pair. MPI's
 * contract is inout = in op inout; every op here commutes. */
#define HALF_FN_(name, TYPE, OP)                                               \
    static void name(void *in, void *inout, int *len, void *datatype)          \
    {                                                                          \
        (void)datatype;                                                        \
        accel__comm_reduce(TYPE, OP, inout, in, (size_t)*len);                 \
    }
HALF_FN_(f16_sum, ACCEL_F16, ACCEL_REDUCE_SUM)
HALF_FN_(f16_prod, ACCEL_F16, ACCEL_REDUCE_PROD)
HALF_FN_(f16_min, ACCEL_F16, ACCEL_REDUCE_MIN)
HALF_FN_(f16_max, ACCEL_F16, ACCEL_REDUCE_MAX)
HALF_FN_(bf16_sum, ACCEL_BF16, ACCEL_REDUCE_SUM)
HALF_FN_(bf16_prod, ACCEL_BF16, ACCEL_REDUCE_PROD)
HALF_FN_(bf16_min, ACCEL_BF16, ACCEL_REDUCE_MIN)
HALF_FN_(bf16_max, ACCEL_BF16, ACCEL_REDUCE_MAX)
#undef HALF_FN_

mpi_user_fn *mpi__half_reduce_fn(accel_elem_type type, accel_reduce_op op)
{
    static mpi_user_fn *const f16[ACCEL_REDUCE_OP_COUNT] = {f16_sum, f16_prod,
                                                            f16_min, f16_max};
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
