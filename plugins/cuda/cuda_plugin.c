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
 * This file holds the table, the driver's steps of plugin_open (what
 * plugins/common/native_plugin.c calls) and the device descriptions; the
 * devices' contexts, memory, streams, copies and modules live in their own
 * files.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cuda_plugin.h"
#include "device_id.h"

#define CUDA_EXPORT __attribute__((visibility("default")))

/* ---- describing a device ---- */

/* Each limit the props carry, and the attribute that gives it. */
struct cuda_limit {
    acu_CUdevice_attribute attribute;
    size_t offset; /* of a uint32_t in struct accel_device_props */
};

#define CUDA_LIMIT(attribute, field)                                           \
    {                                                                          \
        ACU_CU_DEVICE_ATTRIBUTE_##attribute,                                   \
            offsetof(struct accel_device_props, field)                         \
    }

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
static acu_CUresult cuda_attribute(const struct cuda_symbols *symbols,
                                   acu_CUdevice device,
                                   acu_CUdevice_attribute attribute,
                                   uint32_t *out_value)
{
    int value = 0;
    acu_CUresult result = symbols->cuDeviceGetAttribute(&value, attribute,
                                                        device);

    *out_value = value > 0 ? (uint32_t)value : 0;
    return result;
}

/*
 * Fill a device's props and limits. On failure, the call that failed in
 * *out_call.
 */
/*
 * The device's uuid ("GPU-...", as nvidia-smi -L prints it) and PCI bus
 * id, where the driver has the calls. Neither is needed to run the device:
 * a driver that lacks or refuses them leaves them "".
 */
static void cuda_describe_ids(const struct cuda_symbols *symbols,
                              acu_CUdevice device,
                              struct accel_device_props *props)
{
    acu_CUuuid uuid;
    char bus_id[64];

    if (symbols->cuDeviceGetUuid_v2 != NULL &&
        symbols->cuDeviceGetUuid_v2(&uuid, device) == ACU_CUDA_SUCCESS)
        accel__uuid_format("GPU", (const unsigned char *)uuid.bytes,
                           props->uuid, sizeof(props->uuid));
    if (symbols->cuDeviceGetPCIBusId != NULL &&
        symbols->cuDeviceGetPCIBusId(bus_id, (int)sizeof(bus_id), device) ==
            ACU_CUDA_SUCCESS)
        accel__pci_bus_id_normalize(bus_id, strnlen(bus_id, sizeof(bus_id)),
                                    props->pci_bus_id, sizeof(props->pci_bus_id));
}

static acu_CUresult cuda_describe_device(const struct cuda_symbols *symbols,
                                         struct accel__native_device *physical,
                                         const char **out_call)
{
    struct accel_device_props *props = &physical->props;
    uint32_t major = 0, minor = 0, max_pitch = 0, optin = 0;
    size_t total = 0;
    acu_CUresult result;

    *out_call = "cuDeviceGetName";
    result = symbols->cuDeviceGetName(props->name, (int)sizeof(props->name),
                                      physical->handle);
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
        uint32_t *field = (uint32_t *)(void *)((char *)props +
                                               cuda_limits[i].offset);

        result = cuda_attribute(symbols, physical->handle,
                                cuda_limits[i].attribute, field);
        if (result != ACU_CUDA_SUCCESS)
            return result;
    }
    if ((result = cuda_attribute(symbols, physical->handle,
                                 ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 &major)) != ACU_CUDA_SUCCESS ||
        (result = cuda_attribute(symbols, physical->handle,
                                 ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 &minor)) != ACU_CUDA_SUCCESS ||
        (result = cuda_attribute(symbols, physical->handle,
                                 ACU_CU_DEVICE_ATTRIBUTE_MAX_PITCH,
                                 &max_pitch)) != ACU_CUDA_SUCCESS)
        return result;
    /*
     * A kernel may use more shared memory than the default 48 KiB once it
     * opts in (cuda_module.c): the most a block can have is the opt-in
     * limit. A driver that does not say keeps the default.
     */
    if (cuda_attribute(symbols, physical->handle,
                       ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                       &optin) == ACU_CUDA_SUCCESS &&
        optin > props->max_shared_bytes)
        props->max_shared_bytes = optin;
    /* What bundles pick images by: "sm_90" for compute capability 9.0. */
    snprintf(props->arch, sizeof(props->arch), "sm_%u%u", major, minor);
    props->caps = ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D;
    physical->max_pitch = max_pitch;
    cuda_describe_ids(symbols, physical->handle, props);
    return ACU_CUDA_SUCCESS;
}

/* ---- the vendor steps (see native_plugin.h) ---- */

static void cuda_no_device(accel_drv_plugin *plugin, const char *call, int result)
{
    char described[ACCEL__NATIVE_REASON_MAX / 2];

    accel__cuda_describe(plugin, (acu_CUresult)result, described,
                         sizeof(described));
    accel__native_no_device(plugin, call, described, NULL);
}

/* Load and initialise the driver; without it, the reason and no device. */
static bool cuda_start(accel_drv_plugin *plugin)
{
    acu_CUresult result;

    accel__rtc_init(&plugin->nvrtc);
    accel__cuda_jitlink_init(&plugin->jitlink);
    if (!accel__cuda_symbols_load(&plugin->symbols, plugin->base.services,
                                  plugin->base.no_device_reason,
                                  sizeof(plugin->base.no_device_reason)))
        return false;
    plugin->base.library = &plugin->symbols.library;
    result = plugin->symbols.cuInit(0);
    if (result != ACU_CUDA_SUCCESS) {
        cuda_no_device(plugin, "cuInit", result);
        accel__cuda_symbols_unload(&plugin->symbols, false);
        return false;
    }
    plugin->initialised = true;
    if (plugin->symbols.cuDriverGetVersion(&plugin->base.driver_version) !=
        ACU_CUDA_SUCCESS)
        plugin->base.driver_version = 0;
    return true;
}

static void cuda_stop(accel_drv_plugin *plugin)
{
    accel__rtc_fini(&plugin->nvrtc);
    accel__cuda_jitlink_fini(&plugin->jitlink);
    accel__cuda_symbols_unload(&plugin->symbols, plugin->initialised);
}

static int cuda_count_devices(accel_drv_plugin *plugin, int *out_count,
                              const char **out_call)
{
    *out_call = "cuDeviceGetCount";
    return plugin->symbols.cuDeviceGetCount(out_count);
}

static int cuda_describe_ordinal(accel_drv_plugin *plugin, int ordinal,
                                 struct accel__native_device *out_device,
                                 const char **out_call)
{
    acu_CUresult result;

    *out_call = "cuDeviceGet";
    result = plugin->symbols.cuDeviceGet(&out_device->handle, ordinal);
    if (result == ACU_CUDA_SUCCESS)
        result = cuda_describe_device(&plugin->symbols, out_device, out_call);
    return result;
}

/*
 * The driver's variables that name files or libraries (see the README,
 * "Privileged programs"): removed before the driver is opened under
 * elevated privileges, when the program opts in.
 */
static const char *const cuda_file_variables[] = {
    "CUDA_INJECTION64_PATH",   /* a library the driver loads at cuInit */
    "CUDA_CACHE_PATH",         /* the JIT cache directory it writes */
    "CUDA_LOG_FILE",           /* the error log file it writes */
    "CUDA_COREDUMP_FILE",      /* where a GPU core dump is written */
    "CUDA_COREDUMP_PIPE",      /* the pipe of user-triggered core dumps */
    "CUDA_MPS_PIPE_DIRECTORY", /* where an MPS client finds its pipes */
    NULL,
};

/* What the NVIDIA kernel driver makes when it is loaded, GPU or not in use. */
static const char *const cuda_device_nodes[] = {"/dev/nvidiactl",
                                                "/proc/driver/nvidia", NULL};

static const struct accel__native_vendor cuda_vendor = {
    .name = "cuda",
    .title = "CUDA",
    .library_noun = "driver",
    .plugin_size = sizeof(struct accel_drv_plugin),
    .start = cuda_start,
    .stop = cuda_stop,
    .count_devices = cuda_count_devices,
    .describe_device = cuda_describe_ordinal,
    .no_device = cuda_no_device,
    .file_variables = cuda_file_variables,
    .library_variable = ACCEL_CUDA_LIBRARY_ENV,
    .device_nodes = cuda_device_nodes,
    .device_nodes_variable = "ACCEL_CUDA_DEVICE_NODES",
};

static accel_status cuda_plugin_open(const struct accel_host_services *services,
                                     accel_drv_plugin **out_plugin)
{
    return accel__native_plugin_open(services, &cuda_vendor, out_plugin);
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
    .plugin_close = accel__native_plugin_close,

    .device_count = accel__native_device_count,
    .device_info = accel__native_device_info,
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
    .copy_peer = accel__cuda_copy_peer,

    .module_load = accel__cuda_module_load,
    .module_unload = accel__cuda_module_unload,
    .kernel_get = accel__cuda_kernel_get,
    .launch = accel__cuda_launch,

    .host_func = accel__cuda_host_func,
    .wait_outside_streams = NULL,
    .fill = NULL,
    .event_elapsed = accel__cuda_event_elapsed,
    .module_compile = accel__cuda_module_compile,
    .compiler_identity = accel__cuda_compiler_identity,
    .native_handles = accel__cuda_native_handles,
};
