/*
 * The CUDA plugin without a GPU: what it says when there is no driver (no
 * library, the toolkit's stub library, a library that is not a driver, a
 * driver with no device), and, over the fake driver (libfakecuda.so), what
 * the backend-agnostic conformance suite cannot set up: the device's
 * description, injected driver failures, a lost context and its reset, the
 * JIT's log in an error, a caller's own current context left alone, entry
 * points found without cuGetProcAddress, two devices, and silence on stderr.
 */
#include "support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"

static const char *const fake_knobs[] = {
    "FAKE_CUDA_DEVICES",   "FAKE_CUDA_INIT_RESULT",     "FAKE_CUDA_FAIL",
    "FAKE_CUDA_LOSE_AT",   "FAKE_CUDA_MEMORY_MB",       "FAKE_CUDA_MAX_PITCH",
    "FAKE_CUDA_DELAY_US",  "FAKE_CUDA_NO_PROC_ADDRESS", "FAKE_CUDA_NO_PARAM_INFO",
};

struct cuda_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
};

static void clean_environment(void)
{
    support_clean_environment();
    unsetenv("ACCEL_CUDA_LIBRARY");
    for (size_t i = 0; i < sizeof(fake_knobs) / sizeof(fake_knobs[0]); i++)
        unsetenv(fake_knobs[i]);
}

static int setup(void **state)
{
    struct cuda_case *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    clean_environment();
    setenv("ACCEL_PLUGIN_PATH", CUDA_PLUGIN_PATH, 1);
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct cuda_case *c = *state;

    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    clean_environment();
    return 0;
}

/* A host over the CUDA plugin as the environment now says; the plugin's entry. */
static const accel_plugin_info *open_host(struct cuda_case *c)
{
    const accel_plugin_info *cuda;

    assert_status(accel_host_create(NULL, &c->host), ACCEL_OK);
    cuda = support_find_plugin(c->host, "cuda", 0);
    assert_non_null(cuda);
    return cuda;
}

/* Open device 0 of the fake and a stream on it. */
static void open_fake_device(struct cuda_case *c)
{
    const accel_plugin_info *cuda = open_host(c);

    if (cuda->state != ACCEL_PLUGIN_LOADED)
        fail_msg("the fake driver gave no device: %s", cuda->reason ? cuda->reason : "");
    assert_status(accel_device_open(c->host, "cuda", 0, &c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
}

static void assert_no_device_because(struct cuda_case *c, const char *fragment)
{
    const accel_plugin_info *cuda = open_host(c);

    assert_int_equal(cuda->state, ACCEL_PLUGIN_NO_DEVICE);
    assert_int_equal(cuda->device_count, 0);
    assert_non_null(cuda->reason);
    assert_contains(cuda->reason, fragment);
    assert_status(accel_device_open(c->host, "cuda", 0, &c->device), ACCEL_ERR_NO_DEVICE);
}

static void round_trip(struct cuda_case *c, uint32_t count)
{
    uint32_t *in = malloc(count * sizeof(uint32_t)), *out = calloc(count, sizeof(uint32_t));
    accel_ref ref;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < count; i++)
        in[i] = i * 2654435761u;
    assert_status(accel_alloc(c->device, ACCEL_U32, count, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, count), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, count), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, count * sizeof(uint32_t));
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

/* ---- no driver ---- */

static void test_stub_library_is_no_device_and_says_stub(void **state)
{
    struct cuda_case *c = *state;

    if (CUDA_STUB_PATH[0] == '\0' || access(CUDA_STUB_PATH, R_OK) != 0) {
        print_message("no CUDA toolkit stub library (stubs/libcuda.so) is installed\n");
        skip();
    }
    setenv("ACCEL_CUDA_LIBRARY", CUDA_STUB_PATH, 1);
    assert_no_device_because(c, "CUDA_ERROR_STUB_LIBRARY");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "the CUDA stub library, not a driver");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason, "cuInit");
}

static void test_missing_library_names_what_was_tried(void **state)
{
    struct cuda_case *c = *state;

    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    assert_no_device_because(c, "ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason, "No such file");
}

static void test_default_search_tries_both_names(void **state)
{
    struct cuda_case *c = *state;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

    /* Only on a machine without a driver: with one, the plugin would find it. */
    if (driver != NULL) {
        dlclose(driver);
        skip();
    }
    unsetenv("ACCEL_CUDA_LIBRARY");
    assert_no_device_because(c, "libcuda.so.1: ");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason, "; libcuda.so: ");
}

static void test_library_that_is_not_a_driver_lists_missing_entries(void **state)
{
    struct cuda_case *c = *state;

    setenv("ACCEL_CUDA_LIBRARY", "libm.so.6", 1);
    assert_no_device_because(c, "libm.so.6 is not a usable CUDA driver");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "required entry point(s): cuInit, ");
}

static void test_driver_without_device_says_no_device(void **state)
{
    struct cuda_case *c = *state;

    setenv("FAKE_CUDA_INIT_RESULT", "CUDA_ERROR_NO_DEVICE", 1);
    assert_no_device_because(c, "cuInit failed: CUDA_ERROR_NO_DEVICE (100)");
}

static void test_driver_with_zero_devices_says_so(void **state)
{
    struct cuda_case *c = *state;

    setenv("FAKE_CUDA_DEVICES", "0", 1);
    assert_no_device_because(c, "reports no device");
}

/* ---- the device ---- */

static void test_fake_device_is_described_from_the_driver(void **state)
{
    struct cuda_case *c = *state;
    accel_device_info info;

    open_fake_device(c);
    assert_int_equal(support_find_plugin(c->host, "cuda", 0)->priority, 100);
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.props.name, "Fake CUDA Device 0");
    assert_string_equal(info.props.arch, "sm_90");
    assert_int_equal(info.props.total_memory, 1024ull << 20);
    assert_int_equal(info.props.compute_units, 4);
    assert_int_equal(info.props.caps, ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D);
    assert_int_equal(info.props.max_threads_per_block, 1024);
    assert_int_equal(info.props.max_block_dim[2], 64);
    assert_int_equal(info.props.max_grid_dim[0], 2147483647u);
    assert_int_equal(info.props.max_shared_bytes, 48 * 1024);
    round_trip(c, 1000);
}

/* How often the fake's entry `name` has been called; 0 before it is loaded. */
static uint64_t fake_calls(const char *name)
{
    void *library = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*calls)(const char *);
    uint64_t count;

    if (library == NULL)
        return 0;
    *(void **)&calls = dlsym(library, "fake_cuda_calls");
    assert_non_null(calls);
    count = calls(name);
    dlclose(library);
    return count;
}

static void test_entries_come_through_cuGetProcAddress(void **state)
{
    struct cuda_case *c = *state;
    uint64_t before = fake_calls("cuGetProcAddress_v2");

    open_fake_device(c);
    /* One call per entry of cuda_symbol_table.h. */
    assert_true(fake_calls("cuGetProcAddress_v2") - before >= 30);
    round_trip(c, 100);
}

static void test_entries_come_by_name_without_cuGetProcAddress(void **state)
{
    struct cuda_case *c = *state;
    uint64_t before = fake_calls("cuGetProcAddress_v2");

    setenv("FAKE_CUDA_NO_PROC_ADDRESS", "1", 1);
    open_fake_device(c);
    /* Asked once, refused, not asked again. */
    assert_int_equal(fake_calls("cuGetProcAddress_v2") - before, 1);
    round_trip(c, 4096);
}

/* Driver calls of `name` made by one device-to-device layout copy. */
static uint64_t calls_for_copy(struct cuda_case *c, accel_ref dst, accel_ref src,
                               const struct accel_copy_layout *layout, const char *name)
{
    uint64_t before = fake_calls(name);

    assert_status(accel_copy_on_device_layout(c->stream, dst, src, layout), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    return fake_calls(name) - before;
}

static void test_copy_layouts_take_the_fewest_driver_calls(void **state)
{
    struct cuda_case *c = *state;
    struct accel_copy_layout whole_rows = {
        .row_bytes = 48, .rows = 10, .depth = 6, .src_pitch = 64, .dst_pitch = 256,
        .src_slice_pitch = 64 * 12, .dst_slice_pitch = 256 * 10};
    struct accel_copy_layout odd_slices = whole_rows;
    struct accel_copy_layout pitched = {
        .row_bytes = 100, .rows = 30, .depth = 1, .src_pitch = 128, .dst_pitch = 512};
    unsigned char *pinned = NULL;
    accel_ref a, b;

    open_fake_device(c);
    odd_slices.src_slice_pitch = 64 * 10 + 7;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 1 << 16, &a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 1 << 16, &b), ACCEL_OK);
    assert_int_equal(calls_for_copy(c, b, a, &whole_rows, "cuMemcpy3DAsync_v2"), 1);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, "cuMemcpy2DAsync_v2"), 6);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, "cuMemcpy3DAsync_v2"), 0);
    assert_int_equal(calls_for_copy(c, b, a, &pitched, "cuMemcpy2DAsync_v2"), 1);
    /* From pinned memory the host hands the layout over whole: one 2D copy. */
    assert_status(accel_host_alloc(c->device, 128 * 30, (void **)&pinned), ACCEL_OK);
    {
        uint64_t before = fake_calls("cuMemcpy2DAsync_v2");

        assert_status(accel_copy_to_device_layout(c->stream, b, pinned, &pitched), ACCEL_OK);
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        assert_int_equal(fake_calls("cuMemcpy2DAsync_v2") - before, 1);
    }
    accel_host_free(c->device, pinned);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
}

static void *round_trip_thread(void *arg)
{
    round_trip(arg, 777);
    return NULL;
}

static void test_context_is_pushed_for_threads_without_it_and_popped(void **state)
{
    struct cuda_case *c = *state;
    uint64_t pushes, pops;
    pthread_t thread;

    open_fake_device(c);
    pushes = fake_calls("cuCtxPushCurrent_v2");
    pops = fake_calls("cuCtxPopCurrent_v2");
    assert_int_equal(pthread_create(&thread, NULL, round_trip_thread, c), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_true(fake_calls("cuCtxPushCurrent_v2") > pushes);
    assert_int_equal(fake_calls("cuCtxPushCurrent_v2") - pushes,
                     fake_calls("cuCtxPopCurrent_v2") - pops);
}

/* ---- injected failures ---- */

static void test_failed_alloc_is_out_of_memory_and_device_stays_usable(void **state)
{
    struct cuda_case *c = *state;
    accel_ref ref;

    setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2:1:CUDA_ERROR_OUT_OF_MEMORY", 1);
    open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 1000, &ref), ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_contains(accel_last_error(), "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY");
    assert_status(accel_device_status(c->device), ACCEL_OK);
    round_trip(c, 1000);
}

static void test_failed_copy_is_a_copy_error_with_the_native_name(void **state)
{
    struct cuda_case *c = *state;
    uint32_t data[64] = {0};
    accel_ref ref;

    setenv("FAKE_CUDA_FAIL", "cuMemcpyDtoHAsync_v2:1:CUDA_ERROR_INVALID_VALUE", 1);
    open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, data, 64), ACCEL_OK);
    {
        uint32_t *pinned = NULL;
        accel_status status;

        assert_status(accel_host_alloc(c->device, sizeof(data), (void **)&pinned), ACCEL_OK);
        status = accel_copy_to_host(c->stream, pinned, ref, 0, sizeof(data));
        assert_status(status, ACCEL_ERR_COPY);
        assert_contains(accel_last_error(), "cuMemcpyDtoHAsync_v2 failed: CUDA_ERROR_INVALID_VALUE");
        accel_host_free(c->device, pinned);
    }
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static accel_module *load_examples(struct cuda_case *c)
{
    accel_module *module = NULL;

    assert_status(accel_module_load_file(c->device, EXAMPLES_CPU_IMAGE, &module), ACCEL_OK);
    return module;
}

static void launch_saxpy(struct cuda_case *c, accel_kernel *saxpy, accel_ref x, accel_ref y,
                         uint32_t n, accel_status expected)
{
    float a = 2.0f;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(x),
                        ACCEL_ARG_REF(y)};

    assert_status(accel_launch(c->stream, saxpy, (accel_dim3){(n + 63) / 64, 1, 1},
                               (accel_dim3){64, 1, 1}, 0, args, 4),
                  expected);
}

static void test_faulting_kernel_loses_the_device_until_reset(void **state)
{
    struct cuda_case *c = *state;
    float x[256], y[256], out[256];
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy, other;

    setenv("FAKE_CUDA_LOSE_AT", "cuLaunchKernel:1", 1);
    open_fake_device(c);
    module = load_examples(c);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    for (int i = 0; i < 256; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, 256), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, 256), ACCEL_OK);
    /* As on a GPU: the launch is accepted, the fault shows at the next wait. */
    launch_saxpy(c, saxpy, dx, dy, 256, ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_ref_check(c->device, dx), ACCEL_ERR_STALE_REF);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &other), ACCEL_ERR_DEVICE_LOST);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, dy), ACCEL_ERR_STALE_REF);
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, 256), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, 256), ACCEL_OK);
    /* The host reloaded the module behind the same handles. */
    launch_saxpy(c, saxpy, dx, dy, 256, ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, dy, 256), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 256; i++)
        assert_true(out[i] == 2.0f * x[i] + 1.0f);
    accel_module_unload(module);
}

static void test_loss_at_a_copy_is_device_lost_and_reset_recovers(void **state)
{
    struct cuda_case *c = *state;
    uint32_t data[16] = {0};
    uint32_t *pinned = NULL;
    accel_ref ref;

    setenv("FAKE_CUDA_LOSE_AT", "cuMemcpyHtoDAsync_v2:1", 1);
    open_fake_device(c);
    assert_status(accel_host_alloc(c->device, sizeof(data), (void **)&pinned), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, 16, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, pinned, 16), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_STALE_REF);
    round_trip(c, 300);
}

static void test_reset_through_one_open_makes_the_others_lost_once(void **state)
{
    struct cuda_case *c = *state;
    accel_host *other_host = NULL;
    accel_device *other = NULL;
    accel_stream *other_stream = NULL;
    accel_ref ref;

    open_fake_device(c);
    /* A second host in the process: the same primary context. */
    assert_status(accel_host_create(NULL, &other_host), ACCEL_OK);
    assert_status(accel_device_open(other_host, "cuda", 0, &other), ACCEL_OK);
    assert_status(accel_alloc(other, ACCEL_U32, 100, &ref), ACCEL_OK);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(other), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(), "another open of the device reset its context");
    /* Its reset takes the fresh context without resetting it again ... */
    assert_status(accel_device_reset(other), ACCEL_OK);
    assert_status(accel_ref_check(other, ref), ACCEL_ERR_STALE_REF);
    assert_status(accel_stream_create(other, &other_stream), ACCEL_OK);
    /* ... so that the first open's new work survives, and both work. */
    assert_status(accel_device_status(c->device), ACCEL_OK);
    round_trip(c, 500);
    {
        struct cuda_case second = {.device = other, .stream = other_stream};

        round_trip(&second, 500);
    }
    accel_stream_destroy(other_stream);
    accel_device_close(other);
    accel_host_destroy(other_host);
}

static void test_lost_device_closed_and_opened_again_starts_clean(void **state)
{
    struct cuda_case *c = *state;

    setenv("FAKE_CUDA_LOSE_AT", "cuStreamSynchronize:1", 1);
    open_fake_device(c);
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    accel_stream_destroy(c->stream);
    c->stream = NULL;
    accel_device_close(c->device);
    c->device = NULL;
    /* Every open let go: the driver made a new context, and the plugin knows. */
    assert_status(accel_device_open(c->host, "cuda", 0, &c->device), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    round_trip(c, 64);
}

/* ---- modules ---- */

static void test_jit_log_is_in_the_error_detail(void **state)
{
    struct cuda_case *c = *state;
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    accel_module *module = NULL;

    open_fake_device(c);
    /* Without the NUL, as a file holds it: the plugin must add one. */
    assert_status(accel_module_load(c->device, ptx, sizeof(ptx) - 1, &module), ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX");
    assert_contains(accel_last_error(), "ptxas");
}

static void test_kernel_signature_unknown_without_param_info(void **state)
{
    struct cuda_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy;
    uint32_t n = 16;
    float a = 1.0f;

    setenv("FAKE_CUDA_NO_PARAM_INFO", "1", 1);
    open_fake_device(c);
    module = load_examples(c);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    {
        /* Unchecked by the host, and harmless: the driver takes the kernel's own count. */
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                            ACCEL_ARG_REF(dy), ACCEL_ARG_VALUE(n)};

        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){1, 1, 1},
                                   (accel_dim3){16, 1, 1}, 0, args, 5),
                      ACCEL_OK);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    accel_module_unload(module);
}

/* ---- contexts and devices ---- */

/* The fake's own entries, from the instance the plugin loaded. */
struct fake_entries {
    void *library;
    acu_CUresult (*retain)(acu_CUcontext *, acu_CUdevice);
    acu_CUresult (*release)(acu_CUdevice);
    acu_CUresult (*push)(acu_CUcontext);
    acu_CUresult (*pop)(acu_CUcontext *);
    acu_CUresult (*current)(acu_CUcontext *);
};

static void fake_entries_open(struct fake_entries *f)
{
    f->library = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(f->library);
    *(void **)&f->retain = dlsym(f->library, "cuDevicePrimaryCtxRetain");
    *(void **)&f->release = dlsym(f->library, "cuDevicePrimaryCtxRelease_v2");
    *(void **)&f->push = dlsym(f->library, "cuCtxPushCurrent_v2");
    *(void **)&f->pop = dlsym(f->library, "cuCtxPopCurrent_v2");
    *(void **)&f->current = dlsym(f->library, "cuCtxGetCurrent");
    assert_non_null(f->retain);
    assert_non_null(f->current);
}

static void test_callers_current_context_is_left_alone(void **state)
{
    struct cuda_case *c = *state;
    struct fake_entries f;
    acu_CUcontext mine = NULL, now = NULL;

    setenv("FAKE_CUDA_DEVICES", "2", 1);
    open_fake_device(c);
    fake_entries_open(&f);
    /* The application has device 1's context current; the plugin works on device 0. */
    assert_int_equal(f.retain(&mine, 1), ACU_CUDA_SUCCESS);
    assert_int_equal(f.push(mine), ACU_CUDA_SUCCESS);
    round_trip(c, 2000);
    assert_int_equal(f.current(&now), ACU_CUDA_SUCCESS);
    assert_ptr_equal(now, mine);
    assert_int_equal(f.pop(&now), ACU_CUDA_SUCCESS);
    assert_int_equal(f.release(1), ACU_CUDA_SUCCESS);
    dlclose(f.library);
}

static void test_two_devices_copy_between_them(void **state)
{
    struct cuda_case *c = *state;
    uint32_t in[500], out[500] = {0};
    accel_device *second = NULL;
    accel_ref a, b;

    setenv("FAKE_CUDA_DEVICES", "2", 1);
    open_fake_device(c);
    assert_int_equal(support_find_plugin(c->host, "cuda", 0)->device_count, 2);
    assert_status(accel_device_open(c->host, "cuda", 1, &second), ACCEL_OK);
    for (int i = 0; i < 500; i++)
        in[i] = (uint32_t)i * 11u;
    assert_status(accel_alloc(c->device, ACCEL_U32, 500, &a), ACCEL_OK);
    assert_status(accel_alloc(second, ACCEL_U32, 500, &b), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, a, in, 500), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, b, 0, a, 0, sizeof(in)), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    {
        accel_stream *stream = NULL;

        assert_status(accel_stream_create(second, &stream), ACCEL_OK);
        assert_status(accel_copy_out(stream, out, b, 500), ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        accel_stream_destroy(stream);
    }
    assert_memory_equal(in, out, sizeof(in));
    accel_device_close(second);
}

/* ---- silence ---- */

static void test_plugin_never_writes_to_stderr(void **state)
{
    struct cuda_case *c = *state;
    char path[] = "/tmp/accel-cuda-stderr-XXXXXX";
    int saved = dup(STDERR_FILENO);
    int capture = mkstemp(path);
    accel_ref ref;
    off_t size;

    assert_true(saved >= 0 && capture >= 0);
    fflush(stderr);
    assert_true(dup2(capture, STDERR_FILENO) >= 0);
    /* Failures of every kind, through the plugin. */
    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    accel_host_destroy(c->host);
    c->host = NULL;
    open_host(c);
    accel_host_destroy(c->host);
    c->host = NULL;
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2:1:CUDA_ERROR_OUT_OF_MEMORY", 1);
    setenv("FAKE_CUDA_LOSE_AT", "cuStreamSynchronize:1", 1);
    open_fake_device(c);
    accel_alloc(c->device, ACCEL_U32, 10, &ref);
    accel_stream_sync(c->stream);
    accel_device_reset(c->device);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    size = lseek(capture, 0, SEEK_END);
    close(capture);
    unlink(path);
    assert_int_equal(size, 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_stub_library_is_no_device_and_says_stub),
        T(test_missing_library_names_what_was_tried),
        T(test_default_search_tries_both_names),
        T(test_library_that_is_not_a_driver_lists_missing_entries),
        T(test_driver_without_device_says_no_device),
        T(test_driver_with_zero_devices_says_so),
        T(test_fake_device_is_described_from_the_driver),
        T(test_entries_come_through_cuGetProcAddress),
        T(test_entries_come_by_name_without_cuGetProcAddress),
        T(test_copy_layouts_take_the_fewest_driver_calls),
        T(test_context_is_pushed_for_threads_without_it_and_popped),
        T(test_failed_alloc_is_out_of_memory_and_device_stays_usable),
        T(test_failed_copy_is_a_copy_error_with_the_native_name),
        T(test_faulting_kernel_loses_the_device_until_reset),
        T(test_loss_at_a_copy_is_device_lost_and_reset_recovers),
        T(test_reset_through_one_open_makes_the_others_lost_once),
        T(test_lost_device_closed_and_opened_again_starts_clean),
        T(test_jit_log_is_in_the_error_detail),
        T(test_kernel_signature_unknown_without_param_info),
        T(test_callers_current_context_is_left_alone),
        T(test_two_devices_copy_between_them),
        T(test_plugin_never_writes_to_stderr),
    };
#undef T
    return cmocka_run_group_tests_name("cuda-plugin", tests, NULL, NULL);
}
