/*
 * The shared state of a host communicator (host_group.h): layout, lock,
 * barrier, waits with a deadline, and the group's first error.
 */
#include "host_group.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define HOST_ALIGN 64u

static size_t align_up(size_t value)
{
    return (value + HOST_ALIGN - 1) & ~(size_t)(HOST_ALIGN - 1);
}

static size_t slots_offset(void)
{
    return align_up(sizeof(struct host_shared));
}

static size_t arrivals_offset(uint32_t size)
{
    return slots_offset() + align_up(2u * size * sizeof(struct host_slot));
}

static size_t mailboxes_offset(uint32_t size)
{
    return arrivals_offset(size) + align_up(size * sizeof(uint32_t));
}

static size_t staging_offset(uint32_t size)
{
    return mailboxes_offset(size) +
           align_up((size_t)size * size * sizeof(struct host_mailbox));
}

size_t accel__host_region_bytes(uint32_t size, uint64_t chunk_bytes)
{
    return staging_offset(size) + (size_t)size * chunk_bytes;
}

struct host_slot *accel__host_slot(struct host_shared *shared, int rank,
                                   uint64_t seq)
{
    struct host_slot *slots =
        (struct host_slot *)((char *)shared + slots_offset());
    return &slots[2u * (unsigned)rank + (seq & 1u)];
}

uint32_t *accel__host_arrival(struct host_shared *shared, int rank)
{
    uint32_t *arrivals =
        (uint32_t *)((char *)shared + arrivals_offset(shared->size));
    return &arrivals[rank];
}

struct host_mailbox *accel__host_mailbox(struct host_shared *shared, int from,
                                         int to)
{
    struct host_mailbox *boxes =
        (struct host_mailbox *)((char *)shared + mailboxes_offset(shared->size));
    return &boxes[(size_t)from * shared->size + (unsigned)to];
}

uint8_t *accel__host_staging(struct host_shared *shared, int rank)
{
    return (uint8_t *)shared + staging_offset(shared->size) +
           (size_t)rank * shared->chunk_bytes;
}

accel_status accel__host_shared_init(struct host_shared *shared, uint32_t size,
                                     uint64_t chunk_bytes,
                                     bool shared_between_processes)
{
    int pshared = shared_between_processes ? PTHREAD_PROCESS_SHARED
                                           : PTHREAD_PROCESS_PRIVATE;
    pthread_mutexattr_t mattr;
    pthread_condattr_t cattr;
    if (pthread_mutexattr_init(&mattr) != 0)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    pthread_mutexattr_setpshared(&mattr, pshared);
    pthread_mutexattr_setrobust(&mattr, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(&shared->mutex, &mattr);
    pthread_mutexattr_destroy(&mattr);
    if (rc != 0)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    if (pthread_condattr_init(&cattr) != 0) {
        pthread_mutex_destroy(&shared->mutex);
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    }
    pthread_condattr_setpshared(&cattr, pshared);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&shared->cond, &cattr);
    pthread_condattr_destroy(&cattr);
    if (rc != 0) {
        pthread_mutex_destroy(&shared->mutex);
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    }
    shared->size = size;
    shared->chunk_bytes = chunk_bytes;
    shared->total_bytes = accel__host_region_bytes(size, chunk_bytes);
    return ACCEL_OK;
}

void accel__host_shared_fini(struct host_shared *shared)
{
    pthread_cond_destroy(&shared->cond);
    pthread_mutex_destroy(&shared->mutex);
}

void accel__host_lock(struct host_shared *shared)
{
    if (pthread_mutex_lock(&shared->mutex) == EOWNERDEAD) {
        /* A process died inside an operation: whatever it was doing is
         * lost, so the group cannot go on. */
        pthread_mutex_consistent(&shared->mutex);
        accel__host_break(shared, ACCEL_ERR_COMM_ABORTED,
                          "a rank's process died during an operation");
    }
}

void accel__host_unlock(struct host_shared *shared)
{
    pthread_mutex_unlock(&shared->mutex);
}

void accel__host_break(struct host_shared *shared, accel_status error,
                       const char *fmt, ...)
{
    if (shared->error == ACCEL_OK) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(shared->reason, sizeof shared->reason, fmt, args);
        va_end(args);
        shared->error = error;
    }
    pthread_cond_broadcast(&shared->cond);
}

uint64_t accel__host_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Wait once on the condition; true when the deadline has passed. */
static bool wait_once(struct host_shared *shared, uint64_t deadline_ns)
{
    if (deadline_ns == 0) {
        pthread_cond_wait(&shared->cond, &shared->mutex);
        return false;
    }
    struct timespec until = {
        .tv_sec = (time_t)(deadline_ns / 1000000000u),
        .tv_nsec = (long)(deadline_ns % 1000000000u),
    };
    int rc = pthread_cond_timedwait(&shared->cond, &shared->mutex, &until);
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&shared->mutex);
        accel__host_break(shared, ACCEL_ERR_COMM_ABORTED,
                          "a rank's process died during an operation");
    }
    return rc == ETIMEDOUT;
}

/* The group error as this rank's own: set_error on this thread. */
static accel_status report_broken(accel_comm_handle *comm,
                                  const struct host_waiting *waiting)
{
    struct host_shared *shared = comm->shared;
    char what[128];
    waiting->describe(waiting->arg, what, sizeof what);
    return accel__host_error(comm, (accel_status)shared->error,
                             "host communicator, rank %d, in %s: %s",
                             comm->rank, what, shared->reason);
}

accel_status accel__host_wait(accel_comm_handle *comm,
                              const struct host_waiting *waiting,
                              uint64_t deadline_ns)
{
    struct host_shared *shared = comm->shared;
    while (!waiting->ready(waiting->arg)) {
        if (shared->error != ACCEL_OK)
            return report_broken(comm, waiting);
        if (wait_once(shared, deadline_ns) && !waiting->ready(waiting->arg) &&
            shared->error == ACCEL_OK) {
            char what[128];
            waiting->describe(waiting->arg, what, sizeof what);
            accel__host_break(shared, ACCEL_ERR_TIMEOUT,
                              "rank %d's deadline passed while it waited in %s",
                              comm->rank, what);
            return report_broken(comm, waiting);
        }
    }
    return ACCEL_OK;
}

struct barrier_wait {
    struct host_shared *shared;
    uint32_t generation;
};

static bool barrier_passed(void *arg)
{
    struct barrier_wait *wait = arg;
    return wait->shared->generation != wait->generation;
}

/* The ranks that have not reached the barrier yet, for the detail. */
static void describe_barrier(void *arg, char *out, size_t capacity)
{
    struct barrier_wait *wait = arg;
    struct host_shared *shared = wait->shared;
    int used = snprintf(out, capacity, "a barrier, waiting for rank");
    for (uint32_t r = 0; r < shared->size && (size_t)used + 16 < capacity;
         r++) {
        if (*accel__host_arrival(shared, (int)r) != wait->generation + 1u)
            used += snprintf(out + used, capacity - (size_t)used, " %u", r);
    }
}

accel_status accel__host_barrier(accel_comm_handle *comm, uint64_t deadline_ns)
{
    struct host_shared *shared = comm->shared;
    accel__host_lock(shared);
    if (shared->error != ACCEL_OK) {
        accel__host_unlock(shared);
        return accel__host_check_broken(comm);
    }
    struct barrier_wait wait = {shared, shared->generation};
    *accel__host_arrival(shared, comm->rank) = wait.generation + 1u;
    if (++shared->arrived == shared->size) {
        shared->arrived = 0;
        shared->generation++;
        pthread_cond_broadcast(&shared->cond);
        accel__host_unlock(shared);
        return ACCEL_OK;
    }
    struct host_waiting waiting = {barrier_passed, describe_barrier, &wait};
    accel_status status = accel__host_wait(comm, &waiting, deadline_ns);
    accel__host_unlock(shared);
    return status;
}

accel_status accel__host_check_broken(accel_comm_handle *comm)
{
    struct host_shared *shared = comm->shared;
    accel__host_lock(shared);
    accel_status status = ACCEL_OK;
    if (shared->error != ACCEL_OK)
        status = accel__host_error(
            comm, ACCEL_ERR_COMM_ABORTED,
            "host communicator, rank %d: the communicator was aborted: %s",
            comm->rank, shared->reason);
    accel__host_unlock(shared);
    return status;
}

static accel_status verror(const struct accel_comm_services *services,
                           accel_status status, const char *fmt, va_list args)
{
    char detail[512];
    vsnprintf(detail, sizeof detail, fmt, args);
    if (services != NULL && services->set_error != NULL)
        return services->set_error(status, "%s", detail);
    return status;
}

accel_status accel__host_error(accel_comm_handle *comm, accel_status status,
                               const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    status = verror(comm->services, status, fmt, args);
    va_end(args);
    return status;
}

accel_status accel__host_service_error(const struct accel_comm_services *services,
                                       accel_status status, const char *fmt,
                                       ...)
{
    va_list args;
    va_start(args, fmt);
    status = verror(services, status, fmt, args);
    va_end(args);
    return status;
}

const char *accel__host_status_name(accel_status status)
{
    switch (status) {
#define HOST_STATUS_NAME_(name, value, text)                                   \
    case name:                                                                 \
        return #name;
        ACCEL_STATUS_LIST(HOST_STATUS_NAME_)
#undef HOST_STATUS_NAME_
    }
    return "an unknown status";
}
