/*
 * Collectives through the public API with the mpi provider, one process
 * per rank under `mpirun -np 4` (tests/comm-mpi-run.sh), each rank on its
 * local null device (ACCEL_BACKEND=null:%local%, two devices): relocation
 * (compaction) while a collective is in flight, and a device reset during
 * a collective, as test-comm.c does them in loopback.
 *
 * Rank 0 must act while its collective waits for the others: they hold
 * back until it says it is done, through a file (a signal apart from MPI,
 * which the program does not link). Skips (77) where the mpi provider
 * finds no MPI library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <accel/comm.h>

#include "support.h"

#define SLICE_BYTES 4096u
#define SLICES_PER_PAGE 512u
#define SIGNAL_WAIT_S 60

static accel_host *host;
static accel_device *device;
static int rank, size;

static void sleep_ms(long ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* ---- rank 0's signal to the others: a file named by the job ---- */

static void signal_path(const char *tag, char *out, size_t out_size)
{
    const char *dir = getenv("TMPDIR");
    const char *job = getenv("OMPI_MCA_ess_base_jobid");
    if (job == NULL)
        job = getenv("PMIX_NAMESPACE");
    snprintf(out, out_size, "%s/accel-comm-mpi-api-%ld-%s-%s",
             dir && *dir ? dir : "/tmp", (long)getppid(), job ? job : "-", tag);
}

static void signal_raise(const char *tag)
{
    char path[512];
    signal_path(tag, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
}

static void signal_wait(const char *tag)
{
    char path[512];
    signal_path(tag, path, sizeof path);
    for (int i = 0; i < SIGNAL_WAIT_S * 100; i++) {
        if (access(path, F_OK) == 0)
            return;
        sleep_ms(10);
    }
    fail_msg("rank %d: no signal '%s' from rank 0 in %d s", rank, tag,
             SIGNAL_WAIT_S);
}

static void signal_clear(const char *tag)
{
    char path[512];
    signal_path(tag, path, sizeof path);
    unlink(path);
}

/* ---- a communicator of every rank ---- */

static accel_comm *comm_open(void)
{
    accel_comm *comm = NULL;
    assert_status(accel_comm_create(device, &comm), ACCEL_OK);
    assert_string_equal(accel_comm_provider_name(comm), "mpi");
    assert_int_equal(accel_comm_rank(comm), rank);
    assert_int_equal(accel_comm_size(comm), size);
    return comm;
}

/* Every rank's value 1 summed: the job goes on, and every rank is past
 * the point this follows. */
static void comm_check(accel_comm *comm, accel_stream *stream)
{
    accel_ref x;
    int32_t value = 1;
    assert_status(accel_alloc(device, ACCEL_I32, 1, &x), ACCEL_OK);
    assert_status(accel_copy_to_device(stream, x, 0, &value, sizeof value),
                  ACCEL_OK);
    assert_status(accel_allreduce(comm, stream, x, x, 1, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(stream, &value, x, 0, sizeof value),
                  ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    assert_int_equal(value, size);
    assert_status(accel_free(device, x), ACCEL_OK);
}

/* Rank 0's ref for the collective: the one live slice of its second pool
 * page (the first page keeps slices too, so the second could move into
 * it), as test-comm.c's compaction test has it. `rest` keeps the others. */
static accel_ref lone_slice(accel_ref **out_rest)
{
    accel_pool_policy manual = {.struct_size = sizeof manual,
                                .automatic = false,
                                .outdated_percent = 25};
    assert_status(accel_device_set_pool_policy(device, &manual), ACCEL_OK);
    enum { N = 2 * SLICES_PER_PAGE };
    accel_ref *refs = calloc(N, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < N; i++)
        assert_status(accel_alloc(device, ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
    for (uint32_t i = SLICES_PER_PAGE + 1; i < N; i++)
        assert_status(accel_free(device, refs[i]), ACCEL_OK);
    for (uint32_t i = 0; i < 10; i++)
        assert_status(accel_free(device, refs[i]), ACCEL_OK);
    *out_rest = refs;
    return refs[SLICES_PER_PAGE];
}

static void test_compaction_while_a_collective_is_in_flight(void **state)
{
    (void)state;
    accel_stream *stream;
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    accel_comm *comm = comm_open();
    accel_ref *rest = NULL;
    accel_ref x;
    if (rank == 0)
        x = lone_slice(&rest);
    else
        assert_status(accel_alloc(device, ACCEL_BYTE, 64, &x), ACCEL_OK);
    uint8_t in[64], out[64];
    memset(in, rank + 1, sizeof in);
    assert_status(accel_copy_to_device(stream, x, 0, in, sizeof in), ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    if (rank != 0)
        signal_wait("compacted");
    assert_status(accel_allreduce(comm, stream, x, x, 64, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    uint8_t want = (uint8_t)(size * (size + 1) / 2);
    if (rank == 0) {
        /* The others have not joined: the page stays where it is. */
        uint64_t moves = support_memory_stats(device).relocations;
        uint32_t pages = 1;
        assert_status(accel_device_compact(device, &pages), ACCEL_OK);
        assert_int_equal(pages, 0);
        assert_int_equal(support_memory_stats(device).relocations, moves);
        signal_raise("compacted");
    }
    assert_status(accel_copy_to_host(stream, out, x, 0, sizeof out), ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(out[i], want);
    if (rank == 0) {
        /* Over: the page may move now, its contents intact. */
        uint32_t pages = 0;
        assert_status(accel_device_sync(device), ACCEL_OK);
        assert_status(accel_device_compact(device, &pages), ACCEL_OK);
        assert_int_equal(pages, 1);
        assert_status(accel_copy_to_host(stream, out, x, 0, sizeof out),
                      ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        for (size_t i = 0; i < sizeof out; i++)
            assert_int_equal(out[i], want);
        for (uint32_t i = 10; i <= SLICES_PER_PAGE; i++)
            assert_status(accel_free(device, rest[i]), ACCEL_OK);
        free(rest);
    } else {
        assert_status(accel_free(device, x), ACCEL_OK);
    }
    comm_check(comm, stream);
    if (rank == 0)
        signal_clear("compacted");
    accel_comm_destroy(comm);
    accel_stream_destroy(stream);
}

/*
 * Rank 0 resets its device while its all-reduce waits for the others: the
 * reset does not wait for the timeout, and the communicator is aborted
 * (ACCEL_ERR_COMM_ABORTED, "reset") for every later call. The others never
 * join that all-reduce (rank 0's part of it may be posted to MPI, over
 * memory the reset freed: completing it would write there), and a new
 * communicator works on every rank, rank 0's reset device included.
 */
static void test_reset_during_a_collective_aborts_it(void **state)
{
    (void)state;
    accel_stream *stream;
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    accel_comm *comm = comm_open();
    if (rank == 0) {
        accel_ref x;
        assert_status(accel_alloc(device, ACCEL_F32, 8, &x), ACCEL_OK);
        assert_status(accel_allreduce(comm, stream, x, x, 8, ACCEL_REDUCE_MAX),
                      ACCEL_OK);
        sleep_ms(50); /* the gate reached, most likely */
        /* The timeout is a minute: the reset must not wait for it. */
        accel_status reset = accel_device_reset(device);
        signal_raise("reset"); /* before a failure, which would hold them */
        assert_status(reset, ACCEL_OK);
        assert_status(accel_comm_status(comm), ACCEL_ERR_COMM_ABORTED);
        assert_contains(accel_last_error(), "reset");
        /* The stream's next sync reports the aborted collective, once. */
        assert_status(accel_stream_sync(stream), ACCEL_ERR_COMM_ABORTED);
        assert_contains(accel_last_error(), "reset");
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        assert_status(accel_allreduce(comm, stream, x, x, 8, ACCEL_REDUCE_MAX),
                      ACCEL_ERR_COMM_ABORTED);
        assert_contains(accel_last_error(), "reset");
        assert_status(accel_comm_barrier(comm, stream), ACCEL_ERR_COMM_ABORTED);
    } else {
        signal_wait("reset");
        assert_status(accel_comm_status(comm), ACCEL_OK);
    }
    accel_comm_destroy(comm);
    comm = comm_open();
    comm_check(comm, stream);
    if (rank == 0)
        signal_clear("reset");
    accel_comm_destroy(comm);
    accel_stream_destroy(stream);
}

/*
 * Rank 0 aborts its communicator while its all-reduce is posted to MPI,
 * frees the ref and allocates a canary of the same size (the same slice,
 * most likely); then the other ranks join that all-reduce, and MPI
 * completes rank 0's abandoned request too (the progress of rank 0's next
 * MPI calls drives it). The canary must stay as written: the request
 * writes into the provider's stage, never the freed memory.
 */
#define ABORT_ELEMS 4096
static void test_abort_then_the_others_join(void **state)
{
    (void)state;
    accel_stream *stream;
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    accel_comm *comm = comm_open();
    static int32_t values[ABORT_ELEMS];
    for (int i = 0; i < ABORT_ELEMS; i++)
        values[i] = 1;
    accel_ref x;
    assert_status(accel_alloc(device, ACCEL_I32, ABORT_ELEMS, &x), ACCEL_OK);
    assert_status(accel_copy_to_device(stream, x, 0, values, sizeof values),
                  ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    accel_ref canary = {0};
    if (rank == 0) {
        assert_status(
            accel_allreduce(comm, stream, x, x, ABORT_ELEMS, ACCEL_REDUCE_SUM),
            ACCEL_OK);
        sleep_ms(50); /* posted, most likely */
        assert_status(accel_comm_abort(comm), ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_ERR_COMM_ABORTED);
        assert_status(accel_free(device, x), ACCEL_OK);
        assert_status(accel_alloc(device, ACCEL_I32, ABORT_ELEMS, &canary),
                      ACCEL_OK);
        for (int i = 0; i < ABORT_ELEMS; i++)
            values[i] = -7;
        assert_status(
            accel_copy_to_device(stream, canary, 0, values, sizeof values),
            ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        signal_raise("aborted");
    } else {
        signal_wait("aborted");
        /* Rank 0's part is posted: this completes with its ones. */
        assert_status(
            accel_allreduce(comm, stream, x, x, ABORT_ELEMS, ACCEL_REDUCE_SUM),
            ACCEL_OK);
        assert_status(accel_copy_to_host(stream, values, x, 0, sizeof values),
                      ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        for (int i = 0; i < ABORT_ELEMS; i++)
            assert_int_equal(values[i], size);
        assert_status(accel_free(device, x), ACCEL_OK);
    }
    accel_comm_destroy(comm);
    /* A new communicator and a collective: MPI progresses every rank's
     * requests, rank 0's abandoned one included, which then completes. */
    comm = comm_open();
    comm_check(comm, stream);
    comm_check(comm, stream);
    if (rank == 0) {
        assert_status(accel_copy_to_host(stream, values, canary, 0, sizeof values),
                      ACCEL_OK);
        assert_status(accel_stream_sync(stream), ACCEL_OK);
        for (int i = 0; i < ABORT_ELEMS; i++)
            assert_int_equal(values[i], -7);
        assert_status(accel_free(device, canary), ACCEL_OK);
        signal_clear("aborted");
    }
    accel_comm_destroy(comm);
    accel_stream_destroy(stream);
}

int main(void)
{
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH ":" COMM_MPI_PLUGIN_PATH, 1);
    setenv("ACCEL_BACKEND", "null:%local%", 1);
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    setenv("ACCEL_COMM", "mpi", 1);
    setenv("ACCEL_COMM_TIMEOUT_MS", "60000", 1);
    /* Rank 0's collective must return before it completes, for rank 0 to
     * compact or reset while it is in flight: through the gate, never on
     * the calling thread (ACCEL_COMM_INLINE's default for one rank a
     * process). */
    setenv("ACCEL_COMM_INLINE", "0", 1);
    if (accel_host_create(NULL, &host) != ACCEL_OK ||
        accel_device_open_selected(host, &device) != ACCEL_OK) {
        fprintf(stderr, "no device: %s\n", accel_last_error());
        return 1;
    }
    accel_comm *probe = NULL;
    accel_status status = accel_comm_create(device, &probe);
    if (status == ACCEL_ERR_NOT_FOUND) {
        printf("SKIP: %s\n", accel_last_error());
        accel_device_close(device);
        accel_host_destroy(host);
        return 77;
    }
    if (status != ACCEL_OK) {
        fprintf(stderr, "accel_comm_create: %s\n", accel_last_error());
        return 1;
    }
    rank = accel_comm_rank(probe);
    size = accel_comm_size(probe);
    accel_comm_destroy(probe);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compaction_while_a_collective_is_in_flight),
        cmocka_unit_test(test_reset_during_a_collective_aborts_it),
        cmocka_unit_test(test_abort_then_the_others_join),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    accel_device_close(device);
    accel_host_destroy(host);
    return failed;
}
