#include "null_queue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "null_os.h"

/*
 * Finished commands are kept for reuse, so that a steady stream of
 * enqueues does not malloc at all; past this many they are freed.
 */
#define NULL_QUEUE_SPARE_MAX 64u

/*
 * A copy of at most this many bytes, enqueued while its stream has nothing
 * pending, runs on the calling thread before the enqueue returns (as the
 * driver ABI allows: a copy may complete before it returns). A handoff to
 * the worker and back costs about as much as a memcpy of 16 KiB, and a
 * wake-up of a sleeping worker several times that; above this size the
 * caller's time is worth more than the handoff.
 */
#define NULL_QUEUE_INLINE_COPY_MAX (256u * 1024u)
/*
 * A fill reads nothing of the caller's, and its handoff (5 to 10 us on a
 * busy machine, a wake-up included) cost more than half of a 1 MiB fill:
 * fills up to this size run on the caller too when the stream is idle, so
 * that accel_fill keeps within 0.9 of memset (BENCHMARKS.md). From 16 MiB
 * the handoff is under 5 % of the fill.
 */
#define NULL_QUEUE_INLINE_FILL_MAX (16u * 1024u * 1024u)

enum null_command_kind {
    NULL_COMMAND_COPY,
    NULL_COMMAND_WAIT,
    NULL_COMMAND_HOST_FUNC,
    NULL_COMMAND_LAUNCH
};

struct null_command {
    struct null_command *next;
    uint64_t seq; /* the timeline value once this command has completed */
    enum null_command_kind kind;
    union {
        struct null_copy copy;
        struct {
            struct null_timeline *timeline; /* a reference owned here */
            uint64_t value;
        } wait;
        struct {
            void (*fn)(void *user);
            void *user;
        } host_func;
        struct null_launch launch;
    } u;
};

struct null_queue {
    const struct accel_host_services *services;
    struct null_timeline *timeline;
    uint64_t delay_ns;
    const _Atomic bool *lost; /* the device's: drop commands while set */

    /* `lock` guards everything below it that is not atomic. */
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    struct null_command *head;
    struct null_command *tail;
    struct null_command *spares;
    uint32_t spare_count;
    bool worker_sleeping;

    /*
     * The seq of the last command enqueued: "work enqueued so far". Written
     * only under the lock; atomic so that the worker's polling and the
     * callers that ask for the position can read it without the lock.
     */
    _Atomic uint64_t submitted;
    _Atomic bool stopping;
    pthread_t worker;
};

/* ---- the worker side ---- */

/* Run a launch; a kernel that fails fails its stream, as a GPU's does. */
static void null_command_launch(struct null_queue *queue, struct null_command *cmd)
{
    char detail[256];
    accel_status status = accel__null_launch_run(&cmd->u.launch, detail,
                                                 sizeof(detail));

    if (status != ACCEL_OK)
        accel__null_timeline_fail(queue->timeline, cmd->seq, status, detail);
}

static void null_command_run(struct null_queue *queue, struct null_command *cmd)
{
    switch (cmd->kind) {
    case NULL_COMMAND_LAUNCH:
        null_command_launch(queue, cmd);
        break;
    case NULL_COMMAND_COPY:
        accel__null_copy_run(&cmd->u.copy);
        break;
    case NULL_COMMAND_WAIT:
        accel__null_timeline_wait(cmd->u.wait.timeline, cmd->u.wait.value);
        accel__null_timeline_release(cmd->u.wait.timeline);
        cmd->u.wait.timeline = NULL;
        break;
    case NULL_COMMAND_HOST_FUNC:
        cmd->u.host_func.fn(cmd->u.host_func.user);
        break;
    }
}

/*
 * Release what a command holds without running it: its device was lost. A
 * host function is not called either: the host hears of it at the reset.
 */
static void null_command_drop(struct null_command *cmd)
{
    switch (cmd->kind) {
    case NULL_COMMAND_LAUNCH:
        accel__null_launch_discard(&cmd->u.launch);
        break;
    case NULL_COMMAND_WAIT:
        accel__null_timeline_release(cmd->u.wait.timeline);
        cmd->u.wait.timeline = NULL;
        break;
    case NULL_COMMAND_COPY:
    case NULL_COMMAND_HOST_FUNC:
        break;
    }
}

/* Run a command, or drop it when the device is lost. */
static void null_queue_run_one(struct null_queue *queue, struct null_command *cmd)
{
    if (!atomic_load_explicit(queue->lost, memory_order_relaxed)) {
        bool other = cmd->kind != NULL_COMMAND_COPY;

        if (queue->delay_ns != 0)
            null_sleep_ns(queue->delay_ns);
        if (other)
            accel__null_timeline_set_other_running(queue->timeline, true);
        null_command_run(queue, cmd);
        if (other)
            accel__null_timeline_set_other_running(queue->timeline, false);
    } else {
        null_command_drop(cmd);
        accel__null_timeline_fail(
            queue->timeline, cmd->seq, ACCEL_ERR_DEVICE_LOST,
            "the null device was lost (ACCEL_NULL_LOSE_AT): its "
            "stream dropped the work it had not started");
    }
    if (cmd->kind == NULL_COMMAND_COPY)
        accel__null_timeline_copy_done(queue->timeline);
}

/* Keep up to NULL_QUEUE_SPARE_MAX finished commands; hand back the rest. */
static struct null_command *null_queue_keep_spares(struct null_queue *queue,
                                                   struct null_command *done)
{
    while (done != NULL && queue->spare_count < NULL_QUEUE_SPARE_MAX) {
        struct null_command *next = done->next;

        done->next = queue->spares;
        queue->spares = done;
        queue->spare_count++;
        done = next;
    }
    return done;
}

static void null_commands_free(struct null_command *list)
{
    while (list != NULL) {
        struct null_command *next = list->next;

        free(list);
        list = next;
    }
}

/* Take every pending command at once: one lock round per burst. */
static struct null_command *null_queue_detach_locked(struct null_queue *queue)
{
    struct null_command *batch = queue->head;

    queue->head = NULL;
    queue->tail = NULL;
    return batch;
}

/*
 * Poll, without the lock, until a command arrives past `completed`, the
 * queue stops, or the spin budget runs out; the caller then looks.
 */
static void null_queue_spin_for_work(struct null_queue *queue, uint64_t completed)
{
    struct null_backoff backoff;

    accel__null_backoff_init(&backoff, NULL_WORKER_SPIN_NS);
    while (atomic_load_explicit(&queue->submitted, memory_order_relaxed) ==
               completed &&
           !atomic_load_explicit(&queue->stopping, memory_order_relaxed) &&
           accel__null_backoff_step(&backoff))
        ;
}

/* Sleep until an enqueue signals; NULL means stopping and empty. */
static struct null_command *null_queue_sleep_for_work(struct null_queue *queue)
{
    struct null_command *batch;

    pthread_mutex_lock(&queue->lock);
    while (queue->head == NULL && !atomic_load(&queue->stopping)) {
        queue->worker_sleeping = true;
        pthread_cond_wait(&queue->work_ready, &queue->lock);
        queue->worker_sleeping = false;
    }
    batch = null_queue_detach_locked(queue);
    pthread_mutex_unlock(&queue->lock);
    return batch;
}

/*
 * Return the finished batch to the spares and take the next one; when
 * none is pending, spin for one, then sleep. NULL means the queue is
 * stopping and has run everything.
 */
static struct null_command *null_queue_next_batch(struct null_queue *queue,
                                                  struct null_command *done,
                                                  uint64_t completed)
{
    struct null_command *batch, *excess;

    pthread_mutex_lock(&queue->lock);
    excess = null_queue_keep_spares(queue, done);
    batch = null_queue_detach_locked(queue);
    pthread_mutex_unlock(&queue->lock);
    null_commands_free(excess);
    if (batch != NULL)
        return batch;
    null_queue_spin_for_work(queue, completed);
    return null_queue_sleep_for_work(queue);
}

static void *null_queue_worker(void *arg)
{
    struct null_queue *queue = arg;
    struct null_command *batch = NULL;
    uint64_t completed = 0;

    while ((batch = null_queue_next_batch(queue, batch, completed)) != NULL) {
        for (struct null_command *cmd = batch; cmd != NULL; cmd = cmd->next) {
            null_queue_run_one(queue, cmd);
            completed = cmd->seq;
            accel__null_timeline_signal(queue->timeline, completed);
        }
    }
    return NULL;
}

/* ---- the enqueue side ---- */

static accel_status null_queue_push(struct null_queue *queue,
                                    const struct null_command *proto)
{
    struct null_command *cmd;
    bool wake;

    pthread_mutex_lock(&queue->lock);
    cmd = queue->spares;
    if (cmd != NULL) {
        queue->spares = cmd->next;
        queue->spare_count--;
    } else {
        /* Not under the lock: the worker must not wait on malloc. */
        pthread_mutex_unlock(&queue->lock);
        cmd = malloc(sizeof(*cmd));
        if (cmd == NULL)
            return queue->services->set_error(
                ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "malloc of a stream command failed");
        pthread_mutex_lock(&queue->lock);
    }
    *cmd = *proto;
    cmd->next = NULL;
    /* Relaxed: the lock orders this load after the previous store. */
    cmd->seq = atomic_load_explicit(&queue->submitted, memory_order_relaxed) + 1;
    if (cmd->kind == NULL_COMMAND_COPY)
        accel__null_timeline_copy_queued(queue->timeline);
    if (queue->tail != NULL)
        queue->tail->next = cmd;
    else
        queue->head = cmd;
    queue->tail = cmd;
    atomic_store_explicit(&queue->submitted, cmd->seq, memory_order_release);
    wake = queue->worker_sleeping;
    pthread_mutex_unlock(&queue->lock);
    if (wake)
        pthread_cond_signal(&queue->work_ready);
    return ACCEL_OK;
}

/*
 * Run a small copy now, on the calling thread, when everything enqueued
 * before it has completed; false when it must be queued instead. The lock
 * is held throughout, so that nothing enqueued concurrently can run
 * alongside or ahead of it. The copy takes no place on the timeline: the
 * work enqueued before it has completed, so every event and sync that
 * could follow it already finds it done.
 */
static bool null_queue_copy_now(struct null_queue *queue,
                                const struct null_copy *copy)
{
    bool idle;

    uint64_t inline_max = copy->pattern_size != 0 ? NULL_QUEUE_INLINE_FILL_MAX
                                                  : NULL_QUEUE_INLINE_COPY_MAX;

    if (queue->delay_ns != 0 || accel__null_copy_bytes(copy) > inline_max)
        return false;
    /* Cheap refusal first: a busy stream is the common reason. */
    if (!accel__null_timeline_reached(
            queue->timeline,
            atomic_load_explicit(&queue->submitted, memory_order_acquire)))
        return false;
    pthread_mutex_lock(&queue->lock);
    idle = queue->head == NULL &&
           accel__null_timeline_reached(
               queue->timeline,
               atomic_load_explicit(&queue->submitted, memory_order_relaxed)) &&
           !atomic_load_explicit(queue->lost, memory_order_relaxed);
    if (idle)
        accel__null_copy_run(copy);
    pthread_mutex_unlock(&queue->lock);
    return idle;
}

static accel_status null_queue_push_copy(struct null_queue *queue,
                                         const struct null_copy *copy)
{
    struct null_command cmd = {.kind = NULL_COMMAND_COPY, .u.copy = *copy};

    return null_queue_push(queue, &cmd);
}

accel_status accel__null_queue_copy(struct null_queue *queue,
                                    const struct null_copy *copy)
{
    /* The command (a few hundred bytes to zero) is made only when queued. */
    if (null_queue_copy_now(queue, copy))
        return ACCEL_OK;
    return null_queue_push_copy(queue, copy);
}

accel_status accel__null_queue_wait(struct null_queue *queue,
                                    struct null_timeline *timeline,
                                    uint64_t value)
{
    struct null_command cmd = {.kind = NULL_COMMAND_WAIT};
    accel_status status;

    /* Most waits are for work that is already done: they cost nothing. */
    if (accel__null_timeline_reached(timeline, value))
        return ACCEL_OK;
    accel__null_timeline_retain(timeline);
    cmd.u.wait.timeline = timeline;
    cmd.u.wait.value = value;
    status = null_queue_push(queue, &cmd);
    if (status != ACCEL_OK)
        accel__null_timeline_release(timeline);
    return status;
}

accel_status accel__null_queue_launch(struct null_queue *queue,
                                      struct null_launch *launch)
{
    struct null_command cmd = {.kind = NULL_COMMAND_LAUNCH, .u.launch = *launch};
    accel_status status = null_queue_push(queue, &cmd);

    if (status != ACCEL_OK)
        accel__null_launch_discard(launch);
    return status;
}

accel_status accel__null_queue_host_func(struct null_queue *queue,
                                         void (*fn)(void *user), void *user)
{
    struct null_command cmd = {.kind = NULL_COMMAND_HOST_FUNC};

    cmd.u.host_func.fn = fn;
    cmd.u.host_func.user = user;
    return null_queue_push(queue, &cmd);
}

void accel__null_queue_position(struct null_queue *queue,
                                struct null_timeline **out_timeline,
                                uint64_t *out_value)
{
    accel__null_timeline_retain(queue->timeline);
    *out_timeline = queue->timeline;
    *out_value = atomic_load_explicit(&queue->submitted, memory_order_acquire);
}

accel_status accel__null_queue_sync(struct null_queue *queue)
{
    uint64_t target = atomic_load_explicit(&queue->submitted,
                                           memory_order_acquire);

    accel__null_timeline_wait(queue->timeline, target);
    return accel__null_timeline_status(queue->timeline, target, queue->services);
}

/* ---- life cycle ---- */

static accel_status null_queue_start_worker(struct null_queue *queue)
{
    int rc = null_thread_start(&queue->worker, null_queue_worker, queue,
                               "accel-null");

    if (rc != 0)
        return queue->services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "pthread_create failed for a stream worker: %s", null_errno_name(rc));
    return ACCEL_OK;
}

static accel_status null_queue_init_sync(struct null_queue *queue)
{
    int rc = pthread_mutex_init(&queue->lock, NULL);

    if (rc != 0)
        return queue->services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "pthread_mutex_init failed for a stream: %s", null_errno_name(rc));
    rc = pthread_cond_init(&queue->work_ready, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&queue->lock);
        return queue->services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "pthread_cond_init failed for a stream: %s", null_errno_name(rc));
    }
    return ACCEL_OK;
}

accel_status accel__null_queue_create(const struct accel_host_services *services,
                                      uint64_t delay_ns, const _Atomic bool *lost,
                                      struct null_queue **out_queue)
{
    struct null_queue *queue;
    accel_status status;

    *out_queue = NULL;
    queue = calloc(1, sizeof(*queue));
    if (queue == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of a stream queue failed");
    queue->services = services;
    queue->delay_ns = delay_ns;
    queue->lost = lost;
    atomic_init(&queue->submitted, 0);
    atomic_init(&queue->stopping, false);
    status = accel__null_timeline_create(services, &queue->timeline);
    if (status != ACCEL_OK)
        goto fail_free;
    status = null_queue_init_sync(queue);
    if (status != ACCEL_OK)
        goto fail_timeline;
    status = null_queue_start_worker(queue);
    if (status != ACCEL_OK)
        goto fail_sync;
    *out_queue = queue;
    return ACCEL_OK;

fail_sync:
    pthread_cond_destroy(&queue->work_ready);
    pthread_mutex_destroy(&queue->lock);
fail_timeline:
    accel__null_timeline_release(queue->timeline);
fail_free:
    free(queue);
    return status;
}

void accel__null_queue_destroy(struct null_queue *queue)
{
    if (queue == NULL)
        return;
    pthread_mutex_lock(&queue->lock);
    atomic_store(&queue->stopping, true);
    pthread_cond_signal(&queue->work_ready);
    pthread_mutex_unlock(&queue->lock);
    pthread_join(queue->worker, NULL);

    /* The worker drained the queue before it left; only spares remain. */
    null_commands_free(queue->spares);
    pthread_cond_destroy(&queue->work_ready);
    pthread_mutex_destroy(&queue->lock);
    accel__null_timeline_release(queue->timeline);
    free(queue);
}
