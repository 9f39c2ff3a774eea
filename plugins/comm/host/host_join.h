/*
 * Making a group: comm_create over the host's bootstrap, comm_split over
 * the parent group. Both go through an allgather between the ranks that
 * take part (struct host_exchange), so that every rank sees every other's
 * step and they all succeed or fail together.
 */
#ifndef ACCEL_COMM_HOST_JOIN_H
#define ACCEL_COMM_HOST_JOIN_H

#include "host_group.h"

struct host_exchange {
    /* Collective over the exchange's ranks: rank r's `bytes` at mine land
     * at all + r * bytes on every rank (bytes <= HOST_WORD_BYTES). */
    accel_status (*allgather)(void *ctx, const void *mine, void *all,
                              size_t bytes);
    void *ctx;
    int rank;
    int size;
};

/*
 * Join (or, as the first member, make) a group whose members are the
 * exchange ranks members[0..count), in the new group's rank order; comm's
 * rank and size are already the new group's. A rank of the exchange that
 * joins no group passes count 0 and still takes part in the exchanges.
 * Loopback: the first member allocates the state and hands its address.
 * Shared memory: the first member creates segment `name`, the others open
 * it, then it is unlinked.
 */
accel_status accel__host_join_loopback(accel_comm_handle *comm,
                                       const struct host_exchange *exchange,
                                       const int *members, int count);
accel_status accel__host_join_shm(accel_comm_handle *comm,
                                  const struct host_exchange *exchange,
                                  const int *members, int count,
                                  const char *name);

/* Release this rank's view of its group (the last loopback rank frees it). */
void accel__host_leave(accel_comm_handle *comm);

#endif /* ACCEL_COMM_HOST_JOIN_H */
