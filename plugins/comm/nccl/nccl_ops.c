/*
 * submit: one operation enqueued on the native stream, with the rank's
 * device current.
 *
 * Element types: the reducing kinds (all-reduce, reduce, reduce-scatter)
 * need NCCL to know the type, and NCCL has no 16-bit integers, nor
 * bfloat16 before 2.10: those are refused with ACCEL_ERR_NOT_SUPPORTED
 * and the reason. The kinds that only move data (broadcast, all-gather,
 * send, recv) move bytes, so every type goes.
 *
 * In place (send == recv): NCCL's in-place all-gather takes the rank's
 * own share where it lands in recv (recv + rank * count), as MPI's
 * MPI_IN_PLACE does, and that is what is passed. NCCL's in-place
 * reduce-scatter leaves the result at the rank's share of send rather
 * than at recv's start, which is not what accel_comm_op means: it is
 * refused, with the reason, and needs two buffers.
 *
 * A barrier is a one-word all-reduce on a device word of the
 * communicator's, allocated at its first barrier through the GPU library.
 */
#include "nccl_provider.h"

#include <stdint.h>

/* Bytes of each accel_elem_type, in enum order. */
static const size_t elem_bytes[ACCEL_ELEM_TYPE_COUNT] = {
    [ACCEL_BYTE] = 1, [ACCEL_F16] = 2, [ACCEL_BF16] = 2, [ACCEL_F32] = 4,
    [ACCEL_F64] = 8,  [ACCEL_I8] = 1,  [ACCEL_I16] = 2,  [ACCEL_I32] = 4,
    [ACCEL_I64] = 8,  [ACCEL_U8] = 1,  [ACCEL_U16] = 2,  [ACCEL_U32] = 4,
    [ACCEL_U64] = 8};

static const char *const elem_names[ACCEL_ELEM_TYPE_COUNT] = {
    [ACCEL_BYTE] = "byte", [ACCEL_F16] = "f16", [ACCEL_BF16] = "bf16",
    [ACCEL_F32] = "f32",   [ACCEL_F64] = "f64", [ACCEL_I8] = "i8",
    [ACCEL_I16] = "i16",   [ACCEL_I32] = "i32", [ACCEL_I64] = "i64",
    [ACCEL_U8] = "u8",     [ACCEL_U16] = "u16", [ACCEL_U32] = "u32",
    [ACCEL_U64] = "u64"};

static const char *const kind_names[ACCEL_COMM_OP_KIND_COUNT] = {
    "all-reduce",     "broadcast", "reduce", "all-gather",
    "reduce-scatter", "send",      "recv",   "barrier"};

/* The NCCL call each kind is, for error messages. */
static const char *const call_names[ACCEL_COMM_OP_KIND_COUNT] = {
    "ncclAllReduce", "ncclBroadcast",          "ncclReduce",
    "ncclAllGather", "ncclReduceScatter",      "ncclSend",
    "ncclRecv",      "ncclAllReduce (barrier)"};

static bool kind_reduces(uint32_t kind)
{
    return kind == ACCEL_COMM_ALLREDUCE || kind == ACCEL_COMM_REDUCE ||
           kind == ACCEL_COMM_REDUCE_SCATTER;
}

/* NCCL's type for a reducing operation on `type`; false with the reason said. */
static accel_status reduce_type(accel_comm_handle *comm,
                                const struct accel_comm_op *op,
                                ancl_ncclDataType_t *out_type)
{
    static const int types[ACCEL_ELEM_TYPE_COUNT] = {
        [ACCEL_BYTE] = ANCL_ncclUint8,
        [ACCEL_F16] = ANCL_ncclFloat16,
        [ACCEL_BF16] = ANCL_ncclBfloat16,
        [ACCEL_F32] = ANCL_ncclFloat32,
        [ACCEL_F64] = ANCL_ncclFloat64,
        [ACCEL_I8] = ANCL_ncclInt8,
        [ACCEL_I16] = -1,
        [ACCEL_I32] = ANCL_ncclInt32,
        [ACCEL_I64] = ANCL_ncclInt64,
        [ACCEL_U8] = ANCL_ncclUint8,
        [ACCEL_U16] = -1,
        [ACCEL_U32] = ANCL_ncclUint32,
        [ACCEL_U64] = ANCL_ncclUint64};
    accel_comm_provider *provider = comm->provider;

    if (types[op->type] < 0)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: %s has no 16-bit integer type: %s of %s is not supported",
            provider->flavour->name, provider->flavour->title,
            kind_names[op->kind], elem_names[op->type]);
    if (op->type == ACCEL_BF16 && provider->version < ANCL_NCCL_BF16_SINCE)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: %s of bf16 needs %s 2.10 or later; this is version code %d",
            provider->flavour->name, kind_names[op->kind],
            provider->flavour->title, provider->version);
    *out_type = (ancl_ncclDataType_t)types[op->type];
    return ACCEL_OK;
}

static ancl_ncclRedOp_t reduce_op(uint32_t op)
{
    switch (op) {
    case ACCEL_REDUCE_PROD:
        return ANCL_ncclProd;
    case ACCEL_REDUCE_MIN:
        return ANCL_ncclMin;
    case ACCEL_REDUCE_MAX:
        return ANCL_ncclMax;
    default:
        return ANCL_ncclSum;
    }
}

/* What NCCL is called with for one operation. */
struct nccl_call {
    const void *send;
    void *recv;
    size_t count;
    ancl_ncclDataType_t type;
    ancl_ncclRedOp_t op;
    const char *name;
};

static accel_status check_op(accel_comm_handle *comm,
                             const struct accel_comm_op *op)
{
    accel_comm_provider *provider = comm->provider;
    const char *name = provider->flavour->name;

    if (op == NULL || op->struct_size < sizeof(struct accel_comm_op) ||
        op->kind >= ACCEL_COMM_OP_KIND_COUNT ||
        op->type >= ACCEL_ELEM_TYPE_COUNT ||
        op->reduce_op >= ACCEL_REDUCE_OP_COUNT)
        return provider->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                             "%s: malformed operation", name);
    if (atomic_load(&comm->aborted))
        return provider->services->set_error(
            ACCEL_ERR_COMM_ABORTED, "%s: the communicator was aborted", name);
    if (op->memory != (uint32_t)provider->flavour->memory)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: the buffers are not %s device memory: %s works on the GPU's "
            "own memory only",
            name, provider->flavour->memory == ACCEL_NATIVE_HIP ? "HIP" : "CUDA",
            provider->flavour->title);
    if (op->stream == NULL)
        return provider->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "%s: no native stream to enqueue on",
            name);
    return ACCEL_OK;
}

/* The NCCL arguments of `op`; errors said. */
static accel_status plan_call(accel_comm_handle *comm,
                              const struct accel_comm_op *op,
                              struct nccl_call *out)
{
    accel_comm_provider *provider = comm->provider;
    size_t bytes = elem_bytes[op->type];
    accel_status status;

    out->send = (const void *)(uintptr_t)op->send;
    out->recv = (void *)(uintptr_t)op->recv;
    out->name = call_names[op->kind];
    out->op = reduce_op(op->reduce_op);
    if (op->count > SIZE_MAX / bytes / (comm->size > 0 ? (size_t)comm->size : 1u))
        return provider->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "%s: %s of %llu elements overflows",
            provider->flavour->name, kind_names[op->kind],
            (unsigned long long)op->count);
    if (kind_reduces(op->kind)) {
        status = reduce_type(comm, op, &out->type);
        out->count = (size_t)op->count;
        if (status != ACCEL_OK)
            return status;
    } else {
        /* Data is only moved: as bytes, whatever the type. */
        out->type = ANCL_ncclUint8;
        out->count = (size_t)op->count * bytes;
    }
    if (op->send == op->recv && op->kind == ACCEL_COMM_ALLGATHER && comm->rank < 0)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: in-place all-gather needs the rank, which %s did not say",
            provider->flavour->name, provider->flavour->title);
    if (op->send == op->recv && op->kind == ACCEL_COMM_ALLGATHER)
        out->send = (const unsigned char *)out->recv +
                    (size_t)comm->rank * out->count;
    if (op->send == op->recv && op->kind == ACCEL_COMM_REDUCE_SCATTER &&
        comm->size > 1)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: in-place reduce-scatter leaves %s's result at the rank's "
            "share "
            "of send, not at recv: use two buffers",
            provider->flavour->name, provider->flavour->title);
    return ACCEL_OK;
}

/* The barrier's device word, made at the first barrier. */
static accel_status barrier_word(accel_comm_handle *comm)
{
    accel_comm_provider *provider = comm->provider;
    const char *call = NULL, *name;
    int result;

    if (comm->scratch != 0)
        return ACCEL_OK;
    result = provider->device.ops->alloc(&provider->device, sizeof(uint32_t),
                                         &comm->scratch, &call);
    if (result == 0)
        return ACCEL_OK;
    name = provider->device.ops->error_name(&provider->device, result);
    return provider->services->set_error(
        ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
        "%s: barrier: %s of 4 bytes failed: %s (%d)", provider->flavour->name,
        call, name != NULL ? name : "error", result);
}

/* The NCCL call of `op`, the device current. */
static ancl_ncclResult_t enqueue(accel_comm_handle *comm,
                                 const struct accel_comm_op *op,
                                 const struct nccl_call *c)
{
    const struct nccl_symbols *n = &comm->provider->nccl;
    ancl_stream_t stream = op->stream;
    ancl_ncclResult_t result, ended;

    switch (op->kind) {
    case ACCEL_COMM_ALLREDUCE:
        return n->ncclAllReduce(c->send, c->recv, c->count, c->type, c->op,
                                comm->comm, stream);
    case ACCEL_COMM_BROADCAST:
        return n->ncclBroadcast(c->send, c->recv, c->count, c->type, op->root,
                                comm->comm, stream);
    case ACCEL_COMM_REDUCE:
        return n->ncclReduce(c->send, c->recv, c->count, c->type, c->op,
                             op->root, comm->comm, stream);
    case ACCEL_COMM_ALLGATHER:
        return n->ncclAllGather(c->send, c->recv, c->count, c->type, comm->comm,
                                stream);
    case ACCEL_COMM_REDUCE_SCATTER:
        return n->ncclReduceScatter(c->send, c->recv, c->count, c->type, c->op,
                                    comm->comm, stream);
    case ACCEL_COMM_SEND:
    case ACCEL_COMM_RECV:
        /* In a group, as NCCL asks of point-to-point calls. */
        result = n->ncclGroupStart();
        if (result != ANCL_ncclSuccess)
            return result;
        if (op->kind == ACCEL_COMM_SEND)
            result = n->ncclSend(c->send, c->count, c->type, op->root,
                                 comm->comm, stream);
        else
            result = n->ncclRecv(c->recv, c->count, c->type, op->root,
                                 comm->comm, stream);
        ended = n->ncclGroupEnd();
        return result != ANCL_ncclSuccess ? result : ended;
    default: /* ACCEL_COMM_BARRIER */
        return n->ncclAllReduce((const void *)(uintptr_t)comm->scratch,
                                (void *)(uintptr_t)comm->scratch, 1,
                                ANCL_ncclUint32, ANCL_ncclSum, comm->comm,
                                stream);
    }
}

accel_status accel__nccl_submit(accel_comm_handle *comm,
                                const struct accel_comm_op *op)
{
    accel_comm_provider *provider = comm->provider;
    struct nccl_device_scope scope;
    struct nccl_call call = {0};
    ancl_ncclResult_t result;
    accel_status status;
    uint64_t deadline;

    status = check_op(comm, op);
    if (status == ACCEL_OK)
        status = plan_call(comm, op, &call);
    if (status != ACCEL_OK)
        return status;
    status = accel__nccl_enter(comm, &scope);
    if (status != ACCEL_OK)
        return status;
    if (op->kind == ACCEL_COMM_BARRIER)
        status = barrier_word(comm);
    result = status == ACCEL_OK ? enqueue(comm, op, &call) : ANCL_ncclSuccess;
    accel__nccl_leave(comm, &scope);
    if (status != ACCEL_OK)
        return status;
    /* A non-blocking communicator may still be taking the call in. */
    deadline = op->deadline_ns != 0    ? op->deadline_ns
               : comm->timeout_ns != 0 ? accel__nccl_now_ns() + comm->timeout_ns
                                       : 0;
    result = accel__nccl_settle(comm, result, deadline);
    if (result == ANCL_ncclSuccess)
        return ACCEL_OK;
    return accel__nccl_fail(provider, call.name, result);
}
