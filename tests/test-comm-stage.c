/*
 * Staged collectives (host/comm_stage.c): the `host` provider in loopback
 * over fake CUDA devices (tests/fakes/cuda), whose memory the host does
 * not see, so that every collective goes through pinned host memory:
 * every kind, counts 0, 1, odd and larger than one staging chunk, checked
 * against a serial reference; the chunks counted by the fake's copies; a
 * free during a staged collective deferred; a failed staging copy or
 * pinning reported and the communicator aborted; a reset during one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <accel/comm.h>

#include "support.h"

#define RANKS 3
/* ACCEL_STAGING_CHUNK: the buffer holds twice this, send and recv. */
#define CHUNK 4096u
#define BIG 1500u /* elements: more than one chunk for every type below */

static bool under_valgrind;

struct world {
    accel_host *host;
    int n;
    accel_device *dev[RANKS];
    accel_stream *stream[RANKS];
    accel_comm *comm[RANKS];
};

static void env_set(void)
{
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", CUDA_PLUGIN_PATH ":" COMM_HOST_PLUGIN_PATH, 1);
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    setenv("ACCEL_BACKEND", "cuda", 1);
    setenv("FAKE_CUDA_DEVICES", "3", 1);
    setenv("ACCEL_COMM", "host", 1);
    setenv("ACCEL_STAGING_CHUNK", "4096", 1);
    /* A failure must abort the ranks, not leave them to the timeout. */
    setenv("ACCEL_COMM_TIMEOUT_MS", "60000", 1);
    unsetenv("FAKE_CUDA_FAIL");
}

static void world_open(struct world *w, int n)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    assert_status(accel_host_create(NULL, &w->host), ACCEL_OK);
    for (int r = 0; r < n; r++) {
        assert_status(accel_device_open(w->host, "cuda", (uint32_t)r, &w->dev[r]),
                      ACCEL_OK);
        struct accel_device_props props;
        assert_status(
            accel_host_device_props(w->host, "cuda", (uint32_t)r, &props),
            ACCEL_OK);
        assert_int_equal(props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE, 0);
        assert_status(accel_stream_create(w->dev[r], &w->stream[r]), ACCEL_OK);
    }
    assert_status(accel_comm_create_local(w->dev, n, w->comm), ACCEL_OK);
    for (int r = 0; r < n; r++)
        assert_string_equal(accel_comm_provider_name(w->comm[r]), "host");
}

static void world_close(struct world *w)
{
    for (int r = 0; r < w->n; r++)
        accel_comm_destroy(w->comm[r]);
    for (int r = 0; r < w->n; r++) {
        accel_stream_destroy(w->stream[r]);
        accel_device_close(w->dev[r]);
    }
    accel_host_destroy(w->host);
}

/* The fake's count of calls to `entry` (the plugin loaded it already). */
static uint64_t fake_calls(const char *entry)
{
    void *dl = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    assert_non_null(dl);
    uint64_t (*calls)(const char *) = (uint64_t(*)(const char *))dlsym(
        dl, "fake_cuda_calls");
    assert_non_null(calls);
    uint64_t n = calls(entry);
    dlclose(dl);
    return n;
}

/* Contiguous copies to host memory (a staged chunk's send side, but for
 * reduce-scatter) and strided copies (an all-gather chunk's recv side). */
static uint64_t fake_copies_to_host(void)
{
    return fake_calls("cuMemcpyDtoHAsync_v2");
}

static uint64_t fake_strided_copies(void)
{
    return fake_calls("cuMemcpy2DAsync_v2");
}

/* ---- values: small integers, exact in each type used ---- */

static void put(accel_elem_type t, void *base, size_t i, double v)
{
    if (t == ACCEL_I32)
        ((int32_t *)base)[i] = (int32_t)v;
    else if (t == ACCEL_F64)
        ((double *)base)[i] = v;
    else
        ((uint8_t *)base)[i] = (uint8_t)v;
}

static double get(accel_elem_type t, const void *base, size_t i)
{
    if (t == ACCEL_I32)
        return ((const int32_t *)base)[i];
    if (t == ACCEL_F64)
        return ((const double *)base)[i];
    return ((const uint8_t *)base)[i];
}

static double value(accel_elem_type t, int r, size_t i)
{
    double v = (double)((i * 7 + (size_t)r * 3) % 5);
    return t == ACCEL_U8 ? v : v - 2;
}

static double reduce2(accel_reduce_op op, double a, double b)
{
    if (op == ACCEL_REDUCE_SUM)
        return a + b;
    if (op == ACCEL_REDUCE_MIN)
        return a < b ? a : b;
    return a > b ? a : b;
}

/* ---- one collective on every rank against a serial reference ---- */

struct job {
    struct world *w;
    accel_elem_type type;
    accel_comm_op_kind kind;
    accel_reduce_op op;
    uint64_t count;
    accel_ref send[RANKS], recv[RANKS];
    void *in[RANKS], *out[RANKS];
};

static size_t sent_count(const struct job *j)
{
    if (j->kind == ACCEL_COMM_BARRIER)
        return 0;
    return (size_t)j->count *
           (j->kind == ACCEL_COMM_REDUCE_SCATTER ? (size_t)j->w->n : 1);
}

static size_t got_count(const struct job *j)
{
    if (j->kind == ACCEL_COMM_BARRIER)
        return 0;
    return (size_t)j->count *
           (j->kind == ACCEL_COMM_ALLGATHER ? (size_t)j->w->n : 1);
}

static void enqueue(struct job *j, int r)
{
    struct world *w = j->w;
    accel_comm *c = w->comm[r];
    accel_stream *s = w->stream[r];
    int root = w->n - 1, next = (r + 1) % w->n, prev = (r + w->n - 1) % w->n;
    accel_status status;
    switch (j->kind) {
    case ACCEL_COMM_ALLREDUCE:
        status = accel_allreduce(c, s, j->send[r], j->recv[r], j->count, j->op);
        break;
    case ACCEL_COMM_BROADCAST:
        status = accel_broadcast(c, s, j->send[r], j->recv[r], j->count, root);
        break;
    case ACCEL_COMM_REDUCE:
        status = accel_reduce(c, s, j->send[r], j->recv[r], j->count, j->op,
                              root);
        break;
    case ACCEL_COMM_ALLGATHER:
        status = accel_allgather(c, s, j->send[r], j->recv[r], j->count);
        break;
    case ACCEL_COMM_REDUCE_SCATTER:
        status = accel_reduce_scatter(c, s, j->send[r], j->recv[r], j->count,
                                      j->op);
        break;
    case ACCEL_COMM_SEND:
        /* A ring: even ranks send first, odd ones receive first. */
        status = r % 2 == 0 ? accel_send(c, s, j->send[r], j->count, next)
                            : accel_recv(c, s, j->recv[r], j->count, prev);
        assert_status(status, ACCEL_OK);
        status = r % 2 == 0 ? accel_recv(c, s, j->recv[r], j->count, prev)
                            : accel_send(c, s, j->send[r], j->count, next);
        break;
    default:
        status = accel_comm_barrier(c, s);
        break;
    }
    assert_status(status, ACCEL_OK);
}

static double expected(const struct job *j, int r, size_t i)
{
    int n = j->w->n, root = n - 1;
    accel_elem_type t = j->type;
    double acc;
    switch (j->kind) {
    case ACCEL_COMM_ALLREDUCE:
    case ACCEL_COMM_REDUCE:
        if (j->kind == ACCEL_COMM_REDUCE && r != root)
            return 1; /* untouched */
        acc = get(t, j->in[0], i);
        for (int q = 1; q < n; q++)
            acc = reduce2(j->op, acc, get(t, j->in[q], i));
        return acc;
    case ACCEL_COMM_BROADCAST:
        return get(t, j->in[root], i);
    case ACCEL_COMM_ALLGATHER:
        return get(t, j->in[i / j->count], i % j->count);
    case ACCEL_COMM_REDUCE_SCATTER:
        acc = get(t, j->in[0], (size_t)r * j->count + i);
        for (int q = 1; q < n; q++)
            acc = reduce2(j->op, acc, get(t, j->in[q], (size_t)r * j->count + i));
        return acc;
    case ACCEL_COMM_SEND:
        return get(t, j->in[(r + n - 1) % n], i);
    default:
        return 1;
    }
}

/* Inputs in, the collective, results out: one stream, one sync. */
static void run_job(struct job *j)
{
    struct world *w = j->w;
    size_t elem = accel_elem_size(j->type);
    size_t sent = sent_count(j), got = got_count(j);
    for (int r = 0; r < w->n; r++) {
        for (size_t i = 0; i < sent; i++)
            put(j->type, j->in[r], i, value(j->type, r, i));
        for (size_t i = 0; i < got; i++)
            put(j->type, j->out[r], i, 1);
        if (sent)
            assert_status(accel_copy_to_device(w->stream[r], j->send[r], 0,
                                               j->in[r], sent * elem),
                          ACCEL_OK);
        if (got)
            assert_status(accel_copy_to_device(w->stream[r], j->recv[r], 0,
                                               j->out[r], got * elem),
                          ACCEL_OK);
    }
    for (int r = 0; r < w->n; r++)
        enqueue(j, r);
    for (int r = 0; r < w->n; r++) {
        if (got)
            assert_status(accel_copy_to_host(w->stream[r], j->out[r],
                                             j->recv[r], 0, got * elem),
                          ACCEL_OK);
        assert_status(accel_stream_sync(w->stream[r]), ACCEL_OK);
    }
    for (int r = 0; r < w->n; r++) {
        for (size_t i = 0; i < got; i++) {
            double want = expected(j, r, i), have = get(j->type, j->out[r], i);
            if (want != have)
                fail_msg("%s kind %d op %d count %llu: rank %d element %zu "
                         "is %g, expected %g",
                         accel_elem_type_name(j->type), (int)j->kind, (int)j->op,
                         (unsigned long long)j->count, r, i, have, want);
        }
    }
}

static void job_buffers(struct job *j, bool make)
{
    size_t room = (size_t)BIG * (size_t)j->w->n;
    for (int r = 0; r < j->w->n; r++) {
        if (!make) {
            assert_status(accel_free(j->w->dev[r], j->send[r]), ACCEL_OK);
            assert_status(accel_free(j->w->dev[r], j->recv[r]), ACCEL_OK);
            free(j->in[r]);
            free(j->out[r]);
            continue;
        }
        assert_status(accel_alloc(j->w->dev[r], j->type, room, &j->send[r]),
                      ACCEL_OK);
        assert_status(accel_alloc(j->w->dev[r], j->type, room, &j->recv[r]),
                      ACCEL_OK);
        j->in[r] = calloc(room, accel_elem_size(j->type));
        j->out[r] = calloc(room, accel_elem_size(j->type));
        assert_non_null(j->in[r]);
        assert_non_null(j->out[r]);
    }
}

static void test_every_collective_staged(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, RANKS);
    static const accel_elem_type types[] = {ACCEL_I32, ACCEL_F64, ACCEL_U8};
    static const uint64_t counts[] = {0, 1, 7, BIG};
    for (size_t t = 0; t < 3; t++) {
        struct job j = {.w = &w, .type = types[t]};
        job_buffers(&j, true);
        for (size_t c = 0; c < 4; c++) {
            j.count = counts[c];
            for (int kind = 0; kind < ACCEL_COMM_OP_KIND_COUNT; kind++) {
                if (kind == ACCEL_COMM_RECV)
                    continue; /* with SEND */
                j.kind = (accel_comm_op_kind)kind;
                j.op = ACCEL_REDUCE_SUM;
                run_job(&j);
                bool reduces = kind == ACCEL_COMM_ALLREDUCE ||
                               kind == ACCEL_COMM_REDUCE ||
                               kind == ACCEL_COMM_REDUCE_SCATTER;
                if (reduces && !under_valgrind) {
                    j.op = ACCEL_REDUCE_MAX;
                    run_job(&j);
                    j.op = ACCEL_REDUCE_MIN;
                    run_job(&j);
                }
            }
        }
        job_buffers(&j, false);
    }
    world_close(&w);
}

/*
 * The copies to host memory are the staging's, one per chunk and rank: an
 * all-reduce of BIG i32 (6000 bytes, in an 8 KiB buffer of send and recv
 * halves) goes in two chunks; an all-gather of BIG f64 carries 1 + 3 rows
 * per element (8 KiB / 32 bytes: 256 elements a chunk, 6 chunks), its
 * results copied back one row per rank in a strided copy.
 */
static void test_large_collectives_go_in_chunks(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, RANKS);
    struct job j = {.w = &w,
                    .type = ACCEL_I32,
                    .count = BIG,
                    .kind = ACCEL_COMM_ALLREDUCE,
                    .op = ACCEL_REDUCE_SUM};
    job_buffers(&j, true);
    uint64_t before = fake_copies_to_host();
    for (int r = 0; r < RANKS; r++)
        enqueue(&j, r);
    assert_int_equal(fake_copies_to_host() - before, 2 * RANKS);
    for (int r = 0; r < RANKS; r++)
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
    job_buffers(&j, false);

    j = (struct job){
        .w = &w, .type = ACCEL_F64, .count = BIG, .kind = ACCEL_COMM_ALLGATHER};
    job_buffers(&j, true);
    before = fake_copies_to_host();
    uint64_t strided = fake_strided_copies();
    for (int r = 0; r < RANKS; r++)
        enqueue(&j, r);
    assert_int_equal(fake_copies_to_host() - before, 6 * RANKS);
    assert_int_equal(fake_strided_copies() - strided, 6 * RANKS);
    for (int r = 0; r < RANKS; r++)
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
    run_job(&j); /* and right */
    job_buffers(&j, false);
    world_close(&w);
}

/* A send ref freed while its staged collective waits for the other ranks
 * is freed after it; the result is right. */
static void test_free_during_a_staged_collective_is_deferred(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_ref send[2], recv[2];
    int32_t in[64], out[64];
    for (int r = 0; r < 2; r++) {
        assert_status(accel_alloc(w.dev[r], ACCEL_I32, 64, &send[r]), ACCEL_OK);
        assert_status(accel_alloc(w.dev[r], ACCEL_I32, 64, &recv[r]), ACCEL_OK);
        for (int i = 0; i < 64; i++)
            in[i] = (r + 1) * i;
        assert_status(accel_copy_to_device(w.stream[r], send[r], 0, in, sizeof in),
                      ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
    }
    assert_status(accel_allreduce(w.comm[0], w.stream[0], send[0], recv[0], 64,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(accel_free(w.dev[0], send[0]), ACCEL_OK);
    assert_true(support_memory_stats(w.dev[0]).pending_frees >= 1);
    assert_status(accel_allreduce(w.comm[1], w.stream[1], send[1], recv[1], 64,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    for (int r = 0; r < 2; r++) {
        assert_status(accel_copy_to_host(w.stream[r], out, recv[r], 0, sizeof out),
                      ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
        for (int i = 0; i < 64; i++)
            assert_int_equal(out[i], 3 * i);
    }
    assert_status(accel_device_sync(w.dev[0]), ACCEL_OK);
    assert_int_equal(support_memory_stats(w.dev[0]).pending_frees, 0);
    assert_status(accel_free(w.dev[0], recv[0]), ACCEL_OK);
    assert_status(accel_free(w.dev[1], send[1]), ACCEL_OK);
    assert_status(accel_free(w.dev[1], recv[1]), ACCEL_OK);
    world_close(&w);
}

/*
 * A staging step that fails (`entry`'s first call, in the fake) fails the
 * collective with the driver's code and aborts the communicator: the other
 * rank's collective fails at its sync, without waiting for the timeout.
 */
static void staging_failure(const char *fail, accel_status want,
                            const char *detail)
{
    env_set();
    setenv("FAKE_CUDA_FAIL", fail, 1);
    struct world w;
    world_open(&w, 2);
    accel_ref x[2];
    for (int r = 0; r < 2; r++)
        assert_status(accel_alloc(w.dev[r], ACCEL_F32, 16, &x[r]), ACCEL_OK);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], x[0], x[0], 16,
                                  ACCEL_REDUCE_SUM),
                  want);
    assert_contains(accel_last_error(), detail);
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "staging");
    accel_status status = accel_allreduce(w.comm[1], w.stream[1], x[1], x[1],
                                          16, ACCEL_REDUCE_SUM);
    if (status == ACCEL_OK)
        status = accel_stream_sync(w.stream[1]);
    assert_status(status, ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    for (int r = 0; r < 2; r++)
        assert_status(accel_free(w.dev[r], x[r]), ACCEL_OK);
    world_close(&w);
    unsetenv("FAKE_CUDA_FAIL");
}

static void test_failed_staging_copy_is_reported(void **state)
{
    (void)state;
    staging_failure("cuMemcpyDtoHAsync_v2:1:CUDA_ERROR_INVALID_VALUE",
                    ACCEL_ERR_COPY, "copy_to_host");
}

static void test_failed_pinning_is_reported(void **state)
{
    (void)state;
    staging_failure("cuMemHostRegister_v2:1:CUDA_ERROR_OUT_OF_MEMORY",
                    ACCEL_ERR_OUT_OF_HOST_MEMORY, "host_alloc");
}

/* A reset while a staged collective waits aborts it, and the buffer
 * pinned for the communicator goes before the device is emptied. */
static void test_reset_during_a_staged_collective(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_ref x;
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 8, &x), ACCEL_OK);
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 8, ACCEL_REDUCE_MAX),
        ACCEL_OK);
    assert_status(accel_device_reset(w.dev[0]), ACCEL_OK);
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "reset");
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 8, ACCEL_REDUCE_MAX),
        ACCEL_ERR_COMM_ABORTED);
    world_close(&w);
}

int main(void)
{
    under_valgrind = getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_collective_staged),
        cmocka_unit_test(test_large_collectives_go_in_chunks),
        cmocka_unit_test(test_free_during_a_staged_collective_is_deferred),
        cmocka_unit_test(test_failed_staging_copy_is_reported),
        cmocka_unit_test(test_failed_pinning_is_reported),
        cmocka_unit_test(test_reset_during_a_staged_collective),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
