/*
 * accel plugin ABI, version 1.
 *
 * A plugin is a shared object named accel-plugin-NAME.so that exports one
 * symbol, `accel_driver_v1`, of type `const struct accel_driver_v1`. The host
 * library (libaccel) opens it with dlopen, checks the table, and then calls
 * only through it. This header is the whole contract: a vendor can build a
 * plugin from it alone, in C11 or C++.
 *
 * Rules that hold for every entry:
 *  - Every fallible entry returns an accel_status; zero is success. Outputs
 *    are the last parameters, named out_*; the host reads them only when the
 *    entry succeeded.
 *  - A plugin never prints. It reports the human detail of an error (the
 *    native error's name, what was tried) through services->set_error on the
 *    calling thread, right where the error is made, and logs through
 *    services->log.
 *  - Entries may be called from any thread. Calls on different streams may
 *    run concurrently; the host never calls an entry with an object after it
 *    has destroyed that object.
 *  - The table only ever grows at its end. The host reads an entry only if
 *    struct_size covers it, so a newer host runs an older plugin. Entries
 *    added after 1.0 say "Since: 1.n".
 *  - "No device" is success with a count of zero and a reason, never an
 *    error, a crash or a hang.
 */
#ifndef ACCEL_DRIVER_H
#define ACCEL_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_DRIVER_ABI_MAJOR 1
#define ACCEL_DRIVER_ABI_MINOR 0

/* The name of the one symbol a plugin exports. */
#define ACCEL_DRIVER_SYMBOL "accel_driver_v1"

/* A plugin's name: 1 to ACCEL_PLUGIN_NAME_MAX characters of [a-z0-9_]. */
#define ACCEL_PLUGIN_NAME_MAX 31

/*
 * Status codes, shared by the plugin ABI and the application API.
 * X(name, value, description). The description says when the code is
 * returned; accel_status_string() gives it back at run time.
 * ACCEL_ERR_BUSY is reserved: neither the host nor the bundled plugins
 * return it today.
 */
#define ACCEL_STATUS_LIST(X)                                                   \
    X(ACCEL_OK, 0, "success")                                                  \
    X(ACCEL_NOT_READY, 1, "the work has not completed yet (a query, not an error)") \
    X(ACCEL_ERR_NO_DEVICE, -1, "no usable device: no plugin, no device, or the index is out of range") \
    X(ACCEL_ERR_PLUGIN_ABI, -2, "a plugin broke the ABI: bad table, version, name or return value") \
    X(ACCEL_ERR_INVALID_ARGUMENT, -3, "an argument is invalid: NULL, zero, out of range, or overflowing") \
    X(ACCEL_ERR_OUT_OF_DEVICE_MEMORY, -4, "the device is out of memory; the device stays usable") \
    X(ACCEL_ERR_OUT_OF_HOST_MEMORY, -5, "the host is out of memory")          \
    X(ACCEL_ERR_STALE_REF, -6, "the ref was minted before the device was reset or lost") \
    X(ACCEL_ERR_FREED_REF, -7, "the ref's allocation has been freed, or the ref was never valid") \
    X(ACCEL_ERR_DEVICE_MISMATCH, -8, "the ref or object belongs to another device") \
    X(ACCEL_ERR_TYPE_MISMATCH, -9, "the ref's element type differs from the host data's") \
    X(ACCEL_ERR_DEVICE_LOST, -10, "the device was lost; reset it to use it again") \
    X(ACCEL_ERR_UNRECOVERABLE, -11, "the device was lost more often than its recovery budget allows") \
    X(ACCEL_ERR_LAUNCH, -12, "a kernel launch failed")                        \
    X(ACCEL_ERR_COPY, -13, "a copy failed")                                    \
    X(ACCEL_ERR_MODULE, -14, "a module image is invalid or failed to load")  \
    X(ACCEL_ERR_NOT_SUPPORTED, -15, "the operation is not supported by this plugin or device") \
    X(ACCEL_ERR_TIMEOUT, -16, "the wait timed out")                           \
    X(ACCEL_ERR_DRIVER, -17, "the vendor driver reported an error with no better code") \
    X(ACCEL_ERR_NOT_FOUND, -18, "no such plugin, kernel or named object")     \
    X(ACCEL_ERR_BUSY, -19, "the object is still in use")

typedef enum accel_status {
#define ACCEL_STATUS_ENUM_(name, value, text) name = value,
    ACCEL_STATUS_LIST(ACCEL_STATUS_ENUM_)
#undef ACCEL_STATUS_ENUM_
} accel_status;

/* Log levels, most severe first. */
typedef enum accel_log_level {
    ACCEL_LOG_NONE = 0,
    ACCEL_LOG_ERROR = 1,
    ACCEL_LOG_WARN = 2,
    ACCEL_LOG_INFO = 3,
    ACCEL_LOG_DEBUG = 4
} accel_log_level;

/*
 * A copy's shape. Offsets are bytes from the start of each side's base
 * address. The copy moves `depth` slices of `rows` rows of `row_bytes` bytes;
 * row r of slice s starts at offset + s * slice_pitch + r * pitch on each
 * side. depth 0 is treated as 1, and rows 0 as 1; a pitch is ignored when
 * there is one row, a slice pitch when there is one slice. The host
 * validates every layout, overflow included, before a plugin sees it: a
 * plugin receives only layouts with row_bytes > 0, rows >= 1, depth >= 1,
 * pitches >= row_bytes where rows > 1, and slice pitches that keep slices
 * apart ((rows - 1) * pitch + row_bytes or more) where depth > 1. A layout
 * whose rows and slices are contiguous on both sides arrives folded into a
 * single row.
 */
struct accel_copy_layout {
    uint64_t src_offset;
    uint64_t dst_offset;
    uint64_t row_bytes;
    uint64_t rows;
    uint64_t src_pitch;
    uint64_t dst_pitch;
    uint64_t depth;
    uint64_t src_slice_pitch;
    uint64_t dst_slice_pitch;
};

/* Device capability bits (accel_device_props.caps). */
enum {
    /* Device addresses are host pointers: the host may copy with memcpy. */
    ACCEL_DEVICE_CAP_HOST_VISIBLE = 1u << 0,
    /* The device runs kernels from module images. */
    ACCEL_DEVICE_CAP_KERNELS = 1u << 1,
    /* The device copies 3D layouts (depth > 1) natively. Informational:
     * the host does not read it, and hands layouts with depth > 1 to every
     * plugin's copy_* entries, which must accept them either way. */
    ACCEL_DEVICE_CAP_COPY_3D = 1u << 2
};

/* What a plugin tells about one device. Filled by device_info. */
struct accel_device_props {
    char name[128];          /* human name, NUL-terminated */
    char arch[32];           /* target: "sm_90", "gfx90a", "x86_64", ... */
    uint64_t total_memory;   /* bytes */
    uint32_t compute_units;  /* SMs, CUs, or CPU cores */
    uint32_t caps;           /* ACCEL_DEVICE_CAP_* bits */
    uint32_t max_threads_per_block;
    uint32_t max_block_dim[3];
    uint32_t max_grid_dim[3];
    uint32_t max_shared_bytes; /* per block */
};

/* A kernel launch's geometry. */
struct accel_launch_config {
    uint32_t grid[3];      /* blocks in x, y, z; each >= 1 */
    uint32_t block[3];     /* threads per block in x, y, z; each >= 1 */
    uint32_t shared_bytes; /* dynamic shared memory per block */
};

/* What a plugin knows of a kernel's parameters, for the host's checks. */
#define ACCEL_KERNEL_MAX_PARAMS 64
#define ACCEL_PARAM_COUNT_UNKNOWN UINT32_MAX

struct accel_kernel_signature {
    /* Number of parameters, or ACCEL_PARAM_COUNT_UNKNOWN. */
    uint32_t param_count;
    /* Size in bytes of each parameter; 0 where unknown. */
    uint32_t param_sizes[ACCEL_KERNEL_MAX_PARAMS];
};

/* Opaque plugin objects. Each plugin defines these structs for itself. */
typedef struct accel_drv_plugin accel_drv_plugin;
typedef struct accel_drv_device accel_drv_device;
typedef struct accel_drv_mem accel_drv_mem;
typedef struct accel_drv_stream accel_drv_stream;
typedef struct accel_drv_event accel_drv_event;
typedef struct accel_drv_module accel_drv_module;
typedef struct accel_drv_kernel accel_drv_kernel;

#define ACCEL_HOST_SERVICES_VERSION 1

/*
 * What the host offers a plugin. Handed to plugin_open; valid until
 * plugin_close returns. A plugin reads an entry only if struct_size covers
 * it.
 */
struct accel_host_services {
    uint32_t struct_size;
    uint32_t version; /* ACCEL_HOST_SERVICES_VERSION */

    /*
     * Log a message at a level. The host prints it only when ACCEL_LOG asks
     * for that level; the message should name the plugin.
     */
    void (*log)(accel_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

    /*
     * Record the detail of an error on the calling thread, for
     * accel_last_error(). Call it where the error is made, with the native
     * call and the native code's name. Returns `status`, so that a plugin
     * can write `return services->set_error(ACCEL_ERR_COPY, "...")`.
     */
    accel_status (*set_error)(accel_status status, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

    /*
     * Read an environment variable the way the host reads its own: NULL when
     * the process runs with elevated privileges (setuid or setgid). Plugins
     * read every path or behaviour variable through this.
     */
    const char *(*getenv)(const char *name);
};

/*
 * The plugin's table. Every entry is required (non-NULL) unless marked
 * "Optional". The host checks the whole table before calling anything.
 */
struct accel_driver_v1 {
    /* sizeof(struct accel_driver_v1) as the plugin was built. */
    uint32_t struct_size;
    uint16_t abi_major; /* ACCEL_DRIVER_ABI_MAJOR */
    uint16_t abi_minor; /* ACCEL_DRIVER_ABI_MINOR */
    const char *name;    /* equals NAME in the file name accel-plugin-NAME.so */
    const char *version; /* the plugin's own version, free text */
    /* Higher wins in automatic selection: GPU plugins 100, the CPU plugin 0. */
    int32_t priority;
    uint32_t reserved;

    /* ---- plugin ---- */

    /*
     * Set up the plugin: load the vendor library, initialise it. A missing
     * or broken vendor library is not a failure: open succeeds and
     * device_count reports zero devices with the reason. Fails only when the
     * plugin itself cannot work (out of memory).
     */
    accel_status (*plugin_open)(const struct accel_host_services *services,
                                accel_drv_plugin **out_plugin);
    /* Release everything plugin_open made. Every device is closed first. */
    void (*plugin_close)(accel_drv_plugin *plugin);

    /* ---- devices ---- */

    /*
     * Number of devices. When zero, *out_reason says why in one sentence
     * ("libcuda.so.1: not found", ...); the string is owned by the plugin
     * and lives until plugin_close. *out_reason may be NULL otherwise.
     */
    accel_status (*device_count)(accel_drv_plugin *plugin, uint32_t *out_count,
                                 const char **out_reason);
    /* Describe device `index` (< count) without opening it. */
    accel_status (*device_info)(accel_drv_plugin *plugin, uint32_t index,
                                struct accel_device_props *out_props);
    /* Open device `index` for use. A device may be opened more than once. */
    accel_status (*device_open)(accel_drv_plugin *plugin, uint32_t index,
                                accel_drv_device **out_device);
    /* Close a device; every object made on it has been destroyed first. */
    void (*device_close)(accel_drv_device *device);
    /*
     * ACCEL_OK while the device is live; ACCEL_ERR_DEVICE_LOST once its
     * context is poisoned (a sticky error). Cheap: the host calls it after
     * errors.
     */
    accel_status (*device_status)(accel_drv_device *device);
    /*
     * Rebuild a lost (or live) device. The host has destroyed every stream,
     * event, module and allocation of the device first. On success the
     * device is live and empty, except for its host_alloc memory, which
     * the application still holds: it must stay valid at the same address
     * with its contents. A plugin whose driver frees or unpins such memory
     * in a reset (CUDA's primary context reset, hipDeviceReset) page-locks
     * it again after; where the driver refuses, the memory stays valid as
     * pageable memory, and copies from it still work.
     */
    accel_status (*device_reset)(accel_drv_device *device);

    /* ---- memory ---- */

    /*
     * Allocate `bytes` (> 0) of device memory. *out_mem is the plugin's
     * handle for mem_free; *out_address is the device address that copies
     * and launches take. ACCEL_ERR_OUT_OF_DEVICE_MEMORY when it does not
     * fit; the device stays usable.
     */
    accel_status (*mem_alloc)(accel_drv_device *device, uint64_t bytes,
                              accel_drv_mem **out_mem, uint64_t *out_address);
    /* Free device memory. No enqueued work uses it any more. */
    void (*mem_free)(accel_drv_device *device, accel_drv_mem *mem);
    /*
     * Allocate page-locked host memory that the device can copy from fast.
     * It lives until host_free, across device_reset (see there): a plugin
     * must not hand out memory that the driver frees in a reset.
     */
    accel_status (*host_alloc)(accel_drv_device *device, size_t bytes,
                               void **out_ptr);
    /* Free host_alloc memory, whether or not the device was reset since. */
    void (*host_free)(accel_drv_device *device, void *ptr);

    /* ---- streams: in-order queues of work ---- */

    accel_status (*stream_create)(accel_drv_device *device,
                                  accel_drv_stream **out_stream);
    /* Destroy a stream; the host has synchronised it first. */
    void (*stream_destroy)(accel_drv_device *device, accel_drv_stream *stream);
    /* Block until all work enqueued on the stream so far has completed. */
    accel_status (*stream_sync)(accel_drv_device *device,
                                accel_drv_stream *stream);

    /* ---- events: markers in a stream ---- */

    accel_status (*event_create)(accel_drv_device *device,
                                 accel_drv_event **out_event);
    void (*event_destroy)(accel_drv_device *device, accel_drv_event *event);
    /* Mark the point after all work enqueued on `stream` so far. */
    accel_status (*event_record)(accel_drv_device *device, accel_drv_event *event,
                                 accel_drv_stream *stream);
    /*
     * ACCEL_OK when the recorded work has completed (or the event was never
     * recorded), ACCEL_NOT_READY while it has not, an error if it failed.
     */
    accel_status (*event_query)(accel_drv_device *device, accel_drv_event *event);
    /* Block until the recorded work has completed. */
    accel_status (*event_sync)(accel_drv_device *device, accel_drv_event *event);
    /*
     * Make later work on `stream` wait until `event` has completed: the
     * event as last recorded when this is called (a later record does not
     * change the wait). A never-recorded event makes no wait.
     */
    accel_status (*stream_wait_event)(accel_drv_device *device,
                                      accel_drv_stream *stream,
                                      accel_drv_event *event);

    /*
     * ---- copies, enqueued on a stream ----
     *
     * Asynchronous: they may return before the copy has happened. Host
     * memory passed in stays valid and unchanged until the stream reaches
     * the copy; the host guarantees that. Device addresses are those
     * mem_alloc returned, the layout's offsets added by the plugin. Layouts
     * arrive validated (see struct accel_copy_layout).
     */
    accel_status (*copy_to_device)(accel_drv_device *device,
                                   accel_drv_stream *stream, uint64_t dst,
                                   const void *src,
                                   const struct accel_copy_layout *layout);
    accel_status (*copy_to_host)(accel_drv_device *device,
                                 accel_drv_stream *stream, void *dst,
                                 uint64_t src,
                                 const struct accel_copy_layout *layout);
    accel_status (*copy_on_device)(accel_drv_device *device,
                                   accel_drv_stream *stream, uint64_t dst,
                                   uint64_t src,
                                   const struct accel_copy_layout *layout);

    /* ---- kernels ---- */

    /*
     * Load a module from an image in the device's format (PTX, cubin, code
     * object, ELF shared object). The plugin copies what it needs: the image
     * may be freed when this returns. ACCEL_ERR_MODULE with the loader's or
     * JIT's log as detail when the image is bad.
     */
    accel_status (*module_load)(accel_drv_device *device, const void *image,
                                size_t size, accel_drv_module **out_module);
    /* Unload a module; no enqueued work uses its kernels any more. */
    void (*module_unload)(accel_drv_device *device, accel_drv_module *module);
    /*
     * Find a kernel by name; ACCEL_ERR_NOT_FOUND when absent. The kernel
     * lives as long as its module. *out_signature says what the plugin
     * knows of its parameters (the host checks launches against it); a
     * plugin that cannot tell sets param_count to ACCEL_PARAM_COUNT_UNKNOWN.
     */
    accel_status (*kernel_get)(accel_drv_device *device, accel_drv_module *module,
                               const char *name, accel_drv_kernel **out_kernel,
                               struct accel_kernel_signature *out_signature);
    /*
     * Enqueue a launch. args[i] points to argument i's bytes and
     * arg_sizes[i] gives their size; a device address argument is a
     * uint64_t. The plugin copies the argument bytes before it returns. The
     * host has checked the geometry against the device's limits and the
     * arguments against the kernel's signature.
     */
    accel_status (*launch)(accel_drv_device *device, accel_drv_stream *stream,
                           accel_drv_kernel *kernel,
                           const struct accel_launch_config *config,
                           void *const *args, const size_t *arg_sizes,
                           uint32_t nargs);

    /* ---- optional entries (NULL allowed) ---- */

    /*
     * Optional. Enqueue a host function: `fn(user)` runs on a plugin thread
     * once all earlier work on the stream has completed, and later work
     * waits for it. fn must not call back into the plugin. When NULL, the
     * host offers no completion callbacks on this plugin's devices.
     */
    accel_status (*host_func)(accel_drv_device *device, accel_drv_stream *stream,
                              void (*fn)(void *user), void *user);
    /*
     * Optional. Wait for work the device runs outside the streams it gave
     * the host (collectives, other libraries' streams) before the host moves
     * memory. NULL means there is none.
     */
    accel_status (*wait_outside_streams)(accel_drv_device *device);
};

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DRIVER_H */
