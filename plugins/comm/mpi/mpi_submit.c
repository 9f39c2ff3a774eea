/*
 * Operations of the mpi provider: each accel_comm_op becomes nonblocking
 * MPI calls (MPI_Iallreduce, MPI_Ibcast, ...) of at most chunk_elems
 * elements each (MPI counts are ints), then mpi__wait.
 *
 * The exception, an all-reduce without a deadline (ACCEL_COMM_TIMEOUT_MS
 * =0) when MPI is MPI_THREAD_MULTIPLE: a nonblocking barrier first, waited
 * for like any operation (an abort ends it), then the blocking
 * MPI_Allreduce. Once every rank has arrived, the call can no longer wait
 * for a late one; it runs MPI's tuned algorithms, which the nonblocking
 * collectives (Open MPI's libnbc) do not have, and needs no polling. It
 * cannot be abandoned: an abort after the barrier takes effect when it
 * returns, and a rank that aborts between its barrier and its call leaves
 * the others waiting, which a job without a timeout has chosen to do for a
 * late rank anyway. With MPI_THREAD_SERIALIZED a blocking call would hold
 * every other communicator's calls back: never then.
 */
#include "mpi_provider.h"

#include <string.h>

/* How one operation maps onto MPI. */
struct plan {
    accel_comm_handle *comm;
    const struct accel_comm_op *op;
    mpi_h type;    /* the MPI datatype of one element */
    mpi_h reduce;  /* the MPI op, for the reducing kinds */
    size_t elem;   /* bytes per element */
    bool in_place; /* send == recv, as comm.h says (see each kind) */
    uint64_t deadline_ns;
    bool blocking; /* the blocking call after a barrier (see above) */
};

#define PTR(address) ((void *)(uintptr_t)(address))

static size_t elem_size(accel_elem_type type)
{
    static const unsigned char sizes[ACCEL_ELEM_TYPE_COUNT] = {
        [ACCEL_BYTE] = 1, [ACCEL_F16] = 2, [ACCEL_BF16] = 2, [ACCEL_F32] = 4,
        [ACCEL_F64] = 8,  [ACCEL_I8] = 1,  [ACCEL_I16] = 2,  [ACCEL_I32] = 4,
        [ACCEL_I64] = 8,  [ACCEL_U8] = 1,  [ACCEL_U16] = 2,  [ACCEL_U32] = 4,
        [ACCEL_U64] = 8};
    return sizes[type];
}

/* f16 and bf16 travel as 16-bit integers and reduce through user ops;
 * ACCEL_BYTE reduces as u8 (types.h). */
static void plan_types(accel_comm_provider *p, struct plan *plan)
{
    const struct mpi_handles *h = &p->lib.h;
    const mpi_h types[ACCEL_ELEM_TYPE_COUNT] = {
        [ACCEL_BYTE] = h->u8, [ACCEL_F16] = h->u16, [ACCEL_BF16] = h->u16,
        [ACCEL_F32] = h->f32, [ACCEL_F64] = h->f64, [ACCEL_I8] = h->i8,
        [ACCEL_I16] = h->i16, [ACCEL_I32] = h->i32, [ACCEL_I64] = h->i64,
        [ACCEL_U8] = h->u8,   [ACCEL_U16] = h->u16, [ACCEL_U32] = h->u32,
        [ACCEL_U64] = h->u64};
    const mpi_h ops[ACCEL_REDUCE_OP_COUNT] = {h->sum, h->prod, h->min, h->max};
    uint32_t type = plan->op->type, op = plan->op->reduce_op;
    plan->type = types[type];
    plan->elem = elem_size(type);
    if (op >= ACCEL_REDUCE_OP_COUNT)
        op = ACCEL_REDUCE_SUM; /* a kind that does not reduce */
    if (type == ACCEL_F16 || type == ACCEL_BF16)
        plan->reduce = p->half_ops[type == ACCEL_BF16][op];
    else
        plan->reduce = ops[op];
}

/* Start one request with `start`, then wait for it. */
static accel_status finish(struct plan *plan, const char *call, int rc,
                           mpi_h *req, bool p2p, uint64_t bytes)
{
    accel_comm_provider *p = plan->comm->provider;
    if (rc != 0) {
        atomic_store(&plan->comm->error, (int)ACCEL_ERR_DRIVER);
        return mpi__fail(p, call, rc);
    }
    return mpi__wait(plan->comm, req, 1, p2p, plan->deadline_ns, bytes);
}

/* Elements of the chunk starting at `done` of `count`. */
static int chunk_of(const struct plan *plan, uint64_t count, uint64_t done)
{
    uint64_t left = count - done;
    uint64_t limit = (uint64_t)plan->comm->provider->chunk_elems;
    return (int)(left < limit ? left : limit);
}

static accel_status run_barrier(struct plan *plan);

/* One chunk with MPI_Allreduce, every rank known to be there. */
static accel_status allreduce_now(struct plan *plan, const void *send,
                                  void *recv, int n)
{
    accel_comm_provider *p = plan->comm->provider;
    int rc = p->lib.call->allreduce(&p->lib, send, recv, n, plan->type,
                                    plan->reduce, plan->comm->comm);
    if (rc == 0)
        return ACCEL_OK;
    atomic_store(&plan->comm->error, (int)ACCEL_ERR_DRIVER);
    return mpi__fail(p, "MPI_Allreduce", rc);
}

static accel_status run_allreduce(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    accel_status status = plan->blocking ? run_barrier(plan) : ACCEL_OK;
    for (uint64_t done = 0; done < op->count && status == ACCEL_OK;) {
        int n = chunk_of(plan, op->count, done);
        size_t at = done * plan->elem;
        const void *send = plan->in_place ? p->lib.h.in_place
                                          : (char *)PTR(op->send) + at;
        if (plan->blocking) {
            status = allreduce_now(plan, send, (char *)PTR(op->recv) + at, n);
            done += (uint64_t)n;
            continue;
        }
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = p->lib.call->iallreduce(
            &p->lib, send, (char *)PTR(op->recv) + at, n, plan->type,
            plan->reduce, plan->comm->comm, &req);
        mpi__leave(p);
        status = finish(plan, "MPI_Iallreduce", rc, &req, false,
                        (uint64_t)n * plan->elem);
        done += (uint64_t)n;
    }
    return status;
}

/*
 * Copy `count` elements within this rank: memcpy for host memory, a send
 * to itself for a GPU's (GPU-aware MPI), which memcpy cannot reach.
 */
static accel_status local_copy(struct plan *plan, uint64_t dst, uint64_t src,
                               uint64_t count)
{
    accel_comm_provider *p = plan->comm->provider;
    if (dst == src || count == 0)
        return ACCEL_OK;
    if (plan->op->memory == ACCEL_NATIVE_CPU) {
        memmove(PTR(dst), PTR(src), count * plan->elem);
        return ACCEL_OK;
    }
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < count && status == ACCEL_OK;) {
        int n = chunk_of(plan, count, done);
        size_t at = done * plan->elem;
        mpi_h reqs[2] = {p->lib.h.request_null, p->lib.h.request_null};
        int self = plan->comm->rank;
        mpi__enter(p);
        int rc = p->lib.call->irecv(&p->lib, (char *)PTR(dst) + at, n, plan->type,
                                    self, 1, plan->comm->comm, &reqs[0]);
        if (rc == 0)
            rc = p->lib.call->isend(&p->lib, (char *)PTR(src) + at, n, plan->type,
                                    self, 1, plan->comm->comm, &reqs[1]);
        mpi__leave(p);
        if (rc != 0)
            return mpi__fail(p, "MPI_Isend to itself", rc);
        status = mpi__wait(plan->comm, reqs, 2, true, plan->deadline_ns,
                           (uint64_t)n * plan->elem);
        done += (uint64_t)n;
    }
    return status;
}

/* Broadcast `count` elements at `buffer` from `root`, chunk by chunk. */
static accel_status bcast(struct plan *plan, uint64_t buffer, uint64_t count,
                          int root)
{
    accel_comm_provider *p = plan->comm->provider;
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < count && status == ACCEL_OK;) {
        int n = chunk_of(plan, count, done);
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = p->lib.call->ibcast(&p->lib,
                                     (char *)PTR(buffer) + done * plan->elem, n,
                                     plan->type, root, plan->comm->comm, &req);
        mpi__leave(p);
        status = finish(plan, "MPI_Ibcast", rc, &req, false,
                        (uint64_t)n * plan->elem);
        done += (uint64_t)n;
    }
    return status;
}

/* The root sends from `send` (or `recv` when send is 0); every rank's recv,
 * the root's included, receives. */
static accel_status run_broadcast(struct plan *plan)
{
    const struct accel_comm_op *op = plan->op;
    if (plan->comm->rank != op->root)
        return bcast(plan, op->recv, op->count, op->root);
    uint64_t source = op->send != 0 ? op->send : op->recv;
    accel_status status = bcast(plan, source, op->count, op->root);
    if (status == ACCEL_OK && op->recv != 0)
        status = local_copy(plan, op->recv, source, op->count);
    return status;
}

static accel_status run_reduce(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    bool root = plan->comm->rank == op->root;
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < op->count && status == ACCEL_OK;) {
        int n = chunk_of(plan, op->count, done);
        size_t at = done * plan->elem;
        /* MPI_IN_PLACE is the root's alone; the others' recv is unused. */
        const void *send = root && plan->in_place ? p->lib.h.in_place
                                                  : (char *)PTR(op->send) + at;
        void *recv = root ? (char *)PTR(op->recv) + at : NULL;
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = p->lib.call->ireduce(&p->lib, send, recv, n, plan->type,
                                      plan->reduce, op->root, plan->comm->comm,
                                      &req);
        mpi__leave(p);
        status = finish(plan, "MPI_Ireduce", rc, &req, false,
                        (uint64_t)n * plan->elem);
        done += (uint64_t)n;
    }
    return status;
}

/*
 * All-gather: rank r's share lands at recv + r * count. In place (send ==
 * recv, or send already at the rank's own share) the share is read from
 * there. A share over the chunk limit goes as one broadcast per rank per
 * chunk, since MPI_Iallgather's shares must each be contiguous.
 */
static accel_status run_allgather(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    uint64_t share = op->count * plan->elem;
    uint64_t mine = op->recv + (uint64_t)plan->comm->rank * share;
    bool in_place = plan->in_place || op->send == mine;
    if (op->count <= (uint64_t)p->chunk_elems) {
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = p->lib.call->iallgather(
            &p->lib, in_place ? p->lib.h.in_place : PTR(op->send),
            (int)op->count, plan->type, PTR(op->recv), plan->comm->comm, &req);
        mpi__leave(p);
        return finish(plan, "MPI_Iallgather", rc, &req, false,
                      share * (uint64_t)plan->comm->size);
    }
    accel_status status = in_place ? ACCEL_OK
                                   : local_copy(plan, mine, op->send, op->count);
    for (int r = 0; r < plan->comm->size && status == ACCEL_OK; r++)
        status = bcast(plan, op->recv + (uint64_t)r * share, op->count, r);
    return status;
}

/*
 * Reduce-scatter: send holds size * count elements, recv gets this rank's
 * block of the sum. In place (send == recv) the input is read from recv and
 * the block lands at its start, as MPI_IN_PLACE does. Over the chunk limit,
 * one MPI_Ireduce per rank per chunk, in rank order and one at a time, so
 * that in place a rank's output never overwrites input not yet sent.
 */
static accel_status run_reduce_scatter(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    if (op->count <= (uint64_t)p->chunk_elems) {
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = p->lib.call->ireduce_scatter_block(
            &p->lib, plan->in_place ? p->lib.h.in_place : PTR(op->send),
            PTR(op->recv), (int)op->count, plan->type, plan->reduce,
            plan->comm->comm, &req);
        mpi__leave(p);
        return finish(plan, "MPI_Ireduce_scatter_block", rc, &req, false,
                      op->count * plan->elem * (uint64_t)plan->comm->size);
    }
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < op->count && status == ACCEL_OK;) {
        int n = chunk_of(plan, op->count, done);
        for (int r = 0; r < plan->comm->size && status == ACCEL_OK; r++) {
            size_t in = ((uint64_t)r * op->count + done) * plan->elem;
            size_t out = done * plan->elem;
            bool root = r == plan->comm->rank;
            const void *send = (char *)PTR(op->send) + in;
            if (root && PTR(op->send + in) == PTR(op->recv + out))
                send = p->lib.h.in_place;
            mpi_h req = p->lib.h.request_null;
            mpi__enter(p);
            int rc = p->lib.call->ireduce(
                &p->lib, send, root ? (char *)PTR(op->recv) + out : NULL, n,
                plan->type, plan->reduce, r, plan->comm->comm, &req);
            mpi__leave(p);
            status = finish(plan, "MPI_Ireduce", rc, &req, false,
                            (uint64_t)n * plan->elem);
        }
        done += (uint64_t)n;
    }
    return status;
}

static accel_status run_p2p(struct plan *plan, bool send)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    uint64_t buffer = send ? op->send : op->recv;
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < op->count && status == ACCEL_OK;) {
        int n = chunk_of(plan, op->count, done);
        void *at = (char *)PTR(buffer) + done * plan->elem;
        mpi_h req = p->lib.h.request_null;
        mpi__enter(p);
        int rc = send ? p->lib.call->isend(&p->lib, at, n, plan->type, op->root,
                                           0, plan->comm->comm, &req)
                      : p->lib.call->irecv(&p->lib, at, n, plan->type, op->root,
                                           0, plan->comm->comm, &req);
        mpi__leave(p);
        status = finish(plan, send ? "MPI_Isend" : "MPI_Irecv", rc, &req, true,
                        (uint64_t)n * plan->elem);
        done += (uint64_t)n;
    }
    return status;
}

static accel_status run_barrier(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    mpi_h req = p->lib.h.request_null;
    mpi__enter(p);
    int rc = p->lib.call->ibarrier(&p->lib, plan->comm->comm, &req);
    mpi__leave(p);
    return finish(plan, "MPI_Ibarrier", rc, &req, false, 0);
}

static bool reduces(uint32_t kind)
{
    return kind == ACCEL_COMM_ALLREDUCE || kind == ACCEL_COMM_REDUCE ||
           kind == ACCEL_COMM_REDUCE_SCATTER;
}

static bool rooted(uint32_t kind)
{
    return kind == ACCEL_COMM_BROADCAST || kind == ACCEL_COMM_REDUCE;
}

/*
 * ACCEL_COMM_CHECK=1: before a collective, every rank's (kind, type, op,
 * count, root) is compared in one MPI_Iallreduce of the values and their
 * negations under MPI_MIN (min and max at once). A mismatch fails on every
 * rank alike, instead of hanging or mixing up data.
 */
static accel_status check_signature(struct plan *plan)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct accel_comm_op *op = plan->op;
    enum { FIELDS = 5 };
    int64_t mine[FIELDS] = {op->kind, op->type,
                            reduces(op->kind) ? op->reduce_op : 0,
                            (int64_t)op->count, rooted(op->kind) ? op->root : 0};
    int64_t in[2 * FIELDS], out[2 * FIELDS];
    for (int i = 0; i < FIELDS; i++) {
        in[i] = mine[i];
        in[FIELDS + i] = -mine[i];
    }
    mpi_h req = p->lib.h.request_null;
    mpi__enter(p);
    int rc = p->lib.call->iallreduce(&p->lib, in, out, 2 * FIELDS, p->lib.h.i64,
                                     p->lib.h.min, plan->comm->comm, &req);
    mpi__leave(p);
    accel_status status = finish(plan, "MPI_Iallreduce (ACCEL_COMM_CHECK)", rc,
                                 &req, false, 0);
    if (status != ACCEL_OK)
        return status;
    static const char *const names[FIELDS] = {"kind", "element type",
                                              "reduce op", "count", "root"};
    for (int i = 0; i < FIELDS; i++)
        if (out[i] != -out[FIELDS + i])
            return p->services->set_error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "ACCEL_COMM_CHECK: the ranks called different collectives: "
                "%s from %lld to %lld across ranks (this rank: %lld)",
                names[i], (long long)out[i], (long long)-out[FIELDS + i],
                (long long)mine[i]);
    return ACCEL_OK;
}

static accel_status check_memory(accel_comm_handle *comm,
                                 const struct accel_comm_op *op)
{
    accel_comm_provider *p = comm->provider;
    if (op->memory == ACCEL_NATIVE_CPU)
        return ACCEL_OK;
    accel_status status = mpi__accepts_memory(p, op->memory);
    if (status != ACCEL_OK)
        return p->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                      "the operation's buffers are device "
                                      "memory of kind %u, which this MPI "
                                      "does not take",
                                      op->memory);
    return ACCEL_OK;
}

accel_status mpi__submit(accel_comm_handle *comm, const struct accel_comm_op *op)
{
    accel_comm_provider *p = comm->provider;
    if (op->struct_size < sizeof *op || op->kind >= ACCEL_COMM_OP_KIND_COUNT ||
        op->type >= ACCEL_ELEM_TYPE_COUNT)
        return p->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                      "malformed operation (size %u, kind "
                                      "%u, type %u)",
                                      op->struct_size, op->kind, op->type);
    accel_status status = mpi__comm_check_usable(comm);
    if (status == ACCEL_OK)
        status = check_memory(comm, op);
    if (status != ACCEL_OK)
        return status;
    struct plan plan = {.comm = comm,
                        .op = op,
                        .in_place = op->send != 0 && op->send == op->recv,
                        .deadline_ns = op->deadline_ns,
                        .blocking = op->deadline_ns == 0 && !p->serialise};
    plan_types(p, &plan);
    bool p2p = op->kind == ACCEL_COMM_SEND || op->kind == ACCEL_COMM_RECV;
    if (p->check && !p2p) {
        status = check_signature(&plan);
        if (status != ACCEL_OK)
            return status;
    }
    if (op->count == 0 && op->kind != ACCEL_COMM_BARRIER)
        return ACCEL_OK;
    switch (op->kind) {
    case ACCEL_COMM_ALLREDUCE:
        return run_allreduce(&plan);
    case ACCEL_COMM_BROADCAST:
        return run_broadcast(&plan);
    case ACCEL_COMM_REDUCE:
        return run_reduce(&plan);
    case ACCEL_COMM_ALLGATHER:
        return run_allgather(&plan);
    case ACCEL_COMM_REDUCE_SCATTER:
        return run_reduce_scatter(&plan);
    case ACCEL_COMM_SEND:
        return run_p2p(&plan, true);
    case ACCEL_COMM_RECV:
        return run_p2p(&plan, false);
    default:
        return run_barrier(&plan);
    }
}
