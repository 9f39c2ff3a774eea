/*
 * The mpi communication provider: its objects and the calls between its
 * files. mpi_plugin.c holds the table, plugin_open/close, accepts_memory
 * and the bootstrap; mpi_comm.c communicators and the wait for requests;
 * mpi_submit.c the operations.
 */
#ifndef ACCEL_COMM_MPI_PROVIDER_H
#define ACCEL_COMM_MPI_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/comm.h>

#include "mpi_lib.h"

/* One MPI communicator of the provider's own (dup'ed or split). */
struct accel_comm_handle {
    accel_comm_provider *provider;
    mpi_h comm;
    int rank;
    int size;
    /* Set by comm_abort from any thread; read between tests. */
    atomic_bool aborted;
    /* A collective was given up and may still be pending: comm_destroy
     * keeps the MPI communicator (mpi_submit.c keeps its buffers). */
    atomic_bool abandoned;
    /* The last stage's memory (struct mpi_stage_block), kept for the next
     * collective: a fresh malloc and free of a large buffer per call maps
     * and unmaps it each time, which cost 10 ms a 1 MiB all-reduce under
     * Open MPI. Taken and given back by exchange; freed at comm_destroy. */
    _Atomic(void *) stage_cache;
    /* ACCEL_OK, or what made the communicator unusable (a timeout, an
     * abort, an MPI error): comm_error's answer, and every later
     * operation's. */
    _Atomic int error;
};

struct accel_comm_provider {
    const struct accel_comm_services *services;
    struct mpi_lib lib;
    /* MPI_Init_thread was called here: MPI_Finalize at plugin_close. */
    bool initialised_here;
    /* MPI gives only MPI_THREAD_SERIALIZED: every MPI call takes `serial`. */
    bool serialise;
    pthread_mutex_t serial;
    /* f16 and bf16 reductions (mpi_half.h), made at plugin_open. */
    mpi_h half_ops[2][4];
    /* Elements per MPI call; INT_MAX unless ACCEL_MPI_CHUNK_ELEMS (a test
     * knob) lowers it. */
    int chunk_elems;
    /* ACCEL_COMM_CHECK=1: compare each collective's signature first. */
    bool check;
    /* ACCEL_COMM_TIMEOUT_MS, in ns (0: forever), for what has no deadline
     * of its own: the bootstrap, communicator creation and split. */
    uint64_t timeout_ns;
    /* A dup of MPI_COMM_WORLD: the bootstrap's, and the one whose barrier
     * precedes each comm_create; `boot_lock` makes its users take turns. */
    struct accel_comm_handle boot;
    bool boot_made;
    pthread_mutex_t boot_lock;
};

/* Around every MPI call: the lock, when MPI is only SERIALIZED. */
void mpi__enter(accel_comm_provider *provider);
void mpi__leave(accel_comm_provider *provider);

/* Record MPI error `code` of `call` through set_error: ACCEL_ERR_DRIVER. */
accel_status mpi__fail(accel_comm_provider *provider, const char *call, int code);

/* CLOCK_MONOTONIC now, and a deadline `timeout_ns` from now (0: none). */
uint64_t mpi__now_ns(void);
uint64_t mpi__deadline(uint64_t timeout_ns);

/*
 * Wait for `count` requests of `comm` (null ones are done): ACCEL_OK when
 * all completed; ACCEL_ERR_TIMEOUT past `deadline_ns` (0: none) or
 * ACCEL_ERR_COMM_ABORTED after comm_abort, both leaving the communicator
 * unusable; ACCEL_ERR_DRIVER when MPI failed. `p2p` says the requests are
 * sends and receives, which can be cancelled when given up; a collective
 * cannot be, and is left to MPI. `bytes` sizes how long to poll before
 * backing off to sleeps.
 */
accel_status mpi__wait(accel_comm_handle *comm, mpi_h *requests, int count,
                       bool p2p, uint64_t deadline_ns, uint64_t bytes);

/* The status an unusable communicator answers with, set_error included;
 * ACCEL_OK when it is usable. */
accel_status mpi__comm_check_usable(accel_comm_handle *comm);

/* Fill `comm` as a handle of `mpi_comm` (errors returned, not fatal). */
accel_status mpi__comm_adopt(accel_comm_provider *provider,
                             accel_comm_handle *comm, mpi_h mpi_comm);

accel_status mpi__comm_create(accel_comm_provider *provider,
                              const struct accel_comm_init *init,
                              accel_comm_handle **out_comm);
accel_status mpi__comm_split(accel_comm_handle *comm, int color, int key,
                             accel_comm_handle **out_comm);
void mpi__comm_destroy(accel_comm_handle *comm);
void mpi__comm_abort(accel_comm_handle *comm);
accel_status mpi__comm_error(accel_comm_handle *comm);

accel_status mpi__accepts_memory(accel_comm_provider *provider,
                                 accel_native_kind kind);
accel_status mpi__submit(accel_comm_handle *comm, const struct accel_comm_op *op);

#endif /* ACCEL_COMM_MPI_PROVIDER_H */
