/*
 * A minimal complete accel plugin: one device whose memory is host memory,
 * copies, streams and events, no kernels. Start a real plugin from here:
 * replace the memcpy calls with the device's DMA queue and the trivially
 * complete streams and events with the device's own.
 *
 * Built from <accel/driver.h> alone, with every symbol hidden
 * (-fvisibility=hidden) except the table, which ACCEL_DRIVER_EXPORT
 * exports. Check it with: accel-conformance ./accel-plugin-template.so
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <accel/driver.h>

#define TEMPLATE_MEMORY (256ull << 20) /* the device's total_memory */

struct accel_drv_plugin {
    const struct accel_host_services *services;
    _Atomic uint64_t used; /* device memory handed out */
};
struct accel_drv_device {
    accel_drv_plugin *plugin;
};
/* Copies run when they are enqueued: a stream never has work pending,
 * and every event is complete. */
struct accel_drv_stream {
    int unused;
};
struct accel_drv_event {
    int unused;
};

static accel_status template_plugin_open(const struct accel_host_services *services,
                                         accel_drv_plugin **out_plugin)
{
    accel_drv_plugin *plugin = calloc(1, sizeof *plugin);
    if (plugin == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    plugin->services = services;
    /* A 1.1 host says its minor; a 1.0 host's services stop before it. */
    if (ACCEL_HOST_SERVICES_HAS(services, host_minor))
        services->log(ACCEL_LOG_DEBUG, "template: host speaks ABI 1.%u",
                      services->host_minor);
    *out_plugin = plugin;
    return ACCEL_OK;
}

static void template_plugin_close(accel_drv_plugin *plugin)
{
    free(plugin);
}

static accel_status template_device_count(accel_drv_plugin *plugin,
                                          uint32_t *out_count,
                                          const char **out_reason)
{
    (void)plugin;
    *out_count = 1;
    *out_reason = NULL;
    return ACCEL_OK;
}

static accel_status template_device_info(accel_drv_plugin *plugin, uint32_t index,
                                         struct accel_device_props *out_props)
{
    if (index != 0)
        return plugin->services->set_error(ACCEL_ERR_NO_DEVICE,
                                           "template: no device %u", index);
    memset(out_props, 0, sizeof *out_props);
    strcpy(out_props->name, "template device");
    strcpy(out_props->arch, "template");
    out_props->total_memory = TEMPLATE_MEMORY;
    out_props->compute_units = 1;
    out_props->caps = ACCEL_DEVICE_CAP_HOST_VISIBLE | ACCEL_DEVICE_CAP_COPY_3D;
    return ACCEL_OK;
}

static accel_status template_device_open(accel_drv_plugin *plugin, uint32_t index,
                                         accel_drv_device **out_device)
{
    if (index != 0)
        return plugin->services->set_error(ACCEL_ERR_NO_DEVICE,
                                           "template: no device %u", index);
    accel_drv_device *device = calloc(1, sizeof *device);
    if (device == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    device->plugin = plugin;
    *out_device = device;
    return ACCEL_OK;
}

static void template_device_close(accel_drv_device *device)
{
    free(device);
}

static accel_status template_device_status(accel_drv_device *device)
{
    (void)device;
    return ACCEL_OK;
}

/* The host frees every allocation before a reset; nothing else to rebuild. */
static accel_status template_device_reset(accel_drv_device *device)
{
    (void)device;
    return ACCEL_OK;
}

static accel_status template_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                       accel_drv_mem **out_mem,
                                       uint64_t *out_address)
{
    accel_drv_plugin *plugin = device->plugin;
    uint64_t used = atomic_fetch_add(&plugin->used, bytes);
    if (bytes > TEMPLATE_MEMORY || used > TEMPLATE_MEMORY - bytes) {
        atomic_fetch_sub(&plugin->used, bytes);
        return plugin->services->set_error(
            ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
            "template: %llu bytes do not fit beside %llu in use",
            (unsigned long long)bytes, (unsigned long long)used);
    }
    /* The block's size sits in the first alignment unit, for mem_free. */
    size_t rounded = ((size_t)bytes + ACCEL_DRIVER_MEM_ALIGNMENT - 1) &
                     ~(size_t)(ACCEL_DRIVER_MEM_ALIGNMENT - 1);
    unsigned char *block = aligned_alloc(ACCEL_DRIVER_MEM_ALIGNMENT,
                                         rounded + ACCEL_DRIVER_MEM_ALIGNMENT);
    if (block == NULL) {
        atomic_fetch_sub(&plugin->used, bytes);
        return plugin->services->set_error(
            ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
            "template: aligned_alloc(%zu) failed", rounded);
    }
    memcpy(block, &bytes, sizeof bytes);
    *out_mem = (accel_drv_mem *)block;
    *out_address = (uint64_t)(uintptr_t)(block + ACCEL_DRIVER_MEM_ALIGNMENT);
    return ACCEL_OK;
}

static void template_mem_free(accel_drv_device *device, accel_drv_mem *mem)
{
    uint64_t bytes;
    memcpy(&bytes, mem, sizeof bytes);
    atomic_fetch_sub(&device->plugin->used, bytes);
    free(mem);
}

static accel_status template_host_alloc(accel_drv_device *device, size_t bytes,
                                        void **out_ptr)
{
    void *ptr = malloc(bytes);
    if (ptr == NULL)
        return device->plugin->services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "template: malloc(%zu) failed", bytes);
    *out_ptr = ptr;
    return ACCEL_OK;
}

static void template_host_free(accel_drv_device *device, void *ptr)
{
    (void)device;
    free(ptr);
}

static accel_status template_stream_create(accel_drv_device *device,
                                           accel_drv_stream **out_stream)
{
    (void)device;
    *out_stream = calloc(1, sizeof **out_stream);
    return *out_stream != NULL ? ACCEL_OK : ACCEL_ERR_OUT_OF_HOST_MEMORY;
}

static void template_stream_destroy(accel_drv_device *device,
                                    accel_drv_stream *stream)
{
    (void)device;
    free(stream);
}

static accel_status template_stream_sync(accel_drv_device *device,
                                         accel_drv_stream *stream)
{
    (void)device;
    (void)stream;
    return ACCEL_OK;
}

static accel_status template_event_create(accel_drv_device *device,
                                          accel_drv_event **out_event)
{
    (void)device;
    *out_event = calloc(1, sizeof **out_event);
    return *out_event != NULL ? ACCEL_OK : ACCEL_ERR_OUT_OF_HOST_MEMORY;
}

static void template_event_destroy(accel_drv_device *device,
                                   accel_drv_event *event)
{
    (void)device;
    free(event);
}

static accel_status template_event_record(accel_drv_device *device,
                                          accel_drv_event *event,
                                          accel_drv_stream *stream)
{
    (void)device;
    (void)event;
    (void)stream;
    return ACCEL_OK;
}

/* event_query and event_sync: the work before an event is always done. */
static accel_status template_event_done(accel_drv_device *device,
                                        accel_drv_event *event)
{
    (void)device;
    (void)event;
    return ACCEL_OK;
}

static accel_status template_stream_wait_event(accel_drv_device *device,
                                               accel_drv_stream *stream,
                                               accel_drv_event *event)
{
    (void)device;
    (void)stream;
    (void)event;
    return ACCEL_OK;
}

/* Every row of every slice of a layout (see struct accel_copy_layout). */
static void copy_layout(unsigned char *dst, const unsigned char *src,
                        const struct accel_copy_layout *l)
{
    for (uint64_t s = 0; s < l->depth; s++) {
        for (uint64_t r = 0; r < l->rows; r++)
            memcpy(
                dst + l->dst_offset + s * l->dst_slice_pitch + r * l->dst_pitch,
                src + l->src_offset + s * l->src_slice_pitch + r * l->src_pitch,
                (size_t)l->row_bytes);
    }
}

static accel_status template_copy_to_device(accel_drv_device *device,
                                            accel_drv_stream *stream,
                                            uint64_t dst, const void *src,
                                            const struct accel_copy_layout *layout)
{
    (void)device;
    (void)stream;
    copy_layout((unsigned char *)(uintptr_t)dst, src, layout);
    return ACCEL_OK;
}

static accel_status template_copy_to_host(accel_drv_device *device,
                                          accel_drv_stream *stream, void *dst,
                                          uint64_t src,
                                          const struct accel_copy_layout *layout)
{
    (void)device;
    (void)stream;
    copy_layout(dst, (const unsigned char *)(uintptr_t)src, layout);
    return ACCEL_OK;
}

static accel_status template_copy_on_device(accel_drv_device *device,
                                            accel_drv_stream *stream,
                                            uint64_t dst, uint64_t src,
                                            const struct accel_copy_layout *layout)
{
    (void)device;
    (void)stream;
    copy_layout((unsigned char *)(uintptr_t)dst,
                (const unsigned char *)(uintptr_t)src, layout);
    return ACCEL_OK;
}

/* Nothing is pending when it is called: the function runs at once. */
static accel_status template_host_func(accel_drv_device *device,
                                       accel_drv_stream *stream,
                                       void (*fn)(void *user), void *user)
{
    (void)device;
    (void)stream;
    fn(user);
    return ACCEL_OK;
}

ACCEL_DRIVER_EXPORT const struct accel_driver_v1 accel_driver_v1 = {
    .struct_size = sizeof(struct accel_driver_v1),
    .abi_major = ACCEL_DRIVER_ABI_MAJOR,
    .abi_minor = ACCEL_DRIVER_ABI_MINOR,
    .name = "template", /* the file is accel-plugin-template.so */
    .version = "0.1",
    .priority = -10, /* an example device: below the CPU plugin */
    .plugin_open = template_plugin_open,
    .plugin_close = template_plugin_close,
    .device_count = template_device_count,
    .device_info = template_device_info,
    .device_open = template_device_open,
    .device_close = template_device_close,
    .device_status = template_device_status,
    .device_reset = template_device_reset,
    .mem_alloc = template_mem_alloc,
    .mem_free = template_mem_free,
    .host_alloc = template_host_alloc,
    .host_free = template_host_free,
    .stream_create = template_stream_create,
    .stream_destroy = template_stream_destroy,
    .stream_sync = template_stream_sync,
    .event_create = template_event_create,
    .event_destroy = template_event_destroy,
    .event_record = template_event_record,
    .event_query = template_event_done,
    .event_sync = template_event_done,
    .stream_wait_event = template_stream_wait_event,
    .copy_to_device = template_copy_to_device,
    .copy_to_host = template_copy_to_host,
    .copy_on_device = template_copy_on_device,
    /* No kernels: module_load, module_unload, kernel_get and launch NULL. */
    .host_func = template_host_func,
};
