/*
 * Kernels for tests/test-scheduling.c: where a launch's threads ran, so
 * that a test can see whether the null plugin shared a grid with its
 * pool. One source for every backend like the others.
 */
#include <accel/kernel.h>

/*
 * Thread i < n runs `rounds` rounds of xorshift32 from i + 1 into
 * result[i], and writes into where[i] a value naming the host thread it
 * ran on (the address of a thread-local variable; its block on a GPU).
 */
ACCEL_KERNEL(spin_and_tag, (uint32_t, n), (uint32_t, rounds), (uint32_t *, result),
             (uint64_t *, where))
{
    uint64_t i = accel_global_idx_x();
    uint32_t x;

    if (i >= n)
        return;
    x = (uint32_t)i + 1;
    for (uint32_t r = 0; r < rounds; r++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    result[i] = x;
#if ACCEL_KERNEL_CPU
    {
        static _Thread_local unsigned char here;

        where[i] = (uint64_t)(uintptr_t)&here;
    }
#else
    where[i] = blockIdx.x;
#endif
}
