/*
 * A corpus of deliberately buggy kernels, for the checked mode of the CPU
 * plugin (accel-check, ACCEL_NULL_CHECK). tests/test-check.c runs each
 * through tests/check-corpus.c under accel-check and asserts that the
 * report names the kernel, the block, the thread and the argument; the
 * geometry each is launched with is there, so that exactly one thread of
 * one block goes wrong.
 *
 * Each is valid C and CUDA: the bugs are in what they touch, not in how
 * they are written.
 */
#include <accel/kernel.h>

/* Thread n-1 reads x[n]: one element past the end. */
ACCEL_KERNEL(check_off_by_one_read, (uint32_t, n), (const float *, x), (float *, y))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        y[i] = x[i + 1];
}

/* `i <= n`: the thread with i == n writes y[n]. */
ACCEL_KERNEL(check_off_by_one_write, (uint32_t, n), (const float *, x), (float *, y))
{
    uint64_t i = accel_global_idx_x();

    if (i <= n)
        y[i] = i < n ? x[i] : 0.0f;
}

/* Thread 0 of block 0 reads x[-1]. */
ACCEL_KERNEL(check_negative_index, (uint32_t, n), (const float *, x), (float *, y))
{
    int64_t i = (int64_t)accel_global_idx_x();

    if (i < (int64_t)n)
        y[i] = x[i - 1];
}

/* The last thread writes one element past the dynamic shared memory. */
ACCEL_KERNEL(check_shared_overflow, (const float *, x), (float *, y))
{
    ACCEL_SHARED_DYNAMIC(float, s);
    uint32_t t = threadIdx.x;

    s[t + 1] = x[t];
    accel_sync_threads();
    y[t] = t + 1 < blockDim.x ? s[t + 1] : 0.0f;
}

/* Thread 31 writes s[32]: one element past a static shared array. */
ACCEL_KERNEL(check_static_shared_past_end, (const float *, x), (float *, y))
{
    ACCEL_SHARED(float, s, 32);
    uint32_t t = threadIdx.x;

    s[t + 1] = x[t];
    accel_sync_threads();
    y[t] = t + 1 < 32 ? s[t + 1] : 0.0f;
}

/* Thread 0 reads s[-1]: one element before a static shared array. */
ACCEL_KERNEL(check_static_shared_before_start, (const float *, x), (float *, y))
{
    ACCEL_SHARED(float, s, 32);
    int32_t t = (int32_t)threadIdx.x;

    s[t] = x[t];
    accel_sync_threads();
    y[t] = s[t - 1];
}

/* Two static shared arrays side by side: thread 31 writes a[32], which
 * without red zones would be b[0] or the padding before it. */
ACCEL_KERNEL(check_static_shared_into_next, (const float *, x), (float *, y))
{
    ACCEL_SHARED(float, a, 32);
    ACCEL_SHARED(float, b, 32);
    uint32_t t = threadIdx.x;

    b[t] = 0.0f;
    a[t + 1] = x[t];
    accel_sync_threads();
    y[t] = (t + 1 < 32 ? a[t + 1] : 0.0f) + b[t];
}

/* Reads through a raw device address, which the test frees first. */
ACCEL_KERNEL(check_read_raw, (uint32_t, n), (uint64_t, address), (float *, y))
{
    uint64_t i = accel_global_idx_x();
    const float *x = (const float *)(uintptr_t)address;

    if (i < n)
        y[i] = x[i];
}

/* ---- races (accel-check --check race) ---- */

/* Each thread reads its neighbour's shared element with no barrier after
 * the writes: thread 0 reads s[1] before thread 1 writes it. */
ACCEL_KERNEL(check_missing_barrier, (const float *, x), (float *, y))
{
    ACCEL_SHARED_DYNAMIC(float, s);
    uint32_t t = threadIdx.x;

    s[t] = x[t];
    y[t] = s[(t + 1) % blockDim.x];
}

/* Thread 0 of every block writes out[0]: blocks are not ordered. */
ACCEL_KERNEL(check_blocks_write_one, (float *, out))
{
    if (threadIdx.x == 0)
        out[0] = (float)blockIdx.x;
}

/* The same made right: every thread adds to out[0] atomically. */
ACCEL_KERNEL(check_blocks_atomic, (uint32_t *, out))
{
    accel_atomic_add_u32(&out[0], 1);
}

/* ---- reads of memory never written (accel-check --check init) ---- */

/* A plain copy; the test writes only the first half of x. */
ACCEL_KERNEL(check_copy, (uint32_t, n), (const float *, x), (float *, y))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        y[i] = x[i];
}
