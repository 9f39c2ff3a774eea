#include "null_sync.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "null_os.h"

/* Read the clock only every few steps: even a vDSO call costs ~20 ns. */
#define NULL_BACKOFF_CLOCK_EVERY 8u

/*
 * When each of the last NULL_STAMPS commands of a timeline completed, on
 * the worker's clock (CLOCK_MONOTONIC): what event_elapsed reads. A slot
 * holds the command's value and its time; a reader checks the value before
 * and after it reads the time, as a seqlock does, since the worker reuses
 * the slot NULL_STAMPS commands later.
 */
#define NULL_STAMPS 1024u

struct null_stamp {
    _Atomic uint64_t value;
    _Atomic uint64_t ns;
};

struct null_timeline {
    _Atomic uint64_t value;
    _Atomic uint32_t refs;
    /*
     * Threads sleeping (or about to sleep) on `wake`. The signaller takes
     * the lock and broadcasts only when it is non-zero, which keeps the
     * common no-sleeper completion to one atomic store and one load.
     */
    _Atomic uint32_t sleepers;
    /*
     * Copies enqueued and not yet finished, and whether the worker is
     * running something else now (a kernel, a wait, a host function):
     * waiters poll longer while the first is non-zero and the second false.
     */
    _Atomic uint32_t copies;
    _Atomic bool other_running;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /*
     * The first command that failed on the worker, 0 for none, published
     * after its status and detail (written under `lock`, once).
     */
    _Atomic uint64_t failed_at;
    accel_status failed_status;
    char failed_detail[192];
    struct null_stamp stamps[NULL_STAMPS];
};

void accel__null_backoff_init(struct null_backoff *backoff, uint64_t budget_ns)
{
    backoff->start_ns = null_now_ns();
    backoff->budget_ns = budget_ns;
    backoff->steps = 0;
    backoff->yielding = false;
}

bool accel__null_backoff_step(struct null_backoff *backoff)
{
    if (++backoff->steps % NULL_BACKOFF_CLOCK_EVERY == 0) {
        uint64_t spent = null_now_ns() - backoff->start_ns;

        if (spent >= backoff->budget_ns)
            return false;
        backoff->yielding = spent >= NULL_PAUSE_ONLY_NS;
    }
    if (backoff->yielding)
        sched_yield();
    else
        null_cpu_relax();
    return true;
}

accel_status accel__null_timeline_create(const struct accel_host_services *services,
                                         struct null_timeline **out_timeline)
{
    struct null_timeline *timeline;
    const char *failed;
    int rc;

    *out_timeline = NULL;
    timeline = calloc(1, sizeof(*timeline));
    if (timeline == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of a stream timeline failed");
    failed = "pthread_mutex_init";
    rc = pthread_mutex_init(&timeline->lock, NULL);
    if (rc != 0)
        goto fail_free;
    failed = "pthread_cond_init";
    rc = pthread_cond_init(&timeline->wake, NULL);
    if (rc != 0)
        goto fail_mutex;
    atomic_init(&timeline->value, 0);
    atomic_init(&timeline->refs, 1);
    atomic_init(&timeline->sleepers, 0);
    atomic_init(&timeline->copies, 0);
    atomic_init(&timeline->other_running, false);
    atomic_init(&timeline->failed_at, 0);
    *out_timeline = timeline;
    return ACCEL_OK;

fail_mutex:
    pthread_mutex_destroy(&timeline->lock);
fail_free:
    free(timeline);
    return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                               "%s failed for a stream timeline: %s", failed,
                               null_errno_name(rc));
}

void accel__null_timeline_retain(struct null_timeline *timeline)
{
    atomic_fetch_add_explicit(&timeline->refs, 1, memory_order_relaxed);
}

void accel__null_timeline_release(struct null_timeline *timeline)
{
    if (timeline == NULL)
        return;
    /* acq_rel: the freeing thread must see every other holder's last use. */
    if (atomic_fetch_sub_explicit(&timeline->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&timeline->wake);
    pthread_mutex_destroy(&timeline->lock);
    free(timeline);
}

bool accel__null_timeline_reached(struct null_timeline *timeline, uint64_t value)
{
    /* acquire: whoever sees the value also sees what the commands wrote. */
    return atomic_load_explicit(&timeline->value, memory_order_acquire) >= value;
}

/* Written only by the timeline's one worker, before it signals `value`. */
static void null_timeline_stamp(struct null_timeline *timeline, uint64_t value)
{
    struct null_stamp *stamp = &timeline->stamps[value % NULL_STAMPS];

    atomic_store_explicit(&stamp->value, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&stamp->ns, null_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&stamp->value, value, memory_order_release);
}

bool accel__null_timeline_stamp(struct null_timeline *timeline, uint64_t value,
                                uint64_t *out_ns)
{
    const struct null_stamp *stamp = &timeline->stamps[value % NULL_STAMPS];
    uint64_t before = atomic_load_explicit(&stamp->value, memory_order_acquire);
    uint64_t ns = atomic_load_explicit(&stamp->ns, memory_order_relaxed);

    atomic_thread_fence(memory_order_acquire);
    *out_ns = ns;
    return before == value &&
           atomic_load_explicit(&stamp->value, memory_order_relaxed) == value;
}

void accel__null_timeline_signal(struct null_timeline *timeline, uint64_t value)
{
    null_timeline_stamp(timeline, value);
    /*
     * Both accesses are sequentially consistent, and so is the sleeper's
     * pair in null_timeline_sleep (count itself, then read the value): in
     * the single order of the four, either this load sees the sleeper, or
     * the sleeper's read sees the new value. A wake-up cannot be lost.
     */
    atomic_store(&timeline->value, value);
    if (atomic_load(&timeline->sleepers) == 0)
        return;
    pthread_mutex_lock(&timeline->lock);
    pthread_cond_broadcast(&timeline->wake);
    pthread_mutex_unlock(&timeline->lock);
}

static void null_timeline_sleep(struct null_timeline *timeline, uint64_t value)
{
    pthread_mutex_lock(&timeline->lock);
    atomic_fetch_add(&timeline->sleepers, 1);
    while (atomic_load(&timeline->value) < value)
        pthread_cond_wait(&timeline->wake, &timeline->lock);
    atomic_fetch_sub(&timeline->sleepers, 1);
    pthread_mutex_unlock(&timeline->lock);
}

/* A hint for how long to poll; nothing is published through it: relaxed. */
void accel__null_timeline_copy_queued(struct null_timeline *timeline)
{
    atomic_fetch_add_explicit(&timeline->copies, 1, memory_order_relaxed);
}

void accel__null_timeline_copy_done(struct null_timeline *timeline)
{
    atomic_fetch_sub_explicit(&timeline->copies, 1, memory_order_relaxed);
}

void accel__null_timeline_set_other_running(struct null_timeline *timeline,
                                            bool running)
{
    atomic_store_explicit(&timeline->other_running, running,
                          memory_order_relaxed);
}

/* A copy is on its way, and nothing whose end nobody can foresee is ahead of it. */
static bool null_timeline_copying(struct null_timeline *timeline)
{
    return atomic_load_explicit(&timeline->copies, memory_order_relaxed) != 0 &&
           !atomic_load_explicit(&timeline->other_running, memory_order_relaxed);
}

void accel__null_timeline_wait(struct null_timeline *timeline, uint64_t value)
{
    struct null_backoff backoff;

    if (accel__null_timeline_reached(timeline, value))
        return;
    accel__null_backoff_init(&backoff, NULL_WAITER_SPIN_NS);
    while (accel__null_backoff_step(&backoff)) {
        if (accel__null_timeline_reached(timeline, value))
            return;
    }
    /* The budget is spent; a copy on its way extends it, while it lasts. */
    backoff.budget_ns = NULL_WAITER_COPY_SPIN_NS;
    while (null_timeline_copying(timeline) && accel__null_backoff_step(&backoff)) {
        if (accel__null_timeline_reached(timeline, value))
            return;
    }
    null_timeline_sleep(timeline, value);
}

void accel__null_timeline_fail(struct null_timeline *timeline, uint64_t value,
                               accel_status status, const char *detail)
{
    pthread_mutex_lock(&timeline->lock);
    if (atomic_load_explicit(&timeline->failed_at, memory_order_relaxed) == 0) {
        timeline->failed_status = status;
        snprintf(timeline->failed_detail, sizeof(timeline->failed_detail), "%s",
                 detail);
        atomic_store_explicit(&timeline->failed_at, value, memory_order_release);
    }
    pthread_mutex_unlock(&timeline->lock);
}

accel_status
accel__null_timeline_status(struct null_timeline *timeline, uint64_t value,
                            const struct accel_host_services *services)
{
    uint64_t failed_at = atomic_load_explicit(&timeline->failed_at,
                                              memory_order_acquire);
    char detail[sizeof(timeline->failed_detail)];
    accel_status status;

    if (failed_at == 0 || failed_at > value)
        return ACCEL_OK;
    pthread_mutex_lock(&timeline->lock);
    status = timeline->failed_status;
    memcpy(detail, timeline->failed_detail, sizeof(detail));
    pthread_mutex_unlock(&timeline->lock);
    return services->set_error(status, "%s", detail);
}
