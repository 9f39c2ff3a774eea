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
#include "plugin_case.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hip_api.h"

static const char *const fake_knobs[] = {
    "FAKE_HIP_DEVICES",
    "FAKE_HIP_INIT_RESULT",
    "FAKE_HIP_FAIL",
    "FAKE_HIP_LOSE_AT",
    "FAKE_HIP_MEMORY_MB",
    "FAKE_HIP_MAX_PITCH",
    "FAKE_HIP_DELAY_US",
    "FAKE_HIP_ARCH",
    "FAKE_HIP_KERNEL_LIMITS",
    "AMD_LOG_LEVEL",
    NULL,
};

static const struct plugin_case_kind hip_kind = {
    .plugin = "hip",
    .plugin_path = HIP_PLUGIN_PATH,
    .library_env = "ACCEL_HIP_LIBRARY",
    .fake_path = FAKE_HIP_PATH,
    .calls_symbol = "fake_hip_calls",
    .registered_symbol = "fake_hip_registered_bytes",
    .unregister_call = "hipHostUnregister",
    .knobs = fake_knobs,
};

static int setup(void **state)
{
    return plugin_case_setup(state, &hip_kind);
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---- no runtime, or no device ---- */

/*
 * Without /dev/kfd and without ACCEL_HIP_LIBRARY the runtime is never
 * loaded: no device, "no device node". Run first, so that no earlier test
 * of this process has loaded the runtime.
 */
static void
test_no_device_node_is_no_device_without_loading_the_runtime(void **state)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so"};
    struct plugin_case *c = *state;

    unsetenv("ACCEL_HIP_LIBRARY");
    setenv("ACCEL_HIP_DEVICE_NODES", "/nonexistent/kfd:/nonexistent/dri", 1);
    plugin_case_assert_no_device_because(c, "no device node (/nonexistent/kfd, "
                                            "/nonexistent/dri: none exists)");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "ACCEL_HIP_LIBRARY set loads it regardless");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_null(dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD));
    /* The default list names /dev/kfd; a machine that has it is tested elsewhere. */
    if (access("/dev/kfd", F_OK) != 0) {
        unsetenv("ACCEL_HIP_DEVICE_NODES");
        accel_host_destroy(c->host);
        c->host = NULL;
        plugin_case_assert_no_device_because(
            c, "no device node (/dev/kfd: none exists)");
    }
}

static void test_real_runtime_without_gpu_is_no_device_quickly(void **state)
{
    struct plugin_case *c = *state;
    const accel_plugin_info *hip;
    struct timespec start;
    double took;

    if (HIP_RUNTIME_PATH[0] == '\0' || access(HIP_RUNTIME_PATH, R_OK) != 0) {
        print_message(
            "the HIP runtime (libamdhip64.so.5 or .6) is not installed\n");
        skip();
    }
    /* The plugin's own search, as a user's program would run it, past the
     * device-node check (a node in place, as on a machine with the driver). */
    unsetenv("ACCEL_HIP_LIBRARY");
    setenv("ACCEL_HIP_DEVICE_NODES", "/dev/null", 1);
    clock_gettime(CLOCK_MONOTONIC, &start);
    hip = plugin_case_open_host(c);
    took = seconds_since(&start);
    if (hip->state == ACCEL_PLUGIN_LOADED) {
        print_message("this machine has an AMD GPU (%u device(s)): nothing to "
                      "check here\n",
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
    assert_status(accel_device_open(c->host, "hip", 0, &c->device),
                  ACCEL_ERR_NO_DEVICE);
}

static void test_missing_library_names_what_was_tried(void **state)
{
    struct plugin_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
    plugin_case_assert_no_device_because(
        c, "ACCEL_HIP_LIBRARY=/nonexistent/libamdhip64.so.6");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "No such file");
}

static void test_default_search_tries_every_name(void **state)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so"};
    struct plugin_case *c = *state;

    /* Only on a machine without the runtime: with one, the plugin would find it. */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *runtime = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);

        if (runtime != NULL) {
            dlclose(runtime);
            print_message("%s is installed: the default search finds it\n",
                          names[i]);
            skip();
        }
    }
    unsetenv("ACCEL_HIP_LIBRARY");
    setenv("ACCEL_HIP_DEVICE_NODES", "/nonexistent/kfd:/dev/null", 1);
    plugin_case_assert_no_device_because(c, "libamdhip64.so.6: ");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "; libamdhip64.so.5: ");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "; libamdhip64.so: ");
}

static void test_library_that_is_not_a_runtime_lists_missing_entries(void **state)
{
    struct plugin_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", "libm.so.6", 1);
    plugin_case_assert_no_device_because(
        c, "libm.so.6 is not a usable HIP runtime");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "required entry point(s): hipInit, ");
}

static void test_init_without_gpu_says_no_device_with_both_codes(void **state)
{
    struct plugin_case *c = *state;

    /* What ROCm's runtime answers on a machine without an AMD GPU. */
    setenv("FAKE_HIP_INIT_RESULT", "hipErrorInvalidDevice", 1);
    plugin_case_assert_no_device_because(
        c, "hipInit failed: hipErrorInvalidDevice (101)");
    assert_contains(support_find_plugin(c->host, "hip", 0)->reason,
                    "hipGetDeviceCount: hipErrorNoDevice (100): the HIP "
                    "runtime found no AMD "
                    "GPU it can use");
}

static void test_runtime_with_zero_devices_says_so(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_HIP_DEVICES", "0", 1);
    plugin_case_assert_no_device_because(
        c, "hipGetDeviceCount failed: hipErrorNoDevice (100)");
}

/* ---- the device ---- */

static void assert_fake_device(struct plugin_case *c, const char *arch)
{
    accel_device_info info;

    assert_int_equal(support_find_plugin(c->host, "hip", 0)->priority, 100);
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.props.name, "Fake AMD GPU 0");
    assert_string_equal(info.props.arch, arch);
    assert_int_equal(info.props.total_memory, 1024ull << 20);
    assert_int_equal(info.props.compute_units, 110);
    assert_int_equal(info.props.caps,
                     ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D);
    assert_int_equal(info.props.max_threads_per_block, 1024);
    assert_int_equal(info.props.max_block_dim[2], 1024);
    assert_int_equal(info.props.max_grid_dim[0], 2147483647u);
    assert_int_equal(info.props.max_grid_dim[1], 65536u);
    assert_int_equal(info.props.max_shared_bytes, 64 * 1024);
    plugin_case_round_trip(c, 1000);
}

static void test_device_is_described_with_its_base_target(void **state)
{
    struct plugin_case *c = *state;

    /* gcnArchName "gfx90a:sramecc+:xnack-", from the ROCm 6 properties layout. */
    plugin_case_open_fake_device(c);
    assert_fake_device(c, "gfx90a");
}

static void test_rocm5_runtime_is_described_from_the_older_layout(void **state)
{
    struct plugin_case *c = *state;

    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP5_PATH, 1);
    setenv("FAKE_HIP_ARCH", "gfx1030", 1);
    plugin_case_open_fake_device(c);
    assert_fake_device(c, "gfx1030");
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
static void callback_runs(struct plugin_case *c)
{
    struct callback_record record = {PTHREAD_MUTEX_INITIALIZER,
                                     PTHREAD_COND_INITIALIZER, 0,
                                     ACCEL_ERR_DRIVER};

    plugin_case_round_trip(c, 64);
    assert_status(accel_stream_add_callback(c->stream, on_complete, &record),
                  ACCEL_OK);
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
    struct plugin_case *c = *state;
    uint64_t before;

    plugin_case_open_fake_device(c);
    before = plugin_case_fake_calls(c, "hipLaunchHostFunc");
    callback_runs(c);
    assert_true(plugin_case_fake_calls(c, "hipLaunchHostFunc") > before);
}

static void test_host_functions_use_hipStreamAddCallback_on_rocm5(void **state)
{
    struct plugin_case *c = *state;
    uint64_t before;

    /* ROCm 5.2 declares hipLaunchHostFunc in its header but does not export it. */
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP5_PATH, 1);
    plugin_case_open_fake_device(c);
    before = plugin_case_fake_calls_in(c, FAKE_HIP5_PATH, "hipStreamAddCallback");
    callback_runs(c);
    assert_true(plugin_case_fake_calls_in(c, FAKE_HIP5_PATH,
                                          "hipStreamAddCallback") > before);
}

static void test_copy_layouts_take_the_fewest_runtime_calls(void **state)
{
    struct plugin_case *c = *state;

    plugin_case_open_fake_device(c);
    plugin_case_check_copy_layouts(c, "hipMemcpy3DAsync", "hipMemcpy2DAsync");
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

static void test_native_handles_are_the_ordinal_and_the_hip_stream(void **state)
{
    struct plugin_case *c = *state;
    struct plugin_case_native native;
    unsigned char untouched[sizeof(struct accel_native_handles)];

    plugin_case_native_handles(c, "FAKE_HIP_DEVICES", 1, &native);
    assert_int_equal(native.whole.kind, ACCEL_NATIVE_HIP);
    assert_int_equal(native.whole.device_ordinal, 1);
    /* HIP has no context to hand over: the ordinal is the binding. */
    assert_null(native.whole.context);
    assert_non_null(native.whole.stream);
    assert_ptr_equal(native.whole.stream, native.stream);
    assert_null(native.no_stream.stream);
    assert_int_equal(native.cut.kind, ACCEL_NATIVE_HIP);
    assert_int_equal(native.cut.device_ordinal, 1);
    memset(untouched, 0xa5, sizeof(untouched));
    assert_memory_equal(&native.cut.context, untouched,
                        sizeof(native.cut) -
                            offsetof(struct accel_native_handles, context));
}

static void *round_trip_thread(void *arg)
{
    struct plugin_case *c = arg;
    struct fake_entries f;
    int device = -1;

    /* This thread works on device 1 of its own; the plugin works on device 0. */
    fake_entries_open(&f);
    assert_int_equal(f.set_device(1), AHIP_hipSuccess);
    plugin_case_round_trip(c, 777);
    assert_int_equal(f.get_device(&device), AHIP_hipSuccess);
    assert_int_equal(device, 1);
    dlclose(f.library);
    return NULL;
}

static void test_callers_current_device_is_left_alone(void **state)
{
    struct plugin_case *c = *state;
    uint64_t sets;
    pthread_t thread;

    setenv("FAKE_HIP_DEVICES", "2", 1);
    plugin_case_open_fake_device(c);
    sets = plugin_case_fake_calls(c, "hipSetDevice");
    assert_int_equal(pthread_create(&thread, NULL, round_trip_thread, c), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    /* Switched to device 0 and back, for each entry of the round trip. */
    assert_true(plugin_case_fake_calls(c, "hipSetDevice") - sets >= 2);
}

/* ---- injected failures ---- */

static void test_failed_alloc_is_out_of_memory_and_device_stays_usable(void **state)
{
    struct plugin_case *c = *state;
    accel_ref ref;

    setenv("FAKE_HIP_FAIL", "hipMalloc:1:hipErrorOutOfMemory", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 1000, &ref),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_contains(accel_last_error(),
                    "hipMalloc failed: hipErrorOutOfMemory (2)");
    assert_contains(accel_last_error(), "out of memory (fake HIP runtime)");
    assert_status(accel_device_status(c->device), ACCEL_OK);
    plugin_case_round_trip(c, 1000);
}

static void test_failed_copy_is_a_copy_error_with_the_native_name(void **state)
{
    struct plugin_case *c = *state;
    uint32_t data[64] = {0};
    uint32_t *pinned = NULL;
    accel_ref ref;

    setenv("FAKE_HIP_FAIL", "hipMemcpyAsync:2:hipErrorInvalidValue", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, data, 64), ACCEL_OK);
    assert_status(accel_host_alloc(c->device, sizeof(data), (void **)&pinned),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, pinned, ref, 0, sizeof(data)),
                  ACCEL_ERR_COPY);
    assert_contains(accel_last_error(),
                    "hipMemcpyAsync failed: hipErrorInvalidValue (1)");
    accel_host_free(c->device, pinned);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_faulting_kernel_loses_the_device_until_reset(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_HIP_LOSE_AT", "hipModuleLaunchKernel:1", 1);
    plugin_case_open_fake_device(c);
    plugin_case_check_fault_and_reset(c, FAKE_HIP_EXAMPLES,
                                      "hipErrorIllegalAddress (700)");
    assert_true(plugin_case_fake_calls(c, "hipDeviceReset") >= 1);
}

static void test_loss_at_a_copy_is_device_lost_and_reset_recovers(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_HIP_LOSE_AT", "hipMemcpyAsync:1", 1);
    plugin_case_open_fake_device(c);
    plugin_case_check_copy_loss_and_reset(c);
}

static void test_pinned_blocks_are_registered_again_after_a_reset(void **state)
{
    plugin_case_check_pinned_blocks_registered_again(*state);
}

static void test_pinned_block_the_driver_refuses_at_reset_stays_usable(void **state)
{
    /* The first registration is host_alloc's; the second, the reset's. */
    plugin_case_check_pinned_block_refused_at_reset_stays_usable(
        *state, "FAKE_HIP_FAIL", "hipHostRegister:2:hipErrorOutOfMemory");
}

static void test_reset_through_one_open_makes_the_others_lost_once(void **state)
{
    struct plugin_case *c = *state;
    uint64_t resets;

    /* The second host's open shares the device context. */
    plugin_case_open_fake_device(c);
    resets = plugin_case_fake_calls(c, "hipDeviceReset");
    plugin_case_check_reset_through_one_open(c);
    /* One hipDeviceReset for both opens' resets. */
    assert_int_equal(plugin_case_fake_calls(c, "hipDeviceReset") - resets, 1);
}

/* ---- what only real runtimes used to show ---- */

static void
test_stale_open_after_another_reset_is_lost_and_reaches_no_runtime(void **state)
{
    struct plugin_case *c = *state;

    plugin_case_open_fake_device(c);
    plugin_case_check_stale_open_is_refused(c, "hipGetDevice");
}

/* What the fake counts as live now (fake_hip_live_events, ...); 0 before it is loaded. */
static uint64_t fake_live(const char *symbol)
{
    void *library = dlopen(FAKE_HIP_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*live)(void);
    uint64_t count;

    if (library == NULL)
        return 0;
    *(void **)&live = dlsym(library, symbol);
    assert_non_null(live);
    count = live();
    dlclose(library);
    return count;
}

/*
 * hipDeviceReset destroys a device's streams and memory but not its events
 * or modules (ROCm's runtime: see plugins/hip/README.md), and the fake does
 * the same: the events and module of an open made stale by another open's
 * reset are still the runtime's, and leak unless the plugin hands them back
 * when the host releases them. Its streams and memory, which the reset
 * freed and whose handles it hands out again, still never reach it.
 */
static void test_stale_opens_events_and_modules_are_handed_back(void **state)
{
    struct plugin_case *c = *state;
    struct plugin_case second = {.kind = c->kind};
    uint64_t events = fake_live("fake_hip_live_events");
    uint64_t modules = fake_live("fake_hip_live_modules");
    uint64_t stream_destroys, frees;
    accel_module *module;
    accel_event *event;
    accel_ref ref;

    plugin_case_open_fake_device(c);
    assert_status(accel_host_create(NULL, &second.host), ACCEL_OK);
    assert_status(accel_device_open(second.host, "hip", 0, &second.device),
                  ACCEL_OK);
    assert_status(accel_stream_create(second.device, &second.stream), ACCEL_OK);
    assert_status(accel_alloc(second.device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(
        accel_module_load_file(second.device, FAKE_HIP_EXAMPLES, &module),
        ACCEL_OK);
    assert_status(accel_event_create(second.device, &event), ACCEL_OK);
    assert_status(accel_event_record(event, second.stream), ACCEL_OK);
    assert_status(accel_stream_sync(second.stream), ACCEL_OK);
    assert_true(fake_live("fake_hip_live_modules") > modules);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(second.device), ACCEL_ERR_DEVICE_LOST);
    stream_destroys = plugin_case_fake_calls(c, "hipStreamDestroy");
    frees = plugin_case_fake_calls(c, "hipFree");
    accel_event_destroy(event);
    accel_module_unload(module);
    accel_stream_destroy(second.stream);
    accel_device_close(second.device);
    accel_host_destroy(second.host);
    assert_int_equal(plugin_case_fake_calls(c, "hipStreamDestroy"),
                     stream_destroys);
    assert_int_equal(plugin_case_fake_calls(c, "hipFree"), frees);

    /* With the first open closed too, nothing of either is left in the runtime. */
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    c->stream = NULL;
    c->device = NULL;
    c->host = NULL;
    assert_int_equal(fake_live("fake_hip_live_modules"), modules);
    assert_int_equal(fake_live("fake_hip_live_events"), events);
}

/*
 * A stale open's module unload reaches the runtime (above); when it fails
 * with a code that would poison a context, the failure is the old
 * epoch's: the context the first open rebuilt stays live (issue 20's
 * defect 2, through HIP's own path).
 */
static void
test_failure_of_a_stale_opens_unload_leaves_the_reset_context_live(void **state)
{
    struct plugin_case *c = *state;
    accel_host *second_host = NULL;
    accel_device *second = NULL;
    accel_module *module;
    uint64_t unloads;

    setenv("FAKE_HIP_FAIL", "hipModuleUnload:1:hipErrorIllegalAddress", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_host_create(NULL, &second_host), ACCEL_OK);
    assert_status(accel_device_open(second_host, "hip", 0, &second), ACCEL_OK);
    assert_status(accel_module_load_file(second, FAKE_HIP_EXAMPLES, &module),
                  ACCEL_OK);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    unloads = plugin_case_fake_calls(c, "hipModuleUnload");
    accel_module_unload(module);
    assert_int_equal(plugin_case_fake_calls(c, "hipModuleUnload") - unloads, 1);
    accel_device_close(second);
    accel_host_destroy(second_host);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    plugin_case_round_trip(c, 100);
}

static void test_blocking_waits_use_no_core(void **state)
{
    plugin_case_check_blocking_waits_use_no_core(*state, "FAKE_HIP_DELAY_US");
}

static void
test_reset_the_runtime_refuses_is_unrecoverable_and_blocks_stay_pinned(void **state)
{
    plugin_case_check_refused_reset_is_unrecoverable(
        *state,
        "FAKE_HIP_FAIL", "hipHostUnregister:1:hipErrorIllegalAddress,hipDeviceReset:1:hipErrorIllegalAddress",
        "hipDeviceReset");
}

static void
test_callback_behind_a_faulting_kernel_is_told_lost_without_host_func(void **state)
{
    struct plugin_case *c = *state;

    /* ROCm 5.2's runtime: host functions through hipStreamAddCallback, told the error. */
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP5_PATH, 1);
    setenv("FAKE_HIP_LOSE_AT", "hipModuleLaunchKernel:1", 1);
    /* The kernel faults once the callback is enqueued behind it. */
    setenv("FAKE_HIP_DELAY_US", "50000", 1);
    plugin_case_open_fake_device(c);
    plugin_case_check_callback_after_a_fault_is_lost(c, FAKE_HIP_EXAMPLES);
}

static void
test_launch_above_the_kernels_own_thread_limit_is_refused_with_why(void **state)
{
    struct plugin_case *c = *state;
    uint32_t n = 256;
    float a = 2.0f;
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy;

    /* As a kernel compiled with __launch_bounds__(128) has it. */
    setenv("FAKE_HIP_KERNEL_LIMITS", "saxpy:128", 1);
    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, FAKE_HIP_EXAMPLES);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dy), ACCEL_OK);
    {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};

        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){1, 1, 1},
                                   (accel_dim3){256, 1, 1}, 0, args, 4),
                      ACCEL_ERR_LAUNCH);
        assert_contains(accel_last_error(), "this kernel takes at most 128");
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){2, 1, 1},
                                   (accel_dim3){128, 1, 1}, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    accel_module_unload(module);
}

static void test_lost_device_closed_and_opened_again_starts_clean(void **state)
{
    struct plugin_case *c = *state;
    uint64_t resets;

    setenv("FAKE_HIP_LOSE_AT", "hipEventSynchronize:1", 1);
    plugin_case_open_fake_device(c);
    plugin_case_lose_and_close(c);
    /* HIP keeps a poisoned context until a reset: the next first open resets it. */
    resets = plugin_case_fake_calls(c, "hipDeviceReset");
    assert_status(accel_device_open(c->host, "hip", 0, &c->device), ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, "hipDeviceReset") - resets, 1);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    plugin_case_round_trip(c, 64);
}

/* ---- modules ---- */

static void test_module_without_code_for_the_device_says_what_it_holds(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module = NULL;

    plugin_case_open_fake_device(c);
    assert_status(
        accel_module_load_file(c->device, FAKE_HIP_EXAMPLES_GFX906, &module),
        ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_error(),
                    "hipModuleLoadData failed: hipErrorNoBinaryForGpu (209)");
    assert_contains(accel_last_error(),
                    "the bundle holds code for gfx906, gfx908; the device "
                    "is gfx90a");
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void
test_module_for_other_target_features_says_both_targets_in_full(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module = NULL;

    /* The bundle has gfx90a:sramecc+:xnack-; the device runs with xnack on. */
    setenv("FAKE_HIP_ARCH", "gfx90a:sramecc+:xnack+", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_module_load_file(c->device, FAKE_HIP_EXAMPLES, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_error(), "hipErrorNoBinaryForGpu");
    assert_contains(accel_last_error(),
                    "the bundle holds code for gfx90a:sramecc+:xnack-, "
                    "gfx1100; the device is gfx90a:sramecc+:xnack+");
}

static void test_image_that_is_no_code_object_never_reaches_the_runtime(void **state)
{
    struct plugin_case *c = *state;
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    accel_module *module = NULL;
    uint64_t loads;

    plugin_case_open_fake_device(c);
    loads = plugin_case_fake_calls(c, "hipModuleLoadData");
    assert_status(accel_module_load(c->device, ptx, sizeof(ptx) - 1, &module),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(),
                    "neither an AMD code object nor a clang offload bundle");
    assert_int_equal(plugin_case_fake_calls(c, "hipModuleLoadData"), loads);
}

static void test_launch_arguments_are_checked_against_the_code_object(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy;
    uint32_t n = 16;
    uint64_t wide = 16;
    float a = 1.0f;
    uint64_t launches;

    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, FAKE_HIP_EXAMPLES);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    launches = plugin_case_fake_calls(c, "hipModuleLaunchKernel");
    {
        accel_arg extra[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                             ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy),
                             ACCEL_ARG_VALUE(n)};
        accel_arg wrong_size[] = {ACCEL_ARG_VALUE(wide), ACCEL_ARG_VALUE(a),
                                  ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};

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
    assert_int_equal(
        plugin_case_fake_calls(c, "hipModuleLaunchKernel") - launches, 1);
    accel_module_unload(module);
}

/* ---- devices ---- */

static void test_two_devices_copy_between_them(void **state)
{
    plugin_case_check_two_devices(*state, "FAKE_HIP_DEVICES");
}

/* HIP 5.2 has no pitched peer copy: a pitched one is a peer call per row (4 rows). */
static void test_copies_between_two_devices_take_the_peer_calls(void **state)
{
    plugin_case_check_peer_copies(*state, "FAKE_HIP_DEVICES",
                                  "hipMemcpyPeerAsync", NULL);
}

/* ---- silence ---- */

static void test_plugin_never_writes_to_stderr(void **state)
{
    struct plugin_case *c = *state;
    struct plugin_case_stderr capture;
    accel_module *module = NULL;
    accel_ref ref;

    plugin_case_capture_stderr(&capture, "hip");
    /* Failures of every kind, through the plugin; the real runtime too, where installed. */
    setenv("ACCEL_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
    plugin_case_open_host(c);
    accel_host_destroy(c->host);
    c->host = NULL;
    if (HIP_RUNTIME_PATH[0] != '\0' && access(HIP_RUNTIME_PATH, R_OK) == 0) {
        setenv("ACCEL_HIP_LIBRARY", HIP_RUNTIME_PATH, 1);
        plugin_case_open_host(c);
        accel_host_destroy(c->host);
        c->host = NULL;
    }
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP_PATH, 1);
    setenv("FAKE_HIP_FAIL", "hipMalloc:1:hipErrorOutOfMemory", 1);
    setenv("FAKE_HIP_LOSE_AT", "hipEventSynchronize:1", 1);
    plugin_case_open_fake_device(c);
    accel_alloc(c->device, ACCEL_U32, 10, &ref);
    accel_module_load_file(c->device, FAKE_HIP_EXAMPLES_GFX906, &module);
    accel_stream_sync(c->stream);
    accel_device_reset(c->device);
    assert_int_equal(plugin_case_stderr_bytes(&capture), 0);
}

/* The bundle's typed signatures check every launch of its image (plugin_typed.c). */
static void test_launches_are_checked_against_bundle_signatures(void **state)
{
    struct plugin_case *c = *state;

    plugin_case_open_fake_device(c);
    plugin_case_check_typed_signatures(c, TYPED_BUNDLE, UNTYPED_BUNDLE);
}

int main(void)
{
#define T(name)                                                                \
    cmocka_unit_test_setup_teardown(name, setup, plugin_case_teardown)
    const struct CMUnitTest tests[] = {
        T(test_no_device_node_is_no_device_without_loading_the_runtime),
        T(test_native_handles_are_the_ordinal_and_the_hip_stream),
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
        T(test_pinned_blocks_are_registered_again_after_a_reset),
        T(test_pinned_block_the_driver_refuses_at_reset_stays_usable),
        T(test_reset_through_one_open_makes_the_others_lost_once),
        T(test_lost_device_closed_and_opened_again_starts_clean),
        T(test_module_without_code_for_the_device_says_what_it_holds),
        T(test_module_for_other_target_features_says_both_targets_in_full),
        T(test_image_that_is_no_code_object_never_reaches_the_runtime),
        T(test_launch_arguments_are_checked_against_the_code_object),
        T(test_two_devices_copy_between_them),
        T(test_copies_between_two_devices_take_the_peer_calls),
        T(test_stale_open_after_another_reset_is_lost_and_reaches_no_runtime),
        T(test_stale_opens_events_and_modules_are_handed_back),
        T(test_failure_of_a_stale_opens_unload_leaves_the_reset_context_live),
        T(test_blocking_waits_use_no_core),
        T(test_reset_the_runtime_refuses_is_unrecoverable_and_blocks_stay_pinned),
        T(test_callback_behind_a_faulting_kernel_is_told_lost_without_host_func),
        T(test_launch_above_the_kernels_own_thread_limit_is_refused_with_why),
        T(test_plugin_never_writes_to_stderr),
        T(test_launches_are_checked_against_bundle_signatures),
    };
#undef T
    return cmocka_run_group_tests_name("hip-plugin", tests, NULL, NULL);
}
