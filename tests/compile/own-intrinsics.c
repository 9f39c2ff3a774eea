/*
 * A source with its own CPU definitions of CUDA intrinsics, written before
 * kernel.h had them, compiles unchanged with ACCEL_NO_CUDA_INTRINSICS.
 */
#define ACCEL_NO_CUDA_INTRINSICS 1
#include <accel/kernel.h>

#if ACCEL_KERNEL_CPU
static inline float rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
#endif

ACCEL_KERNEL(inverse_roots, (uint32_t, n), (float *, x))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        x[i] = rsqrtf(x[i]);
}
