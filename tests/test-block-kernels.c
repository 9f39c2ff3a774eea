/*
 * GPU block semantics on the null (CPU) plugin: kernels that need
 * barriers, static and dynamic shared memory, warp operations and the
 * atomics (kernels/blocks.cu, the same source nvcc and hipcc build) match
 * plain C references element by element, for every block shape and for
 * grids of one block and of 65,535; a barrier that not every thread of a
 * block reaches fails the launch with ACCEL_ERR_LAUNCH naming the kernel,
 * block and thread instead of hanging; a fiber stack overflow is reported;
 * ACCEL_NULL_STACK_KB sets the stack; and images built before barriers
 * (CPU kernel ABI 1) still run.
 *
 * Built twice: block-kernels loads meson's image (gcc or cc, every barrier
 * kernel on fibers), block-kernels-cbs the image accel-cc --cbs builds
 * through the barrier pass (BLOCKS_CBS), whose barrier kernels run as
 * loops over a block's threads; the same checks hold for both. Where the
 * pass is not built, block-kernels-cbs skips (BLOCKS_CBS_MISSING).
 */
#include "support.h"

#include <accel/kernel.h>
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 when BLOCKS_CPU_IMAGE was built through accel-cc's barrier pass. */
#ifndef BLOCKS_CBS
#define BLOCKS_CBS 0
#endif

struct blocks_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
};

/* ---- setup ---- */

static int teardown(void **state)
{
    struct blocks_case *c = *state;
    if (c == NULL)
        return 0;
    accel_module_unload(c->module);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    *state = NULL;
    support_clean_environment();
    return 0;
}

/* Open the null device with `name`=`value` set (both may be NULL), load `image`. */
static int open_case(void **state, const char *name, const char *value,
                     const char *image)
{
    struct blocks_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    *state = c;
    support_clean_environment();
    if (name != NULL)
        setenv(name, value, 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    if (accel_host_create(&options, &c->host) != ACCEL_OK ||
        accel_device_open(c->host, "null", 0, &c->device) != ACCEL_OK ||
        accel_stream_create(c->device, &c->stream) != ACCEL_OK ||
        accel_module_load_file(c->device, image, &c->module) != ACCEL_OK) {
        print_error("setup failed: %s\n", accel_last_error());
        teardown(state);
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    return open_case(state, NULL, NULL, BLOCKS_CPU_IMAGE);
}

/*
 * The pass's x86-64-v4 image alone, where the CPU runs AVX-512; else no
 * case, and the tests that take it skip.
 */
static int setup_v4(void **state)
{
    *state = NULL;
#if defined(BLOCKS_CBS_V4_IMAGE) && (defined(__x86_64__) || defined(__i386__))
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return open_case(state, NULL, NULL, BLOCKS_CBS_V4_IMAGE);
#endif
    return 0;
}

static int setup_one_thread(void **state)
{
    return open_case(state, "ACCEL_NULL_THREADS", "1", BLOCKS_CPU_IMAGE);
}

static int setup_big_stack(void **state)
{
    return open_case(state, "ACCEL_NULL_STACK_KB", "4096", BLOCKS_CPU_IMAGE);
}

static int setup_abi1(void **state)
{
    return open_case(state, NULL, NULL, ABI1_CPU_IMAGE);
}

/* ---- helpers ---- */

static accel_kernel *kernel_of(struct blocks_case *c, const char *name)
{
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(c->module, name, &kernel), ACCEL_OK);
    return kernel;
}

/* A device array of `count` elements holding `data` (zeros when NULL). */
static accel_ref upload(struct blocks_case *c, accel_elem_type type,
                        uint64_t count, const void *data)
{
    size_t bytes = count * accel_elem_size(type);
    void *zeros = NULL;
    accel_ref ref;

    if (data == NULL) {
        zeros = calloc(1, bytes);
        assert_non_null(zeros);
        data = zeros;
    }
    assert_status(accel_alloc(c->device, type, count, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, data, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    free(zeros);
    return ref;
}

static void download(struct blocks_case *c, void *dst, accel_ref ref)
{
    assert_status(accel_copy_to_host(c->stream, dst, ref, 0, accel_ref_bytes(ref)),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

/* Launch and wait; the status of the wait. */
static accel_status run(struct blocks_case *c, const char *name,
                        accel_dim3 grid, accel_dim3 block, uint32_t shared,
                        const accel_arg *args, uint32_t nargs)
{
    assert_status(accel_launch(c->stream, kernel_of(c, name), grid, block,
                               shared, args, nargs),
                  ACCEL_OK);
    return accel_stream_sync(c->stream);
}

static uint32_t blocks_for(uint64_t n, uint32_t block)
{
    return (uint32_t)((n + block - 1) / block);
}

static void *alloc_or_fail(size_t bytes)
{
    void *p = malloc(bytes);
    assert_non_null(p);
    return p;
}

static void assert_u32_equal(const uint32_t *actual, const uint32_t *expected,
                             uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (actual[i] != expected[i])
            fail_msg("element %llu is %u, expected %u", (unsigned long long)i,
                     actual[i], expected[i]);
    }
}

static void assert_f32_equal(const float *actual, const float *expected,
                             uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (actual[i] != expected[i])
            fail_msg("element %llu is %.9g, expected %.9g", (unsigned long long)i,
                     (double)actual[i], (double)expected[i]);
    }
}

/* Pseudo-random but fixed input. */
static uint32_t input_at(uint64_t i)
{
    uint64_t x = i * 0x9E3779B97F4A7C15ull + 12345;
    return (uint32_t)(x >> 40);
}

/* ---- tiled SGEMM ---- */

/* Small whole numbers, so that every sum is exact in any order. */
static void check_sgemm(struct blocks_case *c, uint32_t n)
{
    float *a = alloc_or_fail((size_t)n * n * sizeof *a);
    float *b = alloc_or_fail((size_t)n * n * sizeof *b);
    float *expected = alloc_or_fail((size_t)n * n * sizeof *b);
    float *result = alloc_or_fail((size_t)n * n * sizeof *b);

    for (uint64_t i = 0; i < (uint64_t)n * n; i++) {
        a[i] = (float)((int)(input_at(i) % 7) - 3);
        b[i] = (float)((int)(input_at(i + 7) % 5) - 2);
    }
    for (uint32_t row = 0; row < n; row++) {
        for (uint32_t col = 0; col < n; col++) {
            float sum = 0.0f;
            for (uint32_t k = 0; k < n; k++)
                sum += a[(size_t)row * n + k] * b[(size_t)k * n + col];
            expected[(size_t)row * n + col] = sum;
        }
    }
    accel_ref da = upload(c, ACCEL_F32, (uint64_t)n * n, a);
    accel_ref db = upload(c, ACCEL_F32, (uint64_t)n * n, b);
    accel_ref dc = upload(c, ACCEL_F32, (uint64_t)n * n, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(da),
                        ACCEL_ARG_REF(db), ACCEL_ARG_REF(dc)};
    assert_status(run(c, "block_sgemm",
                      (accel_dim3){blocks_for(n, 16), blocks_for(n, 16), 1},
                      (accel_dim3){16, 16, 1}, 0, args, 4),
                  ACCEL_OK);
    download(c, result, dc);
    assert_f32_equal(result, expected, (uint64_t)n * n);
    accel_free(c->device, da);
    accel_free(c->device, db);
    accel_free(c->device, dc);
    free(a);
    free(b);
    free(expected);
    free(result);
}

static void test_tiled_sgemm_matches_reference(void **state)
{
    check_sgemm(*state, 16);
    check_sgemm(*state, 67);
    check_sgemm(*state, 128);
}

/* ---- reductions ---- */

static void check_reduction(struct blocks_case *c, const char *kernel,
                            uint32_t n, uint32_t block)
{
    uint32_t blocks = blocks_for(n, block);
    uint32_t *x = alloc_or_fail(n * sizeof *x);
    uint32_t *expected = calloc(blocks, sizeof *expected);
    uint32_t *result = alloc_or_fail(blocks * sizeof *result);
    assert_non_null(expected);

    for (uint32_t i = 0; i < n; i++) {
        x[i] = input_at(i) % 1000;
        expected[i / block] += x[i];
    }
    accel_ref dx = upload(c, ACCEL_U32, n, x);
    accel_ref dp = upload(c, ACCEL_U32, blocks, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dp)};
    assert_status(run(c, kernel, (accel_dim3){blocks, 1, 1},
                      (accel_dim3){block, 1, 1}, 0, args, 3),
                  ACCEL_OK);
    download(c, result, dp);
    assert_u32_equal(result, expected, blocks);
    accel_free(c->device, dx);
    accel_free(c->device, dp);
    free(x);
    free(expected);
    free(result);
}

static void test_shared_tree_reduction_matches_reference(void **state)
{
    check_reduction(*state, "block_reduce_shared", 100003, 256);
    check_reduction(*state, "block_reduce_shared", 5000, 1024);
    check_reduction(*state, "block_reduce_shared", 7, 1);
}

static void test_warp_shuffle_reduction_matches_reference(void **state)
{
    check_reduction(*state, "block_reduce_warp", 100003, 256);
    check_reduction(*state, "block_reduce_warp", 5000, 1024);
    check_reduction(*state, "block_reduce_warp", 100, 32);
}

/* ---- scans ---- */

/* Inclusive sums restarting at each segment of `segment` elements. */
static void check_scan(struct blocks_case *c, const char *kernel, uint32_t n,
                       uint32_t block, uint32_t segment)
{
    uint32_t *x = alloc_or_fail(n * sizeof *x);
    uint32_t *expected = alloc_or_fail(n * sizeof *x);
    uint32_t *result = alloc_or_fail(n * sizeof *x);
    uint32_t sum = 0;

    for (uint32_t i = 0; i < n; i++) {
        x[i] = input_at(i) % 100;
        sum = (i % segment == 0 ? 0 : sum) + x[i];
        expected[i] = sum;
    }
    accel_ref dx = upload(c, ACCEL_U32, n, x);
    accel_ref dout = upload(c, ACCEL_U32, n, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dout)};
    assert_status(run(c, kernel, (accel_dim3){blocks_for(n, segment), 1, 1},
                      (accel_dim3){block, 1, 1}, 0, args, 3),
                  ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, n);
    accel_free(c->device, dx);
    accel_free(c->device, dout);
    free(x);
    free(expected);
    free(result);
}

static void test_hillis_steele_scan_matches_reference(void **state)
{
    check_scan(*state, "block_scan_hillis_steele", 10007, 256, 256);
    check_scan(*state, "block_scan_hillis_steele", 3000, 1024, 1024);
}

static void test_blelloch_scan_matches_reference(void **state)
{
    check_scan(*state, "block_scan_blelloch", 10007, 256, 512);
    check_scan(*state, "block_scan_blelloch", 5000, 1024, 2048);
}

/* ---- histogram ---- */

static void test_histogram_with_shared_bins_matches_reference(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 200003;
    uint32_t *data = alloc_or_fail(n * sizeof *data);
    uint32_t expected[256] = {0}, result[256];

    for (uint32_t i = 0; i < n; i++) {
        data[i] = input_at(i) % 300; /* the low byte is the bin */
        expected[data[i] & 255u]++;
    }
    accel_ref dd = upload(c, ACCEL_U32, n, data);
    accel_ref db = upload(c, ACCEL_U32, 256, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dd), ACCEL_ARG_REF(db)};
    assert_status(run(c, "block_histogram", (accel_dim3){37, 1, 1},
                      (accel_dim3){128, 1, 1}, 0, args, 3),
                  ACCEL_OK);
    download(c, result, db);
    assert_u32_equal(result, expected, 256);
    accel_free(c->device, dd);
    accel_free(c->device, db);
    free(data);
}

/* ---- transpose and stencil ---- */

static void test_padded_tile_transpose_matches_reference(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t width = 100, height = 70;
    float in[100 * 70], expected[100 * 70], result[100 * 70];

    for (uint32_t i = 0; i < width * height; i++)
        in[i] = (float)i;
    for (uint32_t y = 0; y < height; y++)
        for (uint32_t x = 0; x < width; x++)
            expected[x * height + y] = in[y * width + x];
    accel_ref din = upload(c, ACCEL_F32, width * height, in);
    accel_ref dout = upload(c, ACCEL_F32, width * height, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(width), ACCEL_ARG_VALUE(height),
                        ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};
    assert_status(
        run(c, "block_transpose",
            (accel_dim3){blocks_for(width, 32), blocks_for(height, 32), 1},
            (accel_dim3){32, 8, 1}, 0, args, 4),
        ACCEL_OK);
    download(c, result, dout);
    assert_f32_equal(result, expected, width * height);
    accel_free(c->device, din);
    accel_free(c->device, dout);
}

static float stencil_at(const float *in, int64_t x, int64_t y, int64_t w,
                        int64_t h)
{
    return x >= 0 && y >= 0 && x < w && y < h ? in[y * w + x] : 0.0f;
}

static void test_stencil_with_shared_halo_matches_reference(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t width = 77, height = 45;
    float in[77 * 45], expected[77 * 45], result[77 * 45];

    for (uint32_t i = 0; i < width * height; i++)
        in[i] = (float)(input_at(i) % 64);
    for (int64_t y = 0; y < height; y++)
        for (int64_t x = 0; x < width; x++)
            expected[y * width + x] =
                0.5f * stencil_at(in, x, y, width, height) +
                0.125f * (stencil_at(in, x - 1, y, width, height) +
                          stencil_at(in, x + 1, y, width, height) +
                          stencil_at(in, x, y - 1, width, height) +
                          stencil_at(in, x, y + 1, width, height));
    accel_ref din = upload(c, ACCEL_F32, width * height, in);
    accel_ref dout = upload(c, ACCEL_F32, width * height, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(width), ACCEL_ARG_VALUE(height),
                        ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};
    assert_status(
        run(c, "block_stencil",
            (accel_dim3){blocks_for(width, 16), blocks_for(height, 16), 1},
            (accel_dim3){16, 16, 1}, 0, args, 4),
        ACCEL_OK);
    download(c, result, dout);
    assert_f32_equal(result, expected, width * height);
    accel_free(c->device, din);
    accel_free(c->device, dout);
}

/*
 * stencil_2d_tiled's shape (32 x 8 blocks, no restrict) with malloc's
 * perturbation on, as meson's MALLOC_PERTURB_ sets it: the first access to
 * a shared array from a host thread takes __tls_get_addr's slow path,
 * whose malloc fills memory with glibc's EVEX memset (ymm16 and up). With
 * the pass's image vectorised for AVX-512 and the address not taken through
 * an ordinary call (tools/cbs/tls.cpp), clang 14 kept vectors there across
 * that call and the halo gather faulted. On a CPU without AVX-512 this
 * checks only the results.
 */
static void test_wide_stencil_survives_malloc_perturbation(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 300;

    if (c == NULL) {
        print_message("no x86-64-v4 image of the pass, or no AVX-512 here\n");
        skip();
    }
    float *in = alloc_or_fail(sizeof(float) * n * n);
    float *expected = alloc_or_fail(sizeof(float) * n * n);
    float *result = alloc_or_fail(sizeof(float) * n * n);

    for (uint32_t i = 0; i < n * n; i++)
        in[i] = (float)(input_at(i) % 64);
    for (int64_t y = 0; y < n; y++)
        for (int64_t x = 0; x < n; x++)
            expected[y * n + x] = 0.5f * stencil_at(in, x, y, n, n) +
                                  0.125f * (stencil_at(in, x - 1, y, n, n) +
                                            stencil_at(in, x + 1, y, n, n) +
                                            stencil_at(in, x, y - 1, n, n) +
                                            stencil_at(in, x, y + 1, n, n));
    accel_ref din = upload(c, ACCEL_F32, (uint64_t)n * n, in);
    accel_ref dout = upload(c, ACCEL_F32, (uint64_t)n * n, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(din),
                        ACCEL_ARG_REF(dout)};
    const char *perturb = getenv("MALLOC_PERTURB_");
    mallopt(M_PERTURB, 165);
    accel_status status = run(c, "block_stencil_wide",
                              (accel_dim3){blocks_for(n, 32), blocks_for(n, 8), 1},
                              (accel_dim3){32, 8, 1}, 0, args, 3);
    mallopt(M_PERTURB, perturb != NULL ? atoi(perturb) : 0);
    assert_status(status, ACCEL_OK);
    download(c, result, dout);
    assert_f32_equal(result, expected, (uint64_t)n * n);
    accel_free(c->device, din);
    accel_free(c->device, dout);
    free(in);
    free(expected);
    free(result);
}

/* The same on the pass's AVX-512 image, where the fault was. */
static void test_wide_stencil_v4_survives_malloc_perturbation(void **state)
{
    test_wide_stencil_survives_malloc_perturbation(state);
}

/* ---- bitonic sort ---- */

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void check_bitonic(struct blocks_case *c, uint32_t block, uint32_t blocks)
{
    uint32_t n = block * blocks;
    uint32_t *data = alloc_or_fail(n * sizeof *data);
    uint32_t *result = alloc_or_fail(n * sizeof *data);

    for (uint32_t i = 0; i < n; i++)
        data[i] = input_at(i) % 5000;
    accel_ref dd = upload(c, ACCEL_U32, n, data);
    accel_arg args[] = {ACCEL_ARG_REF(dd)};
    assert_status(run(c, "block_bitonic_sort", (accel_dim3){blocks, 1, 1},
                      (accel_dim3){block, 1, 1}, 0, args, 1),
                  ACCEL_OK);
    download(c, result, dd);
    for (uint32_t b = 0; b < blocks; b++)
        qsort(data + (size_t)b * block, block, sizeof *data, compare_u32);
    assert_u32_equal(result, data, n);
    accel_free(c->device, dd);
    free(data);
    free(result);
}

static void test_bitonic_sort_sorts_each_block(void **state)
{
    check_bitonic(*state, 1024, 3);
    check_bitonic(*state, 256, 9);
    check_bitonic(*state, 2, 5);
}

/* ---- compare-and-swap updates ---- */

static void test_cas_lock_free_updates_match_reference(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 50021;
    uint32_t *x = alloc_or_fail(n * sizeof *x);
    uint64_t best = 0, expected_best = 0;
    int64_t sums[16], expected_sums[16] = {0};

    for (uint32_t i = 0; i < n; i++) {
        x[i] = input_at(i) % 100000;
        uint64_t key = (uint64_t)x[i] << 32 | i;
        expected_best = key > expected_best ? key : expected_best;
        expected_sums[i % 16] += x[i];
    }
    accel_ref dx = upload(c, ACCEL_U32, n, x);
    accel_ref dbest = upload(c, ACCEL_U64, 1, NULL);
    accel_ref dsums = upload(c, ACCEL_I64, 16, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dbest), ACCEL_ARG_REF(dsums)};
    assert_status(run(c, "block_cas_update",
                      (accel_dim3){blocks_for(n, 128), 1, 1},
                      (accel_dim3){128, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    download(c, &best, dbest);
    download(c, sums, dsums);
    assert_int_equal(best, expected_best);
    for (int k = 0; k < 16; k++)
        assert_int_equal(sums[k], expected_sums[k]);
    accel_free(c->device, dx);
    accel_free(c->device, dbest);
    accel_free(c->device, dsums);
    free(x);
}

/* ---- warp operations ---- */

static void test_ballot_compaction_keeps_exactly_the_multiples_of_three(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 30011;
    uint32_t *in = alloc_or_fail(n * sizeof *in);
    uint32_t *expected = alloc_or_fail(n * sizeof *in);
    uint32_t *result = alloc_or_fail(n * sizeof *in);
    uint32_t kept = 0, count = 0;

    for (uint32_t i = 0; i < n; i++) {
        in[i] = input_at(i);
        if (in[i] % 3 == 0)
            expected[kept++] = in[i];
    }
    accel_ref din = upload(c, ACCEL_U32, n, in);
    accel_ref dout = upload(c, ACCEL_U32, n, NULL);
    accel_ref dcount = upload(c, ACCEL_U32, 1, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(din),
                        ACCEL_ARG_REF(dout), ACCEL_ARG_REF(dcount)};
    assert_status(run(c, "block_ballot_compact",
                      (accel_dim3){blocks_for(n, 256), 1, 1},
                      (accel_dim3){256, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    download(c, &count, dcount);
    download(c, result, dout);
    assert_int_equal(count, kept);
    /* Warps reserve their places in any order: compare as sorted sets. */
    qsort(result, kept, sizeof *result, compare_u32);
    qsort(expected, kept, sizeof *expected, compare_u32);
    assert_u32_equal(result, expected, kept);
    accel_free(c->device, din);
    accel_free(c->device, dout);
    accel_free(c->device, dcount);
    free(in);
    free(expected);
    free(result);
}

/* CUDA's results for block_warp_ops, in warps of 32 of `block` threads. */
static void check_warp_ops(struct blocks_case *c, uint32_t block, uint32_t blocks)
{
    uint32_t n = block * blocks;
    uint32_t *expected = alloc_or_fail(5 * n * sizeof *expected);
    uint32_t *result = alloc_or_fail(5 * n * sizeof *expected);

    for (uint32_t g = 0; g < n; g++) {
        uint32_t t = g % block, lane = t % 32, warp0 = g - lane;
        uint32_t lanes = block - (t - lane) < 32 ? block - (t - lane) : 32;
        uint32_t v = g * 7 + 1;

        expected[5 * g + 0] = 3 < lanes ? (warp0 + 3) * 7 + 1 : v;
        expected[5 * g + 1] = lane >= 1 ? v - 7 : v;
        expected[5 * g + 2] = (lane ^ 1) < lanes ? (warp0 + (lane ^ 1)) * 7 + 1
                                                 : v;
        expected[5 * g + 3] = 5 < lanes;
        expected[5 * g + 4] = 1;
    }
    accel_ref dout = upload(c, ACCEL_U32, 5 * n, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(dout)};
    assert_status(run(c, "block_warp_ops", (accel_dim3){blocks, 1, 1},
                      (accel_dim3){block, 1, 1}, 0, args, 1),
                  ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, 5 * n);
    accel_free(c->device, dout);
    free(expected);
    free(result);
}

static void test_warp_shuffles_and_votes_match_cuda(void **state)
{
    check_warp_ops(*state, 64, 3);
    check_warp_ops(*state, 1024, 2);
    /* A last warp of 20 lanes, and a block of one warp of 3. */
    check_warp_ops(*state, 52, 2);
    check_warp_ops(*state, 3, 4);
    /* Blocks of one thread run without fibers (null_block.c). */
    check_warp_ops(*state, 1, 5);
}

/* ---- atomics ---- */

/* What BLOCKS_ATOMIC_STEPS leaves for ranks 0 .. n-1, as 64-bit patterns. */
static void atomic_expected(uint64_t n, uint64_t out[9])
{
    uint64_t sum = 0, or_bits = 0, xor_bits = 0;

    for (uint64_t r = 0; r < n; r++) {
        sum += r;
        or_bits |= 1ull << (r % 31);
        xor_bits ^= r;
    }
    out[0] = sum;
    out[1] = 0 - sum;
    out[2] = 1000;
    out[3] = n - 1;
    out[4] = 0; /* any rank: checked apart */
    out[5] = ~or_bits;
    out[6] = or_bits;
    out[7] = xor_bits;
    out[8] = n;
}

static void test_every_atomic_matches_reference(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t blocks = 40, block = 128, n = blocks * block;
    int32_t gi[9] = {0, 0, INT32_MAX, -1, 0, -1, 0, 0, 0};
    uint32_t gu[9] = {0, 0, UINT32_MAX, 0, 0, UINT32_MAX, 0, 0, 0};
    int64_t gl[9] = {0, 0, INT64_MAX, -1, 0, -1, 0, 0, 0};
    uint64_t gul[9] = {0, 0, UINT64_MAX, 0, 0, UINT64_MAX, 0, 0, 0};
    float gf = 0;
    double gd = 0;
    uint64_t *shared = alloc_or_fail(blocks * 9 * sizeof *shared);
    uint64_t want[9], want_shared[9];

    accel_ref dgi = upload(c, ACCEL_I32, 9, gi),
              dgu = upload(c, ACCEL_U32, 9, gu);
    accel_ref dgl = upload(c, ACCEL_I64, 9, gl),
              dgul = upload(c, ACCEL_U64, 9, gul);
    accel_ref dgf = upload(c, ACCEL_F32, 1, NULL),
              dgd = upload(c, ACCEL_F64, 1, NULL);
    accel_ref dsh = upload(c, ACCEL_U64, blocks * 9, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(dgi), ACCEL_ARG_REF(dgu),
                        ACCEL_ARG_REF(dgl), ACCEL_ARG_REF(dgul),
                        ACCEL_ARG_REF(dgf), ACCEL_ARG_REF(dgd),
                        ACCEL_ARG_REF(dsh)};
    assert_status(run(c, "block_atomics", (accel_dim3){blocks, 1, 1},
                      (accel_dim3){block, 1, 1}, 0, args, 7),
                  ACCEL_OK);
    download(c, gi, dgi);
    download(c, gu, dgu);
    download(c, gl, dgl);
    download(c, gul, dgul);
    download(c, &gf, dgf);
    download(c, &gd, dgd);
    download(c, shared, dsh);

    atomic_expected(n, want);
    for (int k = 0; k < 9; k++) {
        if (k == 4) {
            assert_in_range(gi[4], 0, n - 1);
            assert_in_range(gu[4], 0, n - 1);
            assert_in_range(gl[4], 0, n - 1);
            assert_in_range(gul[4], 0, n - 1);
            continue;
        }
        assert_int_equal(gi[k], (int32_t)(uint32_t)want[k]);
        assert_int_equal(gu[k], (uint32_t)want[k]);
        assert_int_equal(gl[k], (int64_t)want[k]);
        assert_int_equal(gul[k], want[k]);
    }
    assert_true(gf == 0.5f * n);
    assert_true(gd == 0.25 * n);

    atomic_expected(block, want_shared);
    for (uint32_t b = 0; b < blocks; b++) {
        for (int k = 0; k < 9; k++) {
            if (k == 4)
                assert_in_range(shared[b * 9 + 4], 0, block - 1);
            else
                assert_int_equal(shared[b * 9 + k], want_shared[k]);
        }
    }
    accel_free(c->device, dgi);
    accel_free(c->device, dgu);
    accel_free(c->device, dgl);
    accel_free(c->device, dgul);
    accel_free(c->device, dgf);
    accel_free(c->device, dgd);
    accel_free(c->device, dsh);
    free(shared);
}

/* ---- shared memory, shapes, grids ---- */

static void test_dynamic_shared_memory_is_shared_across_a_barrier(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t block = 512, blocks = 6, n = block * blocks;
    uint32_t *in = alloc_or_fail(n * sizeof *in);
    uint32_t *expected = alloc_or_fail(n * sizeof *in);
    uint32_t *result = alloc_or_fail(n * sizeof *in);

    for (uint32_t i = 0; i < n; i++)
        in[i] = input_at(i);
    for (uint32_t i = 0; i < n; i++)
        expected[i] = in[i - i % block + (block - 1 - i % block)];
    accel_ref din = upload(c, ACCEL_U32, n, in);
    accel_ref dout = upload(c, ACCEL_U32, n, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};
    assert_status(run(c, "block_reverse_dynamic", (accel_dim3){blocks, 1, 1},
                      (accel_dim3){block, 1, 1}, block * sizeof(uint32_t), args,
                      2),
                  ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, n);
    accel_free(c->device, din);
    accel_free(c->device, dout);
    free(in);
    free(expected);
    free(result);
}

static void check_shape(struct blocks_case *c, accel_dim3 grid, accel_dim3 block)
{
    uint32_t threads = block.x * block.y * block.z;
    uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z, n = blocks * threads;
    uint32_t *expected = alloc_or_fail(n * sizeof *expected);
    uint32_t *result = alloc_or_fail(n * sizeof *expected);

    for (uint64_t i = 0; i < n; i++)
        expected[i] = 2 * (uint32_t)(i % threads) + (uint32_t)(i / threads);
    accel_ref dout = upload(c, ACCEL_U32, n, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(dout)};
    assert_status(run(c, "block_shape", grid, block, 0, args, 1), ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, n);
    accel_free(c->device, dout);
    free(expected);
    free(result);
}

static void test_every_block_shape_runs_barriers(void **state)
{
    static const accel_dim3 shapes[] = {
        {1, 1, 1},   {2, 1, 1},    {31, 1, 1},   {32, 1, 1},
        {33, 1, 1},  {1, 7, 1},    {1, 1, 9},    {3, 5, 7},
        {64, 1, 1},  {10, 10, 10}, {1024, 1, 1}, {1, 1024, 1},
        {32, 32, 1}, {16, 1, 64},  {8, 8, 16},   {2, 8, 64},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        check_shape(*state, (accel_dim3){3, 2, 2}, shapes[i]);
}

static void test_grids_of_one_block_and_of_65535_run_barriers(void **state)
{
    check_shape(*state, (accel_dim3){1, 1, 1}, (accel_dim3){256, 1, 1});
    check_shape(*state, (accel_dim3){65535, 1, 1}, (accel_dim3){32, 1, 1});
    check_shape(*state, (accel_dim3){1, 65535, 1}, (accel_dim3){4, 2, 1});
}

/* ---- control flow the same in every thread, around barriers ---- */

/* block_uniform_rounds with `rounds` on `grid` blocks of `block`. */
static void check_uniform_rounds(struct blocks_case *c, uint32_t rounds,
                                 uint32_t grid, accel_dim3 block)
{
    uint32_t n = block.x * block.y * block.z;
    uint64_t count = (uint64_t)grid * n;
    uint32_t *expected = alloc_or_fail(count * sizeof *expected);
    uint32_t *result = alloc_or_fail(count * sizeof *result);
    accel_ref dout = upload(c, ACCEL_U32, count, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(rounds), ACCEL_ARG_REF(dout)};

    for (uint64_t i = 0; i < count; i++)
        expected[i] = ((uint32_t)(i % n) + rounds) % n + rounds * (2 * n + 1);
    assert_status(run(c, "block_uniform_rounds", (accel_dim3){grid, 1, 1},
                      block, 0, args, 2),
                  ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, count);
    accel_free(c->device, dout);
    free(expected);
    free(result);
}

/* A loop with barriers whose bound is an argument, of 0 to 9 trips. */
static void test_loop_bound_from_an_argument_runs_barriers(void **state)
{
    check_uniform_rounds(*state, 5, 3, (accel_dim3){64, 1, 1});
    check_uniform_rounds(*state, 0, 2, (accel_dim3){32, 1, 1});
    check_uniform_rounds(*state, 1, 1, (accel_dim3){1, 1, 1});
    check_uniform_rounds(*state, 9, 4, (accel_dim3){8, 4, 2});
    check_uniform_rounds(*state, 3, 2, (accel_dim3){1024, 1, 1});
}

/* A barrier in a branch every thread takes or skips, inside a loop. */
static void test_uniform_branch_around_a_barrier_runs(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 64, rounds = 7, even = (rounds + 1) / 2;
    uint32_t expected[64], result[64];
    accel_ref dout = upload(c, ACCEL_U32, n, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(rounds), ACCEL_ARG_REF(dout)};

    for (uint32_t r = 0; r < n; r++)
        expected[r] = (r + even) % n + 7 * rounds * (rounds - 1) / 2 +
                      rounds * rounds;
    assert_status(run(c, "block_uniform_branch_barrier", (accel_dim3){1, 1, 1},
                      (accel_dim3){n, 1, 1}, 0, args, 2),
                  ACCEL_OK);
    download(c, result, dout);
    assert_u32_equal(result, expected, n);
    accel_free(c->device, dout);
}

/* ---- barriers not every thread reaches ---- */

/* Launch `kernel` on one block of 64 threads; it must fail, naming where. */
static void check_divergence(struct blocks_case *c, const char *kernel,
                             const char *thread, const char *what)
{
    accel_ref dout = upload(c, ACCEL_U32, 64, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(dout)};

    assert_status(run(c, kernel, (accel_dim3){2, 1, 1}, (accel_dim3){64, 1, 1},
                      0, args, 1),
                  ACCEL_ERR_LAUNCH);
    assert_contains(accel_last_error(), kernel);
    assert_contains(accel_last_error(), "block (");
    assert_contains(accel_last_error(), thread);
    assert_contains(accel_last_error(), what);
    /* The stream keeps its error, as a GPU's does; the device goes on. */
    accel_stream_destroy(c->stream);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    accel_free(c->device, dout);
    check_shape(c, (accel_dim3){2, 1, 1}, (accel_dim3){64, 1, 1});
}

static void test_thread_returning_before_a_barrier_fails_the_launch(void **state)
{
    check_divergence(
        *state, "block_diverge_return",
        "thread (0,0,0): waits at "
        "accel_sync_threads() that thread (5,0,0) never reaches (it returned)",
        "not every thread reaches the barrier");
}

static void test_barrier_in_divergent_code_fails_the_launch(void **state)
{
    check_divergence(*state, "block_diverge_branch", "thread (1,0,0)",
                     "which thread (0,0,0) returned without reaching");
}

static void test_extra_barrier_in_one_thread_fails_the_launch(void **state)
{
    check_divergence(
        *state, "block_diverge_count",
        "thread (0,0,0): waits at "
        "accel_sync_threads() that thread (1,0,0) never reaches (it returned)",
        "not every thread reaches the barrier");
}

static void test_loop_bound_from_the_thread_index_fails_the_launch(void **state)
{
    check_divergence(*state, "block_diverge_loop", "thread (1,0,0)",
                     "thread (0,0,0)");
}

/*
 * A warp operation waits for the lanes of its mask that have not
 * returned, as CUDA's _sync forms take "all non-exited threads named in
 * mask": half of each warp shuffles from lane 0 while the other half
 * returns.
 */
static void test_warp_operation_leaves_out_returned_lanes(void **state)
{
    struct blocks_case *c = *state;
    accel_ref dout = upload(c, ACCEL_U32, 128, NULL);
    accel_arg args[] = {ACCEL_ARG_REF(dout)};
    uint32_t out[128];

    assert_status(run(c, "block_diverge_warp", (accel_dim3){2, 1, 1},
                      (accel_dim3){64, 1, 1}, 0, args, 1),
                  ACCEL_OK);
    download(c, out, dout);
    for (uint32_t t = 0; t < 64; t++)
        assert_int_equal(out[t], t % 32 < 16 ? t - t % 32 : t);
    accel_free(c->device, dout);
}

/* A lane that waits at a barrier still holds the warp operation: an error. */
static void test_warp_operation_missing_lanes_fails_the_launch(void **state)
{
    check_divergence(*state, "block_diverge_warp_barrier",
                     "thread (0,0,0): waits at a warp operation that thread "
                     "(16,0,0) never reaches (it waits at "
                     "accel_sync_threads())",
                     "block_diverge_warp_barrier");
}

/*
 * Threads at two different barrier calls: on fibers they meet (each waits
 * at a barrier); split by the pass, the launch fails, naming both.
 */
static void test_barriers_at_two_call_sites_meet_only_on_fibers(void **state)
{
    struct blocks_case *c = *state;

    if (!BLOCKS_CBS) {
        accel_ref dout = upload(c, ACCEL_U32, 64, NULL);
        accel_arg args[] = {ACCEL_ARG_REF(dout)};
        uint32_t out[64];

        assert_status(run(c, "block_diverge_sites", (accel_dim3){1, 1, 1},
                          (accel_dim3){64, 1, 1}, 0, args, 1),
                      ACCEL_OK);
        download(c, out, dout);
        for (uint32_t t = 0; t < 64; t++)
            assert_int_equal(out[t], t % 2 == 1 ? 11 : 22);
        accel_free(c->device, dout);
        return;
    }
    check_divergence(
        c, "block_diverge_sites",
        "thread (0,0,0): waits at "
        "accel_sync_threads() that thread (1,0,0) never reaches (it waits at "
        "barrier",
        "block_diverge_sites");
}

static void test_divergence_fails_with_one_host_thread_too(void **state)
{
    check_divergence(*state, "block_diverge_return", "thread (5,0,0)",
                     "returned");
}

/* ---- which kernels the barrier pass splits ---- */

static void check_run_regions(void *image, const char *name, bool split)
{
    char symbol[128];
    const struct accel_cpu_kernel *kernel;

    snprintf(symbol, sizeof symbol, ACCEL_CPU_KERNEL_PREFIX "%s", name);
    kernel = dlsym(image, symbol);
    assert_non_null(kernel);
    assert_int_equal(kernel->abi, ACCEL_CPU_KERNEL_ABI);
    if (split != (kernel->run_regions != NULL))
        fail_msg("%s: run_regions is %s", name, split ? "NULL" : "set");
}

/*
 * Through the pass, every kernel with barriers and no warp operation runs
 * as loops between its barriers; those with warp operations, with a call
 * stack (block_stack_overflow) or without barriers keep the fiber path.
 * Without it, none has run_regions.
 */
static void test_only_the_pass_splits_barrier_kernels(void **state)
{
    static const char *const split[] = {
        "block_sgemm",
        "block_reduce_shared",
        "block_scan_hillis_steele",
        "block_scan_blelloch",
        "block_histogram",
        "block_transpose",
        "block_stencil",
        "block_stencil_wide",
        "block_bitonic_sort",
        "block_atomics",
        "block_shape",
        "block_reverse_dynamic",
        "block_diverge_return",
        "block_diverge_branch",
        "block_diverge_count",
        "block_diverge_sites",
        "block_diverge_loop",
        "block_barriers",
        "block_uniform_rounds",
        "block_uniform_branch_barrier",
    };
    static const char *const fibers[] = {
        "block_reduce_warp",  "block_ballot_compact", "block_warp_ops",
        "block_diverge_warp", "block_stack_overflow", "block_shuffles",
        "block_cas_update",   "block_no_barriers",
    };
    void *image = dlopen(BLOCKS_CPU_IMAGE, RTLD_NOW | RTLD_LOCAL);

    (void)state;
    assert_non_null(image);
    for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
        check_run_regions(image, split[i], BLOCKS_CBS);
    for (size_t i = 0; i < sizeof fibers / sizeof fibers[0]; i++)
        check_run_regions(image, fibers[i], false);
    dlclose(image);
}

/* ---- images from before barriers ---- */

static void test_abi1_images_still_run(void **state)
{
    struct blocks_case *c = *state;
    const uint32_t n = 10000;
    uint32_t *data = alloc_or_fail(n * sizeof *data);

    for (uint32_t i = 0; i < n; i++)
        data[i] = i;
    accel_ref dd = upload(c, ACCEL_U32, n, data);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dd)};
    assert_status(run(c, "add_one_v1", (accel_dim3){blocks_for(n, 64), 1, 1},
                      (accel_dim3){64, 1, 1}, 0, args, 2),
                  ACCEL_OK);
    download(c, data, dd);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(data[i], i + 1);
    accel_free(c->device, dd);
    free(data);
}

/* ---- fiber stacks ---- */

static void launch_deep(struct blocks_case *c, uint32_t depth,
                        accel_status expected)
{
    accel_ref dout = upload(c, ACCEL_U32, 32, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(depth), ACCEL_ARG_REF(dout)};
    uint32_t out[32];

    assert_status(run(c, "block_stack_overflow", (accel_dim3){1, 1, 1},
                      (accel_dim3){32, 1, 1}, 0, args, 2),
                  expected);
    download(c, out, dout);
    accel_free(c->device, dout);
}

/* 1,000 frames of a kilobyte fit in 4 MiB stacks. */
static void test_stack_size_knob_lets_deep_kernels_run(void **state)
{
    launch_deep(*state, 1000, ACCEL_OK);
}

static void test_stack_size_knob_out_of_range_leaves_no_device(void **state)
{
    static const char *const bad[] = {
        "ACCEL_NULL_STACK_KB=8", "ACCEL_NULL_STACK_KB=0",
        "ACCEL_NULL_STACK_KB=65537", "ACCEL_NULL_STACK_KB=64k",
        "ACCEL_NULL_STACK_KB="};
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *env[] = {bad[i], NULL};
        struct support_null null;
        assert_int_not_equal(support_null_open(&null, env), 0);
        support_null_close(&null);
    }
}

/*
 * 1,000 frames of a kilobyte overflow the default 64 KiB stack: the child
 * that runs it must die of the guard page with the plugin's message, not
 * run on over other memory. A child, since the process cannot go on.
 */
static void test_stack_overflow_is_reported_and_stops_the_process(void **state)
{
    int pipe_fds[2];
    char text[4096] = {0};
    size_t got = 0;
    int status = 0;
    pid_t child;

    (void)state;
    assert_int_equal(pipe(pipe_fds), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        void *child_state = NULL;
        dup2(pipe_fds[1], 2);
        close(pipe_fds[0]);
        if (setup(&child_state) != 0)
            _exit(3);
        launch_deep(child_state, 1000, ACCEL_OK);
        _exit(0); /* reached only if the overflow went unnoticed */
    }
    close(pipe_fds[1]);
    for (;;) {
        ssize_t n = read(pipe_fds[0], text + got, sizeof(text) - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(pipe_fds[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_contains(text, "kernel 'block_stack_overflow'");
    assert_contains(text, "overflowed its 65536-byte fiber stack");
    assert_contains(text, "ACCEL_NULL_STACK_KB");
}

int main(void)
{
#ifdef BLOCKS_CBS_MISSING
    printf("SKIP: accel-cc's barrier pass is not built: %s\n",
           BLOCKS_CBS_MISSING);
    return 77;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tiled_sgemm_matches_reference,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_shared_tree_reduction_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_warp_shuffle_reduction_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_hillis_steele_scan_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blelloch_scan_matches_reference,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_histogram_with_shared_bins_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_padded_tile_transpose_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_stencil_with_shared_halo_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_wide_stencil_survives_malloc_perturbation, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_wide_stencil_v4_survives_malloc_perturbation, setup_v4, teardown),
        cmocka_unit_test_setup_teardown(test_bitonic_sort_sorts_each_block,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_cas_lock_free_updates_match_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_ballot_compaction_keeps_exactly_the_multiples_of_three, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_warp_shuffles_and_votes_match_cuda,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_atomic_matches_reference,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_dynamic_shared_memory_is_shared_across_a_barrier, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_every_block_shape_runs_barriers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_grids_of_one_block_and_of_65535_run_barriers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_thread_returning_before_a_barrier_fails_the_launch, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_barrier_in_divergent_code_fails_the_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_loop_bound_from_an_argument_runs_barriers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_uniform_branch_around_a_barrier_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_loop_bound_from_the_thread_index_fails_the_launch, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_extra_barrier_in_one_thread_fails_the_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_warp_operation_leaves_out_returned_lanes, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_warp_operation_missing_lanes_fails_the_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_barriers_at_two_call_sites_meet_only_on_fibers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_divergence_fails_with_one_host_thread_too, setup_one_thread,
            teardown),
        cmocka_unit_test(test_only_the_pass_splits_barrier_kernels),
        cmocka_unit_test_setup_teardown(test_abi1_images_still_run, setup_abi1,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stack_size_knob_lets_deep_kernels_run,
                                        setup_big_stack, teardown),
        cmocka_unit_test(test_stack_size_knob_out_of_range_leaves_no_device),
        cmocka_unit_test(test_stack_overflow_is_reported_and_stops_the_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
