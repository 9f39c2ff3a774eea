/*
 * libfakenccl.so: a CPU implementation of the NCCL entry points the nccl
 * and rccl providers use, so that they are tested without a GPU. Tests
 * load it as the provider loads NCCL (ACCEL_NCCL_LIBRARY, or
 * ACCEL_RCCL_LIBRARY for RCCL: it is the same API).
 *
 * What it models: the ranks of a communicator are threads of this process
 * that share state through the unique id (a "clique" per id); device
 * memory is host memory, as in the fake CUDA driver and HIP runtime (a
 * device address is the pointer's value), so collectives read and write
 * it directly. A collective runs when the last rank calls it, on that
 * rank's thread, after each rank's stream has drained (cuStreamSynchronize
 * or hipStreamSynchronize of the fake GPU library named by
 * ACCEL_CUDA_LIBRARY or ACCEL_HIP_LIBRARY, when loaded): every rank's call
 * returns once the result is written, so later work on its stream sees it.
 * The ranks must agree on kind, count, type, operation and root, else all
 * get ncclInvalidArgument. A send is buffered (it returns at once); a recv
 * waits for its message. Non-blocking communicators (a config with
 * blocking = 0) answer ncclInProgress from their creation until every
 * rank joined; aborting one makes every wait of its clique give up with
 * ncclRemoteError. Nothing is ever freed while the library is loaded (a
 * destroyed communicator is marked), so a stale handle stays memory-safe.
 *
 * Knobs, read at each ncclGetVersion and communicator creation:
 *
 *   FAKE_NCCL_VERSION=N          what ncclGetVersion says (default 22809,
 *                                2.28.9); below 21400 ncclCommInitRankConfig
 *                                answers ncclInvalidUsage, as if absent
 *   FAKE_NCCL_FAIL=F:N:R[,...]   the Nth call (from 1) of entry F returns R
 *                                (a name, e.g. ncclSystemError, or number)
 *                                and does nothing else
 *   FAKE_NCCL_ASYNC_ERROR=N:R    the Nth collective call succeeds, then its
 *                                communicator's ncclCommGetAsyncError says R
 *
 * It never prints.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <accel/comm.h>

#include "fake_core.h"
#include "fake_reduce.h"
#include "nccl_api.h"

#define FAKE_RANKS_MAX 16
#define FAKE_COMM_MAGIC 0x6e63636cu

/* What one rank brought to the collective in flight. */
struct fake_part {
    int kind;
    const void *send;
    void *recv;
    size_t count;
    int type, op, root;
    /* ncclCommSplit */
    int color, key;
    ancl_ncclComm_t *out_comm;
    bool nonblocking;
};

struct fake_message {
    int from, to;
    size_t bytes;
    unsigned char *data;
    struct fake_message *next;
};

struct fake_clique {
    ancl_ncclUniqueId id;
    int size, joined;
    bool broken;         /* a rank aborted: every wait gives up */
    uint64_t generation; /* collectives completed */
    int arrived;
    ancl_ncclResult_t outcome; /* of the last collective */
    struct fake_part parts[FAKE_RANKS_MAX];
    struct fake_message *mail;
    struct fake_clique *next;
};

struct ancl_ncclComm {
    uint32_t magic;
    struct fake_clique *clique;
    int rank;
    bool nonblocking, aborted, destroyed;
    ancl_ncclResult_t async_error;
    void *context; /* CUDA: the context current at creation */
    int device;    /* HIP: the device current at creation */
    struct ancl_ncclComm *next;
};

static struct {
    struct fake_clique *cliques;
    struct ancl_ncclComm *comms;
    uint64_t ids;
    struct fake_fails fails;
    uint64_t async_nth, async_seen;
    int async_code;
    int version;
} fake_nccl;

enum { FAKE_SPLIT = 100 };

/* ---- names and knobs ---- */

static const char *const result_names[] = {
    "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
    "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
    "ncclRemoteError",   "ncclInProgress"};

static bool parse_result(const char *text, int *out_code)
{
    char *end;

    for (int i = 0; i < (int)(sizeof(result_names) / sizeof(result_names[0]));
         i++) {
        if (strcmp(text, result_names[i]) == 0) {
            *out_code = i;
            return true;
        }
    }
    *out_code = (int)strtol(text, &end, 10);
    return end != text && *end == '\0';
}

/* Read the knobs. Lock held. */
static void read_knobs(void)
{
    const char *async = getenv("FAKE_NCCL_ASYNC_ERROR");

    fake_nccl.version = (int)fake_env_number("FAKE_NCCL_VERSION", 22809);
    fake_fails_read("FAKE_NCCL_FAIL", parse_result, &fake_nccl.fails);
    fake_nccl.async_nth = 0;
    fake_nccl.async_seen = 0;
    if (async != NULL && strchr(async, ':') != NULL &&
        parse_result(strchr(async, ':') + 1, &fake_nccl.async_code))
        fake_nccl.async_nth = strtoull(async, NULL, 10);
}

/* Count a call; the result FAKE_NCCL_FAIL gives it, or 0. Lock held. */
static ancl_ncclResult_t enter_call(const char *name)
{
    struct fake_lose never = {0};
    bool lose;

    fake_count(name);
    return (ancl_ncclResult_t)fake_knobs_apply(&fake_nccl.fails, &never, name,
                                               &lose);
}

#define FAKE_ENTER()                                                           \
    do {                                                                       \
        ancl_ncclResult_t injected_;                                           \
        pthread_mutex_lock(&fake_core.lock);                                   \
        injected_ = enter_call(__func__);                                      \
        if (injected_ != ANCL_ncclSuccess) {                                   \
            pthread_mutex_unlock(&fake_core.lock);                             \
            return injected_;                                                  \
        }                                                                      \
    } while (0)
#define FAKE_RETURN(result)                                                    \
    do {                                                                       \
        ancl_ncclResult_t result_ = (result);                                  \
        pthread_mutex_unlock(&fake_core.lock);                                 \
        return result_;                                                        \
    } while (0)

/* ---- the fake GPU library, for streams and the current device ---- */

struct fake_gpu {
    int (*stream_sync)(void *stream);
    int (*ctx_get_current)(void **context);
    int (*get_device)(int *ordinal);
};

/* The fake GPU library the test loaded (never loaded here). */
static struct fake_gpu gpu_entries(void)
{
    struct fake_gpu gpu = {0};
    const char *cuda = getenv("ACCEL_CUDA_LIBRARY");
    const char *hip = getenv("ACCEL_HIP_LIBRARY");
    void *library;

    if (cuda != NULL &&
        (library = dlopen(cuda, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        *(void **)&gpu.stream_sync = dlsym(library, "cuStreamSynchronize");
        *(void **)&gpu.ctx_get_current = dlsym(library, "cuCtxGetCurrent");
        dlclose(library);
    } else if (hip != NULL &&
               (library = dlopen(hip, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        *(void **)&gpu.stream_sync = dlsym(library, "hipStreamSynchronize");
        *(void **)&gpu.get_device = dlsym(library, "hipGetDevice");
        dlclose(library);
    }
    return gpu;
}

/* ---- communicators ---- */

static bool comm_live(const struct ancl_ncclComm *comm)
{
    for (const struct ancl_ncclComm *c = fake_nccl.comms; c != NULL; c = c->next) {
        if (c == comm)
            return comm->magic == FAKE_COMM_MAGIC && !comm->destroyed &&
                   !comm->aborted;
    }
    return false;
}

static struct fake_clique *clique_of(const ancl_ncclUniqueId *id, int size)
{
    struct fake_clique *clique;

    for (clique = fake_nccl.cliques; clique != NULL; clique = clique->next) {
        if (memcmp(&clique->id, id, sizeof(*id)) == 0)
            return clique;
    }
    clique = calloc(1, sizeof(*clique));
    if (clique == NULL)
        return NULL;
    clique->id = *id;
    clique->size = size;
    clique->next = fake_nccl.cliques;
    fake_nccl.cliques = clique;
    return clique;
}

static struct ancl_ncclComm *comm_new(struct fake_clique *clique, int rank,
                                      bool nonblocking)
{
    struct ancl_ncclComm *comm = calloc(1, sizeof(*comm));
    struct fake_gpu gpu = gpu_entries();

    if (comm == NULL)
        return NULL;
    comm->magic = FAKE_COMM_MAGIC;
    comm->clique = clique;
    comm->rank = rank;
    comm->nonblocking = nonblocking;
    comm->device = -1;
    /* The device NCCL binds to is the one current now. */
    if (gpu.ctx_get_current != NULL)
        gpu.ctx_get_current(&comm->context);
    if (gpu.get_device != NULL)
        gpu.get_device(&comm->device);
    comm->next = fake_nccl.comms;
    fake_nccl.comms = comm;
    return comm;
}

/* Join the clique of `id` as `rank`. Lock held. */
static ancl_ncclResult_t join(ancl_ncclComm_t *out_comm, int nranks,
                              const ancl_ncclUniqueId *id, int rank,
                              bool nonblocking)
{
    struct fake_clique *clique;
    struct ancl_ncclComm *comm;

    *out_comm = NULL;
    if (nranks < 1 || nranks > FAKE_RANKS_MAX || rank < 0 || rank >= nranks)
        return ANCL_ncclInvalidArgument;
    clique = clique_of(id, nranks);
    if (clique == NULL)
        return ANCL_ncclSystemError;
    if (clique->size != nranks || clique->joined >= nranks)
        return ANCL_ncclInvalidUsage;
    comm = comm_new(clique, rank, nonblocking);
    if (comm == NULL)
        return ANCL_ncclSystemError;
    clique->joined++;
    pthread_cond_broadcast(&fake_core.progress);
    *out_comm = comm;
    if (nonblocking)
        return clique->joined == nranks ? ANCL_ncclSuccess : ANCL_ncclInProgress;
    while (clique->joined < nranks && !clique->broken && !comm->aborted)
        pthread_cond_wait(&fake_core.progress, &fake_core.lock);
    return clique->joined == nranks ? ANCL_ncclSuccess : ANCL_ncclRemoteError;
}

FAKE_EXPORT ancl_ncclResult_t ncclGetVersion(int *version)
{
    FAKE_ENTER();
    read_knobs();
    *version = fake_nccl.version;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT const char *ncclGetErrorString(ancl_ncclResult_t result)
{
    if ((int)result >= 0 &&
        (size_t)result < sizeof(result_names) / sizeof(result_names[0]))
        return result_names[result];
    return "unknown result";
}

FAKE_EXPORT ancl_ncclResult_t ncclGetUniqueId(ancl_ncclUniqueId *unique_id)
{
    FAKE_ENTER();
    memset(unique_id, 0, sizeof(*unique_id));
    snprintf(unique_id->internal, sizeof(unique_id->internal),
             "fake-nccl %ld %llu", (long)getpid(),
             (unsigned long long)++fake_nccl.ids);
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclCommInitRank(ancl_ncclComm_t *comm, int nranks,
                                               ancl_ncclUniqueId comm_id,
                                               int rank)
{
    FAKE_ENTER();
    FAKE_RETURN(join(comm, nranks, &comm_id, rank, false));
}

FAKE_EXPORT ancl_ncclResult_t ncclCommInitRankConfig(ancl_ncclComm_t *comm,
                                                     int nranks,
                                                     ancl_ncclUniqueId comm_id,
                                                     int rank,
                                                     ancl_ncclConfig_t *config)
{
    FAKE_ENTER();
    read_knobs();
    *comm = NULL;
    if (fake_nccl.version < ANCL_NCCL_CONFIG_SINCE)
        FAKE_RETURN(ANCL_ncclInvalidUsage);
    /* As NCCL checks a config: its magic, a size that holds the 2.14 fields. */
    if (config == NULL || config->magic != ANCL_NCCL_CONFIG_MAGIC ||
        config->size < sizeof(ancl_ncclConfig_t) ||
        config->version < ANCL_NCCL_CONFIG_SINCE ||
        config->cgaClusterSize != ANCL_NCCL_CONFIG_UNDEF_INT)
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    FAKE_RETURN(join(comm, nranks, &comm_id, rank, config->blocking == 0));
}

FAKE_EXPORT ancl_ncclResult_t ncclCommGetAsyncError(ancl_ncclComm_t comm,
                                                    ancl_ncclResult_t *async_error)
{
    FAKE_ENTER();
    if (!comm_live(comm))
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    if (comm->async_error != ANCL_ncclSuccess)
        *async_error = comm->async_error;
    else if (comm->clique->broken)
        *async_error = ANCL_ncclRemoteError;
    else if (comm->clique->joined < comm->clique->size)
        *async_error = ANCL_ncclInProgress;
    else
        *async_error = ANCL_ncclSuccess;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclCommCount(const ancl_ncclComm_t comm, int *count)
{
    FAKE_ENTER();
    if (!comm_live(comm))
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    *count = comm->clique->size;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclCommUserRank(const ancl_ncclComm_t comm,
                                               int *rank)
{
    FAKE_ENTER();
    if (!comm_live(comm))
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    *rank = comm->rank;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclCommAbort(ancl_ncclComm_t comm)
{
    FAKE_ENTER();
    if (!comm_live(comm))
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    comm->aborted = true;
    comm->clique->broken = true;
    pthread_cond_broadcast(&fake_core.progress);
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclCommDestroy(ancl_ncclComm_t comm)
{
    FAKE_ENTER();
    if (!comm_live(comm))
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    comm->destroyed = true;
    FAKE_RETURN(ANCL_ncclSuccess);
}

/* ---- collectives ---- */

/* Whether every part agrees with the first on what the collective is. */
static bool parts_agree(const struct fake_clique *clique)
{
    const struct fake_part *first = &clique->parts[0];

    for (int r = 1; r < clique->size; r++) {
        const struct fake_part *p = &clique->parts[r];

        if (p->kind != first->kind || p->count != first->count ||
            p->type != first->type || p->op != first->op ||
            p->root != first->root)
            return false;
    }
    return true;
}

/* Reduce every rank's `count` elements at send + offset into `out`. */
static void reduce_parts(const struct fake_clique *clique, size_t offset,
                         size_t count, void *out)
{
    const struct fake_part *first = &clique->parts[0];
    size_t bytes = fake_reduce_type_bytes(first->type);

    memcpy(out, (const unsigned char *)first->send + offset * bytes,
           count * bytes);
    for (int r = 1; r < clique->size; r++)
        fake_reduce(first->type, first->op, out,
                    (const unsigned char *)clique->parts[r].send + offset * bytes,
                    count);
}

/* ncclCommSplit's new communicators, by color, ranked by key then rank. */
static ancl_ncclResult_t run_split(struct fake_clique *clique)
{
    for (int r = 0; r < clique->size; r++) {
        struct fake_part *p = &clique->parts[r];
        ancl_ncclUniqueId id;
        struct fake_clique *child;
        int size = 0, rank = 0;

        *p->out_comm = NULL;
        if (p->color == ANCL_NCCL_SPLIT_NOCOLOR)
            continue;
        for (int q = 0; q < clique->size; q++) {
            const struct fake_part *o = &clique->parts[q];

            if (o->color != p->color)
                continue;
            size++;
            if (o->key < p->key || (o->key == p->key && q < r))
                rank++;
        }
        memset(&id, 0, sizeof(id));
        snprintf(id.internal, sizeof(id.internal), "split %p %llu %d",
                 (void *)clique, (unsigned long long)clique->generation,
                 p->color);
        child = clique_of(&id, size);
        if (child == NULL)
            return ANCL_ncclSystemError;
        *p->out_comm = comm_new(child, rank, p->nonblocking);
        if (*p->out_comm == NULL)
            return ANCL_ncclSystemError;
        child->joined++;
    }
    return ANCL_ncclSuccess;
}

/* Run the collective every part is in; the last rank's thread. */
static ancl_ncclResult_t run_collective(struct fake_clique *clique)
{
    const struct fake_part *first = &clique->parts[0];
    size_t bytes, total;
    unsigned char *result;

    if (!parts_agree(clique))
        return ANCL_ncclInvalidArgument;
    if (first->kind == FAKE_SPLIT)
        return run_split(clique);
    bytes = fake_reduce_type_bytes(first->type);
    total = first->count * (size_t)clique->size;
    /* The result apart first: buffers may be in place. */
    result = malloc(total * bytes + 1);
    if (result == NULL)
        return ANCL_ncclSystemError;
    switch (first->kind) {
    case ACCEL_COMM_ALLREDUCE:
    case ACCEL_COMM_REDUCE:
        reduce_parts(clique, 0, first->count, result);
        for (int r = 0; r < clique->size; r++) {
            if (first->kind == ACCEL_COMM_ALLREDUCE || r == first->root)
                memcpy(clique->parts[r].recv, result, first->count * bytes);
        }
        break;
    case ACCEL_COMM_BROADCAST:
        memcpy(result, clique->parts[first->root].send, first->count * bytes);
        for (int r = 0; r < clique->size; r++)
            memcpy(clique->parts[r].recv, result, first->count * bytes);
        break;
    case ACCEL_COMM_ALLGATHER:
        for (int r = 0; r < clique->size; r++)
            memcpy(result + (size_t)r * first->count * bytes,
                   clique->parts[r].send, first->count * bytes);
        for (int r = 0; r < clique->size; r++)
            memcpy(clique->parts[r].recv, result, total * bytes);
        break;
    default: /* ACCEL_COMM_REDUCE_SCATTER */
        reduce_parts(clique, 0, total, result);
        for (int r = 0; r < clique->size; r++)
            memcpy(clique->parts[r].recv,
                   result + (size_t)r * first->count * bytes,
                   first->count * bytes);
        break;
    }
    free(result);
    return ANCL_ncclSuccess;
}

/* FAKE_NCCL_ASYNC_ERROR: this collective call sets the comm's error. Lock held. */
static void maybe_async_error(struct ancl_ncclComm *comm)
{
    if (fake_nccl.async_nth != 0 && ++fake_nccl.async_seen == fake_nccl.async_nth)
        comm->async_error = (ancl_ncclResult_t)fake_nccl.async_code;
}

/*
 * Take part in a collective: wait for every rank, the last runs it. Lock
 * held; the stream was drained before the lock was taken.
 */
static ancl_ncclResult_t take_part(struct ancl_ncclComm *comm,
                                   const struct fake_part *part)
{
    struct fake_clique *clique = comm->clique;
    uint64_t generation = clique->generation;

    if (clique->joined < clique->size)
        return ANCL_ncclInvalidUsage;
    clique->parts[comm->rank] = *part;
    if (++clique->arrived == clique->size) {
        clique->outcome = run_collective(clique);
        clique->arrived = 0;
        clique->generation++;
        pthread_cond_broadcast(&fake_core.progress);
    }
    while (clique->generation == generation && !clique->broken)
        pthread_cond_wait(&fake_core.progress, &fake_core.lock);
    if (clique->generation == generation)
        return ANCL_ncclRemoteError;
    if (clique->outcome == ANCL_ncclSuccess)
        maybe_async_error(comm);
    return clique->outcome;
}

/* Drain `stream` (outside the lock) so that the buffers hold what it wrote. */
static ancl_ncclResult_t drain(void *stream)
{
    struct fake_gpu gpu = gpu_entries();

    if (stream == NULL || gpu.stream_sync == NULL)
        return ANCL_ncclSuccess;
    return gpu.stream_sync(stream) == 0 ? ANCL_ncclSuccess
                                        : ANCL_ncclUnhandledCudaError;
}

/* An entry of a collective: the checks, the stream, the part. */
static ancl_ncclResult_t collective(const char *name, ancl_ncclComm_t comm,
                                    void *stream, struct fake_part part)
{
    ancl_ncclResult_t result = drain(stream);

    pthread_mutex_lock(&fake_core.lock);
    if (result == ANCL_ncclSuccess)
        result = enter_call(name);
    if (result == ANCL_ncclSuccess && !comm_live(comm))
        result = ANCL_ncclInvalidArgument;
    if (result == ANCL_ncclSuccess && fake_reduce_type_bytes(part.type) == 0)
        result = ANCL_ncclInvalidArgument;
    if (result == ANCL_ncclSuccess)
        result = take_part(comm, &part);
    pthread_mutex_unlock(&fake_core.lock);
    return result;
}

FAKE_EXPORT ancl_ncclResult_t ncclAllReduce(const void *sendbuff,
                                            void *recvbuff, size_t count,
                                            ancl_ncclDataType_t datatype,
                                            ancl_ncclRedOp_t op,
                                            ancl_ncclComm_t comm,
                                            ancl_stream_t stream)
{
    return collective(__func__, comm, stream,
                      (struct fake_part){.kind = ACCEL_COMM_ALLREDUCE,
                                         .send = sendbuff,
                                         .recv = recvbuff,
                                         .count = count,
                                         .type = (int)datatype,
                                         .op = (int)op});
}

FAKE_EXPORT ancl_ncclResult_t ncclBroadcast(const void *sendbuff,
                                            void *recvbuff, size_t count,
                                            ancl_ncclDataType_t datatype,
                                            int root, ancl_ncclComm_t comm,
                                            ancl_stream_t stream)
{
    return collective(__func__, comm, stream,
                      (struct fake_part){.kind = ACCEL_COMM_BROADCAST,
                                         .send = sendbuff,
                                         .recv = recvbuff,
                                         .count = count,
                                         .type = (int)datatype,
                                         .root = root});
}

FAKE_EXPORT ancl_ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff,
                                         size_t count,
                                         ancl_ncclDataType_t datatype,
                                         ancl_ncclRedOp_t op, int root,
                                         ancl_ncclComm_t comm,
                                         ancl_stream_t stream)
{
    return collective(__func__, comm, stream,
                      (struct fake_part){.kind = ACCEL_COMM_REDUCE,
                                         .send = sendbuff,
                                         .recv = recvbuff,
                                         .count = count,
                                         .type = (int)datatype,
                                         .op = (int)op,
                                         .root = root});
}

FAKE_EXPORT ancl_ncclResult_t ncclAllGather(const void *sendbuff,
                                            void *recvbuff, size_t sendcount,
                                            ancl_ncclDataType_t datatype,
                                            ancl_ncclComm_t comm,
                                            ancl_stream_t stream)
{
    return collective(__func__, comm, stream,
                      (struct fake_part){.kind = ACCEL_COMM_ALLGATHER,
                                         .send = sendbuff,
                                         .recv = recvbuff,
                                         .count = sendcount,
                                         .type = (int)datatype});
}

FAKE_EXPORT ancl_ncclResult_t ncclReduceScatter(const void *sendbuff,
                                                void *recvbuff, size_t recvcount,
                                                ancl_ncclDataType_t datatype,
                                                ancl_ncclRedOp_t op,
                                                ancl_ncclComm_t comm,
                                                ancl_stream_t stream)
{
    return collective(__func__, comm, stream,
                      (struct fake_part){.kind = ACCEL_COMM_REDUCE_SCATTER,
                                         .send = sendbuff,
                                         .recv = recvbuff,
                                         .count = recvcount,
                                         .type = (int)datatype,
                                         .op = (int)op});
}

FAKE_EXPORT ancl_ncclResult_t ncclCommSplit(ancl_ncclComm_t comm, int color,
                                            int key, ancl_ncclComm_t *newcomm,
                                            ancl_ncclConfig_t *config)
{
    return collective(__func__, comm, NULL,
                      (struct fake_part){.kind = FAKE_SPLIT,
                                         .type = ANCL_ncclUint8,
                                         .color = color,
                                         .key = key,
                                         .out_comm = newcomm,
                                         .nonblocking = config != NULL &&
                                                        config->blocking == 0});
}

/* ---- point to point ---- */

static __thread int group_depth;

FAKE_EXPORT ancl_ncclResult_t ncclGroupStart(void)
{
    FAKE_ENTER();
    group_depth++;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclGroupEnd(void)
{
    FAKE_ENTER();
    if (group_depth == 0)
        FAKE_RETURN(ANCL_ncclInvalidUsage);
    group_depth--;
    FAKE_RETURN(ANCL_ncclSuccess);
}

FAKE_EXPORT ancl_ncclResult_t ncclSend(const void *sendbuff, size_t count,
                                       ancl_ncclDataType_t datatype, int peer,
                                       ancl_ncclComm_t comm, ancl_stream_t stream)
{
    ancl_ncclResult_t result = drain(stream);
    struct fake_message *message, **tail;
    size_t bytes = fake_reduce_type_bytes((int)datatype) * count;

    if (result != ANCL_ncclSuccess)
        return result;
    FAKE_ENTER();
    if (!comm_live(comm) || peer < 0 || peer >= comm->clique->size ||
        fake_reduce_type_bytes((int)datatype) == 0)
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    message = calloc(1, sizeof(*message));
    if (message == NULL || (message->data = malloc(bytes + 1)) == NULL) {
        free(message);
        FAKE_RETURN(ANCL_ncclSystemError);
    }
    memcpy(message->data, sendbuff, bytes);
    message->from = comm->rank;
    message->to = peer;
    message->bytes = bytes;
    for (tail = &comm->clique->mail; *tail != NULL; tail = &(*tail)->next)
        ;
    *tail = message;
    pthread_cond_broadcast(&fake_core.progress);
    FAKE_RETURN(ANCL_ncclSuccess);
}

/* The first message from `from` to `to`, taken off the list, or NULL. */
static struct fake_message *mail_take(struct fake_clique *clique, int from, int to)
{
    for (struct fake_message **m = &clique->mail; *m != NULL; m = &(*m)->next) {
        if ((*m)->from == from && (*m)->to == to) {
            struct fake_message *found = *m;

            *m = found->next;
            return found;
        }
    }
    return NULL;
}

FAKE_EXPORT ancl_ncclResult_t ncclRecv(void *recvbuff, size_t count,
                                       ancl_ncclDataType_t datatype, int peer,
                                       ancl_ncclComm_t comm, ancl_stream_t stream)
{
    ancl_ncclResult_t result = drain(stream);
    struct fake_message *message = NULL;
    size_t bytes = fake_reduce_type_bytes((int)datatype) * count;

    if (result != ANCL_ncclSuccess)
        return result;
    FAKE_ENTER();
    if (!comm_live(comm) || peer < 0 || peer >= comm->clique->size)
        FAKE_RETURN(ANCL_ncclInvalidArgument);
    while (!comm->clique->broken &&
           (message = mail_take(comm->clique, peer, comm->rank)) == NULL)
        pthread_cond_wait(&fake_core.progress, &fake_core.lock);
    if (message == NULL)
        FAKE_RETURN(ANCL_ncclRemoteError);
    result = message->bytes == bytes ? ANCL_ncclSuccess
                                     : ANCL_ncclInvalidArgument;
    if (result == ANCL_ncclSuccess)
        memcpy(recvbuff, message->data, bytes);
    free(message->data);
    free(message);
    FAKE_RETURN(result);
}

/* ---- for the tests ---- */

/* How many times entry `name` was called since the library was loaded. */
FAKE_EXPORT uint64_t fake_nccl_calls(const char *name)
{
    return fake_calls(name);
}

/*
 * The context (CUDA) or device (HIP) that was current when the latest
 * communicator of rank `rank` was made; false when there is none.
 */
FAKE_EXPORT bool fake_nccl_rank_device(int rank, void **out_context,
                                       int *out_device)
{
    bool found = false;

    pthread_mutex_lock(&fake_core.lock);
    for (const struct ancl_ncclComm *c = fake_nccl.comms; c != NULL && !found;
         c = c->next) {
        if (c->rank == rank) {
            *out_context = c->context;
            *out_device = c->device;
            found = true;
        }
    }
    pthread_mutex_unlock(&fake_core.lock);
    return found;
}
