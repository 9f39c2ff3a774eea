/*
 * accel-plugin-cuda: NVIDIA GPUs through the CUDA Driver API.
 *
 * The plugin is built without the CUDA toolkit and never links libcuda: it
 * declares what it uses itself (cuda_api.h, cuda_symbol_table.h) and opens
 * the driver with dlopen at plugin_open. A machine without the driver, with
 * only the toolkit's stub library, or without a GPU loads the plugin all
 * the same: it reports zero devices and says why (what was tried and the
 * driver's error name). It never prints.
 *
 * Environment (read through the host's services->getenv, so ignored in
 * setuid programs):
 *
 *   ACCEL_CUDA_LIBRARY   The driver library to open instead of
 *                        libcuda.so.1, then libcuda.so. Only it is tried
 *                        when set. Tests point it at the toolkit's stub
 *                        library and at a fake driver (tests/fakes/cuda).
 *
 * Devices use their primary context, the one the CUDA runtime uses too, so
 * memory and streams can be shared with cuBLAS and the like. Streams are
 * CU_STREAM_NON_BLOCKING; events are made without timing.
 *
 * This file holds the table, the plugin and the device descriptions; the
 * devices' contexts, memory, streams, copies and modules live in their own
 * files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plugin.h"

#define CUDA_EXPORT __attribute__((visibility("default")))

/* ---- describing a device ---- */

/* Each limit the props carry, and the attribute that gives it. */
struct cuda_limit {
    acu_CUdevice_attribute attribute;
    size_t offset; /* of a uint32_t in struct accel_device_props */
};

#define CUDA_LIMIT(attribute, field)                                                   \
    {ACU_CU_DEVICE_ATTRIBUTE_##attribute, offsetof(struct accel_device_props, field)}

static const struct cuda_limit cuda_limits[] = {
    CUDA_LIMIT(MULTIPROCESSOR_COUNT, compute_units),
    CUDA_LIMIT(MAX_THREADS_PER_BLOCK, max_threads_per_block),
    CUDA_LIMIT(MAX_BLOCK_DIM_X, max_block_dim[0]),
    CUDA_LIMIT(MAX_BLOCK_DIM_Y, max_block_dim[1]),
    CUDA_LIMIT(MAX_BLOCK_DIM_Z, max_block_dim[2]),
    CUDA_LIMIT(MAX_GRID_DIM_X, max_grid_dim[0]),
    CUDA_LIMIT(MAX_GRID_DIM_Y, max_grid_dim[1]),
    CUDA_LIMIT(MAX_GRID_DIM_Z, max_grid_dim[2]),
    CUDA_LIMIT(MAX_SHARED_MEMORY_PER_BLOCK, max_shared_bytes),
};

/* One attribute, as a non-negative number. */
static acu_CUresult cuda_attribute(const struct cuda_symbols *symbols, acu_CUdevice device,
                                   acu_CUdevice_attribute attribute, uint32_t *out_value)
{
    int value = 0;
    acu_CUresult result = symbols->cuDeviceGetAttribute(&value, attribute, device);

    *out_value = value > 0 ? (uint32_t)value : 0;
    return result;
}

/*
 * Fill a device's props and limits. On failure, the call that failed in
 * *out_call.
 */
static acu_CUresult cuda_describe_device(const struct cuda_symbols *symbols,
                                         struct cuda_physical_device *physical,
                                         const char **out_call)
{
    struct accel_device_props *props = &physical->props;
    uint32_t major = 0, minor = 0, max_pitch = 0;
    size_t total = 0;
    acu_CUresult result;

    *out_call = "cuDeviceGetName";
    result = symbols->cuDeviceGetName(props->name, (int)sizeof(props->name), physical->handle);
    if (result != ACU_CUDA_SUCCESS)
        return result;
    props->name[sizeof(props->name) - 1] = '\0';
    *out_call = "cuDeviceTotalMem_v2";
    result = symbols->cuDeviceTotalMem_v2(&total, physical->handle);
    if (result != ACU_CUDA_SUCCESS)
        return result;
    props->total_memory = total;
    *out_call = "cuDeviceGetAttribute";
    for (size_t i = 0; i < sizeof(cuda_limits) / sizeof(cuda_limits[0]); i++) {
        uint32_t *field = (uint32_t *)(void *)((char *)props + cuda_limits[i].offset);

        result = cuda_attribute(symbols, physical->handle, cuda_limits[i].attribute, field);
        if (result != ACU_CUDA_SUCCESS)
            return result;
    }
    if ((result = cuda_attribute(symbols, physical->handle,
                                 ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 &major)) != ACU_CUDA_SUCCESS ||
        (result = cuda_attribute(symbols, physical->handle,
                                 ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 &minor)) != ACU_CUDA_SUCCESS ||
        (result = cuda_attribute(symbols, physical->handle, ACU_CU_DEVICE_ATTRIBUTE_MAX_PITCH,
                                 &max_pitch)) != ACU_CUDA_SUCCESS)
        return result;
    /* What bundles pick images by: "sm_90" for compute capability 9.0. */
    snprintf(props->arch, sizeof(props->arch), "sm_%u%u", major, minor);
    props->caps = ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D;
    physical->max_pitch = max_pitch;
    return ACU_CUDA_SUCCESS;
}

/* ---- plugin ---- */

/* Say why there is no device: `what` failed with `result`. */
static void cuda_no_device(accel_drv_plugin *plugin, const char *what, acu_CUresult result)
{
    char described[ACCEL__NATIVE_REASON_MAX / 2];

    accel__cuda_describe(plugin, result, described, sizeof(described));
    /* The path is bounded so that the driver's own words always fit. */
    snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
             "%.300s: %s failed: %s", plugin->symbols.library.path, what, described);
}

/* Find the devices and describe each; zero devices with the reason otherwise. */
static accel_status cuda_find_devices(accel_drv_plugin *plugin)
{
    const struct cuda_symbols *symbols = &plugin->symbols;
    const char *call = "cuDeviceGetCount";
    acu_CUresult result;
    int count = 0;
    int i;

    result = symbols->cuDeviceGetCount(&count);
    if (result != ACU_CUDA_SUCCESS) {
        cuda_no_device(plugin, call, result);
        return ACCEL_OK;
    }
    if (count > (int)CUDA_DEVICES_MAX) {
        plugin->services->log(ACCEL_LOG_WARN, "cuda: the driver has %d devices; the plugin "
                              "offers the first %u", count, CUDA_DEVICES_MAX);
        count = (int)CUDA_DEVICES_MAX;
    }
    if (count <= 0) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "%s: the CUDA driver (version %d) reports no device",
                 symbols->library.path, plugin->driver_version);
        return ACCEL_OK;
    }
    plugin->devices = calloc((size_t)count, sizeof(plugin->devices[0]));
    if (plugin->devices == NULL)
        return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                           "calloc of %d CUDA devices failed", count);
    for (i = 0; i < count; i++) {
        struct cuda_physical_device *physical = &plugin->devices[i];

        call = "cuDeviceGet";
        result = symbols->cuDeviceGet(&physical->handle, i);
        if (result == ACU_CUDA_SUCCESS)
            result = cuda_describe_device(symbols, physical, &call);
        if (result != ACU_CUDA_SUCCESS)
            break;
        physical->context = accel__cuda_context_state((uint32_t)i);
        if (physical->context == NULL)
            return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                               "pthread_mutex_init failed for the CUDA "
                                               "devices' context states");
    }
    if (result != ACU_CUDA_SUCCESS) {
        /* A device the driver cannot describe is one it cannot run either. */
        cuda_no_device(plugin, call, result);
        return ACCEL_OK;
    }
    plugin->device_count = (uint32_t)count;
    return ACCEL_OK;
}

/* Load and initialise the driver; without it, the reason and no device. */
static accel_status cuda_start_driver(accel_drv_plugin *plugin)
{
    acu_CUresult result;

    if (!accel__cuda_symbols_load(&plugin->symbols, plugin->services,
                                  plugin->no_device_reason,
                                  sizeof(plugin->no_device_reason)))
        return ACCEL_OK;
    result = plugin->symbols.cuInit(0);
    if (result != ACU_CUDA_SUCCESS) {
        cuda_no_device(plugin, "cuInit", result);
        accel__cuda_symbols_unload(&plugin->symbols, false);
        return ACCEL_OK;
    }
    plugin->initialised = true;
    if (plugin->symbols.cuDriverGetVersion(&plugin->driver_version) != ACU_CUDA_SUCCESS)
        plugin->driver_version = 0;
    return cuda_find_devices(plugin);
}

static void cuda_plugin_close(accel_drv_plugin *plugin)
{
    if (plugin == NULL)
        return;
    free(plugin->devices);
    accel__cuda_symbols_unload(&plugin->symbols, plugin->initialised);
    free(plugin);
}

static accel_status cuda_plugin_open(const struct accel_host_services *services,
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
                                   "calloc of the CUDA plugin failed");
    plugin->services = services;
    status = cuda_start_driver(plugin);
    if (status != ACCEL_OK) {
        cuda_plugin_close(plugin);
        return status;
    }
    if (plugin->device_count != 0)
        services->log(ACCEL_LOG_DEBUG, "cuda: %s, driver version %d, %u device(s)",
                      plugin->symbols.library.path, plugin->driver_version,
                      plugin->device_count);
    else
        services->log(ACCEL_LOG_DEBUG, "cuda: no device: %s", plugin->no_device_reason);
    *out_plugin = plugin;
    return ACCEL_OK;
}

/* ---- devices ---- */

static accel_status cuda_device_count(accel_drv_plugin *plugin, uint32_t *out_count,
                                      const char **out_reason)
{
    *out_count = plugin->device_count;
    *out_reason = plugin->device_count == 0 ? plugin->no_device_reason : NULL;
    return ACCEL_OK;
}

static accel_status cuda_device_info(accel_drv_plugin *plugin, uint32_t index,
                                     struct accel_device_props *out_props)
{
    memset(out_props, 0, sizeof(*out_props));
    if (index >= plugin->device_count)
        return plugin->services->set_error(ACCEL_ERR_NO_DEVICE,
                                           "device_info: no CUDA device %u; there are %u",
                                           index, plugin->device_count);
    *out_props = plugin->devices[index].props;
    return ACCEL_OK;
}

/* ---- the table ---- */

extern CUDA_EXPORT const struct accel_driver_v1 accel_driver_v1;

const struct accel_driver_v1 accel_driver_v1 = {
    .struct_size = sizeof(struct accel_driver_v1),
    .abi_major = ACCEL_DRIVER_ABI_MAJOR,
    .abi_minor = ACCEL_DRIVER_ABI_MINOR,
    .name = "cuda",
    .version = "0.1.0",
    .priority = 100,

    .plugin_open = cuda_plugin_open,
    .plugin_close = cuda_plugin_close,

    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .device_open = accel__cuda_device_open,
    .device_close = accel__cuda_device_close,
    .device_status = accel__cuda_device_status,
    .device_reset = accel__cuda_device_reset,

    .mem_alloc = accel__cuda_mem_alloc,
    .mem_free = accel__cuda_mem_free,
    .host_alloc = accel__cuda_host_alloc,
    .host_free = accel__cuda_host_free,

    .stream_create = accel__cuda_stream_create,
    .stream_destroy = accel__cuda_stream_destroy,
    .stream_sync = accel__cuda_stream_sync,

    .event_create = accel__cuda_event_create,
    .event_destroy = accel__cuda_event_destroy,
    .event_record = accel__cuda_event_record,
    .event_query = accel__cuda_event_query,
    .event_sync = accel__cuda_event_sync,
    .stream_wait_event = accel__cuda_stream_wait_event,

    .copy_to_device = accel__cuda_copy_to_device,
    .copy_to_host = accel__cuda_copy_to_host,
    .copy_on_device = accel__cuda_copy_on_device,

    .module_load = accel__cuda_module_load,
    .module_unload = accel__cuda_module_unload,
    .kernel_get = accel__cuda_kernel_get,
    .launch = accel__cuda_launch,

    .host_func = accel__cuda_host_func,
    .wait_outside_streams = NULL,
};
