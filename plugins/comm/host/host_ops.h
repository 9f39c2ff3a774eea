/*
 * The operations of the host provider over a group (host_group.h): the
 * collectives, comm_split's exchange, and send/recv.
 */
#ifndef ACCEL_COMM_HOST_OPS_H
#define ACCEL_COMM_HOST_OPS_H

#include "host_group.h"

/* Run `op` to completion on this rank (the provider's submit). */
accel_status accel__host_run(accel_comm_handle *comm,
                             const struct accel_comm_op *op);

/*
 * A group operation of its own: every rank publishes HOST_WORD_BYTES at
 * `mine` and receives every rank's at all[rank * HOST_WORD_BYTES]. A rank
 * that runs another operation meanwhile is a mismatch on every rank.
 */
accel_status accel__host_allgather_word(accel_comm_handle *comm,
                                        const void *mine, void *all,
                                        uint64_t deadline_ns);

#endif /* ACCEL_COMM_HOST_OPS_H */
