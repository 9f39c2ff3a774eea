/*
 * The host's side of kernels: every launch error is caught before anything
 * is enqueued, modules come from bundles by the device's target, and
 * modules and kernels survive a device reset.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct launch_case {
    accel_host *host;
    accel_device *device;
    accel_device *device1;
    accel_stream *stream;
    accel_module *module;
    accel_kernel *add; /* add_u32(n, data, value): data[i] += value */
    accel_ref data;
};

enum { N = 1000 };

static int setup(void **state)
{
    support_clean_environment();
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    struct launch_case *c = calloc(1, sizeof *c);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    int result = -1;
    if (c != NULL && accel_host_create(&options, &c->host) == ACCEL_OK &&
        accel_device_open(c->host, "null", 0, &c->device) == ACCEL_OK &&
        accel_device_open(c->host, "null", 1, &c->device1) == ACCEL_OK &&
        accel_stream_create(c->device, &c->stream) == ACCEL_OK &&
        accel_module_load_file(c->device, TESTING_CPU_IMAGE, &c->module) ==
            ACCEL_OK &&
        accel_kernel_get(c->module, "add_u32", &c->add) == ACCEL_OK &&
        accel_alloc(c->device, ACCEL_U32, N, &c->data) == ACCEL_OK)
        result = 0;
    if (result != 0)
        print_error("setup failed: %s\n", accel_last_error());
    unsetenv("ACCEL_NULL_DEVICES");
    *state = c;
    return result;
}

static int teardown(void **state)
{
    struct launch_case *c = *state;
    if (c == NULL)
        return 0;
    accel_module_unload(c->module);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device1);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    return 0;
}

static const accel_dim3 one = {1, 1, 1};

/* Launch add_u32 over N elements with `value`, blocks of 128. */
static accel_status add(struct launch_case *c, accel_kernel *kernel,
                        accel_ref data, uint32_t value)
{
    uint32_t n = N;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                        ACCEL_ARG_VALUE(value)};
    accel_dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};
    return accel_launch(c->stream, kernel, grid, block, 0, args, 3);
}

/* Zero the data, run `launches` adds of 1, and read it back. */
static void expect_sum(struct launch_case *c, uint32_t expected)
{
    uint32_t out[N];
    assert_status(accel_copy_out(c->stream, out, c->data, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(out[i], expected);
}

static void zero(struct launch_case *c)
{
    static const uint32_t zeros[N];
    assert_status(accel_copy_in(c->stream, c->data, zeros, N), ACCEL_OK);
}

static void test_valid_launch_runs(void **state)
{
    struct launch_case *c = *state;
    zero(c);
    assert_status(add(c, c->add, c->data, 3), ACCEL_OK);
    assert_status(add(c, c->add, c->data, 4), ACCEL_OK);
    expect_sum(c, 7);
}

static void test_bad_refs_fail_before_anything_is_enqueued(void **state)
{
    struct launch_case *c = *state;
    zero(c);
    accel_ref freed;
    assert_status(accel_alloc(c->device, ACCEL_U32, N, &freed), ACCEL_OK);
    assert_status(accel_free(c->device, freed), ACCEL_OK);
    assert_status(add(c, c->add, freed, 1), ACCEL_ERR_FREED_REF);
    assert_contains(accel_last_error(), "argument 1");

    accel_ref other;
    assert_status(accel_alloc(c->device1, ACCEL_U32, N, &other), ACCEL_OK);
    assert_status(add(c, c->add, other, 1), ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_free(c->device1, other), ACCEL_OK);

    accel_ref stale = c->data;
    stale.device_generation -= 1;
    assert_status(add(c, c->add, stale, 1), ACCEL_ERR_STALE_REF);
    /* None of them ran. */
    expect_sum(c, 0);
}

static void test_wrong_argument_count_or_size_is_rejected(void **state)
{
    struct launch_case *c = *state;
    zero(c);
    uint32_t n = N, value = 1;
    uint64_t wide = 1;
    accel_arg two[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data)};
    accel_arg four[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                        ACCEL_ARG_VALUE(value), ACCEL_ARG_VALUE(value)};
    accel_arg wrong_size[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                              ACCEL_ARG_VALUE(wide)};
    accel_arg value_for_ref[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(value),
                                 ACCEL_ARG_VALUE(value)};
    accel_dim3 grid = {8, 1, 1}, block = {128, 1, 1};
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, two, 2),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "takes 3 arguments");
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, four, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, wrong_size, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "argument 2");
    /* The typed signature knows data is a pointer (test-signatures.c). */
    assert_status(
        accel_launch(c->stream, c->add, grid, block, 0, value_for_ref, 3),
        ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(),
                    "argument 1 (data) of 'add_u32' is a pointer to u32");
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, NULL, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    expect_sum(c, 0);
}

static void test_bad_value_arguments_are_rejected(void **state)
{
    struct launch_case *c = *state;
    uint32_t n = N, value = 1;
    accel_dim3 grid = {8, 1, 1}, block = {128, 1, 1};
    accel_arg no_bytes[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                            ACCEL_ARG_BYTES(NULL, 4, 4)};
    accel_arg odd_align[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                             ACCEL_ARG_BYTES(&value, 4, 3)};
    accel_arg bad_kind[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                            ACCEL_ARG_VALUE(value)};
    bad_kind[2].kind = (accel_arg_kind)9;
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, no_bytes, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, odd_align, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, bad_kind, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

/* An inline value (ACCEL_ARG_KIND_INLINE, which C++'s macros make) carries
 * its bytes in the arg; its size and alignment are checked as a value's. */
static void test_inline_values_run_and_are_checked(void **state)
{
    struct launch_case *c = *state;
    zero(c);
    uint32_t n = N, value = 9;
    accel_dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};
    accel_arg inline_value = {.kind = ACCEL_ARG_KIND_INLINE,
                              .size = sizeof value,
                              .align = _Alignof(uint32_t)};
    memcpy(&inline_value.ref, &value, sizeof value);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data), inline_value};
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, args, 3),
                  ACCEL_OK);
    args[2].size = ACCEL_ARG_INLINE_MAX + 1;
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, args, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "inline value");
    args[2].size = sizeof value;
    args[2].align = 16;
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, args, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    args[1] = inline_value; /* a value where the kernel takes a pointer */
    args[2] = inline_value;
    accel_status status = accel_launch(c->stream, c->add, grid, block, 0, args,
                                       3);
    assert_true(status == ACCEL_ERR_TYPE_MISMATCH ||
                status == ACCEL_ERR_INVALID_ARGUMENT);
    expect_sum(c, 9);
}

static void test_bad_geometry_is_rejected(void **state)
{
    struct launch_case *c = *state;
    zero(c);
    uint32_t n = N, value = 1;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(c->data),
                        ACCEL_ARG_VALUE(value)};
    const struct {
        accel_dim3 grid, block;
        uint32_t shared;
    } bad[] = {
        {{0, 1, 1}, {128, 1, 1}, 0},      {{1, 0, 1}, {128, 1, 1}, 0},
        {{1, 1, 1}, {0, 1, 1}, 0},        {{1, 1, 0}, {1, 1, 1}, 0},
        {{1, 70000, 1}, {1, 1, 1}, 0},    /* grid y past 65535 */
        {{1, 1, 1}, {2048, 1, 1}, 0},     /* block x past 1024 */
        {{1, 1, 1}, {64, 64, 1}, 0},      /* 4096 threads in a block */
        {{1, 1, 1}, {1, 1, 128}, 0},      /* block z past 64 */
        {{1, 1, 1}, {1, 1, 1}, 1u << 20}, /* 1 MiB of shared memory */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_status(accel_launch(c->stream, c->add, bad[i].grid, bad[i].block,
                                   bad[i].shared, args, 3),
                      ACCEL_ERR_INVALID_ARGUMENT);
    expect_sum(c, 0);
}

static void test_null_stream_or_kernel_is_rejected(void **state)
{
    struct launch_case *c = *state;
    assert_status(accel_launch(NULL, c->add, one, one, 0, NULL, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_launch(c->stream, NULL, one, one, 0, NULL, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_kernel_of_another_device_is_a_mismatch(void **state)
{
    struct launch_case *c = *state;
    accel_module *module1 = NULL;
    accel_kernel *add1 = NULL;
    assert_status(accel_module_load_file(c->device1, TESTING_CPU_IMAGE, &module1),
                  ACCEL_OK);
    assert_status(accel_kernel_get(module1, "add_u32", &add1), ACCEL_OK);
    assert_status(add(c, add1, c->data, 1), ACCEL_ERR_DEVICE_MISMATCH);
    accel_module_unload(module1);
}

static void test_kernel_lookup_is_cached_and_checked(void **state)
{
    struct launch_case *c = *state;
    accel_kernel *again = NULL, *missing = (accel_kernel *)1;
    assert_status(accel_kernel_get(c->module, "add_u32", &again), ACCEL_OK);
    assert_ptr_equal(again, c->add);
    assert_status(accel_kernel_get(c->module, "no_such_kernel", &missing),
                  ACCEL_ERR_NOT_FOUND);
    assert_null(missing);
    assert_status(accel_kernel_get(c->module, NULL, &missing),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_modules_and_kernels_survive_a_reset(void **state)
{
    struct launch_case *c = *state;
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    /* The old ref is stale; the kernel handle is not. */
    assert_status(add(c, c->add, c->data, 1), ACCEL_ERR_STALE_REF);
    assert_status(accel_alloc(c->device, ACCEL_U32, N, &c->data), ACCEL_OK);
    zero(c);
    assert_status(add(c, c->add, c->data, 5), ACCEL_OK);
    expect_sum(c, 5);
}

/* ---- bundles ---- */

static void test_module_from_bundle_picks_this_device(void **state)
{
    struct launch_case *c = *state;
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    assert_status(accel_module_load_file(c->device, EXAMPLES_BUNDLE, &module),
                  ACCEL_OK);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    accel_ref x, y;
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (float)i;
        hy[i] = 1.0f;
    }
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &x), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &y), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, x, hx, N), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, y, hy, N), ACCEL_OK);
    uint32_t n = N;
    float a = 2.0f;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};
    accel_dim3 grid = {(N + 63) / 64, 1, 1}, block = {64, 1, 1};
    assert_status(accel_launch(c->stream, saxpy, grid, block, 0, args, 4),
                  ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, y, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == 2.0f * (float)i + 1.0f);
    assert_status(accel_free(c->device, x), ACCEL_OK);
    assert_status(accel_free(c->device, y), ACCEL_OK);
    accel_module_unload(module);
}

static void test_bundle_without_this_device_is_not_found(void **state)
{
    /* A bundle holding only a CUDA image: nothing for the CPU plugin. */
    struct launch_case *c = *state;
    accel_module *module = (accel_module *)1;
    assert_status(accel_module_load_file(c->device, CUDA_ONLY_BUNDLE, &module),
                  ACCEL_ERR_NOT_FOUND);
    assert_null(module);
    assert_contains(accel_last_error(), "sm_90");
}

/*
 * The null plugin runs a small copy at once when its stream has nothing
 * pending; behind a kernel it must wait its turn. Kernels over 4M elements
 * take milliseconds, so a copy that jumped the queue would read or write
 * the data while they still run.
 */
static void test_small_copies_keep_their_place_behind_kernels(void **state)
{
    struct launch_case *c = *state;
    enum { BIG = 4 * 1024 * 1024, SMALL = 1024 };
    uint32_t n = BIG, one_add = 1, head[SMALL], hundreds[SMALL];
    uint32_t *zeros = calloc(BIG, sizeof *zeros);
    accel_ref big;
    assert_non_null(zeros);
    assert_status(accel_alloc(c->device, ACCEL_U32, BIG, &big), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(big),
                        ACCEL_ARG_VALUE(one_add)};
    accel_dim3 grid = {BIG / 256, 1, 1}, block = {256, 1, 1};

    assert_status(accel_copy_in(c->stream, big, zeros, BIG), ACCEL_OK);
    for (int i = 0; i < 4; i++)
        assert_status(accel_launch(c->stream, c->add, grid, block, 0, args, 3),
                      ACCEL_OK);
    /* Read behind four adds, then write behind them too. */
    assert_status(accel_copy_out(c->stream, head, big, SMALL), ACCEL_OK);
    for (int i = 0; i < SMALL; i++)
        hundreds[i] = 100;
    assert_status(accel_copy_in(c->stream, big, hundreds, SMALL), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < SMALL; i++)
        assert_int_equal(head[i], 4);

    /* On the idle stream, the small copy in comes before the next add. */
    assert_status(accel_launch(c->stream, c->add, grid, block, 0, args, 3),
                  ACCEL_OK);
    assert_status(accel_copy_out(c->stream, head, big, SMALL), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < SMALL; i++)
        assert_int_equal(head[i], 101);
    assert_status(accel_free(c->device, big), ACCEL_OK);
    free(zeros);
}

static void test_corrupt_bundle_is_refused(void **state)
{
    struct launch_case *c = *state;
    size_t size = 0;
    uint8_t *bundle = support_read_file(EXAMPLES_BUNDLE, &size);
    accel_module *module = (accel_module *)1;
    bundle[8] = 99; /* the format version */
    assert_status(accel_module_load(c->device, bundle, size, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_error(), "version");
    bundle[8] = 1;
    bundle[size - 1] ^= 0xff; /* a byte of the last image: the checksum */
    assert_status(accel_module_load(c->device, bundle, size, &module),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "checksum");
    free(bundle);
}

static void test_corrupt_or_empty_images_are_refused(void **state)
{
    struct launch_case *c = *state;
    accel_module *module = (accel_module *)1;
    uint8_t garbage[256];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)(i * 7u);
    assert_status(accel_module_load(c->device, garbage, sizeof garbage, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_status(accel_module_load(c->device, garbage, 0, &module),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_module_load_file(c->device, "/nonexistent/image", &module),
                  ACCEL_ERR_NOT_FOUND);
    assert_status(accel_module_load_file(c->device, "/dev/null", &module),
                  ACCEL_ERR_MODULE);
}

static void test_zeroed_ref_argument_is_a_freed_ref(void **state)
{
    /* accel.h: a ref never valid is ACCEL_ERR_FREED_REF, not another
     * device's (device ids start at 1). */
    struct launch_case *c = *state;
    zero(c);
    accel_ref zeroed = {0};
    assert_status(add(c, c->add, zeroed, 1), ACCEL_ERR_FREED_REF);
    assert_contains(accel_last_error(), "argument 1");
    accel_ref typed = {.type = ACCEL_U32, .count = N};
    assert_status(add(c, c->add, typed, 1), ACCEL_ERR_FREED_REF);
    expect_sum(c, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_valid_launch_runs),
        T(test_bad_refs_fail_before_anything_is_enqueued),
        T(test_wrong_argument_count_or_size_is_rejected),
        T(test_bad_value_arguments_are_rejected),
        T(test_inline_values_run_and_are_checked),
        T(test_bad_geometry_is_rejected),
        T(test_null_stream_or_kernel_is_rejected),
        T(test_kernel_of_another_device_is_a_mismatch),
        T(test_kernel_lookup_is_cached_and_checked),
        T(test_modules_and_kernels_survive_a_reset),
        T(test_module_from_bundle_picks_this_device),
        T(test_bundle_without_this_device_is_not_found),
        T(test_small_copies_keep_their_place_behind_kernels),
        T(test_corrupt_bundle_is_refused),
        T(test_corrupt_or_empty_images_are_refused),
        T(test_zeroed_ref_argument_is_a_freed_ref),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
