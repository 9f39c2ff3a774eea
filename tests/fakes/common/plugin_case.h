/*
 * What the tests of a GPU plugin over its fake driver share (the CUDA
 * plugin's over libfakecuda, the HIP plugin's over libfakehip): a fixture
 * with a host, a device and a stream, a clean environment around each test,
 * and the checks whose steps are the same whatever the vendor.
 *
 * Include after support.h (tests/), which brings cmocka.
 */
#ifndef PLUGIN_CASE_H
#define PLUGIN_CASE_H

#include <stdint.h>

#include "support.h"

/* What differs from vendor to vendor. */
struct plugin_case_kind {
    const char *plugin;      /* "cuda": the plugin's name */
    const char *plugin_path; /* the built plugin, for ACCEL_PLUGIN_PATH */
    const char *library_env; /* "ACCEL_CUDA_LIBRARY": what names the vendor library */
    const char *fake_path; /* the built fake, the library each test starts with */
    const char *calls_symbol; /* "fake_cuda_calls": the fake's call counter */
    const char *registered_symbol; /* "fake_cuda_registered_bytes": host bytes registered now */
    const char *unregister_call; /* "cuMemHostUnregister": the fake's unregister entry */
    const char *const *knobs; /* more variables to clear around each test; NULL-terminated */
};

/* One test's objects; teardown releases whatever is set. */
struct plugin_case {
    const struct plugin_case_kind *kind;
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
};

/*
 * cmocka setup and teardown: a clean environment (support_clean_environment,
 * the kind's library variable and knobs) that points the host at the
 * kind's plugin and fake; after the test, its objects released and the
 * environment clean again.
 */
int plugin_case_setup(void **state, const struct plugin_case_kind *kind);
int plugin_case_teardown(void **state);

/* A host over the plugin as the environment now says; the plugin's entry. */
const accel_plugin_info *plugin_case_open_host(struct plugin_case *c);
/* A host, device 0 of the fake and a stream on it; fails the test without a device. */
void plugin_case_open_fake_device(struct plugin_case *c);
/* The plugin has no device, and its reason contains `fragment`. */
void plugin_case_assert_no_device_because(struct plugin_case *c,
                                          const char *fragment);
/* `count` words to the device and back through the case's stream. */
void plugin_case_round_trip(struct plugin_case *c, uint32_t count);

/* How often entry `name` of the fake at `library_path` was called; 0 before it is loaded. */
uint64_t plugin_case_fake_calls_in(const struct plugin_case *c,
                                   const char *library_path, const char *name);
/* The same for the kind's own fake. */
uint64_t plugin_case_fake_calls(const struct plugin_case *c, const char *name);
/* How many bytes of host memory the kind's fake has registered now. */
uint64_t plugin_case_fake_registered_bytes(const struct plugin_case *c);

/*
 * Device-to-device copies of each layout shape take the fewest calls of
 * the fake's 3D entry `copy_3d` and 2D entry `copy_2d`, and a pitched copy
 * from pinned memory one 2D call.
 */
void plugin_case_check_copy_layouts(struct plugin_case *c, const char *copy_3d,
                                    const char *copy_2d);

/* Launch the example kernel saxpy (n, a = 2, x, y) over n threads; expect `expected`. */
void plugin_case_launch_saxpy(struct plugin_case *c, accel_kernel *saxpy,
                              accel_ref x, accel_ref y, uint32_t n,
                              accel_status expected);

/* The module in the file at `path`, loaded on the case's device. */
accel_module *plugin_case_load_module(struct plugin_case *c, const char *path);

/*
 * Typed signatures through the plugin (plugin_typed.c): with a bundle of
 * the testing kernels and their signatures entry, a ref of each other
 * element type for each pointer of typed_params, a value for a pointer
 * and a ref for a value are refused, naming the parameter, and what fits
 * runs; with the same image and no entry, launches are checked by size.
 */
void plugin_case_check_typed_signatures(struct plugin_case *c,
                                        const char *typed_bundle,
                                        const char *untyped_bundle);

/*
 * With the fake set to lose the context at the first launch: saxpy, from
 * the module at `module_path`, is accepted, the loss shows at the next sync
 * with `lost_detail` in the error, refs go stale, and after a reset the
 * same kernel handle runs and computes again.
 */
void plugin_case_check_fault_and_reset(struct plugin_case *c,
                                       const char *module_path,
                                       const char *lost_detail);

/*
 * With the fake set to lose the context at the first host-to-device copy:
 * a copy from pinned memory is ACCEL_ERR_DEVICE_LOST, and a reset recovers.
 */
void plugin_case_check_copy_loss_and_reset(struct plugin_case *c);

/*
 * A second host opens the same device: a reset through the first makes it
 * lost once, its own reset takes the fresh context, and both then work.
 */
void plugin_case_check_reset_through_one_open(struct plugin_case *c);

/*
 * On device 0 of the fake: pinned blocks are registered at host_alloc; a reset (which
 * drops the fake's registrations, and frees the fake's own pinned
 * allocations) leaves them at the same address with their contents and
 * registered again; they copy both ways after it; host_free unregisters
 * each.
 */
void plugin_case_check_pinned_blocks_registered_again(struct plugin_case *c);

/*
 * With the fake's failure knob `fail_knob` set to `refuse_second` (the
 * second registration fails: the one a reset makes again): the block keeps
 * its contents, copies from and to it still work as from pageable memory,
 * and host_free does not unregister what is not registered.
 */
void plugin_case_check_pinned_block_refused_at_reset_stays_usable(
    struct plugin_case *c, const char *fail_knob, const char *refuse_second);

/* With the fake set to lose the context at the first stream sync: sync, then close the device. */
void plugin_case_lose_and_close(struct plugin_case *c);

/* With two devices (`devices_knob`=2): a copy from device 0 to device 1 arrives. */
void plugin_case_check_two_devices(struct plugin_case *c,
                                   const char *devices_knob);
/*
 * Copies between two devices of the fake, in both directions, one of them
 * pitched (2D), go through the fake's peer entries `peer_1d` and `peer_nd`
 * (one call each; with `peer_nd` NULL, the pitched one is a `peer_1d` call
 * per row), the single-context ones refusing the other device's address,
 * and the data arrives, both ways.
 */
void plugin_case_check_peer_copies(struct plugin_case *c,
                                   const char *devices_knob,
                                   const char *peer_1d, const char *peer_nd);

/*
 * A second host opens the same device; the first resets it and makes new
 * objects (the fake hands the second's old handles and addresses out
 * again). The second's next copy is ACCEL_ERR_DEVICE_LOST without reaching
 * the driver (no call of `enter_call`, the entry every plugin entry starts
 * with: cuCtxGetCurrent, hipGetDevice), the first's data is untouched, and
 * the second's reset recovers.
 */
void plugin_case_check_stale_open_is_refused(struct plugin_case *c,
                                             const char *enter_call);

/*
 * With the fake's stream work delayed 200 ms (`delay_knob`, set before the
 * device opens): a blocking stream wait and a blocking event wait each
 * take under a tenth of a core of process CPU time, while the fake spins
 * in any wait not asked to block.
 */
void plugin_case_check_blocking_waits_use_no_core(struct plugin_case *c,
                                                  const char *delay_knob);

/*
 * With the fake's failure knob `fail_knob` set to `refusals` (the
 * unregistering of a pinned block and the reset call `reset_call` both
 * refused): accel_device_reset is ACCEL_ERR_UNRECOVERABLE with the
 * driver's reason, a second reset answers the same without calling the
 * driver, and host_free still unregisters the block the driver kept.
 */
void plugin_case_check_refused_reset_is_unrecoverable(struct plugin_case *c,
                                                      const char *fail_knob,
                                                      const char *refusals,
                                                      const char *reset_call);

/*
 * With the fake set to fault at the first launch: a callback enqueued
 * behind the faulting kernel is never told ACCEL_OK; the reset delivers it
 * with ACCEL_ERR_DEVICE_LOST.
 */
void plugin_case_check_callback_after_a_fault_is_lost(struct plugin_case *c,
                                                      const char *module_path);

/* Send stderr to a temporary file, for plugin_case_stderr_bytes. */
struct plugin_case_stderr {
    char path[64];
    int saved;
    int capture;
};

void plugin_case_capture_stderr(struct plugin_case_stderr *capture,
                                const char *name);
/* Put stderr back; how many bytes were written to it meanwhile. */
long plugin_case_stderr_bytes(struct plugin_case_stderr *capture);

/*
 * native_handles through the kind's table, called directly (plugin_native.c):
 * device `index` of two (`devices_env` set to 2) with a stream. `whole`
 * with the full struct, `no_stream` asked without a stream, `cut` with a
 * struct_size that ends before the context (the rest filled with 0xa5
 * before the call), `too_short` refused; `stream` is the plugin's stream
 * handle (destroyed by now: compare it, never use it).
 */
struct plugin_case_native {
    struct accel_native_handles whole, no_stream, cut, too_short;
    void *stream;
};
void plugin_case_native_handles(struct plugin_case *c, const char *devices_env,
                                uint32_t index, struct plugin_case_native *out);

#endif /* PLUGIN_CASE_H */
