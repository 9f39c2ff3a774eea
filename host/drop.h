/*
 * The drop queue and the host's own events (drop.c): memory released
 * once the work that used it has completed. Device lock held.
 */
#ifndef ACCEL_HOST_DROP_H
#define ACCEL_HOST_DROP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"
#include "pool.h"

/* Events the host records for itself, waited for together. */
struct accel__fence {
    accel_drv_event **events;
    uint32_t count;
};

/* Memory waiting on the drop queue for its fence. */
struct accel__drop {
    struct accel__slice slice; /* a freed slice, or */
    struct accel__page *page;  /* a page emptied by relocation */
    uint64_t bytes;
    struct accel__fence fence;
    struct accel__drop *next;
};

/* A device's drop queue and its spare internal events; device lock. */
struct accel__drop_queue {
    struct accel__drop *list; /* oldest first */
    uint32_t count;
    uint64_t bytes;
    accel_drv_event **spare;
    size_t spare_count;
    size_t spare_capacity;
};

accel_status accel__event_take(accel_device *device, accel_drv_event **out_event);
void accel__event_give(accel_device *device, accel_drv_event *event);
void accel__events_release(accel_device *device);
/* Record an event on each stream whose lane is in `lanes`. */
accel_status accel__fence_lanes(accel_device *device, uint64_t lanes,
                                struct accel__fence *out_fence);
accel_status accel__fence_stream(accel_device *device, accel_drv_stream *stream,
                                 struct accel__fence *out_fence);
/* Add an event recorded on `stream` to a fence. */
accel_status accel__fence_add(accel_device *device, struct accel__fence *fence,
                              accel_drv_stream *stream);
/* Give a fence's events back without waiting for them. */
void accel__fence_release(accel_device *device, struct accel__fence *fence);
/* Free a slice once the streams in `lanes` are past their current work. */
accel_status accel__drop_slice(accel_device *device, struct accel__slice slice,
                               uint64_t bytes, uint64_t lanes);
/* Free an emptied page once `fence` has completed; takes the fence. */
void accel__drop_page(accel_device *device, struct accel__page *page,
                      struct accel__fence *fence);
/* Release what has completed; with `wait`, wait for everything first. */
void accel__drop_collect(accel_device *device, bool wait);
/* Forget every entry (reset, close): the pool's release frees the memory. */
void accel__drop_release_all(accel_device *device);

#endif /* ACCEL_HOST_DROP_H */
