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
 *
 * Host memory (ACCEL_NATIVE_CPU) is staged: each nonblocking collective is
 * posted on a copy the provider owns (struct stage), copied back once the
 * request completes. A collective cannot be cancelled (MPI 3.0, 5.12): one
 * given up at an abort or a timeout stays posted, and MPI completes it if
 * the other ranks join later. It then writes into its stage, which is kept
 * for the process's life, never into the caller's memory, which the host
 * unpins and may free or reuse (a reset frees the pool). The leak is
 * bounded: one call's buffers per communicator given up, since nothing
 * runs on it afterwards. Device memory (GPU-aware MPI) is not staged.
 */
#include "mpi_provider.h"

#include <dlfcn.h>

#include <stddef.h>
#include <stdlib.h>
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

/*
 * One call's memory as the caller has it: `send_bytes` read at `send` (0:
 * `send` goes to MPI as it is: NULL or MPI_IN_PLACE), `recv_bytes` at
 * `recv` of which [recv_in, recv_in + recv_in_bytes) is read (in place)
 * and all written back unless `recv_out` is false.
 */
struct call_mem {
    const void *send;
    size_t send_bytes;
    void *recv;
    size_t recv_bytes;
    size_t recv_in, recv_in_bytes;
    size_t recv_out; /* bytes written back from the start of recv */
    bool always;     /* stage whatever the memory (the provider's own) */
};

/* A stage's memory: its capacity, then the bytes. */
struct mpi_stage_block {
    size_t capacity;
    struct mpi_stage_block *next; /* on `kept`, once given up */
    max_align_t data[];
};

/*
 * The stages of collectives given up while MPI still holds them, kept for
 * the process's life (see the file comment). A list in static memory, so
 * that they stay reachable: kept on purpose, not lost (LeakSanitizer and
 * valgrind count them as still reachable, not as leaks).
 */
static _Atomic(struct mpi_stage_block *) kept;

/*
 * Pin this plugin in memory for good, the first time a stage is kept: the
 * list above must outlive the host's dlclose, and a given-up f16/bf16
 * reduction still names this plugin's user ops. dladdr gives the name the
 * loader holds, which RTLD_NOLOAD matches without opening a file.
 */
static void pin_plugin(void)
{
    static atomic_flag pinned = ATOMIC_FLAG_INIT;
    Dl_info info;
    if (atomic_flag_test_and_set(&pinned))
        return;
    if (dladdr((void *)&kept, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static void keep_for_good(struct mpi_stage_block *block)
{
    pin_plugin();
    block->next = atomic_load(&kept);
    while (!atomic_compare_exchange_weak(&kept, &block->next, block))
        ;
}

/* What MPI is given instead: the stage, or the caller's memory as is. */
struct stage {
    struct mpi_stage_block *block;
    char *mem; /* NULL: not staged */
    const void *send;
    void *recv;
};

static accel_status stage_begin(struct plan *plan, const struct call_mem *cm,
                                struct stage *out)
{
    *out = (struct stage){NULL, NULL, cm->send, cm->recv};
    if (plan->op->memory != ACCEL_NATIVE_CPU && !cm->always)
        return ACCEL_OK;
    size_t bytes = cm->send_bytes + (cm->recv ? cm->recv_bytes : 0);
    struct mpi_stage_block *block = atomic_exchange(&plan->comm->stage_cache,
                                                    NULL);
    if (block == NULL || block->capacity < bytes) {
        free(block);
        size_t capacity = bytes ? bytes : 1;
        block = malloc(sizeof *block + capacity);
        if (block == NULL)
            return plan->comm->provider->services->set_error(
                ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "no host memory to stage a collective of %zu bytes", bytes);
        block->capacity = capacity;
    }
    out->block = block;
    out->mem = (char *)block->data;
    if (cm->send_bytes != 0) {
        memcpy(out->mem, cm->send, cm->send_bytes);
        out->send = out->mem;
    }
    if (cm->recv != NULL) {
        out->recv = out->mem + cm->send_bytes;
        memcpy((char *)out->recv + cm->recv_in, (char *)cm->recv + cm->recv_in,
               cm->recv_in_bytes);
    }
    return ACCEL_OK;
}

/* After the wait: the result copied back, and the stage kept for the
 * communicator's next collective unless MPI still holds it (given up:
 * kept for good, see the file comment). */
static accel_status stage_end(struct plan *plan, const struct call_mem *cm,
                              struct stage *stage, mpi_h req, accel_status status)
{
    if (stage->mem == NULL)
        return status;
    if (req != plan->comm->provider->lib.h.request_null) {
        keep_for_good(stage->block);
        return status;
    }
    if (status == ACCEL_OK && cm->recv != NULL)
        memcpy(cm->recv, stage->recv, cm->recv_out);
    free(atomic_exchange(&plan->comm->stage_cache, stage->block));
    return status;
}

/*
 * Post one collective with `post` on the staged memory, wait, finish:
 * what every collective call below does.
 */
/* The counts and root of one call. */
struct post_args {
    int n;
    int root;
};

typedef int (*post_fn)(struct plan *plan, const void *send, void *recv,
                       void *arg, mpi_h *req);

static accel_status staged_call(struct plan *plan, const char *call,
                                const struct call_mem *cm, post_fn post,
                                void *arg, uint64_t bytes)
{
    accel_comm_provider *p = plan->comm->provider;
    struct stage stage;
    accel_status status = stage_begin(plan, cm, &stage);
    if (status != ACCEL_OK)
        return status;
    mpi_h req = p->lib.h.request_null;
    mpi__enter(p);
    int rc = post(plan, stage.send, stage.recv, arg, &req);
    mpi__leave(p);
    status = finish(plan, call, rc, &req, false, bytes);
    return stage_end(plan, cm, &stage, req, status);
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

static int post_iallreduce(struct plan *plan, const void *send, void *recv,
                           void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    return p->lib.call->iallreduce(&p->lib, send, recv, a->n, plan->type,
                                   plan->reduce, plan->comm->comm, req);
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
        size_t bytes = (size_t)n * plan->elem;
        struct call_mem cm = {.send = send,
                              .send_bytes = plan->in_place ? 0 : bytes,
                              .recv = (char *)PTR(op->recv) + at,
                              .recv_bytes = bytes,
                              .recv_in_bytes = plan->in_place ? bytes : 0,
                              .recv_out = bytes};
        struct post_args args = {.n = n};
        status = staged_call(plan, "MPI_Iallreduce", &cm, post_iallreduce,
                             &args, bytes);
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

static int post_ibcast(struct plan *plan, const void *send, void *recv,
                       void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    (void)send;
    return p->lib.call->ibcast(&p->lib, recv, a->n, plan->type, a->root,
                               plan->comm->comm, req);
}

/* Broadcast `count` elements at `buffer` from `root`, chunk by chunk. */
static accel_status bcast(struct plan *plan, uint64_t buffer, uint64_t count,
                          int root)
{
    bool mine = plan->comm->rank == root;
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < count && status == ACCEL_OK;) {
        int n = chunk_of(plan, count, done);
        size_t bytes = (size_t)n * plan->elem;
        struct call_mem cm = {.recv = (char *)PTR(buffer) + done * plan->elem,
                              .recv_bytes = bytes,
                              .recv_in_bytes = mine ? bytes : 0,
                              .recv_out = mine ? 0 : bytes};
        struct post_args args = {.n = n, .root = root};
        status = staged_call(plan, "MPI_Ibcast", &cm, post_ibcast, &args, bytes);
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

static int post_ireduce(struct plan *plan, const void *send, void *recv,
                        void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    return p->lib.call->ireduce(&p->lib, send, recv, a->n, plan->type,
                                plan->reduce, a->root, plan->comm->comm, req);
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
        size_t bytes = (size_t)n * plan->elem;
        bool in_place = root && plan->in_place;
        struct call_mem cm = {.send = send,
                              .send_bytes = in_place ? 0 : bytes,
                              .recv = recv,
                              .recv_bytes = bytes,
                              .recv_in_bytes = in_place ? bytes : 0,
                              .recv_out = bytes};
        struct post_args args = {.n = n, .root = op->root};
        status = staged_call(plan, "MPI_Ireduce", &cm, post_ireduce, &args,
                             bytes);
        done += (uint64_t)n;
    }
    return status;
}

static int post_iallgather(struct plan *plan, const void *send, void *recv,
                           void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    return p->lib.call->iallgather(&p->lib, send, a->n, plan->type, recv,
                                   plan->comm->comm, req);
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
        size_t all = share * (size_t)plan->comm->size;
        struct call_mem cm = {.send = in_place ? p->lib.h.in_place
                                               : PTR(op->send),
                              .send_bytes = in_place ? 0 : share,
                              .recv = PTR(op->recv),
                              .recv_bytes = all,
                              .recv_in = (size_t)plan->comm->rank * share,
                              .recv_in_bytes = in_place ? share : 0,
                              .recv_out = all};
        struct post_args args = {.n = (int)op->count};
        return staged_call(plan, "MPI_Iallgather", &cm, post_iallgather, &args,
                           all);
    }
    accel_status status = in_place ? ACCEL_OK
                                   : local_copy(plan, mine, op->send, op->count);
    for (int r = 0; r < plan->comm->size && status == ACCEL_OK; r++)
        status = bcast(plan, op->recv + (uint64_t)r * share, op->count, r);
    return status;
}

static int post_ireduce_scatter(struct plan *plan, const void *send, void *recv,
                                void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    return p->lib.call->ireduce_scatter_block(&p->lib, send, recv, a->n,
                                              plan->type, plan->reduce,
                                              plan->comm->comm, req);
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
        size_t block = op->count * plan->elem;
        size_t all = block * (size_t)plan->comm->size;
        struct call_mem cm = {.send = plan->in_place ? p->lib.h.in_place
                                                     : PTR(op->send),
                              .send_bytes = plan->in_place ? 0 : all,
                              .recv = PTR(op->recv),
                              .recv_bytes = plan->in_place ? all : block,
                              .recv_in_bytes = plan->in_place ? all : 0,
                              .recv_out = block};
        struct post_args args = {.n = (int)op->count};
        return staged_call(plan, "MPI_Ireduce_scatter_block", &cm,
                           post_ireduce_scatter, &args, all);
    }
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < op->count && status == ACCEL_OK;) {
        int n = chunk_of(plan, op->count, done);
        for (int r = 0; r < plan->comm->size && status == ACCEL_OK; r++) {
            size_t in = ((uint64_t)r * op->count + done) * plan->elem;
            size_t out = done * plan->elem;
            bool root = r == plan->comm->rank;
            bool in_place = root && op->send + in == op->recv + out;
            size_t bytes = (size_t)n * plan->elem;
            struct call_mem cm = {
                .send = in_place ? p->lib.h.in_place : (char *)PTR(op->send) + in,
                .send_bytes = in_place ? 0 : bytes,
                .recv = root ? (char *)PTR(op->recv) + out : NULL,
                .recv_bytes = bytes,
                .recv_in_bytes = in_place ? bytes : 0,
                .recv_out = bytes};
            struct post_args args = {.n = n, .root = r};
            status = staged_call(plan, "MPI_Ireduce", &cm, post_ireduce, &args,
                                 bytes);
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

static int post_check(struct plan *plan, const void *send, void *recv,
                      void *arg, mpi_h *req)
{
    accel_comm_provider *p = plan->comm->provider;
    const struct post_args *a = arg;
    return p->lib.call->iallreduce(&p->lib, send, recv, a->n, p->lib.h.i64,
                                   p->lib.h.min, plan->comm->comm, req);
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
    /* On the heap, staged: given up, MPI may still write it. */
    struct call_mem cm = {.send = in,
                          .send_bytes = sizeof in,
                          .recv = out,
                          .recv_bytes = sizeof out,
                          .recv_out = sizeof out,
                          .always = true};
    struct post_args args = {.n = 2 * FIELDS};
    accel_status status = staged_call(plan, "MPI_Iallreduce (ACCEL_COMM_CHECK)",
                                      &cm, post_check, &args, 0);
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
