/*
 * Completion callbacks (completion.c): per-stream counters, the points
 * that waits wait for, and each device's callback thread or fd.
 */
#ifndef ACCEL_HOST_COMPLETION_H
#define ACCEL_HOST_COMPLETION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"

/*
 * The callbacks of one stream, counted, so that a sync can wait for those
 * enqueued before it (completion.c). Shared by the stream, its callback
 * records, and the events and waiters that wait for them; the last to let
 * go frees it. Every field under the completion lock.
 */
struct accel__cb_counter {
    uint64_t added; /* callbacks enqueued on the stream */
    uint64_t done;  /* of those, the ones that have run */
    uint32_t refs;
    bool running; /* one of them runs now, on `runner` */
    pthread_t runner;
};

/* The callbacks of a stream enqueued before some point: done >= target. */
struct accel__cb_point {
    struct accel__cb_counter *counter; /* NULL: nothing to wait for */
    uint64_t target;
};

/* Completion callbacks of one device (completion.c). */
struct accel__callback;
struct accel__completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_cond_t ran;                  /* a callback ran, or became ready */
    struct accel__callback *outstanding; /* enqueued, not yet reached */
    struct accel__callback *ready;       /* reached, to be run, in order */
    struct accel__callback *ready_tail;
    size_t ready_count;
    pthread_t thread;
    bool thread_running;
    bool stopping;
    int fd; /* eventfd in fd mode, else -1 */
};

accel_status accel__completion_init(struct accel__completion *completion);
/* Deliver what is left (as lost), stop the thread, free. */
void accel__completion_deinit(struct accel__completion *completion);
/* Callbacks whose streams are gone are delivered as lost. */
void accel__completion_abandon(struct accel__completion *completion);
/* Before a close: drop loss callbacks not yet run, stop the thread. */
void accel__completion_quiesce(struct accel__completion *completion);
/*
 * The point after the callbacks `counter` has counted so far (NULL, or
 * all of them run: an empty point). Takes a reference; give it back with
 * accel__cb_point_release. Any lock but the completion's may be held.
 */
void accel__cb_point_take(struct accel__completion *completion,
                          struct accel__cb_counter *counter,
                          struct accel__cb_point *out_point);
/* A second reference to the same point. */
void accel__cb_point_copy(struct accel__completion *completion,
                          const struct accel__cb_point *point,
                          struct accel__cb_point *out_point);
void accel__cb_point_release(struct accel__completion *completion,
                             struct accel__cb_point *point);
/* True once every callback before the point has run. */
bool accel__cb_point_reached(struct accel__completion *completion,
                             const struct accel__cb_point *point);
/* True when this thread is inside one of the point's stream's callbacks. */
bool accel__cb_point_running_here(struct accel__completion *completion,
                                  const struct accel__cb_point *point);
/*
 * Wait until every callback before the point has run, at most until
 * `deadline_ns` (accel__now_ns; UINT64_MAX: no limit). In fd mode, and on
 * the thread that runs callbacks, the caller runs the ready ones of that
 * stream itself. No device lock may be held: a callback may use the device.
 */
accel_status accel__cb_point_wait(struct accel__completion *completion,
                                  const struct accel__cb_point *point,
                                  uint64_t deadline_ns);
/* Queue on_loss(device, generation, status, user) where callbacks run. */
void accel__completion_notify_loss(struct accel__completion *completion,
                                   accel_device *device,
                                   accel_loss_callback on_loss, void *user,
                                   uint32_t generation, accel_status status);

#endif /* ACCEL_HOST_COMPLETION_H */
