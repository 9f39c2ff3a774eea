/*
 * Collectives of the host provider (host_ops.h).
 *
 * Every group operation starts the same way: each rank publishes what it
 * runs (kind, type, count, root, reduce op), its own readiness and, in
 * loopback, the addresses of its buffers, in its slot for this operation;
 * then a barrier; then each rank compares every slot with rank 0's, so
 * that a mismatch is seen, and named, by every rank alike. Slots alternate
 * between two per rank: a rank that runs ahead into the next operation
 * writes the other slot, and cannot get two ahead without passing that
 * operation's barrier, which the slow rank reaches only after reading.
 *
 * Reductions are split so that every rank works: rank r reduces share r
 * of the elements from every rank's input (reduce-scatter), a barrier,
 * then each rank copies the other shares of the result (all-gather), and
 * a last barrier so that no rank's buffer is reused while another reads
 * it. In loopback, ranks read each other's buffers directly. Between
 * processes each rank first copies its chunk into its staging buffer in
 * shared memory, and results pass through the same buffers, chunk by
 * chunk, so that any size fits a bounded segment.
 */
#include "host_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"

/* One operation in progress on this rank. */
struct run {
    accel_comm_handle *comm;
    const struct accel_comm_op *op;
    size_t es;          /* bytes of one element */
    uint64_t chunk;     /* elements per chunk */
    uint64_t send;      /* this rank's input (or its private copy) */
    uint64_t recv;      /* this rank's output */
    void *scratch;      /* loopback: private copy of an aliased input */
    int32_t ready;      /* ACCEL_OK, or why this rank cannot take part */
};

static uint8_t *at(uint64_t address)
{
    return (uint8_t *)(uintptr_t)address;
}

static void copy_bytes(uint8_t *dst, const uint8_t *src, uint64_t bytes)
{
    if (bytes != 0 && dst != src)
        memcpy(dst, src, bytes);
}

static struct host_slot *slot_of(const struct run *run, int rank)
{
    return accel__host_slot(run->comm->shared, rank, run->comm->op_seq);
}

/* Elements [lo, hi) of `count` that rank `rank` reduces. */
static void share_of(uint64_t count, int size, int rank, uint64_t *lo,
                     uint64_t *hi)
{
    uint64_t base = count / (unsigned)size, extra = count % (unsigned)size;
    uint64_t r = (unsigned)rank;
    *lo = r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

static bool is_reducing(uint32_t kind)
{
    return kind == ACCEL_COMM_ALLREDUCE || kind == ACCEL_COMM_REDUCE ||
           kind == ACCEL_COMM_REDUCE_SCATTER;
}

static bool is_rooted(uint32_t kind)
{
    return kind == ACCEL_COMM_BROADCAST || kind == ACCEL_COMM_REDUCE;
}

static const char *kind_name(uint32_t kind)
{
    static const char *const names[ACCEL_COMM_OP_KIND_COUNT] = {
        "allreduce", "broadcast",      "reduce", "allgather",
        "reduce_scatter", "send", "recv",   "barrier"};
    if (kind == HOST_KIND_SPLIT)
        return "comm_split";
    return kind < ACCEL_COMM_OP_KIND_COUNT ? names[kind] : "?";
}

/* What a rank runs, with only the fields that must agree. */
static struct host_desc desc_of(const struct accel_comm_op *op)
{
    struct host_desc desc = {.kind = op->kind};
    if (op->kind == ACCEL_COMM_BARRIER || op->kind == HOST_KIND_SPLIT)
        return desc;
    desc.type = op->type;
    desc.count = op->count;
    if (is_reducing(op->kind))
        desc.reduce_op = op->reduce_op;
    if (is_rooted(op->kind))
        desc.root = op->root;
    return desc;
}

static void describe(const struct host_desc *desc, char *out, size_t capacity)
{
    int used = snprintf(out, capacity, "%s", kind_name(desc->kind));
    if (desc->kind == ACCEL_COMM_BARRIER || desc->kind == HOST_KIND_SPLIT)
        return;
    used += snprintf(out + used, capacity - (size_t)used, " of %llu %s",
                     (unsigned long long)desc->count,
                     accel__comm_elem_name(desc->type));
    if (is_reducing(desc->kind))
        used += snprintf(out + used, capacity - (size_t)used, " (%s)",
                         accel__comm_reduce_name(desc->reduce_op));
    if (is_rooted(desc->kind))
        snprintf(out + used, capacity - (size_t)used, " rooted at rank %d",
                 desc->root);
}

/* After the first barrier: every rank's slot against rank 0's. */
static accel_status check_slots(const struct run *run)
{
    const struct host_slot *first = slot_of(run, 0);
    for (int q = 0; q < run->comm->size; q++) {
        const struct host_slot *slot = slot_of(run, q);
        if (slot->status != ACCEL_OK)
            return accel__host_error(
                run->comm, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "host communicator: rank %d could not take part in %s (%s)",
                q, kind_name(slot->desc.kind),
                accel__host_status_name((accel_status)slot->status));
        if (memcmp(&slot->desc, &first->desc, sizeof first->desc) == 0)
            continue;
        char mine[128], theirs[128];
        describe(&first->desc, mine, sizeof mine);
        describe(&slot->desc, theirs, sizeof theirs);
        return accel__host_error(
            run->comm, ACCEL_ERR_INVALID_ARGUMENT,
            "host communicator: ranks disagree: rank 0 runs %s, rank %d runs %s",
            mine, q, theirs);
    }
    return ACCEL_OK;
}

/* Publish this rank's part, meet the others, compare. */
static accel_status begin(struct run *run)
{
    struct host_slot *slot = slot_of(run, run->comm->rank);
    slot->desc = desc_of(run->op);
    slot->in = run->send;
    slot->out = run->recv;
    slot->status = run->ready;
    accel_status status =
        accel__host_barrier(run->comm, run->op->deadline_ns);
    return status == ACCEL_OK ? check_slots(run) : status;
}

static accel_status meet(struct run *run)
{
    return accel__host_barrier(run->comm, run->op->deadline_ns);
}

/* Rank q's input and output for the chunk at element `off`: its own
 * buffers in loopback, its staging buffer between processes. */
static uint8_t *in_view(const struct run *run, int q, uint64_t off)
{
    if (run->comm->shm)
        return accel__host_staging(run->comm->shared, q);
    return at(slot_of(run, q)->in + off * run->es);
}

static uint8_t *out_view(const struct run *run, int q, uint64_t off)
{
    if (run->comm->shm)
        return accel__host_staging(run->comm->shared, q);
    /* A reduce writes every share straight into the root's buffer. */
    if (run->op->kind == ACCEL_COMM_REDUCE)
        q = run->op->root;
    return at(slot_of(run, q)->out + off * run->es);
}

/* dst = the reduction of srcs[0..size) over `count` elements; it starts
 * from the source that dst is (in place), if any. */
static void reduce_into(const struct run *run, uint8_t *dst,
                        uint8_t *const *srcs, uint64_t count)
{
    int size = run->comm->size, first = run->comm->rank;
    for (int q = 0; q < size; q++)
        if (srcs[q] == dst)
            first = q;
    copy_bytes(dst, srcs[first], count * run->es);
    for (int q = 0; q < size; q++)
        if (q != first)
            accel__comm_reduce(run->op->type, run->op->reduce_op, dst,
                               srcs[q], count);
}

/* One chunk of allreduce (gather everywhere) or reduce (at the root). */
static accel_status reduce_chunk(struct run *run, uint64_t off, uint64_t c)
{
    int rank = run->comm->rank, size = run->comm->size;
    uint8_t *srcs[HOST_MAX_RANKS];
    uint64_t lo, hi;
    share_of(c, size, rank, &lo, &hi);
    for (int q = 0; q < size; q++)
        srcs[q] = in_view(run, q, off) + lo * run->es;
    if (hi > lo)
        reduce_into(run, out_view(run, rank, off) + lo * run->es, srcs,
                    hi - lo);
    accel_status status = meet(run);
    if (status != ACCEL_OK)
        return status;
    if (run->op->kind == ACCEL_COMM_ALLREDUCE || rank == run->op->root) {
        for (int q = 0; q < size; q++) {
            share_of(c, size, q, &lo, &hi);
            copy_bytes(at(run->recv) + (off + lo) * run->es,
                       out_view(run, q, off) + lo * run->es,
                       (hi - lo) * run->es);
        }
    }
    return meet(run);
}

/* Chunk loop shared by the collectives: stage (between processes), meet
 * (the first time: publish and compare), then the kind's own step. */
typedef void (*stage_fn)(struct run *run, uint64_t off, uint64_t c);
typedef accel_status (*step_fn)(struct run *run, uint64_t off, uint64_t c);

static accel_status chunked(struct run *run, uint64_t count, stage_fn stage,
                            step_fn step)
{
    uint64_t off = 0;
    bool first = true;
    do {
        uint64_t c = count - off < run->chunk ? count - off : run->chunk;
        if (run->comm->shm && c != 0)
            stage(run, off, c);
        accel_status status = first ? begin(run) : meet(run);
        if (status != ACCEL_OK || count == 0)
            return status;
        status = step(run, off, c);
        if (status != ACCEL_OK)
            return status;
        first = false;
        off += c;
    } while (off < count);
    return ACCEL_OK;
}

static void stage_own(struct run *run, uint64_t off, uint64_t c)
{
    copy_bytes(accel__host_staging(run->comm->shared, run->comm->rank),
               at(run->send) + off * run->es, c * run->es);
}

static accel_status run_reduce(struct run *run)
{
    return chunked(run, run->op->count, stage_own, reduce_chunk);
}

static void stage_root(struct run *run, uint64_t off, uint64_t c)
{
    if (run->comm->rank == run->op->root)
        stage_own(run, off, c);
}

static accel_status broadcast_step(struct run *run, uint64_t off, uint64_t c)
{
    uint8_t *dst = at(run->recv) + off * run->es;
    if (run->comm->rank != run->op->root)
        copy_bytes(dst, in_view(run, run->op->root, off), c * run->es);
    else if (run->recv != 0)
        copy_bytes(dst, at(run->send) + off * run->es, c * run->es);
    return meet(run);
}

static accel_status run_broadcast(struct run *run)
{
    return chunked(run, run->op->count, stage_root, broadcast_step);
}

static accel_status allgather_step(struct run *run, uint64_t off, uint64_t c)
{
    uint64_t n = run->op->count;
    for (int q = 0; q < run->comm->size; q++)
        copy_bytes(at(run->recv) + ((uint64_t)q * n + off) * run->es,
                   in_view(run, q, off), c * run->es);
    return meet(run);
}

static accel_status run_allgather(struct run *run)
{
    return chunked(run, run->op->count, stage_own, allgather_step);
}

/* Reduce-scatter: each chunk carries every rank's share at `off`. */
static void stage_shares(struct run *run, uint64_t off, uint64_t c)
{
    uint8_t *staging = accel__host_staging(run->comm->shared, run->comm->rank);
    uint64_t n = run->op->count;
    for (int q = 0; q < run->comm->size; q++)
        copy_bytes(staging + (uint64_t)q * c * run->es,
                   at(run->send) + ((uint64_t)q * n + off) * run->es,
                   c * run->es);
}

static accel_status reduce_scatter_step(struct run *run, uint64_t off,
                                        uint64_t c)
{
    int rank = run->comm->rank;
    uint64_t n = run->op->count;
    uint8_t *srcs[HOST_MAX_RANKS];
    for (int q = 0; q < run->comm->size; q++)
        srcs[q] = run->comm->shm
                      ? in_view(run, q, 0) + (uint64_t)rank * c * run->es
                      : in_view(run, q, (uint64_t)rank * n + off);
    reduce_into(run, at(run->recv) + off * run->es, srcs, c);
    return meet(run);
}

static accel_status run_reduce_scatter(struct run *run)
{
    if (run->comm->shm)
        run->chunk /= (unsigned)run->comm->size;
    return chunked(run, run->op->count, stage_shares, reduce_scatter_step);
}

static accel_status run_barrier(struct run *run)
{
    return begin(run);
}

static bool ranges_overlap(uint64_t a, uint64_t a_bytes, uint64_t b,
                           uint64_t b_bytes)
{
    return a_bytes != 0 && b_bytes != 0 && a < b + b_bytes && b < a + a_bytes;
}

/*
 * Loopback reads other ranks' inputs while this rank writes its output.
 * In place the way NCCL means it (this rank's share of recv is send) is
 * safe; any other overlap of send and recv would let this rank overwrite
 * input another rank has yet to read, so the input is copied first.
 */
static accel_status protect_input(struct run *run)
{
    uint64_t n = run->op->count * run->es;
    uint64_t size = (unsigned)run->comm->size, rank = (unsigned)run->comm->rank;
    uint64_t send_bytes = n, recv_bytes = n;
    bool safe;
    if (run->op->kind == ACCEL_COMM_ALLGATHER) {
        recv_bytes = n * size;
        safe = run->send == run->recv + rank * n;
    } else if (run->op->kind == ACCEL_COMM_REDUCE_SCATTER) {
        send_bytes = n * size;
        safe = run->recv == run->send + rank * n;
    } else {
        return ACCEL_OK;
    }
    if (run->comm->shm || safe ||
        !ranges_overlap(run->send, send_bytes, run->recv, recv_bytes))
        return ACCEL_OK;
    run->scratch = malloc(send_bytes);
    if (run->scratch == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    memcpy(run->scratch, at(run->send), send_bytes);
    run->send = (uint64_t)(uintptr_t)run->scratch;
    return ACCEL_OK;
}

/* ---- point to point: one mailbox per ordered pair of ranks ---- */

struct box_wait {
    struct host_mailbox *box;
    uint64_t target;
    const char *what; /* "a send to", "a recv from" */
    int peer;
};

static void describe_box(void *arg, char *out, size_t capacity)
{
    struct box_wait *wait = arg;
    snprintf(out, capacity, "%s rank %d", wait->what, wait->peer);
}

static bool box_posted(void *arg)
{
    struct box_wait *wait = arg;
    return wait->box->posted >= wait->target;
}

static bool box_taken(void *arg)
{
    struct box_wait *wait = arg;
    return wait->box->taken >= wait->target;
}

/* Post one chunk and wait until the receiver took it; *refused when the
 * receiver refused the message. */
static accel_status post_chunk(struct run *run, struct host_mailbox *box,
                               uint64_t off, uint64_t c, bool first,
                               bool *refused)
{
    struct host_shared *shared = run->comm->shared;
    accel__host_lock(shared);
    if (first) {
        box->count = run->op->count;
        box->type = run->op->type;
        box->verdict = 0;
    }
    box->addr = run->send + off * run->es;
    box->bytes = c * run->es;
    struct box_wait wait = {box, ++box->posted, "a send to", run->op->root};
    struct host_waiting waiting = {box_taken, describe_box, &wait};
    pthread_cond_broadcast(&shared->cond);
    accel_status status =
        accel__host_wait(run->comm, &waiting, run->op->deadline_ns);
    *refused = status == ACCEL_OK && box->verdict != 0;
    accel__host_unlock(shared);
    return status;
}

static accel_status run_send(struct run *run)
{
    int rank = run->comm->rank, peer = run->op->root;
    struct host_mailbox *box =
        accel__host_mailbox(run->comm->shared, rank, peer);
    uint64_t n = run->op->count, off = 0;
    do {
        uint64_t c = n - off < run->chunk ? n - off : run->chunk;
        if (run->comm->shm)
            stage_own(run, off, c);
        bool refused = false;
        accel_status status = post_chunk(run, box, off, c, off == 0, &refused);
        if (status != ACCEL_OK)
            return status;
        if (refused)
            return accel__host_error(
                run->comm, ACCEL_ERR_INVALID_ARGUMENT,
                "host communicator: rank %d sends %llu %s to rank %d, which "
                "receives %llu %s",
                rank, (unsigned long long)n,
                accel__comm_elem_name(run->op->type), peer,
                (unsigned long long)box->recv_count,
                accel__comm_elem_name(box->recv_type));
        off += c;
    } while (off < n);
    return ACCEL_OK;
}

/* Refuse a message that is not the one this rank receives (lock held). */
static accel_status refuse(struct run *run, struct host_mailbox *box)
{
    unsigned long long count = box->count;
    uint32_t type = box->type;
    box->verdict = -1;
    box->recv_count = run->op->count;
    box->recv_type = run->op->type;
    box->taken = box->posted;
    pthread_cond_broadcast(&run->comm->shared->cond);
    accel__host_unlock(run->comm->shared);
    return accel__host_error(
        run->comm, ACCEL_ERR_INVALID_ARGUMENT,
        "host communicator: rank %d receives %llu %s from rank %d, which "
        "sends %llu %s",
        run->comm->rank, (unsigned long long)run->op->count,
        accel__comm_elem_name(run->op->type), run->op->root, count,
        accel__comm_elem_name(type));
}

static accel_status run_recv(struct run *run)
{
    struct host_shared *shared = run->comm->shared;
    int peer = run->op->root;
    struct host_mailbox *box = accel__host_mailbox(shared, peer, run->comm->rank);
    uint64_t n = run->op->count, off = 0;
    do {
        accel__host_lock(shared);
        struct box_wait wait = {box, box->taken + 1, "a recv from", peer};
        struct host_waiting waiting = {box_posted, describe_box, &wait};
        accel_status status =
            accel__host_wait(run->comm, &waiting, run->op->deadline_ns);
        if (status != ACCEL_OK) {
            accel__host_unlock(shared);
            return status;
        }
        if (off == 0 && (box->count != n || box->type != run->op->type))
            return refuse(run, box);
        const uint8_t *src = run->comm->shm ? accel__host_staging(shared, peer)
                                            : at(box->addr);
        uint64_t bytes = box->bytes;
        accel__host_unlock(shared);
        /* The sender waits for `taken`: its chunk stays put meanwhile. */
        copy_bytes(at(run->recv) + off * run->es, src, bytes);
        accel__host_lock(shared);
        box->taken++;
        pthread_cond_broadcast(&shared->cond);
        accel__host_unlock(shared);
        off += bytes / run->es;
    } while (off < n);
    return ACCEL_OK;
}

accel_status accel__host_allgather_word(accel_comm_handle *comm,
                                        const void *mine, void *all,
                                        uint64_t deadline_ns)
{
    struct accel_comm_op op = {.kind = HOST_KIND_SPLIT,
                               .deadline_ns = deadline_ns};
    struct run run = {.comm = comm, .op = &op, .es = 1, .ready = ACCEL_OK};
    memcpy(slot_of(&run, comm->rank)->word, mine, HOST_WORD_BYTES);
    accel_status status = begin(&run);
    for (int q = 0; status == ACCEL_OK && q < comm->size; q++)
        memcpy((uint8_t *)all + (size_t)q * HOST_WORD_BYTES,
               slot_of(&run, q)->word, HOST_WORD_BYTES);
    comm->op_seq++;
    return status;
}

typedef accel_status (*run_fn)(struct run *run);

accel_status accel__host_run(accel_comm_handle *comm,
                             const struct accel_comm_op *op)
{
    static const run_fn group_ops[ACCEL_COMM_OP_KIND_COUNT] = {
        [ACCEL_COMM_ALLREDUCE] = run_reduce,
        [ACCEL_COMM_BROADCAST] = run_broadcast,
        [ACCEL_COMM_REDUCE] = run_reduce,
        [ACCEL_COMM_ALLGATHER] = run_allgather,
        [ACCEL_COMM_REDUCE_SCATTER] = run_reduce_scatter,
        [ACCEL_COMM_BARRIER] = run_barrier,
    };
    size_t es = accel__comm_elem_size(op->type);
    struct run run = {
        .comm = comm,
        .op = op,
        .es = es ? es : 1,
        .chunk = comm->shm ? comm->shared->chunk_bytes / (es ? es : 1)
                           : UINT64_MAX,
        .send = op->send,
        .recv = op->recv,
        .ready = ACCEL_OK,
    };
    accel_status status = accel__host_check_broken(comm);
    if (status != ACCEL_OK)
        return status;
    if (op->kind == ACCEL_COMM_SEND)
        return run_send(&run);
    if (op->kind == ACCEL_COMM_RECV)
        return run_recv(&run);
    run.ready = protect_input(&run);
    status = group_ops[op->kind](&run);
    comm->op_seq++;
    free(run.scratch);
    return status;
}
