/*
 * Streams and events (stream.c): the host's handles over the plugin's
 * objects, their lanes, and their rebuild at a reset.
 */
#ifndef ACCEL_HOST_STREAM_H
#define ACCEL_HOST_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"
#include "completion.h"

/*
 * Streams have a lane: a bit that refs record when work on the stream
 * uses them. Lanes 0..62 are a stream's own; later streams share lane 63.
 */
#define ACCEL__LANES 64

struct accel_stream {
    struct accel_device *device;
    accel_drv_stream *drv; /* NULL while the device is lost */
    uint32_t lane;
    /* Made at the first callback; device lock. */
    struct accel__cb_counter *callbacks;
    /* A collective on the stream failed since its last sync (comm.h):
     * reported there. The device's comm lock. */
    bool comm_failed;
    char comm_failure[256];
    struct accel_stream *next;
};

static inline uint64_t accel__lane_bit(const struct accel_stream *stream)
{
    return 1ull << stream->lane;
}

struct accel_event {
    struct accel_device *device;
    accel_drv_event *drv; /* NULL while the device is lost */
    /* The callbacks enqueued before the event's last record: it completes
     * only once they have run. Device lock; `callbacks_pending` is read
     * without it by the lockless query. */
    struct accel__cb_point callbacks;
    _Atomic bool callbacks_pending;
    bool recorded; /* since its plugin event was made; device lock */
    struct accel_event *next;
};

/* The streams and events of a device; device lock. */
struct accel__queues {
    struct accel_stream *list;
    uint64_t lanes_taken;
    struct accel_event *events;
};

/* Streams and events: drop and rebuild the plugin's objects at reset. */
void accel__streams_release(accel_device *device);
/* Wait for every user stream, failures ignored (a lost device completes
 * nothing); device lock held. */
void accel__streams_wait_all(accel_device *device);
accel_status accel__streams_rebuild(accel_device *device);
/* The callback point of every stream that has had callbacks; lock held. */
accel_status accel__streams_cb_points(accel_device *device,
                                      struct accel__cb_point **out_points,
                                      size_t *out_count);
/* After device work that ended with `status`, wait for the points' callbacks
 * (unless it failed) and let go of them; no device lock held. */
accel_status accel__cb_points_finish(accel_device *device, accel_status status,
                                     struct accel__cb_point *points,
                                     size_t count);

#endif /* ACCEL_HOST_STREAM_H */
