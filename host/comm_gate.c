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
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "os.h"
#include "status.h"

static const char *const kind_names[ACCEL_COMM_OP_KIND_COUNT] = {
    "allreduce", "broadcast",      "reduce", "allgather",
    "reduce_scatter", "send", "recv",   "barrier",
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
                 comm->rank,
                 (unsigned long long)(comm->timeout_ns / 1000000u), kind);
    else
        snprintf(op->why, sizeof op->why, "%s failed on rank %d: %s: %s", kind,
                 comm->rank, accel_status_name(status), accel_last_error());
    accel__comm_abort_for(comm, op->why);
}

/* Run one operation on the progress thread. */
static accel_status op_run(struct accel_comm *comm, struct accel__comm_op *op)
{
    if (atomic_load(&comm->aborted)) {
        op_failed(comm, op, ACCEL_ERR_COMM_ABORTED);
        return ACCEL_ERR_COMM_ABORTED;
    }
    op->desc.deadline_ns = comm->timeout_ns ? accel__now_ns() + comm->timeout_ns
                                            : 0;
    pthread_mutex_lock(&comm->calls);
    accel_status status = comm->provider->table.submit(comm->handle, &op->desc);
    pthread_mutex_unlock(&comm->calls);
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
            pthread_cond_wait(&comm->changed, &comm->lock);
        struct accel__comm_op *op = comm->ready;
        if (op == NULL)
            break;
        comm->ready = op->next_ready;
        if (comm->ready == NULL)
            comm->ready_tail = NULL;
        pthread_mutex_unlock(&comm->lock);
        accel_status status = op_run(comm, op);
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
    pthread_cond_broadcast(&comm->changed);
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
    pthread_cond_broadcast(&comm->changed);
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
    c->inflight--;
    pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->lock);
}
