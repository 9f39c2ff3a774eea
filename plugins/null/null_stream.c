/*
 * Streams, events, copies and launches: the table entries over null_queue.
 * A stream is a queue tracked by its device; an event is a (timeline,
 * value) pair that a record points at the end of a stream's work so far.
 */
#include <stdlib.h>
#include <string.h>

#include "null_fault.h"
#include "null_os.h"
#include "null_check.h"
#include "null_plugin.h"
#include "null_queue.h"

struct accel_drv_stream {
    struct null_list link;
    struct null_queue *queue;
};

struct accel_drv_event {
    struct null_list link;
    /*
     * Guards timeline and value together: a record may race a query or a
     * wait from another thread, which must see both of one record.
     */
    pthread_mutex_t lock;
    struct null_timeline *timeline; /* a reference; NULL until recorded */
    uint64_t value;
    /*
     * When the record was made, and when the event completed (0 until
     * known), on the workers' clock: an event recorded on an idle stream
     * completes at its record, as a GPU's does.
     */
    uint64_t record_ns;
    uint64_t done_ns;
};

static void *null_device_pointer(uint64_t address)
{
    return (void *)(uintptr_t)address;
}

/* ---- streams ---- */

accel_status accel__null_stream_create(accel_drv_device *device,
                                       accel_drv_stream **out_stream)
{
    accel_drv_stream *stream;
    accel_status status;

    *out_stream = NULL;
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_stream_create);
    if (status != ACCEL_OK)
        return status;
    stream = calloc(1, sizeof(*stream));
    if (stream == NULL)
        return null_services(device)->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                                "calloc of a stream failed");
    status = accel__null_queue_create(null_services(device),
                                      device->plugin->delay_ns, &device->lost,
                                      &stream->queue);
    if (status != ACCEL_OK)
        goto fail_free;
    accel__null_device_track(device, &device->streams, &stream->link);
    *out_stream = stream;
    return ACCEL_OK;

fail_free:
    free(stream);
    return status;
}

static void null_stream_free(accel_drv_stream *stream)
{
    accel__null_queue_destroy(stream->queue);
    free(stream);
}

void accel__null_stream_destroy(accel_drv_device *device, accel_drv_stream *stream)
{
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_stream_destroy);
    if (stream == NULL)
        return;
    accel__null_device_untrack(device, &stream->link);
    null_stream_free(stream);
}

/*
 * A sync waits even when it fails (an injected failure, a lost device): the
 * host may free what the stream's work uses as soon as it returns.
 */
accel_status accel__null_stream_sync(accel_drv_device *device,
                                     accel_drv_stream *stream)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_stream_sync);
    accel_status drained = accel__null_queue_sync(stream->queue);

    return status != ACCEL_OK ? status : drained;
}

static void null_stream_free_link(struct null_list *link)
{
    null_stream_free(null_container_of(link, accel_drv_stream, link));
}

uint32_t accel__null_streams_release_all(accel_drv_device *device)
{
    return null_list_drain(&device->streams, null_stream_free_link);
}

/* ---- events ---- */

accel_status accel__null_event_create(accel_drv_device *device,
                                      accel_drv_event **out_event)
{
    accel_drv_event *event;
    accel_status status;
    int rc;

    *out_event = NULL;
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_event_create);
    if (status != ACCEL_OK)
        return status;
    event = calloc(1, sizeof(*event));
    if (event == NULL)
        return null_services(device)->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                                "calloc of an event failed");
    rc = pthread_mutex_init(&event->lock, NULL);
    if (rc != 0)
        goto fail_free;
    accel__null_device_track(device, &device->events, &event->link);
    *out_event = event;
    return ACCEL_OK;

fail_free:
    free(event);
    return null_services(device)->set_error(
        ACCEL_ERR_OUT_OF_HOST_MEMORY,
        "pthread_mutex_init failed for an event: %s", null_errno_name(rc));
}

static void null_event_free(accel_drv_event *event)
{
    accel__null_timeline_release(event->timeline);
    pthread_mutex_destroy(&event->lock);
    free(event);
}

void accel__null_event_destroy(accel_drv_device *device, accel_drv_event *event)
{
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_event_destroy);
    if (event == NULL)
        return;
    accel__null_device_untrack(device, &event->link);
    null_event_free(event);
}

static void null_event_free_link(struct null_list *link)
{
    null_event_free(null_container_of(link, accel_drv_event, link));
}

uint32_t accel__null_events_release_all(accel_drv_device *device)
{
    return null_list_drain(&device->events, null_event_free_link);
}

accel_status accel__null_event_record(accel_drv_device *device,
                                      accel_drv_event *event,
                                      accel_drv_stream *stream)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_event_record);
    struct null_timeline *timeline, *previous;
    uint64_t value;

    if (status != ACCEL_OK)
        return status;
    accel__null_queue_position(stream->queue, &timeline, &value);
    pthread_mutex_lock(&event->lock);
    previous = event->timeline;
    event->timeline = timeline;
    event->value = value;
    event->record_ns = null_now_ns();
    event->done_ns = 0;
    pthread_mutex_unlock(&event->lock);
    accel__null_timeline_release(previous);
    return ACCEL_OK;
}

/* The event's target with a reference for the caller; NULL if unrecorded. */
static struct null_timeline *null_event_target(accel_drv_event *event,
                                               uint64_t *out_value)
{
    struct null_timeline *timeline;

    pthread_mutex_lock(&event->lock);
    timeline = event->timeline;
    *out_value = event->value;
    if (timeline != NULL)
        accel__null_timeline_retain(timeline);
    pthread_mutex_unlock(&event->lock);
    return timeline;
}

/*
 * Learn when a reached event completed while its timeline still keeps the
 * time (event->lock held): a query made soon after keeps it for good.
 */
static void null_event_settle(accel_drv_event *event)
{
    uint64_t ns = 0;

    if (event->done_ns != 0 || event->timeline == NULL ||
        !accel__null_timeline_reached(event->timeline, event->value))
        return;
    if (event->value == 0 ||
        !accel__null_timeline_stamp(event->timeline, event->value, &ns))
        return;
    event->done_ns = ns > event->record_ns ? ns : event->record_ns;
}

accel_status accel__null_event_query(accel_drv_device *device,
                                     accel_drv_event *event)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_event_query);

    if (status != ACCEL_OK)
        return status;
    pthread_mutex_lock(&event->lock);
    if (event->timeline != NULL) {
        status = accel__null_timeline_reached(event->timeline, event->value)
                     ? accel__null_timeline_status(event->timeline, event->value,
                                                   null_services(device))
                     : ACCEL_NOT_READY;
        null_event_settle(event);
    }
    pthread_mutex_unlock(&event->lock);
    return status;
}

/*
 * When a recorded, reached event completed: its cached time; or the time
 * its command completed (or its record, when the stream was idle then).
 */
static accel_status null_event_time(accel_drv_device *device,
                                    accel_drv_event *event, uint64_t *out_ns)
{
    accel_status status = ACCEL_OK;

    pthread_mutex_lock(&event->lock);
    if (event->timeline == NULL) {
        status = null_services(device)->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "event_elapsed: an event was never recorded");
    } else if (!accel__null_timeline_reached(event->timeline, event->value)) {
        status = ACCEL_NOT_READY;
    } else {
        null_event_settle(event);
        /* Nothing was pending at the record: it completed right then. */
        if (event->done_ns == 0 && event->value == 0)
            event->done_ns = event->record_ns;
        if (event->done_ns == 0)
            status = null_services(device)->set_error(
                ACCEL_ERR_NOT_SUPPORTED, "event_elapsed: the event completed "
                                         "more than 1024 commands of its "
                                         "stream ago and was not queried "
                                         "since; its time is no longer kept");
    }
    *out_ns = event->done_ns;
    pthread_mutex_unlock(&event->lock);
    return status;
}

accel_status accel__null_event_elapsed(accel_drv_device *device,
                                       accel_drv_event *start,
                                       accel_drv_event *end, int64_t *out_ns)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_event_elapsed);
    uint64_t start_ns = 0, end_ns = 0;

    *out_ns = 0;
    if (status == ACCEL_OK)
        status = null_event_time(device, start, &start_ns);
    if (status == ACCEL_OK)
        status = null_event_time(device, end, &end_ns);
    if (status == ACCEL_OK)
        *out_ns = (int64_t)(end_ns - start_ns);
    return status;
}

/* Waits even when it fails, as stream_sync does. */
accel_status accel__null_event_sync(accel_drv_device *device,
                                    accel_drv_event *event)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_event_sync);
    struct null_timeline *timeline;
    uint64_t value;

    timeline = null_event_target(event, &value);
    if (timeline == NULL)
        return status;
    accel__null_timeline_wait(timeline, value);
    if (status == ACCEL_OK)
        status = accel__null_timeline_status(timeline, value,
                                             null_services(device));
    accel__null_timeline_release(timeline);
    return status;
}

accel_status accel__null_stream_wait_event(accel_drv_device *device,
                                           accel_drv_stream *stream,
                                           accel_drv_event *event)
{
    struct null_timeline *timeline;
    accel_status status;
    uint64_t value;

    status = accel__null_enter(device->plugin, device,
                               NULL_ENTRY_stream_wait_event);
    if (status != ACCEL_OK)
        return status;
    timeline = null_event_target(event, &value);
    if (timeline == NULL)
        return ACCEL_OK;
    status = accel__null_queue_wait(stream->queue, timeline, value);
    accel__null_timeline_release(timeline);
    return status;
}

/* ---- copies and host functions ---- */

/*
 * The initcheck: the device bytes a copy writes count as written from its
 * enqueueing (a kernel enqueued before it on the stream is then not
 * caught reading them: a miss, never a false report). A pitched layout's
 * whole span is marked, gaps between rows included, for the same reason.
 */
static void null_mark_written(accel_drv_device *device, uint64_t dst,
                              const struct accel_copy_layout *layout)
{
    uint64_t end = layout->dst_offset + layout->row_bytes;

    if (device->plugin->check != NULL_CHECK_INIT)
        return;
    if (layout->rows > 1)
        end += (layout->rows - 1) * layout->dst_pitch;
    if (layout->depth > 1)
        end += (layout->depth - 1) * layout->dst_slice_pitch;
    accel__null_check_mark_written((uintptr_t)dst + layout->dst_offset,
                                   end - layout->dst_offset);
}

accel_status accel__null_copy_to_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        const void *src,
                                        const struct accel_copy_layout *layout)
{
    struct null_copy copy = {
        .dst = null_device_pointer(dst), .src = src, .layout = *layout};
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_copy_to_device);

    if (status != ACCEL_OK)
        return status;
    null_mark_written(device, dst, layout);
    return accel__null_queue_copy(stream->queue, &copy);
}

accel_status accel__null_copy_to_host(accel_drv_device *device,
                                      accel_drv_stream *stream, void *dst,
                                      uint64_t src,
                                      const struct accel_copy_layout *layout)
{
    struct null_copy copy = {
        .dst = dst, .src = null_device_pointer(src), .layout = *layout};
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_copy_to_host);

    if (status != ACCEL_OK)
        return status;
    return accel__null_queue_copy(stream->queue, &copy);
}

accel_status accel__null_copy_on_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        uint64_t src,
                                        const struct accel_copy_layout *layout)
{
    struct null_copy copy = {.dst = null_device_pointer(dst),
                             .src = null_device_pointer(src),
                             .layout = *layout,
                             .may_overlap = true};
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_copy_on_device);

    if (status != ACCEL_OK)
        return status;
    null_mark_written(device, dst, layout);
    return accel__null_queue_copy(stream->queue, &copy);
}

accel_status accel__null_fill(accel_drv_device *device, accel_drv_stream *stream,
                              uint64_t dst, uint64_t bytes, const void *pattern,
                              uint32_t pattern_size)
{
    struct null_copy fill = {.dst = null_device_pointer(dst),
                             .layout = {.row_bytes = bytes, .rows = 1, .depth = 1},
                             .pattern_size = pattern_size};
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_fill);

    if (status != ACCEL_OK)
        return status;
    if (pattern == NULL || pattern_size == 0 ||
        pattern_size > sizeof(fill.pattern) ||
        (pattern_size & (pattern_size - 1)) != 0 || bytes % pattern_size != 0)
        return null_services(device)->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "fill: a pattern of %u bytes over %llu bytes", pattern_size,
            (unsigned long long)bytes);
    memcpy(fill.pattern, pattern, pattern_size);
    null_mark_written(device, dst, &fill.layout);
    return accel__null_queue_copy(stream->queue, &fill);
}

accel_status accel__null_native_handles(accel_drv_device *device,
                                        accel_drv_stream *stream,
                                        struct accel_native_handles *out)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_native_handles);

    if (status != ACCEL_OK)
        return status;
    if (out == NULL || out->struct_size < 2 * sizeof(uint32_t))
        return null_services(device)->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "native_handles: no room for the kind");
    struct accel_native_handles handles = {
        .struct_size = out->struct_size,
        .kind = ACCEL_NATIVE_CPU,
        .device_ordinal = (int32_t)device->index,
        .context = NULL,
        /* The queue is what runs the stream's commands in order. */
        .stream = stream != NULL ? (void *)stream->queue : NULL,
    };
    size_t bytes = out->struct_size < sizeof handles ? out->struct_size
                                                     : sizeof handles;
    memcpy(out, &handles, bytes);
    return ACCEL_OK;
}

accel_status accel__null_host_func(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   void (*fn)(void *user), void *user)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_host_func);

    if (status != ACCEL_OK)
        return status;
    /* Caught here: on the worker, a NULL call would crash far from its cause. */
    if (fn == NULL)
        return null_services(device)->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "host_func: the function is NULL");
    return accel__null_queue_host_func(stream->queue, fn, user);
}

accel_status accel__null_launch(accel_drv_device *device,
                                accel_drv_stream *stream,
                                accel_drv_kernel *kernel,
                                const struct accel_launch_config *config,
                                void *const *args, const size_t *arg_sizes,
                                uint32_t nargs)
{
    accel_drv_plugin *plugin = device->plugin;
    struct null_launch launch;
    accel_status status;

    status = accel__null_enter(plugin, device, NULL_ENTRY_launch);
    if (status != ACCEL_OK)
        return status;
    /*
     * The pool was started by the module load that made the kernel; the
     * acquire pairs with its publication, whichever thread loaded it.
     */
    status = accel__null_launch_prepare(
        plugin->services, &plugin->props, null_kernel_descriptor(kernel),
        atomic_load_explicit(&plugin->pool, memory_order_acquire),
        plugin->stack_bytes, config, args, arg_sizes, nargs, &launch);
    if (status != ACCEL_OK)
        return status;
    launch.check = plugin->check;
    return accel__null_queue_launch(stream->queue, &launch);
}
