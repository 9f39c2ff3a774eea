/*
 * Communicators of the mpi provider, and the wait for MPI requests that
 * every operation ends with: MPI_Test in a loop, between tests the abort
 * flag and the deadline, spinning at first (MPI moves data only inside its
 * calls), then with a backoff so that a rank waiting for a late peer does
 * not keep a core busy.
 */
#include "mpi_provider.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

void mpi__enter(accel_comm_provider *p)
{
    if (p->serialise)
        pthread_mutex_lock(&p->serial);
}

void mpi__leave(accel_comm_provider *p)
{
    if (p->serialise)
        pthread_mutex_unlock(&p->serial);
}

accel_status mpi__fail(accel_comm_provider *p, const char *call, int code)
{
    char text[512];
    return p->services->set_error(
        ACCEL_ERR_DRIVER, "%s failed: %s", call,
        mpi__lib_error_string(&p->lib, code, text, sizeof text));
}

uint64_t mpi__now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t mpi__deadline(uint64_t timeout_ns)
{
    return timeout_ns == 0 ? 0 : mpi__now_ns() + timeout_ns;
}

/*
 * How long to test without sleeping: MPI progresses only inside MPI calls
 * (no progress thread of its own by default), so sleeping while the data
 * moves would cost bandwidth. The window is what the transfer should take
 * at a modest 1 GB/s, at least 200 us; past it the peer is late, and the
 * wait backs off to sleeps of up to 50 us.
 */
static uint64_t spin_window_ns(uint64_t bytes)
{
    return 200000u + bytes;
}

/*
 * Test back to back for this long first: a small collective between ranks
 * that are all there completes within it, and a yield between tests costs
 * a system call each (a context switch when another thread is ready),
 * several times the MPI_Test itself.
 */
#define SPIN_NS 20000u

static void back_off(uint64_t waited_ns, uint64_t window_ns, long *sleep_ns)
{
    if (waited_ns < SPIN_NS)
        return;
    if (waited_ns < window_ns) {
        /* Ranks may outnumber cores (mpirun --oversubscribe). */
        sched_yield();
        return;
    }
    *sleep_ns = *sleep_ns == 0 ? 1000 : *sleep_ns * 2;
    if (*sleep_ns > 50000)
        *sleep_ns = 50000;
    struct timespec pause = {0, *sleep_ns};
    nanosleep(&pause, NULL);
}

/* Make the communicator unusable with `status`; the first reason stays. */
static accel_status spoil(accel_comm_handle *comm, accel_status status)
{
    int expected = ACCEL_OK;
    atomic_compare_exchange_strong(&comm->error, &expected, (int)status);
    return status;
}

/* Give up requests: cancel and free sends and receives; a collective
 * cannot be cancelled (MPI 3.0, 5.12), and is left to complete or not. */
static void abandon(accel_comm_handle *comm, mpi_h *requests, int count, bool p2p)
{
    accel_comm_provider *p = comm->provider;
    if (!p2p) {
        atomic_store(&comm->abandoned, true);
        return;
    }
    mpi__enter(p);
    for (int i = 0; i < count; i++)
        if (requests[i] != p->lib.h.request_null) {
            p->lib.call->cancel(&p->lib, &requests[i]);
            p->lib.call->request_free(&p->lib, &requests[i]);
        }
    mpi__leave(p);
}

/* Test each request once: 1 when all are done, 0 when not, -1 on error. */
static int test_all(accel_comm_handle *comm, mpi_h *requests, int count,
                    accel_status *out_status)
{
    accel_comm_provider *p = comm->provider;
    int all_done = 1;
    for (int i = 0; i < count; i++) {
        if (requests[i] == p->lib.h.request_null)
            continue;
        int done = 0;
        mpi__enter(p);
        int rc = p->lib.call->test(&p->lib, &requests[i], &done);
        mpi__leave(p);
        if (rc != 0) {
            *out_status = spoil(comm, mpi__fail(p, "MPI_Test", rc));
            return -1;
        }
        if (!done)
            all_done = 0;
    }
    return all_done;
}

accel_status mpi__wait(accel_comm_handle *comm, mpi_h *requests, int count,
                       bool p2p, uint64_t deadline_ns, uint64_t bytes)
{
    accel_comm_provider *p = comm->provider;
    uint64_t started = mpi__now_ns();
    uint64_t window = spin_window_ns(bytes);
    long sleep_ns = 0;
    for (;;) {
        accel_status status = ACCEL_OK;
        int done = test_all(comm, requests, count, &status);
        if (done != 0) {
            if (done < 0)
                abandon(comm, requests, count, p2p);
            return status;
        }
        uint64_t now = mpi__now_ns();
        if (atomic_load(&comm->aborted)) {
            abandon(comm, requests, count, p2p);
            spoil(comm, ACCEL_ERR_COMM_ABORTED);
            return p->services->set_error(
                ACCEL_ERR_COMM_ABORTED,
                "the communicator was aborted while an operation waited");
        }
        if (deadline_ns != 0 && now >= deadline_ns) {
            abandon(comm, requests, count, p2p);
            spoil(comm, ACCEL_ERR_TIMEOUT);
            return p->services->set_error(
                ACCEL_ERR_TIMEOUT,
                "an MPI operation did not complete within its deadline "
                "(waited %.3f s): a rank is late or gone; the communicator "
                "is unusable",
                (double)(now - started) / 1e9);
        }
        back_off(now - started, window, &sleep_ns);
    }
}

accel_status mpi__comm_check_usable(accel_comm_handle *comm)
{
    accel_comm_provider *p = comm->provider;
    if (atomic_load(&comm->aborted))
        return p->services->set_error(ACCEL_ERR_COMM_ABORTED,
                                      "the communicator was aborted");
    int error = atomic_load(&comm->error);
    if (error != ACCEL_OK)
        return p->services->set_error(
            (accel_status)error,
            "the communicator is unusable after an earlier failure (%d)", error);
    return ACCEL_OK;
}

accel_status mpi__comm_adopt(accel_comm_provider *p, accel_comm_handle *comm,
                             mpi_h mpi_comm)
{
    comm->provider = p;
    comm->comm = mpi_comm;
    atomic_init(&comm->aborted, false);
    atomic_init(&comm->error, ACCEL_OK);
    /* Errors come back as codes: the job must not die of one rank's. */
    int rc = p->lib.call->comm_set_errhandler(&p->lib, mpi_comm,
                                              p->lib.h.errors_return);
    if (rc == 0)
        rc = p->lib.call->comm_rank(&p->lib, mpi_comm, &comm->rank);
    if (rc == 0)
        rc = p->lib.call->comm_size(&p->lib, mpi_comm, &comm->size);
    return rc == 0 ? ACCEL_OK : mpi__fail(p, "MPI_Comm_set_errhandler", rc);
}

/*
 * A barrier with a deadline before a blocking MPI_Comm_dup or _split, so
 * that a rank that never comes costs a timeout, not a hang (MPI_Comm_idup
 * would write the new handle when it completes, into storage that would
 * have to outlive a timeout).
 */
static accel_status arrive(accel_comm_handle *comm, uint64_t timeout_ns)
{
    accel_comm_provider *p = comm->provider;
    mpi_h req = p->lib.h.request_null;
    mpi__enter(p);
    int rc = p->lib.call->ibarrier(&p->lib, comm->comm, &req);
    mpi__leave(p);
    if (rc != 0)
        return mpi__fail(p, "MPI_Ibarrier", rc);
    return mpi__wait(comm, &req, 1, false, mpi__deadline(timeout_ns), 0);
}

static accel_status wrap(accel_comm_provider *p, mpi_h mpi_comm,
                         accel_comm_handle **out_comm)
{
    accel_comm_handle *comm = calloc(1, sizeof *comm);
    if (comm == NULL) {
        p->lib.call->comm_free(&p->lib, &mpi_comm);
        return p->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                      "no memory for a communicator");
    }
    accel_status status = mpi__comm_adopt(p, comm, mpi_comm);
    if (status != ACCEL_OK) {
        p->lib.call->comm_free(&p->lib, &mpi_comm);
        free(comm);
        return status;
    }
    *out_comm = comm;
    return ACCEL_OK;
}

accel_status mpi__comm_create(accel_comm_provider *p,
                              const struct accel_comm_init *init,
                              accel_comm_handle **out_comm)
{
    *out_comm = NULL;
    if (init->rank != p->boot.rank || init->size != p->boot.size)
        return p->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "the communicator's rank %d of %d differs from MPI's rank %d "
            "of %d (MPI_COMM_WORLD): the launcher's variables and MPI "
            "disagree",
            (int)init->rank, (int)init->size, p->boot.rank, p->boot.size);
    pthread_mutex_lock(&p->boot_lock);
    accel_status status = mpi__comm_check_usable(&p->boot);
    if (status == ACCEL_OK)
        status = arrive(&p->boot, init->timeout_ns);
    mpi_h made = p->lib.h.comm_null;
    if (status == ACCEL_OK) {
        mpi__enter(p);
        int rc = p->lib.call->comm_dup(&p->lib, p->lib.h.comm_world, &made);
        mpi__leave(p);
        if (rc != 0)
            status = mpi__fail(p, "MPI_Comm_dup", rc);
    }
    pthread_mutex_unlock(&p->boot_lock);
    if (status != ACCEL_OK)
        return status;
    return wrap(p, made, out_comm);
}

accel_status mpi__comm_split(accel_comm_handle *comm, int color, int key,
                             accel_comm_handle **out_comm)
{
    accel_comm_provider *p = comm->provider;
    *out_comm = NULL;
    accel_status status = mpi__comm_check_usable(comm);
    if (status == ACCEL_OK)
        status = arrive(comm, p->timeout_ns);
    if (status != ACCEL_OK)
        return status;
    mpi_h made = p->lib.h.comm_null;
    mpi__enter(p);
    int rc = p->lib.call->comm_split(
        &p->lib, comm->comm, color < 0 ? p->lib.h.undefined : color, key, &made);
    mpi__leave(p);
    if (rc != 0)
        return spoil(comm, mpi__fail(p, "MPI_Comm_split", rc));
    if (made == p->lib.h.comm_null)
        return ACCEL_OK; /* color < 0: this rank is in no new communicator */
    return wrap(p, made, out_comm);
}

void mpi__comm_destroy(accel_comm_handle *comm)
{
    if (comm == NULL)
        return;
    accel_comm_provider *p = comm->provider;
    /* A collective given up on it may still complete: Open MPI's libnbc
     * then touches the communicator, which MPI_Comm_free would have freed
     * (a crash seen under mpirun): such a communicator is kept. */
    if (!atomic_load(&comm->abandoned)) {
        mpi__enter(p);
        p->lib.call->comm_free(&p->lib, &comm->comm);
        mpi__leave(p);
    }
    free(atomic_load(&comm->stage_cache));
    free(comm);
}

void mpi__comm_abort(accel_comm_handle *comm)
{
    atomic_store(&comm->aborted, true);
    int expected = ACCEL_OK;
    atomic_compare_exchange_strong(&comm->error, &expected,
                                   (int)ACCEL_ERR_COMM_ABORTED);
}

accel_status mpi__comm_error(accel_comm_handle *comm)
{
    int error = atomic_load(&comm->error);
    if (error == ACCEL_OK)
        return ACCEL_OK;
    return comm->provider->services->set_error(
        (accel_status)error, "%s",
        error == ACCEL_ERR_COMM_ABORTED ? "the communicator was aborted"
        : error == ACCEL_ERR_TIMEOUT
            ? "an operation timed out: a rank is late or gone"
            : "an MPI operation failed");
}
