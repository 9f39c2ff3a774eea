/*
 * Kernels that need a GPU block's semantics: barriers, static and dynamic
 * shared memory, warp operations and the atomics, written once for nvcc,
 * hipcc and cc (<accel/kernel.h>). tests/test-block-kernels.c checks each
 * on the CPU plugin against a plain C reference; the build compiles them
 * for CUDA (PTX) and AMD (gfx90a) as well, so that they stay portable.
 *
 * Warp code uses accel_warp_size(): 32 on NVIDIA and the CPU, 64 on AMD.
 */
#include <accel/kernel.h>

/* ---- tiled SGEMM: C = A B, n x n, 16 x 16 blocks, two barriers a tile ---- */

#define BLOCKS_TILE 16

ACCEL_KERNEL(block_sgemm, (uint32_t, n), (const float *ACCEL_RESTRICT, a),
             (const float *ACCEL_RESTRICT, b), (float *ACCEL_RESTRICT, c))
{
    ACCEL_SHARED(float, ta, BLOCKS_TILE * BLOCKS_TILE);
    ACCEL_SHARED(float, tb, BLOCKS_TILE * BLOCKS_TILE);
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint32_t row = blockIdx.y * BLOCKS_TILE + ty, col = blockIdx.x * BLOCKS_TILE + tx;
    float sum = 0.0f;

    for (uint32_t t = 0; t < n; t += BLOCKS_TILE) {
        ta[ty * BLOCKS_TILE + tx] = row < n && t + tx < n ? a[(uint64_t)row * n + t + tx] : 0.0f;
        tb[ty * BLOCKS_TILE + tx] = col < n && t + ty < n ? b[(uint64_t)(t + ty) * n + col] : 0.0f;
        accel_sync_threads();
        for (uint32_t k = 0; k < BLOCKS_TILE; k++)
            sum += ta[ty * BLOCKS_TILE + k] * tb[k * BLOCKS_TILE + tx];
        accel_sync_threads();
    }
    if (row < n && col < n)
        c[(uint64_t)row * n + col] = sum;
}

/* ---- reductions: one sum per block (blockDim.x a power of two, <= 1024) ---- */

ACCEL_KERNEL(block_reduce_shared, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, x),
             (uint32_t *ACCEL_RESTRICT, partial))
{
    ACCEL_SHARED(uint32_t, s, 1024);
    uint32_t t = threadIdx.x;
    uint64_t i = accel_global_idx_x();

    s[t] = i < n ? x[i] : 0;
    accel_sync_threads();
    for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride)
            s[t] += s[t + stride];
        accel_sync_threads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}

/* blockDim.x a multiple of the warp size. */
ACCEL_KERNEL(block_reduce_warp, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, x),
             (uint32_t *ACCEL_RESTRICT, partial))
{
    ACCEL_SHARED(uint32_t, warp_sums, 32);
    uint64_t i = accel_global_idx_x();
    uint32_t v = i < n ? x[i] : 0;
    uint32_t lane = accel_lane_id(), warp = accel_thread_rank() / accel_warp_size();

    for (uint32_t offset = accel_warp_size() / 2; offset > 0; offset /= 2)
        v += accel_shfl_down_sync(ACCEL_LANES_ALL, v, offset);
    if (lane == 0)
        warp_sums[warp] = v;
    accel_sync_threads();
    if (warp == 0) {
        v = lane < blockDim.x / accel_warp_size() ? warp_sums[lane] : 0;
        for (uint32_t offset = accel_warp_size() / 2; offset > 0; offset /= 2)
            v += accel_shfl_down_sync(ACCEL_LANES_ALL, v, offset);
        if (lane == 0)
            partial[blockIdx.x] = v;
    }
}

/* ---- block-wide inclusive scans, each block on its own segment ---- */

/* Hillis-Steele: log2(blockDim.x) steps over two buffers. */
ACCEL_KERNEL(block_scan_hillis_steele, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, x),
             (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(uint32_t, buf, 2 * 1024);
    uint32_t t = threadIdx.x, size = blockDim.x, in_half = 1, out_half = 0;
    uint64_t i = accel_global_idx_x();

    buf[t] = i < n ? x[i] : 0;
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

/* Blelloch: up-sweep and down-sweep over 2 * blockDim.x elements. */
ACCEL_KERNEL(block_scan_blelloch, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, x),
             (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(uint32_t, s, 2 * 1024);
    uint32_t t = threadIdx.x, m = 2 * blockDim.x, offset = 1;
    uint64_t base = (uint64_t)blockIdx.x * m;

    s[2 * t] = base + 2 * t < n ? x[base + 2 * t] : 0;
    s[2 * t + 1] = base + 2 * t + 1 < n ? x[base + 2 * t + 1] : 0;
    for (uint32_t d = m / 2; d > 0; d /= 2) {
        accel_sync_threads();
        if (t < d)
            s[offset * (2 * t + 2) - 1] += s[offset * (2 * t + 1) - 1];
        offset *= 2;
    }
    if (t == 0)
        s[m - 1] = 0;
    for (uint32_t d = 1; d < m; d *= 2) {
        offset /= 2;
        accel_sync_threads();
        if (t < d) {
            uint32_t ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            uint32_t held = s[ai];

            s[ai] = s[bi];
            s[bi] += held;
        }
    }
    accel_sync_threads();
    /* Exclusive so far; adding the element itself makes it inclusive. */
    for (uint32_t k = 2 * t; k < 2 * t + 2; k++) {
        if (base + k < n)
            out[base + k] = s[k] + x[base + k];
    }
}

/* ---- histogram of 256 bins: shared bins, shared then global atomics ---- */

ACCEL_KERNEL(block_histogram, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, data),
             (uint32_t *ACCEL_RESTRICT, bins))
{
    ACCEL_SHARED(uint32_t, local, 256);
    uint32_t t = accel_thread_rank();

    for (uint32_t b = t; b < 256; b += blockDim.x)
        local[b] = 0;
    accel_sync_threads();
    for (uint64_t i = accel_global_idx_x(); i < n; i += accel_global_size_x())
        accel_atomic_add_u32(&local[data[i] & 255u], 1);
    accel_sync_threads();
    for (uint32_t b = t; b < 256; b += blockDim.x) {
        if (local[b] != 0)
            accel_atomic_add_u32(&bins[b], local[b]);
    }
}

/* ---- transpose through a padded 32 x 33 tile, 32 x 8 blocks ---- */

#define BLOCKS_TT 32

ACCEL_KERNEL(block_transpose, (uint32_t, width), (uint32_t, height),
             (const float *ACCEL_RESTRICT, in), (float *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(float, tile, BLOCKS_TT * (BLOCKS_TT + 1));
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint32_t x = blockIdx.x * BLOCKS_TT + tx, y = blockIdx.y * BLOCKS_TT + ty;

    for (uint32_t j = 0; j < BLOCKS_TT; j += blockDim.y) {
        if (x < width && y + j < height)
            tile[(ty + j) * (BLOCKS_TT + 1) + tx] = in[(uint64_t)(y + j) * width + x];
    }
    accel_sync_threads();
    x = blockIdx.y * BLOCKS_TT + tx;
    y = blockIdx.x * BLOCKS_TT + ty;
    for (uint32_t j = 0; j < BLOCKS_TT; j += blockDim.y) {
        if (x < height && y + j < width)
            out[(uint64_t)(y + j) * height + x] = tile[tx * (BLOCKS_TT + 1) + ty + j];
    }
}

/* ---- 5-point stencil with its halo in shared memory, 16 x 16 blocks ---- */

#define BLOCKS_ST 16
#define BLOCKS_HALO (BLOCKS_ST + 2)

ACCEL_KERNEL(block_stencil, (uint32_t, width), (uint32_t, height),
             (const float *ACCEL_RESTRICT, in), (float *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(float, tile, BLOCKS_HALO * BLOCKS_HALO);
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    uint32_t gx = blockIdx.x * BLOCKS_ST + tx, gy = blockIdx.y * BLOCKS_ST + ty;

    for (uint32_t k = accel_thread_rank(); k < BLOCKS_HALO * BLOCKS_HALO;
         k += BLOCKS_ST * BLOCKS_ST) {
        int64_t sx = (int64_t)blockIdx.x * BLOCKS_ST + k % BLOCKS_HALO - 1;
        int64_t sy = (int64_t)blockIdx.y * BLOCKS_ST + k / BLOCKS_HALO - 1;

        tile[k] = sx >= 0 && sy >= 0 && sx < width && sy < height
                      ? in[(uint64_t)sy * width + (uint64_t)sx]
                      : 0.0f;
    }
    accel_sync_threads();
    if (gx < width && gy < height) {
        uint32_t c = (ty + 1) * BLOCKS_HALO + tx + 1;

        out[(uint64_t)gy * width + gx] =
            0.5f * tile[c] + 0.125f * (tile[c - 1] + tile[c + 1] + tile[c - BLOCKS_HALO] +
                                       tile[c + BLOCKS_HALO]);
    }
}

/*
 * ---- the same stencil as accel-bench's stencil_2d_tiled: 32 x 8 blocks,
 * no ACCEL_RESTRICT ----
 * Its halo loop is what clang vectorises for AVX-512 with vectors kept
 * across the shared array's __tls_get_addr (tools/cbs/tls.cpp).
 */

#define BLOCKS_WIDE_X 32
#define BLOCKS_WIDE_Y 8
#define BLOCKS_WIDE_HX (BLOCKS_WIDE_X + 2)
#define BLOCKS_WIDE_HY (BLOCKS_WIDE_Y + 2)

ACCEL_KERNEL(block_stencil_wide, (uint32_t, n), (const float *, in), (float *, out))
{
    ACCEL_SHARED(float, tile, BLOCKS_WIDE_HX * BLOCKS_WIDE_HY);
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint32_t c = (threadIdx.y + 1) * BLOCKS_WIDE_HX + threadIdx.x + 1;

    for (uint32_t k = threadIdx.y * BLOCKS_WIDE_X + threadIdx.x;
         k < BLOCKS_WIDE_HX * BLOCKS_WIDE_HY; k += BLOCKS_WIDE_X * BLOCKS_WIDE_Y) {
        int64_t sx = (int64_t)blockIdx.x * BLOCKS_WIDE_X + k % BLOCKS_WIDE_HX - 1;
        int64_t sy = (int64_t)blockIdx.y * BLOCKS_WIDE_Y + k / BLOCKS_WIDE_HX - 1;

        tile[k] = sx >= 0 && sy >= 0 && sx < n && sy < n ? in[sy * (int64_t)n + sx] : 0.0f;
    }
    accel_sync_threads();
    if (x >= n || y >= n)
        return;
    out[y * n + x] = 0.5f * tile[c] + 0.125f * (tile[c - 1] + tile[c + 1] +
                                                tile[c - BLOCKS_WIDE_HX] + tile[c + BLOCKS_WIDE_HX]);
}

/* ---- bitonic sort of each block's blockDim.x elements (a power of two) ---- */

ACCEL_KERNEL(block_bitonic_sort, (uint32_t *ACCEL_RESTRICT, data))
{
    ACCEL_SHARED(uint32_t, s, 1024);
    uint32_t t = threadIdx.x, size = blockDim.x;
    uint64_t base = (uint64_t)blockIdx.x * size;

    s[t] = data[base + t];
    accel_sync_threads();
    for (uint32_t k = 2; k <= size; k *= 2) {
        for (uint32_t j = k / 2; j > 0; j /= 2) {
            uint32_t partner = t ^ j;

            if (partner > t) {
                uint32_t lo = s[t], hi = s[partner];
                int ascending = (t & k) == 0;

                if ((lo > hi) == ascending) {
                    s[t] = hi;
                    s[partner] = lo;
                }
            }
            accel_sync_threads();
        }
    }
    data[base + t] = s[t];
}

/* ---- lock-free updates by compare-and-swap ---- */

/*
 * best = the largest (x[i] << 32 | i); sums[i % 16] += x[i]: both by CAS
 * loops, which every block runs against the others.
 */
ACCEL_KERNEL(block_cas_update, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, x),
             (uint64_t *, best), (int64_t *, sums))
{
    uint64_t i = accel_global_idx_x();
    uint64_t key, old;
    int64_t *sum, seen, want;

    if (i >= n)
        return;
    key = (uint64_t)x[i] << 32 | i;
    old = accel_atomic_or_u64(best, 0); /* an atomic read */
    while (key > old) {
        uint64_t got = accel_atomic_cas_u64(best, old, key);

        if (got == old)
            break;
        old = got;
    }
    sum = &sums[i % 16];
    seen = accel_atomic_or_i64(sum, 0);
    for (;;) {
        want = seen + (int64_t)x[i];
        int64_t got = accel_atomic_cas_i64(sum, seen, want);

        if (got == seen)
            break;
        seen = got;
    }
}

/* ---- stream compaction by ballot: keep multiples of 3, order unspecified ---- */

ACCEL_KERNEL(block_ballot_compact, (uint32_t, n), (const uint32_t *ACCEL_RESTRICT, in),
             (uint32_t *ACCEL_RESTRICT, out), (uint32_t *, count))
{
    uint64_t i = accel_global_idx_x();
    int keep = i < n && in[i] % 3 == 0;
    accel_lane_mask votes = accel_ballot_sync(ACCEL_LANES_ALL, keep);
    uint32_t lane = accel_lane_id();
    uint32_t before = accel_popcount64(votes & ((1ull << lane) - 1));
    uint32_t total = accel_popcount64(votes);
    uint32_t base = 0;

    if (lane == 0 && total != 0)
        base = accel_atomic_add_u32(count, total);
    base = accel_shfl_sync(ACCEL_LANES_ALL, base, 0);
    if (keep)
        out[base + before] = in[i];
}

/* ---- warp votes and shuffles, one result per thread ---- */

/*
 * out[5 * t ...]: idx (lane 3's value), up by 1, xor 1, any(lane is 5),
 * all(lane < warp size). Values are t * 7 + 1.
 */
ACCEL_KERNEL(block_warp_ops, (uint32_t *ACCEL_RESTRICT, out))
{
    uint32_t t = accel_thread_rank(), lane = accel_lane_id();
    uint64_t g = (uint64_t)blockIdx.x * blockDim.x + t;
    uint32_t v = (uint32_t)g * 7 + 1;
    double d = (double)v + 0.5;

    out[5 * g + 0] = accel_shfl_sync(ACCEL_LANES_ALL, v, 3);
    out[5 * g + 1] = accel_shfl_up_sync(ACCEL_LANES_ALL, v, 1);
    out[5 * g + 2] = (uint32_t)accel_shfl_xor_sync(ACCEL_LANES_ALL, d, 1);
    out[5 * g + 3] = (uint32_t)accel_any_sync(ACCEL_LANES_ALL, lane == 5);
    accel_warp_sync(ACCEL_LANES_ALL);
    out[5 * g + 4] = (uint32_t)accel_all_sync(ACCEL_LANES_ALL, lane < accel_warp_size());
}

/* ---- every atomic, on global memory and on shared ---- */

/*
 * Each thread, of rank r in the grid, applies every operation to slot k of
 * each type's array (see the test for the expected results).
 */
#define BLOCKS_ATOMIC_STEPS(sfx, T, p, r)                                      \
    do {                                                                       \
        T seen_;                                                               \
        accel_atomic_add_##sfx(&(p)[0], (T)(r));                               \
        accel_atomic_sub_##sfx(&(p)[1], (T)(r));                               \
        accel_atomic_min_##sfx(&(p)[2], (T)(r) + (T)1000);                     \
        accel_atomic_max_##sfx(&(p)[3], (T)(r));                               \
        accel_atomic_exch_##sfx(&(p)[4], (T)(r));                              \
        accel_atomic_and_##sfx(&(p)[5], ~((T)1 << ((r) % 31)));                \
        accel_atomic_or_##sfx(&(p)[6], (T)1 << ((r) % 31));                    \
        accel_atomic_xor_##sfx(&(p)[7], (T)(r));                               \
        seen_ = accel_atomic_or_##sfx(&(p)[8], (T)0);                          \
        while (accel_atomic_cas_##sfx(&(p)[8], seen_, seen_ + 1) != seen_)     \
            seen_ = accel_atomic_or_##sfx(&(p)[8], (T)0);                      \
    } while (0)

ACCEL_KERNEL(block_atomics, (int32_t *, gi), (uint32_t *, gu), (int64_t *, gl),
             (uint64_t *, gul), (float *, gf), (double *, gd), (uint64_t *, shared_out))
{
    ACCEL_SHARED(uint64_t, su, 9);
    uint32_t t = accel_thread_rank();
    uint32_t r = (uint32_t)(blockIdx.x * blockDim.x + t);

    BLOCKS_ATOMIC_STEPS(i32, int32_t, gi, r);
    BLOCKS_ATOMIC_STEPS(u32, uint32_t, gu, r);
    BLOCKS_ATOMIC_STEPS(i64, int64_t, gl, r);
    BLOCKS_ATOMIC_STEPS(u64, uint64_t, gul, r);
    accel_atomic_add_f32(gf, 0.5f);
    accel_atomic_add_f64(gd, 0.25);

    if (t == 0) {
        for (uint32_t k = 0; k < 9; k++)
            su[k] = k == 2 ? ~(uint64_t)0 : k == 5 ? ~(uint64_t)0 : 0;
    }
    accel_sync_threads();
    BLOCKS_ATOMIC_STEPS(u64, uint64_t, su, t);
    accel_sync_threads();
    if (t == 0) {
        for (uint32_t k = 0; k < 9; k++)
            shared_out[blockIdx.x * 9 + k] = su[k];
    }
}

/* ---- every block shape: threads trade values through shared memory ---- */

/* out[block * threads + r] = 2 r + block, or ~0 if the rank is wrong. */
ACCEL_KERNEL(block_shape, (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(uint32_t, s, 1024);
    uint32_t r = accel_thread_rank(), n = blockDim.x * blockDim.y * blockDim.z;
    uint32_t v;
    uint64_t block = blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    int rank_ok = r == threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);

    s[r] = r;
    accel_sync_threads();
    v = s[(r + 1) % n];
    accel_sync_threads();
    s[r] = 2 * v;
    accel_sync_threads();
    out[block * n + r] = rank_ok ? s[(r + n - 1) % n] + (uint32_t)block : ~0u;
}

/* Dynamic shared memory shared across a barrier: out[i] = in[reversed i]. */
ACCEL_KERNEL(block_reverse_dynamic, (const uint32_t *ACCEL_RESTRICT, in),
             (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED_DYNAMIC(uint32_t, s);
    uint32_t t = threadIdx.x, size = blockDim.x;
    uint64_t base = (uint64_t)blockIdx.x * size;

    s[t] = in[base + t];
    accel_sync_threads();
    out[base + t] = s[size - 1 - t];
}

/* ---- control flow the same in every thread, around barriers ---- */

/*
 * `rounds` (an argument) times, each thread takes the next thread's value
 * through shared memory and adds `step`: a loop whose bound, counter and
 * `step` are the same in every thread (the barrier pass keeps them once
 * per block and runs the loop around its loops over the threads).
 * out[block * n + r] = (r + rounds) % n + rounds * step.
 */
ACCEL_KERNEL(block_uniform_rounds, (uint32_t, rounds), (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(uint32_t, s, 1024);
    uint32_t r = accel_thread_rank(), n = blockDim.x * blockDim.y * blockDim.z;
    uint32_t step = 2 * n + 1, v = r;

    for (uint32_t round = 0; round < rounds; round++) {
        s[r] = v;
        accel_sync_threads();
        v = s[(r + 1) % n] + step;
        accel_sync_threads();
    }
    out[(uint64_t)blockIdx.x * n + r] = v;
}

/*
 * A barrier inside a branch the threads all take or all skip (every
 * other round): `x`, the same in every thread, is read after the branch
 * in the region that wrote it when the barrier is skipped.
 * out[r] = sum over rounds of (round * 7 + rounds) + the values passed.
 */
ACCEL_KERNEL(block_uniform_branch_barrier, (uint32_t, rounds), (uint32_t *ACCEL_RESTRICT, out))
{
    ACCEL_SHARED(uint32_t, s, 1024);
    uint32_t r = threadIdx.x, n = blockDim.x, acc = r;

    for (uint32_t round = 0; round < rounds; round++) {
        uint32_t x = round * 7 + rounds;

        if (round % 2 == 0) {
            s[r] = acc;
            accel_sync_threads();
            acc = s[(r + 1) % n];
            accel_sync_threads();
        }
        acc += x;
    }
    out[r] = acc;
}

/* ---- errors: barriers not every thread reaches ---- */

/* Thread 5 returns before the barrier the others wait at. */
ACCEL_KERNEL(block_diverge_return, (uint32_t *, out))
{
    if (threadIdx.x == 5)
        return;
    accel_sync_threads();
    out[threadIdx.x] = 1;
}

/* Only odd threads reach the barrier: thread 0 returns without it. */
ACCEL_KERNEL(block_diverge_branch, (uint32_t *, out))
{
    if (threadIdx.x % 2 == 1)
        accel_sync_threads();
    out[threadIdx.x] = 1;
}

/* Thread 0 waits at a second barrier that no other thread reaches. */
ACCEL_KERNEL(block_diverge_count, (uint32_t *, out))
{
    accel_sync_threads();
    if (threadIdx.x == 0)
        accel_sync_threads();
    out[threadIdx.x] = 1;
}

/*
 * Odd and even threads wait at two different barriers. The fibers let them
 * meet (every thread waits at a barrier); a kernel split by accel-cc's
 * barrier pass fails the launch, since the threads stopped at different
 * points of the kernel (different operations after the two barriers keep
 * clang from merging the two calls into one). On a GPU it is undefined.
 */
ACCEL_KERNEL(block_diverge_sites, (uint32_t *, out))
{
    if (threadIdx.x % 2 == 1) {
        out[threadIdx.x] = 1;
        accel_sync_threads();
        out[threadIdx.x] *= 11;
    } else {
        out[threadIdx.x] = 2;
        accel_sync_threads();
        out[threadIdx.x] += 20;
    }
}

/* A loop around a barrier whose bound differs per thread: thread t waits t % 3 + 1 times. */
ACCEL_KERNEL(block_diverge_loop, (uint32_t *, out))
{
    for (uint32_t i = 0; i < threadIdx.x % 3 + 1; i++)
        accel_sync_threads();
    out[threadIdx.x] = 1;
}

/* Half a warp shuffles with a mask that names the whole warp. */
ACCEL_KERNEL(block_diverge_warp, (uint32_t *, out))
{
    uint32_t v = threadIdx.x;

    if (accel_lane_id() < 16)
        v = accel_shfl_sync(ACCEL_LANES_ALL, v, 0);
    out[threadIdx.x] = v;
}

/* The same, but the other half of each warp waits at a barrier instead. */
ACCEL_KERNEL(block_diverge_warp_barrier, (uint32_t *, out))
{
    uint32_t v = threadIdx.x;

    if (accel_lane_id() < 16)
        v = accel_shfl_sync(ACCEL_LANES_ALL, v, 0);
    else
        accel_sync_threads();
    out[threadIdx.x] = v;
}

#if ACCEL_KERNEL_CPU
/* Recursion `depth` deep with a kilobyte a frame: overflows a fiber's stack. */
static uint32_t blocks_deep(uint32_t depth)
{
    volatile uint32_t pad[256];

    pad[depth % 256] = depth;
    if (depth == 0)
        return pad[0];
    return blocks_deep(depth - 1) + pad[depth % 256];
}

ACCEL_KERNEL(block_stack_overflow, (uint32_t, depth), (uint32_t *, out))
{
    accel_sync_threads();
    out[threadIdx.x] = blocks_deep(depth);
}
#endif

/* ---- what the machinery costs (tools/bench/block_bench.c) ---- */

/* `rounds` barriers per thread; out[rank] = the rounds seen. */
ACCEL_KERNEL(block_barriers, (uint32_t, rounds), (uint32_t *, out))
{
    uint32_t seen = 0;

    for (uint32_t r = 0; r < rounds; r++) {
        seen++;
        accel_sync_threads();
    }
    out[accel_thread_rank()] = seen;
}

/* `rounds` full-warp shuffles per thread. */
ACCEL_KERNEL(block_shuffles, (uint32_t, rounds), (uint32_t *, out))
{
    uint32_t v = accel_thread_rank();

    for (uint32_t r = 0; r < rounds; r++)
        v = accel_shfl_xor_sync(ACCEL_LANES_ALL, v, 1) + 1;
    out[accel_thread_rank()] = v;
}

/* The same loop with no barrier: the straight per-block loop. */
ACCEL_KERNEL(block_no_barriers, (uint32_t, rounds), (uint32_t *, out))
{
    uint32_t seen = 0;

    for (uint32_t r = 0; r < rounds; r++)
        seen++;
    out[accel_thread_rank()] = seen;
}
