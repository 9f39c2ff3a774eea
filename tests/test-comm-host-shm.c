/*
 * The `host` communication provider between processes (fork): four ranks
 * over POSIX shared memory run every operation, past one staging chunk,
 * a mismatch and a split; the segment is gone afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm-host-harness.h"

#define PROCESS_RANKS 4

struct process {
    accel_comm_handle *comm;
    int rank;
    int size;
};

static accel_status process_op(struct process *p, uint32_t kind, uint32_t type,
                               uint32_t reduce_op, uint64_t count, int root,
                               const void *send, void *recv)
{
    struct accel_comm_op op = {.struct_size = sizeof op,
                               .kind = kind,
                               .type = type,
                               .reduce_op = reduce_op,
                               .count = count,
                               .root = root,
                               .memory = ACCEL_NATIVE_CPU,
                               .send = (uint64_t)(uintptr_t)send,
                               .recv = (uint64_t)(uintptr_t)recv,
                               .deadline_ns = deadline_in(60)};
    return table->submit(p->comm, &op);
}

#define PROCESS_CHECK(cond, ...)                                               \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "process rank %d: ", p->rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, " (%s)\n", last_error);                            \
            return 1;                                                          \
        }                                                                      \
    } while (0)

/* Allreduce in two chunks and more, out of place and in place. */
static int process_allreduce(struct process *p, uint64_t n)
{
    float *send = malloc(n * sizeof *send), *recv = malloc(n * sizeof *recv);
    PROCESS_CHECK(send && recv, "malloc");
    for (uint64_t i = 0; i < n; i++)
        send[i] = (float)(p->rank + (int)(i % 5));
    accel_status status = process_op(p, ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                     ACCEL_REDUCE_SUM, n, 0, send, recv);
    PROCESS_CHECK(status == ACCEL_OK, "allreduce: %d", status);
    status = process_op(p, ACCEL_COMM_ALLREDUCE, ACCEL_F32, ACCEL_REDUCE_SUM, n,
                        0, send, send);
    PROCESS_CHECK(status == ACCEL_OK, "allreduce in place: %d", status);
    float base = (float)(p->size * (p->size - 1) / 2);
    for (uint64_t i = 0; i < n; i++) {
        float want = base + (float)(p->size * (int)(i % 5));
        PROCESS_CHECK(recv[i] == want && send[i] == want,
                      "allreduce element %llu: %g %g, not %g",
                      (unsigned long long)i, (double)recv[i], (double)send[i],
                      (double)want);
    }
    free(send);
    free(recv);
    return 0;
}

/* Reduce-scatter and allgather, each in more than one chunk. */
static int process_scatter_gather(struct process *p, uint64_t n)
{
    uint64_t size = (uint64_t)p->size;
    int32_t *send = malloc(n * size * sizeof *send);
    int32_t *recv = malloc(n * size * sizeof *recv);
    PROCESS_CHECK(send && recv, "malloc");
    for (uint64_t q = 0; q < size; q++)
        for (uint64_t i = 0; i < n; i++)
            send[q * n + i] = p->rank * 3 + (int32_t)q + (int32_t)(i % 7);
    accel_status status = process_op(p, ACCEL_COMM_REDUCE_SCATTER, ACCEL_I32,
                                     ACCEL_REDUCE_SUM, n, 0, send, recv);
    PROCESS_CHECK(status == ACCEL_OK, "reduce_scatter: %d", status);
    int32_t ranks = (int32_t)(3 * size * (size - 1) / 2);
    for (uint64_t i = 0; i < n; i++)
        PROCESS_CHECK(recv[i] ==
                          ranks + (int32_t)size * (p->rank + (int32_t)(i % 7)),
                      "reduce_scatter element %llu", (unsigned long long)i);
    for (uint64_t i = 0; i < n; i++)
        send[i] = p->rank * 100000 + (int32_t)i;
    status = process_op(p, ACCEL_COMM_ALLGATHER, ACCEL_I32, 0, n, 0, send, recv);
    PROCESS_CHECK(status == ACCEL_OK, "allgather: %d", status);
    for (uint64_t q = 0; q < size; q++)
        for (uint64_t i = 0; i < n; i++)
            PROCESS_CHECK(recv[q * n + i] == (int32_t)q * 100000 + (int32_t)i,
                          "allgather element %llu of rank %llu",
                          (unsigned long long)i, (unsigned long long)q);
    free(send);
    free(recv);
    return 0;
}

/* Broadcast and reduce at a root other than 0, then send/recv 0 <-> 1. */
static int process_rooted_and_p2p(struct process *p, uint64_t n)
{
    double *data = malloc(n * sizeof *data);
    PROCESS_CHECK(data != NULL, "malloc");
    int root = p->size - 1;
    for (uint64_t i = 0; i < n; i++)
        data[i] = p->rank == root ? (double)i * 0.5 : -1.0;
    accel_status status = process_op(p, ACCEL_COMM_BROADCAST, ACCEL_F64, 0, n,
                                     root, data, data);
    PROCESS_CHECK(status == ACCEL_OK, "broadcast: %d", status);
    for (uint64_t i = 0; i < n; i++)
        PROCESS_CHECK(data[i] == (double)i * 0.5, "broadcast element %llu",
                      (unsigned long long)i);
    uint8_t mine[100], max[100];
    for (int i = 0; i < 100; i++)
        mine[i] = (uint8_t)(p->rank * 50 + i);
    status = process_op(p, ACCEL_COMM_REDUCE, ACCEL_U8, ACCEL_REDUCE_MAX, 100,
                        1, mine, p->rank == 1 ? max : NULL);
    PROCESS_CHECK(status == ACCEL_OK, "reduce: %d", status);
    for (int i = 0; p->rank == 1 && i < 100; i++) {
        uint8_t want = 0;
        for (int q = 0; q < p->size; q++)
            want = (uint8_t)(q * 50 + i) > want ? (uint8_t)(q * 50 + i) : want;
        PROCESS_CHECK(max[i] == want, "reduce element %d", i);
    }
    if (p->rank < 2) {
        uint32_t kind = p->rank == 0 ? ACCEL_COMM_SEND : ACCEL_COMM_RECV;
        status = process_op(p, kind, ACCEL_F64, 0, n, 1 - p->rank,
                            kind == ACCEL_COMM_SEND ? data : NULL,
                            kind == ACCEL_COMM_RECV ? data : NULL);
        PROCESS_CHECK(status == ACCEL_OK, "send/recv: %d", status);
    }
    free(data);
    return 0;
}

/* A mismatch, then a split whose colors each run an allreduce. */
static int process_mismatch_and_split(struct process *p)
{
    int32_t value = p->rank, pair[2] = {p->rank, p->rank};
    int32_t out[2 * PROCESS_RANKS];
    accel_status status = process_op(p, ACCEL_COMM_ALLGATHER, ACCEL_I32, 0,
                                     p->rank == 2 ? 2 : 1, 0, pair, out);
    PROCESS_CHECK(status == ACCEL_ERR_INVALID_ARGUMENT &&
                      strstr(last_error, "rank 2 runs allgather of 2 i32"),
                  "mismatch: %d", status);
    accel_comm_handle *child = NULL;
    status = table->comm_split(p->comm, p->rank % 2, p->rank, &child);
    PROCESS_CHECK(status == ACCEL_OK && child != NULL, "split: %d", status);
    struct process c = {child, p->rank / 2, p->size / 2};
    status = process_op(&c, ACCEL_COMM_ALLREDUCE, ACCEL_I32, ACCEL_REDUCE_SUM,
                        1, 0, &value, &value);
    table->comm_destroy(child);
    int32_t want = p->rank % 2 == 0 ? 0 + 2 : 1 + 3;
    PROCESS_CHECK(status == ACCEL_OK && value == want, "child allreduce: %d %d",
                  status, value);
    status = process_op(p, ACCEL_COMM_BARRIER, 0, 0, 0, 0, NULL, NULL);
    PROCESS_CHECK(status == ACCEL_OK, "barrier: %d", status);
    return 0;
}

static int process_main(struct group *group, int rank)
{
    struct process proc = {NULL, rank, group->size}, *p = &proc;
    accel_status status = create_rank(group, rank, &p->comm);
    PROCESS_CHECK(status == ACCEL_OK, "comm_create: %d", status);
    /* Sizes past one 4 MiB staging chunk. */
    uint64_t n = under_valgrind ? 70000 : (1u << 20) + 3;
    int failed = process_allreduce(p, n) ||
                 process_scatter_gather(p, under_valgrind ? 70000 : 300001) ||
                 process_rooted_and_p2p(p, under_valgrind ? 70000 : 600001) ||
                 process_mismatch_and_split(p);
    if (failed) /* the other ranks fail now, not at their deadline */
        table->comm_abort(p->comm);
    table->comm_destroy(p->comm);
    return failed;
}

static void test_processes_run_every_operation_over_shared_memory(void **state)
{
    (void)state;
    struct group group = {.size = PROCESS_RANKS};
    group.boot = boot_new(PROCESS_RANKS, true);
    assert_int_equal(
        table->unique_id(provider, group.id, sizeof group.id, &group.id_bytes),
        ACCEL_OK);
    pid_t children[PROCESS_RANKS];
    for (int r = 0; r < PROCESS_RANKS; r++) {
        children[r] = fork();
        assert_true(children[r] >= 0);
        if (children[r] == 0)
            _exit(process_main(&group, r));
    }
    for (int r = 0; r < PROCESS_RANKS; r++) {
        int wstatus = 0;
        assert_int_equal(waitpid(children[r], &wstatus, 0), children[r]);
        if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
            fail_msg("process rank %d ended with status %#x", r, wstatus);
    }
    /* The segment was unlinked once every rank had mapped it. */
    char name[64];
    int used = snprintf(name, sizeof name, "/accel-comm-");
    for (size_t i = 0; i < 16; i++)
        used += snprintf(name + used, sizeof name - (size_t)used, "%02x",
                         group.id[i]);
    assert_true(shm_open(name, O_RDONLY, 0) < 0);
    boot_free(group.boot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_processes_run_every_operation_over_shared_memory),
    };
    /* ACCEL_TEST_FILTER=name runs the tests that match (cmocka's pattern). */
    if (getenv("ACCEL_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("ACCEL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, comm_host_setup, comm_host_teardown);
}
