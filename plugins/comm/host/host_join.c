/*
 * Making and leaving host groups (host_join.h).
 */
#include "host_join.h"

#include <stdlib.h>
#include <string.h>

#include "host_shm.h"

static struct host_shared *loopback_alloc(uint32_t size)
{
    size_t bytes = accel__host_region_bytes(size, 0);
    struct host_shared *shared = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (shared == NULL)
        return NULL;
    memset(shared, 0, bytes);
    if (accel__host_shared_init(shared, size, 0, false) != ACCEL_OK) {
        free(shared);
        return NULL;
    }
    shared->refs = size;
    return shared;
}

accel_status accel__host_join_loopback(accel_comm_handle *comm,
                                       const struct host_exchange *exchange,
                                       const int *members, int count)
{
    bool leader = count > 0 && members[0] == exchange->rank;
    uint64_t mine = 0;
    if (leader)
        mine = (uint64_t)(uintptr_t)loopback_alloc((uint32_t)count);
    uint64_t all[HOST_MAX_RANKS];
    accel_status status =
        exchange->allgather(exchange->ctx, &mine, all, sizeof mine);
    uint64_t address = count > 0 ? all[members[0]] : 0;
    if (status != ACCEL_OK || count == 0)
        return status;
    if (address == 0)
        return accel__host_error(comm, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                 "host provider: rank %d could not allocate "
                                 "the group's state",
                                 members[0]);
    comm->shared = (struct host_shared *)(uintptr_t)address;
    comm->shm = false;
    return ACCEL_OK;
}

/* Every exchange rank's status; the first failure of a member, if any. */
static accel_status gather_status(const struct host_exchange *exchange,
                                  accel_status mine, const int *members,
                                  int count, int *out_failed,
                                  accel_status *out_failure)
{
    int32_t own = mine;
    int32_t all[HOST_MAX_RANKS];
    accel_status status =
        exchange->allgather(exchange->ctx, &own, all, sizeof own);
    *out_failed = -1;
    *out_failure = ACCEL_OK;
    for (int i = 0; status == ACCEL_OK && i < count; i++) {
        if (all[members[i]] != ACCEL_OK) {
            *out_failed = i;
            *out_failure = (accel_status)all[members[i]];
            break;
        }
    }
    return status;
}

accel_status accel__host_join_shm(accel_comm_handle *comm,
                                  const struct host_exchange *exchange,
                                  const int *members, int count,
                                  const char *name)
{
    bool leader = count > 0 && members[0] == exchange->rank;
    accel_status made = ACCEL_OK;
    if (leader)
        made = accel__host_shm_create(comm, name, (uint32_t)count,
                                      accel__host_chunk_bytes((uint32_t)count));
    int failed;
    accel_status failure;
    accel_status status =
        gather_status(exchange, made, members, count > 0 ? 1 : 0, &failed,
                      &failure);
    accel_status opened = made;
    if (status == ACCEL_OK && !leader && count > 0)
        opened = failure != ACCEL_OK ? failure
                                     : accel__host_shm_open(comm, name,
                                                            (uint32_t)count);
    accel_status gathered =
        gather_status(exchange, opened, members, count, &failed, &failure);
    if (leader && made == ACCEL_OK)
        accel__host_shm_unlink(name); /* every member has mapped it */
    if (status == ACCEL_OK)
        status = gathered;
    if (status == ACCEL_OK && failure != ACCEL_OK)
        status = accel__host_error(comm, failure,
                                   "host provider: rank %d of the new group "
                                   "could not map shared memory %s (%s)",
                                   failed, name, accel__host_status_name(failure));
    if (status != ACCEL_OK)
        accel__host_shm_close(comm);
    return status;
}

void accel__host_leave(accel_comm_handle *comm)
{
    struct host_shared *shared = comm->shared;
    if (shared == NULL)
        return;
    if (comm->shm) {
        accel__host_shm_close(comm);
        return;
    }
    accel__host_lock(shared);
    uint32_t left = --shared->refs;
    accel__host_unlock(shared);
    if (left == 0) {
        accel__host_shared_fini(shared);
        free(shared);
    }
    comm->shared = NULL;
}
