/*
 * The part of a GPU plugin that is the same for every vendor: plugin_open
 * and plugin_close, finding and describing the devices (zero devices with
 * a reason whenever the library, its initialisation or a device fails),
 * and the device_count and device_info entries.
 *
 * A plugin defines its struct accel_drv_plugin with a struct
 * accel__native_plugin as its first member, and describes its vendor once
 * in a struct accel__native_vendor: the names its messages use and the few
 * steps that call the vendor library. accel__native_plugin_close,
 * accel__native_device_count and accel__native_device_info are then table
 * entries as they are; plugin_open is a one-line call of
 * accel__native_plugin_open with the vendor.
 */
#ifndef ACCEL_PLUGIN_COMMON_NATIVE_PLUGIN_H
#define ACCEL_PLUGIN_COMMON_NATIVE_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>

#include "context_state.h"
#include "native_library.h"

/* One device as the vendor numbers it, shared by every open of it. */
struct accel__native_device {
    /* The vendor's name for the device: CUDA's CUdevice, HIP's ordinal. */
    int handle;
    struct accel_device_props props;
    /* The largest pitch the vendor's 2D and 3D copies take. */
    uint64_t max_pitch;
    /* Its context's lost and reset state (see accel__context_state_of_device). */
    struct accel__context_state *context;
};

struct accel__native_vendor;

/* What every GPU plugin object starts with. */
struct accel__native_plugin {
    const struct accel_host_services *services;
    const struct accel__native_vendor *vendor;
    /* The opened library (inside the plugin's symbols); NULL until one opens. */
    const struct accel__native_library *library;
    int driver_version;
    uint32_t device_count;
    struct accel__native_device *devices;
    /* Why there are no devices; empty while there are some. */
    char no_device_reason[ACCEL__NATIVE_REASON_MAX];
};

/*
 * A vendor, as the common part needs it. The calls return the vendor's
 * own result codes, as int; every vendor's success is 0.
 */
struct accel__native_vendor {
    const char *name;         /* "cuda": the log lines' prefix */
    const char *title;        /* "CUDA": how details name the vendor */
    const char *library_noun; /* "driver", "runtime": what its library is */
    size_t plugin_size;       /* sizeof the plugin's struct accel_drv_plugin */

    /*
     * Open the library and initialise it, setting plugin->library and
     * plugin->driver_version. False, with plugin->no_device_reason said,
     * when there is no usable library: the plugin then offers no device.
     */
    bool (*start)(accel_drv_plugin *plugin);
    /* Let go of what start took, whether or not it succeeded. */
    void (*stop)(accel_drv_plugin *plugin);
    /* How many devices the library has, in *out_count; the call made in *out_call. */
    int (*count_devices)(accel_drv_plugin *plugin, int *out_count,
                         const char **out_call);
    /*
     * Fill device `ordinal`'s handle, props and max_pitch. On failure, the
     * call that failed in *out_call.
     */
    int (*describe_device)(accel_drv_plugin *plugin, int ordinal,
                           struct accel__native_device *out_device,
                           const char **out_call);
    /* Say why there is no device: `call` failed with `result`. */
    void (*no_device)(accel_drv_plugin *plugin, const char *call, int result);
    /*
     * The vendor's environment variables that name files or libraries,
     * NULL-terminated: removed from the process environment before start
     * under elevated privileges (see accel__native_plugin_open).
     */
    const char *const *file_variables;
    /*
     * Cheap facts first: unless `library_variable` (ACCEL_CUDA_LIBRARY) is
     * set, the library is opened only when one of `device_nodes` (NULL-
     * terminated) exists; otherwise the plugin offers no device with the
     * reason "no device node", and the runtime (whose initialisation costs
     * milliseconds) is never loaded. `device_nodes_variable`, read through
     * services->getenv (so never under elevated privileges), replaces the
     * list with a colon-separated one: how tests put a node in place.
     */
    const char *library_variable;
    const char *const *device_nodes;
    const char *device_nodes_variable;
};

/* The common part of a plugin whose struct accel_drv_plugin starts with it. */
static inline struct accel__native_plugin *
accel__native_plugin_of(accel_drv_plugin *plugin)
{
    return (struct accel__native_plugin *)(void *)plugin;
}

/*
 * plugin_open: a zeroed plugin of vendor->plugin_size bytes, started, with
 * its devices found and described. A missing library, a failed
 * initialisation or a device that cannot be described is not an error:
 * the plugin opens with no device and its reason.
 *
 * Without a device node and without the vendor's library variable set, the
 * vendor is not started: no device, with the reason "no device node".
 *
 * Under elevated privileges (as the host's services say, or as the
 * process's own ids and secure mode say) the vendor is not started unless
 * the host passes the program's opt-in: no device, with the reason
 * "elevated privileges: vendor runtime not opened". With the opt-in, the
 * vendor's file_variables are removed from the environment first.
 *
 * Errors: ACCEL_ERR_INVALID_ARGUMENT for services smaller than a 1.0
 * host's, ACCEL_ERR_OUT_OF_HOST_MEMORY.
 */
accel_status accel__native_plugin_open(const struct accel_host_services *services,
                                       const struct accel__native_vendor *vendor,
                                       accel_drv_plugin **out_plugin);

/* plugin_close: the vendor's stop, then the devices and the plugin are freed. */
void accel__native_plugin_close(accel_drv_plugin *plugin);

/* device_count: the devices found, or zero and the reason. */
accel_status accel__native_device_count(accel_drv_plugin *plugin,
                                        uint32_t *out_count,
                                        const char **out_reason);

/* device_info: a device's props. Errors: ACCEL_ERR_NO_DEVICE for an index past the count. */
accel_status accel__native_device_info(accel_drv_plugin *plugin, uint32_t index,
                                       struct accel_device_props *out_props);

/*
 * native_handles (driver.h, since 1.1): write `kind`, the device's
 * `ordinal`, `context` and `stream` into `out`, no more than
 * out->struct_size bytes of it (a host built against an older, shorter
 * struct keeps the rest of its memory). Errors: ACCEL_ERR_INVALID_ARGUMENT
 * when out->struct_size does not reach the kind.
 */
accel_status accel__native_handles_fill(accel_drv_plugin *plugin, uint32_t kind,
                                        int ordinal, void *context, void *stream,
                                        struct accel_native_handles *out);

/*
 * Set the no-device reason "PATH: CALL failed: DESCRIBED", then "; " and
 * `more` when it is not NULL. The path is bounded so that the library's
 * own words always fit.
 */
void accel__native_no_device(accel_drv_plugin *plugin, const char *call,
                             const char *described, const char *more);

#endif /* ACCEL_PLUGIN_COMMON_NATIVE_PLUGIN_H */
