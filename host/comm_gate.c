/*
 * The stream gate and the progress thread of host-run communicators (mpi,
 * host): how an operation the host runs itself is ordered with a stream.
 *
 * The collective enqueues a host function, the gate, on its stream. When
 * the stream reaches it (every earlier command complete), the gate hands
 * the operation to the communicator's progress thread and blocks until it
 * is done, so that later commands of the stream wait for it. The progress
 * thread calls the provider's submit, one operation at a time, with a
 * deadline from ACCEL_COMM_TIMEOUT_MS; a failure or a timeout aborts the
 * communicator (its later operations fail at once) and is reported on the
 * stream's next sync. The gate runs on the plugin's thread (driver.h
 * host_func: it may block until the collective completes, at most the
 * timeout), and neither it nor the progress thread takes the device lock.
 *
 * On an idle stream the gate and the progress thread are skipped: the
 * caller runs the operation itself once the device lock is gone (two
 * thread hand-offs fewer, which on a few cores cost more than a small
 * collective). A hold, a host function that waits for the operation to
 * finish, keeps the stream's later commands back instead of the gate.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "drop.h"
#include "os.h"
#include "status.h"
#include "stream.h"
#include "submit.h"

static const char *const kind_names[ACCEL_COMM_OP_KIND_COUNT] = {
    "allreduce",      "broadcast", "reduce", "allgather",
    "reduce_scatter", "send",      "recv",   "barrier",
};

/* Why a failed operation failed, and the communicator aborted for it. */
static void op_failed(struct accel_comm *comm, struct accel__comm_op *op,
                      accel_status status)
{
    const char *kind = kind_names[op->desc.kind];
    if (atomic_load(&comm->aborted)) {
        pthread_mutex_lock(&comm->lock);
        snprintf(op->why, sizeof op->why, "%s", comm->why);
        pthread_mutex_unlock(&comm->lock);
        return;
    }
    if (status == ACCEL_ERR_TIMEOUT)
        snprintf(op->why, sizeof op->why,
                 "rank %d waited %llu ms for the other ranks in %s "
                 "(ACCEL_COMM_TIMEOUT_MS)",
                 comm->rank, (unsigned long long)(comm->timeout_ns / 1000000u),
                 kind);
    else
        snprintf(op->why, sizeof op->why, "%s failed on rank %d: %s: %s", kind,
                 comm->rank, accel_status_name(status), accel_last_error());
    accel__comm_abort_for(comm, op->why);
}

/* Run one operation, the communicator's `calls` held. */
static accel_status op_run_held(struct accel_comm *comm, struct accel__comm_op *op)
{
    if (atomic_load(&comm->aborted)) {
        op_failed(comm, op, ACCEL_ERR_COMM_ABORTED);
        return ACCEL_ERR_COMM_ABORTED;
    }
    op->desc.deadline_ns = comm->timeout_ns ? accel__now_ns() + comm->timeout_ns
                                            : 0;
    accel_status status = comm->provider->table.submit(comm->handle, &op->desc);
    if (status == ACCEL_OK)
        return ACCEL_OK;
    if (!accel__status_is_known((int)status))
        status = ACCEL_ERR_PLUGIN_ABI;
    op_failed(comm, op, status);
    return ACCEL_ERR_COMM_ABORTED;
}

static void *progress_main(void *arg)
{
    struct accel_comm *comm = arg;
    pthread_mutex_lock(&comm->lock);
    for (;;) {
        while (comm->ready == NULL && !comm->stopping)
            pthread_cond_wait(&comm->work, &comm->lock);
        struct accel__comm_op *op = comm->ready;
        if (op == NULL)
            break;
        comm->ready = op->next_ready;
        if (comm->ready == NULL)
            comm->ready_tail = NULL;
        pthread_mutex_unlock(&comm->lock);
        pthread_mutex_lock(&comm->calls);
        accel_status status = op_run_held(comm, op);
        pthread_mutex_unlock(&comm->calls);
        pthread_mutex_lock(&comm->lock);
        op->status = status;
        op->ran = true;
        pthread_cond_broadcast(&comm->changed);
    }
    pthread_mutex_unlock(&comm->lock);
    return NULL;
}

accel_status accel__comm_progress_start(struct accel_comm *comm)
{
    if (pthread_create(&comm->thread, NULL, progress_main, comm) != 0)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "pthread_create for the progress thread");
    comm->thread_started = true;
    return ACCEL_OK;
}

void accel__comm_progress_stop(struct accel_comm *comm)
{
    if (!comm->thread_started)
        return;
    pthread_mutex_lock(&comm->lock);
    comm->stopping = true;
    pthread_cond_signal(&comm->work);
    pthread_mutex_unlock(&comm->lock);
    pthread_join(comm->thread, NULL);
    comm->thread_started = false;
}

void accel__comm_gate(void *user)
{
    struct accel__comm_op *op = user;
    struct accel__comm_device *c = &op->device->comm;
    pthread_mutex_lock(&c->lock);
    bool abandoned = op->started;
    op->started = true;
    pthread_mutex_unlock(&c->lock);
    if (abandoned)
        return;
    struct accel_comm *comm = op->comm;
    pthread_mutex_lock(&comm->lock);
    if (comm->ready_tail != NULL)
        comm->ready_tail->next_ready = op;
    else
        comm->ready = op;
    comm->ready_tail = op;
    pthread_cond_signal(&comm->work);
    while (!op->ran)
        pthread_cond_wait(&comm->changed, &comm->lock);
    pthread_mutex_unlock(&comm->lock);
    accel__comm_op_finish(op);
}

void accel__comm_op_finish(struct accel__comm_op *op)
{
    struct accel_comm *comm = op->comm;
    pthread_mutex_lock(&comm->lock);
    comm->pending--;
    pthread_cond_broadcast(&comm->changed);
    pthread_mutex_unlock(&comm->lock);
    /* The communicator may be gone from here on; the op and its device
     * are not (the op is freed by a reap, once finished). */
    struct accel__comm_device *c = &op->device->comm;
    pthread_mutex_lock(&c->lock);
    if (op->status != ACCEL_OK && !op->stream->comm_failed) {
        op->stream->comm_failed = true;
        snprintf(op->stream->comm_failure, sizeof op->stream->comm_failure,
                 "%s", op->why);
    }
    op->finished = true;
    pthread_cond_broadcast(&c->finished);
    pthread_mutex_unlock(&c->lock);
}

/* ---- on the caller's thread ---- */

bool accel__comm_inline_wanted(bool host_memory, bool loopback)
{
    /* A GPU's memory is written by the stream's kernels until the stream
     * says otherwise: only host-visible memory is handed over here. */
    if (!host_memory)
        return false;
    const char *text = accel__getenv("ACCEL_COMM_INLINE");
    if (text == NULL || *text == '\0')
        return !loopback;
    if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0)
        return text[0] == '1';
    accel__log(ACCEL_LOG_WARN,
               "ACCEL_COMM_INLINE='%s' is not 0 or 1: the default is used", text);
    return !loopback;
}

/*
 * Everything enqueued on the stream has completed: an event recorded now
 * has too (the null plugin completes a record on an idle stream at once;
 * a GPU driver's query is as cheap). Device lock held.
 */
static bool stream_idle(accel_device *device, accel_stream *stream)
{
    accel_drv_event *event = NULL;
    if (accel__event_take(device, &event) != ACCEL_OK)
        return false;
    bool idle = ACCEL__DRV_TRY(device, event_record, event, stream->drv) ==
                    ACCEL_OK &&
                ACCEL__DRV_TRY(device, event_query, event) == ACCEL_OK;
    accel__event_give(device, event);
    return idle;
}

/* The hold: keeps the stream's later commands back until the op run on
 * its caller has finished, then lets the op be reaped. */
static void hold_main(void *user)
{
    struct accel__comm_op *op = user;
    struct accel__comm_device *c = &op->device->comm;
    pthread_mutex_lock(&c->lock);
    while (!op->finished)
        pthread_cond_wait(&c->finished, &c->lock);
    op->hold_ran = true;
    pthread_mutex_unlock(&c->lock);
}

/* Count the op on its communicator if it is the only one there. */
static bool take_alone(struct accel_comm *comm)
{
    pthread_mutex_lock(&comm->lock);
    bool alone = comm->pending == 0;
    if (alone)
        comm->pending++;
    pthread_mutex_unlock(&comm->lock);
    return alone;
}

static void untake(struct accel_comm *comm)
{
    pthread_mutex_lock(&comm->lock);
    comm->pending--;
    pthread_cond_broadcast(&comm->changed);
    pthread_mutex_unlock(&comm->lock);
}

/*
 * The conditions, each for an ordering guarantee: the stream idle (the op
 * needs to wait for nothing before it), nothing else of the communicator
 * pending (ops of one communicator run in the order they were called, as
 * on its progress thread), and its `calls` free now (taken before the
 * device lock goes, so that no op of the communicator enqueued after this
 * one can reach the provider first). Device lock held.
 */
bool accel__comm_take_here(struct accel__comm_op *op, struct accel__slot *send,
                           struct accel__slot *recv)
{
    struct accel_comm *comm = op->comm;
    accel_device *device = op->device;
    if (!comm->run_here || !ACCEL__DRV_HAS(device, host_func) ||
        !stream_idle(device, op->stream))
        return false;
    if (pthread_mutex_trylock(&comm->calls) != 0)
        return false;
    if (!take_alone(comm)) {
        pthread_mutex_unlock(&comm->calls);
        return false;
    }
    op->held = true;
    op->started = true; /* not a gate to abandon at a reset */
    if (ACCEL__DRV_TRY(device, host_func, op->stream->drv, hold_main, op) !=
        ACCEL_OK) {
        op->held = op->started = false;
        untake(comm);
        pthread_mutex_unlock(&comm->calls);
        return false; /* the gate's enqueue will say why */
    }
    accel__comm_op_track(op, send, recv);
    return true;
}

void accel__comm_run_here(struct accel__comm_op *op)
{
    struct accel_comm *comm = op->comm;
    accel_status status = op_run_held(comm, op);
    pthread_mutex_unlock(&comm->calls);
    pthread_mutex_lock(&comm->lock);
    op->status = status;
    op->ran = true;
    pthread_mutex_unlock(&comm->lock);
    /* A failure is on the stream before the hold lets a sync through. */
    accel__comm_op_finish(op);
}
