/*
 * The HIP plugin's shared internals: the plugin and device objects, how an
 * entry makes the device current on the calling thread and reports a
 * runtime error, and the table entries that live in the other files.
 * Nothing here crosses the plugin boundary except through the table in
 * hip_plugin.c.
 *
 * Most plugin objects are the runtime's own handles: a stream is its
 * hipStream_t, a kernel its hipFunction_t, an allocation its device
 * address. Two carry a little more: an event remembers whether it was ever
 * recorded (the ABI's never-recorded event is complete, which the plugin
 * answers itself rather than trust every runtime version to), a module
 * keeps its kernels' signatures, read from the code object's metadata at
 * load (see hip_code_object.h), and a kernel its own launch limits, read at
 * kernel_get (hip_module.c).
 */
#ifndef ACCEL_HIP_PLUGIN_H
#define ACCEL_HIP_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

#include "context_state.h"
#include "hip_api.h"
#include "hip_code_object.h"
#include "hip_dynamic_symbols.h"
#include "native_library.h"
#include "native_plugin.h"
#include "pinned_host.h"
#include "runtime_compiler.h"

/*
 * The plugin: the common part (plugins/common/native_plugin.h: services,
 * devices, the no-device reason), then the runtime's entry points. A
 * device's handle is its ordinal, and its max_pitch the largest pitch
 * hipMemcpy2D/3D take (hipDeviceAttributeMaxPitch). Its context state is
 * the device context's, one per device in the process, as HIP's device
 * context is: hipDeviceReset through one host frees what every other host
 * in the process made on the device.
 */
struct accel_drv_plugin {
    struct accel__native_plugin base; /* first: see accel__native_plugin_of */
    struct hip_symbols symbols;
    /* hipInit was called: the runtime stays mapped at close (see native_library.h). */
    bool init_called;
    /*
     * Each device's full target ID, features included ("gfx90a:sramecc+:xnack-"),
     * for what a module load that found no code for it says.
     */
    char targets[ACCEL__NATIVE_DEVICES_MAX][64];
    /* hiprtc, loaded at the first compile (hip_rtc.c). */
    struct accel__rtc hiprtc;
};

struct accel_drv_device {
    accel_drv_plugin *plugin;
    struct accel__native_device *physical;
    char name[24]; /* "hip:0", for messages */
    /* The context epoch this open's objects were made in. */
    uint32_t epoch;
};

struct accel_drv_event {
    ahip_hipEvent_t handle;
    /* Set once hipEventRecord succeeded: before that the event is complete. */
    atomic_bool recorded;
};

/*
 * A kernel: its hipFunction_t and its own limits, which may be tighter
 * than the device's (registers, launch bounds, static shared memory).
 * Lives as long as its module, which lists it.
 */
struct accel_drv_kernel {
    ahip_hipFunction_t function;
    uint32_t max_threads; /* HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK; the device's if unknown */
    uint32_t static_shared; /* HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES; 0 if unknown */
    struct accel_drv_kernel *next;
};

struct accel_drv_module {
    ahip_hipModule_t handle;
    void *image; /* the plugin's copy, kept while the module lives */
    struct accel__hip_code_object code;
    pthread_mutex_t lock; /* guards the kernel list */
    bool locked;          /* the lock was made */
    struct accel_drv_kernel *kernels;
};

static inline const struct hip_symbols *
hip_symbols_of(const accel_drv_device *device)
{
    return &device->plugin->symbols;
}

/* ---- errors (hip_status.c) ---- */

/*
 * ACCEL_OK for hipSuccess. Otherwise record "CALL failed: NAME (CODE):
 * text" through services->set_error, mark the device's context lost for a
 * sticky code, and return the code's accel_status (`fallback` for codes
 * with no status of their own).
 */
accel_status accel__hip_result(accel_drv_device *device, ahip_hipError_t result,
                               const char *call, accel_status fallback);

/* The same, with `extra` (what else is known, e.g. of the image) after the code's text. */
accel_status accel__hip_result_with(accel_drv_device *device,
                                    ahip_hipError_t result, const char *call,
                                    accel_status fallback, const char *extra);

/* The same without a device: nothing is marked lost. */
accel_status accel__hip_plugin_result(accel_drv_plugin *plugin,
                                      ahip_hipError_t result, const char *call,
                                      accel_status fallback);

/*
 * The same, except that a failure which is not a loss is `status` whatever
 * its code: for a call whose codes differ between runtime versions but all
 * mean one thing to the caller. The detail still names the native code.
 */
accel_status accel__hip_result_as(accel_drv_device *device,
                                  ahip_hipError_t result, const char *call,
                                  accel_status status);

/*
 * For a failure an entry cannot return (a free, a destroy): log it at debug
 * level and mark the context lost for a sticky code; the thread's error
 * detail is left alone.
 */
void accel__hip_ignore(accel_drv_device *device, ahip_hipError_t result,
                       const char *call);

/* "NAME (CODE): text" for a reason string. */
void accel__hip_describe(accel_drv_plugin *plugin, ahip_hipError_t result,
                         char *out, size_t size);

/*
 * Call runtime entry `symbol` with the parenthesised `args` and evaluate to
 * the accel_status of its result (see accel__hip_result), so that the
 * entry's name in the detail is always the entry called.
 */
#define HIP_CALL(device, fallback, symbol, args)                               \
    accel__hip_result((device), hip_symbols_of(device)->symbol args, #symbol,  \
                      (fallback))

/* ---- the device on the calling thread (hip_device.c) ---- */

/* What accel__hip_enter did, for accel__hip_leave to undo. */
struct hip_scope {
    bool gated; /* the context state's gate is held */
    int previous;
    bool switched;
};

/*
 * Make the device current on the calling thread for one entry: nothing
 * when it already is, else hipSetDevice, and the caller's own device comes
 * back at leave. The open's objects are checked first: when a reset
 * through another open has made them stale, ACCEL_ERR_DEVICE_LOST, and
 * nothing reaches the runtime (the same handle values may name another
 * open's new objects). Until leave, no reset runs (context_state.h's
 * gate). Errors: ACCEL_ERR_DEVICE_LOST, the runtime's.
 */
accel_status accel__hip_enter(accel_drv_device *device,
                              struct hip_scope *out_scope);
void accel__hip_leave(accel_drv_device *device, const struct hip_scope *scope);

/*
 * accel__hip_enter for an entry that hands back an object a reset frees
 * (a stream, device memory): false, and nothing to do, when the object is
 * already gone, that is when a reset through another open has started a
 * new context since this open's objects were made (hipDeviceReset destroys
 * the device's streams and memory in the process, and the runtime may hand
 * their handles out again); or when the device cannot be made current.
 */
bool accel__hip_enter_to_release(accel_drv_device *device,
                                 struct hip_scope *out_scope);

/*
 * accel__hip_enter for objects that outlive a reset (pinned blocks,
 * events, modules): whatever the open's epoch. Errors: the runtime's.
 */
accel_status accel__hip_enter_any_epoch(accel_drv_device *device,
                                        struct hip_scope *out_scope);

/* ---- handles: the runtime's own ---- */

static inline ahip_hipStream_t hip_stream_handle(accel_drv_stream *stream)
{
    return (ahip_hipStream_t)(void *)stream;
}

/* ---- table entries, hip_device.c ---- */

accel_status accel__hip_device_open(accel_drv_plugin *plugin, uint32_t index,
                                    accel_drv_device **out_device);
void accel__hip_device_close(accel_drv_device *device);
accel_status accel__hip_device_status(accel_drv_device *device);
accel_status accel__hip_device_reset(accel_drv_device *device);
accel_status accel__hip_native_handles(accel_drv_device *device,
                                       accel_drv_stream *stream,
                                       struct accel_native_handles *out);

/* ---- table entries, hip_memory.c ---- */

accel_status accel__hip_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                  accel_drv_mem **out_mem, uint64_t *out_address);
void accel__hip_mem_free(accel_drv_device *device, accel_drv_mem *mem);
accel_status accel__hip_host_alloc(accel_drv_device *device, size_t bytes,
                                   void **out_ptr);
void accel__hip_host_free(accel_drv_device *device, void *ptr);

/*
 * The device's pinned blocks with the HIP registration calls, for the
 * calls of pinned_host.h: host_alloc and host_free, and a reset's
 * unregistering and registering again (hip_device.c).
 */
struct accel__pinned_device accel__hip_pinned(accel_drv_device *device);

/* ---- table entries, hip_stream.c ---- */

accel_status accel__hip_stream_create(accel_drv_device *device,
                                      accel_drv_stream **out_stream);
void accel__hip_stream_destroy(accel_drv_device *device,
                               accel_drv_stream *stream);
accel_status accel__hip_stream_sync(accel_drv_device *device,
                                    accel_drv_stream *stream);
accel_status accel__hip_event_create(accel_drv_device *device,
                                     accel_drv_event **out_event);
void accel__hip_event_destroy(accel_drv_device *device, accel_drv_event *event);
accel_status accel__hip_event_record(accel_drv_device *device,
                                     accel_drv_event *event,
                                     accel_drv_stream *stream);
accel_status accel__hip_event_query(accel_drv_device *device,
                                    accel_drv_event *event);
accel_status accel__hip_event_sync(accel_drv_device *device,
                                   accel_drv_event *event);
accel_status accel__hip_event_elapsed(accel_drv_device *device,
                                      accel_drv_event *start,
                                      accel_drv_event *end, int64_t *out_ns);
accel_status accel__hip_stream_wait_event(accel_drv_device *device,
                                          accel_drv_stream *stream,
                                          accel_drv_event *event);
accel_status accel__hip_host_func(accel_drv_device *device,
                                  accel_drv_stream *stream,
                                  void (*fn)(void *user), void *user);

/* ---- table entries, hip_copy.c ---- */

accel_status accel__hip_copy_to_device(accel_drv_device *device,
                                       accel_drv_stream *stream, uint64_t dst,
                                       const void *src,
                                       const struct accel_copy_layout *layout);
accel_status accel__hip_copy_to_host(accel_drv_device *device,
                                     accel_drv_stream *stream, void *dst,
                                     uint64_t src,
                                     const struct accel_copy_layout *layout);
accel_status accel__hip_copy_peer(accel_drv_device *device,
                                  accel_drv_stream *stream,
                                  accel_drv_device *dst_device, uint64_t dst,
                                  accel_drv_device *src_device, uint64_t src,
                                  const struct accel_copy_layout *layout);
accel_status accel__hip_copy_on_device(accel_drv_device *device,
                                       accel_drv_stream *stream, uint64_t dst,
                                       uint64_t src,
                                       const struct accel_copy_layout *layout);

/* ---- table entries, hip_module.c ---- */

/* Kernel source through hiprtc (hip_rtc.c); see driver.h. */
accel_status accel__hip_module_compile(accel_drv_device *device,
                                       const struct accel_compile_request *request);
accel_status accel__hip_compiler_identity(accel_drv_device *device,
                                          char *out_identity, size_t capacity);
accel_status accel__hip_module_load(accel_drv_device *device, const void *image,
                                    size_t size, accel_drv_module **out_module);
void accel__hip_module_unload(accel_drv_device *device, accel_drv_module *module);
accel_status accel__hip_kernel_get(accel_drv_device *device,
                                   accel_drv_module *module, const char *name,
                                   accel_drv_kernel **out_kernel,
                                   struct accel_kernel_signature *out_signature);
accel_status accel__hip_launch(accel_drv_device *device,
                               accel_drv_stream *stream, accel_drv_kernel *kernel,
                               const struct accel_launch_config *config,
                               void *const *args, const size_t *arg_sizes,
                               uint32_t nargs);

#endif /* ACCEL_HIP_PLUGIN_H */
