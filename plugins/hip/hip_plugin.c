/*
 * accel-plugin-hip: AMD GPUs through the ROCm HIP runtime (libamdhip64).
 *
 * The plugin is built without ROCm and never links libamdhip64: it
 * declares what it uses itself (hip_api.h, hip_symbol_table.h) and opens
 * the runtime with dlopen at plugin_open. A machine without the runtime,
 * or with the runtime and no AMD GPU (Debian's libamdhip64 answers hipInit
 * with hipErrorInvalidDevice there), loads the plugin all the same: it
 * reports zero devices and says why (what was tried and the runtime's
 * error names). It never prints; the runtime prints only when the user
 * asks it to with AMD_LOG_LEVEL, which the plugin leaves alone.
 *
 * Environment (read through the host's services->getenv, so ignored in
 * setuid programs):
 *
 *   ACCEL_HIP_LIBRARY    The runtime library to open instead of
 *                        libamdhip64.so.6, libamdhip64.so.5, then
 *                        libamdhip64.so. Only it is tried when set. Tests
 *                        point it at a fake runtime (tests/fakes/hip).
 *
 * The runtime's own HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES choose
 * which GPUs it shows, as for any HIP program.
 *
 * This file holds the table, the plugin and the device descriptions; the
 * devices, memory, streams, copies and modules live in their own files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_plugin.h"

#define HIP_EXPORT __attribute__((visibility("default")))

/* ---- describing a device ---- */

/* Each limit the props carry, and the attribute that gives it. */
struct hip_limit {
    ahip_hipDeviceAttribute_t attribute;
    size_t offset; /* of a uint32_t in struct accel_device_props */
};

#define HIP_LIMIT(attribute, field)                                                    \
    {AHIP_hipDeviceAttribute##attribute, offsetof(struct accel_device_props, field)}

static const struct hip_limit hip_limits[] = {
    HIP_LIMIT(MultiprocessorCount, compute_units),
    HIP_LIMIT(MaxThreadsPerBlock, max_threads_per_block),
    HIP_LIMIT(MaxBlockDimX, max_block_dim[0]),
    HIP_LIMIT(MaxBlockDimY, max_block_dim[1]),
    HIP_LIMIT(MaxBlockDimZ, max_block_dim[2]),
    HIP_LIMIT(MaxGridDimX, max_grid_dim[0]),
    HIP_LIMIT(MaxGridDimY, max_grid_dim[1]),
    HIP_LIMIT(MaxGridDimZ, max_grid_dim[2]),
    HIP_LIMIT(MaxSharedMemoryPerBlock, max_shared_bytes),
};

/* One attribute, as a non-negative number. */
static ahip_hipError_t hip_attribute(const struct hip_symbols *symbols, int ordinal,
                                     ahip_hipDeviceAttribute_t attribute, uint32_t *out_value)
{
    int value = 0;
    ahip_hipError_t result = symbols->hipDeviceGetAttribute(&value, attribute, ordinal);

    *out_value = value > 0 ? (uint32_t)value : 0;
    return result;
}

/*
 * The device's target ("gfx90a:sramecc+:xnack-") from hipDeviceProp_t, in
 * the layout of whichever call the runtime has (see hip_api.h); the base
 * processor ("gfx90a") is what bundles pick images by.
 */
static ahip_hipError_t hip_device_arch(const struct hip_symbols *symbols, int ordinal,
                                       char *out_arch, size_t size, const char **out_call)
{
    _Alignas(16) unsigned char properties[AHIP_PROPS_BUFFER_BYTES] = {0};
    char target[AHIP_PROPS_GCN_ARCH_NAME_BYTES];
    size_t offset = AHIP_PROPS_R0000_GCN_ARCH_NAME_OFFSET;
    ahip_hipError_t result;

    if (symbols->hipGetDevicePropertiesR0600 != NULL) {
        *out_call = "hipGetDevicePropertiesR0600";
        offset = AHIP_PROPS_R0600_GCN_ARCH_NAME_OFFSET;
        result = symbols->hipGetDevicePropertiesR0600(
            (ahip_hipDeviceProp_tR0600 *)(void *)properties, ordinal);
    } else {
        *out_call = "hipGetDeviceProperties";
        result = symbols->hipGetDeviceProperties((ahip_hipDeviceProp_tR0000 *)(void *)properties,
                                                 ordinal);
    }
    if (result != AHIP_hipSuccess)
        return result;
    memcpy(target, properties + offset, sizeof(target));
    target[sizeof(target) - 1] = '\0';
    accel__hip_target_processor(target, out_arch, size);
    /* A target that is not "gfxN..." is shown as the runtime gave it. */
    if (out_arch[0] == '\0')
        snprintf(out_arch, size, "%s", target[0] != '\0' ? target : "amdgcn");
    return AHIP_hipSuccess;
}

/*
 * Fill a device's props and limits. On failure, the call that failed in
 * *out_call.
 */
static ahip_hipError_t hip_describe_device(const struct hip_symbols *symbols,
                                           struct hip_physical_device *physical,
                                           const char **out_call)
{
    struct accel_device_props *props = &physical->props;
    uint32_t max_pitch = 0;
    size_t total = 0;
    ahip_hipError_t result;

    *out_call = "hipDeviceGetName";
    result = symbols->hipDeviceGetName(props->name, (int)sizeof(props->name), physical->ordinal);
    if (result != AHIP_hipSuccess)
        return result;
    props->name[sizeof(props->name) - 1] = '\0';
    *out_call = "hipDeviceTotalMem";
    result = symbols->hipDeviceTotalMem(&total, physical->ordinal);
    if (result != AHIP_hipSuccess)
        return result;
    props->total_memory = total;
    *out_call = "hipDeviceGetAttribute";
    for (size_t i = 0; i < sizeof(hip_limits) / sizeof(hip_limits[0]); i++) {
        uint32_t *field = (uint32_t *)(void *)((char *)props + hip_limits[i].offset);

        result = hip_attribute(symbols, physical->ordinal, hip_limits[i].attribute, field);
        if (result != AHIP_hipSuccess)
            return result;
    }
    result = hip_attribute(symbols, physical->ordinal, AHIP_hipDeviceAttributeMaxPitch,
                           &max_pitch);
    if (result != AHIP_hipSuccess)
        return result;
    result = hip_device_arch(symbols, physical->ordinal, props->arch, sizeof(props->arch),
                             out_call);
    if (result != AHIP_hipSuccess)
        return result;
    props->caps = ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D;
    physical->max_pitch = max_pitch;
    return AHIP_hipSuccess;
}

/* ---- plugin ---- */

/* Say why there is no device: `what` failed with `result`, and `more` if not NULL. */
static void hip_no_device(accel_drv_plugin *plugin, const char *what, ahip_hipError_t result,
                          const char *more)
{
    char described[ACCEL__NATIVE_REASON_MAX / 3];

    accel__hip_describe(plugin, result, described, sizeof(described));
    /* The path is bounded so that the runtime's own words always fit. */
    snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
             "%.300s: %s failed: %s%s%s", plugin->symbols.library.path, what, described,
             more != NULL ? "; " : "", more != NULL ? more : "");
}

/* Find the devices and describe each; zero devices with the reason otherwise. */
static accel_status hip_find_devices(accel_drv_plugin *plugin)
{
    const struct hip_symbols *symbols = &plugin->symbols;
    const char *call = "hipGetDeviceCount";
    ahip_hipError_t result;
    int count = 0;
    int i;

    result = symbols->hipGetDeviceCount(&count);
    if (result != AHIP_hipSuccess) {
        hip_no_device(plugin, call, result, NULL);
        return ACCEL_OK;
    }
    if (count > (int)HIP_DEVICES_MAX) {
        plugin->services->log(ACCEL_LOG_WARN, "hip: the runtime has %d devices; the plugin "
                              "offers the first %u", count, HIP_DEVICES_MAX);
        count = (int)HIP_DEVICES_MAX;
    }
    if (count <= 0) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "%.300s: the HIP runtime (version %d) reports no device",
                 symbols->library.path, plugin->driver_version);
        return ACCEL_OK;
    }
    plugin->devices = calloc((size_t)count, sizeof(plugin->devices[0]));
    if (plugin->devices == NULL)
        return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                           "calloc of %d HIP devices failed", count);
    for (i = 0; i < count; i++) {
        struct hip_physical_device *physical = &plugin->devices[i];

        physical->ordinal = i;
        result = hip_describe_device(symbols, physical, &call);
        if (result != AHIP_hipSuccess)
            break;
        physical->context = accel__hip_context_state((uint32_t)i);
        if (physical->context == NULL)
            return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                               "pthread_mutex_init failed for the HIP "
                                               "devices' context states");
    }
    if (result != AHIP_hipSuccess) {
        /* A device the runtime cannot describe is one it cannot run either. */
        hip_no_device(plugin, call, result, NULL);
        return ACCEL_OK;
    }
    plugin->device_count = (uint32_t)count;
    return ACCEL_OK;
}

/*
 * hipInit failed. Without a GPU, ROCm's runtime answers hipInit with
 * hipErrorInvalidDevice, which alone reads like a bad argument;
 * hipGetDeviceCount then says hipErrorNoDevice, which is the reason in
 * plain words, so the reason carries both.
 */
static void hip_init_failed(accel_drv_plugin *plugin, ahip_hipError_t result)
{
    char counted[ACCEL__NATIVE_REASON_MAX / 3] = "";
    int count = 0;
    ahip_hipError_t count_result = plugin->symbols.hipGetDeviceCount(&count);

    if (count_result != AHIP_hipSuccess && count_result != result) {
        char described[ACCEL__NATIVE_REASON_MAX / 4];

        accel__hip_describe(plugin, count_result, described, sizeof(described));
        snprintf(counted, sizeof(counted), "hipGetDeviceCount: %s", described);
    }
    hip_no_device(plugin, "hipInit", result, counted[0] != '\0' ? counted : NULL);
}

/* Load and initialise the runtime; without it, the reason and no device. */
static accel_status hip_start_runtime(accel_drv_plugin *plugin)
{
    ahip_hipError_t result;

    if (!accel__hip_symbols_load(&plugin->symbols, plugin->services, plugin->no_device_reason,
                                 sizeof(plugin->no_device_reason)))
        return ACCEL_OK;
    /*
     * From here the runtime stays mapped, even when hipInit fails: it may
     * have started the HSA runtime's threads and registered exit handlers.
     */
    plugin->init_called = true;
    result = plugin->symbols.hipInit(0);
    if (result != AHIP_hipSuccess) {
        hip_init_failed(plugin, result);
        return ACCEL_OK;
    }
    if (plugin->symbols.hipDriverGetVersion(&plugin->driver_version) != AHIP_hipSuccess)
        plugin->driver_version = 0;
    return hip_find_devices(plugin);
}

static void hip_plugin_close(accel_drv_plugin *plugin)
{
    if (plugin == NULL)
        return;
    free(plugin->devices);
    accel__hip_symbols_unload(&plugin->symbols, plugin->init_called);
    free(plugin);
}

static accel_status hip_plugin_open(const struct accel_host_services *services,
                                    accel_drv_plugin **out_plugin)
{
    accel_drv_plugin *plugin;
    accel_status status;

    *out_plugin = NULL;
    /* Without the version 1 services there is no way even to say why. */
    if (services == NULL || services->struct_size < sizeof(struct accel_host_services))
        return ACCEL_ERR_INVALID_ARGUMENT;
    plugin = calloc(1, sizeof(*plugin));
    if (plugin == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of the HIP plugin failed");
    plugin->services = services;
    status = hip_start_runtime(plugin);
    if (status != ACCEL_OK) {
        hip_plugin_close(plugin);
        return status;
    }
    if (plugin->device_count != 0)
        services->log(ACCEL_LOG_DEBUG, "hip: %s, runtime version %d, %u device(s)",
                      plugin->symbols.library.path, plugin->driver_version,
                      plugin->device_count);
    else
        services->log(ACCEL_LOG_DEBUG, "hip: no device: %s", plugin->no_device_reason);
    *out_plugin = plugin;
    return ACCEL_OK;
}

/* ---- devices ---- */

static accel_status hip_device_count(accel_drv_plugin *plugin, uint32_t *out_count,
                                     const char **out_reason)
{
    *out_count = plugin->device_count;
    *out_reason = plugin->device_count == 0 ? plugin->no_device_reason : NULL;
    return ACCEL_OK;
}

static accel_status hip_device_info(accel_drv_plugin *plugin, uint32_t index,
                                    struct accel_device_props *out_props)
{
    memset(out_props, 0, sizeof(*out_props));
    if (index >= plugin->device_count)
        return plugin->services->set_error(ACCEL_ERR_NO_DEVICE,
                                           "device_info: no HIP device %u; there are %u", index,
                                           plugin->device_count);
    *out_props = plugin->devices[index].props;
    return ACCEL_OK;
}

/* ---- the table ---- */

extern HIP_EXPORT const struct accel_driver_v1 accel_driver_v1;

const struct accel_driver_v1 accel_driver_v1 = {
    .struct_size = sizeof(struct accel_driver_v1),
    .abi_major = ACCEL_DRIVER_ABI_MAJOR,
    .abi_minor = ACCEL_DRIVER_ABI_MINOR,
    .name = "hip",
    .version = "0.1.0",
    .priority = 100,

    .plugin_open = hip_plugin_open,
    .plugin_close = hip_plugin_close,

    .device_count = hip_device_count,
    .device_info = hip_device_info,
    .device_open = accel__hip_device_open,
    .device_close = accel__hip_device_close,
    .device_status = accel__hip_device_status,
    .device_reset = accel__hip_device_reset,

    .mem_alloc = accel__hip_mem_alloc,
    .mem_free = accel__hip_mem_free,
    .host_alloc = accel__hip_host_alloc,
    .host_free = accel__hip_host_free,

    .stream_create = accel__hip_stream_create,
    .stream_destroy = accel__hip_stream_destroy,
    .stream_sync = accel__hip_stream_sync,

    .event_create = accel__hip_event_create,
    .event_destroy = accel__hip_event_destroy,
    .event_record = accel__hip_event_record,
    .event_query = accel__hip_event_query,
    .event_sync = accel__hip_event_sync,
    .stream_wait_event = accel__hip_stream_wait_event,

    .copy_to_device = accel__hip_copy_to_device,
    .copy_to_host = accel__hip_copy_to_host,
    .copy_on_device = accel__hip_copy_on_device,

    .module_load = accel__hip_module_load,
    .module_unload = accel__hip_module_unload,
    .kernel_get = accel__hip_kernel_get,
    .launch = accel__hip_launch,

    .host_func = accel__hip_host_func,
    .wait_outside_streams = NULL,
};
