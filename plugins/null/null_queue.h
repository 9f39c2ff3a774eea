/*
 * A stream's in-order queue and the worker thread that runs it.
 *
 * Enqueueing returns at once, before the command runs, as on a GPU. The
 * worker runs commands one by one in the order they were enqueued; after
 * command number n it advances the queue's timeline to n. So "all work
 * enqueued so far" is the value of the submission counter at that moment,
 * and it has completed once the timeline reaches that value: stream sync,
 * event record and event query are all built on that one comparison.
 */
#ifndef ACCEL_NULL_QUEUE_H
#define ACCEL_NULL_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

#include "null_copy.h"
#include "null_launch.h"
#include "null_sync.h"

struct null_queue;

/*
 * Make a queue and start its worker. `services` must outlive the queue.
 * The worker sleeps `delay_ns` before each command it runs (the
 * ACCEL_NULL_DELAY_US test knob; 0 for none). While `*lost` (the device's
 * flag, which must outlive the queue) is set, the worker drops the
 * commands it reaches instead of running them, and the queue's timeline
 * records the first one dropped as failed with ACCEL_ERR_DEVICE_LOST.
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY (allocation, pthread_create).
 */
accel_status accel__null_queue_create(const struct accel_host_services *services,
                                      uint64_t delay_ns, const _Atomic bool *lost,
                                      struct null_queue **out_queue);
/*
 * Stop the worker once it has run every command enqueued, join it, and
 * free the queue. Events recorded on it stay valid (they hold the
 * timeline). NULL is allowed.
 */
void accel__null_queue_destroy(struct null_queue *queue);

/*
 * Block until every command enqueued so far has completed or been dropped.
 * ACCEL_OK, or the first failure on the queue up to there (its detail
 * recorded on the calling thread).
 */
accel_status accel__null_queue_sync(struct null_queue *queue);
/*
 * The point after all work enqueued so far: the queue's timeline, with a
 * reference for the caller, and the value it reaches at that point.
 */
void accel__null_queue_position(struct null_queue *queue,
                                struct null_timeline **out_timeline,
                                uint64_t *out_value);

/*
 * Enqueue commands. Each fails only with ACCEL_ERR_OUT_OF_HOST_MEMORY, and
 * returns before the command runs, except a copy of up to 256 KiB made
 * while everything enqueued before it has completed: that one runs on the
 * calling thread at once (the stream order is the same).
 */
accel_status accel__null_queue_copy(struct null_queue *queue,
                                    const struct null_copy *copy);
/* Later commands wait until `timeline` reaches `value`; takes its own ref. */
accel_status accel__null_queue_wait(struct null_queue *queue,
                                    struct null_timeline *timeline,
                                    uint64_t value);
/*
 * Run a prepared launch on the worker. The queue owns the launch from the
 * call on, also when it fails (it is discarded then).
 */
accel_status accel__null_queue_launch(struct null_queue *queue,
                                      struct null_launch *launch);
/* Run fn(user) on the worker, in order with the other commands. */
accel_status accel__null_queue_host_func(struct null_queue *queue,
                                         void (*fn)(void *user), void *user);

#endif /* ACCEL_NULL_QUEUE_H */
