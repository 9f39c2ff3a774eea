/*
 * The CUDA plugin without a GPU: what it says when there is no driver (no
 * library, the toolkit's stub library, a library that is not a driver, a
 * driver with no device), and, over the fake driver (libfakecuda.so), what
 * the backend-agnostic conformance suite cannot set up: the device's
 * description, injected driver failures, a lost context and its reset, the
 * JIT's log in an error, a caller's own current context left alone, entry
 * points found without cuGetProcAddress, two devices, and silence on stderr.
 */
#include "plugin_case.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"

static const char *const fake_knobs[] = {
    "FAKE_CUDA_DEVICES",
    "FAKE_CUDA_INIT_RESULT",
    "FAKE_CUDA_FAIL",
    "FAKE_CUDA_LOSE_AT",
    "FAKE_CUDA_MEMORY_MB",
    "FAKE_CUDA_MAX_PITCH",
    "FAKE_CUDA_DELAY_US",
    "FAKE_CUDA_NO_PROC_ADDRESS",
    "FAKE_CUDA_NO_PARAM_INFO",
    "FAKE_CUDA_KERNEL_LIMITS",
    "FAKE_CUDA_JIT_DELAY_US",
    "FAKE_CUDA_GATE",
    NULL,
};

static const struct plugin_case_kind cuda_kind = {
    .plugin = "cuda",
    .plugin_path = CUDA_PLUGIN_PATH,
    .library_env = "ACCEL_CUDA_LIBRARY",
    .fake_path = FAKE_CUDA_PATH,
    .calls_symbol = "fake_cuda_calls",
    .registered_symbol = "fake_cuda_registered_bytes",
    .unregister_call = "cuMemHostUnregister",
    .knobs = fake_knobs,
};

static int setup(void **state)
{
    return plugin_case_setup(state, &cuda_kind);
}

/* ---- no driver ---- */

static void test_stub_library_is_no_device_and_says_stub(void **state)
{
    struct plugin_case *c = *state;

    if (CUDA_STUB_PATH[0] == '\0' || access(CUDA_STUB_PATH, R_OK) != 0) {
        print_message(
            "no CUDA toolkit stub library (stubs/libcuda.so) is installed\n");
        skip();
    }
    setenv("ACCEL_CUDA_LIBRARY", CUDA_STUB_PATH, 1);
    plugin_case_assert_no_device_because(c, "CUDA_ERROR_STUB_LIBRARY");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "the CUDA stub library, not a driver");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason, "cuInit");
}

static void test_missing_library_names_what_was_tried(void **state)
{
    struct plugin_case *c = *state;

    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    plugin_case_assert_no_device_because(
        c, "ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "No such file");
}

static void test_default_search_tries_both_names(void **state)
{
    struct plugin_case *c = *state;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

    /* Only on a machine without a driver: with one, the plugin would find it. */
    if (driver != NULL) {
        dlclose(driver);
        skip();
    }
    unsetenv("ACCEL_CUDA_LIBRARY");
    setenv("ACCEL_CUDA_DEVICE_NODES", "/dev/null",
           1); /* past the device-node check */
    plugin_case_assert_no_device_because(c, "libcuda.so.1: ");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "; libcuda.so: ");
}

/* Without a node and without ACCEL_CUDA_LIBRARY, the driver is never loaded. */
static void test_no_device_node_is_no_device_without_loading_the_driver(void **state)
{
    struct plugin_case *c = *state;

    unsetenv("ACCEL_CUDA_LIBRARY");
    setenv("ACCEL_CUDA_DEVICE_NODES", "/nonexistent/nvidiactl", 1);
    plugin_case_assert_no_device_because(
        c, "no device node (/nonexistent/nvidiactl: none "
           "exists); the CUDA driver was not loaded");
    assert_null(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD));
    assert_null(dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD));
}

static void test_library_that_is_not_a_driver_lists_missing_entries(void **state)
{
    struct plugin_case *c = *state;

    setenv("ACCEL_CUDA_LIBRARY", "libm.so.6", 1);
    plugin_case_assert_no_device_because(
        c, "libm.so.6 is not a usable CUDA driver");
    assert_contains(support_find_plugin(c->host, "cuda", 0)->reason,
                    "required entry point(s): cuInit, ");
}

static void test_driver_without_device_says_no_device(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_INIT_RESULT", "CUDA_ERROR_NO_DEVICE", 1);
    plugin_case_assert_no_device_because(
        c, "cuInit failed: CUDA_ERROR_NO_DEVICE (100)");
}

static void test_driver_with_zero_devices_says_so(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_DEVICES", "0", 1);
    plugin_case_assert_no_device_because(c, "reports no device");
}

/* ---- the device ---- */

static void test_fake_device_is_described_from_the_driver(void **state)
{
    struct plugin_case *c = *state;
    accel_device_info info;

    plugin_case_open_fake_device(c);
    assert_int_equal(support_find_plugin(c->host, "cuda", 0)->priority, 100);
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.props.name, "Fake CUDA Device 0");
    assert_string_equal(info.props.arch, "sm_90");
    assert_int_equal(info.props.total_memory, 1024ull << 20);
    assert_int_equal(info.props.compute_units, 4);
    assert_int_equal(info.props.caps,
                     ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D);
    assert_int_equal(info.props.max_threads_per_block, 1024);
    assert_int_equal(info.props.max_block_dim[2], 64);
    assert_int_equal(info.props.max_grid_dim[0], 2147483647u);
    /* The opt-in limit: a kernel asking for more than 48 KiB is opted in at its launch. */
    assert_int_equal(info.props.max_shared_bytes, 227 * 1024);
    plugin_case_round_trip(c, 1000);
}

static void test_entries_come_through_cuGetProcAddress(void **state)
{
    struct plugin_case *c = *state;
    uint64_t before = plugin_case_fake_calls(c, "cuGetProcAddress_v2");

    plugin_case_open_fake_device(c);
    /* One call per entry of cuda_symbol_table.h. */
    assert_true(plugin_case_fake_calls(c, "cuGetProcAddress_v2") - before >= 30);
    plugin_case_round_trip(c, 100);
}

static void test_entries_come_by_name_without_cuGetProcAddress(void **state)
{
    struct plugin_case *c = *state;
    uint64_t before = plugin_case_fake_calls(c, "cuGetProcAddress_v2");

    setenv("FAKE_CUDA_NO_PROC_ADDRESS", "1", 1);
    plugin_case_open_fake_device(c);
    /* Asked once, refused, not asked again. */
    assert_int_equal(plugin_case_fake_calls(c, "cuGetProcAddress_v2") - before,
                     1);
    plugin_case_round_trip(c, 4096);
}

static void test_copy_layouts_take_the_fewest_driver_calls(void **state)
{
    struct plugin_case *c = *state;

    plugin_case_open_fake_device(c);
    plugin_case_check_copy_layouts(c, "cuMemcpy3DAsync_v2", "cuMemcpy2DAsync_v2");
}

static void *round_trip_thread(void *arg)
{
    plugin_case_round_trip(arg, 777);
    return NULL;
}

static void test_context_is_pushed_for_threads_without_it_and_popped(void **state)
{
    struct plugin_case *c = *state;
    uint64_t pushes, pops;
    pthread_t thread;

    plugin_case_open_fake_device(c);
    pushes = plugin_case_fake_calls(c, "cuCtxPushCurrent_v2");
    pops = plugin_case_fake_calls(c, "cuCtxPopCurrent_v2");
    assert_int_equal(pthread_create(&thread, NULL, round_trip_thread, c), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_true(plugin_case_fake_calls(c, "cuCtxPushCurrent_v2") > pushes);
    assert_int_equal(plugin_case_fake_calls(c, "cuCtxPushCurrent_v2") - pushes,
                     plugin_case_fake_calls(c, "cuCtxPopCurrent_v2") - pops);
}

/* ---- injected failures ---- */

static void test_failed_alloc_is_out_of_memory_and_device_stays_usable(void **state)
{
    struct plugin_case *c = *state;
    accel_ref ref;

    setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2:1:CUDA_ERROR_OUT_OF_MEMORY", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 1000, &ref),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_contains(accel_last_error(),
                    "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY");
    assert_status(accel_device_status(c->device), ACCEL_OK);
    plugin_case_round_trip(c, 1000);
}

static void test_failed_copy_is_a_copy_error_with_the_native_name(void **state)
{
    struct plugin_case *c = *state;
    uint32_t data[64] = {0};
    accel_ref ref;

    setenv("FAKE_CUDA_FAIL", "cuMemcpyDtoHAsync_v2:1:CUDA_ERROR_INVALID_VALUE",
           1);
    plugin_case_open_fake_device(c);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, data, 64), ACCEL_OK);
    {
        uint32_t *pinned = NULL;
        accel_status status;

        assert_status(accel_host_alloc(c->device, sizeof(data), (void **)&pinned),
                      ACCEL_OK);
        status = accel_copy_to_host(c->stream, pinned, ref, 0, sizeof(data));
        assert_status(status, ACCEL_ERR_COPY);
        assert_contains(
            accel_last_error(),
            "cuMemcpyDtoHAsync_v2 failed: CUDA_ERROR_INVALID_VALUE");
        accel_host_free(c->device, pinned);
    }
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_faulting_kernel_loses_the_device_until_reset(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_LOSE_AT", "cuLaunchKernel:1", 1);
    plugin_case_open_fake_device(c);
    plugin_case_check_fault_and_reset(c, EXAMPLES_CPU_IMAGE,
                                      "CUDA_ERROR_ILLEGAL_ADDRESS");
}

static void test_loss_at_a_copy_is_device_lost_and_reset_recovers(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_LOSE_AT", "cuMemcpyHtoDAsync_v2:1", 1);
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
        *state, "FAKE_CUDA_FAIL",
        "cuMemHostRegister_v2:2:CUDA_ERROR_OUT_OF_MEMORY");
}

static void test_reset_through_one_open_makes_the_others_lost_once(void **state)
{
    struct plugin_case *c = *state;

    /* The second host's open shares the device's primary context. */
    plugin_case_open_fake_device(c);
    plugin_case_check_reset_through_one_open(c);
}

static void test_lost_device_closed_and_opened_again_starts_clean(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_LOSE_AT", "cuEventSynchronize:1", 1);
    plugin_case_open_fake_device(c);
    plugin_case_lose_and_close(c);
    /* Every open let go: the driver made a new context, and the plugin knows. */
    assert_status(accel_device_open(c->host, "cuda", 0, &c->device), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    plugin_case_round_trip(c, 64);
}

/* ---- modules ---- */

static void test_jit_log_is_in_the_error_detail(void **state)
{
    struct plugin_case *c = *state;
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
    accel_module *module = NULL;

    plugin_case_open_fake_device(c);
    /* Without the NUL, as a file holds it: the plugin must add one. */
    assert_status(accel_module_load(c->device, ptx, sizeof(ptx) - 1, &module),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(),
                    "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX");
    assert_contains(accel_last_error(), "ptxas");
}

static void test_kernel_signature_unknown_without_param_info(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;
    accel_ref dx, dy;
    uint32_t n = 16;
    float a = 1.0f;

    setenv("FAKE_CUDA_NO_PARAM_INFO", "1", 1);
    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    {
        /* Unchecked by the host, and harmless: the driver takes the kernel's own count. */
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy),
                            ACCEL_ARG_VALUE(n)};

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
    struct plugin_case *c = *state;
    struct fake_entries f;
    acu_CUcontext mine = NULL, now = NULL;

    setenv("FAKE_CUDA_DEVICES", "2", 1);
    plugin_case_open_fake_device(c);
    fake_entries_open(&f);
    /* The application has device 1's context current; the plugin works on device 0. */
    assert_int_equal(f.retain(&mine, 1), ACU_CUDA_SUCCESS);
    assert_int_equal(f.push(mine), ACU_CUDA_SUCCESS);
    plugin_case_round_trip(c, 2000);
    assert_int_equal(f.current(&now), ACU_CUDA_SUCCESS);
    assert_ptr_equal(now, mine);
    assert_int_equal(f.pop(&now), ACU_CUDA_SUCCESS);
    assert_int_equal(f.release(1), ACU_CUDA_SUCCESS);
    dlclose(f.library);
}

static void test_native_handles_are_the_primary_context_and_stream(void **state)
{
    struct plugin_case *c = *state;
    struct plugin_case_native native;
    struct fake_entries f;
    acu_CUcontext primary = NULL;
    unsigned char untouched[sizeof(struct accel_native_handles)];

    plugin_case_native_handles(c, "FAKE_CUDA_DEVICES", 1, &native);
    fake_entries_open(&f);
    assert_int_equal(f.retain(&primary, 1), ACU_CUDA_SUCCESS);
    assert_int_equal(native.whole.kind, ACCEL_NATIVE_CUDA);
    assert_int_equal(native.whole.device_ordinal, 1);
    assert_ptr_equal(native.whole.context, primary);
    assert_non_null(native.whole.stream);
    assert_ptr_equal(native.whole.stream, native.stream);
    assert_ptr_equal(native.no_stream.context, primary);
    assert_null(native.no_stream.stream);
    /* A shorter struct: kind and ordinal written, the rest left alone. */
    assert_int_equal(native.cut.kind, ACCEL_NATIVE_CUDA);
    assert_int_equal(native.cut.device_ordinal, 1);
    memset(untouched, 0xa5, sizeof(untouched));
    assert_memory_equal(&native.cut.context, untouched,
                        sizeof(native.cut) -
                            offsetof(struct accel_native_handles, context));
    assert_int_equal(f.release(1), ACU_CUDA_SUCCESS);
    dlclose(f.library);
}

static void test_two_devices_copy_between_them(void **state)
{
    plugin_case_check_two_devices(*state, "FAKE_CUDA_DEVICES");
}

static void test_copies_between_two_devices_take_the_peer_calls(void **state)
{
    plugin_case_check_peer_copies(*state, "FAKE_CUDA_DEVICES",
                                  "cuMemcpyPeerAsync", "cuMemcpy3DPeerAsync");
}

/* ---- what only real drivers used to show ---- */

static void
test_stale_open_after_another_reset_is_lost_and_reaches_no_driver(void **state)
{
    struct plugin_case *c = *state;

    plugin_case_open_fake_device(c);
    plugin_case_check_stale_open_is_refused(c, "cuCtxGetCurrent");
}

static void test_failure_of_a_stale_open_leaves_the_reset_context_live(void **state)
{
    struct plugin_case *c = *state;
    accel_host *second_host = NULL;
    accel_device *second = NULL;
    struct fake_entries f;

    /* The second open's release, at its close, fails as a poisoned driver may answer. */
    setenv("FAKE_CUDA_FAIL",
           "cuDevicePrimaryCtxRelease_v2:1:CUDA_ERROR_ILLEGAL_ADDRESS", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_host_create(NULL, &second_host), ACCEL_OK);
    assert_status(accel_device_open(second_host, "cuda", 0, &second), ACCEL_OK);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    accel_device_close(second);
    accel_host_destroy(second_host);
    /* The stale open's failure is its own: the context the first open rebuilt stays live. */
    assert_status(accel_device_status(c->device), ACCEL_OK);
    plugin_case_round_trip(c, 100);
    /* The refused release kept its retain in the fake: give it back. */
    fake_entries_open(&f);
    assert_int_equal(f.release(0), ACU_CUDA_SUCCESS);
    dlclose(f.library);
}

static void test_reset_keeps_the_opens_retain_without_taking_another(void **state)
{
    struct plugin_case *c = *state;
    uint64_t retains, releases;

    plugin_case_open_fake_device(c);
    retains = plugin_case_fake_calls(c, "cuDevicePrimaryCtxRetain");
    releases = plugin_case_fake_calls(c, "cuDevicePrimaryCtxRelease_v2");
    /* cuda.h: the reset keeps the handle and does not release the context. */
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, "cuDevicePrimaryCtxRetain"),
                     retains);
    assert_int_equal(plugin_case_fake_calls(c, "cuDevicePrimaryCtxRelease_v2"),
                     releases);
    plugin_case_round_trip(c, 100);
}

static void test_blocking_waits_use_no_core(void **state)
{
    plugin_case_check_blocking_waits_use_no_core(*state, "FAKE_CUDA_DELAY_US");
}

static void
test_reset_the_driver_refuses_is_unrecoverable_and_blocks_stay_pinned(void **state)
{
    plugin_case_check_refused_reset_is_unrecoverable(
        *state, "FAKE_CUDA_FAIL",
        "cuMemHostUnregister:1:CUDA_ERROR_ILLEGAL_ADDRESS,"
        "cuDevicePrimaryCtxReset_v2:1:CUDA_ERROR_ILLEGAL_ADDRESS",
        "cuDevicePrimaryCtxReset_v2");
}

static void
test_failed_context_pop_leaves_no_context_on_the_callers_thread(void **state)
{
    struct plugin_case *c = *state;
    acu_CUcontext now = NULL;
    struct fake_entries f;

    /* The first pop is the one after stream_create's push, on this thread. */
    setenv("FAKE_CUDA_FAIL", "cuCtxPopCurrent_v2:1:CUDA_ERROR_INVALID_CONTEXT",
           1);
    plugin_case_open_fake_device(c);
    fake_entries_open(&f);
    assert_int_equal(f.current(&now), ACU_CUDA_SUCCESS);
    assert_null(now);
    dlclose(f.library);
    plugin_case_round_trip(c, 100);
}

static void test_callback_behind_a_faulting_kernel_is_told_lost(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_LOSE_AT", "cuLaunchKernel:1", 1);
    /* The kernel faults once the callback is enqueued behind it. */
    setenv("FAKE_CUDA_DELAY_US", "50000", 1);
    plugin_case_open_fake_device(c);
    plugin_case_check_callback_after_a_fault_is_lost(c, EXAMPLES_CPU_IMAGE);
}

static void *load_module_slowly(void *arg)
{
    struct plugin_case *c = arg;
    accel_module *module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);

    accel_module_unload(module);
    return NULL;
}

static uint64_t monotonic_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

static void
test_module_load_jit_does_not_hold_up_the_devices_other_calls(void **state)
{
    struct plugin_case *c = *state;
    struct timespec settle = {0, 200000000L};
    uint64_t began, took;
    pthread_t loader;
    accel_ref ref;

    /* A JIT of 2 s; the allocation, meanwhile, must not wait for it (bound: 1 s). */
    setenv("FAKE_CUDA_JIT_DELAY_US", "2000000", 1);
    plugin_case_open_fake_device(c);
    assert_int_equal(pthread_create(&loader, NULL, load_module_slowly, c), 0);
    nanosleep(&settle, NULL);
    began = monotonic_ms();
    assert_status(accel_alloc(c->device, ACCEL_U32, 256, &ref), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    took = monotonic_ms() - began;
    assert_int_equal(pthread_join(loader, NULL), 0);
    assert_true(took < 1000);
}

/* ---- the device lock is not held across a driver call that waits ---- */

/* The fake's gate entries (FAKE_CUDA_GATE). */
struct gate {
    void (*open)(void);
    unsigned (*waiting)(void);
};

static struct gate gate_find(void)
{
    void *fake = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    struct gate gate;

    assert_non_null(fake);
    *(void **)&gate.open = dlsym(fake, "fake_cuda_gate_open");
    *(void **)&gate.waiting = dlsym(fake, "fake_cuda_gate_waiting");
    assert_non_null(gate.open);
    assert_non_null(gate.waiting);
    dlclose(fake);
    return gate;
}

struct other_thread {
    struct plugin_case *c;
    pthread_mutex_t lock;
    pthread_cond_t done_changed;
    bool done;
};

static void *alloc_and_free_many(void *arg)
{
    struct other_thread *other = arg;
    accel_ref ref;

    for (int i = 0; i < 100; i++) {
        assert_status(accel_alloc(other->c->device, ACCEL_U32, 256, &ref),
                      ACCEL_OK);
        assert_status(accel_free(other->c->device, ref), ACCEL_OK);
    }
    pthread_mutex_lock(&other->lock);
    other->done = true;
    pthread_cond_signal(&other->done_changed);
    pthread_mutex_unlock(&other->lock);
    return NULL;
}

/* Wait up to `seconds` for the other thread; true if it finished. */
static bool other_thread_finishes(struct other_thread *other, int seconds)
{
    struct timespec until;
    bool done;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&other->lock);
    while (!other->done && pthread_cond_timedwait(&other->done_changed,
                                                  &other->lock, &until) == 0)
        ;
    done = other->done;
    pthread_mutex_unlock(&other->lock);
    return done;
}

/*
 * `call` runs on a thread of its own until it reaches the fake's gated entry
 * (the device is open with FAKE_CUDA_GATE naming it) and stays inside the
 * driver there: another thread's 100 allocations and frees must finish
 * meanwhile (bound: 20 s, for a loaded machine; with the device lock held
 * across the call they would never finish before the gate opens).
 */
static void check_call_inside_driver_holds_up_nobody(struct plugin_case *c,
                                                     void *(*call)(void *))
{
    struct timespec tick = {0, 10000000L};
    struct other_thread other = {.c = c, .done = false};
    struct gate gate = gate_find();
    pthread_t caller, allocator;
    bool finished;

    assert_int_equal(gate.waiting(), 0);
    assert_int_equal(pthread_create(&caller, NULL, call, c), 0);
    for (int i = 0; i < 2000 && gate.waiting() == 0; i++)
        nanosleep(&tick, NULL);
    assert_int_equal(gate.waiting(), 1);
    pthread_mutex_init(&other.lock, NULL);
    pthread_cond_init(&other.done_changed, NULL);
    assert_int_equal(
        pthread_create(&allocator, NULL, alloc_and_free_many, &other), 0);
    finished = other_thread_finishes(&other, 20);
    gate.open();
    assert_int_equal(pthread_join(caller, NULL), 0);
    assert_int_equal(pthread_join(allocator, NULL), 0);
    pthread_cond_destroy(&other.done_changed);
    pthread_mutex_destroy(&other.lock);
    assert_true(finished);
}

static void *compact_device(void *arg)
{
    struct plugin_case *c = arg;
    uint32_t pages = 0;

    /* Gives the spare large page back: a cuMemFree, held at the fake's gate. */
    assert_status(accel_device_compact(c->device, &pages), ACCEL_OK);
    return NULL;
}

static void
test_mem_free_waiting_for_the_device_does_not_hold_up_other_threads(void **state)
{
    struct plugin_case *c = *state;
    accel_ref large;

    setenv("FAKE_CUDA_GATE", "cuMemFree_v2", 1);
    plugin_case_open_fake_device(c);
    /* A page of its own, kept as a spare when freed. */
    assert_status(accel_alloc(c->device, ACCEL_U8, 64u << 20, &large), ACCEL_OK);
    assert_status(accel_free(c->device, large), ACCEL_OK);
    check_call_inside_driver_holds_up_nobody(c, compact_device);
}

static accel_module *gated_module;

static void *get_saxpy(void *arg)
{
    accel_kernel *saxpy = NULL;

    (void)arg;
    assert_status(accel_kernel_get(gated_module, "saxpy", &saxpy), ACCEL_OK);
    assert_non_null(saxpy);
    return NULL;
}

static void test_lazy_kernel_load_does_not_hold_up_other_threads(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_GATE", "cuModuleGetFunction", 1);
    plugin_case_open_fake_device(c);
    gated_module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);
    check_call_inside_driver_holds_up_nobody(c, get_saxpy);
    accel_module_unload(gated_module);
}

static void *pin_host_memory(void *arg)
{
    struct plugin_case *c = arg;
    void *block = NULL;

    assert_status(accel_host_alloc(c->device, 1u << 20, &block), ACCEL_OK);
    accel_host_free(c->device, block);
    return NULL;
}

static void
test_host_memory_registration_does_not_hold_up_other_threads(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_GATE", "cuMemHostRegister_v2", 1);
    plugin_case_open_fake_device(c);
    check_call_inside_driver_holds_up_nobody(c, pin_host_memory);
}

static void *copy_through_staging(void *arg)
{
    struct plugin_case *c = arg;
    uint32_t words[256] = {0};
    accel_ref ref;

    /* Pageable memory: the copy goes through staging buffers, made now. */
    assert_status(accel_alloc(c->device, ACCEL_U32, 256, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, words, 256), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    return NULL;
}

static void
test_staging_buffer_registration_does_not_hold_up_other_threads(void **state)
{
    struct plugin_case *c = *state;

    setenv("FAKE_CUDA_GATE", "cuMemHostRegister_v2", 1);
    plugin_case_open_fake_device(c);
    check_call_inside_driver_holds_up_nobody(c, copy_through_staging);
}

/* saxpy over 256 elements in blocks of `threads`, with `shared` bytes of dynamic shared memory. */
static accel_status launch_saxpy_shaped(struct plugin_case *c,
                                        accel_kernel *saxpy, uint32_t threads,
                                        uint32_t shared)
{
    uint32_t n = 256;
    float a = 2.0f;
    accel_ref dx, dy;
    accel_status status;

    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dy), ACCEL_OK);
    {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};

        status = accel_launch(c->stream, saxpy, (accel_dim3){n / threads, 1, 1},
                              (accel_dim3){threads, 1, 1}, shared, args, 4);
    }
    if (status == ACCEL_OK)
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    return status;
}

static void
test_launch_above_the_kernels_own_thread_limit_is_refused_with_why(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;

    /* As a kernel compiled with __launch_bounds__(128) has it. */
    setenv("FAKE_CUDA_KERNEL_LIMITS", "saxpy:128", 1);
    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(launch_saxpy_shaped(c, saxpy, 256, 0), ACCEL_ERR_LAUNCH);
    assert_contains(accel_last_error(), "this kernel takes at most 128");
    assert_contains(accel_last_error(),
                    "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK");
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(launch_saxpy_shaped(c, saxpy, 128, 0), ACCEL_OK);
    accel_module_unload(module);
}

static void test_dynamic_shared_memory_above_48_kib_is_opted_in_once(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;
    uint64_t before;

    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    before = plugin_case_fake_calls(c, "cuFuncSetAttribute");
    assert_status(launch_saxpy_shaped(c, saxpy, 64, 48 * 1024), ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, "cuFuncSetAttribute") - before, 0);
    assert_status(launch_saxpy_shaped(c, saxpy, 64, 100 * 1024), ACCEL_OK);
    assert_status(launch_saxpy_shaped(c, saxpy, 64, 64 * 1024), ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, "cuFuncSetAttribute") - before, 1);
    accel_module_unload(module);
}

static void
test_static_and_dynamic_shared_memory_past_the_device_is_refused(void **state)
{
    struct plugin_case *c = *state;
    accel_module *module;
    accel_kernel *saxpy;

    /* 16 KiB of static shared memory: 220 KiB more do not fit in the block's 227. */
    setenv("FAKE_CUDA_KERNEL_LIMITS", "saxpy:1024:16384", 1);
    plugin_case_open_fake_device(c);
    module = plugin_case_load_module(c, EXAMPLES_CPU_IMAGE);
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(launch_saxpy_shaped(c, saxpy, 64, 220 * 1024),
                  ACCEL_ERR_LAUNCH);
    assert_contains(accel_last_error(), "16384 static bytes");
    assert_status(launch_saxpy_shaped(c, saxpy, 64, 200 * 1024), ACCEL_OK);
    accel_module_unload(module);
}

/* ---- silence ---- */

static void test_plugin_never_writes_to_stderr(void **state)
{
    struct plugin_case *c = *state;
    struct plugin_case_stderr capture;
    accel_ref ref;

    plugin_case_capture_stderr(&capture, "cuda");
    /* Failures of every kind, through the plugin. */
    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    accel_host_destroy(c->host);
    c->host = NULL;
    plugin_case_open_host(c);
    accel_host_destroy(c->host);
    c->host = NULL;
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2:1:CUDA_ERROR_OUT_OF_MEMORY", 1);
    setenv("FAKE_CUDA_LOSE_AT", "cuEventSynchronize:1", 1);
    plugin_case_open_fake_device(c);
    accel_alloc(c->device, ACCEL_U32, 10, &ref);
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
        T(test_stub_library_is_no_device_and_says_stub),
        T(test_missing_library_names_what_was_tried),
        T(test_no_device_node_is_no_device_without_loading_the_driver),
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
        T(test_pinned_blocks_are_registered_again_after_a_reset),
        T(test_pinned_block_the_driver_refuses_at_reset_stays_usable),
        T(test_reset_through_one_open_makes_the_others_lost_once),
        T(test_lost_device_closed_and_opened_again_starts_clean),
        T(test_jit_log_is_in_the_error_detail),
        T(test_kernel_signature_unknown_without_param_info),
        T(test_callers_current_context_is_left_alone),
        T(test_native_handles_are_the_primary_context_and_stream),
        T(test_two_devices_copy_between_them),
        T(test_copies_between_two_devices_take_the_peer_calls),
        T(test_stale_open_after_another_reset_is_lost_and_reaches_no_driver),
        T(test_failure_of_a_stale_open_leaves_the_reset_context_live),
        T(test_reset_keeps_the_opens_retain_without_taking_another),
        T(test_blocking_waits_use_no_core),
        T(test_reset_the_driver_refuses_is_unrecoverable_and_blocks_stay_pinned),
        T(test_failed_context_pop_leaves_no_context_on_the_callers_thread),
        T(test_callback_behind_a_faulting_kernel_is_told_lost),
        T(test_module_load_jit_does_not_hold_up_the_devices_other_calls),
        T(test_mem_free_waiting_for_the_device_does_not_hold_up_other_threads),
        T(test_lazy_kernel_load_does_not_hold_up_other_threads),
        T(test_host_memory_registration_does_not_hold_up_other_threads),
        T(test_staging_buffer_registration_does_not_hold_up_other_threads),
        T(test_launch_above_the_kernels_own_thread_limit_is_refused_with_why),
        T(test_dynamic_shared_memory_above_48_kib_is_opted_in_once),
        T(test_static_and_dynamic_shared_memory_past_the_device_is_refused),
        T(test_plugin_never_writes_to_stderr),
        T(test_launches_are_checked_against_bundle_signatures),
    };
#undef T
    return cmocka_run_group_tests_name("cuda-plugin", tests, NULL, NULL);
}
