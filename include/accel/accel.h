/*
 * accel: run compute work on whatever accelerator the machine has.
 *
 * The application API of libaccel. A program creates a host (which finds
 * the driver plugins), opens a device (chosen by ACCEL_BACKEND or by
 * priority), allocates typed device memory as refs, and enqueues copies on
 * streams.
 *
 * Conventions: every fallible function returns accel_status (ACCEL_OK is
 * zero); outputs come last, are named out_*, and are cleared on entry. When a
 * function fails, accel_last_error() on the same thread says why.
 *
 * Thread safety: a host and its devices may be used from any thread. Any
 * thread may enqueue on any stream; a stream runs its work in order.
 *
 * fork(): a host and what is made from it belong to the process that
 * created the host. In a fork's child, calls on the parent's host, devices,
 * streams, events, modules and refs return ACCEL_ERR_NOT_SUPPORTED ("used
 * after fork: create a new host in the child") instead of waiting for
 * threads the child does not have. accel_host_destroy, accel_device_close,
 * accel_stream_destroy, accel_event_destroy, accel_module_unload and
 * accel_host_free do nothing there; accel_device_info_get,
 * accel_host_plugins, accel_host_search_path, accel_host_selection,
 * accel_device_memory_stats and accel_device_set_pool_policy, which only
 * touch host-side values, still answer. A host the child creates works.
 *
 * Status codes, the copy layout and device properties are shared with the
 * plugin ABI and are defined in <accel/types.h>; this header does not
 * include the plugin ABI (<accel/driver.h>).
 */
#ifndef ACCEL_ACCEL_H
#define ACCEL_ACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ACCEL_API __attribute__((visibility("default")))
#else
#define ACCEL_API
#endif

/* ---- versions ----
 *
 * ACCEL_VERSION is the version of this header; accel_version() that of the
 * library the program runs with. Both encode major, minor and patch as
 * ACCEL_VERSION_ENCODE does, so that they compare as numbers.
 */
#define ACCEL_VERSION_MAJOR 0
#define ACCEL_VERSION_MINOR 1
#define ACCEL_VERSION_PATCH 0
#define ACCEL_VERSION_ENCODE(major, minor, patch)                              \
    (((uint32_t)(major) << 16) | ((uint32_t)(minor) << 8) | (uint32_t)(patch))
#define ACCEL_VERSION                                                          \
    ACCEL_VERSION_ENCODE(ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR,             \
                         ACCEL_VERSION_PATCH)

/* The library's version, as ACCEL_VERSION was when it was built. */
ACCEL_API uint32_t accel_version(void);

/* ---- structs that grow ----
 *
 * Every public struct that a caller fills in or receives can grow in a
 * minor release without breaking a program compiled against an older
 * header, in one of two ways:
 *
 *  - A struct the caller fills in (accel_host_options, accel_recovery_policy,
 *    accel_pool_policy) starts with `struct_size`, the sizeof the struct as
 *    the caller was compiled. The library reads only the fields that
 *    struct_size covers whole; the others take their zero value. 0 stands
 *    for the struct as first published with struct_size (this release), so
 *    that `{ .plugin_path = p }` keeps working. The `*_default()`
 *    initialisers below set struct_size and the defaults: prefer them.
 *  - A struct the library fills in (accel_memory_stats, accel_device_info)
 *    also starts with `struct_size`, which the library sets to the bytes it
 *    wrote. The caller's sizeof travels with the call: the function names
 *    are macros that pass it to `*_sized` functions (which bindings call
 *    directly). The library writes no byte past the caller's size and
 *    zeroes the fields it does not know.
 *
 * A field added later starts at or after the previous release's sizeof.
 * A struct_size that is neither 0 nor at least the size of the field after
 * struct_size is ACCEL_ERR_INVALID_ARGUMENT.
 *
 * Values that are copied whole (accel_ref, accel_arg, accel_dim3), the
 * plugin ABI's structs (<accel/types.h>) and accel_plugin_info (an array the
 * host owns) are frozen: they do not grow.
 */

/* ---- errors ---- */

/* The code's name, e.g. "ACCEL_ERR_STALE_REF"; "ACCEL_STATUS_UNKNOWN" else. */
ACCEL_API const char *accel_status_name(accel_status status);
/* One sentence saying when the code is returned. Never NULL. */
ACCEL_API const char *accel_status_string(accel_status status);
/*
 * The detail of the last error on the calling thread: what failed and why,
 * with the native error's name where a driver made it. Never NULL ("" when
 * there is none). Valid until the thread's next accel call.
 */
ACCEL_API const char *accel_last_error(void);

/* ---- host: plugin discovery ---- */

typedef struct accel_host accel_host;

/*
 * How a host finds and chooses plugins. Every field may be left zero (NULL):
 * then the environment decides (ACCEL_PLUGIN_PATH, ACCEL_BACKEND), read
 * through secure_getenv. A field set here wins over the environment.
 */
typedef struct accel_host_options {
    /* sizeof(accel_host_options) as the caller was compiled, or 0. */
    uint32_t struct_size;
    /* Colon-separated directories or plugin files; replaces the default. */
    const char *plugin_path;
    /* Backend selection, the form of ACCEL_BACKEND: "cuda", "hip:1,null",
     * "cuda:GPU-5b1c", "cuda:pci=0000:41:00.0", "hip:name=*MI300*", "!hip",
     * "cuda:%local,null:%local" (the device at the launcher's local rank;
     * "%local%" modulo the devices; "%rank", "%rank%" by the rank), read
     * at each selection (the README's "Selecting a device" has the
     * grammar). */
    const char *backend;
    /*
     * Under elevated privileges (setuid or setgid, file capabilities, or
     * real and effective ids that differ) the GPU plugins do not open their
     * vendor runtimes (libcuda, libamdhip64), which read environment
     * variables of their own that name files and libraries: the plugins
     * report no device, with the reason "elevated privileges: vendor
     * runtime not opened". true opts in: each plugin then first removes
     * from the process environment the vendor variables that the README
     * lists, and opens its runtime. Ignored (and harmless) when the process
     * is not elevated. Removing variables changes the environment of the
     * whole process: opt in before other threads read it.
     */
    bool vendor_runtimes_when_elevated;
} accel_host_options;

/* Options with every field zero: the environment decides. */
static inline accel_host_options accel_host_options_default(void)
{
    /* Every field named, so that C++ compilers see no missing one. */
    accel_host_options options = {(uint32_t)sizeof(accel_host_options), NULL,
                                  NULL, false};
    return options;
}

/*
 * Find and open plugins. A plugin that fails a check is skipped with its
 * reason kept, never fatal. A malformed ACCEL_BACKEND is kept as the
 * selection error and reported by accel_device_open_selected, so that the
 * candidates can still be listed. `options` may be NULL.
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY, ACCEL_ERR_INVALID_ARGUMENT (a
 * struct_size too small to hold a field).
 */
ACCEL_API accel_status accel_host_create(const accel_host_options *options,
                                         accel_host **out_host);
/* Close every device still open, then every plugin. NULL is allowed. */
ACCEL_API void accel_host_destroy(accel_host *host);
/*
 * With ACCEL_TRACE=FILE set when the first host was created (and the
 * process not privileged), write what the trace has buffered to FILE, a
 * Chrome trace-event JSON array that ui.perfetto.dev and chrome://tracing
 * open; accel_host_destroy does the same. The file is whole after each
 * flush. Commands still running are written by a later flush. Without a
 * trace it does nothing and returns ACCEL_OK; ACCEL_ERR_NOT_SUPPORTED when
 * the file cannot be written (the detail says why). See README "Tracing".
 */
ACCEL_API accel_status accel_trace_flush(void);

typedef enum accel_plugin_state {
    ACCEL_PLUGIN_LOADED = 0,    /* opened, and has at least one device */
    ACCEL_PLUGIN_NO_DEVICE = 1, /* opened, but reports zero devices */
    ACCEL_PLUGIN_REJECTED = 2,  /* failed a check; not used */
    ACCEL_PLUGIN_SKIPPED = 3    /* not opened: ACCEL_BACKEND does not name it,
                                   or excludes it whole ("!hip") */
} accel_plugin_state;

/* One candidate plugin file, as discovery saw it. */
typedef struct accel_plugin_info {
    const char *path;    /* the file considered */
    const char *name;    /* NAME from accel-plugin-NAME.so */
    const char *version; /* the plugin's version; NULL unless opened */
    accel_plugin_state state;
    /* Why rejected or without device ("not a candidate: did you mean
     * accel-plugin-NAME.so?" for a file named libaccel-plugin-NAME.so or
     * accel-plugin-NAME.so.1, which is never opened). A plugin that loaded
     * but exports more than accel_driver_v1 has a warning here ("warning:
     * exports 5 symbols; only accel_driver_v1 should be exported"), after
     * its no-device reason if it has one. NULL for a loaded plugin without
     * a warning. */
    const char *reason;
    int32_t priority;
    uint32_t device_count;
    /* The ABI the plugin's table was built for (driver.h); 0.0 unless opened. */
    uint16_t abi_major;
    uint16_t abi_minor;
    /* The optional driver entries the plugin has, in table order, ", "
     * between ("host_func, wait_outside_streams, copy_peer"); "" for none;
     * NULL unless opened. */
    const char *optional_entries;
} accel_plugin_info;

/*
 * Every candidate file in search order, with its state and reason. The
 * array is owned by the host and lives until accel_host_destroy.
 */
ACCEL_API void accel_host_plugins(const accel_host *host,
                                  const accel_plugin_info **out_plugins,
                                  size_t *out_count);
/*
 * The directories and files searched, in order. Owned by the host.
 */
ACCEL_API void accel_host_search_path(const accel_host *host,
                                      const char *const **out_entries,
                                      size_t *out_count);
/*
 * Describe device `index` of a loaded plugin without opening it (opening a
 * GPU device creates a context; describing one does not).
 * Errors: ACCEL_ERR_NOT_FOUND, ACCEL_ERR_NO_DEVICE, the plugin's error.
 */
ACCEL_API accel_status
accel_host_device_props(accel_host *host, const char *plugin, uint32_t index,
                        struct accel_device_props *out_props);
/* The state and reason for a plugin state, as a word ("loaded", ...). */
ACCEL_API const char *accel_plugin_state_name(accel_plugin_state state);

/* ---- devices ---- */

typedef struct accel_device accel_device;

typedef struct accel_device_info {
    uint32_t struct_size; /* set by the library: the bytes it wrote */
    const char *plugin;   /* the plugin's name */
    uint32_t index;       /* the device's index within its plugin */
    uint32_t id;          /* unique among the process's open devices */
    uint32_t generation;  /* bumped by every reset */
    struct accel_device_props props;
} accel_device_info;

/*
 * Open the device that ACCEL_BACKEND (or the host's options) selects:
 * items in order, the first that picks a device wins; an item picks the
 * first device of the plugins it names ("*": all, highest priority first)
 * that its term (an index, a uuid prefix, pci=BUS, name=GLOB) matches and
 * no exclusion ("!hip", "!cuda:1") takes. Unset: the live device of the
 * highest-priority plugin.
 * Errors: ACCEL_ERR_NOT_FOUND (a named plugin was not found: the detail
 * lists those found; or a uuid, pci= or name= term matches no device of
 * plugins that have devices, or an exclusion's term takes none: the detail
 * lists the devices there are), ACCEL_ERR_INVALID_ARGUMENT (a malformed
 * selection, or a uuid prefix that fits two devices), ACCEL_ERR_NO_DEVICE
 * (no item picks a device; the detail says why for each), or the plugin's
 * error.
 */
ACCEL_API accel_status accel_device_open_selected(accel_host *host,
                                                  accel_device **out_device);
/*
 * Say which device accel_device_open_selected would open, without opening
 * it: the plugin's name (owned by the host) and the device index. A uuid,
 * pci= or name= term reads the descriptions of the devices of the plugins
 * it names (as accel_host_device_props does); an index reads nothing.
 */
ACCEL_API accel_status accel_host_selection(accel_host *host,
                                            const char **out_plugin,
                                            uint32_t *out_index);
/*
 * The same choice as accel_host_selection, written out: one line per item
 * tried and per plugin and device it considered (each device's uuid, bus
 * id and name), the pick, or "error: CODE: detail" last. Opens nothing.
 * The text is cut to fit `size` bytes, always terminated. Returns the
 * status accel_host_selection would.
 */
ACCEL_API accel_status accel_host_selection_explain(accel_host *host,
                                                    char *buffer, size_t size);
/* Open device `index` of the plugin named `plugin`. */
ACCEL_API accel_status accel_device_open(accel_host *host, const char *plugin,
                                         uint32_t index,
                                         accel_device **out_device);
/*
 * Close a device: wait for its work, free its memory, streams and events.
 * A communicator still live on the device is aborted (its collectives in
 * flight return) and destroyed, which is logged; its handle is gone.
 * NULL is allowed.
 */
ACCEL_API void accel_device_close(accel_device *device);
/*
 * Describe an open device. A macro: it passes sizeof *(out_info), and the
 * library writes no more (see "structs that grow").
 */
#define accel_device_info_get(device, out_info)                                \
    accel_device_info_get_sized((device), (out_info), sizeof *(out_info))
ACCEL_API accel_status accel_device_info_get_sized(const accel_device *device,
                                                   accel_device_info *out_info,
                                                   size_t info_size);
/*
 * Wait until all work on every stream of the device has completed,
 * callbacks included, as accel_stream_sync on each stream. Called from a
 * callback, it does not wait for that callback's own stream's callbacks.
 */
ACCEL_API accel_status accel_device_sync(accel_device *device);
/*
 * ACCEL_OK while the device is live, ACCEL_ERR_DEVICE_LOST once lost,
 * ACCEL_ERR_UNRECOVERABLE once automatic recovery has given up on it. A
 * reset under way is not a loss: the call waits for it and then answers.
 */
ACCEL_API accel_status accel_device_status(accel_device *device);
/*
 * Rebuild the device: every allocation is released and every ref minted
 * before becomes stale (ACCEL_ERR_STALE_REF); the generation is bumped.
 * Memory from accel_host_alloc is kept: same address, same contents.
 * Streams and events stay valid handles, emptied; modules are loaded again.
 * Callbacks still pending are delivered with ACCEL_ERR_DEVICE_LOST. Work
 * other threads have in flight on the device is waited for (or, on a lost
 * device, dropped) first. A reset is not a loss, and is not counted as one
 * by automatic recovery: calls other threads make on the device complete
 * before it or wait for it, and then see ACCEL_ERR_STALE_REF for refs
 * minted before it; none returns ACCEL_ERR_DEVICE_LOST because of it. Two
 * resets at once run one after the other. A reset that succeeds also
 * clears the unrecoverable mark and the loss history of automatic
 * recovery. When it fails the device stays lost: later calls on it return
 * ACCEL_ERR_DEVICE_LOST (ACCEL_ERR_UNRECOVERABLE while automatic recovery's
 * mark stays) until a reset succeeds. A reset that failed with any other
 * code may be tried again. ACCEL_ERR_UNRECOVERABLE from the reset itself
 * means the driver refused to recover the device (its reason is in the
 * detail; CUDA says a sticky error can need a new process): every later
 * reset of the device, through any host of the process, returns
 * ACCEL_ERR_UNRECOVERABLE at once without asking the driver again, until
 * every open of the device in the process has been closed; a host that
 * then opens it (accel_device_open) asks the driver afresh.
 */
ACCEL_API accel_status accel_device_reset(accel_device *device);

/* ---- recovery ----
 *
 * A device whose context is poisoned (a sticky driver error) is lost: the
 * call that finds it returns ACCEL_ERR_DEVICE_LOST, the device's generation
 * is bumped so that every ref minted before is stale, and every later call
 * fails until accel_device_reset. An out-of-memory error is not a loss: the
 * device stays usable.
 *
 * With automatic recovery the host resets the device itself, inside the
 * call that found the loss: that call still returns ACCEL_ERR_DEVICE_LOST
 * (its detail says the device was rebuilt), so that the caller knows its
 * refs are stale, but the device takes new work as soon as it returns.
 * Losses are counted: one more than max_losses within window_ns and the
 * device is marked unrecoverable instead of reset; the call that found that
 * loss, and every later call on the device, returns ACCEL_ERR_UNRECOVERABLE
 * until the application resets it with accel_device_reset.
 */

/*
 * Told of every loss the host sees, automatic recovery or not. `status`
 * says how it ended: ACCEL_OK, the host rebuilt the device and `generation`
 * is its new generation; ACCEL_ERR_DEVICE_LOST, the device stays lost until
 * accel_device_reset (recovery is not automatic, or the host's reset
 * failed); ACCEL_ERR_UNRECOVERABLE, the device lost more often than the
 * policy allows.
 *
 * It runs where completion callbacks run (see accel_stream_add_callback):
 * on the device's callback thread, or in accel_device_dispatch once the
 * device delivers through its file descriptor; never with an accel lock
 * held, so it may call accel functions on the device, reset included. It
 * must not close the device. A loss not yet told when the device is closed
 * is not told.
 */
typedef void (*accel_loss_callback)(accel_device *device, uint32_t generation,
                                    accel_status status, void *user);

/* The largest max_losses a policy may have. */
#define ACCEL_RECOVERY_MAX_LOSSES 64u

typedef struct accel_recovery_policy {
    /* sizeof(accel_recovery_policy) as the caller was compiled, or 0. */
    uint32_t struct_size;
    /* Reset the device when it is lost. Default false. */
    bool automatic;
    /* Losses recovered within window_ns; one more marks the device
     * unrecoverable. 0 to ACCEL_RECOVERY_MAX_LOSSES; 0 recovers none. */
    uint32_t max_losses;
    /* The window, in nanoseconds; 0 counts every loss since the policy was
     * set or the last accel_device_reset. */
    uint64_t window_ns;
    /* May be NULL. */
    accel_loss_callback on_loss;
    void *user;
} accel_recovery_policy;

/* The default policy: no automatic recovery. */
static inline accel_recovery_policy accel_recovery_policy_default(void)
{
    accel_recovery_policy policy = {
        (uint32_t)sizeof(accel_recovery_policy), false, 0, 0, NULL, NULL};
    return policy;
}

/*
 * Set how the device recovers from losses. It starts a new loss history;
 * a device already lost stays so until accel_device_reset.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT (NULL, max_losses too large, a
 * struct_size too small to hold a field).
 */
ACCEL_API accel_status accel_device_set_recovery(
    accel_device *device, const accel_recovery_policy *policy);

/* ---- typed device memory: refs ---- */

/* Size in bytes of one element; 0 for a value outside the enum. */
ACCEL_API size_t accel_elem_size(accel_elem_type type);
/* "f32", "u8", ...; "?" for a value outside the enum. */
ACCEL_API const char *accel_elem_type_name(accel_elem_type type);

/*
 * A typed reference to device memory: a value, not a pointer. It names a
 * slot (index and slot generation), the device and the device generation it
 * was minted against, its element type and length. Every use validates it.
 * Copy it freely; it never owns anything.
 */
typedef struct accel_ref {
    uint32_t slot;
    uint32_t slot_generation;
    uint32_t device_id;
    uint32_t device_generation;
    uint32_t type; /* accel_elem_type */
    uint32_t reserved;
    uint64_t count; /* elements */
} accel_ref;

/* 16-bit floats as distinct host types, so that _Generic can tell them. */
typedef struct accel_f16 {
    uint16_t bits;
} accel_f16;
typedef struct accel_bf16 {
    uint16_t bits;
} accel_bf16;

/*
 * Allocate `count` (> 0) elements of `type` on the device.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT (zero count, unknown type, a size that
 * overflows), ACCEL_ERR_OUT_OF_DEVICE_MEMORY, ACCEL_ERR_DEVICE_LOST.
 */
ACCEL_API accel_status accel_alloc(accel_device *device, accel_elem_type type,
                                   uint64_t count, accel_ref *out_ref);
/*
 * Free the allocation. Work already enqueued that uses it completes first.
 * Errors: those of accel_ref_check.
 */
ACCEL_API accel_status accel_free(accel_device *device, accel_ref ref);
/*
 * Validate a ref against a device: ACCEL_ERR_FREED_REF (freed, or never
 * valid: a zero-initialised ref on any device, and a ref of this device
 * whose slot and generation it never minted, whatever device generation
 * the ref claims), ACCEL_ERR_DEVICE_MISMATCH (another device's),
 * ACCEL_ERR_STALE_REF (minted before a reset), else ACCEL_OK. Every entry
 * that takes a ref validates it so and returns these codes.
 */
ACCEL_API accel_status accel_ref_check(accel_device *device, accel_ref ref);
/* Bytes a ref covers: count times its element size. */
ACCEL_API uint64_t accel_ref_bytes(accel_ref ref);
/*
 * The device address behind a ref, for vendor libraries (cuBLAS and the
 * like). Valid until the ref is freed or the device reset.
 */
ACCEL_API accel_status accel_ref_native(accel_device *device, accel_ref ref,
                                        uint64_t *out_address);

/* ---- pinned host memory ---- */

/*
 * Host memory the device copies from and to fastest (page-locked on a
 * GPU). Free with accel_host_free on the same device; accel_device_close
 * frees what is left. It stays valid, at the same address and with its
 * contents, across accel_device_reset and automatic recovery.
 */
ACCEL_API accel_status accel_host_alloc(accel_device *device, size_t bytes,
                                        void **out_ptr);
ACCEL_API void accel_host_free(accel_device *device, void *ptr);

/* ---- streams and events ---- */

typedef struct accel_stream accel_stream;
typedef struct accel_event accel_event;

/* An in-order queue of work on a device. */
ACCEL_API accel_status accel_stream_create(accel_device *device,
                                           accel_stream **out_stream);
/* Wait for the stream's work, then destroy it. NULL is allowed. */
ACCEL_API void accel_stream_destroy(accel_stream *stream);
/*
 * Block until all work enqueued on the stream so far has completed,
 * callbacks (accel_stream_add_callback) included: when it returns ACCEL_OK,
 * every callback added before has run and returned, so their user data may
 * be freed. In fd mode (accel_device_completion_fd) the stream's callbacks
 * that are ready run on the calling thread, inside this call, in order,
 * rather than waiting for accel_device_dispatch: a single-threaded loop that
 * syncs cannot deadlock. Errors: ACCEL_ERR_INVALID_ARGUMENT from one of the
 * stream's own callbacks (the callbacks after it cannot run before it
 * returns); when the work fails (a lost device), callbacks the stream never
 * reached are not waited for: they run, with ACCEL_ERR_DEVICE_LOST, at the
 * device's reset or close.
 */
ACCEL_API accel_status accel_stream_sync(accel_stream *stream);

ACCEL_API accel_status accel_event_create(accel_device *device,
                                          accel_event **out_event);
ACCEL_API void accel_event_destroy(accel_event *event);
/*
 * Mark the point after all work enqueued on `stream` so far. The event
 * completes (query, sync, wait) only once the callbacks added to the stream
 * before it have run, as accel_stream_sync waits for them; accel_event_sync
 * and accel_event_wait run them as accel_stream_sync does in fd mode, and
 * accel_event_query does not run them (it answers ACCEL_NOT_READY until
 * accel_device_dispatch has). accel_stream_wait_event orders device work
 * only: the waiting stream does not wait for the callbacks.
 */
ACCEL_API accel_status accel_event_record(accel_event *event,
                                          accel_stream *stream);
/* ACCEL_OK when complete, ACCEL_NOT_READY while pending, or an error. */
ACCEL_API accel_status accel_event_query(accel_event *event);
ACCEL_API accel_status accel_event_sync(accel_event *event);
/* Later work on `stream` waits for `event`; both on the same device. */
ACCEL_API accel_status accel_stream_wait_event(accel_stream *stream,
                                               accel_event *event);
/*
 * The time from `start` to `end` in nanoseconds: between the moments the
 * work before each event's last record had completed, on the device's own
 * clock where the plugin has one (CUDA and HIP event timestamps, the CPU
 * plugin's stream workers' clock; cuEventElapsedTime). Negative when `end`
 * completed first. Both must be events of one device (else
 * ACCEL_ERR_DEVICE_MISMATCH), recorded since they were made or the device
 * last reset (else ACCEL_ERR_INVALID_ARGUMENT), and completed:
 * ACCEL_NOT_READY, with *out_ns 0, while either has not. A plugin without
 * the optional event_elapsed entry gives ACCEL_ERR_NOT_SUPPORTED. The CPU
 * plugin keeps the time of an event until 1,024 more commands of its
 * stream have run, or for good once the event has been queried, synced or
 * timed after it completed; past that it answers ACCEL_ERR_NOT_SUPPORTED.
 */
ACCEL_API accel_status accel_event_elapsed(accel_event *start, accel_event *end,
                                           int64_t *out_ns);

/* ---- kernels ----
 *
 * A module is loaded from an image in the device's format (PTX or cubin for
 * CUDA, a code object for HIP, an ELF shared object for the CPU plugin) or
 * from a bundle holding several images (see accel-pack), from which the
 * host picks the one that fits the device. Modules survive a device reset:
 * the host loads them again.
 *
 * Images are trusted code: a CPU image is native code run in the process.
 * The checks made before loading one catch truncated, wrong-architecture
 * and damaged images (ACCEL_ERR_MODULE with the reason), not an adversary.
 */
typedef struct accel_module accel_module;
typedef struct accel_kernel accel_kernel;

/*
 * Load a module from `size` bytes at `image` (an image or a bundle). The
 * bytes are copied. Errors: ACCEL_ERR_MODULE (a corrupt image or bundle;
 * the detail has the loader's log), ACCEL_ERR_NOT_FOUND (a bundle with no
 * image for this device), ACCEL_ERR_NOT_SUPPORTED (a device without
 * ACCEL_DEVICE_CAP_KERNELS, which runs no kernels), ACCEL_ERR_INVALID_ARGUMENT.
 */
ACCEL_API accel_status accel_module_load(accel_device *device, const void *image,
                                         size_t size, accel_module **out_module);
/* The same from a file. */
ACCEL_API accel_status accel_module_load_file(accel_device *device,
                                              const char *path,
                                              accel_module **out_module);
/*
 * Compile kernel source for the device and load it. `source` is a
 * NUL-terminated kernel written with <accel/kernel.h> (the library supplies
 * that header to the compiler; the source may include it and nothing
 * else). `options` is NULL or a blank-separated list of -DNAME,
 * -DNAME=VALUE and -UNAME. The CPU plugin compiles with the system C
 * compiler, the CUDA plugin with NVRTC, the HIP plugin with hiprtc (see
 * the README's "Kernels from source"). Images are kept in an on-disk cache,
 * so a second compile of the same source, options, compiler and device
 * target loads without compiling. Errors: ACCEL_ERR_MODULE (the source
 * does not compile: accel_last_build_log has the compiler's whole log; or
 * it includes a file other than <accel/kernel.h>), ACCEL_ERR_NOT_SUPPORTED
 * (the device's plugin compiles no source, or no compiler is found),
 * ACCEL_ERR_INVALID_ARGUMENT (NULL, an empty source, a refused option),
 * and those of accel_module_load.
 */
ACCEL_API accel_status accel_module_compile(accel_device *device,
                                            const char *source,
                                            const char *options,
                                            accel_module **out_module);
/*
 * The whole compiler log of the calling thread's last accel_module_compile
 * ("" when it had none, or the image came from the cache). Valid until the
 * thread's next accel_module_compile or its exit.
 */
ACCEL_API const char *accel_last_build_log(void);
/* Unload; work already enqueued completes first. NULL is allowed. */
ACCEL_API void accel_module_unload(accel_module *module);
/* Find a kernel; it lives as long as the module. ACCEL_ERR_NOT_FOUND. */
ACCEL_API accel_status accel_kernel_get(accel_module *module, const char *name,
                                        accel_kernel **out_kernel);

typedef struct accel_dim3 {
    uint32_t x, y, z;
} accel_dim3;

typedef enum accel_arg_kind {
    ACCEL_ARG_KIND_REF = 1,   /* a ref: passed as its device address */
    ACCEL_ARG_KIND_VALUE = 2, /* bytes passed by value */
    /* Up to ACCEL_ARG_INLINE_MAX bytes passed by value, held in the arg
     * itself (in the storage of `ref`, which is 8-byte aligned), so that
     * the arg may be copied and outlive the expression it came from; C++'s
     * argument macros make these. `value` is ignored, `align` at most 8. */
    ACCEL_ARG_KIND_INLINE = 3
} accel_arg_kind;

/* The most bytes an ACCEL_ARG_KIND_INLINE argument holds: sizeof(accel_ref). */
#define ACCEL_ARG_INLINE_MAX 32

/*
 * One kernel argument. A ref is validated and resolved to its device
 * address when the launch is submitted. A value is `size` bytes at `value`
 * with an alignment (a power of two; CUDA's 128-byte tensor-map descriptor
 * has 64), copied at submission.
 */
typedef struct accel_arg {
    accel_arg_kind kind;
    uint32_t align;
    uint64_t size;
    const void *value;
    accel_ref ref;
} accel_arg;

#ifndef __cplusplus
#define ACCEL_ARG_REF(r) ((accel_arg){.kind = ACCEL_ARG_KIND_REF, .ref = (r)})
/* A value argument from an lvalue: ACCEL_ARG_VALUE(n) for `int n`. */
#define ACCEL_ARG_VALUE(v)                                                     \
    ((accel_arg){.kind = ACCEL_ARG_KIND_VALUE,                                 \
                 .value = &(v),                                                \
                 .size = sizeof(v),                                            \
                 .align = (uint32_t) __alignof__(v)})
#define ACCEL_ARG_BYTES(ptr, bytes, alignment)                                 \
    ((accel_arg){.kind = ACCEL_ARG_KIND_VALUE,                                 \
                 .value = (ptr),                                               \
                 .size = (bytes),                                              \
                 .align = (alignment)})

/*
 * A value argument from any arithmetic expression, converted to the scalar
 * type the name says as an assignment would. A pointer or a struct does not
 * compile (the macros apply unary +, which takes numbers only), nor does
 * anything but an accel_f16 for ACCEL_ARG_F16 and an accel_bf16 for
 * ACCEL_ARG_BF16:
 *
 *     accel_arg args[] = {ACCEL_ARG_U32(n + 1), ACCEL_ARG_F32(2.0f * a),
 *                         ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};
 *
 * The value is held in a compound literal, which lives until the end of
 * the enclosing block: build the arguments in the block that calls
 * accel_launch (which copies them), never in an inner block whose end
 * comes before the call. ACCEL_ARG_F16 and ACCEL_ARG_BF16 take an accel_f16
 * or accel_bf16.
 */
#define ACCEL_ARG_F16(v)                                                       \
    ACCEL__ARG_AS(accel_f16, _Generic((v), accel_f16 : (v)))
#define ACCEL_ARG_BF16(v)                                                      \
    ACCEL__ARG_AS(accel_bf16, _Generic((v), accel_bf16 : (v)))
#define ACCEL_ARG_F32(v) ACCEL__ARG_AS(float, +(v))
#define ACCEL_ARG_F64(v) ACCEL__ARG_AS(double, +(v))
#define ACCEL_ARG_I8(v) ACCEL__ARG_AS(int8_t, +(v))
#define ACCEL_ARG_I16(v) ACCEL__ARG_AS(int16_t, +(v))
#define ACCEL_ARG_I32(v) ACCEL__ARG_AS(int32_t, +(v))
#define ACCEL_ARG_I64(v) ACCEL__ARG_AS(int64_t, +(v))
#define ACCEL_ARG_U8(v) ACCEL__ARG_AS(uint8_t, +(v))
#define ACCEL_ARG_U16(v) ACCEL__ARG_AS(uint16_t, +(v))
#define ACCEL_ARG_U32(v) ACCEL__ARG_AS(uint32_t, +(v))
#define ACCEL_ARG_U64(v) ACCEL__ARG_AS(uint64_t, +(v))
/* An array of one T, so that a struct (accel_f16) is initialised from a
 * value of its own type as a scalar is. */
#define ACCEL__ARG_AS(T, v)                                                    \
    ((accel_arg){.kind = ACCEL_ARG_KIND_VALUE,                                 \
                 .value = (const T[1]){(v)},                                   \
                 .size = sizeof(T),                                            \
                 .align = (uint32_t) _Alignof(T)})
#endif /* !__cplusplus: the C++ forms follow the C declarations */

/*
 * Enqueue a launch of `grid` blocks of `block` threads with `shared_bytes`
 * of dynamic shared memory per block. Everything is checked before
 * anything is enqueued: refs (stale, freed, another device's), the number
 * and sizes of arguments against the kernel, the geometry against the
 * device's limits (no zero dimension), and the arguments against the
 * kernel's typed signature where it has one (CPU images built with
 * <accel/kernel.h>, and any image of a bundle that accel-cc wrote): a value
 * for a pointer parameter, a ref for a value parameter, and a ref whose
 * element type is not the parameter's pointee's are each
 * ACCEL_ERR_TYPE_MISMATCH, the detail naming the argument, the parameter
 * and both types. Bytes are untyped, as a void * is: a parameter of bytes
 * (`void *`, `char *`, a struct's pointer) takes any ref, and an ACCEL_BYTE
 * ref fits any pointer parameter. A ref is checked for being live before
 * its type. Other images are checked by size alone.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT, the ref errors, ACCEL_ERR_TYPE_MISMATCH,
 * ACCEL_ERR_LAUNCH.
 */
ACCEL_API accel_status accel_launch(accel_stream *stream, accel_kernel *kernel,
                                    accel_dim3 grid, accel_dim3 block,
                                    uint32_t shared_bytes,
                                    const accel_arg *args, uint32_t nargs);

/* ---- completion ----
 *
 * Waiting for an event or a stream can spin (lowest latency, a core busy),
 * yield (spin, giving the core to other threads between polls) or block
 * (the driver's own wait, no core used). Each takes a timeout in
 * nanoseconds; ACCEL_WAIT_FOREVER waits without one. A blocking wait with a
 * timeout polls with a growing sleep, since drivers have no timed wait.
 */
typedef enum accel_wait_mode {
    ACCEL_WAIT_BLOCK = 0,
    ACCEL_WAIT_SPIN = 1,
    ACCEL_WAIT_YIELD = 2
} accel_wait_mode;

#define ACCEL_WAIT_FOREVER UINT64_MAX

/* ACCEL_OK once complete; ACCEL_ERR_TIMEOUT when the timeout passed. */
ACCEL_API accel_status accel_event_wait(accel_event *event, accel_wait_mode mode,
                                        uint64_t timeout_ns);
/* Wait for the work enqueued on the stream so far, callbacks included (as
 * accel_stream_sync); as accel_event_wait. */
ACCEL_API accel_status accel_stream_wait(accel_stream *stream,
                                         accel_wait_mode mode,
                                         uint64_t timeout_ns);

/*
 * A completion callback. `status` is ACCEL_OK when the work before it
 * completed, ACCEL_ERR_DEVICE_LOST when it never will (the device was lost
 * or reset, or closed with the callback pending). It runs on a host thread,
 * never on a driver's thread, so it may call accel functions.
 */
typedef void (*accel_callback)(void *user, accel_status status);

/*
 * Call fn(user, status) once all work enqueued on the stream so far has
 * completed. Callbacks of one stream run in the order they were added.
 * By default they run on a thread of the device's own; after
 * accel_device_completion_fd they run in accel_device_dispatch instead, or
 * inside a sync of their stream on the thread that syncs (see
 * accel_stream_sync). Exactly once per successful call.
 * Errors: ACCEL_ERR_NOT_SUPPORTED when the plugin has no host function.
 */
ACCEL_API accel_status accel_stream_add_callback(accel_stream *stream,
                                                 accel_callback fn, void *user);
/*
 * Switch the device's callbacks to a pollable file descriptor: from now on
 * the fd (an eventfd) becomes readable when callbacks are ready, and
 * accel_device_dispatch runs them on the caller's thread. For epoll and
 * libuv loops that want no accel thread. The fd is owned by the device;
 * the same fd is returned on every call.
 */
ACCEL_API accel_status accel_device_completion_fd(accel_device *device,
                                                  int *out_fd);
/*
 * Run the callbacks of a device in fd mode that are ready when it is
 * called, in order per stream, and clear the fd's readiness (it stays
 * readable if more became ready meanwhile). *out_count (may be NULL) says
 * how many ran.
 */
ACCEL_API accel_status accel_device_dispatch(accel_device *device,
                                             size_t *out_count);

/* ---- the memory pool ----
 *
 * Device memory is taken from the plugin in pages and cut into slices; a
 * freed slice is reused. A page whose live share falls under the policy's
 * threshold is outdated: its live slices are moved to other pages (refs
 * keep working) and the page goes back to the plugin. An allocation whose
 * native address was asked for (accel_ref_native) never moves.
 */
typedef struct accel_memory_stats {
    uint32_t struct_size;    /* set by the library: the bytes it wrote */
    uint64_t reserved_bytes; /* taken from the plugin, in pages */
    uint64_t used_bytes;     /* in live allocations */
    uint64_t pages;
    uint64_t slices;        /* live allocations */
    uint64_t relocations;   /* slices moved, ever */
    uint64_t pool_hits;     /* allocations served from existing pages */
    uint64_t pool_misses;   /* allocations that took a new page */
    uint64_t pending_frees; /* freed, waiting for their streams */
    uint64_t pending_free_bytes;
    uint64_t staging_buffers; /* pinned staging buffers held */
    uint64_t staging_chunk_bytes;
} accel_memory_stats;

/* A macro: it passes sizeof *(out_stats) (see "structs that grow"). */
#define accel_device_memory_stats(device, out_stats)                           \
    accel_device_memory_stats_sized((device), (out_stats), sizeof *(out_stats))
ACCEL_API accel_status accel_device_memory_stats_sized(
    accel_device *device, accel_memory_stats *out_stats, size_t stats_size);

typedef struct accel_pool_policy {
    /* sizeof(accel_pool_policy) as the caller was compiled, or 0. */
    uint32_t struct_size;
    /* Compact by itself when a free leaves a page outdated. Default true. */
    bool automatic;
    /* A page with fewer live slices than this share is outdated. 1..100;
     * default 25. */
    uint32_t outdated_percent;
} accel_pool_policy;

/* The policy a device starts with: automatic, 25 percent. */
static inline accel_pool_policy accel_pool_policy_default(void)
{
    accel_pool_policy policy = {(uint32_t)sizeof(accel_pool_policy), true, 25};
    return policy;
}

/* Errors: ACCEL_ERR_INVALID_ARGUMENT (NULL, outdated_percent out of range,
 * a struct_size too small to hold a field). */
ACCEL_API accel_status accel_device_set_pool_policy(
    accel_device *device, const accel_pool_policy *policy);
/*
 * Move the slices of every outdated page that fits elsewhere, now. The move
 * is ordered with the device's streams; it does not wait for them.
 * *out_pages (may be NULL) says how many pages were emptied.
 */
ACCEL_API accel_status accel_device_compact(accel_device *device,
                                            uint32_t *out_pages);

/* ---- copies ----
 *
 * Copies are enqueued on a stream and may return before they happen. Host
 * memory passed to them must stay valid, and a source unchanged, until the
 * stream has reached the copy (accel_stream_sync or an event). Device sides
 * are refs, validated; the byte range is checked against the allocation
 * before anything is enqueued.
 *
 * How host memory travels: a device whose memory the host sees (the CPU
 * plugin) and memory from accel_host_alloc are copied directly. Other host
 * memory goes through pinned staging buffers in chunks (ACCEL_STAGING_CHUNK
 * bytes, 1 MiB by default), the host copying one chunk while the device
 * moves the previous one; a staged copy to the device returns once its
 * source has been read, one to the host once the data has arrived.
 * Contiguous layouts go to the plugin as one 1D copy.
 */

/* ---- more than one device: ranks and collectives ---- */

/*
 * This process's place in a job, read from the launcher's environment
 * (Open MPI, PMIx, PMI, Slurm, MPICH/Hydra, MVAPICH2, Flux; ACCEL_RANK,
 * ACCEL_SIZE, ACCEL_LOCAL_RANK and ACCEL_LOCAL_SIZE override each value)
 * at each call, through secure_getenv; the README's "Ranks and device
 * binding" has the variables and the order they are believed in.
 * A process no launcher started is rank 0 of 1. The *_source strings name
 * the variable each value came from ("OMPI_COMM_WORLD_LOCAL_RANK",
 * "ACCEL_RANK"), or "default"; they are static strings. A local value that
 * no variable gives in a job of more than one rank (Flux has no local
 * size) is -1, its source "unknown".
 */
typedef struct accel_rank_info {
    uint32_t struct_size; /* set by the library: the bytes it wrote */
    int32_t rank;
    int32_t size;
    int32_t local_rank;
    int32_t local_size;
    const char *rank_source;
    const char *size_source;
    const char *local_rank_source;
    const char *local_size_source;
} accel_rank_info;

/* A macro: it passes sizeof *(out_info) (see "structs that grow").
 * Errors: ACCEL_ERR_INVALID_ARGUMENT (a malformed or inconsistent value:
 * the detail names the variable). */
#define accel_rank_info_get(out_info)                                          \
    accel_rank_info_get_sized((out_info), sizeof *(out_info))
ACCEL_API accel_status accel_rank_info_get_sized(accel_rank_info *out_info,
                                                 size_t info_size);

/*
 * The native handles of a stream and its device (CUstream and CUcontext,
 * hipStream_t, or the CPU kind for the null plugin), to hand the stream to
 * a vendor library. out->struct_size is set by the caller; no byte past
 * sizeof(struct accel_native_handles) is written. Valid until the stream is
 * destroyed or the device reset. Errors: ACCEL_ERR_NOT_SUPPORTED (the
 * plugin has no native_handles entry), ACCEL_ERR_INVALID_ARGUMENT (NULL, or
 * a struct_size below sizeof(struct accel_native_handles)).
 */
ACCEL_API accel_status accel_stream_native(accel_stream *stream,
                                           struct accel_native_handles *out);

/* A communicator: one rank's end of a group of ranks, each bound to one
 * device, between which collectives run. */
typedef struct accel_comm accel_comm;

/*
 * Make this rank's communicator over the launcher's ranks (accel_rank_info),
 * bound to `device`. The provider is the first of ACCEL_COMM (a comma list:
 * "nccl,mpi,host"; unset: "nccl,rccl,mpi,host") that initialises and
 * serves the device; the reasons of the others are kept (accel-info
 * --comm). Collective over every rank of the job. Errors:
 * ACCEL_ERR_NOT_FOUND (no provider serves: the detail has each one's
 * reason), ACCEL_ERR_TIMEOUT (a rank did not join within
 * ACCEL_COMM_TIMEOUT_MS), ACCEL_ERR_INVALID_ARGUMENT.
 */
ACCEL_API accel_status accel_comm_create(accel_device *device,
                                         accel_comm **out_comm);
/*
 * Make `count` communicators in this process, one rank per device
 * (devices[i] is rank i), for ranks run as threads (loopback: several
 * null devices with ACCEL_NULL_DEVICES, or several GPUs of one process).
 * Only providers with loopback support take part ("host", "nccl"). Every
 * out_comms[i] is cleared first. Errors: ACCEL_ERR_INVALID_ARGUMENT (NULL,
 * a count outside 1 to 4096, a NULL device or one of another host), and
 * accel_comm_create's others.
 */
ACCEL_API accel_status accel_comm_create_local(accel_device *const *devices,
                                               int count, accel_comm **out_comms);
/* One provider named by ACCEL_COMM, as the host found it. */
typedef struct accel_comm_provider_info {
    const char *name;   /* NAME of accel-comm-NAME.so */
    const char *path;   /* the file, NULL when none was found */
    int32_t open;       /* 1 when loaded and initialised */
    uint32_t caps;      /* ACCEL_COMM_CAP_* of <accel/comm.h>; 0 unless open */
    const char *reason; /* why it cannot be used; NULL when open */
} accel_comm_provider_info;

/*
 * The providers of ACCEL_COMM in order, each with its state and reason,
 * loaded now unless a communicator loaded them already. The array is the
 * host's, valid until accel_host_destroy. Errors:
 * ACCEL_ERR_INVALID_ARGUMENT (a malformed ACCEL_COMM).
 */
ACCEL_API accel_status accel_host_comm_providers(
    accel_host *host, const accel_comm_provider_info **out_list,
    size_t *out_count);
/*
 * As MPI_Comm_split: collective over comm; a negative color gives NULL. A
 * stream-ordered communicator (nccl, rccl) first gathers every rank's
 * color and key through itself, on a stream and in memory of its device of
 * the call's own, then splits with ncclCommSplit (NCCL 2.18 or later, else
 * ACCEL_ERR_NOT_SUPPORTED with the library's version).
 */
ACCEL_API accel_status accel_comm_split(accel_comm *comm, int color, int key,
                                        accel_comm **out_comm);
/* Wait for the communicator's operations, then destroy it. NULL allowed. */
ACCEL_API void accel_comm_destroy(accel_comm *comm);
/* Make every pending and later operation fail with ACCEL_ERR_COMM_ABORTED.
 * Any thread; idempotent. accel_device_reset of the communicator's device
 * does the same, before it resets. NULL: ACCEL_ERR_INVALID_ARGUMENT (also
 * for accel_comm_status and accel_comm_split). */
ACCEL_API accel_status accel_comm_abort(accel_comm *comm);
/* ACCEL_OK, or the error the communicator met asynchronously (an abort, a
 * stalled rank, a failed peer): ACCEL_ERR_COMM_ABORTED with the reason. */
ACCEL_API accel_status accel_comm_status(accel_comm *comm);
/* The rank, size, device and provider of a communicator; for NULL: -1, 0,
 * NULL and "". */
ACCEL_API int accel_comm_rank(const accel_comm *comm);
ACCEL_API int accel_comm_size(const accel_comm *comm);
ACCEL_API accel_device *accel_comm_device(const accel_comm *comm);
/* "mpi", "nccl", "rccl", "host". */
ACCEL_API const char *accel_comm_provider_name(const accel_comm *comm);

/*
 * Collectives, enqueued on `stream` (a stream of the communicator's
 * device) and ordered with its other commands. Counts are elements of the
 * refs' type, from each ref's start; send and recv may be the same ref (in
 * place). Refs are validated as every command's (freed, stale, other
 * device) and must have one element type (ACCEL_ERR_TYPE_MISMATCH) and
 * room for the count (ACCEL_ERR_INVALID_ARGUMENT). A mismatch between
 * ranks (type, count, root) is ACCEL_ERR_INVALID_ARGUMENT where the
 * provider can detect it. While a collective is in flight its refs'
 * memory does not move and cannot be freed under it. A rank that waits
 * past ACCEL_COMM_TIMEOUT_MS for the others aborts the communicator.
 * Errors, besides: ACCEL_ERR_COMM_ABORTED (the communicator was aborted,
 * or its device reset).
 */
ACCEL_API accel_status accel_allreduce(accel_comm *comm, accel_stream *stream,
                                       accel_ref send, accel_ref recv,
                                       uint64_t count, accel_reduce_op op);
ACCEL_API accel_status accel_broadcast(accel_comm *comm, accel_stream *stream,
                                       accel_ref send, accel_ref recv,
                                       uint64_t count, int root);
ACCEL_API accel_status accel_reduce(accel_comm *comm, accel_stream *stream,
                                    accel_ref send, accel_ref recv,
                                    uint64_t count, accel_reduce_op op, int root);
/* recv holds size * count elements: rank r's count at r * count. */
ACCEL_API accel_status accel_allgather(accel_comm *comm, accel_stream *stream,
                                       accel_ref send, accel_ref recv,
                                       uint64_t count);
/* send holds size * count elements; rank r receives the reduction of
 * every rank's r-th share. */
ACCEL_API accel_status accel_reduce_scatter(accel_comm *comm,
                                            accel_stream *stream,
                                            accel_ref send, accel_ref recv,
                                            uint64_t count, accel_reduce_op op);
ACCEL_API accel_status accel_send(accel_comm *comm, accel_stream *stream,
                                  accel_ref send, uint64_t count, int peer);
ACCEL_API accel_status accel_recv(accel_comm *comm, accel_stream *stream,
                                  accel_ref recv, uint64_t count, int peer);
ACCEL_API accel_status accel_comm_barrier(accel_comm *comm, accel_stream *stream);

/* Copy `bytes` from host `src` to the ref, starting `offset` bytes in. */
ACCEL_API accel_status accel_copy_to_device(accel_stream *stream, accel_ref dst,
                                            uint64_t offset, const void *src,
                                            uint64_t bytes);
/* Copy `bytes` from the ref, starting `offset` bytes in, to host `dst`. */
ACCEL_API accel_status accel_copy_to_host(accel_stream *stream, void *dst,
                                          accel_ref src, uint64_t offset,
                                          uint64_t bytes);
/*
 * Copy between two refs. Normally both belong to the stream's device. One
 * may belong to another open device of the same host: within one plugin the
 * plugin copies between them; across plugins the bytes go through host
 * memory (contiguous ranges only). Such a copy has completed on return.
 */
ACCEL_API accel_status accel_copy_on_device(accel_stream *stream, accel_ref dst,
                                            uint64_t dst_offset, accel_ref src,
                                            uint64_t src_offset, uint64_t bytes);
/*
 * Pitched (2D) and 3D copies. The layout's device-side offset and pitches
 * are bytes within the ref; the host side's are bytes from `src`/`dst`.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT for a malformed or overflowing layout
 * or one that reaches past the allocation.
 */
ACCEL_API accel_status
accel_copy_to_device_layout(accel_stream *stream, accel_ref dst, const void *src,
                            const struct accel_copy_layout *layout);
ACCEL_API accel_status
accel_copy_to_host_layout(accel_stream *stream, void *dst, accel_ref src,
                          const struct accel_copy_layout *layout);
ACCEL_API accel_status
accel_copy_on_device_layout(accel_stream *stream, accel_ref dst, accel_ref src,
                            const struct accel_copy_layout *layout);

/*
 * Fill `bytes` bytes of `dst` from byte `offset` with the `pattern_size`-
 * byte pattern at `pattern` repeated (cuMemsetD8/D16/D32Async,
 * clEnqueueFillBuffer), enqueued on the stream like a copy. pattern_size
 * is 1, 2, 4 or 8; offset and bytes must be multiples of it, and the range
 * must lie inside the ref: ACCEL_ERR_INVALID_ARGUMENT otherwise (and for a
 * NULL pattern). The pattern is copied before the call returns. Zero bytes
 * checks the ref and does nothing. The ref's element type is not checked:
 * a fill writes bytes. A plugin without the optional fill entry (or whose
 * driver has no call for the pattern size) is filled by the host from host
 * memory of its own: the call then waits for the stream to finish the fill
 * before it returns.
 */
ACCEL_API accel_status accel_fill(accel_stream *stream, accel_ref dst,
                                  uint64_t offset, uint64_t bytes,
                                  const void *pattern, size_t pattern_size);

/*
 * Typed copies: `count` elements of the host type (`src_type` or
 * `dst_type`), from the start of the ref. The host type must be the ref's
 * element type, so that `count` host elements are exactly the bytes copied;
 * the one exception is a ref of ACCEL_BYTE, raw bytes, which takes any
 * one-byte host type (ACCEL_BYTE, ACCEL_I8, ACCEL_U8), `count` then being
 * bytes. Any other pair is ACCEL_ERR_TYPE_MISMATCH.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT (a host type outside the enum, a
 * count that overflows or passes the allocation, a NULL stream, a NULL host
 * pointer with a nonzero count), those of accel_ref_check (checked before
 * the type, so a freed ref is ACCEL_ERR_FREED_REF whatever the host type),
 * ACCEL_ERR_TYPE_MISMATCH, and the device's (ACCEL_ERR_DEVICE_LOST, ...).
 * The macros below choose the host type from the host pointer; for bytes
 * of any kind, use accel_copy_to_device and accel_copy_to_host.
 */
ACCEL_API accel_status accel_copy_to_device_typed(accel_stream *stream,
                                                  accel_ref dst,
                                                  accel_elem_type src_type,
                                                  const void *src,
                                                  uint64_t count);
ACCEL_API accel_status accel_copy_to_host_typed(accel_stream *stream,
                                                accel_elem_type dst_type,
                                                void *dst, accel_ref src,
                                                uint64_t count);

#if !defined(__cplusplus) && defined(__STDC_VERSION__) &&                      \
    __STDC_VERSION__ >= 201112L
/*
 * The element type of a host pointer, chosen at compile time:
 *
 *   float *, double *                   ACCEL_F32, ACCEL_F64
 *   accel_f16 *, _Float16 *             ACCEL_F16 (_Float16 where the
 *                                       compiler has it: __FLT16_MAX__)
 *   accel_bf16 *, __bf16 *              ACCEL_BF16 (__bf16 where the
 *                                       compiler has it: __BFLT16_MAX__)
 *   char *                              ACCEL_BYTE: raw bytes
 *   signed char * (int8_t *)            ACCEL_I8
 *   unsigned char * (uint8_t *)         ACCEL_U8
 *   short, int, long, long long *       ACCEL_I16 ... ACCEL_I64 by size
 *   their unsigned forms                ACCEL_U16 ... ACCEL_U64 by size
 *
 * So every fixed-width integer type and its alias (int64_t and long long,
 * size_t, ptrdiff_t, intptr_t) maps to its width and signedness. A
 * const-qualified element is allowed; an array decays to a pointer to its
 * element. Any other host pointer (void *, a struct, bool, long double,
 * volatile, a pointer to pointer) does not compile: the compiler reports a
 * _Generic selector "not compatible with any association", naming the
 * type. Since uint8_t is unsigned char, a uint8_t buffer is ACCEL_U8 (it
 * fits a U8 ref or an ACCEL_BYTE one), and plain char is raw bytes (it fits
 * an ACCEL_BYTE ref only).
 */
#define ACCEL_ELEM_TYPE_OF(ptr)                                                \
    _Generic((ptr), ACCEL__ELEM_TYPES(), ACCEL__ELEM_TYPES(const))

/* Copy `count` elements from a typed host pointer into a ref. */
#define accel_copy_in(stream, ref, src, count)                                 \
    accel_copy_to_device_typed((stream), (ref), ACCEL_ELEM_TYPE_OF(src),       \
                               (src), (count))
/* Copy `count` elements from a ref into a typed host pointer; a pointer to
 * const does not compile. */
#define accel_copy_out(stream, dst, ref, count)                                \
    accel_copy_to_host_typed((stream), _Generic((dst), ACCEL__ELEM_TYPES()),   \
                             (dst), (ref), (count))

/* The associations of ACCEL_ELEM_TYPE_OF, for elements qualified `Q`. */
#define ACCEL__ELEM_TYPES(Q)                                                                                                                               \
    Q float                                                                                                                                                \
        * : ACCEL_F32,                                                                                                                                     \
            Q double                                                                                                                                       \
                * : ACCEL_F64,                                                                                                                             \
                    Q accel_f16                                                                                                                            \
                        * : ACCEL_F16,                                                                                                                     \
                            Q accel_bf16                                                                                                                   \
                                * : ACCEL_BF16,                                                                                                            \
                                    Q char                                                                                                                 \
                                        * : ACCEL_BYTE,                                                                                                    \
                                            Q signed char                                                                                                  \
                                                * : ACCEL_I8,                                                                                              \
                                                    Q unsigned char                                                                                        \
                                                        * : ACCEL_U8,                                                                                      \
                                                            Q short                                                                                        \
                                                                * : ACCEL__SIGNED_OF(                                                                      \
                                                                        short),                                                                            \
                                                                    Q unsigned short                                                                       \
                                                                        * : ACCEL__UNSIGNED_OF(                                                            \
                                                                                short),                                                                    \
                                                                            Q int                                                                          \
                                                                                * : ACCEL__SIGNED_OF(                                                      \
                                                                                        int),                                                              \
                                                                                    Q unsigned int                                                         \
                                                                                        * : ACCEL__UNSIGNED_OF(                                            \
                                                                                                int),                                                      \
                                                                                            Q long                                                         \
                                                                                                * : ACCEL__SIGNED_OF(                                      \
                                                                                                        long),                                             \
                                                                                                    Q unsigned long                                        \
                                                                                                        * : ACCEL__UNSIGNED_OF(                            \
                                                                                                                long),                                     \
                                                                                                            Q long long                                    \
                                                                                                                * : ACCEL__SIGNED_OF(                      \
                                                                                                                        long long),                        \
                                                                                                                    Q unsigned long long                   \
                                                                                                                        * : ACCEL__UNSIGNED_OF(            \
                                                                                                                                long long)                 \
                                                                                                                                ACCEL__FLOAT16_TYPES(      \
                                                                                                                                    Q)                     \
                                                                                                                                    ACCEL__BFLOAT16_TYPES( \
                                                                                                                                        Q)

/* Integer types by their size, so that long is I64 on LP64 and I32 on
 * ILP32 alike. */
#define ACCEL__SIGNED_OF(T)                                                    \
    (sizeof(T) == 1   ? ACCEL_I8                                               \
     : sizeof(T) == 2 ? ACCEL_I16                                              \
     : sizeof(T) == 4 ? ACCEL_I32                                              \
                      : ACCEL_I64)
#define ACCEL__UNSIGNED_OF(T)                                                  \
    (sizeof(T) == 1   ? ACCEL_U8                                               \
     : sizeof(T) == 2 ? ACCEL_U16                                              \
     : sizeof(T) == 4 ? ACCEL_U32                                              \
                      : ACCEL_U64)

/* The compilers' own 16-bit floats, where they have them. Named through
 * typedefs made with __extension__, so that -pedantic stays quiet. */
#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 accel__float16;
#define ACCEL__FLOAT16_TYPES(Q) , Q accel__float16 * : ACCEL_F16
#else
#define ACCEL__FLOAT16_TYPES(Q)
#endif
#if defined(__BFLT16_MAX__)
__extension__ typedef __bf16 accel__bfloat16;
#define ACCEL__BFLOAT16_TYPES(Q) , Q accel__bfloat16 * : ACCEL_BF16
#else
#define ACCEL__BFLOAT16_TYPES(Q)
#endif
#endif

#ifdef __cplusplus
}

/*
 * The C++ forms of the argument macros and of accel_copy_in/accel_copy_out
 * (C++ has no compound literals, designated initialisers before C++20 or
 * _Generic). They accept what the C forms accept, with the same type rules,
 * and more: ACCEL_ARG_VALUE takes an rvalue too (ACCEL_ARG_VALUE(n + 1)),
 * and a value from ACCEL_ARG_VALUE of an rvalue or from the typed macros is
 * held in the arg itself (ACCEL_ARG_KIND_INLINE), so an arg may be copied,
 * returned or stored without a lifetime to mind. ACCEL_ARG_VALUE of an
 * lvalue points at it, as in C: it is read when the launch is submitted.
 */
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 accel__float16;
#endif
#if defined(__BFLT16_MAX__)
__extension__ typedef __bf16 accel__bfloat16;
#endif

namespace accel_detail
{

inline accel_arg blank_arg(accel_arg_kind kind)
{
    accel_arg a;
    std::memset(&a, 0, sizeof a);
    a.kind = kind;
    return a;
}

inline accel_arg ref_arg(accel_ref r)
{
    accel_arg a = blank_arg(ACCEL_ARG_KIND_REF);
    a.ref = r;
    return a;
}

inline accel_arg bytes_arg(const void *ptr, uint64_t bytes, uint32_t align)
{
    accel_arg a = blank_arg(ACCEL_ARG_KIND_VALUE);
    a.value = ptr;
    a.size = bytes;
    a.align = align;
    return a;
}

template <typename T> inline accel_arg inline_arg(const T &v)
{
    static_assert(std::is_trivially_copyable<T>::value,
                  "a kernel argument is bytes: a trivially copyable type");
    static_assert(sizeof(T) <= ACCEL_ARG_INLINE_MAX,
                  "a value of more than 32 bytes: pass an lvalue "
                  "(ACCEL_ARG_VALUE) or ACCEL_ARG_BYTES");
    static_assert(alignof(T) <= 8, "a value aligned to more than 8 bytes: "
                                   "pass an lvalue or ACCEL_ARG_BYTES");
    accel_arg a = blank_arg(ACCEL_ARG_KIND_INLINE);
    a.size = sizeof(T);
    a.align = (uint32_t)alignof(T);
    std::memcpy(&a.ref, std::addressof(v), sizeof(T));
    return a;
}

/* An lvalue: its address, read at submission, as C's ACCEL_ARG_VALUE. */
template <typename T> inline accel_arg value_arg(T &v)
{
    static_assert(std::is_trivially_copyable<T>::value,
                  "a kernel argument is bytes: a trivially copyable type");
    return bytes_arg(std::addressof(v), sizeof(T), (uint32_t)alignof(T));
}
/* An rvalue: held in the arg. */
template <typename T>
inline typename std::enable_if<!std::is_reference<T>::value, accel_arg>::type
value_arg(T &&v)
{
    return inline_arg<T>(v);
}

/* The typed macros: the parameter's type converts as an assignment would;
 * unary + (applied by the macros) refuses pointers and structs. */
template <typename T> inline accel_arg typed_arg(T v)
{
    return inline_arg<T>(v);
}

/* The element type of a host element type, as ACCEL_ELEM_TYPE_OF's table
 * says; any other type has no `value` and does not compile. */
template <typename T, typename Enable = void> struct elem_type_of {
};
template <> struct elem_type_of<float> {
    static constexpr accel_elem_type value = ACCEL_F32;
};
template <> struct elem_type_of<double> {
    static constexpr accel_elem_type value = ACCEL_F64;
};
template <> struct elem_type_of<accel_f16> {
    static constexpr accel_elem_type value = ACCEL_F16;
};
template <> struct elem_type_of<accel_bf16> {
    static constexpr accel_elem_type value = ACCEL_BF16;
};
template <> struct elem_type_of<char> {
    static constexpr accel_elem_type value = ACCEL_BYTE;
};
template <> struct elem_type_of<signed char> {
    static constexpr accel_elem_type value = ACCEL_I8;
};
template <> struct elem_type_of<unsigned char> {
    static constexpr accel_elem_type value = ACCEL_U8;
};
template <typename T>
struct elem_type_of<
    T, typename std::enable_if<
           std::is_integral<T>::value && !std::is_same<T, bool>::value &&
           !std::is_same<T, char>::value && !std::is_same<T, signed char>::value &&
           !std::is_same<T, unsigned char>::value &&
           (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8)>::type> {
    static constexpr accel_elem_type value = std::is_signed<T>::value
                                                 ? (sizeof(T) == 2   ? ACCEL_I16
                                                    : sizeof(T) == 4 ? ACCEL_I32
                                                                     : ACCEL_I64)
                                                 : (sizeof(T) == 2   ? ACCEL_U16
                                                    : sizeof(T) == 4 ? ACCEL_U32
                                                                     : ACCEL_U64);
};
#if defined(__FLT16_MAX__)
template <> struct elem_type_of<accel__float16> {
    static constexpr accel_elem_type value = ACCEL_F16;
};
#endif
#if defined(__BFLT16_MAX__)
template <> struct elem_type_of<accel__bfloat16> {
    static constexpr accel_elem_type value = ACCEL_BF16;
};
#endif

} /* namespace accel_detail */

#define ACCEL_ARG_REF(r) (accel_detail::ref_arg(r))
#define ACCEL_ARG_VALUE(v) (accel_detail::value_arg(v))
#define ACCEL_ARG_BYTES(ptr, bytes, alignment)                                 \
    (accel_detail::bytes_arg((ptr), (bytes), (alignment)))
#define ACCEL_ARG_F16(v) (accel_detail::typed_arg<accel_f16>(v))
#define ACCEL_ARG_BF16(v) (accel_detail::typed_arg<accel_bf16>(v))
#define ACCEL_ARG_F32(v) (accel_detail::typed_arg<float>(+(v)))
#define ACCEL_ARG_F64(v) (accel_detail::typed_arg<double>(+(v)))
#define ACCEL_ARG_I8(v) (accel_detail::typed_arg<int8_t>(+(v)))
#define ACCEL_ARG_I16(v) (accel_detail::typed_arg<int16_t>(+(v)))
#define ACCEL_ARG_I32(v) (accel_detail::typed_arg<int32_t>(+(v)))
#define ACCEL_ARG_I64(v) (accel_detail::typed_arg<int64_t>(+(v)))
#define ACCEL_ARG_U8(v) (accel_detail::typed_arg<uint8_t>(+(v)))
#define ACCEL_ARG_U16(v) (accel_detail::typed_arg<uint16_t>(+(v)))
#define ACCEL_ARG_U32(v) (accel_detail::typed_arg<uint32_t>(+(v)))
#define ACCEL_ARG_U64(v) (accel_detail::typed_arg<uint64_t>(+(v)))

/* The element type of a host pointer (ACCEL_ELEM_TYPE_OF in C): a pointer
 * to an element of the table above, const or not; an array decays. */
namespace accel_detail
{
template <typename T> constexpr accel_elem_type elem_type_of_pointer(const T *)
{
    return elem_type_of<T>::value;
}
} /* namespace accel_detail */
#define ACCEL_ELEM_TYPE_OF(ptr) (accel_detail::elem_type_of_pointer(ptr))

/* Copy `count` elements from a typed host pointer into a ref. */
template <typename T>
inline accel_status accel_copy_in(accel_stream *stream, accel_ref ref,
                                  const T *src, uint64_t count)
{
    return accel_copy_to_device_typed(
        stream, ref, accel_detail::elem_type_of<T>::value, src, count);
}
/* Copy `count` elements from a ref into a typed host pointer; a pointer to
 * const does not compile. */
template <typename T>
inline accel_status accel_copy_out(accel_stream *stream, T *dst, accel_ref ref,
                                   uint64_t count)
{
    static_assert(!std::is_const<T>::value,
                  "accel_copy_out: the destination may not be const");
    return accel_copy_to_host_typed(stream, accel_detail::elem_type_of<T>::value,
                                    dst, ref, count);
}
#endif /* __cplusplus */

#endif /* ACCEL_ACCEL_H */
