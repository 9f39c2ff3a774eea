/*
 * The collectives of accel.h: their checks, then their submission under
 * the device lock, where refs become addresses and their slices are pinned
 * until the operation is over (accel__comm_reap lets them go).
 *
 * A stream-ordered provider (CAP_STREAM) enqueues the operation on the
 * stream's native handle itself; an event recorded behind it tells when it
 * is over. A host-run provider runs it on the caller's thread when the
 * stream is idle, else gets a gate on the stream (comm_gate.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "drop.h"
#include "host.h"
#include "refs.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/* One call's arguments, as the public function took them. */
struct op_call {
    const char *what;
    accel_comm_op_kind kind;
    const accel_ref *send; /* NULL when the kind has none */
    const accel_ref *recv;
    uint64_t count;
    accel_reduce_op reduce;
    int root; /* root or peer; NO_ROOT when the kind has none */
};

#define NO_ROOT INT_MIN

/* Whether the kind takes a root or a peer. Told by the kind, never by the
 * value: a caller's root of INT_MIN must be refused, not taken as none. */
static bool kind_has_root(accel_comm_op_kind kind)
{
    return kind == ACCEL_COMM_BROADCAST || kind == ACCEL_COMM_REDUCE ||
           kind == ACCEL_COMM_SEND || kind == ACCEL_COMM_RECV;
}

static bool kind_reduces(accel_comm_op_kind kind)
{
    return kind == ACCEL_COMM_ALLREDUCE || kind == ACCEL_COMM_REDUCE ||
           kind == ACCEL_COMM_REDUCE_SCATTER;
}

/* What can be checked before the device lock. */
static accel_status call_args(accel_comm *comm, accel_stream *stream,
                              const struct op_call *call)
{
    if (comm == NULL || stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL %s",
                            call->what, comm ? "stream" : "communicator");
    if (accel__process_check(comm->device->pid, call->what) != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    if (stream->device != comm->device)
        return accel__error(ACCEL_ERR_DEVICE_MISMATCH,
                            "%s: the stream is of %s:%u, the communicator's "
                            "device is %s:%u",
                            call->what, stream->device->plugin->name,
                            stream->device->index, comm->device->plugin->name,
                            comm->device->index);
    if (atomic_load(&comm->aborted))
        return accel__comm_aborted_error(comm, call->what);
    if (kind_reduces(call->kind) &&
        (unsigned)call->reduce >= ACCEL_REDUCE_OP_COUNT)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: reduction %d is not an accel_reduce_op",
                            call->what, (int)call->reduce);
    bool peer = call->kind == ACCEL_COMM_SEND || call->kind == ACCEL_COMM_RECV;
    if (kind_has_root(call->kind) && (call->root < 0 || call->root >= comm->size))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: %s %d is not a rank of the communicator "
                            "(0 to %d)",
                            call->what, peer ? "peer" : "root", call->root,
                            comm->size - 1);
    if (peer && call->root == comm->rank)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: the peer is this rank (%d)", call->what,
                            comm->rank);
    return ACCEL_OK;
}

/* Elements a ref must hold: count, or size * count for the gathered side. */
static accel_status room_check(const struct op_call *call, const accel_comm *comm,
                               const struct accel__slot *slot, bool is_recv)
{
    uint64_t need = call->count;
    if ((is_recv && call->kind == ACCEL_COMM_ALLGATHER) ||
        (!is_recv && call->kind == ACCEL_COMM_REDUCE_SCATTER)) {
        if (need > UINT64_MAX / (uint64_t)comm->size)
            need = UINT64_MAX;
        else
            need *= (uint64_t)comm->size;
    }
    if (need <= slot->count)
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                        "%s: the %s ref holds %llu elements, the operation "
                        "needs %llu",
                        call->what, is_recv ? "recv" : "send",
                        (unsigned long long)slot->count,
                        (unsigned long long)need);
}

/* Resolve the refs (device lock held): slots, type and room. */
static accel_status refs_resolve(accel_comm *comm, const struct op_call *call,
                                 struct accel__slot **out_send,
                                 struct accel__slot **out_recv)
{
    accel_device *device = comm->device;
    *out_send = *out_recv = NULL;
    accel_status status = ACCEL_OK;
    if (call->send != NULL)
        status = accel__ref_resolve(device, *call->send, out_send);
    if (status == ACCEL_OK && call->recv != NULL)
        status = accel__ref_resolve(device, *call->recv, out_recv);
    if (status != ACCEL_OK)
        return status;
    if (*out_send != NULL && *out_recv != NULL &&
        (*out_send)->type != (*out_recv)->type)
        return accel__error(
            ACCEL_ERR_TYPE_MISMATCH, "%s: send is %s, recv is %s", call->what,
            accel_elem_type_name((accel_elem_type)(*out_send)->type),
            accel_elem_type_name((accel_elem_type)(*out_recv)->type));
    if (*out_send != NULL)
        status = room_check(call, comm, *out_send, false);
    if (status == ACCEL_OK && *out_recv != NULL)
        status = room_check(call, comm, *out_recv, true);
    return status;
}

static void op_describe(accel_comm *comm, const struct op_call *call,
                        const struct accel__slot *send,
                        const struct accel__slot *recv, struct accel__comm_op *op)
{
    const struct accel__slot *any = send ? send : recv;
    op->desc = (struct accel_comm_op){
        .struct_size = sizeof op->desc,
        .kind = (uint32_t)call->kind,
        .type = any ? any->type : ACCEL_BYTE,
        .reduce_op = kind_reduces(call->kind) ? (uint32_t)call->reduce : 0,
        .count = call->count,
        .root = kind_has_root(call->kind) ? call->root : 0,
        .memory = comm->memory,
        .send = send ? send->slice.address : 0,
        .recv = recv ? recv->slice.address : 0,
    };
    /* Each distinct slice is pinned once per operation. */
    if (send != NULL)
        op->pins[op->pin_count++] = send->slice;
    if (recv != NULL && recv != send)
        op->pins[op->pin_count++] = recv->slice;
}

void accel__comm_op_track(struct accel__comm_op *op, struct accel__slot *send,
                          struct accel__slot *recv)
{
    accel_stream *stream = op->stream;
    struct accel__comm_device *c = &op->device->comm;
    for (uint32_t i = 0; i < op->pin_count; i++)
        accel__pool_pin(op->pins[i]);
    /* A free waits for the stream to pass the operation. */
    if (send != NULL)
        send->lanes |= accel__lane_bit(stream);
    if (recv != NULL)
        recv->lanes |= accel__lane_bit(stream);
    pthread_mutex_lock(&c->lock);
    op->next = c->ops;
    c->ops = op;
    pthread_mutex_unlock(&c->lock);
}

/* Host-run: the gate, counted on the communicator before it can run. */
accel_status accel__comm_submit_gated(accel_comm *comm, accel_stream *stream,
                                      struct accel__comm_op *op,
                                      struct accel__slot *send,
                                      struct accel__slot *recv)
{
    accel_device *device = comm->device;
    pthread_mutex_lock(&comm->lock);
    comm->pending++;
    pthread_mutex_unlock(&comm->lock);
    accel__comm_op_track(op, send, recv);
    accel_status status = ACCEL__DRV_CALL(device, host_func, stream->drv,
                                          accel__comm_gate, op);
    if (status != ACCEL_OK) {
        /* Never enqueued: finish it here; the reap lets its pins go. */
        struct accel__comm_device *c = &device->comm;
        pthread_mutex_lock(&c->lock);
        op->started = true;
        pthread_mutex_unlock(&c->lock);
        op->status = ACCEL_OK; /* nothing to report on the stream */
        accel__comm_op_finish(op);
    }
    return status;
}

/* CAP_STREAM: the provider enqueues on the native stream itself. */
static accel_status submit_stream(accel_comm *comm, accel_stream *stream,
                                  struct accel__comm_op *op,
                                  struct accel__slot *send,
                                  struct accel__slot *recv)
{
    accel_device *device = comm->device;
    struct accel_native_handles native = {.struct_size = sizeof native};
    accel_status status = ACCEL__DRV_CALL(device, native_handles, stream->drv,
                                          &native);
    accel_drv_event *event = NULL;
    if (status == ACCEL_OK)
        status = accel__event_take(device, &event);
    if (status != ACCEL_OK)
        return status;
    op->desc.stream = native.stream;
    op->desc.memory = native.kind;
    pthread_mutex_lock(&comm->calls);
    status = comm->provider->table.submit(comm->handle, &op->desc);
    pthread_mutex_unlock(&comm->calls);
    if (status != ACCEL_OK) {
        accel__event_give(device, event);
        status = accel__from_plugin(status, "submit");
        char why[256];
        snprintf(why, sizeof why, "%s", accel_last_error());
        accel__comm_abort_for(comm, why);
        return status;
    }
    status = ACCEL__DRV_CALL(device, event_record, event, stream->drv);
    if (status != ACCEL_OK) {
        /* Without its event the op cannot be seen to end: wait for it. */
        (void)ACCEL__DRV_TRY(device, stream_sync, stream->drv);
        accel__event_give(device, event);
        return status;
    }
    op->event = event;
    accel__comm_op_track(op, send, recv);
    return ACCEL_OK;
}

static accel_status op_submit(accel_comm *comm, accel_stream *stream,
                              const struct op_call *call)
{
    accel_status status = call_args(comm, stream, call);
    if (status == ACCEL_OK)
        status = accel__submit_begin(stream, call->what);
    if (status != ACCEL_OK)
        return status;
    struct accel__slot *send = NULL, *recv = NULL;
    status = refs_resolve(comm, call, &send, &recv);
    /* A count of 0 moves nothing: no rank waits for another. */
    if (status != ACCEL_OK ||
        (call->count == 0 && call->kind != ACCEL_COMM_BARRIER)) {
        pthread_mutex_unlock(&comm->device->lock);
        return status;
    }
    struct accel__comm_op *op = calloc(1, sizeof *op);
    if (op == NULL) {
        pthread_mutex_unlock(&comm->device->lock);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "%s", call->what);
    }
    op->comm = comm;
    op->device = comm->device;
    op->stream = stream;
    op_describe(comm, call, send, recv, op);
    /* Host-run on an idle stream: on this thread, once the lock is gone. */
    bool here = false;
    if (accel__comm_staged(comm))
        status = accel__comm_stage_submit(comm, stream, op, send, recv);
    else if (!comm->host_run)
        status = submit_stream(comm, stream, op, send, recv);
    else if (!(here = accel__comm_take_here(op, send, recv)))
        status = accel__comm_submit_gated(comm, stream, op, send, recv);
    if (status != ACCEL_OK && !comm->host_run)
        free(op);
    accel__trace_device_mark(comm->device, call->what, 0);
    status = accel__submit_end(stream, status);
    if (here)
        accel__comm_run_here(op); /* a failure is the stream's, as gated */
    return status;
}

static accel_status op_traced(accel_comm *comm, accel_stream *stream,
                              const struct op_call *call)
{
    struct accel__traced traced = accel__trace_begin(call->what);
    accel_status status = op_submit(comm, stream, call);
    return accel__trace_end(traced, status, 0);
}

accel_status accel_allreduce(accel_comm *comm, accel_stream *stream,
                             accel_ref send, accel_ref recv, uint64_t count,
                             accel_reduce_op op)
{
    struct op_call call = {"accel_allreduce",
                           ACCEL_COMM_ALLREDUCE,
                           &send,
                           &recv,
                           count,
                           op,
                           NO_ROOT};
    return op_traced(comm, stream, &call);
}

accel_status accel_broadcast(accel_comm *comm, accel_stream *stream,
                             accel_ref send, accel_ref recv, uint64_t count,
                             int root)
{
    struct op_call call = {"accel_broadcast",
                           ACCEL_COMM_BROADCAST,
                           &send,
                           &recv,
                           count,
                           ACCEL_REDUCE_SUM,
                           root};
    return op_traced(comm, stream, &call);
}

accel_status accel_reduce(accel_comm *comm, accel_stream *stream,
                          accel_ref send, accel_ref recv, uint64_t count,
                          accel_reduce_op op, int root)
{
    struct op_call call = {
        "accel_reduce", ACCEL_COMM_REDUCE, &send, &recv, count, op, root};
    return op_traced(comm, stream, &call);
}

accel_status accel_allgather(accel_comm *comm, accel_stream *stream,
                             accel_ref send, accel_ref recv, uint64_t count)
{
    struct op_call call = {"accel_allgather",
                           ACCEL_COMM_ALLGATHER,
                           &send,
                           &recv,
                           count,
                           ACCEL_REDUCE_SUM,
                           NO_ROOT};
    return op_traced(comm, stream, &call);
}

accel_status accel_reduce_scatter(accel_comm *comm, accel_stream *stream,
                                  accel_ref send, accel_ref recv,
                                  uint64_t count, accel_reduce_op op)
{
    struct op_call call = {"accel_reduce_scatter",
                           ACCEL_COMM_REDUCE_SCATTER,
                           &send,
                           &recv,
                           count,
                           op,
                           NO_ROOT};
    return op_traced(comm, stream, &call);
}

accel_status accel_send(accel_comm *comm, accel_stream *stream, accel_ref send,
                        uint64_t count, int peer)
{
    struct op_call call = {"accel_send", ACCEL_COMM_SEND,  &send, NULL,
                           count,        ACCEL_REDUCE_SUM, peer};
    return op_traced(comm, stream, &call);
}

accel_status accel_recv(accel_comm *comm, accel_stream *stream, accel_ref recv,
                        uint64_t count, int peer)
{
    struct op_call call = {"accel_recv", ACCEL_COMM_RECV,  NULL, &recv,
                           count,        ACCEL_REDUCE_SUM, peer};
    return op_traced(comm, stream, &call);
}

accel_status accel_comm_barrier(accel_comm *comm, accel_stream *stream)
{
    struct op_call call = {"accel_comm_barrier",
                           ACCEL_COMM_BARRIER,
                           NULL,
                           NULL,
                           0,
                           ACCEL_REDUCE_SUM,
                           NO_ROOT};
    return op_traced(comm, stream, &call);
}

/* ---- native handles ---- */

static accel_status stream_native_untraced(accel_stream *stream,
                                           struct accel_native_handles *out)
{
    if (stream == NULL || out == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_stream_native: NULL argument");
    if (out->struct_size < sizeof *out)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_stream_native: struct_size %u is less than "
                            "%zu",
                            (unsigned)out->struct_size, sizeof *out);
    accel_device *device = stream->device;
    if (accel__process_check(device->pid, "accel_stream_native") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    if (!ACCEL__DRV_HAS(device, native_handles))
        return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                            "accel_stream_native: plugin '%s' has no "
                            "native_handles entry",
                            device->plugin->name);
    accel_status status = accel__submit_begin(stream, "accel_stream_native");
    if (status != ACCEL_OK)
        return status;
    struct accel_native_handles native = {.struct_size = sizeof native};
    status = ACCEL__DRV_CALL(device, native_handles, stream->drv, &native);
    if (status == ACCEL_OK) {
        native.struct_size = (uint32_t)sizeof native;
        memcpy(out, &native, sizeof native);
    }
    return accel__submit_end(stream, status);
}

accel_status accel_stream_native(accel_stream *stream,
                                 struct accel_native_handles *out)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = stream_native_untraced(stream, out);
    return accel__trace_end(traced, status, 0);
}

accel_status accel__comm_gather_on_device(accel_comm *comm, const int32_t *mine,
                                          int32_t *all, uint64_t count)
{
    accel_device *device = comm->device;
    accel_stream *stream = NULL;
    accel_ref send, recv;
    bool have_send = false, have_recv = false;
    accel_status status = accel_stream_create(device, &stream);
    if (status == ACCEL_OK)
        have_send = (status = accel_alloc(device, ACCEL_I32, count, &send)) ==
                    ACCEL_OK;
    if (status == ACCEL_OK)
        have_recv = (status = accel_alloc(device, ACCEL_I32,
                                          count * (uint64_t)comm->size,
                                          &recv)) == ACCEL_OK;
    if (status == ACCEL_OK)
        status = accel_copy_to_device(stream, send, 0, mine, count * 4);
    if (status == ACCEL_OK)
        status = accel_allgather(comm, stream, send, recv, count);
    if (status == ACCEL_OK)
        status = accel_copy_to_host(stream, all, recv, 0,
                                    count * 4 * (size_t)comm->size);
    if (status == ACCEL_OK)
        status = accel_stream_sync(stream);
    /* The failed call's reason, kept before the clean-up's calls. */
    char why[256] = "";
    if (status != ACCEL_OK)
        snprintf(why, sizeof why, "%s", accel_last_error());
    if (have_recv)
        accel_free(device, recv);
    if (have_send)
        accel_free(device, send);
    accel_stream_destroy(stream);
    if (status != ACCEL_OK)
        return accel__error(status,
                            "gathering every rank's values on the "
                            "device: %s",
                            why);
    return ACCEL_OK;
}
