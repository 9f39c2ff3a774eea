/*
 * Communicators: made, split, aborted, asked for their asynchronous error
 * and destroyed.
 *
 * Creation binds the communicator to the rank's device by making it
 * current around ncclCommInitRank (NCCL takes the current device), through
 * the GPU library the provider opened rather than an NCCL config field,
 * because NCCL's config has no device field and older versions take no
 * config at all. Where the library has ncclCommInitRankConfig (2.14+), the
 * communicator is non-blocking (config.blocking = 0): creation returns at
 * once and is polled with ncclCommGetAsyncError, so that a rank that never
 * joins costs init->timeout_ns, after which the communicator is aborted
 * (ncclCommAbort) and creation fails with ACCEL_ERR_TIMEOUT. Older
 * libraries block in ncclCommInitRank until every rank joined: no timeout
 * is possible there, and the log says so.
 */
#include "nccl_provider.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t accel__nccl_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The deadline `timeout_ns` from now; 0 (none) for 0. */
static uint64_t deadline_after(uint64_t timeout_ns)
{
    return timeout_ns == 0 ? 0 : accel__nccl_now_ns() + timeout_ns;
}

/* The communicator's state, unless it was aborted (then RemoteError). */
static ancl_ncclResult_t comm_state(accel_comm_handle *comm)
{
    ancl_ncclResult_t state = ANCL_ncclRemoteError;
    ancl_ncclResult_t result;

    pthread_mutex_lock(&comm->lock);
    if (!atomic_load(&comm->aborted)) {
        result = comm->provider->nccl.ncclCommGetAsyncError(comm->comm, &state);
        if (result != ANCL_ncclSuccess)
            state = result;
    }
    pthread_mutex_unlock(&comm->lock);
    return state;
}

ancl_ncclResult_t accel__nccl_settle(accel_comm_handle *comm,
                                     ancl_ncclResult_t result,
                                     uint64_t deadline_ns)
{
    struct timespec pause = {0, 10000}; /* 10 µs, doubling to 1 ms */

    /* Only a call that said so is still going on (a non-blocking one). */
    if (result != ANCL_ncclInProgress)
        return result;
    for (;;) {
        result = comm_state(comm);
        if (result != ANCL_ncclInProgress)
            return result;
        if (deadline_ns != 0 && accel__nccl_now_ns() >= deadline_ns)
            return ANCL_ncclInProgress;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 1000000)
            pause.tv_nsec *= 2;
    }
}

static accel_comm_handle *comm_new(accel_comm_provider *provider,
                                   const struct accel_native_handles *device,
                                   uint64_t timeout_ns)
{
    accel_comm_handle *comm = calloc(1, sizeof(*comm));

    if (comm == NULL) {
        provider->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                      "%s: calloc of a communicator failed",
                                      provider->flavour->name);
        return NULL;
    }
    comm->provider = provider;
    comm->device = *device;
    comm->timeout_ns = timeout_ns;
    comm->rank = -1;
    atomic_init(&comm->aborted, false);
    pthread_mutex_init(&comm->lock, NULL);
    return comm;
}

static void comm_free(accel_comm_handle *comm)
{
    pthread_mutex_destroy(&comm->lock);
    free(comm);
}

/* A config for a non-blocking communicator (nccl_api.h: the 2.14 layout). */
static ancl_ncclConfig_t nonblocking_config(void)
{
    ancl_ncclConfig_t config = {
        .size = sizeof(ancl_ncclConfig_t),
        .magic = ANCL_NCCL_CONFIG_MAGIC,
        .version = ANCL_NCCL_CONFIG_SINCE,
        .blocking = 0,
        .cgaClusterSize = ANCL_NCCL_CONFIG_UNDEF_INT,
        .minCTAs = ANCL_NCCL_CONFIG_UNDEF_INT,
        .maxCTAs = ANCL_NCCL_CONFIG_UNDEF_INT,
        .netName = NULL,
    };

    return config;
}

static bool takes_config(const accel_comm_provider *provider)
{
    return provider->version >= ANCL_NCCL_CONFIG_SINCE &&
           provider->nccl.ncclCommInitRankConfig != NULL;
}

/* Make the rank's device current; on failure the error is said. */
accel_status accel__nccl_enter(accel_comm_handle *comm,
                               struct nccl_device_scope *out_scope)
{
    accel_comm_provider *provider = comm->provider;
    const char *call = NULL, *name;
    int result;

    result = provider->device.ops->enter(&provider->device, &comm->device,
                                         out_scope, &call);
    if (result == 0)
        return ACCEL_OK;
    name = provider->device.ops->error_name(&provider->device, result);
    return provider->services->set_error(
        ACCEL_ERR_DRIVER, "%s: %s for device %d failed: %s (%d)",
        provider->flavour->name, call, comm->device.device_ordinal,
        name != NULL ? name : "error", result);
}

void accel__nccl_leave(accel_comm_handle *comm,
                       const struct nccl_device_scope *scope)
{
    comm->provider->device.ops->leave(&comm->provider->device, scope);
}

/* Wait for a new communicator to be ready; abort it at the deadline. */
static accel_status comm_wait_ready(accel_comm_handle *comm,
                                    ancl_ncclResult_t result, const char *call)
{
    accel_comm_provider *provider = comm->provider;
    uint64_t timeout_ms = comm->timeout_ns / 1000000u;

    result = accel__nccl_settle(comm, result, deadline_after(comm->timeout_ns));
    if (result == ANCL_ncclSuccess)
        return ACCEL_OK;
    accel__nccl_comm_abort(comm);
    if (result == ANCL_ncclInProgress)
        return provider->services->set_error(
            ACCEL_ERR_TIMEOUT,
            "%s: %s: not every rank joined within %llu ms; the communicator "
            "was aborted (ncclCommAbort)",
            provider->flavour->name, call, (unsigned long long)timeout_ms);
    return accel__nccl_fail(provider, call, result);
}

static accel_status check_init(accel_comm_provider *provider,
                               const struct accel_comm_init *init)
{
    const char *name = provider->flavour->name;

    if (init == NULL || init->struct_size < sizeof(struct accel_comm_init))
        return provider->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                             "%s: accel_comm_init is too small",
                                             name);
    if (init->id == NULL || init->id_bytes != sizeof(ancl_ncclUniqueId))
        return provider->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "%s: the unique id has %zu bytes; %s's has %zu", name,
            init->id == NULL ? (size_t)0 : init->id_bytes,
            provider->flavour->title, sizeof(ancl_ncclUniqueId));
    if (init->device.kind != (uint32_t)provider->flavour->memory)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED, "%s: the rank's device is not a %s device",
            name, provider->flavour->memory == ACCEL_NATIVE_HIP ? "HIP" : "CUDA");
    if (init->size < 1 || init->rank < 0 || init->rank >= init->size)
        return provider->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                             "%s: rank %d of %d", name,
                                             init->rank, init->size);
    return ACCEL_OK;
}

accel_status accel__nccl_comm_create(accel_comm_provider *provider,
                                     const struct accel_comm_init *init,
                                     accel_comm_handle **out_comm)
{
    struct nccl_device_scope scope;
    ancl_ncclUniqueId id;
    ancl_ncclConfig_t config = nonblocking_config();
    ancl_ncclResult_t result;
    accel_comm_handle *comm;
    accel_status status;
    const char *call;

    *out_comm = NULL;
    status = check_init(provider, init);
    if (status != ACCEL_OK)
        return status;
    comm = comm_new(provider, &init->device, init->timeout_ns);
    if (comm == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    comm->rank = init->rank;
    comm->size = init->size;
    memcpy(&id, init->id, sizeof(id));
    status = accel__nccl_enter(comm, &scope);
    if (status != ACCEL_OK)
        goto fail;
    comm->nonblocking = takes_config(provider);
    if (comm->nonblocking) {
        call = "ncclCommInitRankConfig";
        result = provider->nccl.ncclCommInitRankConfig(&comm->comm, init->size,
                                                       id, init->rank, &config);
    } else {
        call = "ncclCommInitRank";
        if (init->timeout_ns != 0)
            provider->services->log(
                ACCEL_LOG_WARN,
                "%s: %s version code %d has no non-blocking init: rank %d "
                "waits for every rank without a timeout",
                provider->flavour->name, provider->flavour->title,
                provider->version, init->rank);
        result = provider->nccl.ncclCommInitRank(&comm->comm, init->size, id,
                                                 init->rank);
    }
    accel__nccl_leave(comm, &scope);
    if (comm->comm == NULL) {
        status = accel__nccl_fail(provider, call, result);
        goto fail;
    }
    status = comm_wait_ready(comm, result, call);
    if (status != ACCEL_OK)
        goto fail;
    *out_comm = comm;
    return ACCEL_OK;

fail:
    comm_free(comm);
    return status;
}

/* ncclCommSplit's first version, as ncclGetVersion codes it (2.18.0). */
#define NCCL_SPLIT_VERSION 21800

accel_status accel__nccl_comm_split(accel_comm_handle *comm, int color, int key,
                                    accel_comm_handle **out_comm)
{
    accel_comm_provider *provider = comm->provider;
    ancl_ncclConfig_t config = nonblocking_config();
    struct nccl_device_scope scope;
    accel_comm_handle *child;
    ancl_ncclResult_t result;
    accel_status status;

    *out_comm = NULL;
    if (atomic_load(&comm->aborted))
        return provider->services->set_error(ACCEL_ERR_COMM_ABORTED,
                                             "%s: the communicator was aborted",
                                             provider->flavour->name);
    /* The version too: a library that exports the symbol but says it is
     * older may not implement it (NCCL's own headers gate it so). */
    if (provider->nccl.ncclCommSplit == NULL ||
        provider->version < NCCL_SPLIT_VERSION)
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s: %s has no ncclCommSplit (it came in NCCL 2.18; this is "
            "version code %d)",
            provider->flavour->name, provider->library.path, provider->version);
    child = comm_new(provider, &comm->device, comm->timeout_ns);
    if (child == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    status = accel__nccl_enter(comm, &scope);
    if (status != ACCEL_OK)
        goto fail;
    /* The child is non-blocking as its parent is (NCCL requires the same). */
    child->nonblocking = comm->nonblocking;
    result = provider->nccl.ncclCommSplit(
        comm->comm, color < 0 ? ANCL_NCCL_SPLIT_NOCOLOR : color, key,
        &child->comm, comm->nonblocking ? &config : NULL);
    accel__nccl_leave(comm, &scope);
    if (result != ANCL_ncclSuccess && result != ANCL_ncclInProgress) {
        status = accel__nccl_fail(provider, "ncclCommSplit", result);
        goto fail;
    }
    if (color < 0 || child->comm == NULL) {
        comm_free(child);
        return ACCEL_OK;
    }
    /* A non-blocking child is polled until it is ready, as a new one is. */
    status = comm_wait_ready(child, result, "ncclCommSplit");
    if (status != ACCEL_OK)
        goto fail;
    if (provider->nccl.ncclCommUserRank(child->comm, &child->rank) !=
            ANCL_ncclSuccess ||
        provider->nccl.ncclCommCount(child->comm, &child->size) !=
            ANCL_ncclSuccess)
        child->rank = child->size = -1;
    *out_comm = child;
    return ACCEL_OK;

fail:
    if (child->comm != NULL && !atomic_load(&child->aborted))
        accel__nccl_comm_abort(child);
    comm_free(child);
    return status;
}

void accel__nccl_comm_abort(accel_comm_handle *comm)
{
    accel_comm_provider *provider = comm->provider;
    struct nccl_device_scope scope;
    bool entered;

    pthread_mutex_lock(&comm->lock);
    if (!atomic_exchange(&comm->aborted, true) && comm->comm != NULL) {
        /* ncclCommAbort frees the communicator: nothing reads it after. */
        entered = accel__nccl_enter(comm, &scope) == ACCEL_OK;
        (void)provider->nccl.ncclCommAbort(comm->comm);
        if (entered)
            accel__nccl_leave(comm, &scope);
    }
    pthread_mutex_unlock(&comm->lock);
}

accel_status accel__nccl_comm_error(accel_comm_handle *comm)
{
    accel_comm_provider *provider = comm->provider;
    ancl_ncclResult_t state;

    if (atomic_load(&comm->aborted))
        return provider->services->set_error(ACCEL_ERR_COMM_ABORTED,
                                             "%s: the communicator was aborted",
                                             provider->flavour->name);
    state = comm_state(comm);
    if (state == ANCL_ncclSuccess || state == ANCL_ncclInProgress)
        return ACCEL_OK;
    return accel__nccl_fail(provider, "ncclCommGetAsyncError", state);
}

void accel__nccl_comm_destroy(accel_comm_handle *comm)
{
    accel_comm_provider *provider;
    struct nccl_device_scope scope;
    bool entered;

    if (comm == NULL)
        return;
    provider = comm->provider;
    entered = accel__nccl_enter(comm, &scope) == ACCEL_OK;
    if (comm->scratch != 0)
        provider->device.ops->free(&provider->device, comm->scratch);
    if (!atomic_load(&comm->aborted) && comm->comm != NULL)
        (void)provider->nccl.ncclCommDestroy(comm->comm);
    if (entered)
        accel__nccl_leave(comm, &scope);
    comm_free(comm);
}
