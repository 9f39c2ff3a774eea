/*
 * Staging of host-run collectives (mpi without GPU support, host) on a
 * device whose memory the host cannot see: each collective becomes, on its
 * stream, a copy of its send elements into pinned host memory, the gate
 * (comm_gate.c) running the provider on that host memory, and a copy of
 * the result back into the recv ref. Everything is stream-ordered: the
 * call returns at once, as an unstaged collective's does.
 *
 * An operation larger than the staging buffer goes in chunks of elements,
 * each chunk a collective of its own (copy in, gate, copy out), so that the
 * pinned memory stays bounded whatever the count. A chunk of an all-gather
 * or a reduce-scatter carries every rank's share at its offset: the copy
 * on that side is strided (one row per rank).
 *
 * Each communicator has one pinned buffer, made at its first staged
 * collective (host_alloc, ACCEL_STAGING_CHUNK twice over: send and recv
 * halves) and an event recorded behind the last copy out of it. The buffer
 * is free again as soon as a submission has enqueued its copies: the next
 * collective's stream waits for that event before it writes the buffer
 * (stream_wait_event), so nothing on the host waits and collectives on two
 * streams of one communicator never share the buffer at once. The device
 * lock, held by every submission, makes the buffer's users one at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "drop.h"
#include "layout.h"
#include "refs.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/* The largest element (f64, i64, u64): a buffer holds one per rank and
 * one more, so that a chunk of one element always fits. */
#define STAGE_ELEM_MAX 8u

struct accel__comm_stage {
    void *ptr; /* pinned, `bytes` */
    uint64_t bytes;
    accel_drv_event *event; /* recorded behind the last copy out */
    bool recorded;
};

bool accel__comm_staged(const struct accel_comm *comm)
{
    return comm->host_run && comm->host_memory &&
           (comm->device->props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE) == 0;
}

/* ---- the buffer (device lock held) ---- */

static uint64_t stage_bytes(const struct accel_comm *comm)
{
    uint64_t bytes = 2 * comm->device->staging.chunk;
    uint64_t least = STAGE_ELEM_MAX * ((uint64_t)comm->size + 1);
    return bytes > least ? bytes : least;
}

/* The communicator's buffer, made at first use; the stream waits for its
 * last user. */
static accel_status stage_get(struct accel_comm *comm, accel_stream *stream,
                              struct accel__comm_stage **out_stage)
{
    accel_device *device = comm->device;
    struct accel__comm_stage *stage = comm->stage;
    if (stage != NULL) {
        *out_stage = stage;
        if (!stage->recorded)
            return ACCEL_OK;
        return ACCEL__DRV_CALL(device, stream_wait_event, stream->drv,
                               stage->event);
    }
    stage = calloc(1, sizeof *stage);
    if (stage == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "staging buffer");
    stage->bytes = stage_bytes(comm);
    accel_status status = ACCEL__DRV_CALL(device, host_alloc,
                                          (size_t)stage->bytes, &stage->ptr);
    if (status == ACCEL_OK) {
        status = accel__event_take(device, &stage->event);
        if (status != ACCEL_OK)
            ACCEL__DRV_VOID(device, host_free, stage->ptr);
    }
    if (status != ACCEL_OK) {
        free(stage);
        return status;
    }
    comm->stage = stage;
    *out_stage = stage;
    return ACCEL_OK;
}

void accel__comm_stage_drop(struct accel_comm *comm)
{
    struct accel__comm_stage *stage = comm->stage;
    if (stage == NULL)
        return;
    accel_device *device = comm->device;
    /* The last copies out of it may still be running. */
    if (stage->recorded)
        (void)ACCEL__DRV_TRY(device, event_sync, stage->event);
    accel__event_give(device, stage->event);
    ACCEL__DRV_VOID(device, host_free, stage->ptr);
    free(stage);
    comm->stage = NULL;
}

void accel__comm_stage_free(struct accel_comm *comm)
{
    if (comm->stage == NULL)
        return;
    accel_device *device = comm->device;
    pthread_mutex_lock(&device->lock);
    accel__comm_stage_drop(comm);
    pthread_mutex_unlock(&device->lock);
}

/* ---- one staged collective ---- */

/* What a collective's chunk moves, in elements of `elem` bytes. */
struct stage_plan {
    struct accel_comm *comm;
    accel_stream *stream;
    const struct accel__comm_op *op; /* the whole operation */
    struct accel__comm_stage *stage;
    uint64_t elem;
    uint64_t send_rows, recv_rows; /* rows of a chunk per side; 0: none */
    bool copy_in, copy_out;
    uint64_t per_chunk; /* elements of one chunk */
};

static void plan_make(struct stage_plan *plan)
{
    const struct accel_comm_op *d = &plan->op->desc;
    uint64_t size = (uint64_t)plan->comm->size;
    bool root = plan->comm->rank == d->root;
    plan->elem = accel_elem_size((accel_elem_type)d->type);
    plan->send_rows = d->send == 0                           ? 0
                      : d->kind == ACCEL_COMM_REDUCE_SCATTER ? size
                                                             : 1;
    plan->recv_rows = d->recv == 0                      ? 0
                      : d->kind == ACCEL_COMM_ALLGATHER ? size
                                                        : 1;
    /* Only the root's send is read in a broadcast, only the root's recv
     * is written in a reduce: the others' are left alone. */
    plan->copy_in = plan->send_rows > 0 &&
                    (d->kind != ACCEL_COMM_BROADCAST || root);
    plan->copy_out = plan->recv_rows > 0 &&
                     (d->kind != ACCEL_COMM_REDUCE || root);
    uint64_t rows = plan->send_rows + plan->recv_rows;
    plan->per_chunk = plan->stage->bytes / (plan->elem * rows);
}

/* Rows of `bytes` each, `pitch` apart on the device from `device_at`, and
 * packed on the host: the layout of one side's copy. */
static accel_status layout_make(const struct stage_plan *plan,
                                bool host_is_source, uint64_t rows,
                                uint64_t bytes, uint64_t device_at,
                                struct accel_copy_layout *out)
{
    uint64_t pitch = plan->op->desc.count * plan->elem;
    uint64_t device_limit = device_at + (rows - 1) * pitch + bytes;
    struct accel_copy_layout raw = {
        .src_offset = host_is_source ? 0 : device_at,
        .dst_offset = host_is_source ? device_at : 0,
        .row_bytes = bytes,
        .rows = rows,
        .src_pitch = host_is_source ? bytes : pitch,
        .dst_pitch = host_is_source ? pitch : bytes,
        .depth = 1,
    };
    return accel__layout_normalize(
        &raw, host_is_source ? rows * bytes : device_limit,
        host_is_source ? device_limit : rows * bytes, out);
}

static accel_status copy_in(const struct stage_plan *plan, uint64_t off,
                            uint64_t count)
{
    struct accel_copy_layout layout;
    uint64_t bytes = count * plan->elem;
    accel_status status = layout_make(plan, false, plan->send_rows, bytes,
                                      off * plan->elem, &layout);
    if (status != ACCEL_OK)
        return status;
    return ACCEL__DRV_COMMAND(
        plan->stream,
        (&(struct accel__trace_command){.kind = ACCEL__TRACE_COPY_D2H,
                                        .bytes = accel__layout_bytes(&layout)}),
        copy_to_host, plan->stage->ptr, plan->op->desc.send, &layout);
}

static accel_status copy_out(const struct stage_plan *plan, void *from,
                             uint64_t off, uint64_t count)
{
    struct accel_copy_layout layout;
    uint64_t bytes = count * plan->elem;
    accel_status status = layout_make(plan, true, plan->recv_rows, bytes,
                                      off * plan->elem, &layout);
    if (status != ACCEL_OK)
        return status;
    return ACCEL__DRV_COMMAND(
        plan->stream,
        (&(struct accel__trace_command){.kind = ACCEL__TRACE_COPY_H2D,
                                        .bytes = accel__layout_bytes(&layout)}),
        copy_to_device, plan->op->desc.recv, from, &layout);
}

/* One chunk: copy in, the gate on host memory, copy out. */
static accel_status chunk_submit(const struct stage_plan *plan, uint64_t off,
                                 uint64_t count, struct accel__slot *send,
                                 struct accel__slot *recv)
{
    uint8_t *send_area = plan->stage->ptr;
    uint8_t *recv_area = send_area + plan->send_rows * count * plan->elem;
    accel_status status = plan->copy_in ? copy_in(plan, off, count) : ACCEL_OK;
    if (status != ACCEL_OK)
        return status;
    struct accel__comm_op *chunk = malloc(sizeof *chunk);
    if (chunk == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "staged collective");
    *chunk = *plan->op;
    chunk->desc.count = count;
    chunk->desc.send = plan->send_rows ? (uint64_t)(uintptr_t)send_area : 0;
    chunk->desc.recv = plan->recv_rows ? (uint64_t)(uintptr_t)recv_area : 0;
    status = accel__comm_submit_gated(plan->comm, plan->stream, chunk, send,
                                      recv);
    if (status == ACCEL_OK && plan->copy_out)
        status = copy_out(plan, recv_area, off, count);
    return status;
}

/* A failure part way leaves the ranks out of step: the communicator is
 * aborted, so that the other ranks fail now rather than at the timeout. */
static accel_status stage_failed(struct accel_comm *comm, accel_status status)
{
    char detail[512];
    snprintf(detail, sizeof detail, "%s", accel_last_error());
    char why[256];
    snprintf(why, sizeof why,
             "staging a collective through host memory failed on rank %d: "
             "%s: %.150s",
             comm->rank, accel_status_name(status), detail);
    accel__comm_abort_for(comm, why);
    /* The provider's abort may have set the thread's error: this one's. */
    return accel__error(status, "%s", detail);
}

accel_status accel__comm_stage_submit(struct accel_comm *comm,
                                      accel_stream *stream,
                                      struct accel__comm_op *op,
                                      struct accel__slot *send,
                                      struct accel__slot *recv)
{
    if (op->desc.kind == ACCEL_COMM_BARRIER)
        return accel__comm_submit_gated(comm, stream, op, send, recv);
    struct stage_plan plan = {.comm = comm, .stream = stream, .op = op};
    accel_status status = stage_get(comm, stream, &plan.stage);
    if (status != ACCEL_OK) {
        free(op);
        return stage_failed(comm, status);
    }
    plan_make(&plan);
    uint64_t total = op->desc.count;
    for (uint64_t off = 0; status == ACCEL_OK && off < total;) {
        uint64_t count = total - off < plan.per_chunk ? total - off
                                                      : plan.per_chunk;
        status = chunk_submit(&plan, off, count, send, recv);
        off += count;
    }
    free(op);
    if (status != ACCEL_OK)
        status = stage_failed(comm, status);
    /* The next user of the buffer waits for this one's last copy out. */
    accel_device *device = comm->device;
    accel_status recorded = ACCEL__DRV_CALL(device, event_record,
                                            comm->stage->event, stream->drv);
    comm->stage->recorded = recorded == ACCEL_OK;
    if (recorded != ACCEL_OK) {
        /* Without its event the buffer's last use cannot be seen to end:
         * wait for it (the communicator is aborted, no gate waits long). */
        if (status == ACCEL_OK)
            status = stage_failed(comm, recorded);
        (void)ACCEL__DRV_TRY(device, stream_sync, stream->drv);
    }
    return status;
}
