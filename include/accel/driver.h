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
 *  - Entries may be called from any thread, and entries on different
 *    objects (two streams, two events, two devices) may run at the same
 *    time. On one object the host never overlaps two calls, with these
 *    exceptions, which a plugin must allow: event_query and event_sync may
 *    run on an event while event_record or stream_wait_event runs on it (and
 *    beside each other), and stream_sync may run on a stream while work is
 *    enqueued on it from another thread. The host never calls an entry with
 *    an object after it has destroyed that object, nor destroys an object
 *    while another entry runs on it.
 *  - The table only ever grows at its end. The host reads an entry only if
 *    struct_size covers it whole, so a newer host runs an older plugin.
 *    Entries added after 1.0 say "Since: 1.n"; ACCEL_DRIVER_V1_ENTRIES
 *    below lists every entry with the minor that added it.
 *  - abi_minor is the minor of this header the plugin was built against.
 *    The host does not refuse a plugin for its minor: a plugin of a newer
 *    minor loads on an older host, which reads only the entries its own
 *    table has (the rest of a newer table is never read) and offers only
 *    its own services (a plugin reads a service only when the services'
 *    struct_size covers it; host_minor says which minor the host speaks).
 *    Only abi_major is a hard line. A plugin built for a newer minor adapts
 *    in plugin_open: the host's minor is services->host_minor when
 *    ACCEL_HOST_SERVICES_HAS(services, host_minor), else 0; entries of the
 *    table past that minor's ACCEL_DRIVER_V1_<major>_<minor>_SIZE are never
 *    called, so behaviour they would carry falls back to the host's minor.
 *  - "No device" is success with a count of zero and a reason, never an
 *    error, a crash or a hang.
 */
#ifndef ACCEL_DRIVER_H
#define ACCEL_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_DRIVER_ABI_MAJOR 1
/* 1.1 added host_minor and privilege to struct accel_host_services, and
 * uuid and pci_bus_id to struct accel_device_props, and the typed fields
 * of struct accel_kernel_signature. */
#define ACCEL_DRIVER_ABI_MINOR 1

/* The name of the one symbol a plugin exports. */
#define ACCEL_DRIVER_SYMBOL "accel_driver_v1"

/* A plugin's name: 1 to ACCEL_PLUGIN_NAME_MAX characters of [a-z0-9_]. */
#define ACCEL_PLUGIN_NAME_MAX 31

/* A kernel launch's geometry. */
struct accel_launch_config {
    uint32_t grid[3];      /* blocks in x, y, z; each >= 1 */
    uint32_t block[3];     /* threads per block in x, y, z; each >= 1 */
    uint32_t shared_bytes; /* dynamic shared memory per block */
};

/* What a plugin knows of a kernel's parameters, for the host's checks. */
#define ACCEL_KERNEL_MAX_PARAMS 64
#define ACCEL_PARAM_COUNT_UNKNOWN UINT32_MAX

/* A parameter's kind, in param_kinds (Since: 1.1). */
#define ACCEL_PARAM_KIND_UNKNOWN 0
#define ACCEL_PARAM_KIND_POINTER 1 /* a device address: the host passes a ref */
#define ACCEL_PARAM_KIND_VALUE 2   /* bytes passed by value */
/* param_types hold 0 to ACCEL_PARAM_TYPE_COUNT - 1 (Since: 1.1). */
#define ACCEL_PARAM_TYPE_COUNT 13
/* The longest parameter name kept, in characters (Since: 1.1). */
#define ACCEL_PARAM_NAME_MAX 31

/*
 * The fields from param_kinds on are Since: 1.1. A plugin writes them only
 * when the host's services say host_minor >= 1 (an older host's struct ends
 * at param_sizes: ACCEL_KERNEL_SIGNATURE_V1_0_SIZE); the host zeroes the
 * whole struct before kernel_get, so a plugin that knows nothing of them
 * leaves every parameter's kind unknown, and launches are checked by size.
 */
struct accel_kernel_signature {
    /* Number of parameters, or ACCEL_PARAM_COUNT_UNKNOWN. */
    uint32_t param_count;
    /* Size in bytes of each parameter; 0 where unknown. */
    uint32_t param_sizes[ACCEL_KERNEL_MAX_PARAMS];
    /* Since: 1.1. Each parameter's ACCEL_PARAM_KIND_*. */
    uint8_t param_kinds[ACCEL_KERNEL_MAX_PARAMS];
    /*
     * Since: 1.1. The accel_elem_type (the numbering of <accel/accel.h>,
     * which never changes) of a pointer's pointee or of a value; 0
     * (ACCEL_BYTE) where unknown, which any ref fits.
     */
    uint8_t param_types[ACCEL_KERNEL_MAX_PARAMS];
    /* Since: 1.1. Each parameter's name, NUL-terminated; "" where unknown. */
    char param_names[ACCEL_KERNEL_MAX_PARAMS][ACCEL_PARAM_NAME_MAX + 1];
};
/* How much of the struct a host of minor 0 passes. */
#define ACCEL_KERNEL_SIGNATURE_V1_0_SIZE                                       \
    offsetof(struct accel_kernel_signature, param_kinds)

/*
 * What the host hands module_compile. Since: 1.1. The options are the
 * application's, checked by the host: each is "-DNAME", "-DNAME=VALUE" or
 * "-UNAME" (NAME an identifier, VALUE printable without spaces or quotes),
 * to be given to the compiler in order as its own argument.
 */
struct accel_compile_request {
    uint32_t struct_size; /* sizeof(struct accel_compile_request) */
    uint32_t option_count;
    const char *source;         /* NUL-terminated */
    size_t source_size;         /* strlen(source) */
    const char *const *options; /* option_count strings */
    void *host;                 /* the host's, passed back to the calls below */
    /* Hand over the image (copied). ACCEL_ERR_OUT_OF_HOST_MEMORY. */
    accel_status (*put_image)(void *host, const void *image, size_t size);
    /* Append `size` bytes to the compiler's log (copied). */
    accel_status (*put_log)(void *host, const char *text, size_t size);
};

/* Opaque plugin objects. Each plugin defines these structs for itself. */
typedef struct accel_drv_plugin accel_drv_plugin;
typedef struct accel_drv_device accel_drv_device;
typedef struct accel_drv_mem accel_drv_mem;
typedef struct accel_drv_stream accel_drv_stream;
typedef struct accel_drv_event accel_drv_event;
typedef struct accel_drv_module accel_drv_module;
typedef struct accel_drv_kernel accel_drv_kernel;

/* The services' version field: 1 for every host of ABI major 1. What a
 * host offers beyond 1.0 is told by struct_size and host_minor. */
#define ACCEL_HOST_SERVICES_VERSION 1

/* Bits of accel_host_services.privilege. Since: 1.1. */
enum {
    /*
     * The process runs with elevated privileges: setuid or setgid, file
     * capabilities, or real and effective user or group ids that differ.
     * getenv then returns NULL for every name.
     */
    ACCEL_HOST_PRIVILEGE_ELEVATED = 1u << 0,
    /*
     * The program opted in (accel_host_options.vendor_runtimes_when_elevated)
     * to vendor runtimes under elevated privileges. Set only with ELEVATED.
     */
    ACCEL_HOST_PRIVILEGE_VENDOR_RUNTIMES_ALLOWED = 1u << 1
};

/*
 * What the host offers a plugin. Handed to plugin_open; valid until
 * plugin_close returns. A plugin accepts any struct_size of at least
 * ACCEL_HOST_SERVICES_V1_0_SIZE and reads a field only if struct_size
 * covers it (ACCEL_HOST_SERVICES_HAS): a plugin built against a newer
 * header runs on an older host.
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

    /* ---- Since: 1.1 ---- */

    /*
     * The ABI minor the host speaks (its ACCEL_DRIVER_ABI_MINOR). A services
     * struct too small to hold it comes from a 1.0 host.
     */
    uint32_t host_minor;
    /*
     * ACCEL_HOST_PRIVILEGE_* bits. A plugin that loads a vendor runtime
     * which reads its own environment variables (log files, caches, tool
     * libraries) does not load it when ELEVATED is set without
     * VENDOR_RUNTIMES_ALLOWED: it reports no device with the reason
     * "elevated privileges: vendor runtime not opened". When both are set,
     * it first removes from the environment the vendor's variables that name
     * files or libraries. Under a 1.0 host, which does not say, a plugin
     * judges elevation from the process itself and does not load the
     * runtime when elevated.
     */
    uint32_t privilege;
};

/* Whether `services` (a pointer) has `field`, by its struct_size. */
#define ACCEL_HOST_SERVICES_HAS(services, field)                               \
    ((services)->struct_size >=                                                \
     offsetof(struct accel_host_services, field) + sizeof((services)->field))

/* The services struct of a 1.0 host, the smallest a plugin must accept. */
#define ACCEL_HOST_SERVICES_V1_0_SIZE                                          \
    (offsetof(struct accel_host_services, getenv) + sizeof(void (*)(void)))
/* The services struct of a 1.1 host. */
#define ACCEL_HOST_SERVICES_V1_1_SIZE                                          \
    (offsetof(struct accel_host_services, privilege) + sizeof(uint32_t))

/*
 * How many bytes of struct accel_device_props a plugin may write for the
 * host that gave it `services`: the props of the host's minor, never more
 * than this header's struct.
 */
static inline size_t
accel_device_props_size(const struct accel_host_services *services)
{
    if (!ACCEL_HOST_SERVICES_HAS(services, host_minor) || services->host_minor < 1)
        return ACCEL_DEVICE_PROPS_V1_0_SIZE;
    return ACCEL_DEVICE_PROPS_V1_1_SIZE;
}

/*
 * The plugin's table. Every entry is required (non-NULL) unless marked
 * "Optional" (or, for the kernel entries, see ACCEL_DEVICE_CAP_KERNELS).
 * The host checks the whole table before calling anything.
 */
struct accel_driver_v1 {
    /*
     * sizeof(struct accel_driver_v1) as the plugin was built. At least
     * ACCEL_DRIVER_V1_MIN_SIZE (the table up to launch). A size smaller than
     * this host's table must end on an entry boundary: a table that ends
     * inside an entry is refused with the reason, never half read. A size
     * larger than the host's table (a newer plugin) is accepted, and the
     * host reads only the entries it knows.
     */
    uint32_t struct_size;
    uint16_t abi_major;  /* ACCEL_DRIVER_ABI_MAJOR */
    uint16_t abi_minor;  /* ACCEL_DRIVER_ABI_MINOR, as the plugin was built */
    const char *name;    /* equals NAME in the file name accel-plugin-NAME.so */
    const char *version; /* the plugin's own version, free text */
    /*
     * Higher wins in automatic selection, among plugins with a live device:
     * the bundled GPU plugins say 100, the CPU plugin 0. A third-party plugin
     * for a device that should be preferred to the CPU says 1 to 99 (50 is a
     * good default; below 100 so that it does not shadow the vendor GPU
     * plugins unless that is meant), or above 100 to be preferred to them.
     * Negative values rank below the CPU plugin (simulators, test devices).
     * Ties go to the plugin found first on the search path.
     */
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
    /*
     * Describe device `index` (< count) without opening it. Writes at most
     * accel_device_props_size(services) bytes of *out_props (the host
     * zeroed all of it); a 1.1 plugin fills uuid, and pci_bus_id where the
     * device is on PCI.
     */
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
     *
     * Where the driver refuses to recover the device (the reset call
     * itself fails), the plugin returns ACCEL_ERR_UNRECOVERABLE with the
     * driver's reason, and answers every later device_reset and
     * device_status of the device the same without asking the driver
     * again, so that no open resets in a loop, until every open of the
     * device has closed. The host then keeps the device lost, and
     * accel_device_reset returns that code. Any other failure may be
     * tried again.
     */
    accel_status (*device_reset)(accel_drv_device *device);

    /* ---- memory ---- */

    /*
     * Allocate `bytes` (> 0) of device memory. *out_mem is the plugin's
     * handle for mem_free; *out_address is the device address that copies
     * and launches take, aligned to at least ACCEL_DRIVER_MEM_ALIGNMENT
     * bytes (the host frees a misaligned one and fails the allocation with
     * ACCEL_ERR_PLUGIN_ABI). ACCEL_ERR_OUT_OF_DEVICE_MEMORY when it does
     * not fit; the device stays usable.
     *
     * The host asks for pages, not for each allocation, and cuts slices
     * from them: an allocation of up to 1 MiB takes a slice of a power of
     * two from 256 bytes up, cut at a multiple of its size from the page's
     * start, out of a page of 2 MiB (or four slices, when larger), but
     * never more than a quarter of the device's total_memory rounded down
     * to a power of two (and never less than one slice), so that a small
     * device still serves small allocations; a larger allocation gets a
     * page of its own, its size rounded up to 256 bytes. A slice is
     * therefore aligned to the smaller of its size and the page's alignment.
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
     * Asynchronous: they may return before the copy has happened, and also
     * after it (a plugin may copy at once when the stream is idle). Host
     * memory passed in stays valid and unchanged until the stream reaches
     * the copy; the host guarantees that. Device addresses are those
     * mem_alloc returned, the layout's offsets added by the plugin. Layouts
     * arrive validated (see struct accel_copy_layout). The source and
     * destination bytes of one copy never overlap (the host refuses such a
     * copy, and moves allocations only between pages), so a plugin may copy
     * as memcpy does.
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
     * The typed fields (Since: 1.1) are written only for a host of minor 1
     * or later (see struct accel_kernel_signature).
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
     * Optional. Enqueue a host function: `fn(user)` runs once all earlier
     * work on the stream has completed, and later work waits for it. It
     * runs on a plugin thread of its own, never inline on the caller of
     * host_func: the host's callback fn only hands the callback to a host
     * thread, but the gate of a host-run collective (host/comm_gate.c)
     * blocks until the collective has completed on this rank, which can
     * take as long as ACCEL_COMM_TIMEOUT_MS (5 minutes by default), while
     * the caller of host_func holds the device lock. fn holds no lock that
     * the caller of host_func holds, and must not call back into the
     * plugin. When NULL, the host offers no completion callbacks on this
     * plugin's devices, and host-run collectives are refused on them.
     */
    accel_status (*host_func)(accel_drv_device *device, accel_drv_stream *stream,
                              void (*fn)(void *user), void *user);
    /*
     * Optional. Wait for work the device runs outside the streams it gave
     * the host (collectives, other libraries' streams) before the host moves
     * memory. NULL means there is none.
     */
    accel_status (*wait_outside_streams)(accel_drv_device *device);
    /*
     * Optional. Since: 1.1. Enqueue a copy between two open devices of this
     * plugin (a peer copy: cuMemcpyPeerAsync, hipMemcpyPeerAsync), dst an
     * address of dst_device and src one of src_device, on `stream`, a
     * stream of `device`, which is one of the two. The layout is as
     * copy_on_device's and the ranges never overlap. The host holds neither
     * allocation's memory for other use until the stream has passed the
     * copy, and calls this only with two different devices. When NULL, or
     * when it returns ACCEL_ERR_NOT_SUPPORTED having enqueued nothing (a
     * driver without the peer calls), the host copies between two devices
     * of the plugin with copy_on_device, the other device's address as if
     * it were the stream's own, and waits for the copy with both devices'
     * state held.
     */
    accel_status (*copy_peer)(accel_drv_device *device, accel_drv_stream *stream,
                              accel_drv_device *dst_device, uint64_t dst,
                              accel_drv_device *src_device, uint64_t src,
                              const struct accel_copy_layout *layout);
    /*
     * Optional. Since: 1.1. Enqueue a fill of `bytes` bytes at device
     * address `dst` with the `pattern_size`-byte pattern at `pattern`
     * repeated (cuMemsetD8/D16/D32Async, clEnqueueFillBuffer,
     * vkCmdFillBuffer). pattern_size is 1, 2, 4 or 8; dst and bytes are
     * multiples of it, and bytes > 0; the range lies inside one allocation.
     * The plugin copies the pattern before it returns. When NULL, or when
     * it returns ACCEL_ERR_NOT_SUPPORTED having enqueued nothing (a pattern
     * size the driver has no call for), the host writes the pattern with
     * copy_to_device from host memory of its own.
     */
    accel_status (*fill)(accel_drv_device *device, accel_drv_stream *stream,
                         uint64_t dst, uint64_t bytes, const void *pattern,
                         uint32_t pattern_size);
    /*
     * Optional. Since: 1.1. The time from `start` to `end`, two recorded
     * events of `device`, in nanoseconds of the device's own clock where
     * it has one (cuEventElapsedTime, hipEventElapsedTime; the CPU plugin's
     * stream workers' clock): the moment the work before each record had
     * completed. Negative when `end` completed first. ACCEL_NOT_READY (no
     * error detail) while either has not completed: the host's trace asks
     * this way without an event_query first. ACCEL_ERR_NOT_SUPPORTED when the
     * plugin cannot time these events (the host then says so). When NULL,
     * accel_event_elapsed returns ACCEL_ERR_NOT_SUPPORTED. The host also
     * uses it to place commands on a trace's stream tracks (ACCEL_TRACE).
     */
    accel_status (*event_elapsed)(accel_drv_device *device,
                                  accel_drv_event *start, accel_drv_event *end,
                                  int64_t *out_ns);
    /*
     * Optional. Since: 1.1. Compile kernel source (the <accel/kernel.h>
     * dialect, which the plugin supplies to its compiler: the source needs
     * no include path) into an image that module_load of this device takes.
     * The plugin hands the image to request->put_image once, and the
     * compiler's whole log to request->put_log (in pieces, as it comes);
     * both copy what they are given. A source that does not compile is
     * ACCEL_ERR_MODULE, with its log handed over first; no compiler found
     * is ACCEL_ERR_NOT_SUPPORTED. The host has checked the options (see
     * struct accel_compile_request) and that the source includes nothing
     * but <accel/kernel.h>; it caches images (keyed by compiler_identity),
     * so a plugin keeps no cache of its own. Runs without the device lock
     * and may take seconds. module_compile and compiler_identity are both
     * set or both NULL; when NULL, accel_module_compile answers
     * ACCEL_ERR_NOT_SUPPORTED.
     */
    accel_status (*module_compile)(accel_drv_device *device,
                                   const struct accel_compile_request *request);
    /*
     * Optional. Since: 1.1. Write into out_identity (NUL-terminated, at
     * most `capacity` bytes with the NUL) a line that changes whenever the
     * same source and options may compile to another image on this
     * device: the compiler, its version, the device's target, the kernel.h
     * the plugin supplies. The host keys its on-disk cache with it, and
     * calls it on every compile, cache hits included: it must be cheap and
     * must not run the compiler. ACCEL_ERR_NOT_SUPPORTED (with the reason)
     * when the device has no compiler.
     */
    accel_status (*compiler_identity)(accel_drv_device *device,
                                      char *out_identity, size_t capacity);
    /*
     * Optional. Since: 1.1. Fill `out` (out->struct_size set by the host;
     * write no more than it) with the device's native handles (kind,
     * ordinal, context) and, when `stream` is not NULL, that stream's
     * native handle (CUstream, hipStream_t), so that a vendor library
     * (NCCL, RCCL, cuBLAS) can enqueue work on it in order with the
     * host's commands. The handles stay valid until the stream is
     * destroyed or the device reset. When NULL, accel_stream_native
     * answers ACCEL_ERR_NOT_SUPPORTED and stream-ordered communication
     * providers are refused on the plugin's devices.
     */
    accel_status (*native_handles)(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   struct accel_native_handles *out);
};

/* The longest compiler identity the host asks for, NUL included. */
#define ACCEL_COMPILER_IDENTITY_MAX 1024u

/* The alignment every mem_alloc address has at least, in bytes. */
#define ACCEL_DRIVER_MEM_ALIGNMENT 256u

/*
 * Every entry of struct accel_driver_v1 after its header, in table order:
 * X(entry, need, since, slot). need is REQUIRED, KERNELS (required unless
 * no device of the plugin has ACCEL_DEVICE_CAP_KERNELS; the four are all
 * set or all NULL) or OPTIONAL; since is the minor that added the entry;
 * slot is its frozen index in the table. New entries are appended here
 * and to the struct, with the next slot.
 */
#define ACCEL_DRIVER_V1_ENTRIES(X)                                             \
    X(plugin_open, REQUIRED, 0, 0)                                             \
    X(plugin_close, REQUIRED, 0, 1)                                            \
    X(device_count, REQUIRED, 0, 2)                                            \
    X(device_info, REQUIRED, 0, 3)                                             \
    X(device_open, REQUIRED, 0, 4)                                             \
    X(device_close, REQUIRED, 0, 5)                                            \
    X(device_status, REQUIRED, 0, 6)                                           \
    X(device_reset, REQUIRED, 0, 7)                                            \
    X(mem_alloc, REQUIRED, 0, 8)                                               \
    X(mem_free, REQUIRED, 0, 9)                                                \
    X(host_alloc, REQUIRED, 0, 10)                                             \
    X(host_free, REQUIRED, 0, 11)                                              \
    X(stream_create, REQUIRED, 0, 12)                                          \
    X(stream_destroy, REQUIRED, 0, 13)                                         \
    X(stream_sync, REQUIRED, 0, 14)                                            \
    X(event_create, REQUIRED, 0, 15)                                           \
    X(event_destroy, REQUIRED, 0, 16)                                          \
    X(event_record, REQUIRED, 0, 17)                                           \
    X(event_query, REQUIRED, 0, 18)                                            \
    X(event_sync, REQUIRED, 0, 19)                                             \
    X(stream_wait_event, REQUIRED, 0, 20)                                      \
    X(copy_to_device, REQUIRED, 0, 21)                                         \
    X(copy_to_host, REQUIRED, 0, 22)                                           \
    X(copy_on_device, REQUIRED, 0, 23)                                         \
    X(module_load, KERNELS, 0, 24)                                             \
    X(module_unload, KERNELS, 0, 25)                                           \
    X(kernel_get, KERNELS, 0, 26)                                              \
    X(launch, KERNELS, 0, 27)                                                  \
    X(host_func, OPTIONAL, 0, 28)                                              \
    X(wait_outside_streams, OPTIONAL, 0, 29)                                   \
    X(copy_peer, OPTIONAL, 1, 30)                                              \
    X(fill, OPTIONAL, 1, 31)                                                   \
    X(event_elapsed, OPTIONAL, 1, 32)                                          \
    X(module_compile, OPTIONAL, 1, 33)                                         \
    X(compiler_identity, OPTIONAL, 1, 34)                                      \
    X(native_handles, OPTIONAL, 1, 35)

/* The need of an entry in ACCEL_DRIVER_V1_ENTRIES, as ACCEL_ENTRY_##need. */
enum {
    ACCEL_ENTRY_REQUIRED = 0,
    ACCEL_ENTRY_KERNELS = 1,
    ACCEL_ENTRY_OPTIONAL = 2
};

/* Where entry `slot` of the table starts: entries are function pointers. */
#define ACCEL_DRIVER_V1_ENTRY_OFFSET(slot)                                     \
    (offsetof(struct accel_driver_v1, plugin_open) +                           \
     (size_t)(slot) * sizeof(void (*)(void)))

/* The smallest struct_size a plugin may give: the table up to launch. */
#define ACCEL_DRIVER_V1_MIN_SIZE ACCEL_DRIVER_V1_ENTRY_OFFSET(28)
/* The whole table of each minor. 1.1 added copy_peer, fill,
 * event_elapsed, module_compile, compiler_identity and native_handles. */
#define ACCEL_DRIVER_V1_0_SIZE ACCEL_DRIVER_V1_ENTRY_OFFSET(30)
#define ACCEL_DRIVER_V1_1_SIZE ACCEL_DRIVER_V1_ENTRY_OFFSET(36)

/* Whether `table` (a pointer) has `entry`, by its struct_size. */
#define ACCEL_DRIVER_HAS_ENTRY(table, entry)                                   \
    ((table)->struct_size >=                                                   \
     offsetof(struct accel_driver_v1, entry) + sizeof((table)->entry))

/* How a plugin exports its table (with -fvisibility=hidden elsewhere):
 * ACCEL_DRIVER_EXPORT const struct accel_driver_v1 accel_driver_v1 = {...}; */
#if defined(__GNUC__)
#define ACCEL_DRIVER_EXPORT __attribute__((visibility("default")))
#else
#define ACCEL_DRIVER_EXPORT
#endif

/* The layout is frozen: a reordered or resized field fails the build. */
#if defined(__cplusplus)
#define ACCEL_DRIVER_STATIC_ASSERT_(cond, text) static_assert(cond, text)
#else
#define ACCEL_DRIVER_STATIC_ASSERT_(cond, text) _Static_assert(cond, text)
#endif
ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_driver_v1, abi_major) == 4,
                            "accel_driver_v1 header layout");
ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_driver_v1, abi_minor) == 6,
                            "accel_driver_v1 header layout");
ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_driver_v1, name) == 8,
                            "accel_driver_v1 header layout");
ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_driver_v1, plugin_open) ==
                                16 + 2 * sizeof(void *),
                            "accel_driver_v1 header layout");
#define ACCEL_DRIVER_ASSERT_ENTRY_(entry, need, since, slot)                   \
    ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_driver_v1, entry) ==     \
                                    ACCEL_DRIVER_V1_ENTRY_OFFSET(slot),        \
                                "accel_driver_v1 entry moved: " #entry);
ACCEL_DRIVER_V1_ENTRIES(ACCEL_DRIVER_ASSERT_ENTRY_)
#undef ACCEL_DRIVER_ASSERT_ENTRY_
ACCEL_DRIVER_STATIC_ASSERT_(sizeof(struct accel_driver_v1) ==
                                ACCEL_DRIVER_V1_1_SIZE,
                            "accel_driver_v1 grew without a new minor size");
ACCEL_DRIVER_STATIC_ASSERT_(ACCEL_DEVICE_PROPS_V1_0_SIZE == 208 &&
                                offsetof(struct accel_device_props, uuid) ==
                                    ACCEL_DEVICE_PROPS_V1_0_SIZE &&
                                sizeof(struct accel_device_props) ==
                                    ACCEL_DEVICE_PROPS_V1_1_SIZE,
                            "accel_device_props layout");
ACCEL_DRIVER_STATIC_ASSERT_(
    ACCEL_KERNEL_SIGNATURE_V1_0_SIZE == 4 + 4 * ACCEL_KERNEL_MAX_PARAMS &&
        offsetof(struct accel_kernel_signature, param_names) ==
            ACCEL_KERNEL_SIGNATURE_V1_0_SIZE + 2 * ACCEL_KERNEL_MAX_PARAMS,
    "accel_kernel_signature layout");
ACCEL_DRIVER_STATIC_ASSERT_(offsetof(struct accel_host_services, log) == 8 &&
                                offsetof(struct accel_host_services, getenv) ==
                                    8 + 2 * sizeof(void (*)(void)) &&
                                offsetof(struct accel_host_services, host_minor) ==
                                    ACCEL_HOST_SERVICES_V1_0_SIZE &&
                                sizeof(struct accel_host_services) ==
                                    ACCEL_HOST_SERVICES_V1_1_SIZE,
                            "accel_host_services layout");

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DRIVER_H */
