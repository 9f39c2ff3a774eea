/*
 * The HIP plugin without an AMD GPU: what it says when there is no
 * runtime (the real runtime on a machine without a GPU, no library, a
 * library that is not a runtime, a runtime with no device), and, over the
 * fake runtimes (libfakehip.so, ROCm 6-like, and libfakehip5.so, ROCm
 * 5.2-like), what the backend-agnostic conformance suite cannot set up:
 * the device's description in both property layouts, injected runtime
 * failures, a lost device and its reset, what a module without code for
 * the device says, signatures read from code objects, a thread's own
 * current device left alone, host functions without hipLaunchHostFunc,
 * two devices, and silence on stderr.
 */
#include "support.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hip_api.h"

static const char *const fake_knobs[] = {
    "FAKE_HIP_DEVICES",   "FAKE_HIP_INIT_RESULT", "FAKE_HIP_FAIL",  "FAKE_HIP_LOSE_AT",
    "FAKE_HIP_MEMORY_MB", "FAKE_HIP_MAX_PITCH",   "FAKE_HIP_DELAY_US", "FAKE_HIP_ARCH",
};

struct hip_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
};

static void clean_environment(void)
{
    support_clean_environment();
    unsetenv("ACCEL_HIP_LIBRARY");
    unsetenv("AMD_LOG_LEVEL");
    for (size_t i = 0; i < sizeof(fake_knobs) / sizeof(fake_knobs[0]); i++)
        unsetenv(fake_knobs[i]);
}

static int setup(void **state)
{
    struct hip_case *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    clean_environment();
    setenv("ACCEL_PLUGIN_PATH", HIP_PLUGIN_PATH, 1);
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP_PATH, 1);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct hip_case *c = *state;

    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    clean_environment();
    return 0;
}

/* A host over the HIP plugin as the environment now says; the plugin's entry. */
static const accel_plugin_info *open_host(struct hip_case *c)
{
    const accel_plugin_info *hip;

    assert_status(accel_host_create(NULL, &c->host), ACCEL_OK);
    hip = support_find_plugin(c->host, "hip", 0);
    assert_non_null(hip);
    return hip;
}

/* Open device 0 of the fake and a stream on it. */
static void open_fake_device(struct hip_case *c)
{
    const accel_plugin_info *hip = open_host(c);

    if (hip->state != ACCEL_PLUGIN_LOADED)
        fail_msg("the fake runtime gave no device: %s", hip->reason ? hip->reason : "");
    assert_status(accel_device_open(c->host, "hip", 0, &c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
}

static void assert_no_device_because(struct hip_case *c, const char *fragment)
{
    const accel_plugin_info *hip = open_host(c);

    assert_int_equal(hip->state, ACCEL_PLUGIN_NO_DEVICE);
    assert_int_equal(hip->device_count, 0);
    assert_non_null(hip->reason);
    assert_contains(hip->reason, fragment);
    assert_status(accel_device_open(c->host, "hip", 0, &c->device), ACCEL_ERR_NO_DEVICE);
}

static void round_trip(struct hip_case *c, uint32_t count)
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

static double seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---- no runtime, or no device ---- */

static void test_real_runtime_without_gpu_is_no_device_quickly(void **state)
{
    struct hip_case *c = *state;
    const accel_plugin_info *hip;
    struct timespec start;
    double took;

    if (HIP_RUNTIME_PATH[0] == '\0' || access(HIP_RUNTIME_PATH, R_OK) != 0) {
        print_message("the HIP runtime (libamdhip64.so.5 or .6) is not installed\n");
        skip();
    }
    /* The plugin's own search, as a user's program would run it. */
    unsetenv("ACCEL_HIP_LIBRARY");
    clock_gettime(CLOCK_MONOTONIC, &start);
    hip = open_host(c);
    took = seconds_since(&start);
    if (hip->state == ACCEL_PLUGIN_LOADED) {
        print_message("this machine has an AMD GPU (%u device(s)): nothing to check here\n",
                      hip->device_count);
        skip();
    }
    print_message("real runtime: %s (%.3f s)\n", hip->reason, took);
    assert_int_equal(hip->state, ACCEL_PLUGIN_NO_DEVICE);
    assert_contains(hip->reason, "libamdhip64.so");
    assert_contains(hip->reason, "hipInit failed: hipError");
    /*
     * No hang. "Well under a second" is accel-info's test (hip-accel-info-runtime),
     * which no instrumentation slows: under valgrind this one takes seconds.
     */
    assert_true(took < 20.0);
    assert_status(accel_device_open(c->host, "hip", 0, &c->device), ACCEL_ERR_NO_DEVICE);
}

static void test_missing_library_names_what_was_tried(void **state)
{
    struct hip_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
    assert_no_device_because(c, "ACCEL_HIP_LIBRARY=/nonexistent/libamdhip64.so.6");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason, "No such file");
}

static void test_default_search_tries_every_name(void **state)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so"};
    struct hip_case *c = *state;

    /* Only on a machine without the runtime: with one, the plugin would find it. */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *runtime = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);

        if (runtime != NULL) {
            dlclose(runtime);
            print_message("%s is installed: the default search finds it\n", names[i]);
            skip();
        }
    }
    unsetenv("ACCEL_HIP_LIBRARY");
    assert_no_device_because(c, "libamdhip64.so.6: ");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason, "; libamdhip64.so.5: ");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason, "; libamdhip64.so: ");
}

static void test_library_that_is_not_a_runtime_lists_missing_entries(void **state)
{
    struct hip_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", "libm.so.6", 1);
    assert_no_device_because(c, "libm.so.6 is not a usable HIP runtime");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "required entry point(s): hipInit, ");
}

static void test_init_without_gpu_says_no_device_with_both_codes(void **state)
{
    struct hip_case *c = *state;

    /* What ROCm's runtime answers on a machine without an AMD GPU. */
    setenv("FAKE_HIP_INIT_RESULT", "hipErrorInvalidDevice", 1);
    assert_no_device_because(c, "hipInit failed: hipErrorInvalidDevice (101)");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "hipGetDeviceCount: hipErrorNoDevice (100): the HIP runtime found no AMD "
                    "GPU it can use");
}

static void test_runtime_with_zero_devices_says_so(void **state)
{
    struct hip_case *c = *state;

    setenv("FAKE_HIP_DEVICES", "0", 1);
    assert_no_device_because(c, "hipGetDeviceCount failed: hipErrorNoDevice (100)");
}

/* ---- the device ---- */

static void assert_fake_device(struct hip_case *c, const char *arch)
{
    accel_device_info info;

    assert_int_equal(support_find_plugin(c->host, "hip", 0)->priority, 100);
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.props.name, "Fake AMD GPU 0");
    assert_string_equal(info.props.arch, arch);
    assert_int_equal(info.props.total_memory, 1024ull << 20);
    assert_int_equal(info.props.compute_units, 110);
    assert_int_equal(info.props.caps, ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D);
    assert_int_equal(info.props.max_threads_per_block, 1024);
    assert_int_equal(info.props.max_block_dim[2], 1024);
    assert_int_equal(info.props.max_grid_dim[0], 2147483647u);
    assert_int_equal(info.props.max_grid_dim[1], 65536u);
    assert_int_equal(info.props.max_shared_bytes, 64 * 1024);
    round_trip(c, 1000);
}

static void test_device_is_described_with_its_base_target(void **state)
{
    struct hip_case *c = *state;

    /* gcnArchName "gfx90a:sramecc+:xnack-", from the ROCm 6 properties layout. */
    open_fake_device(c);
    assert_fake_device(c, "gfx90a");
}

static void test_rocm5_runtime_is_described_from_the_older_layout(void **state)
{
    struct hip_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP5_PATH, 1);
    setenv("FAKE_HIP_ARCH", "gfx1030", 1);
    open_fake_device(c);
    assert_fake_device(c, "gfx1030");
}

/* How often the fake's entry `name` has been called; 0 before it is loaded. */
static uint64_t fake_calls_in(const char *library_path, const char *name)
{
    void *library = dlopen(library_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*calls)(const char *);
    uint64_t count;

    if (library == NULL)
        return 0;
    *(void **)&calls = dlsym(library, "fake_hip_calls");
    assert_non_null(calls);
    count = calls(name);
    dlclose(library);
    return count;
}

static uint64_t fake_calls(const char *name)
{
    return fake_calls_in(FAKE_HIP_PATH, name);
}

struct callback_record {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    accel_status status;
};

static void on_complete(void *user, accel_status status)
{
    struct callback_record *r = user;

    pthread_mutex_lock(&r->lock);
    r->calls++;
    r->status = status;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* A completion callback through the plugin's host function; it runs once. */
static void callback_runs(struct hip_case *c)
{
    struct callback_record record = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
                                     ACCEL_ERR_DRIVER};

    round_trip(c, 64);
    assert_status(accel_stream_add_callback(c->stream, on_complete, &record), ACCEL_OK);
    pthread_mutex_lock(&record.lock);
    while (record.calls == 0)
        pthread_cond_wait(&record.cond, &record.lock);
    pthread_mutex_unlock(&record.lock);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_int_equal(record.calls, 1);
    assert_status(record.status, ACCEL_OK);
}

static void test_host_functions_use_hipLaunchHostFunc_where_exported(void **state)
{
    struct hip_case *c = *state;
    uint64_t before;

    open_fake_device(c);
    before = fake_calls("hipLaunchHostFunc");
    callback_runs(c);
    assert_true(fake_calls("hipLaunchHostFunc") > before);
}

static void test_host_functions_use_hipStreamAddCallback_on_rocm5(void **state)
{
    struct hip_case *c = *state;
    uint64_t before;

    /* ROCm 5.2 declares hipLaunchHostFunc in its header but does not export it. */
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP5_PATH, 1);
    open_fake_device(c);
    before = fake_calls_in(FAKE_HIP5_PATH, "hipStreamAddCallback");
    callback_runs(c);
    assert_true(fake_calls_in(FAKE_HIP5_PATH, "hipStreamAddCallback") > before);
}

/* Runtime calls of `name` made by one device-to-device layout copy. */
static uint64_t calls_for_copy(struct hip_case *c, accel_ref dst, accel_ref src,
                               const struct accel_copy_layout *layout, const char *name)
{
    uint64_t before = fake_calls(name);

    assert_status(accel_copy_on_device_layout(c->stream, dst, src, layout), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    return fake_calls(name) - before;
}

static void test_copy_layouts_take_the_fewest_runtime_calls(void **state)
{
    struct hip_case *c = *state;
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
    assert_int_equal(calls_for_copy(c, b, a, &whole_rows, "hipMemcpy3DAsync"), 1);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, "hipMemcpy2DAsync"), 6);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, "hipMemcpy3DAsync"), 0);
    assert_int_equal(calls_for_copy(c, b, a, &pitched, "hipMemcpy2DAsync"), 1);
    /* From pinned memory the host hands the layout over whole: one 2D copy. */
    assert_status(accel_host_alloc(c->device, 128 * 30, (void **)&pinned), ACCEL_OK);
    {
        uint64_t before = fake_calls("hipMemcpy2DAsync");

        assert_status(accel_copy_to_device_layout(c->stream, b, pinned, &pitched), ACCEL_OK);
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        assert_int_equal(fake_calls("hipMemcpy2DAsync") - before, 1);
    }
    accel_host_free(c->device, pinned);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
}

/* The fake's own entries, from the instance the plugin loaded. */
struct fake_entries {
    void *library;
    ahip_hipError_t (*get_device)(int *);
    ahip_hipError_t (*set_device)(int);
};

static void fake_entries_open(struct fake_entries *f)
{
    f->library = dlopen(FAKE_HIP_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(f->library);
    *(void **)&f->get_device = dlsym(f->library, "hipGetDevice");
    *(void **)&f->set_device = dlsym(f->library, "hipSetDevice");
    assert_non_null(f->get_device);
    assert_non_null(f->set_device);
}

static void *round_trip_thread(void *arg)
{
    struct hip_case *c = arg;
    struct fake_entries f;
    int device = -1;

    /* This thread works on device 1 of its own; the plugin works on device 0. */
    fake_entries_open(&f);
    assert_int_equal(f.set_device(1), AHIP_hipSuccess);
    round_trip(c, 777);
    assert_int_equal(f.get_device(&device), AHIP_hipSuccess);
    assert_int_equal(device, 1);
    dlclose(f.library);
    return NULL;
}

static void test_callers_current_device_is_left_alone(void **state)
{
    struct hip_case *c = *state;
    uint64_t sets;
    pthread_t thread;

    setenv("FAKE_HIP_DEVICES", "2", 1);
    open_fake_device(c);
    sets = fake_calls("hipSetDevice");
    assert_int_equal(pthread_create(&thread, NULL, round_trip_thread, c), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    /* Switched to device 0 and back, for each entry of the round trip. */
    assert_true(fake_calls("hipSetDevice") - sets >= 2);
}

/* ---- injected failures ---- */

static void test_failed_alloc_is_out_of_memory_and_device_stays_usable(void **state)
{
    struct hip_case *c = *state;
    accel_ref ref;

    setenv("FAKE_HIP_FAIL", "hipMalloc:1:hipErrorOutOfMemory", 1);
    open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 1000, &ref), ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_contains(accel_last_error(), "hipMalloc failed: hipErrorOutOfMemory (2)");
    assert_contains(accel_last_error(), "out of memory (fake HIP runtime)");
    assert_status(accel_device_status(c->device), ACCEL_OK);
    round_trip(c, 1000);
}

static void test_failed_copy_is_a_copy_error_with_the_native_name(void **state)
{
    struct hip_case *c = *state;
    uint32_t data[64] = {0};
    uint32_t *pinned = NULL;
    accel_ref ref;

    setenv("FAKE_HIP_FAIL", "hipMemcpyAsync:2:hipErrorInvalidValue", 1);
    open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, data, 64), ACCEL_OK);
    assert_status(accel_host_alloc(c->device, sizeof(data), (void **)&pinned), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, pinned, ref, 0, sizeof(data)), ACCEL_ERR_COPY);
    assert_contains(accel_last_error(), "hipMemcpyAsync failed: hipErrorInvalidValue (1)");
    accel_host_free(c->device, pinned);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static accel_module *load_examples(struct hip_case *c)
{
    accel_module *module = NULL;

    assert_status(accel_module_load_file(c->device, FAKE_HIP_EXAMPLES, &module), ACCEL_OK);
    return module;
}

static void launch_saxpy(struct hip_case *c, accel_kernel *saxpy, accel_ref x, accel_ref y,
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
    struct hip_case *c = *state;
    float x[256], y[256], out[256];
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy, other;

    setenv("FAKE_HIP_LOSE_AT", "hipModuleLaunchKernel:1", 1);
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
    assert_contains(accel_last_error(), "hipErrorIllegalAddress (700)");
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_ref_check(c->device, dx), ACCEL_ERR_STALE_REF);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &other), ACCEL_ERR_DEVICE_LOST);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_true(fake_calls("hipDeviceReset") >= 1);
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
    struct hip_case *c = *state;
    uint32_t *pinned = NULL;
    accel_ref ref;

    setenv("FAKE_HIP_LOSE_AT", "hipMemcpyAsync:1", 1);
    open_fake_device(c);
    assert_status(accel_host_alloc(c->device, 16 * sizeof(uint32_t), (void **)&pinned),
                  ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, 16, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, pinned, 16), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_STALE_REF);
    round_trip(c, 300);
}

static void test_reset_through_one_open_makes_the_others_lost_once(void **state)
{
    struct hip_case *c = *state;
    accel_host *other_host = NULL;
    accel_device *other = NULL;
    accel_stream *other_stream = NULL;
    uint64_t resets;
    accel_ref ref;

    open_fake_device(c);
    /* A second host in the process: the same device context. */
    assert_status(accel_host_create(NULL, &other_host), ACCEL_OK);
    assert_status(accel_device_open(other_host, "hip", 0, &other), ACCEL_OK);
    assert_status(accel_alloc(other, ACCEL_U32, 100, &ref), ACCEL_OK);

    resets = fake_calls("hipDeviceReset");
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(other), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(), "another open of the device reset its context");
    /* Its reset takes the fresh context without resetting it again ... */
    assert_status(accel_device_reset(other), ACCEL_OK);
    assert_int_equal(fake_calls("hipDeviceReset") - resets, 1);
    assert_status(accel_ref_check(other, ref), ACCEL_ERR_STALE_REF);
    assert_status(accel_stream_create(other, &other_stream), ACCEL_OK);
    /* ... so that the first open's new work survives, and both work. */
    assert_status(accel_device_status(c->device), ACCEL_OK);
    round_trip(c, 500);
    {
        struct hip_case second = {.device = other, .stream = other_stream};

        round_trip(&second, 500);
    }
    accel_stream_destroy(other_stream);
    accel_device_close(other);
    accel_host_destroy(other_host);
}

static void test_lost_device_closed_and_opened_again_starts_clean(void **state)
{
    struct hip_case *c = *state;
    uint64_t resets;

    setenv("FAKE_HIP_LOSE_AT", "hipStreamSynchronize:1", 1);
    open_fake_device(c);
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    accel_stream_destroy(c->stream);
    c->stream = NULL;
    accel_device_close(c->device);
    c->device = NULL;
    /* HIP keeps a poisoned context until a reset: the next first open resets it. */
    resets = fake_calls("hipDeviceReset");
    assert_status(accel_device_open(c->host, "hip", 0, &c->device), ACCEL_OK);
    assert_int_equal(fake_calls("hipDeviceReset") - resets, 1);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    round_trip(c, 64);
}

/* ---- modules ---- */

static void test_module_without_code_for_the_device_says_what_it_holds(void **state)
{
    struct hip_case *c = *state;
    accel_module *module = NULL;

    open_fake_device(c);
    assert_status(accel_module_load_file(c->device, FAKE_HIP_EXAMPLES_GFX906, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_error(), "hipModuleLoadData failed: hipErrorNoBinaryForGpu (209)");
    assert_contains(accel_last_error(), "the bundle holds code for gfx906, gfx908; the device "
                                        "is gfx90a");
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_image_that_is_no_code_object_never_reaches_the_runtime(void **state)
{
    struct hip_case *c = *state;
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    accel_module *module = NULL;
    uint64_t loads;

    open_fake_device(c);
    loads = fake_calls("hipModuleLoadData");
    assert_status(accel_module_load(c->device, ptx, sizeof(ptx) - 1, &module), ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "neither an AMD code object nor a clang offload bundle");
    assert_int_equal(fake_calls("hipModuleLoadData"), loads);
}

static void test_launch_arguments_are_checked_against_the_code_object(void **state)
{
    struct hip_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy;
    uint32_t n = 16;
    uint64_t wide = 16;
    float a = 1.0f;
    uint64_t launches;

    open_fake_device(c);
    module = load_examples(c);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    launches = fake_calls("hipModuleLaunchKernel");
    {
        accel_arg extra[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                             ACCEL_ARG_REF(dy), ACCEL_ARG_VALUE(n)};
        accel_arg wrong_size[] = {ACCEL_ARG_VALUE(wide), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                                  ACCEL_ARG_REF(dy)};

        /* The metadata says 4 parameters of 4, 4, 8 and 8 bytes; the hidden ones are not the caller's. */
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){1, 1, 1},
                                   (accel_dim3){16, 1, 1}, 0, extra, 5),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){1, 1, 1},
                                   (accel_dim3){16, 1, 1}, 0, wrong_size, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){1, 1, 1},
                                   (accel_dim3){16, 1, 1}, 0, extra, 4),
                      ACCEL_OK);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_int_equal(fake_calls("hipModuleLaunchKernel") - launches, 1);
    accel_module_unload(module);
}

/* ---- devices ---- */

static void test_two_devices_copy_between_them(void **state)
{
    struct hip_case *c = *state;
    uint32_t in[500], out[500] = {0};
    accel_device *second = NULL;
    accel_ref a, b;

    setenv("FAKE_HIP_DEVICES", "2", 1);
    open_fake_device(c);
    assert_int_equal(support_find_plugin(c->host, "hip", 0)->device_count, 2);
    assert_status(accel_device_open(c->host, "hip", 1, &second), ACCEL_OK);
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
    struct hip_case *c = *state;
    char path[] = "/tmp/accel-hip-stderr-XXXXXX";
    int saved = dup(STDERR_FILENO);
    int capture = mkstemp(path);
    accel_module *module = NULL;
    accel_ref ref;
    off_t size;

    assert_true(saved >= 0 && capture >= 0);
    fflush(stderr);
    assert_true(dup2(capture, STDERR_FILENO) >= 0);
    /* Failures of every kind, through the plugin; the real runtime too, where installed. */
    setenv("ACCEL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
    open_host(c);
    accel_host_destroy(c->host);
    c->host = NULL;
    if (HIP_RUNTIME_PATH[0] != '\0' && access(HIP_RUNTIME_PATH, R_OK) == 0) {
        setenv("ACCEL_HIP_LIBRARY", HIP_RUNTIME_PATH, 1);
        open_host(c);
        accel_host_destroy(c->host);
        c->host = NULL;
    }
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP_PATH, 1);
    setenv("FAKE_HIP_FAIL", "hipMalloc:1:hipErrorOutOfMemory", 1);
    setenv("FAKE_HIP_LOSE_AT", "hipStreamSynchronize:1", 1);
    open_fake_device(c);
    accel_alloc(c->device, ACCEL_U32, 10, &ref);
    accel_module_load_file(c->device, FAKE_HIP_EXAMPLES_GFX906, &module);
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
        T(test_real_runtime_without_gpu_is_no_device_quickly),
        T(test_missing_library_names_what_was_tried),
        T(test_default_search_tries_every_name),
        T(test_library_that_is_not_a_runtime_lists_missing_entries),
        T(test_init_without_gpu_says_no_device_with_both_codes),
        T(test_runtime_with_zero_devices_says_so),
        T(test_device_is_described_with_its_base_target),
        T(test_rocm5_runtime_is_described_from_the_older_layout),
        T(test_host_functions_use_hipLaunchHostFunc_where_exported),
        T(test_host_functions_use_hipStreamAddCallback_on_rocm5),
        T(test_copy_layouts_take_the_fewest_runtime_calls),
        T(test_callers_current_device_is_left_alone),
        T(test_failed_alloc_is_out_of_memory_and_device_stays_usable),
        T(test_failed_copy_is_a_copy_error_with_the_native_name),
        T(test_faulting_kernel_loses_the_device_until_reset),
        T(test_loss_at_a_copy_is_device_lost_and_reset_recovers),
        T(test_reset_through_one_open_makes_the_others_lost_once),
        T(test_lost_device_closed_and_opened_again_starts_clean),
        T(test_module_without_code_for_the_device_says_what_it_holds),
        T(test_image_that_is_no_code_object_never_reaches_the_runtime),
        T(test_launch_arguments_are_checked_against_the_code_object),
        T(test_two_devices_copy_between_them),
        T(test_plugin_never_writes_to_stderr),
    };
#undef T
    return cmocka_run_group_tests_name("hip-plugin", tests, NULL, NULL);
}
