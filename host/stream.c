/*
 * Streams, events and pinned host memory.
 *
 * The host keeps its own handle for each plugin stream and event so that a
 * reset can drop the plugin's objects and make new ones behind the same
 * handles: an application's streams survive a device reset. Recording an
 * event and waiting on one only enqueue work: they hold the device lock,
 * as every submission does. Syncs run without the lock, on plugin objects
 * borrowed under it, so that a reset (one the host makes by itself after
 * a loss too) waits until they are given back.
 */
#include <stdlib.h>
#include <string.h>

#include "completion.h"
#include "device.h"
#include "drop.h"
#include "host.h"
#include "recovery.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/* The lowest free lane of 0..62, or the shared lane 63. */
static uint32_t lane_take(accel_device *device)
{
    uint64_t free_lanes = ~device->queues.lanes_taken &
                          ((1ull << (ACCEL__LANES - 1)) - 1);
    if (free_lanes == 0)
        return ACCEL__LANES - 1;
    uint32_t lane = (uint32_t)__builtin_ctzll(free_lanes);
    device->queues.lanes_taken |= 1ull << lane;
    return lane;
}

static void lane_give(accel_device *device, uint32_t lane)
{
    if (lane < ACCEL__LANES - 1)
        device->queues.lanes_taken &= ~(1ull << lane);
}

static accel_status stream_create_untraced(accel_device *device,
                                           accel_stream **out_stream)
{
    if (out_stream != NULL)
        *out_stream = NULL;
    if (device == NULL || out_stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_stream_create: NULL argument");
    if (accel__process_check(device->pid, "accel_stream_create") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_stream");
    stream->device = device;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK) {
        status = ACCEL__DRV_CALL(device, stream_create, &stream->drv);
        /* A relocation may still be writing the places refs now resolve to;
         * the older streams wait for it, and so must this one. */
        if (status == ACCEL_OK && device->own.relocated != NULL)
            status = ACCEL__DRV_CALL(device, stream_wait_event, stream->drv,
                                     device->own.relocated);
        if (status != ACCEL_OK && stream->drv != NULL)
            device->drv->stream_destroy(device->drv_device, stream->drv);
        status = accel__device_check_loss(device, status);
    }
    if (status == ACCEL_OK) {
        stream->lane = lane_take(device);
        stream->next = device->queues.list;
        device->queues.list = stream;
        *out_stream = stream;
    }
    pthread_mutex_unlock(&device->lock);
    if (status != ACCEL_OK)
        free(stream);
    return status;
}

accel_status accel_stream_create(accel_device *device, accel_stream **out_stream)
{
    uint64_t traced = accel__trace_now();
    accel_status status = stream_create_untraced(device, out_stream);
    return accel__trace_end("accel_stream_create", traced, status, 0);
}

static void stream_destroy_untraced(accel_stream *stream)
{
    /* A fork's child leaves the parent's stream alone: its worker is not
     * there to finish the work a destroy waits for. */
    if (stream == NULL || stream->device->pid != accel__pid)
        return;
    accel_device *device = stream->device;
    /* Wait for the stream's work without the lock, so that other threads go
     * on meanwhile; the plugin's sync under the lock, which its
     * stream_destroy rule needs, is then cheap. */
    accel_stream_sync(stream);
    pthread_mutex_lock(&device->lock);
    for (accel_stream **p = &device->queues.list; *p != NULL; p = &(*p)->next) {
        if (*p == stream) {
            *p = stream->next;
            break;
        }
    }
    if (stream->drv != NULL) {
        device->drv->stream_sync(device->drv_device, stream->drv);
        device->drv->stream_destroy(device->drv_device, stream->drv);
    }
    /* Callbacks still queued keep the counter as long as they need it. */
    struct accel__cb_point own = {.counter = stream->callbacks};
    accel__cb_point_release(&device->completion, &own);
    /* A later stream may take the lane: the fences of refs this stream used
     * would then be recorded there, later than needed but never too early. */
    lane_give(device, stream->lane);
    accel__drop_collect(device, false);
    accel__device_unlock(device);
    free(stream);
}

void accel_stream_destroy(accel_stream *stream)
{
    uint64_t traced = accel__trace_now();
    stream_destroy_untraced(stream);
    accel__trace_end("accel_stream_destroy", traced, ACCEL_OK, 0);
}

/*
 * Borrow the plugin objects behind a stream and an event (either may be
 * NULL) for a call made without the lock, and the point after the
 * callbacks enqueued before now (the stream's) or before the event's
 * record. Fails when the device's reset has dropped them and not made new
 * ones.
 */
static accel_status borrow(accel_device *device, const accel_stream *stream,
                           const accel_event *event, const char *what,
                           accel_drv_stream **out_stream,
                           accel_drv_event **out_event,
                           struct accel__cb_point *out_callbacks)
{
    *out_callbacks = (struct accel__cb_point){0};
    pthread_mutex_lock(&device->lock);
    /* Not during a reset: it would wait for this borrow, and new ones could
     * keep it waiting for ever. A lost device's objects are still synced:
     * its queues drain before the host may free what they use. */
    accel__device_reset_wait(device);
    accel_status status = ACCEL_OK;
    if ((stream != NULL && stream->drv == NULL) ||
        (event != NULL && event->drv == NULL)) {
        status = accel__device_gone(device, what);
    } else {
        *out_stream = stream != NULL ? stream->drv : NULL;
        *out_event = event != NULL ? event->drv : NULL;
        accel__borrow_begin(device);
        if (stream != NULL)
            accel__cb_point_take(&device->completion, stream->callbacks,
                                 out_callbacks);
        else
            accel__cb_point_copy(&device->completion, &event->callbacks,
                                 out_callbacks);
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

/*
 * Give back what borrow took; a failure may mean the device is lost. After
 * a sync (`collect`), memory whose streams are done leaves the drop queue.
 */
static accel_status give_back(accel_device *device, accel_status status,
                              const char *what, bool collect)
{
    status = accel__from_plugin(status, what);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    status = accel__device_check_loss(device, status);
    /* The host may know of a loss the plugin has not seen (it was told so
     * by another call): nothing succeeds on a lost device. */
    if ((status == ACCEL_OK || status == ACCEL_NOT_READY) &&
        atomic_load(&device->lost))
        status = accel__device_gone(device, what);
    if (collect && status == ACCEL_OK && device->drop.list != NULL)
        accel__drop_collect(device, false);
    accel__device_unlock(device);
    return status;
}

/*
 * After the device work: the callbacks before the point run too (in fd
 * mode this thread may run them), unless the work failed (those the stream
 * never reaches are delivered at a reset or a close). Lets go of the point.
 */
static accel_status callbacks_wait(accel_device *device, accel_status status,
                                   struct accel__cb_point *callbacks)
{
    if (status == ACCEL_OK)
        status = accel__cb_point_wait(&device->completion, callbacks, UINT64_MAX);
    accel__cb_point_release(&device->completion, callbacks);
    return status;
}

static accel_status stream_sync_untraced(accel_stream *stream)
{
    if (stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_stream_sync: NULL stream");
    accel_device *device = stream->device;
    if (accel__process_check(device->pid, "accel_stream_sync") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_drv_stream *drv = NULL;
    accel_drv_event *unused = NULL;
    struct accel__cb_point callbacks;
    accel_status status = borrow(device, stream, NULL, "accel_stream_sync",
                                 &drv, &unused, &callbacks);
    if (status != ACCEL_OK)
        return status;
    status = give_back(device, device->drv->stream_sync(device->drv_device, drv),
                       "stream_sync", true);
    status = callbacks_wait(device, status, &callbacks);
    /* A collective the stream ran failed: the stream's sync says so. */
    return accel__comm_stream_error(stream, status);
}

accel_status accel_stream_sync(accel_stream *stream)
{
    uint64_t traced = accel__trace_now();
    accel_status status = stream_sync_untraced(stream);
    return accel__trace_end("accel_stream_sync", traced, status, 0);
}

static accel_status event_create_untraced(accel_device *device,
                                          accel_event **out_event)
{
    if (out_event != NULL)
        *out_event = NULL;
    if (device == NULL || out_event == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_event_create: NULL argument");
    if (accel__process_check(device->pid, "accel_event_create") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_event *event = calloc(1, sizeof *event);
    if (event == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_event");
    event->device = device;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK) {
        status = ACCEL__DRV_CALL(device, event_create, &event->drv);
        status = accel__device_check_loss(device, status);
    }
    if (status == ACCEL_OK) {
        event->next = device->queues.events;
        device->queues.events = event;
        *out_event = event;
    }
    pthread_mutex_unlock(&device->lock);
    if (status != ACCEL_OK)
        free(event);
    return status;
}

accel_status accel_event_create(accel_device *device, accel_event **out_event)
{
    uint64_t traced = accel__trace_now();
    accel_status status = event_create_untraced(device, out_event);
    return accel__trace_end("accel_event_create", traced, status, 0);
}

static void event_destroy_untraced(accel_event *event)
{
    if (event == NULL || event->device->pid != accel__pid)
        return;
    accel_device *device = event->device;
    pthread_mutex_lock(&device->lock);
    for (accel_event **p = &device->queues.events; *p != NULL; p = &(*p)->next) {
        if (*p == event) {
            *p = event->next;
            break;
        }
    }
    if (event->drv != NULL)
        device->drv->event_destroy(device->drv_device, event->drv);
    accel__cb_point_release(&device->completion, &event->callbacks);
    pthread_mutex_unlock(&device->lock);
    free(event);
}

void accel_event_destroy(accel_event *event)
{
    uint64_t traced = accel__trace_now();
    event_destroy_untraced(event);
    accel__trace_end("accel_event_destroy", traced, ACCEL_OK, 0);
}

/* An event and, unless NULL is allowed, a stream of the same device. */
static accel_status check_pair(const accel_event *event,
                               const accel_stream *stream, bool need_stream,
                               const char *what)
{
    if (event == NULL || (need_stream && stream == NULL))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL %s", what,
                            event == NULL ? "event" : "stream");
    if (stream != NULL && stream->device != event->device)
        return accel__error(ACCEL_ERR_DEVICE_MISMATCH,
                            "%s: the event and the stream belong to different "
                            "devices",
                            what);
    return ACCEL_OK;
}

/*
 * Begin enqueueing work that pairs an event with a stream: the device lock
 * taken once, as for every other submission (accel__submit_begin). On
 * failure the lock is not held.
 */
static accel_status submit_pair(accel_event *event, accel_stream *stream,
                                const char *what)
{
    accel_status status = check_pair(event, stream, true, what);
    if (status == ACCEL_OK)
        status = accel__submit_begin(stream, what);
    if (status == ACCEL_OK && event->drv == NULL) {
        pthread_mutex_unlock(&stream->device->lock);
        status = accel__device_gone(stream->device, what);
    }
    return status;
}

static accel_status event_record_untraced(accel_event *event, accel_stream *stream)
{
    accel_status status = submit_pair(event, stream, "accel_event_record");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    status = ACCEL__DRV_CALL(device, event_record, event->drv, stream->drv);
    /* The event completes once the callbacks before it have run, too. */
    if (status == ACCEL_OK) {
        event->recorded = true;
        accel__cb_point_release(&device->completion, &event->callbacks);
        accel__cb_point_take(&device->completion, stream->callbacks,
                             &event->callbacks);
        atomic_store(&event->callbacks_pending, event->callbacks.counter != NULL);
    }
    return accel__submit_end(stream, status);
}

accel_status accel_event_record(accel_event *event, accel_stream *stream)
{
    uint64_t traced = accel__trace_now();
    accel_status status = event_record_untraced(event, stream);
    return accel__trace_end("accel_event_record", traced, status, 0);
}

/* A query under the device lock, the way every other call goes. */
static accel_status event_query_locked(accel_event *event, const char *what)
{
    accel_device *device = event->device;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK && event->drv == NULL) {
        status = accel__device_gone(device, what);
    } else if (status == ACCEL_OK) {
        status = ACCEL__DRV_CALL(device, event_query, event->drv);
        status = accel__device_check_loss(device, status);
    }
    /* Complete also means the callbacks before the record have run. */
    if (status == ACCEL_OK && atomic_load(&event->callbacks_pending)) {
        if (accel__cb_point_reached(&device->completion, &event->callbacks)) {
            accel__cb_point_release(&device->completion, &event->callbacks);
            atomic_store(&event->callbacks_pending, false);
        } else {
            status = ACCEL_NOT_READY;
        }
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

/*
 * The cheapest path to the plugin, the one a polling loop takes: no device
 * lock. The call counts itself in `lockless_calls` and then looks at
 * `lost` and `resetting`; a rebuild sets `resetting` and then waits for the
 * count to drain before it touches a plugin object. Both sides are
 * sequentially consistent, so either the query sees the reset (and goes
 * the locked way, which waits for it), or the rebuild sees the query and
 * waits for it.
 */
static accel_status event_query_untraced(accel_event *event)
{
    const char *what = "accel_event_query";
    accel_status status = check_pair(event, NULL, false, what);
    if (status != ACCEL_OK)
        return status;
    accel_device *device = event->device;
    if (accel__process_check(device->pid, "accel_event_query") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    atomic_fetch_add(&device->lockless_calls, 1);
    bool usable = !atomic_load(&device->lost) &&
                  !atomic_load(&device->resetting) &&
                  !atomic_load(&event->callbacks_pending) && event->drv != NULL;
    if (usable)
        status = device->drv->event_query(device->drv_device, event->drv);
    atomic_fetch_sub_explicit(&device->lockless_calls, 1, memory_order_release);
    if (!usable)
        return event_query_locked(event, what);
    if (status == ACCEL_OK || status == ACCEL_NOT_READY)
        return status;
    /* The query failed: whether the device is lost is decided under the lock. */
    return accel__device_check_loss_unlocked(
        device, accel__from_plugin(status, "event_query"));
}

accel_status accel_event_query(accel_event *event)
{
    uint64_t traced = accel__trace_now();
    return accel__trace_end("accel_event_query", traced,
                            event_query_untraced(event), 0);
}

static accel_status event_sync_untraced(accel_event *event)
{
    const char *what = "accel_event_sync";
    accel_drv_stream *s = NULL;
    accel_drv_event *e = NULL;
    struct accel__cb_point callbacks;
    accel_status status = check_pair(event, NULL, false, what);
    if (status == ACCEL_OK)
        status = accel__process_check(event->device->pid, what);
    if (status == ACCEL_OK)
        status = borrow(event->device, NULL, event, what, &s, &e, &callbacks);
    if (status != ACCEL_OK)
        return status;
    accel_device *device = event->device;
    status = give_back(device, device->drv->event_sync(device->drv_device, e),
                       "event_sync", false);
    return callbacks_wait(device, status, &callbacks);
}

accel_status accel_event_sync(accel_event *event)
{
    uint64_t traced = accel__trace_now();
    accel_status status = event_sync_untraced(event);
    return accel__trace_end("accel_event_sync", traced, status, 0);
}

static accel_status stream_wait_event_untraced(accel_stream *stream,
                                               accel_event *event)
{
    accel_status status = submit_pair(event, stream, "accel_stream_wait_event");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    status = ACCEL__DRV_CALL(device, stream_wait_event, stream->drv, event->drv);
    return accel__submit_end(stream, status);
}

accel_status accel_stream_wait_event(accel_stream *stream, accel_event *event)
{
    uint64_t traced = accel__trace_now();
    accel_status status = stream_wait_event_untraced(stream, event);
    return accel__trace_end("accel_stream_wait_event", traced, status, 0);
}

accel_status accel__streams_cb_points(accel_device *device,
                                      struct accel__cb_point **out_points,
                                      size_t *out_count)
{
    *out_points = NULL;
    *out_count = 0;
    size_t count = 0;
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next)
        count += s->callbacks != NULL;
    if (count == 0)
        return ACCEL_OK;
    struct accel__cb_point *points = calloc(count, sizeof *points);
    if (points == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "callback points");
    size_t i = 0;
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        if (s->callbacks != NULL)
            accel__cb_point_take(&device->completion, s->callbacks, &points[i++]);
    }
    *out_points = points;
    *out_count = count;
    return ACCEL_OK;
}

accel_status accel__cb_points_finish(accel_device *device, accel_status status,
                                     struct accel__cb_point *points, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        /* From a callback, its own stream's later ones cannot run yet: a
         * device sync waits for the other streams. */
        if (accel__cb_point_running_here(&device->completion, &points[i]))
            accel__cb_point_release(&device->completion, &points[i]);
        status = callbacks_wait(device, status, &points[i]);
    }
    free(points);
    return status;
}

void accel__streams_wait_all(accel_device *device)
{
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        if (s->drv != NULL)
            device->drv->stream_sync(device->drv_device, s->drv);
    }
}

void accel__streams_release(accel_device *device)
{
    for (accel_event *e = device->queues.events; e != NULL; e = e->next) {
        if (e->drv != NULL)
            device->drv->event_destroy(device->drv_device, e->drv);
        e->drv = NULL;
        e->recorded = false;
    }
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        if (s->drv != NULL)
            device->drv->stream_destroy(device->drv_device, s->drv);
        s->drv = NULL;
    }
}

accel_status accel__streams_rebuild(accel_device *device)
{
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        accel_status status = ACCEL__DRV_CALL(device, stream_create, &s->drv);
        if (status != ACCEL_OK) {
            s->drv = NULL;
            return status;
        }
    }
    for (accel_event *e = device->queues.events; e != NULL; e = e->next) {
        accel_status status = ACCEL__DRV_CALL(device, event_create, &e->drv);
        if (status != ACCEL_OK) {
            e->drv = NULL;
            return status;
        }
    }
    return ACCEL_OK;
}

/* ---- pinned host memory ---- */

/* Room for one more pinned block in the device's list; lock held. */
static accel_status host_block_room(accel_device *device)
{
    if (device->host_memory.count < device->host_memory.capacity)
        return ACCEL_OK;
    size_t capacity = device->host_memory.capacity
                          ? device->host_memory.capacity * 2
                          : 8;
    struct accel__host_block *blocks = realloc(device->host_memory.list,
                                               capacity * sizeof *blocks);
    if (blocks == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pinned block list");
    device->host_memory.list = blocks;
    device->host_memory.capacity = capacity;
    return ACCEL_OK;
}

/*
 * The plugin's host_alloc without the lock: pinning (cuMemHostRegister)
 * takes as long as the pages it locks. The device is borrowed, so a reset
 * waits; a reset that ran at the borrow's end (put off by this thread) has
 * not registered the block again, which is handed back. Lock held on entry
 * and on return.
 */
static accel_status host_alloc_unlocked(accel_device *device, size_t bytes,
                                        void **out_ptr)
{
    *out_ptr = NULL;
    uint32_t generation = atomic_load(&device->generation);
    void *ptr = NULL;
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    accel_status status = ACCEL__DRV_CALL(device, host_alloc, bytes, &ptr);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    status = accel__device_check_loss(device, status);
    if (status == ACCEL_OK && atomic_load(&device->generation) != generation) {
        device->drv->host_free(device->drv_device, ptr);
        return accel__device_gone(device, "accel_host_alloc");
    }
    if (status == ACCEL_OK)
        *out_ptr = ptr;
    return status;
}

static accel_status host_alloc_untraced(accel_device *device, size_t bytes,
                                        void **out_ptr)
{
    if (out_ptr != NULL)
        *out_ptr = NULL;
    if (device == NULL || out_ptr == NULL || bytes == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_alloc: NULL argument or zero bytes");
    if (accel__process_check(device->pid, "accel_host_alloc") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&device->lock);
    void *ptr = NULL;
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK)
        status = host_alloc_unlocked(device, bytes, &ptr);
    if (status == ACCEL_OK) {
        /* After the plugin call: other threads may have added blocks. */
        status = host_block_room(device);
        if (status != ACCEL_OK)
            device->drv->host_free(device->drv_device, ptr);
    }
    if (status == ACCEL_OK) {
        device->host_memory.list[device->host_memory.count++] =
            (struct accel__host_block){.ptr = ptr, .bytes = bytes};
        *out_ptr = ptr;
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_host_alloc(accel_device *device, size_t bytes, void **out_ptr)
{
    uint64_t traced = accel__trace_now();
    accel_status status = host_alloc_untraced(device, bytes, out_ptr);
    return accel__trace_end("accel_host_alloc", traced, status, bytes);
}

static void host_free_untraced(accel_device *device, void *ptr)
{
    if (device == NULL || ptr == NULL || device->pid != accel__pid)
        return;
    pthread_mutex_lock(&device->lock);
    for (size_t i = 0; i < device->host_memory.count; i++) {
        if (device->host_memory.list[i].ptr == ptr) {
            device->drv->host_free(device->drv_device, ptr);
            device->host_memory.list[i] =
                device->host_memory.list[--device->host_memory.count];
            break;
        }
    }
    pthread_mutex_unlock(&device->lock);
}

void accel_host_free(accel_device *device, void *ptr)
{
    uint64_t traced = accel__trace_now();
    host_free_untraced(device, ptr);
    accel__trace_end("accel_host_free", traced, ACCEL_OK, 0);
}
