/*
 * The CUDA plugin's shared internals: the plugin and device objects, how an
 * entry makes the device's context current and reports a driver error, and
 * the table entries that live in the other files. Nothing here crosses the
 * plugin boundary except through the table in cuda_plugin.c.
 *
 * Most plugin objects are the driver's own handles: a stream is its
 * CUstream, an event its CUevent, and an allocation its device address.
 * A module and its kernels carry a little more: each kernel's own launch
 * limits, read at kernel_get, so that a launch past them is refused before
 * it is enqueued, with the reason (cuda_module.c).
 */
#ifndef ACCEL_CUDA_PLUGIN_H
#define ACCEL_CUDA_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

#include "context_state.h"
#include "cuda_api.h"
#include "cuda_dynamic_symbols.h"
#include "native_library.h"
#include "native_plugin.h"
#include "pinned_host.h"
#include "runtime_compiler.h"

/*
 * nvJitLink, which links NVRTC's PTX into a cubin for the device
 * (cuda_jitlink.c). Optional: without it the PTX goes to the driver.
 */
struct jitlink_st; /* nvJitLink's handle */
struct accel__cuda_jitlink {
    pthread_mutex_t lock; /* guards the first look */
    bool tried, loaded;
    char identity[640]; /* its version and file, or "nvjitlink=none (why)" */
    struct accel__native_library library;
    int (*version)(unsigned *major, unsigned *minor);
    int (*create)(struct jitlink_st **handle, uint32_t option_count,
                  const char **options);
    int (*destroy)(struct jitlink_st **handle);
    int (*add_data)(struct jitlink_st *handle, int input_type, const void *data,
                    size_t size, const char *name);
    int (*complete)(struct jitlink_st *handle);
    int (*cubin_size)(struct jitlink_st *handle, size_t *size);
    int (*cubin)(struct jitlink_st *handle, void *cubin);
    int (*error_log_size)(struct jitlink_st *handle, size_t *size);
    int (*error_log)(struct jitlink_st *handle, char *log);
};

/*
 * The plugin: the common part (plugins/common/native_plugin.h: services,
 * devices, the no-device reason), then the driver's entry points. A
 * device's handle is its CUdevice, and its max_pitch the largest pitch
 * cuMemcpy2D/3D take (CU_DEVICE_ATTRIBUTE_MAX_PITCH). Its context state is
 * the primary context's, one per device in the process, as the primary
 * context is.
 */
struct accel_drv_plugin {
    struct accel__native_plugin base; /* first: see accel__native_plugin_of */
    struct cuda_symbols symbols;
    /* cuInit succeeded: the driver stays mapped at close (see native_library.h). */
    bool initialised;
    /* NVRTC, loaded at the first compile (cuda_nvrtc.c). */
    struct accel__rtc nvrtc;
    /* nvJitLink, looked for at the first compile (cuda_jitlink.c). */
    struct accel__cuda_jitlink jitlink;
};

struct accel_drv_device {
    accel_drv_plugin *plugin;
    struct accel__native_device *physical;
    char name[24]; /* "cuda:0", for messages */
    /*
     * The primary context this open retained. Atomic: a reset replaces it
     * while other threads may be in entries that read it.
     */
    _Atomic(acu_CUcontext) context;
    /* The context epoch this open's objects were made in. */
    uint32_t epoch;
};

/*
 * A kernel: its CUfunction and its own limits, which may be tighter than
 * the device's (registers, launch bounds, static shared memory). Lives as
 * long as its module, which lists it.
 */
struct accel_drv_kernel {
    acu_CUfunction function;
    accel_drv_module *module;
    uint32_t max_threads;   /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    uint32_t static_shared; /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    /*
     * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as set now; only
     * grows, under the module's lock. Atomic: launches within it read it
     * without the lock.
     */
    _Atomic uint32_t dynamic_shared;
    struct accel_drv_kernel *next;
};

struct accel_drv_module {
    acu_CUmodule handle;
    pthread_mutex_t lock; /* guards the kernel list and each kernel's opt-in */
    struct accel_drv_kernel *kernels;
};

static inline const struct cuda_symbols *
cuda_symbols_of(const accel_drv_device *device)
{
    return &device->plugin->symbols;
}

/* ---- errors (cuda_status.c) ---- */

/*
 * ACCEL_OK for CUDA_SUCCESS. Otherwise record "CALL failed: NAME (CODE):
 * text" through services->set_error, mark the device's context lost for a
 * sticky code, and return the code's accel_status (`fallback` for codes
 * with no status of their own).
 */
accel_status accel__cuda_result(accel_drv_device *device, acu_CUresult result,
                                const char *call, accel_status fallback);

/* The same, with `extra` (a JIT log, say) after the code's text. */
accel_status accel__cuda_result_with(accel_drv_device *device,
                                     acu_CUresult result, const char *call,
                                     accel_status fallback, const char *extra);

/* The same without a device: nothing is marked lost. */
accel_status accel__cuda_plugin_result(accel_drv_plugin *plugin,
                                       acu_CUresult result, const char *call,
                                       accel_status fallback);

/*
 * For a failure an entry cannot return (a free, a destroy): log it at debug
 * level and mark the context lost for a sticky code; the thread's error
 * detail is left alone.
 */
void accel__cuda_ignore(accel_drv_device *device, acu_CUresult result,
                        const char *call);

/* "NAME (CODE): text" for a reason string. */
void accel__cuda_describe(accel_drv_plugin *plugin, acu_CUresult result,
                          char *out, size_t size);

/*
 * Call driver entry `symbol` with the parenthesised `args` and evaluate to
 * the accel_status of its result (see accel__cuda_result), so that the
 * entry's name in the detail is always the entry called.
 */
#define CUDA_CALL(device, fallback, symbol, args)                              \
    accel__cuda_result((device), cuda_symbols_of(device)->symbol args,         \
                       #symbol, (fallback))

/* ---- the context on the calling thread (cuda_device.c) ---- */

/* What accel__cuda_enter did, for accel__cuda_leave to undo. */
struct cuda_scope {
    bool gated;             /* the context state's gate is held */
    bool pushed;            /* the context was pushed */
    acu_CUcontext previous; /* the thread's current context at enter */
};

/*
 * Make the device's primary context current on the calling thread for one
 * entry: nothing when it already is, else push it (the caller's own
 * current context, if any, comes back at leave). The open's objects are
 * checked first: when a reset through another open has made them stale,
 * ACCEL_ERR_DEVICE_LOST, and nothing reaches the driver (the same handle
 * values may name another open's new objects). Until leave, no reset runs
 * (context_state.h's gate). Errors: ACCEL_ERR_DEVICE_LOST, the driver's.
 */
accel_status accel__cuda_enter(accel_drv_device *device,
                               struct cuda_scope *out_scope);
void accel__cuda_leave(accel_drv_device *device, const struct cuda_scope *scope);

/*
 * accel__cuda_enter for an entry that hands an object back (a free, a
 * destroy): false, and nothing to do, when the object is already gone,
 * that is when a reset through another open has made a new primary context
 * since this open's objects were made (cuDevicePrimaryCtxReset destroys
 * every resource of the context, and the driver must not be given their
 * handles again, nor this open's stale context pushed); or when the
 * context cannot be made current.
 */
bool accel__cuda_enter_to_release(accel_drv_device *device,
                                  struct cuda_scope *out_scope);

/*
 * accel__cuda_enter for objects that outlive a reset (pinned blocks):
 * whatever the open's epoch. Errors: the driver's.
 */
accel_status accel__cuda_enter_any_epoch(accel_drv_device *device,
                                         struct cuda_scope *out_scope);

/* ---- handles: the driver's own ---- */

static inline acu_CUstream cuda_stream_handle(accel_drv_stream *stream)
{
    return (acu_CUstream)(void *)stream;
}

static inline acu_CUevent cuda_event_handle(accel_drv_event *event)
{
    return (acu_CUevent)(void *)event;
}

/* ---- table entries, cuda_device.c ---- */

accel_status accel__cuda_device_open(accel_drv_plugin *plugin, uint32_t index,
                                     accel_drv_device **out_device);
void accel__cuda_device_close(accel_drv_device *device);
accel_status accel__cuda_device_status(accel_drv_device *device);
accel_status accel__cuda_device_reset(accel_drv_device *device);
accel_status accel__cuda_native_handles(accel_drv_device *device,
                                        accel_drv_stream *stream,
                                        struct accel_native_handles *out);

/* ---- table entries, cuda_memory.c ---- */

accel_status accel__cuda_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                   accel_drv_mem **out_mem,
                                   uint64_t *out_address);
void accel__cuda_mem_free(accel_drv_device *device, accel_drv_mem *mem);
accel_status accel__cuda_host_alloc(accel_drv_device *device, size_t bytes,
                                    void **out_ptr);
void accel__cuda_host_free(accel_drv_device *device, void *ptr);

/*
 * The device's pinned blocks with the CUDA registration calls, for the
 * calls of pinned_host.h: host_alloc and host_free, and a reset's
 * unregistering and registering again (cuda_device.c).
 */
struct accel__pinned_device accel__cuda_pinned(accel_drv_device *device);

/* ---- table entries, cuda_stream.c ---- */

accel_status accel__cuda_stream_create(accel_drv_device *device,
                                       accel_drv_stream **out_stream);
void accel__cuda_stream_destroy(accel_drv_device *device,
                                accel_drv_stream *stream);
accel_status accel__cuda_stream_sync(accel_drv_device *device,
                                     accel_drv_stream *stream);
accel_status accel__cuda_event_create(accel_drv_device *device,
                                      accel_drv_event **out_event);
void accel__cuda_event_destroy(accel_drv_device *device, accel_drv_event *event);
accel_status accel__cuda_event_record(accel_drv_device *device,
                                      accel_drv_event *event,
                                      accel_drv_stream *stream);
accel_status accel__cuda_event_query(accel_drv_device *device,
                                     accel_drv_event *event);
accel_status accel__cuda_event_sync(accel_drv_device *device,
                                    accel_drv_event *event);
accel_status accel__cuda_event_elapsed(accel_drv_device *device,
                                       accel_drv_event *start,
                                       accel_drv_event *end, int64_t *out_ns);
accel_status accel__cuda_stream_wait_event(accel_drv_device *device,
                                           accel_drv_stream *stream,
                                           accel_drv_event *event);
accel_status accel__cuda_host_func(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   void (*fn)(void *user), void *user);

/* ---- table entries, cuda_copy.c ---- */

accel_status accel__cuda_copy_to_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        const void *src,
                                        const struct accel_copy_layout *layout);
accel_status accel__cuda_copy_to_host(accel_drv_device *device,
                                      accel_drv_stream *stream, void *dst,
                                      uint64_t src,
                                      const struct accel_copy_layout *layout);
accel_status accel__cuda_copy_peer(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   accel_drv_device *dst_device, uint64_t dst,
                                   accel_drv_device *src_device, uint64_t src,
                                   const struct accel_copy_layout *layout);
accel_status accel__cuda_copy_on_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        uint64_t src,
                                        const struct accel_copy_layout *layout);

/* ---- table entries, cuda_module.c ---- */

void accel__cuda_jitlink_init(struct accel__cuda_jitlink *link);
void accel__cuda_jitlink_fini(struct accel__cuda_jitlink *link);
/* What nvJitLink is found (looked for once), for the compiler identity. */
const char *accel__cuda_jitlink_identity(accel_drv_plugin *plugin);
/*
 * Hand `image` to the request: a PTX image linked into a cubin for the
 * device's sm_XY when nvJitLink is there, else as it is.
 */
accel_status accel__cuda_jitlink_put(accel_drv_device *device,
                                     const struct accel_compile_request *request,
                                     const void *image, size_t size);

/* Kernel source through NVRTC (cuda_nvrtc.c); see driver.h. */
accel_status
accel__cuda_module_compile(accel_drv_device *device,
                           const struct accel_compile_request *request);
accel_status accel__cuda_compiler_identity(accel_drv_device *device,
                                           char *out_identity, size_t capacity);
accel_status accel__cuda_module_load(accel_drv_device *device, const void *image,
                                     size_t size, accel_drv_module **out_module);
void accel__cuda_module_unload(accel_drv_device *device,
                               accel_drv_module *module);
accel_status accel__cuda_kernel_get(accel_drv_device *device,
                                    accel_drv_module *module, const char *name,
                                    accel_drv_kernel **out_kernel,
                                    struct accel_kernel_signature *out_signature);
accel_status accel__cuda_launch(accel_drv_device *device,
                                accel_drv_stream *stream,
                                accel_drv_kernel *kernel,
                                const struct accel_launch_config *config,
                                void *const *args, const size_t *arg_sizes,
                                uint32_t nargs);

#endif /* ACCEL_CUDA_PLUGIN_H */
