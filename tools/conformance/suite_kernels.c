/*
 * Conformance: modules and launches. A device without
 * ACCEL_DEVICE_CAP_KERNELS skips these with that reason, and must refuse a
 * module with ACCEL_ERR_NOT_SUPPORTED. Kernels are checked against a C
 * reference on inputs whose results are exact in float, so that a GPU's
 * fused multiply-add gives the same bits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite.h"

static void test_module_from_file_has_its_kernels(struct conformance *c)
{
    accel_module *module = load_examples(c);
    accel_kernel *kernel = NULL;

    assert_status(accel_kernel_get(module, "saxpy", &kernel), ACCEL_OK);
    assert_non_null(kernel);
    assert_status(accel_kernel_get(module, "vadd", &kernel), ACCEL_OK);
    assert_status(accel_kernel_get(module, "empty", &kernel), ACCEL_OK);
    assert_status(accel_kernel_get(module, "no_such_kernel", &kernel),
                  ACCEL_ERR_NOT_FOUND);
    assert_true(strlen(accel_last_error()) > 0);
    accel_module_unload(module);
}

static void test_device_without_kernels_refuses_modules(struct conformance *c)
{
    static const char image[] = "\177ELF any image at all";
    accel_module *module = NULL;

    if (has_kernels(c))
        skip_because("the device has ACCEL_DEVICE_CAP_KERNELS: test skipped");
    assert_status(accel_module_load(c->device, image, sizeof(image) - 1, &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_null(module);
    assert_true(strlen(accel_last_error()) > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_corrupt_module_is_refused_with_a_reason(struct conformance *c)
{
    static const char garbage[] = "this is not a module image for any device\n";
    accel_module *module = NULL;

    skip_without_kernels(c);
    assert_status(
        accel_module_load(c->device, garbage, sizeof(garbage) - 1, &module),
        ACCEL_ERR_MODULE);
    assert_null(module);
    assert_true(strlen(accel_last_error()) > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_saxpy_matches_the_c_reference(struct conformance *c)
{
    accel_module *module = load_examples(c);
    accel_kernel *saxpy = NULL;

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    run_saxpy(c, saxpy, 100003);
    run_saxpy(c, saxpy, 1);
    accel_module_unload(module);
}

/* saxpy in the kernel.h dialect, for the plugins that compile source. */
static const char saxpy_source[] = "#include <accel/kernel.h>\n"
                                   "ACCEL_KERNEL(saxpy, (uint32_t, n), (float, "
                                   "a), (const float *, x), (float *, y))\n"
                                   "{\n"
                                   "    uint64_t i = accel_global_idx_x();\n"
                                   "    if (i < n)\n"
                                   "        y[i] = a * x[i] + y[i];\n"
                                   "}\n";

/*
 * module_compile (optional, Since 1.1): a plugin that has it compiles the
 * dialect into a module whose kernels run, and refuses a broken source with
 * ACCEL_ERR_MODULE and a log; one without it, or a device without kernels,
 * answers ACCEL_ERR_NOT_SUPPORTED with a reason. The cache is off, so
 * that each run compiles.
 */
static void
test_module_compile_runs_the_source_or_is_not_supported(struct conformance *c)
{
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    accel_status status;

    setenv("ACCEL_CACHE", "0", 1);
    status = accel_module_compile(c->device, saxpy_source, NULL, &module);
    if (!has_kernels(c) || status == ACCEL_ERR_NOT_SUPPORTED) {
        unsetenv("ACCEL_CACHE");
        assert_status(status, ACCEL_ERR_NOT_SUPPORTED);
        assert_null(module);
        assert_true(strlen(accel_last_error()) > 0);
        skip_because("accel_module_compile: %s: test skipped",
                     accel_last_error());
    }
    assert_status(status, ACCEL_OK);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    run_saxpy(c, saxpy, 1001);
    accel_module_unload(module);
    module = NULL;
    status = accel_module_compile(
        c->device,
        "#include <accel/kernel.h>\n"
        "ACCEL_KERNEL(broken) { this is not a kernel }\n",
        NULL, &module);
    unsetenv("ACCEL_CACHE");
    assert_status(status, ACCEL_ERR_MODULE);
    assert_null(module);
    assert_true(strlen(accel_last_build_log()) > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_vadd_matches_the_c_reference(struct conformance *c)
{
    accel_module *module = load_examples(c);
    enum { N = 70001 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    float *out = malloc(N * sizeof(float));
    accel_kernel *vadd = NULL;
    accel_ref da, db, dc;
    uint32_t n = N;

    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(out);
    for (uint32_t i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)(i % 333);
    }
    assert_status(accel_kernel_get(module, "vadd", &vadd), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &da), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &db), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dc), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, da, a, N), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, db, b, N), ACCEL_OK);
    {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(da),
                            ACCEL_ARG_REF(db), ACCEL_ARG_REF(dc)};

        assert_status(accel_launch(c->stream, vadd,
                                   (accel_dim3){(N + 127) / 128, 1, 1},
                                   (accel_dim3){128, 1, 1}, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dc, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < N; i++) {
        if (out[i] != a[i] + b[i])
            fail_msg("vadd[%u] = %g, not %g", i, (double)out[i],
                     (double)(a[i] + b[i]));
    }
    assert_status(accel_free(c->device, da), ACCEL_OK);
    assert_status(accel_free(c->device, db), ACCEL_OK);
    assert_status(accel_free(c->device, dc), ACCEL_OK);
    accel_module_unload(module);
    free(a);
    free(b);
    free(out);
}

static void test_launches_stay_in_order_on_a_stream(struct conformance *c)
{
    accel_module *module = load_examples(c);
    enum { N = 4096, ROUNDS = 20 };
    float x[N], y[N], out[N];
    const float a = 1.0f;
    accel_kernel *saxpy = NULL;
    accel_ref dx, dy;
    uint32_t n = N;

    for (uint32_t i = 0; i < N; i++) {
        x[i] = (float)(i % 10);
        y[i] = 0.0f;
    }
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, N), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, N), ACCEL_OK);
    for (int r = 0; r < ROUNDS; r++) {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};

        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){N / 64, 1, 1},
                                   (accel_dim3){64, 1, 1}, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dy, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_true(out[i] == (float)ROUNDS * x[i]);
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    accel_module_unload(module);
}

static void test_launch_arguments_are_checked(struct conformance *c)
{
    accel_module *module = load_examples(c);
    accel_kernel *saxpy = NULL;
    uint32_t n = 16;
    uint64_t wide = 16;
    float a = 1.0f;
    accel_ref dx, dy, freed;
    accel_dim3 one = {1, 1, 1}, block = {16, 1, 1};

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &freed), ACCEL_OK);
    assert_status(accel_free(c->device, freed), ACCEL_OK);
    {
        accel_arg good[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy),
                            ACCEL_ARG_VALUE(n)};
        accel_arg wrong_size[] = {ACCEL_ARG_VALUE(wide), ACCEL_ARG_VALUE(a),
                                  ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
        accel_arg stale[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                             ACCEL_ARG_REF(freed), ACCEL_ARG_REF(dy)};

        /* One argument too many, then one too few. */
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 5),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 3),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, wrong_size, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, stale, 4),
                      ACCEL_ERR_FREED_REF);
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){0, 1, 1},
                                   block, 0, good, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, (accel_dim3){1, 1, 0},
                                   0, good, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(
            accel_launch(c->stream, saxpy, one,
                         (accel_dim3){c->info.props.max_threads_per_block, 2, 1},
                         0, good, 4),
            ACCEL_ERR_INVALID_ARGUMENT);
        /* After every refusal, a good launch still runs. */
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 4),
                      ACCEL_OK);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    accel_module_unload(module);
}

const struct conf_test conf_kernel_tests[] = {
#define T(name)                                                                \
    {                                                                          \
#name, test_##name                                                     \
    }
    T(module_from_file_has_its_kernels),
    T(device_without_kernels_refuses_modules),
    T(corrupt_module_is_refused_with_a_reason),
    T(saxpy_matches_the_c_reference),
    T(module_compile_runs_the_source_or_is_not_supported),
    T(vadd_matches_the_c_reference),
    T(launches_stay_in_order_on_a_stream),
    T(launch_arguments_are_checked),
#undef T
};
const size_t conf_kernel_test_count = sizeof(conf_kernel_tests) /
                                      sizeof(conf_kernel_tests[0]);
