/*
 * A kernel that calls the math library, for tests/test-accel-cc.c: its
 * CPU image must load in a program that does not link libm, which
 * accel-cc sees to by linking the image against it.
 */
#include <accel/kernel.h>

/* out[i] = sqrtf(squares[i]) + cbrtf(cubes[i]) for i < n. */
ACCEL_KERNEL(root_sum, (uint32_t, n), (const float *, squares), (const float *, cubes),
             (float *, out))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        out[i] = sqrtf(squares[i]) + cbrtf(cubes[i]);
}
