/*
 * accel-plugin-null: the CPU backend. Its devices are the machine itself:
 * device memory is host memory, streams are in-order queues run by worker
 * threads, events mark points in those queues. It needs no hardware and no
 * vendor library, so every program and test can run anywhere.
 *
 * Environment (read through the host's services->getenv, so ignored in
 * setuid programs):
 *
 *   ACCEL_NULL_DEVICES  How many devices to report: a whole number from 0
 *                       to 64; 1 when unset. Anything else reports no
 *                       device, with the reason, so that a typo is seen
 *                       rather than silently replaced by a default.
 *
 * This file holds the table, the plugin and the devices; memory, streams
 * and the queue live in their own files.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "null_os.h"
#include "null_plugin.h"

#define NULL_DEVICES_ENV "ACCEL_NULL_DEVICES"
/* How much of a bad ACCEL_NULL_DEVICES value a reason quotes. */
#define NULL_REASON_QUOTE_MAX 40

/* ---- the machine, as a device ---- */

/* Limits a CUDA programmer expects, so that kernels port unchanged. */
static void null_props_set_limits(struct accel_device_props *props)
{
    props->max_threads_per_block = 1024;
    props->max_block_dim[0] = 1024;
    props->max_block_dim[1] = 1024;
    props->max_block_dim[2] = 64;
    props->max_grid_dim[0] = 2147483647u;
    props->max_grid_dim[1] = 65535;
    props->max_grid_dim[2] = 65535;
    props->max_shared_bytes = 48u * 1024u;
}

/*
 * Fill the props every device shares from the machine: its architecture,
 * memory and cores. False, with the reason set, when the system will not
 * say how much memory there is: such a device could not answer mem_alloc.
 */
static bool null_describe_machine(accel_drv_plugin *plugin)
{
    struct accel_device_props *props = &plugin->props;
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct utsname machine;

    if (pages <= 0 || page_size <= 0) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "sysconf(_SC_PHYS_PAGES) does not give the machine's memory");
        return false;
    }
    props->total_memory = (uint64_t)pages * (uint64_t)page_size;
    props->compute_units = cpus > 0 ? (uint32_t)cpus : 1;
    if (uname(&machine) == 0)
        snprintf(props->arch, sizeof(props->arch), "%.*s",
                 (int)sizeof(props->arch) - 1, machine.machine);
    else
        snprintf(props->arch, sizeof(props->arch), "cpu");
    props->caps = ACCEL_DEVICE_CAP_HOST_VISIBLE | ACCEL_DEVICE_CAP_COPY_3D;
    null_props_set_limits(props);
    return true;
}

/* A whole number from 0 to NULL_DEVICES_MAX, digits only; false otherwise. */
static bool null_parse_device_count(const char *text, uint32_t *out_count)
{
    uint32_t count = 0;

    *out_count = 0;
    if (*text == '\0')
        return false;
    for (const char *c = text; *c != '\0'; c++) {
        if (*c < '0' || *c > '9')
            return false;
        count = count * 10 + (uint32_t)(*c - '0');
        /* Stopping here also keeps a long string of digits from overflowing. */
        if (count > NULL_DEVICES_MAX)
            return false;
    }
    *out_count = count;
    return true;
}

static void null_read_device_count(accel_drv_plugin *plugin)
{
    const char *text = plugin->services->getenv(NULL_DEVICES_ENV);
    uint32_t count;

    if (text == NULL) {
        plugin->device_count = 1;
        return;
    }
    if (!null_parse_device_count(text, &count)) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 NULL_DEVICES_ENV "='%.*s%s' is not a whole number from 0 to %u",
                 NULL_REASON_QUOTE_MAX, text,
                 strlen(text) > NULL_REASON_QUOTE_MAX ? "..." : "", NULL_DEVICES_MAX);
        return;
    }
    if (count == 0)
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 NULL_DEVICES_ENV "=0");
    plugin->device_count = count;
}

/* ---- plugin ---- */

static accel_status null_plugin_open(const struct accel_host_services *services,
                                     accel_drv_plugin **out_plugin)
{
    accel_drv_plugin *plugin;

    *out_plugin = NULL;
    /* Without the version 1 services there is no way even to say why. */
    if (services == NULL || services->struct_size < sizeof(struct accel_host_services))
        return ACCEL_ERR_INVALID_ARGUMENT;
    plugin = calloc(1, sizeof(*plugin));
    if (plugin == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of the null plugin failed");
    plugin->services = services;
    if (null_describe_machine(plugin))
        null_read_device_count(plugin);
    services->log(ACCEL_LOG_DEBUG, "%u CPU device(s)%s%s", plugin->device_count,
                  plugin->device_count == 0 ? ": " : "", plugin->no_device_reason);
    *out_plugin = plugin;
    return ACCEL_OK;
}

static void null_plugin_close(accel_drv_plugin *plugin)
{
    free(plugin);
}

/* ---- devices ---- */

static accel_status null_device_count(accel_drv_plugin *plugin, uint32_t *out_count,
                                      const char **out_reason)
{
    *out_count = plugin->device_count;
    *out_reason = plugin->device_count == 0 ? plugin->no_device_reason : NULL;
    return ACCEL_OK;
}

static accel_status null_check_index(accel_drv_plugin *plugin, const char *entry,
                                     uint32_t index)
{
    if (index < plugin->device_count)
        return ACCEL_OK;
    return plugin->services->set_error(ACCEL_ERR_NO_DEVICE,
                                       "%s: no device %u; the null plugin has %u",
                                       entry, index, plugin->device_count);
}

static accel_status null_device_info(accel_drv_plugin *plugin, uint32_t index,
                                     struct accel_device_props *out_props)
{
    accel_status status;

    memset(out_props, 0, sizeof(*out_props));
    status = null_check_index(plugin, "device_info", index);
    if (status != ACCEL_OK)
        return status;
    *out_props = plugin->props;
    snprintf(out_props->name, sizeof(out_props->name), "accel CPU device %u", index);
    return ACCEL_OK;
}

static accel_status null_device_open(accel_drv_plugin *plugin, uint32_t index,
                                     accel_drv_device **out_device)
{
    accel_drv_device *device;
    accel_status status;
    int rc;

    *out_device = NULL;
    status = null_check_index(plugin, "device_open", index);
    if (status != ACCEL_OK)
        return status;
    device = calloc(1, sizeof(*device));
    if (device == NULL)
        return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                           "calloc of a device failed");
    rc = pthread_mutex_init(&device->lock, NULL);
    if (rc != 0)
        goto fail_free;
    device->plugin = plugin;
    device->index = index;
    null_list_init(&device->mems);
    null_list_init(&device->host_blocks);
    null_list_init(&device->streams);
    null_list_init(&device->events);
    *out_device = device;
    return ACCEL_OK;

fail_free:
    free(device);
    return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                       "pthread_mutex_init failed for a device: %s",
                                       null_errno_name(rc));
}

static void null_device_close(accel_drv_device *device)
{
    uint32_t left;

    if (device == NULL)
        return;
    /* Streams first: their workers may still be touching memory. */
    left = accel__null_streams_release_all(device);
    left += accel__null_events_release_all(device);
    left += accel__null_memory_release_all(device);
    if (left != 0)
        null_services(device)->log(ACCEL_LOG_DEBUG,
                                   "device_close: freed %u object(s) the host left on "
                                   "device %u", left, device->index);
    pthread_mutex_destroy(&device->lock);
    free(device);
}

static accel_status null_device_status(accel_drv_device *device)
{
    (void)device;
    return ACCEL_OK;
}

/* The machine cannot be lost, so a reset has nothing to rebuild. */
static accel_status null_device_reset(accel_drv_device *device)
{
    (void)device;
    return ACCEL_OK;
}

void accel__null_device_track(accel_drv_device *device, struct null_list *list,
                              struct null_list *link)
{
    pthread_mutex_lock(&device->lock);
    null_list_insert(list, link);
    pthread_mutex_unlock(&device->lock);
}

void accel__null_device_untrack(accel_drv_device *device, struct null_list *link)
{
    pthread_mutex_lock(&device->lock);
    null_list_remove(link);
    pthread_mutex_unlock(&device->lock);
}

/* ---- kernels: not yet ---- */

static accel_status null_kernels_not_supported(accel_drv_device *device)
{
    return null_services(device)->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                            "the null plugin does not run kernels yet");
}

static accel_status null_module_load(accel_drv_device *device, const void *image,
                                     size_t size, accel_drv_module **out_module)
{
    (void)image;
    (void)size;
    *out_module = NULL;
    return null_kernels_not_supported(device);
}

static void null_module_unload(accel_drv_device *device, accel_drv_module *module)
{
    (void)device;
    (void)module;
}

static accel_status null_kernel_get(accel_drv_device *device, accel_drv_module *module,
                                    const char *name, accel_drv_kernel **out_kernel,
                                    struct accel_kernel_signature *out_signature)
{
    (void)module;
    (void)name;
    (void)out_signature;
    *out_kernel = NULL;
    return null_kernels_not_supported(device);
}

static accel_status null_launch(accel_drv_device *device, accel_drv_stream *stream,
                                accel_drv_kernel *kernel,
                                const struct accel_launch_config *config,
                                void *const *args, const size_t *arg_sizes,
                                uint32_t nargs)
{
    (void)stream;
    (void)kernel;
    (void)config;
    (void)args;
    (void)arg_sizes;
    (void)nargs;
    return null_kernels_not_supported(device);
}

/* ---- the table ---- */

extern NULL_EXPORT const struct accel_driver_v1 accel_driver_v1;

const struct accel_driver_v1 accel_driver_v1 = {
    .struct_size = sizeof(struct accel_driver_v1),
    .abi_major = ACCEL_DRIVER_ABI_MAJOR,
    .abi_minor = ACCEL_DRIVER_ABI_MINOR,
    .name = "null",
    .version = "0.1.0",
    .priority = 0,

    .plugin_open = null_plugin_open,
    .plugin_close = null_plugin_close,

    .device_count = null_device_count,
    .device_info = null_device_info,
    .device_open = null_device_open,
    .device_close = null_device_close,
    .device_status = null_device_status,
    .device_reset = null_device_reset,

    .mem_alloc = accel__null_mem_alloc,
    .mem_free = accel__null_mem_free,
    .host_alloc = accel__null_host_alloc,
    .host_free = accel__null_host_free,

    .stream_create = accel__null_stream_create,
    .stream_destroy = accel__null_stream_destroy,
    .stream_sync = accel__null_stream_sync,

    .event_create = accel__null_event_create,
    .event_destroy = accel__null_event_destroy,
    .event_record = accel__null_event_record,
    .event_query = accel__null_event_query,
    .event_sync = accel__null_event_sync,
    .stream_wait_event = accel__null_stream_wait_event,

    .copy_to_device = accel__null_copy_to_device,
    .copy_to_host = accel__null_copy_to_host,
    .copy_on_device = accel__null_copy_on_device,

    .module_load = null_module_load,
    .module_unload = null_module_unload,
    .kernel_get = null_kernel_get,
    .launch = null_launch,

    .host_func = accel__null_host_func,
    .wait_outside_streams = NULL,
};
