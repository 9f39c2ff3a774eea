/*
 * The drop queue: memory released only once the work that may still use it
 * has completed.
 *
 * A ref remembers which streams (lanes) have enqueued work on it since it
 * was allocated. When it is freed, an event is recorded on each of those
 * streams: the fence. The slice goes back to the pool once every event of
 * its fence has completed. Slices no stream has touched go back at once.
 * Pages emptied by a relocation wait behind the relocation's event the same
 * way. The queue is collected on every sync, and when it holds more than a
 * threshold of entries or bytes.
 *
 * Every function here runs with the device lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "drop.h"
#include "pool.h"
#include "status.h"
#include "stream.h"
#include "submit.h"

#define DROP_MAX_ENTRIES 256
#define DROP_MAX_BYTES (256ull << 20)

/* ---- internal events, recycled ---- */

accel_status accel__event_take(accel_device *device, accel_drv_event **out_event)
{
    if (device->drop.spare_count > 0) {
        *out_event = device->drop.spare[--device->drop.spare_count];
        return ACCEL_OK;
    }
    *out_event = NULL;
    return ACCEL__DRV_CALL(device, event_create, out_event);
}

void accel__event_give(accel_device *device, accel_drv_event *event)
{
    if (device->drop.spare_count == device->drop.spare_capacity) {
        size_t capacity = device->drop.spare_capacity
                              ? device->drop.spare_capacity * 2
                              : 16;
        accel_drv_event **grown = realloc(device->drop.spare,
                                          capacity * sizeof *grown);
        if (grown == NULL) {
            device->drv->event_destroy(device->drv_device, event);
            return;
        }
        device->drop.spare = grown;
        device->drop.spare_capacity = capacity;
    }
    device->drop.spare[device->drop.spare_count++] = event;
}

void accel__events_release(accel_device *device)
{
    for (size_t i = 0; i < device->drop.spare_count; i++)
        device->drv->event_destroy(device->drv_device, device->drop.spare[i]);
    free(device->drop.spare);
    device->drop.spare = NULL;
    device->drop.spare_count = 0;
    device->drop.spare_capacity = 0;
}

/* ---- fences ---- */

void accel__fence_release(accel_device *device, struct accel__fence *fence)
{
    for (uint32_t i = 0; i < fence->count; i++)
        accel__event_give(device, fence->events[i]);
    free(fence->events);
    memset(fence, 0, sizeof *fence);
}

accel_status accel__fence_add(accel_device *device, struct accel__fence *fence,
                              accel_drv_stream *stream)
{
    accel_drv_event **grown = realloc(fence->events,
                                      (fence->count + 1) * sizeof *grown);
    if (grown == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "fence");
    fence->events = grown;
    accel_drv_event *event = NULL;
    accel_status status = accel__event_take(device, &event);
    if (status != ACCEL_OK)
        return status;
    status = ACCEL__DRV_CALL(device, event_record, event, stream);
    if (status != ACCEL_OK) {
        accel__event_give(device, event);
        return status;
    }
    fence->events[fence->count++] = event;
    return ACCEL_OK;
}

accel_status accel__fence_lanes(accel_device *device, uint64_t lanes,
                                struct accel__fence *out_fence)
{
    memset(out_fence, 0, sizeof *out_fence);
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        if (s->drv == NULL || !(lanes & accel__lane_bit(s)))
            continue;
        accel_status status = accel__fence_add(device, out_fence, s->drv);
        if (status != ACCEL_OK) {
            accel__fence_release(device, out_fence);
            return status;
        }
    }
    return ACCEL_OK;
}

accel_status accel__fence_stream(accel_device *device, accel_drv_stream *stream,
                                 struct accel__fence *out_fence)
{
    memset(out_fence, 0, sizeof *out_fence);
    accel_status status = accel__fence_add(device, out_fence, stream);
    if (status != ACCEL_OK)
        accel__fence_release(device, out_fence);
    return status;
}

/* ACCEL_OK when every event has completed, ACCEL_NOT_READY, or an error. */
static accel_status fence_poll(accel_device *device, struct accel__fence *fence,
                               bool wait)
{
    while (fence->count > 0) {
        accel_drv_event *event = fence->events[fence->count - 1];
        accel_status status = wait ? device->drv->event_sync(device->drv_device,
                                                             event)
                                   : device->drv->event_query(device->drv_device,
                                                              event);
        if (status != ACCEL_OK)
            return status;
        fence->count--;
        accel__event_give(device, event);
    }
    return ACCEL_OK;
}

/* ---- the queue ---- */

static void drop_release(accel_device *device, struct accel__drop *drop)
{
    if (drop->page != NULL)
        accel__pool_page_free(&device->pool, device->drv, device->drv_device,
                              drop->page);
    else
        accel__pool_give(&device->pool, device->drv, device->drv_device,
                         drop->slice, drop->bytes);
    accel__fence_release(device, &drop->fence);
    device->drop.bytes -= drop->bytes;
    device->drop.count--;
    free(drop);
}

void accel__drop_collect(accel_device *device, bool wait)
{
    /* Finished collectives let go of their pins before memory is given
     * back: a dropped slice's fence passes only after them. */
    accel__comm_reap(device);
    struct accel__drop **link = &device->drop.list;
    while (*link != NULL) {
        struct accel__drop *drop = *link;
        accel_status status = fence_poll(device, &drop->fence, wait);
        /* A fence that fails (a lost device) will never complete; the
         * memory is released by the reset, which frees everything. */
        if (status != ACCEL_OK) {
            link = &drop->next;
            continue;
        }
        *link = drop->next;
        drop_release(device, drop);
    }
}

static void drop_enqueue(accel_device *device, struct accel__drop *drop)
{
    struct accel__drop **link = &device->drop.list;
    while (*link != NULL)
        link = &(*link)->next;
    *link = drop;
    device->drop.count++;
    device->drop.bytes += drop->bytes;
    if (device->drop.count > DROP_MAX_ENTRIES ||
        device->drop.bytes > DROP_MAX_BYTES) {
        accel__drop_collect(device, false);
        /* Still over: wait for the oldest, so the queue stays bounded. */
        if (device->drop.list != NULL && (device->drop.count > DROP_MAX_ENTRIES ||
                                          device->drop.bytes > DROP_MAX_BYTES)) {
            struct accel__drop *oldest = device->drop.list;
            if (fence_poll(device, &oldest->fence, true) == ACCEL_OK) {
                device->drop.list = oldest->next;
                drop_release(device, oldest);
            }
        }
    }
}

accel_status accel__drop_slice(accel_device *device, struct accel__slice slice,
                               uint64_t bytes, uint64_t lanes)
{
    if (lanes == 0) {
        accel__pool_give(&device->pool, device->drv, device->drv_device, slice,
                         bytes);
        return ACCEL_OK;
    }
    struct accel__drop *drop = calloc(1, sizeof *drop);
    if (drop == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "drop queue");
    accel_status status = accel__fence_lanes(device, lanes, &drop->fence);
    if (status != ACCEL_OK) {
        free(drop);
        return status;
    }
    accel__pool_mark_dropped(slice);
    drop->slice = slice;
    drop->bytes = bytes;
    drop_enqueue(device, drop);
    return ACCEL_OK;
}

void accel__drop_page(accel_device *device, struct accel__page *page,
                      struct accel__fence *fence)
{
    struct accel__drop *drop = calloc(1, sizeof *drop);
    if (drop == NULL) {
        /* No memory to queue it: wait here instead, then free the page. */
        fence_poll(device, fence, true);
        accel__fence_release(device, fence);
        accel__pool_page_free(&device->pool, device->drv, device->drv_device,
                              page);
        return;
    }
    drop->page = page;
    drop->fence = *fence;
    memset(fence, 0, sizeof *fence);
    drop_enqueue(device, drop);
}

void accel__drop_release_all(accel_device *device)
{
    while (device->drop.list != NULL) {
        struct accel__drop *drop = device->drop.list;
        device->drop.list = drop->next;
        accel__fence_release(device, &drop->fence);
        free(drop);
    }
    device->drop.count = 0;
    device->drop.bytes = 0;
}
