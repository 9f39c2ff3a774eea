/*
 * C++ kernels on the CPU plugin (kernels/cxx.cu, compiled as C++17 by
 * accel-cc and to PTX and an AMD code object by nvcc and hipcc where
 * found): each kernel's output checked element by element against a host
 * reference, in every image the build makes of the source: the bundle
 * accel-cc makes by default (barrier kernels through the barrier pass
 * where it is built), an image of gcc's alone (barrier kernels on
 * fibers), the checked images run under `accel-check --check` memory,
 * race and init (clean: no report), and the same source compiled at run time
 * (accel_module_compile with -xc++). Through the pass, the templated
 * barrier kernels run as loops between their barriers.
 *
 * `test-cxx-kernels --run IMAGE` runs the checks on IMAGE alone, outside
 * cmocka, and exits 0 when all hold: the checked image's child.
 */
#include "support.h"

#include <accel/kernel.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CXX_SANITIZER_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CXX_SANITIZER_BUILD 1
#endif

struct cxx_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
    int failures;
};

/* ---- reporting without cmocka: the checks run in --run's child too ---- */

static bool ok(struct cxx_case *c, accel_status status, const char *what)
{
    if (status == ACCEL_OK)
        return true;
    fprintf(stderr, "cxx-kernels: %s: %s: %s\n", what,
            accel_status_name(status), accel_last_error());
    c->failures++;
    return false;
}

static void mismatch(struct cxx_case *c, const char *kernel, uint64_t i,
                     double got, double want)
{
    if (c->failures < 20)
        fprintf(stderr, "cxx-kernels: %s: element %llu is %.9g, want %.9g\n",
                kernel, (unsigned long long)i, got, want);
    c->failures++;
}

/* Equal within a relative `tolerance` (0: exactly). */
static void expect_near(struct cxx_case *c, const char *kernel, uint64_t i,
                        double got, double want, double tolerance)
{
    double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;

    if (!(fabs(got - want) <= tolerance * scale))
        mismatch(c, kernel, i, got, want);
}

/* ---- device arrays and launches ---- */

static accel_ref upload(struct cxx_case *c, accel_elem_type type,
                        uint64_t count, const void *data)
{
    accel_ref ref = {0};

    if (ok(c, accel_alloc(c->device, type, count, &ref), "accel_alloc") &&
        data != NULL)
        ok(c,
           accel_copy_to_device(c->stream, ref, 0, data,
                                count * accel_elem_size(type)),
           "accel_copy_to_device");
    return ref;
}

static void download(struct cxx_case *c, void *dst, accel_ref ref)
{
    ok(c, accel_copy_to_host(c->stream, dst, ref, 0, accel_ref_bytes(ref)),
       "accel_copy_to_host");
    ok(c, accel_stream_sync(c->stream), "accel_stream_sync");
}

static bool launch(struct cxx_case *c, const char *name, accel_dim3 grid,
                   accel_dim3 block, const accel_arg *args, uint32_t nargs)
{
    accel_kernel *kernel = NULL;

    return ok(c, accel_kernel_get(c->module, name, &kernel), name) &&
           ok(c, accel_launch(c->stream, kernel, grid, block, 0, args, nargs),
              name) &&
           ok(c, accel_stream_sync(c->stream), name);
}

static accel_dim3 dim(uint32_t x, uint32_t y)
{
    return (accel_dim3){x, y, 1};
}

/* ---- the kernels' checks ---- */

/* Element i of a host array of f32, f64 or i32, as a double, and back. */
static double element(accel_elem_type type, const void *array, uint64_t i)
{
    return type == ACCEL_F32   ? ((const float *)array)[i]
           : type == ACCEL_F64 ? ((const double *)array)[i]
                               : ((const int32_t *)array)[i];
}

static void set_element(accel_elem_type type, void *array, uint64_t i,
                        double value)
{
    if (type == ACCEL_F32)
        ((float *)array)[i] = (float)value;
    else if (type == ACCEL_F64)
        ((double *)array)[i] = value;
    else
        ((int32_t *)array)[i] = (int32_t)value;
}

/*
 * block_sum<T, BLOCK>: each block's sum of its BLOCK elements, for n =
 * 1000. The values (halves, quarters, integers) sum exactly in every
 * type, so the tree's order does not matter.
 */
static void check_block_sum(struct cxx_case *c, const char *name,
                            accel_elem_type type, uint32_t block)
{
    const uint32_t n = 1000, blocks = (n + block - 1) / block;
    size_t size = accel_elem_size(type);
    void *x = calloc(n, size), *sums = calloc(blocks, size);

    if (x == NULL || sums == NULL) {
        fprintf(stderr, "cxx-kernels: %s: out of host memory\n", name);
        c->failures++;
        free(x);
        free(sums);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        set_element(type, x, i,
                    type == ACCEL_F32   ? (double)(i % 7) * 0.5
                    : type == ACCEL_F64 ? (double)i * 0.25
                                        : (double)i - 500.0);
    accel_ref dx = upload(c, type, n, x), dsums = upload(c, type, blocks, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dsums)};

    if (launch(c, name, dim(blocks, 1), dim(block, 1), args, 3)) {
        download(c, sums, dsums);
        for (uint32_t b = 0; b < blocks; b++) {
            double want = 0.0;
            for (uint32_t i = b * block; i < n && i < (b + 1) * block; i++)
                want += element(type, x, i);
            expect_near(c, name, b, element(type, sums, b), want, 0);
        }
    }
    accel_free(c->device, dx);
    accel_free(c->device, dsums);
    free(x);
    free(sums);
}

static void check_block_sums(struct cxx_case *c)
{
    check_block_sum(c, "cxx_block_sum_f32_256", ACCEL_F32, 256);
    check_block_sum(c, "cxx_block_sum_f64_64", ACCEL_F64, 64);
    check_block_sum(c, "cxx_block_sum_i32_128", ACCEL_I32, 128);
}

/* scan<T, Op, BLOCK>: inclusive scans of each block, by + and by max. */
static void check_scans(struct cxx_case *c)
{
    float xf[512], yf[512];
    int32_t xi[192], yi[192];

    for (uint32_t i = 0; i < 512; i++)
        xf[i] = (float)(i % 5);
    for (uint32_t i = 0; i < 192; i++)
        xi[i] = (int32_t)((i * 7919u) % 1000u) - 500;
    accel_ref dxf = upload(c, ACCEL_F32, 512, xf),
              dyf = upload(c, ACCEL_F32, 512, NULL);
    accel_ref dxi = upload(c, ACCEL_I32, 192, xi),
              dyi = upload(c, ACCEL_I32, 192, NULL);
    accel_arg af[] = {ACCEL_ARG_REF(dxf), ACCEL_ARG_REF(dyf)};
    accel_arg ai[] = {ACCEL_ARG_REF(dxi), ACCEL_ARG_REF(dyi)};

    if (launch(c, "cxx_scan_sum_f32", dim(4, 1), dim(128, 1), af, 2)) {
        download(c, yf, dyf);
        float run = 0.0f;
        for (uint32_t i = 0; i < 512; i++) {
            run = i % 128 == 0 ? xf[i] : run + xf[i];
            expect_near(c, "cxx_scan_sum_f32", i, yf[i], run, 0);
        }
    }
    if (launch(c, "cxx_scan_max_i32", dim(3, 1), dim(64, 1), ai, 2)) {
        download(c, yi, dyi);
        int32_t run = 0;
        for (uint32_t i = 0; i < 192; i++) {
            run = i % 64 == 0 || xi[i] > run ? xi[i] : run;
            expect_near(c, "cxx_scan_max_i32", i, yi[i], run, 0);
        }
    }
    accel_free(c->device, dxf);
    accel_free(c->device, dyf);
    accel_free(c->device, dxi);
    accel_free(c->device, dyi);
}

/* matmul<TILE>: C = A B for n = 37, not a multiple of either tile. */
static void check_matmul(struct cxx_case *c)
{
    enum { N = 37 };
    static float a[N * N], b[N * N], got[N * N];
    const uint32_t n = N;
    static const uint32_t tiles[] = {8, 16};

    for (uint32_t i = 0; i < N * N; i++) {
        a[i] = (float)((int)(i % 5) - 2);
        b[i] = (float)((int)(i % 3) - 1);
    }
    accel_ref da = upload(c, ACCEL_F32, N * N, a),
              db = upload(c, ACCEL_F32, N * N, b);
    accel_ref dc = upload(c, ACCEL_F32, N * N, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(da),
                        ACCEL_ARG_REF(db), ACCEL_ARG_REF(dc)};

    for (size_t t = 0; t < 2; t++) {
        uint32_t tile = tiles[t], grid = (N + tile - 1) / tile;
        const char *name = tile == 8 ? "cxx_matmul_8" : "cxx_matmul_16";

        memset(got, 0, sizeof got);
        if (!launch(c, name, dim(grid, grid), dim(tile, tile), args, 4))
            continue;
        download(c, got, dc);
        for (uint32_t r = 0; r < N; r++)
            for (uint32_t col = 0; col < N; col++) {
                float want = 0.0f;
                for (uint32_t k = 0; k < N; k++)
                    want += a[r * N + k] * b[k * N + col];
                expect_near(c, name, r * N + col, got[r * N + col], want, 0);
            }
    }
    accel_free(c->device, da);
    accel_free(c->device, db);
    accel_free(c->device, dc);
}

/* axpy4: float4 operators, and a device function taking references. */
static void check_axpy4(struct cxx_case *c)
{
    enum { N = 300 };
    static float x[4 * N], y[4 * N], got[4 * N], norms[N];
    const uint32_t n = N;
    const float a = 1.5f;

    for (uint32_t i = 0; i < 4 * N; i++) {
        x[i] = (float)i * 0.01f - 3.0f;
        y[i] = (float)(i % 11) * 0.3f;
    }
    accel_ref dx = upload(c, ACCEL_F32, 4 * N, x),
              dy = upload(c, ACCEL_F32, 4 * N, y);
    accel_ref dn = upload(c, ACCEL_F32, N, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy), ACCEL_ARG_REF(dn)};

    if (launch(c, "cxx_axpy4", dim((N + 63) / 64, 1), dim(64, 1), args, 5)) {
        download(c, got, dy);
        download(c, norms, dn);
        for (uint32_t i = 0; i < 4 * N; i++) {
            float r = ((a * x[i] + y[i]) - 0.5f) * 2.0f;
            expect_near(c, "cxx_axpy4", i, got[i], -r / 4.0f, 1e-6);
        }
        for (uint32_t i = 0; i < N; i++) {
            const float *v = x + 4 * i;
            float want = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
            expect_near(c, "cxx_axpy4 norms", i, norms[i], want, 1e-6);
        }
    }
    accel_free(c->device, dx);
    accel_free(c->device, dy);
    accel_free(c->device, dn);
}

/* members: member functions and operators, namespaced overloads, lambdas. */
static void check_members(struct cxx_case *c)
{
    enum { N = 500 };
    static float xs[N], ys[N], out_f[N];
    static double out_d[N];
    static int32_t out_i[N];
    const uint32_t n = N;

    for (uint32_t i = 0; i < N; i++) {
        xs[i] = (float)i * 0.1f - 20.0f;
        ys[i] = (float)(i % 13) * 0.7f;
    }
    accel_ref dx = upload(c, ACCEL_F32, N, xs), dy = upload(c, ACCEL_F32, N, ys);
    accel_ref df = upload(c, ACCEL_F32, N, NULL),
              dd = upload(c, ACCEL_F64, N, NULL);
    accel_ref di = upload(c, ACCEL_I32, N, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dy),  ACCEL_ARG_REF(df),
                        ACCEL_ARG_REF(dd),  ACCEL_ARG_REF(di)};

    if (launch(c, "cxx_members", dim((N + 127) / 128, 1), dim(128, 1), args, 6)) {
        download(c, out_f, df);
        download(c, out_d, dd);
        download(c, out_i, di);
        for (uint32_t i = 0; i < N; i++) {
            float qx = (xs[i] + 1.0f) * 0.5f, qy = (ys[i] - 1.0f) * 0.5f;
            float want = (qx * qx + qy * qy) * 2.0f + xs[i] * xs[i] + 1.0f;
            expect_near(c, "cxx_members f", i, out_f[i], want, 1e-6);
            expect_near(c, "cxx_members d", i, out_d[i], (double)xs[i] * 3.0, 0);
            expect_near(c, "cxx_members i", i, out_i[i], 5.0 * i, 0);
        }
    }
    accel_free(c->device, dx);
    accel_free(c->device, dy);
    accel_free(c->device, df);
    accel_free(c->device, dd);
    accel_free(c->device, di);
}

/* transpose: a 2D shared array, 45 x 70 in 16 x 16 blocks. */
static void check_transpose(struct cxx_case *c)
{
    enum { ROWS = 45, COLS = 70 };
    static float in[ROWS * COLS], out[ROWS * COLS];
    const uint32_t rows = ROWS, cols = COLS;

    for (uint32_t i = 0; i < ROWS * COLS; i++)
        in[i] = (float)i;
    accel_ref din = upload(c, ACCEL_F32, ROWS * COLS, in);
    accel_ref dout = upload(c, ACCEL_F32, ROWS * COLS, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(rows), ACCEL_ARG_VALUE(cols),
                        ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};

    if (launch(c, "cxx_transpose", dim((COLS + 15) / 16, (ROWS + 15) / 16),
               dim(16, 16), args, 4)) {
        download(c, out, dout);
        for (uint32_t r = 0; r < ROWS; r++)
            for (uint32_t col = 0; col < COLS; col++)
                expect_near(c, "cxx_transpose", col * ROWS + r,
                            out[col * ROWS + r], in[r * COLS + col], 0);
    }
    accel_free(c->device, din);
    accel_free(c->device, dout);
}

/* fast_math: CUDA's intrinsics and the float overloads, against libm. */
static void check_fast_math(struct cxx_case *c)
{
    enum { N = 200, OUT = 12 };
    static float x[N], y[N * OUT];
    const uint32_t n = N;

    for (uint32_t i = 0; i < N; i++)
        x[i] = 0.1f + (float)i * 0.01f;
    accel_ref dx = upload(c, ACCEL_F32, N, x),
              dy = upload(c, ACCEL_F32, N * OUT, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};

    if (launch(c, "cxx_fast_math", dim((N + 63) / 64, 1), dim(64, 1), args, 3)) {
        download(c, y, dy);
        for (uint32_t i = 0; i < N; i++) {
            double v = x[i];
            double want[OUT] = {
                exp(v),
                log(v),
                log2(v),
                pow(2.0, v),
                sin(v) + cos(v),
                v / 3.0,
                v - 1.0 < 0.0   ? 0.0
                : v - 1.0 > 1.0 ? 1.0
                                : v - 1.0,
                1.0 / sqrt(v),
                sin(v) * cos(v),
                log10(v) + tan(v * 0.5),
                exp(v) + log(v),
                v + (v * 2.0 + 1.0),
            };
            for (uint32_t k = 0; k < OUT; k++)
                expect_near(c, "cxx_fast_math", i * OUT + k, y[i * OUT + k],
                            want[k], 1e-5);
        }
    }
    accel_free(c->device, dx);
    accel_free(c->device, dy);
}

/* cuda_spellings: __shared__, __syncthreads, atomicAdd, min, max, bit casts. */
static void check_cuda_spellings(struct cxx_case *c)
{
    enum { N = 1000, BLOCK = 128, BLOCKS = (N + BLOCK - 1) / BLOCK };
    static float x[N], block_max[BLOCKS];
    static int32_t bits[N];
    uint32_t count = 0, want_count = 0;
    const uint32_t n = N;

    for (uint32_t i = 0; i < N; i++)
        x[i] = (float)((i * 7919u) % 1000u) / 1000.0f;
    accel_ref dx = upload(c, ACCEL_F32, N, x),
              dmax = upload(c, ACCEL_F32, BLOCKS, NULL);
    accel_ref dcount = upload(c, ACCEL_U32, 1, &count);
    accel_ref dbits = upload(c, ACCEL_I32, N, NULL);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(dx),
                        ACCEL_ARG_REF(dmax), ACCEL_ARG_REF(dcount),
                        ACCEL_ARG_REF(dbits)};

    if (launch(c, "cxx_cuda_spellings", dim(BLOCKS, 1), dim(BLOCK, 1), args, 5)) {
        download(c, block_max, dmax);
        download(c, &count, dcount);
        download(c, bits, dbits);
        for (uint32_t b = 0; b < BLOCKS; b++) {
            float want = -1e30f;
            for (uint32_t i = b * BLOCK; i < N && i < (b + 1) * BLOCK; i++)
                want = x[i] > want ? x[i] : want;
            expect_near(c, "cxx_cuda_spellings max", b, block_max[b], want, 0);
        }
        for (uint32_t i = 0; i < N; i++) {
            uint32_t u;
            memcpy(&u, &x[i], sizeof u);
            want_count += x[i] > 0.5f;
            expect_near(c, "cxx_cuda_spellings bits", i, bits[i],
                        __builtin_popcount(u) + (i < 7 ? i : 7) +
                            __builtin_clz(i + 1) + 32,
                        0);
        }
        expect_near(c, "cxx_cuda_spellings count", 0, count, want_count, 0);
    }
    accel_free(c->device, dx);
    accel_free(c->device, dmax);
    accel_free(c->device, dcount);
    accel_free(c->device, dbits);
}

static void check_all(struct cxx_case *c)
{
    check_block_sums(c);
    check_scans(c);
    check_matmul(c);
    check_axpy4(c);
    check_members(c);
    check_transpose(c);
    check_fast_math(c);
    check_cuda_spellings(c);
}

/* ---- opening a case ---- */

static void case_close(struct cxx_case *c)
{
    accel_module_unload(c->module);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
}

/* The null device with `image` loaded, or the source compiled when NULL. */
static bool case_open(struct cxx_case *c, const char *image)
{
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};

    memset(c, 0, sizeof *c);
    if (!ok(c, accel_host_create(&options, &c->host), "accel_host_create") ||
        !ok(c, accel_device_open(c->host, "null", 0, &c->device),
            "accel_device_open") ||
        !ok(c, accel_stream_create(c->device, &c->stream), "accel_stream_create"))
        return false;
    if (image != NULL)
        return ok(c, accel_module_load_file(c->device, image, &c->module), image);
    FILE *file = fopen(CXX_KERNELS_SOURCE, "r");
    static char source[1 << 16];
    size_t got = file != NULL ? fread(source, 1, sizeof source - 1, file) : 0;

    if (file != NULL)
        fclose(file);
    source[got] = '\0';
    if (got == 0) {
        fprintf(stderr, "cxx-kernels: cannot read %s\n", CXX_KERNELS_SOURCE);
        c->failures++;
        return false;
    }
    if (!ok(c, accel_module_compile(c->device, source, "-xc++", &c->module),
            "accel_module_compile")) {
        fprintf(stderr, "%s\n", accel_last_build_log());
        return false;
    }
    return true;
}

static void run_image(const char *image)
{
    struct cxx_case c;

    support_clean_environment();
    if (image == NULL)
        setenv("ACCEL_CACHE", "0", 1); /* compiled each time, never cached */
    if (case_open(&c, image))
        check_all(&c);
    case_close(&c);
    support_clean_environment();
    assert_int_equal(c.failures, 0);
}

/* ---- the tests ---- */

static void test_default_bundle_matches_the_references(void **state)
{
    (void)state;
    run_image(CXX_KERNELS_BUNDLE);
}

static void test_fiber_image_matches_the_references(void **state)
{
    (void)state;
    run_image(CXX_KERNELS_FIBERS);
}

static void test_compiled_at_run_time_matches_the_references(void **state)
{
    (void)state;
    run_image(NULL);
}

/*
 * HeCBench's jacobi_step (kernels/hecbench/jacobi.cu, its body unchanged):
 * 20 relaxation steps over 256 x 256 points in 16 x 16 blocks, each step's
 * field against a host Jacobi step and its squared-change sum against the
 * host's, as HeCBench's main uses them.
 */
static void test_hecbench_jacobi_matches_the_references(void **state)
{
    enum { N = 256, STEPS = 20 };
    static float f[N * N], f_old[N * N], want[N * N], got[N * N];
    struct cxx_case c;

    (void)state;
    support_clean_environment();
    for (uint32_t j = 0; j < N; j++)
        for (uint32_t i = 0; i < N; i++) /* HeCBench's initialize_data */
            f[i + j * N] = i == 0 || i == N - 1
                               ? sinf(j * 2 * (float)M_PI / (N - 1))
                           : j == 0 || j == N - 1
                               ? sinf(i * 2 * (float)M_PI / (N - 1))
                               : 0.0f;
    memcpy(f_old, f, sizeof f);
    memcpy(want, f, sizeof f);
    if (!case_open(&c, HECBENCH_JACOBI_BUNDLE)) {
        case_close(&c);
        fail_msg("cannot load %s", HECBENCH_JACOBI_BUNDLE);
    }
    accel_ref d_f = upload(&c, ACCEL_F32, N * N, f);
    accel_ref d_f_old = upload(&c, ACCEL_F32, N * N, f_old);
    accel_ref d_error = upload(&c, ACCEL_F32, 1, NULL);

    for (int step = 0; step < STEPS && c.failures == 0; step++) {
        float zero = 0.0f, error = 0.0f, want_error = 0.0f;
        accel_arg args[] = {ACCEL_ARG_REF(d_f), ACCEL_ARG_REF(d_f_old),
                            ACCEL_ARG_REF(d_error)};

        ok(&c, accel_copy_to_device(c.stream, d_error, 0, &zero, sizeof zero),
           "accel_copy_to_device");
        if (!launch(&c, "jacobi_step", dim(N / 16, N / 16), dim(16, 16), args, 3))
            break;
        download(&c, got, d_f);
        download(&c, &error, d_error);
        memcpy(f_old, want, sizeof want);
        for (uint32_t j = 1; j < N - 1; j++)
            for (uint32_t i = 1; i < N - 1; i++) {
                float v = 0.25f *
                          (f_old[i + 1 + j * N] + f_old[i - 1 + j * N] +
                           f_old[i + (j + 1) * N] + f_old[i + (j - 1) * N]);
                want[i + j * N] = v;
                want_error += (v - f_old[i + j * N]) * (v - f_old[i + j * N]);
            }
        for (uint32_t k = 0; k < N * N; k++)
            expect_near(&c, "jacobi_step f", k, got[k], want[k], 1e-6);
        expect_near(&c, "jacobi_step error", step, error, want_error, 1e-3);
        /* std::swap(d_f, d_f_old), as HeCBench's loop does */
        accel_ref t = d_f;
        d_f = d_f_old;
        d_f_old = t;
    }
    accel_free(c.device, d_f);
    accel_free(c.device, d_f_old);
    accel_free(c.device, d_error);
    case_close(&c);
    assert_int_equal(c.failures, 0);
}

/* Through the barrier pass, the template instances with barriers are split. */
static void test_pass_splits_the_templated_barrier_kernels(void **state)
{
    static const char *const split[] = {
        "cxx_block_sum_f32_256", "cxx_block_sum_f64_64",
        "cxx_block_sum_i32_128", "cxx_scan_sum_f32",
        "cxx_scan_max_i32",      "cxx_matmul_8",
        "cxx_matmul_16",         "cxx_transpose",
        "cxx_cuda_spellings",
    };
    void *image;

    (void)state;
    if (CXX_KERNELS_CBS[0] == '\0') {
        print_message("skipped: %s\n", CXX_CBS_MISSING);
        skip();
    }
    image = dlopen(CXX_KERNELS_CBS, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(image);
    for (size_t i = 0; i < sizeof split / sizeof split[0]; i++) {
        char symbol[128];
        const struct accel_cpu_kernel *kernel;

        snprintf(symbol, sizeof symbol, ACCEL_CPU_KERNEL_PREFIX "%s", split[i]);
        kernel = dlsym(image, symbol);
        assert_non_null(kernel);
        if (kernel->run_regions == NULL)
            fail_msg("%s: not split by the barrier pass", split[i]);
    }
    dlclose(image);
    run_image(CXX_KERNELS_CBS);
}

/*
 * The checked images under `accel-check --check MODE`: right results, no
 * report (a report ends the child with a failure).
 */
static void run_checked(const char *mode)
{
    const char *argv[] = {CXX_KERNELS_SELF, "--run", CXX_KERNELS_CHECKED, NULL};
    static char text[1 << 16];
    int status;

#ifdef CXX_SANITIZER_BUILD
    print_message("skipped: a sanitizer build cannot take accel-check's "
                  "runtime\n");
    skip();
#endif
    if (getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL ||
        CXX_KERNELS_CHECKED[0] == '\0') {
        print_message("skipped: %s\n",
                      CXX_KERNELS_CHECKED[0] == '\0'
                          ? "no checked image built"
                          : "the checks' runtimes do not run under valgrind");
        skip();
    }
    status = support_run_checked(ACCEL_CHECK_PATH, mode, argv, text, sizeof text);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        print_error("--check %s:\n%s", mode, text);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* A report that did not change the exit status is still a report. */
    if (strstr(text, "accel-check:") != NULL ||
        strstr(text, "AddressSanitizer") != NULL)
        fail_msg("--check %s reported:\n%s", mode, text);
}

static void test_checked_image_runs_clean(void **state)
{
    (void)state;
    run_checked("memory");
}

static void test_race_check_finds_no_race(void **state)
{
    (void)state;
    run_checked("race");
}

static void test_init_check_finds_no_unwritten_read(void **state)
{
    (void)state;
    run_checked("init");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--run") == 0) {
        struct cxx_case c;

        if (case_open(&c, argv[2]))
            check_all(&c);
        case_close(&c);
        return c.failures == 0 ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_bundle_matches_the_references),
        cmocka_unit_test(test_fiber_image_matches_the_references),
        cmocka_unit_test(test_compiled_at_run_time_matches_the_references),
        cmocka_unit_test(test_pass_splits_the_templated_barrier_kernels),
        cmocka_unit_test(test_hecbench_jacobi_matches_the_references),
        cmocka_unit_test(test_checked_image_runs_clean),
        cmocka_unit_test(test_race_check_finds_no_race),
        cmocka_unit_test(test_init_check_finds_no_unwritten_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
