/*
 * Kernels for the test suites, one source for every backend like the
 * examples: they pin down how a backend maps threads and blocks, passes
 * arguments and offers shared memory.
 */
#include <accel/kernel.h>

/*
 * For an nx x ny x nz volume covered by a 1D, 2D or 3D grid: every thread
 * inside it writes its linear index + 1 at that index and counts a hit
 * there, so that a test sees both where each thread went and that none
 * went twice.
 */
ACCEL_KERNEL(mark_index, (uint32_t *, index_plus_one), (uint32_t *, hits),
             (uint32_t, nx), (uint32_t, ny), (uint32_t, nz))
{
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint64_t z = accel_global_idx_z();
    uint64_t i;

    if (x >= nx || y >= ny || z >= nz)
        return;
    i = (z * ny + y) * nx + x;
    index_plus_one[i] = (uint32_t)(i + 1);
    accel_atomic_add_u32(&hits[i], 1);
}

/*
 * A 5-point stencil step over an nx x ny grid whose edge is copied, as
 * stencil_2d in kernels/workloads.cu, with weights that make each result an
 * exact integer: it pins down that the CPU form's rows of 32 threads (and
 * the first row, from thread 1, and widths not a multiple of 32) give
 * every cell at the grid's edges and inside it, for any grid and block.
 */
ACCEL_KERNEL(edge_stencil, (uint32_t, nx), (uint32_t, ny), (const float *, in),
             (float *, out))
{
    uint64_t x = accel_global_idx_x();
    uint64_t y = accel_global_idx_y();
    uint64_t i = y * nx + x;

    if (x >= nx || y >= ny)
        return;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 2.0f * in[i] + 3.0f * in[i - 1] + 5.0f * in[i + 1] +
             7.0f * in[i - nx] + 11.0f * in[i + nx];
}

/* data[i] += value for i < n: in-order streams make repeated launches add up. */
ACCEL_KERNEL(add_u32, (uint32_t, n), (uint32_t *, data), (uint32_t, value))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        data[i] += value;
}

/*
 * Arguments of every size and alignment, in an order that leaves gaps:
 * each is written back to out so that a test can compare.
 */
typedef struct {
    uint32_t v[5];
} accel_test_u32x5;

ACCEL_KERNEL(echo_args, (uint8_t, a), (uint64_t, b), (uint16_t, c), (double, d),
             (float, e), (accel_test_u32x5, f), (int8_t, g), (uint64_t *, out))
{
    if (accel_global_idx_x() != 0)
        return;
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = (uint64_t)d;
    out[4] = (uint64_t)e;
    out[5] = (uint64_t)f.v[0] + f.v[1] + f.v[2] + f.v[3] + f.v[4];
    out[6] = (uint64_t)(int64_t)g;
}

/* An argument larger than a launch keeps inline: out[0] = the sum of its words. */
typedef struct {
    uint32_t words[64];
} accel_test_u32x64;

ACCEL_KERNEL(big_arg, (accel_test_u32x64, blob), (uint64_t *, out))
{
    uint64_t sum = 0;

    if (accel_global_idx_x() != 0)
        return;
    for (int i = 0; i < 64; i++)
        sum += blob.words[i];
    out[0] = sum;
}

/* The most parameters ACCEL_KERNEL takes: out[0] = sum of p_i * (i + 1). */
ACCEL_KERNEL(sixteen_args, (uint64_t *, out), (uint32_t, p1), (uint32_t, p2),
             (uint32_t, p3), (uint32_t, p4), (uint32_t, p5), (uint32_t, p6),
             (uint32_t, p7), (uint32_t, p8), (uint32_t, p9), (uint32_t, p10),
             (uint32_t, p11), (uint32_t, p12), (uint32_t, p13), (uint32_t, p14),
             (uint32_t, p15))
{
    if (accel_global_idx_x() != 0)
        return;
    out[0] = (uint64_t)p1 * 1 + (uint64_t)p2 * 2 + (uint64_t)p3 * 3 + (uint64_t)p4 * 4 +
             (uint64_t)p5 * 5 + (uint64_t)p6 * 6 + (uint64_t)p7 * 7 + (uint64_t)p8 * 8 +
             (uint64_t)p9 * 9 + (uint64_t)p10 * 10 + (uint64_t)p11 * 11 +
             (uint64_t)p12 * 12 + (uint64_t)p13 * 13 + (uint64_t)p14 * 14 +
             (uint64_t)p15 * 15;
}

/*
 * Dynamic shared memory as per-thread scratch, the use that needs no
 * barrier: thread t fills words [t * words, (t + 1) * words) of the block's
 * buffer, reads them back and writes their sum for its element.
 */
ACCEL_KERNEL(shared_scratch, (uint32_t, n), (uint32_t, words), (uint32_t *, out))
{
    ACCEL_SHARED_DYNAMIC(uint32_t, scratch);
    uint32_t *mine = scratch + (uint64_t)threadIdx.x * words;
    uint64_t i = accel_global_idx_x();
    uint32_t sum = 0;

    for (uint32_t w = 0; w < words; w++)
        mine[w] = (uint32_t)i + w;
    for (uint32_t w = 0; w < words; w++)
        sum += mine[w];
    if (i < n)
        out[i] = sum;
}

/*
 * A pointer of each element type, one of bytes, and two values, for the
 * launch's typed checks: sum[0] = n + scale, the pointers untouched.
 */
ACCEL_KERNEL(typed_params, (float *, f32), (double *, f64), (int8_t *, i8), (int16_t *, i16),
             (int32_t *, i32), (int64_t *, i64), (uint8_t *, u8), (uint16_t *, u16),
             (uint32_t *, u32), (uint64_t *, u64), (void *, raw), (float, scale),
             (uint32_t, n), (double *, sum))
{
    if (accel_global_idx_x() == 0)
        sum[0] = n + (double)scale;
}

#if ACCEL_KERNEL_CPU && defined(__FLT16_MAX__)
/* The CPU form's 16-bit float, where the compiler has one: f16[0] = 1.5. */
ACCEL_KERNEL(typed_f16, (_Float16 *, f16))
{
    if (accel_global_idx_x() == 0)
        f16[0] = (_Float16)1.5f;
}
#endif
#if ACCEL_KERNEL_CPU && defined(__BFLT16_MAX__)
ACCEL_KERNEL(typed_bf16, (__bf16 *, bf16))
{
    if (accel_global_idx_x() == 0)
        bf16[0] = (__bf16)1.5f;
}
#endif

#if ACCEL_KERNEL_CPU
/*
 * Descriptors the CPU plugin must refuse: one from a future ABI, one
 * without a block runner. Written by hand, as only a broken tool would.
 */
static void accel_test_run_nothing(const struct accel_cpu_block *block, void *const *args)
{
    (void)block;
    (void)args;
}

__attribute__((visibility("default"))) const struct accel_cpu_kernel
    accel_cpu_kernel_future_abi = {.abi = ACCEL_CPU_KERNEL_ABI + 1,
                                   .run_block = accel_test_run_nothing};
__attribute__((visibility("default"))) const struct accel_cpu_kernel
    accel_cpu_kernel_no_runner = {.abi = ACCEL_CPU_KERNEL_ABI};
static void accel_test_run_thread_nothing(const struct accel_cpu_block *block,
                                          void *const *args, uint32_t thread)
{
    (void)block;
    (void)args;
    (void)thread;
}
/* Typed signatures the plugin must refuse: a kind it does not know, and
 * fewer names than parameters. */
__attribute__((visibility("default"))) const struct accel_cpu_kernel
    accel_cpu_kernel_bad_kind = {.abi = ACCEL_CPU_KERNEL_ABI, .param_count = 1,
                                 .param_sizes = {4}, .run_block = accel_test_run_nothing,
                                 .run_thread = accel_test_run_thread_nothing,
                                 .param_names = " n",
                                 .param_kinds = {7}, .param_types = {11}};
__attribute__((visibility("default"))) const struct accel_cpu_kernel
    accel_cpu_kernel_unnamed = {.abi = ACCEL_CPU_KERNEL_ABI, .param_count = 2,
                                .param_sizes = {4, 8}, .run_block = accel_test_run_nothing,
                                .run_thread = accel_test_run_thread_nothing,
                                .param_names = " n",
                                .param_kinds = {ACCEL_CPU_PARAM_VALUE, ACCEL_CPU_PARAM_POINTER},
                                .param_types = {11, 11}};
#endif
