/*
 * Waiting, the null plugin's way: spin briefly, then sleep.
 *
 * A GPU-less program spends most of its accel time handing tiny commands
 * to a stream worker and waiting for them, so a round trip must cost about
 * a microsecond. Sleeping on a condition variable costs several (a futex
 * wake and a scheduler pass on each side), so both the worker and every
 * waiter first poll for a short, bounded time and sleep only when the wait
 * turns out to be long.
 */
#ifndef ACCEL_NULL_SYNC_H
#define ACCEL_NULL_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

/*
 * Spin budgets. A stream worker that runs dry polls a little longer than a
 * waiter does: the next command usually follows within microseconds (the
 * application is looping), and catching it without a wake-up is what makes
 * the round trip cheap. Both are short enough that an idle program stops
 * burning CPU at once, as far as a person can tell.
 */
#define NULL_WORKER_SPIN_NS 50000u
#define NULL_WAITER_SPIN_NS 20000u
/*
 * While a copy is enqueued and not finished, and the worker is not busy
 * with anything else, a waiter goes on polling up to this long before it
 * sleeps. A copy's end is near (memory bandwidth
 * bounds it, unlike a kernel's), the waiter's core has nothing else to do
 * meanwhile, and on this kind of machine a sleeper's wake-up costs 5 to
 * 30 us, up to hundreds when its CPU had gone idle: for copies of 256 KiB
 * to 4 MiB that was half their time. The budget runs from the start of
 * the wait. A copy counts as on its way from its enqueue, not from when
 * the worker starts it: otherwise a waiter that came while a sleeping
 * worker was waking up would find no copy and sleep, it would wake too
 * late for the worker's own spin, the worker would sleep too, and a loop
 * of copies could stay in that slow mode (the likely cause of one
 * benchmark run's 1 MiB copies at 4.8 GB/s instead of 33). Past the
 * budget (copies of tens of MiB) a wake-up is a few percent.
 */
#define NULL_WAITER_COPY_SPIN_NS 1000000u
/*
 * For this long a spinner only pauses the CPU; after it, it yields, so
 * that the thread it waits for gets to run when both share a core. The
 * scheduler does put a worker and its waiter on one CPU (often, on small
 * CI machines), and there every nanosecond of pausing is wasted: with
 * 2 us a round trip cost 8 us there, with 500 ns 5 us, while two threads
 * on two cores meet within the first few hundred nanoseconds anyway.
 */
#define NULL_PAUSE_ONLY_NS 500u

/* A bounded spin: call step until it returns false, then block. */
struct null_backoff {
    uint64_t start_ns;
    uint64_t budget_ns;
    uint32_t steps;
    bool yielding;
};

void accel__null_backoff_init(struct null_backoff *backoff, uint64_t budget_ns);
/* Wait a moment; false once the budget is spent and the caller should block. */
bool accel__null_backoff_step(struct null_backoff *backoff);

/*
 * A timeline: a counter that only grows, which a stream worker advances as
 * commands complete, and that events and waits compare against a target.
 * It is reference-counted apart from its stream so that an event recorded
 * on a stream stays answerable after the stream is destroyed.
 */
struct null_timeline;

/*
 * Make a timeline at zero with one reference owned by the caller.
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY, recorded through `services`.
 */
accel_status accel__null_timeline_create(const struct accel_host_services *services,
                                         struct null_timeline **out_timeline);
void accel__null_timeline_retain(struct null_timeline *timeline);
/* Drop a reference; the last one frees the timeline. NULL is allowed. */
void accel__null_timeline_release(struct null_timeline *timeline);

/* Whether the timeline has reached `value`; never blocks. */
bool accel__null_timeline_reached(struct null_timeline *timeline, uint64_t value);
/*
 * Advance the timeline to `value` (larger than its current value) and wake
 * whoever sleeps on it. Only the timeline's one worker calls this.
 */
void accel__null_timeline_signal(struct null_timeline *timeline, uint64_t value);
/*
 * When command `value` completed, on the worker's clock: true with
 * *out_ns set while the timeline still keeps it (its last 1,024 commands;
 * value > 0 and reached), false once a later command took its place.
 */
bool accel__null_timeline_stamp(struct null_timeline *timeline, uint64_t value,
                                uint64_t *out_ns);
/*
 * Count a copy enqueued on the timeline's stream, and one finished (run
 * or dropped); see NULL_WAITER_COPY_SPIN_NS.
 */
void accel__null_timeline_copy_queued(struct null_timeline *timeline);
void accel__null_timeline_copy_done(struct null_timeline *timeline);
/*
 * Say whether the worker is running a command other than a copy: while it
 * is, waiters do not poll longer for copies queued behind it (a kernel
 * behind which a result is copied back would lose a core to the waiter).
 * Only the timeline's one worker calls this.
 */
void accel__null_timeline_set_other_running(struct null_timeline *timeline,
                                            bool running);
/*
 * Block until the timeline reaches `value`: spin for NULL_WAITER_SPIN_NS
 * (up to NULL_WAITER_COPY_SPIN_NS while a copy is on its way), then sleep.
 */
void accel__null_timeline_wait(struct null_timeline *timeline, uint64_t value);

/*
 * Record that command `value` failed on the worker, with its status and
 * detail; call before signalling `value`. Only the first failure is kept:
 * a failed stream reports its first error, as a GPU's sticky one does.
 */
void accel__null_timeline_fail(struct null_timeline *timeline, uint64_t value,
                               accel_status status, const char *detail);
/*
 * How the work up to `value` (reached) went: ACCEL_OK, or the first
 * failure at or before it, whose detail is recorded through `services` on
 * the calling thread.
 */
accel_status
accel__null_timeline_status(struct null_timeline *timeline, uint64_t value,
                            const struct accel_host_services *services);

#endif /* ACCEL_NULL_SYNC_H */
