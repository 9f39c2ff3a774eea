/*
 * The kernels of accel-bench's workload cases (tools/bench/workloads.c):
 * real GPU kernels, written as they would be for a GPU, with the same
 * arithmetic in the same order as the OpenCL C and plain C versions the
 * benchmark runs beside them. None needs a barrier.
 *
 * A tiled stencil_2d (the halo loaded into shared memory, two barriers)
 * belongs here once <accel/kernel.h> has block barriers on the CPU; so do
 * gemm_tiled, reduce_shared and scan_block.
 */
#include <accel/kernel.h>

/*
 * y = A x for an n x n row-major A, one thread per row, for any block
 * shape: the block's threads, x fastest, take consecutive rows.
 */
ACCEL_KERNEL(matvec, (uint32_t, n), (const float *, a), (const float *, x), (float *, y))
{
    uint64_t row = ((uint64_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const float *r;
    float sum = 0.0f;

    if (row >= n)
        return;
    r = a + row * n;
    for (uint32_t k = 0; k < n; k++)
        sum += r[k] * x[k];
    y[row] = sum;
}

/* One Jacobi step of a 5-point stencil on an n x n grid; the edge is copied. */
ACCEL_KERNEL(stencil_2d, (uint32_t, n), (const float *, in), (float *, out))
{
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint64_t i = y * n + x;

    if (x >= n || y >= n)
        return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

/*
 * A 3x3x3 convolution of an n^3 volume (x fastest) with fixed weights; the
 * boundary is written as zero.
 */
ACCEL_KERNEL(conv3d, (uint32_t, n), (const float *, in), (float *, out))
{
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint64_t z = accel_global_idx_z();
    uint64_t plane = (uint64_t)n * n;
    uint64_t i = z * plane + y * n + x;
    float sum = 0.0f;

    if (x >= n || y >= n || z >= n)
        return;
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        out[i] = 0.0f;
        return;
    }
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                sum += (0.03f + 0.001f * (float)((dz + 1) * 9 + (dy + 1) * 3 + dx + 1)) *
                       in[(int64_t)i + dz * (int64_t)plane + dy * (int64_t)n + dx];
    out[i] = sum;
}

/* 256 bins of the values' top byte, counted with global atomics. */
ACCEL_KERNEL(histogram, (uint32_t, n), (const uint32_t *, values), (uint32_t *, bins))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        accel_atomic_add_u32(&bins[values[i] >> 24], 1);
}
