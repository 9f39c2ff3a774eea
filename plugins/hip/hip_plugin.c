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
 * This file holds the table, the runtime's steps of plugin_open (what
 * plugins/common/native_plugin.c calls) and the device descriptions; the
 * devices, memory, streams, copies and modules live in their own files.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "device_id.h"
#include "hip_plugin.h"

#define HIP_EXPORT __attribute__((visibility("default")))

/* ---- describing a device ---- */

/* Each limit the props carry, and the attribute that gives it. */
struct hip_limit {
    ahip_hipDeviceAttribute_t attribute;
    size_t offset; /* of a uint32_t in struct accel_device_props */
};

#define HIP_LIMIT(attribute, field)                                            \
    {                                                                          \
        AHIP_hipDeviceAttribute##attribute,                                    \
            offsetof(struct accel_device_props, field)                         \
    }

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
static ahip_hipError_t hip_attribute(const struct hip_symbols *symbols,
                                     int ordinal,
                                     ahip_hipDeviceAttribute_t attribute,
                                     uint32_t *out_value)
{
    int value = 0;
    ahip_hipError_t result = symbols->hipDeviceGetAttribute(&value, attribute,
                                                            ordinal);

    *out_value = value > 0 ? (uint32_t)value : 0;
    return result;
}

/*
 * The device's target ("gfx90a:sramecc+:xnack-") from hipDeviceProp_t, in
 * the layout of whichever call the runtime has (see hip_api.h); the base
 * processor ("gfx90a") is what bundles pick images by.
 */
static ahip_hipError_t hip_device_arch(const struct hip_symbols *symbols,
                                       int ordinal, char *out_arch, size_t size,
                                       char *out_target, size_t target_size,
                                       const char **out_call)
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
        result = symbols->hipGetDeviceProperties(
            (ahip_hipDeviceProp_tR0000 *)(void *)properties, ordinal);
    }
    if (result != AHIP_hipSuccess)
        return result;
    memcpy(target, properties + offset, sizeof(target));
    target[sizeof(target) - 1] = '\0';
    /* Bounded copy: gcnArchName's buffer is longer than any target ID. */
    if (target_size != 0) {
        size_t length = strnlen(target, target_size - 1);

        memcpy(out_target, target, length);
        out_target[length] = '\0';
    }
    accel__hip_target_processor(target, out_arch, size);
    /* A target that is not "gfxN..." is shown as the runtime gave it. */
    if (out_arch[0] == '\0')
        snprintf(out_arch, size, "%s", target[0] != '\0' ? target : "amdgcn");
    return AHIP_hipSuccess;
}

/*
 * The device's uuid ("GPU-" and ROCm's unique id) and PCI bus id, where the
 * runtime has the calls. Neither is needed to run the device: a runtime
 * that lacks or refuses them leaves them "".
 */
static void hip_describe_ids(const struct hip_symbols *symbols, int device,
                             struct accel_device_props *props)
{
    ahip_hipUUID uuid;
    char bus_id[64];

    if (symbols->hipDeviceGetUuid != NULL &&
        symbols->hipDeviceGetUuid(&uuid, device) == AHIP_hipSuccess)
        accel__uuid_format("GPU", (const unsigned char *)uuid.bytes,
                           props->uuid, sizeof(props->uuid));
    if (symbols->hipDeviceGetPCIBusId != NULL &&
        symbols->hipDeviceGetPCIBusId(bus_id, (int)sizeof(bus_id), device) ==
            AHIP_hipSuccess)
        accel__pci_bus_id_normalize(bus_id, strnlen(bus_id, sizeof(bus_id)),
                                    props->pci_bus_id, sizeof(props->pci_bus_id));
}

/*
 * Fill a device's props and limits. On failure, the call that failed in
 * *out_call.
 */
static ahip_hipError_t hip_describe_device(const struct hip_symbols *symbols,
                                           struct accel__native_device *physical,
                                           char *out_target, size_t target_size,
                                           const char **out_call)
{
    struct accel_device_props *props = &physical->props;
    uint32_t max_pitch = 0;
    size_t total = 0;
    ahip_hipError_t result;

    *out_call = "hipDeviceGetName";
    result = symbols->hipDeviceGetName(props->name, (int)sizeof(props->name),
                                       physical->handle);
    if (result != AHIP_hipSuccess)
        return result;
    props->name[sizeof(props->name) - 1] = '\0';
    *out_call = "hipDeviceTotalMem";
    result = symbols->hipDeviceTotalMem(&total, physical->handle);
    if (result != AHIP_hipSuccess)
        return result;
    props->total_memory = total;
    *out_call = "hipDeviceGetAttribute";
    for (size_t i = 0; i < sizeof(hip_limits) / sizeof(hip_limits[0]); i++) {
        uint32_t *field = (uint32_t *)(void *)((char *)props +
                                               hip_limits[i].offset);

        result = hip_attribute(symbols, physical->handle,
                               hip_limits[i].attribute, field);
        if (result != AHIP_hipSuccess)
            return result;
    }
    result = hip_attribute(symbols, physical->handle,
                           AHIP_hipDeviceAttributeMaxPitch, &max_pitch);
    if (result != AHIP_hipSuccess)
        return result;
    result = hip_device_arch(symbols, physical->handle, props->arch,
                             sizeof(props->arch), out_target, target_size,
                             out_call);
    if (result != AHIP_hipSuccess)
        return result;
    props->caps = ACCEL_DEVICE_CAP_KERNELS | ACCEL_DEVICE_CAP_COPY_3D;
    physical->max_pitch = max_pitch;
    hip_describe_ids(symbols, physical->handle, props);
    return AHIP_hipSuccess;
}

/* ---- the vendor steps (see native_plugin.h) ---- */

/* Say why there is no device: `what` failed with `result`, and `more` if not NULL. */
static void hip_no_device_more(accel_drv_plugin *plugin, const char *what,
                               ahip_hipError_t result, const char *more)
{
    char described[ACCEL__NATIVE_REASON_MAX / 3];

    accel__hip_describe(plugin, result, described, sizeof(described));
    accel__native_no_device(plugin, what, described, more);
}

static void hip_no_device(accel_drv_plugin *plugin, const char *call, int result)
{
    hip_no_device_more(plugin, call, (ahip_hipError_t)result, NULL);
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
    hip_no_device_more(plugin, "hipInit", result,
                       counted[0] != '\0' ? counted : NULL);
}

/* Load and initialise the runtime; without it, the reason and no device. */
static bool hip_start(accel_drv_plugin *plugin)
{
    ahip_hipError_t result;

    accel__rtc_init(&plugin->hiprtc);
    if (!accel__hip_symbols_load(&plugin->symbols, plugin->base.services,
                                 plugin->base.no_device_reason,
                                 sizeof(plugin->base.no_device_reason)))
        return false;
    plugin->base.library = &plugin->symbols.library;
    /*
     * From here the runtime stays mapped, even when hipInit fails: it may
     * have started the HSA runtime's threads and registered exit handlers.
     */
    plugin->init_called = true;
    result = plugin->symbols.hipInit(0);
    if (result != AHIP_hipSuccess) {
        hip_init_failed(plugin, result);
        return false;
    }
    if (plugin->symbols.hipDriverGetVersion(&plugin->base.driver_version) !=
        AHIP_hipSuccess)
        plugin->base.driver_version = 0;
    return true;
}

static void hip_stop(accel_drv_plugin *plugin)
{
    accel__rtc_fini(&plugin->hiprtc);
    accel__hip_symbols_unload(&plugin->symbols, plugin->init_called);
}

static int hip_count_devices(accel_drv_plugin *plugin, int *out_count,
                             const char **out_call)
{
    *out_call = "hipGetDeviceCount";
    return plugin->symbols.hipGetDeviceCount(out_count);
}

static int hip_describe_ordinal(accel_drv_plugin *plugin, int ordinal,
                                struct accel__native_device *out_device,
                                const char **out_call)
{
    char unlisted[sizeof(plugin->targets[0])];
    char *target = ordinal >= 0 && (uint32_t)ordinal < ACCEL__NATIVE_DEVICES_MAX
                       ? plugin->targets[ordinal]
                       : unlisted;

    out_device->handle = ordinal;
    return hip_describe_device(&plugin->symbols, out_device, target,
                               sizeof(unlisted), out_call);
}

/*
 * The runtime's variables that name files or libraries (see the README,
 * "Privileged programs"): removed before the runtime is opened under
 * elevated privileges, when the program opts in.
 */
static const char *const hip_file_variables[] = {
    "AMD_LOG_LEVEL_FILE",      /* the log file the HIP runtime writes */
    "HSA_TOOLS_LIB",           /* libraries ROCr loads as tools */
    "ROCP_TOOL_LIBRARIES",     /* libraries rocprofiler-register loads */
    "AMD_COMGR_REDIRECT_LOGS", /* a file the code object manager logs to */
    NULL,
};

/* What the amdgpu kernel driver makes for ROCm's compute interface. */
static const char *const hip_device_nodes[] = {"/dev/kfd", NULL};

static const struct accel__native_vendor hip_vendor = {
    .name = "hip",
    .title = "HIP",
    .library_noun = "runtime",
    .plugin_size = sizeof(struct accel_drv_plugin),
    .start = hip_start,
    .stop = hip_stop,
    .count_devices = hip_count_devices,
    .describe_device = hip_describe_ordinal,
    .no_device = hip_no_device,
    .file_variables = hip_file_variables,
    .library_variable = ACCEL_HIP_LIBRARY_ENV,
    .device_nodes = hip_device_nodes,
    .device_nodes_variable = "ACCEL_HIP_DEVICE_NODES",
};

static accel_status hip_plugin_open(const struct accel_host_services *services,
                                    accel_drv_plugin **out_plugin)
{
    return accel__native_plugin_open(services, &hip_vendor, out_plugin);
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
    .plugin_close = accel__native_plugin_close,

    .device_count = accel__native_device_count,
    .device_info = accel__native_device_info,
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
    .copy_peer = accel__hip_copy_peer,

    .module_load = accel__hip_module_load,
    .module_unload = accel__hip_module_unload,
    .kernel_get = accel__hip_kernel_get,
    .launch = accel__hip_launch,

    .host_func = accel__hip_host_func,
    .wait_outside_streams = NULL,
    .fill = NULL,
    .event_elapsed = accel__hip_event_elapsed,
    .module_compile = accel__hip_module_compile,
    .compiler_identity = accel__hip_compiler_identity,
    .native_handles = accel__hip_native_handles,
};
