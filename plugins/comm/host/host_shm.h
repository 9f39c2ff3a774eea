/*
 * The shared-memory segment of a host communicator between processes of
 * one machine: created by one rank (O_EXCL, mode 0600), opened by the
 * others, unlinked once every rank has mapped it.
 */
#ifndef ACCEL_COMM_HOST_SHM_H
#define ACCEL_COMM_HOST_SHM_H

#include "host_group.h"

/* Create, size (backed now, so that a full /dev/shm is an error here and
 * not a SIGBUS later), map and initialise the segment `name`. */
accel_status accel__host_shm_create(accel_comm_handle *comm, const char *name,
                                    uint32_t size, uint64_t chunk_bytes);
/* Open and map the segment `name` made by another rank for `size` ranks. */
accel_status accel__host_shm_open(accel_comm_handle *comm, const char *name,
                                  uint32_t size);
void accel__host_shm_unlink(const char *name);
/* Unmap this rank's view. */
void accel__host_shm_close(accel_comm_handle *comm);

/* The staging buffer per rank for a group of `size`: at most 4 MiB, less
 * for large groups so that the segment stays near 32 MiB. */
uint64_t accel__host_chunk_bytes(uint32_t size);

#endif /* ACCEL_COMM_HOST_SHM_H */
