/*
 * accel-comm-host: collectives between the ranks of one machine on the
 * CPU. Ranks that are threads of one process (loopback) share state in
 * ordinary memory and read each other's buffers; ranks in different
 * processes share a POSIX shared-memory segment named after the
 * communicator's unique id. Every operation runs to completion in submit
 * (host-run, not CAP_STREAM): libaccel calls it from its progress thread.
 */
#include <accel/comm.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "host_group.h"
#include "host_join.h"
#include "host_ops.h"
#include "reduce.h"

#define HOST_ID_BYTES 16u

struct accel_comm_provider {
    const struct accel_comm_services *services;
};

static accel_status host_plugin_open(const struct accel_comm_services *services,
                                     accel_comm_provider **out_provider)
{
    *out_provider = NULL;
    accel_comm_provider *provider = calloc(1, sizeof *provider);
    if (provider == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    provider->services = services;
    *out_provider = provider;
    return ACCEL_OK;
}

static void host_plugin_close(accel_comm_provider *provider)
{
    free(provider);
}

static accel_status host_accepts_memory(accel_comm_provider *provider,
                                        accel_native_kind kind)
{
    if (kind == ACCEL_NATIVE_CPU)
        return ACCEL_OK;
    return accel__host_service_error(
        provider->services, ACCEL_ERR_NOT_SUPPORTED,
        "host provider: reduces on the CPU, over host pointers only (device "
        "memory of kind %d must be staged through host memory)",
        (int)kind);
}

static accel_status fill_random(void *out, size_t bytes)
{
    uint8_t *at = out;
    while (bytes > 0) {
        ssize_t got = getrandom(at, bytes, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return ACCEL_ERR_DRIVER;
        at += got;
        bytes -= (size_t)got;
    }
    return ACCEL_OK;
}

static accel_status host_unique_id(accel_comm_provider *provider, void *out_id,
                                   size_t capacity, size_t *out_bytes)
{
    *out_bytes = 0;
    if (capacity < HOST_ID_BYTES)
        return accel__host_service_error(
            provider->services, ACCEL_ERR_INVALID_ARGUMENT,
            "host provider: a unique id takes %u bytes, %zu offered",
            HOST_ID_BYTES, capacity);
    if (fill_random(out_id, HOST_ID_BYTES) != ACCEL_OK)
        return accel__host_service_error(provider->services, ACCEL_ERR_DRIVER,
                                         "host provider: getrandom: %s",
                                         strerror(errno));
    *out_bytes = HOST_ID_BYTES;
    return ACCEL_OK;
}

/* ---- where a rank runs: the same process, or the same machine ---- */

struct host_place {
    uint64_t pid;
    uint8_t nonce[16]; /* per process: tells apart equal pids of two
                          pid namespaces */
    char boot_id[40];
    char host[64];
};

static uint8_t process_nonce[16];
static pthread_once_t process_nonce_once = PTHREAD_ONCE_INIT;

static void make_process_nonce(void)
{
    if (fill_random(process_nonce, sizeof process_nonce) != ACCEL_OK)
        memset(process_nonce, 0, sizeof process_nonce);
}

static void read_place(struct host_place *place)
{
    memset(place, 0, sizeof *place);
    pthread_once(&process_nonce_once, make_process_nonce);
    place->pid = (uint64_t)getpid();
    memcpy(place->nonce, process_nonce, sizeof place->nonce);
    FILE *file = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (file != NULL) {
        if (fgets(place->boot_id, sizeof place->boot_id, file) == NULL)
            place->boot_id[0] = '\0';
        fclose(file);
    }
    gethostname(place->host, sizeof place->host - 1);
}

static bool same_process(const struct host_place *a, const struct host_place *b)
{
    return a->pid == b->pid && memcmp(a->nonce, b->nonce, sizeof a->nonce) == 0;
}

static bool same_machine(const struct host_place *a, const struct host_place *b)
{
    return strcmp(a->boot_id, b->boot_id) == 0 && strcmp(a->host, b->host) == 0;
}

/* ---- comm_create ---- */

static accel_status bootstrap_allgather(void *ctx, const void *mine, void *all,
                                        size_t bytes)
{
    const struct accel_comm_bootstrap *bootstrap = ctx;
    return bootstrap->allgather(bootstrap->ctx, mine, all, bytes);
}

/* A group of one exchanges with itself. */
static accel_status self_allgather(void *ctx, const void *mine, void *all,
                                   size_t bytes)
{
    (void)ctx;
    memcpy(all, mine, bytes);
    return ACCEL_OK;
}

static accel_status check_init(accel_comm_provider *provider,
                               const struct accel_comm_init *init)
{
    const struct accel_comm_services *services = provider->services;
    if (init == NULL || init->struct_size < sizeof *init)
        return accel__host_service_error(
            services, ACCEL_ERR_INVALID_ARGUMENT,
            "host provider: comm_create needs a whole accel_comm_init");
    if (init->size < 1 || init->size > HOST_MAX_RANKS || init->rank < 0 ||
        init->rank >= init->size)
        return accel__host_service_error(
            services, ACCEL_ERR_INVALID_ARGUMENT,
            "host provider: rank %d of %d (1 to %d ranks)", (int)init->rank,
            (int)init->size, HOST_MAX_RANKS);
    if (init->device.kind != ACCEL_NATIVE_CPU)
        return host_accepts_memory(provider, init->device.kind);
    if (init->size > 1 && (init->bootstrap == NULL ||
                           init->bootstrap->allgather == NULL))
        return accel__host_service_error(
            services, ACCEL_ERR_INVALID_ARGUMENT,
            "host provider: %d ranks and no bootstrap", (int)init->size);
    return ACCEL_OK;
}

/* The segment name of a communicator: its unique id in hex. */
static accel_status name_from_id(accel_comm_handle *comm,
                                 const struct accel_comm_init *init)
{
    if (init->id == NULL || init->id_bytes < HOST_ID_BYTES)
        return accel__host_error(comm, ACCEL_ERR_INVALID_ARGUMENT,
                                 "host provider: ranks in several processes "
                                 "need the unique id of rank 0 (%zu bytes "
                                 "given)",
                                 init->id_bytes);
    const uint8_t *id = init->id;
    int used = snprintf(comm->name, sizeof comm->name, "/accel-comm-");
    for (unsigned i = 0; i < HOST_ID_BYTES; i++)
        used += snprintf(comm->name + used, sizeof comm->name - (size_t)used,
                         "%02x", id[i]);
    return ACCEL_OK;
}

/* Loopback when every rank is a thread of this process; shared memory
 * when all run on this machine; refused otherwise. */
static accel_status create_group(accel_comm_handle *comm,
                                 const struct accel_comm_init *init)
{
    struct host_exchange exchange = {self_allgather, NULL, 0, 1};
    if (comm->size > 1)
        exchange = (struct host_exchange){bootstrap_allgather,
                                          (void *)init->bootstrap, comm->rank,
                                          comm->size};
    struct host_place *places = calloc((size_t)comm->size, sizeof *places);
    struct host_place mine;
    int members[HOST_MAX_RANKS];
    if (places == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    read_place(&mine);
    accel_status status =
        exchange.allgather(exchange.ctx, &mine, places, sizeof mine);
    bool local = true, one_machine = true;
    int away = 0;
    for (int q = 0; status == ACCEL_OK && q < comm->size; q++) {
        members[q] = q;
        local = local && same_process(&places[q], &mine);
        if (!same_machine(&places[q], &mine) && one_machine) {
            one_machine = false;
            away = q;
        }
    }
    if (status == ACCEL_OK && !one_machine)
        status = accel__host_error(
            comm, ACCEL_ERR_NOT_SUPPORTED,
            "host provider: connects the ranks of one machine; rank %d runs "
            "on %s, rank %d on %s",
            comm->rank, mine.host, away, places[away].host);
    free(places);
    if (status != ACCEL_OK)
        return status;
    if (local)
        return accel__host_join_loopback(comm, &exchange, members, comm->size);
    status = name_from_id(comm, init);
    if (status != ACCEL_OK)
        return status;
    return accel__host_join_shm(comm, &exchange, members, comm->size,
                                comm->name);
}

static accel_status host_comm_create(accel_comm_provider *provider,
                                     const struct accel_comm_init *init,
                                     accel_comm_handle **out_comm)
{
    *out_comm = NULL;
    accel_status status = check_init(provider, init);
    if (status != ACCEL_OK)
        return status;
    accel_comm_handle *comm = calloc(1, sizeof *comm);
    if (comm == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    comm->services = provider->services;
    comm->rank = init->rank;
    comm->size = init->size;
    comm->timeout_ns = init->timeout_ns;
    status = create_group(comm, init);
    if (status != ACCEL_OK) {
        free(comm);
        return status;
    }
    *out_comm = comm;
    return ACCEL_OK;
}

/* ---- comm_split ---- */

struct group_exchange {
    accel_comm_handle *comm;
    uint64_t deadline_ns;
};

static accel_status group_allgather(void *ctx, const void *mine, void *all,
                                    size_t bytes)
{
    struct group_exchange *group = ctx;
    uint8_t word[HOST_WORD_BYTES] = {0};
    uint8_t words[HOST_MAX_RANKS * HOST_WORD_BYTES];
    memcpy(word, mine, bytes);
    accel_status status = accel__host_allgather_word(group->comm, word, words,
                                                     group->deadline_ns);
    for (int q = 0; status == ACCEL_OK && q < group->comm->size; q++)
        memcpy((uint8_t *)all + (size_t)q * bytes,
               words + (size_t)q * HOST_WORD_BYTES, bytes);
    return status;
}

struct split_word {
    int32_t color;
    int32_t key;
    int32_t ready; /* this rank could allocate its new handle */
};

/* The parent ranks of `color`, ordered by (key, parent rank). */
static int members_of(const struct split_word *words, int size, int color,
                      int *members)
{
    int count = 0;
    for (int q = 0; q < size; q++) {
        if (words[q].color != color)
            continue;
        int at = count++;
        while (at > 0 && words[members[at - 1]].key > words[q].key) {
            members[at] = members[at - 1];
            at--;
        }
        members[at] = q;
    }
    return count;
}

static uint64_t fnv1a(uint64_t hash, const void *data, size_t bytes)
{
    const uint8_t *at = data;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ at[i]) * 0x100000001b3ull;
    return hash;
}

/* A child segment's name, the same on every member: the parent's name,
 * the split's sequence number and the color's first parent rank. */
static void child_name(const accel_comm_handle *parent, uint32_t seq,
                       int leader, char *out, size_t capacity)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    const void *parts[3] = {parent->name, &seq, &leader};
    size_t sizes[3] = {strlen(parent->name), sizeof seq, sizeof leader};
    for (int i = 0; i < 3; i++) {
        a = fnv1a(a, parts[i], sizes[i]);
        b = fnv1a(b, parts[i], sizes[i]);
    }
    snprintf(out, capacity, "/accel-comm-%016llx%016llx", (unsigned long long)a,
             (unsigned long long)b);
}

/* Take part in a split's exchanges without joining a group. */
static accel_status stand_by(accel_comm_handle *parent, accel_comm_handle *child,
                             const struct host_exchange *exchange)
{
    if (parent->shm)
        return accel__host_join_shm(child, exchange, NULL, 0, "");
    return accel__host_join_loopback(child, exchange, NULL, 0);
}

static accel_status join_child(accel_comm_handle *parent,
                               accel_comm_handle *child,
                               const struct split_word *words, int color,
                               uint64_t deadline_ns)
{
    int members[HOST_MAX_RANKS];
    int count = color < 0 ? 0 : members_of(words, parent->size, color, members);
    struct group_exchange group = {parent, deadline_ns};
    struct host_exchange exchange = {group_allgather, &group, parent->rank,
                                     parent->size};
    uint32_t seq = parent->split_seq++;
    for (int i = 0; i < count; i++) {
        if (members[i] == parent->rank)
            child->rank = i;
        if (!words[members[i]].ready) {
            accel_status status = stand_by(parent, child, &exchange);
            if (status != ACCEL_OK)
                return status;
            return accel__host_error(parent, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                     "host provider: comm_split: rank %d is "
                                     "out of memory",
                                     members[i]);
        }
    }
    if (count == 0)
        return stand_by(parent, child, &exchange);
    child->size = count;
    if (!parent->shm)
        return accel__host_join_loopback(child, &exchange, members, count);
    child_name(parent, seq, members[0], child->name, sizeof child->name);
    return accel__host_join_shm(child, &exchange, members, count, child->name);
}

static accel_status host_comm_split(accel_comm_handle *comm, int color, int key,
                                    accel_comm_handle **out_comm)
{
    *out_comm = NULL;
    uint64_t deadline_ns =
        comm->timeout_ns ? accel__host_now_ns() + comm->timeout_ns : 0;
    accel_comm_handle *child = calloc(1, sizeof *child);
    accel_comm_handle spare;
    accel_comm_handle *target = child != NULL ? child : &spare;
    memset(&spare, 0, sizeof spare);
    struct split_word mine = {color < 0 ? -1 : color, key, child != NULL};
    struct split_word words[HOST_MAX_RANKS];
    struct group_exchange group = {comm, deadline_ns};
    accel_status status = group_allgather(&group, &mine, words, sizeof mine);
    if (status != ACCEL_OK) {
        free(child);
        return status;
    }
    target->services = comm->services;
    target->timeout_ns = comm->timeout_ns;
    status = join_child(comm, target, words, mine.color, deadline_ns);
    if (status != ACCEL_OK || mine.color < 0) {
        free(child);
        return status;
    }
    *out_comm = child; /* not NULL: else join_child refused */
    return ACCEL_OK;
}

/* ---- the rest of the table ---- */

static void host_comm_destroy(accel_comm_handle *comm)
{
    if (comm == NULL)
        return;
    accel__host_leave(comm);
    free(comm);
}

static void host_comm_abort(accel_comm_handle *comm)
{
    struct host_shared *shared = comm->shared;
    accel__host_lock(shared);
    accel__host_break(shared, ACCEL_ERR_COMM_ABORTED,
                      "comm_abort was called on rank %d", comm->rank);
    accel__host_unlock(shared);
}

static accel_status host_comm_error(accel_comm_handle *comm)
{
    struct host_shared *shared = comm->shared;
    char reason[HOST_REASON_BYTES];
    accel__host_lock(shared);
    accel_status error = (accel_status)shared->error;
    memcpy(reason, shared->reason, sizeof reason);
    accel__host_unlock(shared);
    if (error == ACCEL_OK)
        return ACCEL_OK;
    reason[sizeof reason - 1] = '\0';
    return accel__host_error(comm, error, "host communicator, rank %d: %s",
                             comm->rank, reason);
}

/* Which buffers an operation reads and writes on this rank. */
static void buffers_needed(const accel_comm_handle *comm,
                           const struct accel_comm_op *op, bool *send,
                           bool *recv)
{
    bool root = op->root == comm->rank;
    switch (op->kind) {
    case ACCEL_COMM_BROADCAST:
        *send = root;
        *recv = !root;
        break;
    case ACCEL_COMM_REDUCE:
        *send = true;
        *recv = root;
        break;
    case ACCEL_COMM_SEND:
        *send = true;
        *recv = false;
        break;
    case ACCEL_COMM_RECV:
        *send = false;
        *recv = true;
        break;
    case ACCEL_COMM_BARRIER:
        *send = *recv = false;
        break;
    default:
        *send = *recv = true;
        break;
    }
}

static accel_status check_op(accel_comm_handle *comm,
                             const struct accel_comm_op *op)
{
    const char *fail = NULL;
    bool send, recv;
    size_t es = accel__comm_elem_size(op->type);
    bool peer = op->kind == ACCEL_COMM_SEND || op->kind == ACCEL_COMM_RECV;
    if (op->struct_size < sizeof *op || op->kind >= ACCEL_COMM_OP_KIND_COUNT)
        fail = "unknown operation";
    else if (op->kind == ACCEL_COMM_BARRIER)
        return ACCEL_OK;
    else if (es == 0)
        fail = "unknown element type";
    else if (op->reduce_op >= ACCEL_REDUCE_OP_COUNT &&
             (op->kind == ACCEL_COMM_ALLREDUCE || op->kind == ACCEL_COMM_REDUCE ||
              op->kind == ACCEL_COMM_REDUCE_SCATTER))
        fail = "unknown reduce op";
    else if ((peer || op->kind == ACCEL_COMM_BROADCAST ||
              op->kind == ACCEL_COMM_REDUCE) &&
             (op->root < 0 || op->root >= comm->size))
        fail = "root or peer out of range";
    else if (peer && op->root == comm->rank)
        fail = "a rank cannot send to or receive from itself (submit blocks)";
    else if (op->count > UINT64_MAX / es / (uint64_t)comm->size)
        fail = "count too large";
    if (fail == NULL && op->memory != ACCEL_NATIVE_CPU)
        return accel__host_error(comm, ACCEL_ERR_NOT_SUPPORTED,
                                 "host provider: buffers must be host "
                                 "pointers (memory kind %u given)",
                                 op->memory);
    if (fail == NULL && op->count > 0) {
        buffers_needed(comm, op, &send, &recv);
        if ((send && op->send == 0) || (recv && op->recv == 0))
            fail = "a buffer the operation needs is 0";
    }
    if (fail == NULL)
        return ACCEL_OK;
    return accel__host_error(comm, ACCEL_ERR_INVALID_ARGUMENT,
                             "host provider, rank %d: %s", comm->rank, fail);
}

static accel_status host_submit(accel_comm_handle *comm,
                                const struct accel_comm_op *op)
{
    if (op == NULL)
        return accel__host_error(comm, ACCEL_ERR_INVALID_ARGUMENT,
                                 "host provider: no operation");
    accel_status status = check_op(comm, op);
    if (status != ACCEL_OK)
        return status;
    return accel__host_run(comm, op);
}

ACCEL_COMM_EXPORT const struct accel_comm_v1 accel_comm_v1 = {
    .struct_size = sizeof(struct accel_comm_v1),
    .abi_major = ACCEL_COMM_ABI_MAJOR,
    .abi_minor = ACCEL_COMM_ABI_MINOR,
    .name = "host",
    .caps = ACCEL_COMM_CAP_LOOPBACK,
    .plugin_open = host_plugin_open,
    .plugin_close = host_plugin_close,
    .accepts_memory = host_accepts_memory,
    .unique_id = host_unique_id,
    .comm_create = host_comm_create,
    .comm_split = host_comm_split,
    .comm_destroy = host_comm_destroy,
    .comm_abort = host_comm_abort,
    .comm_error = host_comm_error,
    .submit = host_submit,
};
