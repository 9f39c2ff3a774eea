/*
 * Kernels on the null (CPU) plugin: single-source kernels from
 * <accel/kernel.h> match plain C references for grids that do and do not
 * divide the problem, in 1D, 2D and 3D; arguments of every size arrive
 * intact; launches stay in order on a stream and apart across streams;
 * corrupt, truncated and foreign images are refused with a reason; and the
 * plugin's knobs (ACCEL_NULL_THREADS, ACCEL_NULL_DELAY_US,
 * ACCEL_NULL_HOST_VISIBLE) do what its header says.
 *
 * Most tests go through the public API. A few call the plugin's table
 * directly, for what the host checks first and so never lets through.
 */
#include "support.h"

#include <accel/driver.h>

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kernels_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *examples;
    accel_module *testing;
};

/* Mirrors of the structs in kernels/testing.cu. */
typedef struct {
    uint32_t v[5];
} test_u32x5;
typedef struct {
    uint32_t words[64];
} test_u32x64;

/* ---- setup ---- */

static int teardown(void **state)
{
    struct kernels_case *c = *state;
    if (c == NULL)
        return 0;
    accel_module_unload(c->testing);
    accel_module_unload(c->examples);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    *state = NULL;
    support_clean_environment();
    return 0;
}

/* Open the null device with `name`=`value` set (both may be NULL). */
static int open_case_with(void **state, const char *name, const char *value)
{
    struct kernels_case *c = calloc(1, sizeof *c);
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
        accel_module_load_file(c->device, EXAMPLES_CPU_IMAGE, &c->examples) !=
            ACCEL_OK ||
        accel_module_load_file(c->device, TESTING_CPU_IMAGE, &c->testing) !=
            ACCEL_OK) {
        print_error("setup failed: %s\n", accel_last_error());
        teardown(state);
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    return open_case_with(state, NULL, NULL);
}

static int setup_one_thread(void **state)
{
    return open_case_with(state, "ACCEL_NULL_THREADS", "1");
}

static int setup_three_threads(void **state)
{
    return open_case_with(state, "ACCEL_NULL_THREADS", "3");
}

static int setup_not_host_visible(void **state)
{
    return open_case_with(state, "ACCEL_NULL_HOST_VISIBLE", "0");
}

/* ---- helpers ---- */

static accel_kernel *kernel_of(accel_module *module, const char *name)
{
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(module, name, &kernel), ACCEL_OK);
    assert_non_null(kernel);
    return kernel;
}

static accel_ref alloc_filled(struct kernels_case *c, accel_elem_type type,
                              uint64_t count, const void *data)
{
    accel_ref ref;
    assert_status(accel_alloc(c->device, type, count, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, data,
                                       count * accel_elem_size(type)),
                  ACCEL_OK);
    return ref;
}

static void read_back(struct kernels_case *c, void *dst, accel_ref ref)
{
    assert_status(accel_copy_to_host(c->stream, dst, ref, 0, accel_ref_bytes(ref)),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

static uint32_t blocks_for(uint64_t n, uint32_t block)
{
    return (uint32_t)((n + block - 1) / block);
}

static void assert_close_f32(float actual, float expected, uint64_t index)
{
    float diff = actual > expected ? actual - expected : expected - actual;
    float scale = expected < 0 ? -expected : expected;
    if (diff <= 1e-6f * scale + 1e-6f)
        return;
    fail_msg("element %llu is %.9g, expected %.9g", (unsigned long long)index,
             (double)actual, (double)expected);
}

/* ---- plain C kernels, the ground truth ---- */

static void reference_saxpy(uint32_t n, float a, const float *x, float *y)
{
    for (uint32_t i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

/* ---- saxpy and vector add ---- */

/*
 * y has `n + guard` elements; the kernel is told n, so the guard must come
 * back untouched.
 */
static void check_saxpy(struct kernels_case *c, uint32_t n, uint32_t block)
{
    const uint32_t guard = 17;
    const float a = 2.5f;
    float *x = malloc(n * sizeof *x);
    float *y = malloc((n + guard) * sizeof *y);
    float *expected = malloc((n + guard) * sizeof *y);
    float *result = malloc((n + guard) * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(expected);
    assert_non_null(result);
    for (uint32_t i = 0; i < n; i++)
        x[i] = (float)(i % 1000) * 0.25f - 3.0f;
    for (uint32_t i = 0; i < n + guard; i++)
        y[i] = (float)(i % 77) - 10.5f;
    memcpy(expected, y, (n + guard) * sizeof *y);
    reference_saxpy(n, a, x, expected);

    accel_ref dx = alloc_filled(c, ACCEL_F32, n, x);
    accel_ref dy = alloc_filled(c, ACCEL_F32, n + guard, y);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
    assert_status(accel_launch(c->stream, kernel_of(c->examples, "saxpy"),
                               (accel_dim3){blocks_for(n, block), 1, 1},
                               (accel_dim3){block, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    read_back(c, result, dy);
    for (uint32_t i = 0; i < n + guard; i++)
        assert_close_f32(result[i], expected[i], i);

    accel_free(c->device, dx);
    accel_free(c->device, dy);
    free(x);
    free(y);
    free(expected);
    free(result);
}

static void test_saxpy_matches_reference_when_grid_divides_size(void **state)
{
    check_saxpy(*state, 256, 256);
    check_saxpy(*state, 4096, 128);
    check_saxpy(*state, 1 << 20, 256);
}

static void test_saxpy_matches_reference_when_grid_overhangs_size(void **state)
{
    check_saxpy(*state, 1, 256);
    check_saxpy(*state, 255, 256);
    check_saxpy(*state, 257, 256);
    check_saxpy(*state, 1000, 96);
    check_saxpy(*state, 100003, 256);
}

static void check_vadd(struct kernels_case *c, uint32_t n, uint32_t block)
{
    float *a = malloc(n * sizeof *a);
    float *b = malloc(n * sizeof *b);
    float *sum = malloc(n * sizeof *sum);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(sum);
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)(i % 333);
    }
    accel_ref da = alloc_filled(c, ACCEL_F32, n, a);
    accel_ref db = alloc_filled(c, ACCEL_F32, n, b);
    accel_ref dc;
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dc), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(da),
                        ACCEL_ARG_REF(db), ACCEL_ARG_REF(dc)};
    assert_status(accel_launch(c->stream, kernel_of(c->examples, "vadd"),
                               (accel_dim3){blocks_for(n, block), 1, 1},
                               (accel_dim3){block, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    read_back(c, sum, dc);
    for (uint32_t i = 0; i < n; i++)
        assert_close_f32(sum[i], a[i] + b[i], i);
    accel_free(c->device, da);
    accel_free(c->device, db);
    accel_free(c->device, dc);
    free(a);
    free(b);
    free(sum);
}

static void
test_vadd_matches_reference_for_dividing_and_overhanging_grids(void **state)
{
    check_vadd(*state, 3, 64);
    check_vadd(*state, 512, 64);
    check_vadd(*state, 70001, 128);
    check_vadd(*state, 262144, 1024);
}

/* ---- thread and block indices in 1D, 2D and 3D ---- */

struct volume {
    uint32_t nx, ny, nz;
    accel_dim3 block;
};

/*
 * Every element of the volume must be written once, by the thread whose
 * global index it is.
 */
static void check_volume(struct kernels_case *c, struct volume v)
{
    uint64_t count = (uint64_t)v.nx * v.ny * v.nz;
    uint32_t *index = calloc(count, sizeof *index);
    uint32_t *hits = calloc(count, sizeof *hits);
    assert_non_null(index);
    assert_non_null(hits);
    accel_ref dindex = alloc_filled(c, ACCEL_U32, count, index);
    accel_ref dhits = alloc_filled(c, ACCEL_U32, count, hits);
    accel_arg args[] = {ACCEL_ARG_REF(dindex), ACCEL_ARG_REF(dhits),
                        ACCEL_ARG_VALUE(v.nx), ACCEL_ARG_VALUE(v.ny),
                        ACCEL_ARG_VALUE(v.nz)};
    accel_dim3 grid = {blocks_for(v.nx, v.block.x), blocks_for(v.ny, v.block.y),
                       blocks_for(v.nz, v.block.z)};
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "mark_index"),
                               grid, v.block, 0, args, 5),
                  ACCEL_OK);
    read_back(c, index, dindex);
    read_back(c, hits, dhits);
    for (uint64_t i = 0; i < count; i++) {
        if (index[i] != i + 1 || hits[i] != 1)
            fail_msg(
                "%ux%ux%u in blocks %ux%ux%u: element %llu holds %u with %u "
                "hit(s)",
                v.nx, v.ny, v.nz, v.block.x, v.block.y, v.block.z,
                (unsigned long long)i, index[i], hits[i]);
    }
    accel_free(c->device, dindex);
    accel_free(c->device, dhits);
    free(index);
    free(hits);
}

static void test_1d_grids_cover_each_index_once(void **state)
{
    check_volume(*state, (struct volume){1024, 1, 1, {128, 1, 1}});
    check_volume(*state, (struct volume){1000, 1, 1, {128, 1, 1}});
    check_volume(*state, (struct volume){1, 1, 1, {32, 1, 1}});
    check_volume(*state, (struct volume){200001, 1, 1, {64, 1, 1}});
}

/*
 * Past 4,194,303 blocks in x the CPU form runs a block's threads one by one
 * rather than as rows (where blockDim.x * blockIdx.x + threadIdx.x could
 * wrap around in 32 bits: ACCEL__CPU_INDEX_FITS in <accel/kernel.h>):
 * both branches in one grid.
 */
static void test_grids_of_millions_of_blocks_cover_each_index_once(void **state)
{
    check_volume(*state, (struct volume){2 * ((1u << 22) + 5), 1, 1, {2, 1, 1}});
}

static void test_2d_grids_cover_each_index_once(void **state)
{
    check_volume(*state, (struct volume){64, 32, 1, {16, 8, 1}});
    check_volume(*state, (struct volume){37, 29, 1, {8, 4, 1}});
    check_volume(*state, (struct volume){300, 200, 1, {16, 16, 1}});
    check_volume(*state, (struct volume){3, 1000, 1, {1, 64, 1}});
}

static void test_3d_grids_cover_each_index_once(void **state)
{
    check_volume(*state, (struct volume){16, 8, 6, {4, 2, 3}});
    check_volume(*state, (struct volume){13, 7, 5, {4, 2, 3}});
    check_volume(*state, (struct volume){70, 50, 33, {8, 8, 4}});
    check_volume(*state, (struct volume){1, 1, 300, {1, 1, 64}});
}

/* ---- rows of 32 threads: the CPU form's vector loops at grid edges ---- */

static float edge_stencil_reference(const float *in, uint32_t nx, uint32_t ny,
                                    uint64_t x, uint64_t y)
{
    uint64_t i = y * nx + x;

    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
        return in[i];
    return 2.0f * in[i] + 3.0f * in[i - 1] + 5.0f * in[i + 1] +
           7.0f * in[i - nx] + 11.0f * in[i + nx];
}

/* Every cell of an nx x ny edge_stencil step, against the reference. */
static void check_edge_stencil(struct kernels_case *c, uint32_t nx, uint32_t ny,
                               accel_dim3 block)
{
    uint64_t count = (uint64_t)nx * ny;
    float *in = malloc(count * sizeof *in);
    float *out = malloc(count * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    for (uint64_t i = 0; i < count; i++) {
        in[i] = (float)(i % 97);
        out[i] = -1.0f;
    }
    accel_ref din = alloc_filled(c, ACCEL_F32, count, in);
    accel_ref dout = alloc_filled(c, ACCEL_F32, count, out);
    accel_arg args[] = {ACCEL_ARG_VALUE(nx), ACCEL_ARG_VALUE(ny),
                        ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};
    accel_dim3 grid = {blocks_for(nx, block.x), blocks_for(ny, block.y), 1};
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "edge_stencil"),
                               grid, block, 0, args, 4),
                  ACCEL_OK);
    read_back(c, out, dout);
    for (uint64_t y = 0; y < ny; y++)
        for (uint64_t x = 0; x < nx; x++) {
            float want = edge_stencil_reference(in, nx, ny, x, y);

            if (out[y * nx + x] != want)
                fail_msg("%ux%u in blocks %ux%u: cell (%llu,%llu) holds %g, "
                         "not %g",
                         nx, ny, block.x, block.y, (unsigned long long)x,
                         (unsigned long long)y, (double)out[y * nx + x],
                         (double)want);
        }
    accel_free(c->device, din);
    accel_free(c->device, dout);
    free(in);
    free(out);
}

static void test_row_loops_of_32_match_reference_at_grid_edges(void **state)
{
    static const accel_dim3 blocks[] = {
        {32, 8, 1}, {64, 2, 1}, {96, 1, 1}, {256, 1, 1},
        {33, 3, 1}, {1, 32, 1}, {31, 1, 1}, {1024, 1, 1},
    };
    static const uint32_t sizes[][2] = {
        {1, 1},  {1, 70},  {70, 1},   {2, 2},   {3, 3},
        {31, 9}, {33, 17}, {100, 37}, {257, 5},
    };

    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            check_edge_stencil(*state, sizes[s][0], sizes[s][1], blocks[b]);
}

/* ---- transpose with pitched rows ---- */

static void test_transpose_of_pitched_rows_matches_reference(void **state)
{
    struct kernels_case *c = *state;
    const uint32_t rows = 37, cols = 53;
    uint64_t in_pitch = 64 * sizeof(float), out_pitch = 48 * sizeof(float);
    size_t in_words = rows * 64, out_words = cols * 48;
    float *in = malloc(in_words * sizeof *in);
    float *out = malloc(out_words * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    for (size_t i = 0; i < in_words; i++)
        in[i] = -1.0f; /* the padding, never read */
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t k = 0; k < cols; k++)
            in[r * 64 + k] = (float)(r * 1000 + k);
    for (size_t i = 0; i < out_words; i++)
        out[i] = -7.0f; /* the padding, never written */
    accel_ref din = alloc_filled(c, ACCEL_F32, in_words, in);
    accel_ref dout = alloc_filled(c, ACCEL_F32, out_words, out);
    accel_arg args[] = {ACCEL_ARG_REF(dout),   ACCEL_ARG_VALUE(out_pitch),
                        ACCEL_ARG_REF(din),    ACCEL_ARG_VALUE(in_pitch),
                        ACCEL_ARG_VALUE(rows), ACCEL_ARG_VALUE(cols)};
    assert_status(
        accel_launch(c->stream, kernel_of(c->examples, "transpose_f32"),
                     (accel_dim3){blocks_for(cols, 16), blocks_for(rows, 16), 1},
                     (accel_dim3){16, 16, 1}, 0, args, 6),
        ACCEL_OK);
    read_back(c, out, dout);
    for (uint32_t k = 0; k < cols; k++) {
        for (uint32_t j = 0; j < 48; j++) {
            float expected = j < rows ? (float)(j * 1000 + k) : -7.0f;
            if (out[k * 48 + j] != expected)
                fail_msg("out row %u column %u is %g, expected %g", k, j,
                         (double)out[k * 48 + j], (double)expected);
        }
    }
    accel_free(c->device, din);
    accel_free(c->device, dout);
    free(in);
    free(out);
}

/* ---- reduction ---- */

static void test_reduction_matches_reference_per_block_and_in_total(void **state)
{
    struct kernels_case *c = *state;
    const uint64_t n = 100003;
    const uint32_t grid = 64, block = 128;
    /* Small whole numbers: every partial sum is exact in any order. */
    float *x = malloc(n * sizeof *x);
    float sums[64] = {0}, expected_sums[64] = {0}, total = 0, expected_total = 0;
    assert_non_null(x);
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 7);
        /* The kernel's grid-stride mapping: element i belongs to thread i % (grid*block). */
        expected_sums[(i % ((uint64_t)grid * block)) / block] += x[i];
        expected_total += x[i];
    }
    accel_ref dx = alloc_filled(c, ACCEL_F32, n, x);
    accel_ref dsums = alloc_filled(c, ACCEL_F32, grid, sums);
    accel_ref dtotal = alloc_filled(c, ACCEL_F32, 1, &total);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dsums), ACCEL_ARG_REF(dtotal)};
    assert_status(accel_launch(c->stream, kernel_of(c->examples, "reduce_sum_f32"),
                               (accel_dim3){grid, 1, 1},
                               (accel_dim3){block, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    read_back(c, sums, dsums);
    read_back(c, &total, dtotal);
    for (uint32_t b = 0; b < grid; b++)
        assert_close_f32(sums[b], expected_sums[b], b);
    assert_true(total == expected_total);
    accel_free(c->device, dx);
    accel_free(c->device, dsums);
    accel_free(c->device, dtotal);
    free(x);
}

/* ---- launches themselves ---- */

static void test_empty_kernel_launches_complete(void **state)
{
    struct kernels_case *c = *state;
    accel_kernel *empty = kernel_of(c->examples, "empty");
    accel_dim3 one = {1, 1, 1};
    assert_status(accel_launch(c->stream, empty, one, one, 0, NULL, 0), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_launch(c->stream, empty, (accel_dim3){1000, 3, 2},
                               (accel_dim3){256, 2, 2}, 0, NULL, 0),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

static void test_device_reports_kernel_capability(void **state)
{
    struct kernels_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_true(info.props.caps & ACCEL_DEVICE_CAP_KERNELS);
    assert_true(info.props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE);
    assert_true(info.props.compute_units >= 1);
}

/* Each launch adds 1; in order, n launches leave n everywhere. */
static void test_back_to_back_launches_run_in_order(void **state)
{
    struct kernels_case *c = *state;
    const uint32_t small_n = 1000, large_n = 300000, rounds = 300;
    uint32_t *small = calloc(small_n, sizeof *small);
    uint32_t *large = calloc(large_n, sizeof *large);
    assert_non_null(small);
    assert_non_null(large);
    accel_ref dsmall = alloc_filled(c, ACCEL_U32, small_n, small);
    accel_ref dlarge = alloc_filled(c, ACCEL_U32, large_n, large);
    accel_kernel *add = kernel_of(c->testing, "add_u32");
    uint32_t one = 1;
    accel_arg small_args[] = {ACCEL_ARG_VALUE(small_n), ACCEL_ARG_REF(dsmall),
                              ACCEL_ARG_VALUE(one)};
    accel_arg large_args[] = {ACCEL_ARG_VALUE(large_n), ACCEL_ARG_REF(dlarge),
                              ACCEL_ARG_VALUE(one)};
    for (uint32_t r = 0; r < rounds; r++) {
        assert_status(accel_launch(c->stream, add,
                                   (accel_dim3){blocks_for(small_n, 256), 1, 1},
                                   (accel_dim3){256, 1, 1}, 0, small_args, 3),
                      ACCEL_OK);
        assert_status(accel_launch(c->stream, add,
                                   (accel_dim3){blocks_for(large_n, 256), 1, 1},
                                   (accel_dim3){256, 1, 1}, 0, large_args, 3),
                      ACCEL_OK);
    }
    read_back(c, small, dsmall);
    read_back(c, large, dlarge);
    for (uint32_t i = 0; i < small_n; i++)
        assert_int_equal(small[i], rounds);
    for (uint32_t i = 0; i < large_n; i++)
        assert_int_equal(large[i], rounds);
    accel_free(c->device, dsmall);
    accel_free(c->device, dlarge);
    free(small);
    free(large);
}

struct stream_worker {
    struct kernels_case *c;
    accel_stream *stream;
    accel_kernel *add;
    accel_ref data;
    uint32_t n, rounds;
    accel_status status;
};

static void *launch_rounds(void *arg)
{
    struct stream_worker *w = arg;
    uint32_t one = 1;
    accel_arg args[] = {ACCEL_ARG_VALUE(w->n), ACCEL_ARG_REF(w->data),
                        ACCEL_ARG_VALUE(one)};
    w->status = ACCEL_OK;
    for (uint32_t r = 0; r < w->rounds && w->status == ACCEL_OK; r++)
        w->status = accel_launch(w->stream, w->add,
                                 (accel_dim3){blocks_for(w->n, 128), 1, 1},
                                 (accel_dim3){128, 1, 1}, 0, args, 3);
    if (w->status == ACCEL_OK)
        w->status = accel_stream_sync(w->stream);
    return NULL;
}

/*
 * Two streams, each fed by its own thread, both running grids large enough
 * to share the worker pool at once.
 */
static void test_launches_on_two_streams_from_two_threads(void **state)
{
    struct kernels_case *c = *state;
    const uint32_t n = 200000, rounds = 60;
    struct stream_worker workers[2];
    pthread_t threads[2];
    uint32_t *data = calloc(n, sizeof *data);
    assert_non_null(data);
    for (int i = 0; i < 2; i++) {
        workers[i] = (struct stream_worker){
            .c = c,
            .add = kernel_of(c->testing, "add_u32"),
            .n = n,
            .rounds = rounds + (uint32_t)i * 7};
        assert_status(accel_stream_create(c->device, &workers[i].stream),
                      ACCEL_OK);
        workers[i].data = alloc_filled(c, ACCEL_U32, n, data);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            pthread_create(&threads[i], NULL, launch_rounds, &workers[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        assert_status(workers[i].status, ACCEL_OK);
        read_back(c, data, workers[i].data);
        for (uint32_t k = 0; k < n; k++)
            assert_int_equal(data[k], workers[i].rounds);
        accel_free(c->device, workers[i].data);
        accel_stream_destroy(workers[i].stream);
    }
    free(data);
}

/* ---- arguments and shared memory ---- */

static void test_arguments_of_every_size_arrive_intact(void **state)
{
    struct kernels_case *c = *state;
    uint8_t a = 0xab;
    uint64_t b = 0x0123456789abcdefull;
    uint16_t s = 0xbeef;
    double d = 12345.0;
    float e = 678.0f;
    test_u32x5 f = {{1, 20, 300, 4000, 50000}};
    int8_t g = -5;
    uint64_t out[7] = {0};
    accel_ref dout = alloc_filled(c, ACCEL_U64, 7, out);
    accel_arg args[] = {ACCEL_ARG_VALUE(a), ACCEL_ARG_VALUE(b),
                        ACCEL_ARG_VALUE(s), ACCEL_ARG_VALUE(d),
                        ACCEL_ARG_VALUE(e), ACCEL_ARG_VALUE(f),
                        ACCEL_ARG_VALUE(g), ACCEL_ARG_REF(dout)};
    accel_dim3 one = {1, 1, 1};
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "echo_args"),
                               one, one, 0, args, 8),
                  ACCEL_OK);
    read_back(c, out, dout);
    assert_int_equal(out[0], a);
    assert_int_equal(out[1], b);
    assert_int_equal(out[2], s);
    assert_int_equal(out[3], 12345);
    assert_int_equal(out[4], 678);
    assert_int_equal(out[5], 54321);
    assert_int_equal(out[6], (uint64_t)(int64_t)-5);
    accel_free(c->device, dout);
}

static void test_sixteen_arguments_and_a_large_one_arrive_intact(void **state)
{
    struct kernels_case *c = *state;
    uint64_t out = 0, expected = 0;
    uint32_t p[15];
    accel_arg args[16];
    accel_ref dout = alloc_filled(c, ACCEL_U64, 1, &out);
    accel_dim3 one = {1, 1, 1};
    args[0] = ACCEL_ARG_REF(dout);
    for (uint32_t i = 0; i < 15; i++) {
        p[i] = 1000 + i * 37;
        expected += (uint64_t)p[i] * (i + 1);
        args[i + 1] = ACCEL_ARG_VALUE(p[i]);
    }
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "sixteen_args"),
                               one, one, 0, args, 16),
                  ACCEL_OK);
    read_back(c, &out, dout);
    assert_int_equal(out, expected);

    /* 256 bytes: more than a launch keeps inline. */
    test_u32x64 blob;
    expected = 0;
    for (uint32_t i = 0; i < 64; i++) {
        blob.words[i] = i * i + 3;
        expected += blob.words[i];
    }
    accel_arg big_args[] = {ACCEL_ARG_VALUE(blob), ACCEL_ARG_REF(dout)};
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "big_arg"), one,
                               one, 0, big_args, 2),
                  ACCEL_OK);
    read_back(c, &out, dout);
    assert_int_equal(out, expected);
    accel_free(c->device, dout);
}

static void check_shared_scratch(struct kernels_case *c, uint32_t n,
                                 uint32_t block, uint32_t words)
{
    uint32_t *out = calloc(n, sizeof *out);
    assert_non_null(out);
    accel_ref dout = alloc_filled(c, ACCEL_U32, n, out);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(words),
                        ACCEL_ARG_REF(dout)};
    assert_status(
        accel_launch(c->stream, kernel_of(c->testing, "shared_scratch"),
                     (accel_dim3){blocks_for(n, block), 1, 1},
                     (accel_dim3){block, 1, 1},
                     block * words * (uint32_t)sizeof(uint32_t), args, 3),
        ACCEL_OK);
    read_back(c, out, dout);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t expected = words * i + words * (words - 1) / 2;
        if (out[i] != expected)
            fail_msg("element %u is %u, expected %u", i, out[i], expected);
    }
    accel_free(c->device, dout);
    free(out);
}

static void test_dynamic_shared_memory_holds_each_threads_scratch(void **state)
{
    struct kernels_case *c = *state;
    check_shared_scratch(c, 1000, 64, 16);
    check_shared_scratch(c, 100000, 32, 4);
    /* The whole 48 KiB a block may have. */
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    check_shared_scratch(c, 5000, 64, info.props.max_shared_bytes / 64 / 4);
}

static void test_launch_with_too_much_shared_memory_is_rejected(void **state)
{
    struct kernels_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    accel_dim3 one = {1, 1, 1};
    assert_status(accel_launch(c->stream, kernel_of(c->examples, "empty"), one,
                               one, info.props.max_shared_bytes + 1, NULL, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

/* ---- modules and kernel lookup ---- */

static void test_unknown_kernel_is_not_found(void **state)
{
    struct kernels_case *c = *state;
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(c->examples, "no_such_kernel", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    assert_contains(accel_last_error(), "no_such_kernel");
    assert_null(kernel);
    assert_status(accel_kernel_get(c->examples, "not-a-name", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    assert_contains(accel_last_error(), "not a kernel name");
    assert_status(accel_kernel_get(c->examples, "", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    /* Only descriptors name kernels: other symbols of the image do not. */
    assert_status(accel_kernel_get(c->examples, "accel__run_saxpy", &kernel),
                  ACCEL_ERR_NOT_FOUND);
}

static void test_malformed_descriptors_are_refused(void **state)
{
    struct kernels_case *c = *state;
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(c->testing, "future_abi", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "ABI");
    assert_status(accel_kernel_get(c->testing, "no_runner", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "run_block");
}

/* Two images loaded side by side stay two modules. */
static void test_modules_loaded_together_keep_their_own_kernels(void **state)
{
    struct kernels_case *c = *state;
    accel_module *again = NULL;
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(c->testing, "saxpy", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    assert_status(accel_kernel_get(c->examples, "mark_index", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    /* Unload and load in another order: the loader must not hand back the old one. */
    accel_module_unload(c->examples);
    c->examples = NULL;
    assert_status(accel_module_load_file(c->device, TESTING_CPU_IMAGE, &again),
                  ACCEL_OK);
    assert_status(
        accel_module_load_file(c->device, EXAMPLES_CPU_IMAGE, &c->examples),
        ACCEL_OK);
    kernel_of(c->examples, "saxpy");
    kernel_of(again, "mark_index");
    assert_status(accel_kernel_get(again, "saxpy", &kernel), ACCEL_ERR_NOT_FOUND);
    accel_module_unload(again);
    check_saxpy(c, 1000, 128);
}

static void expect_refused(struct kernels_case *c, const void *image,
                           size_t size, const char *fragment)
{
    accel_module *module = NULL;
    assert_status(accel_module_load(c->device, image, size, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_error(), fragment);
}

static void test_corrupt_images_are_refused_with_a_reason(void **state)
{
    struct kernels_case *c = *state;
    size_t size = 0;
    unsigned char *image = support_read_file(EXAMPLES_CPU_IMAGE, &size);
    assert_true(size > 0);
    unsigned char *copy = malloc(size);
    assert_non_null(copy);

    /* Random bytes. */
    srand(12345);
    for (size_t i = 0; i < size; i++)
        copy[i] = (unsigned char)rand();
    expect_refused(c, copy, size, "ELF");
    /* Too short even for a header. */
    expect_refused(c, image, 20, "shorter than an ELF header");
    /* Truncated: a header whose program headers, or segments, are cut off. */
    expect_refused(c, image, sizeof(Elf64_Ehdr), "truncated");
    expect_refused(c, image, size / 2, "truncated");
    /* Another machine's shared object. */
    memcpy(copy, image, size);
    Elf64_Half machine = EM_AARCH64;
    if (((Elf64_Ehdr *)(void *)image)->e_machine == EM_AARCH64)
        machine = EM_X86_64;
    memcpy(copy + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
    expect_refused(c, copy, size, "machine");
    /* A CUDA cubin is an ELF file too; it is named as such. */
    machine = EM_CUDA;
    memcpy(copy + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
    expect_refused(c, copy, size, "cubin");
    /* 32-bit. */
    memcpy(copy, image, size);
    copy[EI_CLASS] = ELFCLASS32;
    expect_refused(c, copy, size, "class");
    /* An executable, not a shared object. */
    memcpy(copy, image, size);
    Elf64_Half type = ET_EXEC;
    memcpy(copy + offsetof(Elf64_Ehdr, e_type), &type, sizeof type);
    expect_refused(c, copy, size, "not a shared object");
    /* The whole image still loads after all that. */
    accel_module *module = NULL;
    assert_status(accel_module_load(c->device, image, size, &module), ACCEL_OK);
    kernel_of(module, "vadd");
    accel_module_unload(module);
    free(copy);
    free(image);
}

/* ---- knobs ---- */

static void test_one_thread_runs_every_grid_on_the_stream(void **state)
{
    struct kernels_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_int_equal(info.props.compute_units, 1);
    check_saxpy(c, 100003, 256);
    check_volume(c, (struct volume){70, 50, 33, {8, 8, 4}});
}

static void test_three_threads_run_large_grids(void **state)
{
    struct kernels_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_int_equal(info.props.compute_units, 3);
    check_saxpy(c, 100003, 256);
    check_volume(c, (struct volume){300, 200, 1, {16, 16, 1}});
}

static void test_not_host_visible_devices_still_run_kernels(void **state)
{
    struct kernels_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_false(info.props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE);
    assert_true(info.props.caps & ACCEL_DEVICE_CAP_KERNELS);
    check_saxpy(c, 10007, 256);
}

/* A bad value leaves the plugin without devices, saying which variable. */
static void expect_no_device(const char *name, const char *value)
{
    accel_host *host = NULL;
    accel_device *device = NULL;
    support_clean_environment();
    setenv(name, value, 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    assert_status(accel_host_create(&options, &host), ACCEL_OK);
    const accel_plugin_info *info = support_find_plugin(host, "null", 0);
    assert_non_null(info);
    assert_int_equal(info->state, ACCEL_PLUGIN_NO_DEVICE);
    assert_contains(info->reason, name);
    assert_true(accel_device_open(host, "null", 0, &device) != ACCEL_OK);
    assert_null(device);
    accel_host_destroy(host);
    support_clean_environment();
}

static void test_bad_knob_values_leave_no_device(void **state)
{
    (void)state;
    expect_no_device("ACCEL_NULL_THREADS", "0");
    expect_no_device("ACCEL_NULL_THREADS", "1025");
    expect_no_device("ACCEL_NULL_THREADS", "four");
    expect_no_device("ACCEL_NULL_THREADS", "");
    expect_no_device("ACCEL_NULL_DELAY_US", "-1");
    expect_no_device("ACCEL_NULL_DELAY_US", "10000001");
    expect_no_device("ACCEL_NULL_DELAY_US", "99999999999999999999999");
    expect_no_device("ACCEL_NULL_HOST_VISIBLE", "2");
    expect_no_device("ACCEL_NULL_HOST_VISIBLE", "yes");
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * With a delay, a launch returns at once and completes later. The delay is
 * long, so that a loaded machine cannot blur the two.
 */
static void test_delay_keeps_launches_in_flight(void **state)
{
    (void)state;
    void *case_state = NULL;
    assert_int_equal(
        open_case_with(&case_state, "ACCEL_NULL_DELAY_US", "100000"), 0);
    struct kernels_case *c = case_state;
    accel_event *event = NULL;
    uint32_t n = 1000, value = 5;
    uint32_t *data = calloc(n, sizeof *data);
    assert_non_null(data);
    accel_ref ddata = alloc_filled(c, ACCEL_U32, n, data);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(ddata),
                        ACCEL_ARG_VALUE(value)};
    uint64_t start = now_ns();
    assert_status(accel_launch(c->stream, kernel_of(c->testing, "add_u32"),
                               (accel_dim3){blocks_for(n, 128), 1, 1},
                               (accel_dim3){128, 1, 1}, 0, args, 3),
                  ACCEL_OK);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    /* Still pending: the launch returned before its 100 ms delay ran. */
    assert_status(accel_event_query(event), ACCEL_NOT_READY);
    assert_status(accel_event_sync(event), ACCEL_OK);
    assert_true(now_ns() - start >= 100000000u);
    read_back(c, data, ddata);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(data[i], value);
    accel_free(c->device, ddata);
    accel_event_destroy(event);
    free(data);
    teardown(&case_state);
}

/* ---- the plugin's table, for what the host checks before it ---- */

static char plugin_error[512];

static void plugin_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status plugin_set_error(accel_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plugin_error, sizeof plugin_error, fmt, ap);
    va_end(ap);
    return status;
}

static const char *plugin_getenv(const char *name)
{
    return getenv(name);
}

static const struct accel_host_services plugin_services = {
    .struct_size = sizeof(struct accel_host_services),
    .version = ACCEL_HOST_SERVICES_VERSION,
    .log = plugin_log,
    .set_error = plugin_set_error,
    .getenv = plugin_getenv,
};

struct table_case {
    void *library;
    const struct accel_driver_v1 *table;
    accel_drv_plugin *plugin;
    accel_drv_device *device;
    accel_drv_stream *stream;
    accel_drv_module *module;
};

static void table_open_with(struct table_case *t, const char *image_path,
                            const struct accel_host_services *services)
{
    size_t size = 0;
    unsigned char *image = support_read_file(image_path, &size);
    assert_true(size > 0);
    support_clean_environment();
    t->library = dlopen(NULL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(t->library);
    t->table = dlsym(t->library, ACCEL_DRIVER_SYMBOL);
    assert_non_null(t->table);
    assert_status(t->table->plugin_open(services, &t->plugin), ACCEL_OK);
    assert_status(t->table->device_open(t->plugin, 0, &t->device), ACCEL_OK);
    assert_status(t->table->stream_create(t->device, &t->stream), ACCEL_OK);
    assert_status(t->table->module_load(t->device, image, size, &t->module),
                  ACCEL_OK);
    free(image);
}

/* The plugin opened with services of host minor 0. */
static void table_open(struct table_case *t, const char *image_path)
{
    table_open_with(t, image_path, &plugin_services);
}

static void table_close(struct table_case *t)
{
    t->table->module_unload(t->device, t->module);
    t->table->stream_destroy(t->device, t->stream);
    t->table->device_close(t->device);
    t->table->plugin_close(t->plugin);
    dlclose(t->library);
}

static void test_kernel_signature_gives_parameter_sizes(void **state)
{
    (void)state;
    struct table_case t;
    struct accel_kernel_signature signature;
    accel_drv_kernel *kernel = NULL;
    table_open(&t, TESTING_CPU_IMAGE);
    assert_status(t.table->kernel_get(t.device, t.module, "echo_args", &kernel,
                                      &signature),
                  ACCEL_OK);
    const uint32_t expected[] = {1, 8, 2, 8, 4, 20, 1, 8};
    assert_int_equal(signature.param_count, 8);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(signature.param_sizes[i], expected[i]);
    assert_int_equal(signature.param_sizes[8], 0);
    assert_status(
        t.table->kernel_get(t.device, t.module, NULL, &kernel, &signature),
        ACCEL_ERR_INVALID_ARGUMENT);
    char long_name[300];
    memset(long_name, 'k', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_status(
        t.table->kernel_get(t.device, t.module, long_name, &kernel, &signature),
        ACCEL_ERR_NOT_FOUND);
    table_close(&t);
}

/*
 * The typed fields (Since 1.1) are written for a host of minor 1 only: an
 * older host's struct ends at param_sizes, and the bytes after it are not
 * the plugin's.
 */
static void test_typed_fields_are_written_for_hosts_of_minor_1_only(void **state)
{
    (void)state;
    struct table_case t;
    struct accel_kernel_signature signature;
    accel_drv_kernel *kernel = NULL;
    unsigned char *typed = (unsigned char *)&signature +
                           ACCEL_KERNEL_SIGNATURE_V1_0_SIZE;
    size_t typed_size = sizeof signature - ACCEL_KERNEL_SIGNATURE_V1_0_SIZE;

    table_open(&t, TESTING_CPU_IMAGE);
    memset(&signature, 0xa5, sizeof signature);
    assert_status(
        t.table->kernel_get(t.device, t.module, "add_u32", &kernel, &signature),
        ACCEL_OK);
    assert_int_equal(signature.param_count, 3);
    for (size_t i = 0; i < typed_size; i++)
        assert_int_equal(typed[i], 0xa5);
    table_close(&t);

    struct accel_host_services minor1 = plugin_services;
    minor1.host_minor = 1;
    table_open_with(&t, TESTING_CPU_IMAGE, &minor1);
    memset(&signature, 0xa5, sizeof signature);
    assert_status(
        t.table->kernel_get(t.device, t.module, "add_u32", &kernel, &signature),
        ACCEL_OK);
    static const uint8_t kinds[] = {ACCEL_PARAM_KIND_VALUE,
                                    ACCEL_PARAM_KIND_POINTER,
                                    ACCEL_PARAM_KIND_VALUE, 0};
    static const uint8_t types[] = {11, 11, 11, 0}; /* u32, u32, u32, none */
    assert_memory_equal(signature.param_kinds, kinds, sizeof kinds);
    assert_memory_equal(signature.param_types, types, sizeof types);
    assert_string_equal(signature.param_names[0], "n");
    assert_string_equal(signature.param_names[1], "data");
    assert_string_equal(signature.param_names[2], "value");
    assert_string_equal(signature.param_names[3], "");
    table_close(&t);
}

static void test_plugin_refuses_launches_that_break_the_signature(void **state)
{
    (void)state;
    struct table_case t;
    struct accel_kernel_signature signature;
    accel_drv_kernel *kernel = NULL;
    table_open(&t, EXAMPLES_CPU_IMAGE);
    assert_status(
        t.table->kernel_get(t.device, t.module, "vadd", &kernel, &signature),
        ACCEL_OK);
    uint32_t n = 0;
    uint64_t address = 0;
    uint16_t short_n = 0;
    void *args[] = {&n, &address, &address, &address};
    size_t sizes[] = {sizeof n, 8, 8, 8};
    struct accel_launch_config config = {{1, 1, 1}, {1, 1, 1}, 0};
    assert_status(
        t.table->launch(t.device, t.stream, kernel, &config, args, sizes, 3),
        ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(plugin_error, "takes 4");
    args[0] = &short_n;
    sizes[0] = sizeof short_n;
    assert_status(
        t.table->launch(t.device, t.stream, kernel, &config, args, sizes, 4),
        ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(plugin_error, "argument 0");
    args[0] = &n;
    sizes[0] = sizeof n;
    config.shared_bytes = 1u << 20;
    assert_status(
        t.table->launch(t.device, t.stream, kernel, &config, args, sizes, 4),
        ACCEL_ERR_INVALID_ARGUMENT);
    config.shared_bytes = 0;
    config.block[1] = 0;
    assert_status(
        t.table->launch(t.device, t.stream, kernel, &config, args, sizes, 4),
        ACCEL_ERR_INVALID_ARGUMENT);
    /* n = 0: a valid launch that touches nothing. */
    config.block[1] = 1;
    assert_status(
        t.table->launch(t.device, t.stream, kernel, &config, args, sizes, 4),
        ACCEL_OK);
    assert_status(t.table->stream_sync(t.device, t.stream), ACCEL_OK);
    table_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_saxpy_matches_reference_when_grid_divides_size, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_saxpy_matches_reference_when_grid_overhangs_size, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_vadd_matches_reference_for_dividing_and_overhanging_grids,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_1d_grids_cover_each_index_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_grids_of_millions_of_blocks_cover_each_index_once, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_2d_grids_cover_each_index_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_3d_grids_cover_each_index_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_row_loops_of_32_match_reference_at_grid_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_transpose_of_pitched_rows_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_reduction_matches_reference_per_block_and_in_total, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_empty_kernel_launches_complete,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_reports_kernel_capability,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_back_to_back_launches_run_in_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_launches_on_two_streams_from_two_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_arguments_of_every_size_arrive_intact, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_sixteen_arguments_and_a_large_one_arrive_intact, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_dynamic_shared_memory_holds_each_threads_scratch, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_launch_with_too_much_shared_memory_is_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_kernel_is_not_found, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_malformed_descriptors_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_modules_loaded_together_keep_their_own_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_corrupt_images_are_refused_with_a_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_one_thread_runs_every_grid_on_the_stream, setup_one_thread,
            teardown),
        cmocka_unit_test_setup_teardown(test_three_threads_run_large_grids,
                                        setup_three_threads, teardown),
        cmocka_unit_test_setup_teardown(
            test_not_host_visible_devices_still_run_kernels,
            setup_not_host_visible, teardown),
        cmocka_unit_test(test_bad_knob_values_leave_no_device),
        cmocka_unit_test(test_delay_keeps_launches_in_flight),
        cmocka_unit_test(test_kernel_signature_gives_parameter_sizes),
        cmocka_unit_test(test_typed_fields_are_written_for_hosts_of_minor_1_only),
        cmocka_unit_test(test_plugin_refuses_launches_that_break_the_signature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
