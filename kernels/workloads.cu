/*
 * The kernels of accel-bench's workload cases (tools/bench/workloads.c):
 * real GPU kernels, written as they would be for a GPU, with the same
 * arithmetic in the same order as the OpenCL C and plain C versions the
 * benchmark runs beside them. The first ones need no barrier; the last
 * ones (gemm_tiled, stencil_2d_tiled, reduce_shared, scan_block) use shared
 * memory and block barriers, and where a barrier-free form of the same
 * arithmetic exists (gemm, stencil_2d) the benchmark compares the two.
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

/* ---- kernels with shared memory and barriers ---- */

#define WORKLOAD_TILE 16

/* C = A B for n x n row-major matrices, a thread per element, no sharing. */
ACCEL_KERNEL(gemm, (uint32_t, n), (const float *, a), (const float *, b), (float *, c))
{
    uint64_t col = accel_global_idx_x();
    uint64_t row = accel_global_idx_y();
    float sum = 0.0f;

    if (row >= n || col >= n)
        return;
    for (uint32_t k = 0; k < n; k++)
        sum += a[row * n + k] * b[(uint64_t)k * n + col];
    c[row * n + col] = sum;
}

/* The same product through 16 x 16 shared tiles, two barriers a tile (blocks of 16x16). */
ACCEL_KERNEL(gemm_tiled, (uint32_t, n), (const float *, a), (const float *, b), (float *, c))
{
    ACCEL_SHARED(float, ta, WORKLOAD_TILE * WORKLOAD_TILE);
    ACCEL_SHARED(float, tb, WORKLOAD_TILE * WORKLOAD_TILE);
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint32_t row = blockIdx.y * WORKLOAD_TILE + ty, col = blockIdx.x * WORKLOAD_TILE + tx;
    float sum = 0.0f;

    for (uint32_t t = 0; t < n; t += WORKLOAD_TILE) {
        ta[ty * WORKLOAD_TILE + tx] =
            row < n && t + tx < n ? a[(uint64_t)row * n + t + tx] : 0.0f;
        tb[ty * WORKLOAD_TILE + tx] =
            col < n && t + ty < n ? b[(uint64_t)(t + ty) * n + col] : 0.0f;
        accel_sync_threads();
        for (uint32_t k = 0; k < WORKLOAD_TILE; k++)
            sum += ta[ty * WORKLOAD_TILE + k] * tb[k * WORKLOAD_TILE + tx];
        accel_sync_threads();
    }
    if (row < n && col < n)
        c[(uint64_t)row * n + col] = sum;
}

/* stencil_2d with the block's cells and their halo loaded into shared memory (blocks of 32x8). */
#define WORKLOAD_ST_X 32
#define WORKLOAD_ST_Y 8
#define WORKLOAD_HALO_X (WORKLOAD_ST_X + 2)
#define WORKLOAD_HALO_Y (WORKLOAD_ST_Y + 2)

ACCEL_KERNEL(stencil_2d_tiled, (uint32_t, n), (const float *, in), (float *, out))
{
    ACCEL_SHARED(float, tile, WORKLOAD_HALO_X * WORKLOAD_HALO_Y);
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint64_t i = y * n + x;
    uint32_t c = (threadIdx.y + 1) * WORKLOAD_HALO_X + threadIdx.x + 1;

    for (uint32_t k = threadIdx.y * WORKLOAD_ST_X + threadIdx.x;
         k < WORKLOAD_HALO_X * WORKLOAD_HALO_Y; k += WORKLOAD_ST_X * WORKLOAD_ST_Y) {
        int64_t sx = (int64_t)blockIdx.x * WORKLOAD_ST_X + k % WORKLOAD_HALO_X - 1;
        int64_t sy = (int64_t)blockIdx.y * WORKLOAD_ST_Y + k / WORKLOAD_HALO_X - 1;

        tile[k] = sx >= 0 && sy >= 0 && sx < n && sy < n ? in[sy * (int64_t)n + sx] : 0.0f;
    }
    accel_sync_threads();
    if (x >= n || y >= n)
        return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = tile[c];
        return;
    }
    out[i] = 0.5f * tile[c] + 0.125f * (tile[c - 1] + tile[c + 1] + tile[c - WORKLOAD_HALO_X] +
                                        tile[c + WORKLOAD_HALO_X]);
}

/* Each block's sum of its 256 values, by a tree in shared memory (blocks of 256). */
ACCEL_KERNEL(reduce_shared, (uint32_t, n), (const float *, x), (float *, partial))
{
    ACCEL_SHARED(float, s, 256);
    uint32_t t = threadIdx.x;
    uint64_t i = accel_global_idx_x();

    s[t] = i < n ? x[i] : 0.0f;
    accel_sync_threads();
    for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride)
            s[t] += s[t + stride];
        accel_sync_threads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}

/* Each block's inclusive prefix sums of its 256 values, Hillis-Steele (blocks of 256). */
ACCEL_KERNEL(scan_block, (uint32_t, n), (const float *, x), (float *, out))
{
    ACCEL_SHARED(float, buf, 2 * 256);
    uint32_t t = threadIdx.x, size = blockDim.x, in_half = 1, out_half = 0;
    uint64_t i = accel_global_idx_x();

    buf[t] = i < n ? x[i] : 0.0f;
    accel_sync_threads();
    for (uint32_t offset = 1; offset < size; offset *= 2) {
        out_half = 1 - out_half;
        in_half = 1 - out_half;
        buf[out_half * size + t] = t >= offset ? buf[in_half * size + t] +
                                                     buf[in_half * size + t - offset]
                                               : buf[in_half * size + t];
        accel_sync_threads();
    }
    if (i < n)
        out[i] = buf[out_half * size + t];
}
