/*
 * Communicators: their creation over the launcher's ranks or over threads,
 * split, abort, status and destruction, and the device's share of their
 * state (communicators, collectives in flight).
 *
 * Lock order: the device lock, then a communicator's `calls`, then the
 * device's comm lock, then a communicator's `lock`. A collective never
 * needs the device lock to finish (its gate runs on a plugin thread and
 * its work on the progress thread, or on its caller once the device lock
 * is let go), so that a thread holding the device lock (relocation, a
 * reset, a drop that waits) may wait for it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "device.h"
#include "host.h"
#include "status.h"
#include "trace.h"
#include "submit.h"

#define TIMEOUT_DEFAULT_MS 300000ull
/* 2^62 ns, about 146 years: every deadline is now + timeout, and a longer
 * timeout would wrap past UINT64_MAX into one that has already passed. */
#define TIMEOUT_MAX_NS (1ull << 62)

uint64_t accel__comm_timeout_ns(void)
{
    const char *text = accel__getenv("ACCEL_COMM_TIMEOUT_MS");
    if (text == NULL || *text == '\0')
        return TIMEOUT_DEFAULT_MS * 1000000ull;
    char *end = NULL;
    unsigned long long ms = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] < '0' || text[0] > '9') {
        accel__log(ACCEL_LOG_WARN,
                   "ACCEL_COMM_TIMEOUT_MS='%s' is not a count of "
                   "milliseconds: the default %llu is used",
                   text, TIMEOUT_DEFAULT_MS);
        return TIMEOUT_DEFAULT_MS * 1000000ull;
    }
    /* Digits past strtoull's range come back as ULLONG_MAX: a long wait. */
    if (ms > TIMEOUT_MAX_NS / 1000000ull)
        return TIMEOUT_MAX_NS;
    return (uint64_t)ms * 1000000ull;
}

/* ---- the device's part ---- */

accel_status accel__comm_device_init(accel_device *device)
{
    struct accel__comm_device *c = &device->comm;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pthread_mutex_init");
    if (pthread_cond_init(&c->finished, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pthread_cond_init");
    }
    return ACCEL_OK;
}

void accel__comm_device_deinit(accel_device *device)
{
    pthread_cond_destroy(&device->comm.finished);
    pthread_mutex_destroy(&device->comm.lock);
}

/* A stream-ordered collective is over once the event behind it is. */
static bool event_passed(accel_device *device, struct accel__comm_op *op)
{
    if (op->event == NULL)
        return false;
    accel_status status = ACCEL__DRV_TRY(device, event_query, op->event);
    return status != ACCEL_NOT_READY;
}

void accel__comm_reap(accel_device *device)
{
    struct accel__comm_device *c = &device->comm;
    struct accel__comm_op *done = NULL;
    pthread_mutex_lock(&c->lock);
    struct accel__comm_op **link = &c->ops;
    while (*link != NULL) {
        struct accel__comm_op *op = *link;
        if (!op->finished && event_passed(device, op))
            op->finished = true;
        /* A hold still to run reads the op: it stays until then. */
        if (!op->finished || (op->held && !op->hold_ran)) {
            link = &op->next;
            continue;
        }
        *link = op->next;
        op->next = done;
        done = op;
    }
    pthread_mutex_unlock(&c->lock);
    while (done != NULL) {
        struct accel__comm_op *op = done;
        done = op->next;
        for (uint32_t i = 0; i < op->pin_count; i++)
            accel__pool_unpin(op->pins[i]);
        if (op->event != NULL)
            accel__event_give(device, op->event);
        free(op);
    }
}

void accel__comm_device_abort(accel_device *device, const char *why)
{
    struct accel__comm_device *c = &device->comm;
    pthread_mutex_lock(&c->lock);
    for (struct accel_comm *comm = c->comms; comm != NULL; comm = comm->next)
        accel__comm_abort_for(comm, why);
    pthread_mutex_unlock(&c->lock);
}

void accel__comm_abandon(accel_device *device)
{
    struct accel__comm_device *c = &device->comm;
    for (;;) {
        struct accel__comm_op *left = NULL;
        pthread_mutex_lock(&c->lock);
        for (struct accel__comm_op *op = c->ops; op != NULL; op = op->next) {
            if (!op->finished && !op->started && op->event == NULL) {
                op->started = true; /* the stream will never reach it */
                left = op;
                break;
            }
        }
        pthread_mutex_unlock(&c->lock);
        if (left == NULL)
            break;
        pthread_mutex_lock(&left->comm->lock);
        left->status = ACCEL_ERR_COMM_ABORTED;
        snprintf(left->why, sizeof left->why,
                 "the device's streams were dropped before it ran");
        pthread_mutex_unlock(&left->comm->lock);
        accel__comm_op_finish(left);
    }
    /* Stream-ordered ones: their events went with the streams; holds went
     * with them too (the op run on its caller finishes on its own). */
    pthread_mutex_lock(&c->lock);
    for (struct accel__comm_op *op = c->ops; op != NULL; op = op->next) {
        if (!op->finished && op->event != NULL)
            op->finished = true;
        if (op->held)
            op->hold_ran = true;
    }
    /* Staging buffers: their events go before the device is emptied. */
    for (struct accel_comm *comm = c->comms; comm != NULL; comm = comm->next)
        accel__comm_stage_drop(comm);
    pthread_mutex_unlock(&c->lock);
}

accel_status accel__comm_stream_error(accel_stream *stream, accel_status status)
{
    struct accel__comm_device *c = &stream->device->comm;
    char why[sizeof stream->comm_failure];
    bool failed = false;
    pthread_mutex_lock(&c->lock);
    if (stream->comm_failed) {
        failed = true;
        memcpy(why, stream->comm_failure, sizeof why);
        stream->comm_failed = false;
    }
    pthread_mutex_unlock(&c->lock);
    if (!failed || status != ACCEL_OK)
        return status;
    return accel__error(ACCEL_ERR_COMM_ABORTED,
                        "a collective on the stream "
                        "failed: %s",
                        why);
}

/* ---- one communicator ---- */

void accel__comm_abort_for(struct accel_comm *comm, const char *why)
{
    pthread_mutex_lock(&comm->lock);
    bool first = !atomic_load(&comm->aborted);
    if (first) {
        snprintf(comm->why, sizeof comm->why, "%s", why);
        atomic_store(&comm->aborted, true);
    }
    pthread_cond_broadcast(&comm->changed);
    pthread_mutex_unlock(&comm->lock);
    if (first) {
        accel__log(ACCEL_LOG_WARN, "communicator rank %d/%d on %s:%u aborted: %s",
                   comm->rank, comm->size, comm->device->plugin->name,
                   comm->device->index, why);
        /* Any thread, any time: a running operation returns promptly. */
        comm->provider->table.comm_abort(comm->handle);
    }
}

accel_status accel__comm_aborted_error(struct accel_comm *comm, const char *what)
{
    char why[sizeof comm->why];
    pthread_mutex_lock(&comm->lock);
    memcpy(why, comm->why, sizeof why);
    pthread_mutex_unlock(&comm->lock);
    return accel__error(ACCEL_ERR_COMM_ABORTED,
                        "%s: the communicator was aborted: %s", what, why);
}

/* What a new communicator is made of, besides its provider's handle. */
struct comm_plan {
    accel_device *device;
    bool loopback; /* ranks as threads of this process */
    struct accel__comm_choice choice;
    struct accel_comm_init init;
};

static void comm_link(struct accel_comm *comm)
{
    struct accel__comm_device *c = &comm->device->comm;
    pthread_mutex_lock(&c->lock);
    comm->next = c->comms;
    c->comms = comm;
    pthread_mutex_unlock(&c->lock);
}

static void comm_unlink(struct accel_comm *comm)
{
    struct accel__comm_device *c = &comm->device->comm;
    pthread_mutex_lock(&c->lock);
    for (struct accel_comm **link = &c->comms; *link != NULL;
         link = &(*link)->next) {
        if (*link == comm) {
            *link = comm->next;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

static void comm_free(struct accel_comm *comm)
{
    pthread_mutex_destroy(&comm->calls);
    pthread_cond_destroy(&comm->work);
    pthread_cond_destroy(&comm->changed);
    pthread_mutex_destroy(&comm->lock);
    free(comm);
}

/* The host's half of a communicator around the provider's `handle`. */
static accel_status comm_wrap(const struct comm_plan *plan,
                              accel_comm_handle *handle,
                              struct accel_comm **out_comm)
{
    struct accel_comm *comm = calloc(1, sizeof *comm);
    if (comm == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_comm");
    *comm = (struct accel_comm){
        .device = plan->device,
        .provider = plan->choice.provider,
        .handle = handle,
        .rank = plan->init.rank,
        .size = plan->init.size,
        .host_run = plan->choice.host_run,
        .host_memory = plan->choice.host_memory,
        .loopback = plan->loopback,
        .run_here = plan->choice.host_run &&
                    accel__comm_inline_wanted(plan->choice.host_memory,
                                              plan->loopback),
        /* Host pointers, or the device's own addresses when the provider
         * takes that memory (GPU-aware MPI). */
        .memory = plan->choice.host_memory ? ACCEL_NATIVE_CPU
                                           : plan->choice.native.kind,
        .timeout_ns = plan->init.timeout_ns,
    };
    atomic_init(&comm->aborted, false);
    pthread_mutex_init(&comm->lock, NULL);
    pthread_mutex_init(&comm->calls, NULL);
    pthread_cond_init(&comm->changed, NULL);
    pthread_cond_init(&comm->work, NULL);
    accel_status status = comm->host_run ? accel__comm_progress_start(comm)
                                         : ACCEL_OK;
    if (status != ACCEL_OK) {
        comm_free(comm);
        return status;
    }
    comm_link(comm);
    *out_comm = comm;
    return ACCEL_OK;
}

/* Create this rank's communicator; collective over the ranks. */
static accel_status comm_make(const struct comm_plan *plan,
                              struct accel_comm **out_comm)
{
    const struct accel_comm_v1 *t = &plan->choice.provider->table;
    accel_comm_handle *handle = NULL;
    accel_status status = t->comm_create(plan->choice.provider->state,
                                         &plan->init, &handle);
    if (status == ACCEL_OK && handle == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "comm_create succeeded without a communicator");
    if (status != ACCEL_OK)
        return accel__from_plugin(status, "comm_create");
    status = comm_wrap(plan, handle, out_comm);
    if (status != ACCEL_OK)
        t->comm_destroy(handle);
    return status;
}

static void comm_destroy_now(struct accel_comm *comm)
{
    comm_unlink(comm);
    pthread_mutex_lock(&comm->lock);
    while (comm->pending > 0)
        pthread_cond_wait(&comm->changed, &comm->lock);
    pthread_mutex_unlock(&comm->lock);
    if (comm->host_run)
        accel__comm_progress_stop(comm);
    accel__comm_stage_free(comm);
    comm->provider->table.comm_destroy(comm->handle);
    comm_free(comm);
}

void accel__comm_device_close(accel_device *device)
{
    accel__comm_device_abort(device, "its device was closed");
    for (;;) {
        pthread_mutex_lock(&device->comm.lock);
        struct accel_comm *comm = device->comm.comms;
        pthread_mutex_unlock(&device->comm.lock);
        if (comm == NULL)
            break;
        accel__log(ACCEL_LOG_WARN,
                   "accel_device_close: communicator rank %d/%d was still "
                   "live: aborted and destroyed",
                   comm->rank, comm->size);
        comm_destroy_now(comm);
    }
}

/* ---- creation ---- */

/* Unique id from the provider (made once, by rank 0 or for every thread). */
static accel_status unique_id_make(const struct accel__comm_choice *choice,
                                   uint8_t *id, size_t *out_bytes)
{
    const struct accel_comm_v1 *t = &choice->provider->table;
    *out_bytes = 0;
    if (t->unique_id == NULL)
        return ACCEL_OK;
    accel_status status = t->unique_id(choice->provider->state, id,
                                       ACCEL_COMM_UNIQUE_ID_MAX, out_bytes);
    if (status == ACCEL_OK && *out_bytes > ACCEL_COMM_UNIQUE_ID_MAX)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "unique_id wrote %zu bytes, more than %u",
                              *out_bytes, ACCEL_COMM_UNIQUE_ID_MAX);
    return accel__from_plugin(status, "unique_id");
}

struct local_rank_job {
    struct comm_plan plan;
    struct accel__local_rank_boot boot_view;
    struct accel_comm_bootstrap bootstrap;
    struct accel_comm *comm;
    accel_status status;
    char why[512];
};

static void *local_rank_main(void *arg)
{
    struct local_rank_job *job = arg;
    job->status = comm_make(&job->plan, &job->comm);
    if (job->status != ACCEL_OK)
        snprintf(job->why, sizeof job->why, "%s", accel_last_error());
    return NULL;
}

static accel_status local_args(accel_device *const *devices, int count,
                               accel_comm **out_comms)
{
    if (devices == NULL || out_comms == NULL || count <= 0 || count > 4096)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_comm_create_local: NULL argument or a "
                            "count of %d (1 to 4096)",
                            count);
    /* Every output cleared before the first refusal, not up to it. */
    for (int i = 0; i < count; i++)
        out_comms[i] = NULL;
    for (int i = 0; i < count; i++) {
        if (devices[i] == NULL)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "accel_comm_create_local: devices[%d] is NULL",
                                i);
        if (devices[i]->host != devices[0]->host)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "accel_comm_create_local: devices[%d] is of "
                                "another host",
                                i);
        if (accel__process_check(devices[i]->pid, "accel_comm_create_local") !=
            ACCEL_OK)
            return ACCEL_ERR_NOT_SUPPORTED;
    }
    return ACCEL_OK;
}

/* Run each rank's comm_create on a thread of its own: they meet inside. */
static accel_status local_run(struct local_rank_job *jobs, int count,
                              accel_comm **out_comms)
{
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    if (threads == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rank threads");
    int started = 0;
    accel_status status = ACCEL_OK;
    for (; started < count; started++) {
        if (pthread_create(&threads[started], NULL, local_rank_main,
                           &jobs[started]) != 0)
            break;
    }
    if (started < count)
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "pthread_create for rank %d", started);
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    for (int i = 0; status == ACCEL_OK && i < count; i++) {
        if (jobs[i].status != ACCEL_OK)
            status = accel__error(jobs[i].status, "rank %d: %s", i, jobs[i].why);
    }
    for (int i = 0; i < count; i++) {
        if (status == ACCEL_OK)
            out_comms[i] = jobs[i].comm;
        else if (jobs[i].comm != NULL)
            comm_destroy_now(jobs[i].comm);
    }
    return status;
}

static accel_status create_local_untraced(accel_device *const *devices,
                                          int count, accel_comm **out_comms)
{
    accel_status status = local_args(devices, count, out_comms);
    struct accel__comm_catalog *catalog = NULL;
    if (status == ACCEL_OK)
        status = accel__comm_catalog_load(devices[0]->host, &catalog);
    struct accel__comm_choice choice;
    if (status == ACCEL_OK)
        status = accel__comm_choose(catalog, devices, count, true, &choice);
    uint8_t id[ACCEL_COMM_UNIQUE_ID_MAX];
    size_t id_bytes = 0;
    if (status == ACCEL_OK)
        status = unique_id_make(&choice, id, &id_bytes);
    uint64_t timeout_ns = accel__comm_timeout_ns();
    struct accel__local_boot *boot = NULL;
    if (status == ACCEL_OK)
        status = accel__local_boot_create(count, timeout_ns, &boot);
    if (status != ACCEL_OK)
        return status;
    struct local_rank_job *jobs = calloc((size_t)count, sizeof *jobs);
    if (jobs == NULL) {
        accel__local_boot_destroy(boot);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rank jobs");
    }
    for (int i = 0; status == ACCEL_OK && i < count; i++) {
        struct local_rank_job *job = &jobs[i];
        accel__local_boot_view(boot, &job->boot_view, i, &job->bootstrap);
        job->plan.device = devices[i];
        job->plan.loopback = true;
        job->plan.choice = choice;
        status = accel__comm_native(devices[i], &job->plan.choice.native);
        job->plan.init = (struct accel_comm_init){
            .struct_size = sizeof job->plan.init,
            .rank = i,
            .size = count,
            .local_rank = i,
            .local_size = count,
            .device = job->plan.choice.native,
            .id = id_bytes ? id : NULL,
            .id_bytes = id_bytes,
            .bootstrap = &job->bootstrap,
            .timeout_ns = timeout_ns,
        };
    }
    if (status == ACCEL_OK)
        status = local_run(jobs, count, out_comms);
    free(jobs);
    accel__local_boot_destroy(boot);
    return status;
}

accel_status accel_comm_create_local(accel_device *const *devices, int count,
                                     accel_comm **out_comms)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = create_local_untraced(devices, count, out_comms);
    return accel__trace_end(traced, status, 0);
}

/* ---- across processes ---- */

/* An allgather of host bytes over a host-run communicator, from this
 * thread (split); the caller holds its `calls`. */
struct provider_boot {
    struct accel__comm_provider *provider;
    accel_comm_handle *handle;
    uint64_t timeout_ns;
};

static accel_status provider_boot_op(struct provider_boot *boot, uint32_t kind,
                                     const void *send, void *recv, size_t bytes,
                                     int root)
{
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = kind,
        .type = ACCEL_BYTE,
        .count = bytes,
        .root = root,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)send,
        .recv = (uint64_t)(uintptr_t)recv,
        .deadline_ns = boot->timeout_ns ? accel__now_ns() + boot->timeout_ns : 0,
    };
    return boot->provider->table.submit(boot->handle, &op);
}

static accel_status provider_boot_allgather(void *ctx, const void *send,
                                            void *out, size_t bytes)
{
    return provider_boot_op(ctx, ACCEL_COMM_ALLGATHER, send, out, bytes, 0);
}

/* The first open provider that lends its byte exchange (mpi), or NULL. */
static struct accel__comm_provider *
bootstrap_provider(struct accel__comm_catalog *catalog)
{
    for (size_t i = 0; i < catalog->count; i++) {
        struct accel__comm_provider *p = &catalog->list[i];
        if (p->state != NULL && (p->table.caps & ACCEL_COMM_CAP_BOOTSTRAP) &&
            p->table.bootstrap != NULL)
            return p;
    }
    return NULL;
}

static accel_status no_bootstrap_broadcast(void *ctx, void *data, size_t bytes,
                                           int root)
{
    (void)ctx, (void)data, (void)bytes, (void)root;
    return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                        "no bootstrap between the processes: run under MPI "
                        "(the mpi provider) or set ACCEL_COMM_RENDEZVOUS to "
                        "file:/dir or tcp:host:port");
}

static accel_status no_bootstrap_allgather(void *ctx, const void *send,
                                           void *out, size_t bytes)
{
    (void)send, (void)out;
    return no_bootstrap_broadcast(ctx, NULL, bytes, 0);
}

/*
 * A provider's bootstrap is one per process, to be used by one caller at a
 * time: creations that use it take turns.
 */
static pthread_mutex_t provider_boot_lock = PTHREAD_MUTEX_INITIALIZER;

/* The processes' way to exchange bytes before the communicator exists. */
struct process_boot {
    struct accel__local_boot *single; /* size 1 */
    struct accel__local_rank_boot single_view;
    struct accel__rendezvous *rdv;
    bool provider_held; /* provider_boot_lock */
    struct accel_comm_bootstrap bootstrap;
};

/*
 * Size 1 needs none; else a CAP_BOOTSTRAP provider's (mpi) when one is
 * open, else ACCEL_COMM_RENDEZVOUS; without either, calls that fail with
 * the reason (providers that need no exchange never make them).
 */
static accel_status process_boot_open(struct accel__comm_catalog *catalog,
                                      const struct comm_plan *plan,
                                      const struct accel__rank *rank,
                                      struct process_boot *boot)
{
    memset(boot, 0, sizeof *boot);
    uint64_t timeout_ns = plan->init.timeout_ns;
    if (rank->size == 1) {
        accel_status status = accel__local_boot_create(1, timeout_ns,
                                                       &boot->single);
        if (status == ACCEL_OK)
            accel__local_boot_view(boot->single, &boot->single_view, 0,
                                   &boot->bootstrap);
        return status;
    }
    struct accel__comm_provider *via = bootstrap_provider(catalog);
    if (via != NULL) {
        pthread_mutex_lock(&provider_boot_lock);
        boot->provider_held = true;
        return accel__from_plugin(
            via->table.bootstrap(via->state, &boot->bootstrap), "bootstrap");
    }
    accel_status status = accel__rendezvous_open(rank, timeout_ns, &boot->rdv,
                                                 &boot->bootstrap);
    if (status != ACCEL_ERR_NOT_FOUND)
        return status;
    boot->bootstrap = (struct accel_comm_bootstrap){
        .broadcast = no_bootstrap_broadcast,
        .allgather = no_bootstrap_allgather,
    };
    return ACCEL_OK;
}

static void process_boot_close(struct process_boot *boot)
{
    if (boot->provider_held)
        pthread_mutex_unlock(&provider_boot_lock);
    accel__rendezvous_close(boot->rdv);
    accel__local_boot_destroy(boot->single);
}

/* Rank 0's unique id, broadcast to every rank through the bootstrap. */
static accel_status id_share(const struct comm_plan *plan,
                             const struct accel_comm_bootstrap *bootstrap,
                             uint8_t *id, size_t *out_bytes)
{
    *out_bytes = 0;
    if (plan->choice.provider->table.unique_id == NULL)
        return ACCEL_OK;
    memset(id, 0, ACCEL_COMM_UNIQUE_ID_MAX);
    uint64_t bytes = 0;
    accel_status status = ACCEL_OK;
    if (plan->init.rank == 0) {
        size_t made = 0;
        status = unique_id_make(&plan->choice, id, &made);
        bytes = status == ACCEL_OK ? made : UINT64_MAX;
    }
    /* The length first, so that a failure on rank 0 reaches every rank. */
    accel_status shared = bootstrap->broadcast(bootstrap->ctx, &bytes,
                                               sizeof bytes, 0);
    if (status != ACCEL_OK || shared != ACCEL_OK)
        return status != ACCEL_OK ? status : shared;
    if (bytes > ACCEL_COMM_UNIQUE_ID_MAX)
        return accel__error(ACCEL_ERR_COMM_ABORTED,
                            "rank 0 could not make the communicator's id");
    status = bootstrap->broadcast(bootstrap->ctx, id, (size_t)bytes, 0);
    *out_bytes = (size_t)bytes;
    return status;
}

static accel_status create_untraced(accel_device *device, accel_comm **out_comm)
{
    if (out_comm != NULL)
        *out_comm = NULL;
    if (device == NULL || out_comm == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_comm_create: NULL argument");
    if (accel__process_check(device->pid, "accel_comm_create") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__rank rank;
    accel_status status = accel__rank_current(&rank);
    struct accel__comm_catalog *catalog = NULL;
    if (status == ACCEL_OK)
        status = accel__comm_catalog_load(device->host, &catalog);
    struct comm_plan plan = {.device = device};
    if (status == ACCEL_OK)
        status = accel__comm_choose(catalog, &device, 1, false, &plan.choice);
    if (status != ACCEL_OK)
        return status;
    plan.init = (struct accel_comm_init){
        .struct_size = sizeof plan.init,
        .rank = rank.rank,
        .size = rank.size,
        .local_rank = rank.local_rank,
        .local_size = rank.local_size,
        .device = plan.choice.native,
        .timeout_ns = accel__comm_timeout_ns(),
    };
    struct process_boot boot;
    status = process_boot_open(catalog, &plan, &rank, &boot);
    uint8_t id[ACCEL_COMM_UNIQUE_ID_MAX];
    size_t id_bytes = 0;
    if (status == ACCEL_OK)
        status = id_share(&plan, &boot.bootstrap, id, &id_bytes);
    plan.init.id = id_bytes ? id : NULL;
    plan.init.id_bytes = id_bytes;
    plan.init.bootstrap = &boot.bootstrap;
    if (status == ACCEL_OK)
        status = comm_make(&plan, out_comm);
    process_boot_close(&boot);
    return status;
}

accel_status accel_comm_create(accel_device *device, accel_comm **out_comm)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = create_untraced(device, out_comm);
    return accel__trace_end(traced, status, 0);
}

/* ---- the rest of the public API ---- */

static accel_status split_untraced(accel_comm *comm, int color, int key,
                                   accel_comm **out_comm)
{
    if (out_comm != NULL)
        *out_comm = NULL;
    if (comm == NULL || out_comm == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_comm_split: NULL argument");
    if (atomic_load(&comm->aborted))
        return accel__comm_aborted_error(comm, "accel_comm_split");
    const struct accel_comm_v1 *t = &comm->provider->table;
    if (t->comm_split == NULL)
        return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                            "accel_comm_split: provider '%s' cannot split",
                            comm->provider->name);
    /* Each rank's place in the new group, from every rank's (color, key):
     * a host-run provider exchanges host memory, a stream-ordered one the
     * device's. */
    int32_t mine[2] = {color, key};
    int32_t *all = calloc((size_t)comm->size * 2, sizeof *all);
    if (all == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_comm_split");
    struct provider_boot via = {comm->provider, comm->handle, comm->timeout_ns};
    accel_comm_handle *handle = NULL;
    accel_status status = comm->host_run
                              ? ACCEL_OK
                              : accel__comm_gather_on_device(comm, mine, all, 2);
    pthread_mutex_lock(&comm->calls);
    if (status == ACCEL_OK && comm->host_run)
        status = accel__from_plugin(
            provider_boot_allgather(&via, mine, all, sizeof mine), "submit");
    if (status == ACCEL_OK)
        status = accel__from_plugin(
            t->comm_split(comm->handle, color, key, &handle), "comm_split");
    pthread_mutex_unlock(&comm->calls);
    int rank = 0, size = 0;
    for (int r = 0; status == ACCEL_OK && color >= 0 && r < comm->size; r++) {
        if (all[2 * r] != color)
            continue;
        size++;
        if (all[2 * r + 1] < key || (all[2 * r + 1] == key && r < comm->rank))
            rank++;
    }
    free(all);
    if (status != ACCEL_OK || handle == NULL)
        return status;
    struct comm_plan plan = {.device = comm->device, .loopback = comm->loopback};
    plan.choice.provider = comm->provider;
    plan.choice.host_run = comm->host_run;
    plan.choice.host_memory = comm->host_memory;
    plan.choice.native.kind = comm->memory;
    plan.init.rank = rank;
    plan.init.size = size;
    plan.init.timeout_ns = comm->timeout_ns;
    status = comm_wrap(&plan, handle, out_comm);
    if (status != ACCEL_OK)
        t->comm_destroy(handle);
    return status;
}

accel_status accel_comm_split(accel_comm *comm, int color, int key,
                              accel_comm **out_comm)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = split_untraced(comm, color, key, out_comm);
    return accel__trace_end(traced, status, 0);
}

void accel_comm_destroy(accel_comm *comm)
{
    if (comm == NULL || comm->device->pid != accel__pid)
        return;
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    comm_destroy_now(comm);
    accel__trace_end(traced, ACCEL_OK, 0);
}

static accel_status abort_untraced(accel_comm *comm)
{
    if (comm == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_comm_abort: NULL communicator");
    accel__comm_abort_for(comm, "accel_comm_abort was called");
    return ACCEL_OK;
}

accel_status accel_comm_abort(accel_comm *comm)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = abort_untraced(comm);
    return accel__trace_end(traced, status, 0);
}

static accel_status status_untraced(accel_comm *comm)
{
    if (comm == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_comm_status: NULL communicator");
    if (!atomic_load(&comm->aborted)) {
        accel_status status = comm->provider->table.comm_error(comm->handle);
        if (status == ACCEL_OK)
            return ACCEL_OK;
        char why[256];
        snprintf(why, sizeof why, "the provider reported %s: %s",
                 accel_status_name(status), accel_last_error());
        accel__comm_abort_for(comm, why);
    }
    return accel__comm_aborted_error(comm, "accel_comm_status");
}

accel_status accel_comm_status(accel_comm *comm)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = status_untraced(comm);
    return accel__trace_end(traced, status, 0);
}

int accel_comm_rank(const accel_comm *comm)
{
    return comm ? comm->rank : -1;
}

int accel_comm_size(const accel_comm *comm)
{
    return comm ? comm->size : 0;
}

accel_device *accel_comm_device(const accel_comm *comm)
{
    return comm ? comm->device : NULL;
}

const char *accel_comm_provider_name(const accel_comm *comm)
{
    return comm ? comm->provider->name : "";
}
