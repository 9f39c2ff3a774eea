/*
 * A correct kernel for 16-wide blocks: kernel.h's rows of exactly 32
 * threads, which such a block never runs, must not make gcc warn
 * "iteration 15 invokes undefined behavior" (compiled with -O2 -Werror).
 */
#include <accel/kernel.h>

ACCEL_KERNEL(reverse16, (const float *, x), (float *, y))
{
    ACCEL_SHARED(float, s, 16);
    uint32_t t = threadIdx.x;

    s[t] = x[blockIdx.x * 16 + t];
    accel_sync_threads();
    y[blockIdx.x * 16 + t] = s[15 - t];
}
