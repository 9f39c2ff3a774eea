/*
 * Collectives through the public API (host/comm*.c) with the `host`
 * provider in loopback over null devices: every collective and element
 * type against a serial reference for 1, 2, 3, 4 and 8 ranks, stream
 * ordering, the checks of every argument, abort, timeout, reset and close
 * during a collective, relocation while one is in flight, provider
 * discovery and its refusals, bootstraps between processes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/comm.h>

#include "support.h"

#define MAX_RANKS 8
#define MAX_COUNT 1000u

static bool under_valgrind;

/* ---- a job of ranks as threads ---- */

struct world {
    accel_host *host;
    int n;
    accel_device *dev[MAX_RANKS];
    accel_stream *stream[MAX_RANKS];
    accel_comm *comm[MAX_RANKS];
};

/* The variables every test runs with: null devices, the host provider. */
static void env_set(void)
{
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH ":" COMM_HOST_PLUGIN_PATH, 1);
    setenv("ACCEL_BACKEND", "null", 1);
    setenv("ACCEL_NULL_DEVICES", "8", 1);
    setenv("ACCEL_COMM", "host", 1);
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
    unsetenv("ACCEL_COMM_RENDEZVOUS");
    unsetenv("ACCEL_RANK");
    unsetenv("ACCEL_SIZE");
}

static void world_devices(struct world *w, int n)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    assert_status(accel_host_create(NULL, &w->host), ACCEL_OK);
    for (int r = 0; r < n; r++) {
        assert_status(accel_device_open(w->host, "null", (uint32_t)r, &w->dev[r]),
                      ACCEL_OK);
        assert_status(accel_stream_create(w->dev[r], &w->stream[r]), ACCEL_OK);
    }
}

static void world_open(struct world *w, int n)
{
    world_devices(w, n);
    assert_status(accel_comm_create_local(w->dev, n, w->comm), ACCEL_OK);
    for (int r = 0; r < n; r++) {
        assert_int_equal(accel_comm_rank(w->comm[r]), r);
        assert_int_equal(accel_comm_size(w->comm[r]), n);
        assert_ptr_equal(accel_comm_device(w->comm[r]), w->dev[r]);
        assert_string_equal(accel_comm_provider_name(w->comm[r]), "host");
    }
}

static void world_close(struct world *w)
{
    for (int r = 0; r < w->n; r++)
        accel_comm_destroy(w->comm[r]);
    for (int r = 0; r < w->n; r++) {
        if (w->stream[r] != NULL)
            accel_stream_destroy(w->stream[r]);
        if (w->dev[r] != NULL)
            accel_device_close(w->dev[r]);
    }
    accel_host_destroy(w->host);
}

/* ---- element values, as doubles: small integers, exact in every type ---- */

static uint16_t f16_from(double v)
{
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    if ((bits & 0x7fffffffu) == 0)
        return sign;
    int exponent = (int)((bits >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (uint16_t)(exponent << 10) |
                      (uint16_t)((bits >> 13) & 0x3ffu));
}

static double f16_to(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t bits = sign;
    if ((h & 0x7fffu) != 0)
        bits |= ((uint32_t)(((h >> 10) & 0x1f) - 15 + 127) << 23) |
                ((uint32_t)(h & 0x3ffu) << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void put(accel_elem_type type, void *base, size_t i, double v)
{
    uint8_t *p = (uint8_t *)base + i * accel_elem_size(type);
    float f = (float)v;
    uint32_t fbits;
    memcpy(&fbits, &f, sizeof fbits);
    switch (type) {
    case ACCEL_F16: {
        uint16_t h = f16_from(v);
        memcpy(p, &h, 2);
        break;
    }
    case ACCEL_BF16: {
        uint16_t h = (uint16_t)(fbits >> 16);
        memcpy(p, &h, 2);
        break;
    }
    case ACCEL_F32:
        memcpy(p, &f, 4);
        break;
    case ACCEL_F64:
        memcpy(p, &v, 8);
        break;
    case ACCEL_I8: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case ACCEL_I16: {
        int16_t x = (int16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case ACCEL_I32: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case ACCEL_I64: {
        int64_t x = (int64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    case ACCEL_BYTE:
    case ACCEL_U8: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case ACCEL_U16: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case ACCEL_U32: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case ACCEL_U64: {
        uint64_t x = (uint64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    default:
        fail();
    }
}

static double get(accel_elem_type type, const void *base, size_t i)
{
    const uint8_t *p = (const uint8_t *)base + i * accel_elem_size(type);
    switch (type) {
    case ACCEL_F16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return f16_to(h);
    }
    case ACCEL_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case ACCEL_F32: {
        float x;
        memcpy(&x, p, 4);
        return x;
    }
    case ACCEL_F64: {
        double x;
        memcpy(&x, p, 8);
        return x;
    }
    case ACCEL_I8: {
        int8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    case ACCEL_I16: {
        int16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    case ACCEL_I32: {
        int32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    case ACCEL_I64: {
        int64_t x;
        memcpy(&x, p, 8);
        return (double)x;
    }
    case ACCEL_BYTE:
    case ACCEL_U8: {
        uint8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    case ACCEL_U16: {
        uint16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    case ACCEL_U32: {
        uint32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    case ACCEL_U64: {
        uint64_t x;
        memcpy(&x, p, 8);
        return (double)x;
    }
    default:
        fail();
    }
    return 0;
}

static bool is_signed(accel_elem_type type)
{
    return type == ACCEL_F16 || type == ACCEL_BF16 || type == ACCEL_F32 ||
           type == ACCEL_F64 || type == ACCEL_I8 || type == ACCEL_I16 ||
           type == ACCEL_I32 || type == ACCEL_I64;
}

/* Rank r's element i: products stay small (at most two factors of 2). */
static double value(accel_elem_type type, accel_reduce_op op, int r, size_t i)
{
    if (op == ACCEL_REDUCE_PROD)
        return (i + (size_t)r) % 5 == 0 ? 2 : 1;
    double v = (double)((i * 7 + (size_t)r * 3) % 5);
    return is_signed(type) ? v - 2 : v;
}

static double reduce2(accel_reduce_op op, double a, double b)
{
    switch (op) {
    case ACCEL_REDUCE_SUM:
        return a + b;
    case ACCEL_REDUCE_PROD:
        return a * b;
    case ACCEL_REDUCE_MIN:
        return a < b ? a : b;
    default:
        return a > b ? a : b;
    }
}

/* ---- one collective on every rank, checked against a serial reference ---- */

struct buffers {
    accel_elem_type type;
    accel_ref send[MAX_RANKS], recv[MAX_RANKS];
    void *in[MAX_RANKS], *out[MAX_RANKS];
};

static void buffers_make(struct world *w, struct buffers *b, accel_elem_type type)
{
    b->type = type;
    size_t room = MAX_COUNT * (size_t)w->n;
    for (int r = 0; r < w->n; r++) {
        assert_status(accel_alloc(w->dev[r], type, room, &b->send[r]), ACCEL_OK);
        assert_status(accel_alloc(w->dev[r], type, room, &b->recv[r]), ACCEL_OK);
        b->in[r] = calloc(room, accel_elem_size(type));
        b->out[r] = calloc(room, accel_elem_size(type));
        assert_non_null(b->in[r]);
        assert_non_null(b->out[r]);
    }
}

static void buffers_free(struct world *w, struct buffers *b)
{
    for (int r = 0; r < w->n; r++) {
        assert_status(accel_free(w->dev[r], b->send[r]), ACCEL_OK);
        assert_status(accel_free(w->dev[r], b->recv[r]), ACCEL_OK);
        free(b->in[r]);
        free(b->out[r]);
    }
}

static void enqueue(struct world *w, struct buffers *b, accel_comm_op_kind kind,
                    accel_reduce_op op, uint64_t count, int root, int r)
{
    accel_comm *c = w->comm[r];
    accel_stream *s = w->stream[r];
    int next = (r + 1) % w->n, prev = (r + w->n - 1) % w->n;
    switch (kind) {
    case ACCEL_COMM_ALLREDUCE:
        assert_status(accel_allreduce(c, s, b->send[r], b->recv[r], count, op),
                      ACCEL_OK);
        break;
    case ACCEL_COMM_BROADCAST:
        assert_status(accel_broadcast(c, s, b->send[r], b->recv[r], count, root),
                      ACCEL_OK);
        break;
    case ACCEL_COMM_REDUCE:
        assert_status(accel_reduce(c, s, b->send[r], b->recv[r], count, op, root),
                      ACCEL_OK);
        break;
    case ACCEL_COMM_ALLGATHER:
        assert_status(accel_allgather(c, s, b->send[r], b->recv[r], count),
                      ACCEL_OK);
        break;
    case ACCEL_COMM_REDUCE_SCATTER:
        assert_status(
            accel_reduce_scatter(c, s, b->send[r], b->recv[r], count, op),
            ACCEL_OK);
        break;
    case ACCEL_COMM_SEND:
        /* A ring; even ranks send first, odd ones receive first. */
        if (r % 2 == 0)
            assert_status(accel_send(c, s, b->send[r], count, next), ACCEL_OK);
        assert_status(accel_recv(c, s, b->recv[r], count, prev), ACCEL_OK);
        if (r % 2 != 0)
            assert_status(accel_send(c, s, b->send[r], count, next), ACCEL_OK);
        break;
    default:
        assert_status(accel_comm_barrier(c, s), ACCEL_OK);
        break;
    }
}

/* What rank r's recv holds at element i afterwards. */
static double expected(const struct world *w, const struct buffers *b,
                       accel_comm_op_kind kind, accel_reduce_op op,
                       uint64_t count, int root, int r, size_t i)
{
    accel_elem_type t = b->type;
    double acc;
    switch (kind) {
    case ACCEL_COMM_ALLREDUCE:
    case ACCEL_COMM_REDUCE:
        if (kind == ACCEL_COMM_REDUCE && r != root)
            return 1; /* untouched: the recv was filled with ones */
        acc = get(t, b->in[0], i);
        for (int q = 1; q < w->n; q++)
            acc = reduce2(op, acc, get(t, b->in[q], i));
        return acc;
    case ACCEL_COMM_BROADCAST:
        return get(t, b->in[root], i);
    case ACCEL_COMM_ALLGATHER:
        return get(t, b->in[i / count], i % count);
    case ACCEL_COMM_REDUCE_SCATTER:
        acc = get(t, b->in[0], (size_t)r * count + i);
        for (int q = 1; q < w->n; q++)
            acc = reduce2(op, acc, get(t, b->in[q], (size_t)r * count + i));
        return acc;
    case ACCEL_COMM_SEND:
        return get(t, b->in[(r + w->n - 1) % w->n], i);
    default:
        return 1;
    }
}

static size_t recv_count(const struct world *w, accel_comm_op_kind kind,
                         uint64_t count)
{
    if (kind == ACCEL_COMM_ALLGATHER)
        return (size_t)count * (size_t)w->n;
    return kind == ACCEL_COMM_BARRIER ? 0 : (size_t)count;
}

/*
 * Copy each rank's input in, run the collective, copy the result out, all
 * enqueued on the one stream before a single sync: the copies before and
 * after see and take the collective's result in stream order.
 */
static void run_case(struct world *w, struct buffers *b,
                     accel_comm_op_kind kind, accel_reduce_op op, uint64_t count)
{
    size_t element = accel_elem_size(b->type);
    size_t sent = kind == ACCEL_COMM_REDUCE_SCATTER
                      ? (size_t)count * (size_t)w->n
                      : (size_t)count;
    size_t got = recv_count(w, kind, count);
    int root = w->n - 1;
    for (int r = 0; r < w->n; r++) {
        for (size_t i = 0; i < sent; i++)
            put(b->type, b->in[r], i, value(b->type, op, r, i));
        for (size_t i = 0; i < got; i++)
            put(b->type, b->out[r], i, 1);
        if (sent)
            assert_status(accel_copy_to_device(w->stream[r], b->send[r], 0,
                                               b->in[r], sent * element),
                          ACCEL_OK);
        if (got)
            assert_status(accel_copy_to_device(w->stream[r], b->recv[r], 0,
                                               b->out[r], got * element),
                          ACCEL_OK);
    }
    for (int r = 0; r < w->n; r++)
        enqueue(w, b, kind, op, count, root, r);
    for (int r = 0; r < w->n; r++) {
        if (got)
            assert_status(accel_copy_to_host(w->stream[r], b->out[r],
                                             b->recv[r], 0, got * element),
                          ACCEL_OK);
    }
    for (int r = 0; r < w->n; r++)
        assert_status(accel_stream_sync(w->stream[r]), ACCEL_OK);
    for (int r = 0; r < w->n; r++) {
        for (size_t i = 0; i < got; i++) {
            double want = expected(w, b, kind, op, count, root, r, i);
            double have = get(b->type, b->out[r], i);
            if (want != have)
                fail_msg("%d ranks, %s, kind %d op %d count %llu: rank %d "
                         "element %zu is %g, expected %g",
                         w->n, accel_elem_type_name(b->type), (int)kind,
                         (int)op, (unsigned long long)count, r, i, have, want);
        }
    }
}

static void every_collective(int n)
{
    env_set();
    struct world w;
    world_open(&w, n);
    static const uint64_t counts[] = {1, 7, MAX_COUNT};
    size_t first_count = under_valgrind ? 1 : 0;
    for (int t = 0; t < ACCEL_ELEM_TYPE_COUNT; t++) {
        if (under_valgrind && t % 3 != 0)
            continue;
        struct buffers b;
        buffers_make(&w, &b, (accel_elem_type)t);
        for (size_t c = first_count; c < 3; c++) {
            for (int op = 0; op < ACCEL_REDUCE_OP_COUNT; op++) {
                run_case(&w, &b, ACCEL_COMM_ALLREDUCE, op, counts[c]);
                run_case(&w, &b, ACCEL_COMM_REDUCE, op, counts[c]);
                run_case(&w, &b, ACCEL_COMM_REDUCE_SCATTER, op, counts[c]);
            }
            run_case(&w, &b, ACCEL_COMM_BROADCAST, 0, counts[c]);
            run_case(&w, &b, ACCEL_COMM_ALLGATHER, 0, counts[c]);
            if (n > 1)
                run_case(&w, &b, ACCEL_COMM_SEND, 0, counts[c]);
            run_case(&w, &b, ACCEL_COMM_BARRIER, 0, counts[c]);
        }
        buffers_free(&w, &b);
    }
    world_close(&w);
}

static void test_every_collective_1_rank(void **state)
{
    (void)state;
    every_collective(1);
}

static void test_every_collective_2_ranks(void **state)
{
    (void)state;
    every_collective(2);
}

static void test_every_collective_3_ranks(void **state)
{
    (void)state;
    every_collective(3);
}

static void test_every_collective_4_ranks(void **state)
{
    (void)state;
    every_collective(4);
}

static void test_every_collective_8_ranks(void **state)
{
    (void)state;
    every_collective(8);
}

/* In place (send == recv), and a count of 0, which moves nothing. */
static void test_in_place_and_zero_count(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 3);
    accel_ref x[3];
    int32_t host[3][5];
    for (int r = 0; r < 3; r++) {
        assert_status(accel_alloc(w.dev[r], ACCEL_I32, 5, &x[r]), ACCEL_OK);
        for (int i = 0; i < 5; i++)
            host[r][i] = r * 10 + i;
        assert_status(
            accel_copy_to_device(w.stream[r], x[r], 0, host[r], sizeof host[r]),
            ACCEL_OK);
        assert_status(accel_allreduce(w.comm[r], w.stream[r], x[r], x[r], 0,
                                      ACCEL_REDUCE_SUM),
                      ACCEL_OK);
    }
    for (int r = 0; r < 3; r++)
        assert_status(accel_allreduce(w.comm[r], w.stream[r], x[r], x[r], 5,
                                      ACCEL_REDUCE_SUM),
                      ACCEL_OK);
    for (int r = 0; r < 3; r++) {
        assert_status(
            accel_copy_to_host(w.stream[r], host[r], x[r], 0, sizeof host[r]),
            ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
        for (int i = 0; i < 5; i++)
            assert_int_equal(host[r][i], 30 + 3 * i);
        assert_status(accel_free(w.dev[r], x[r]), ACCEL_OK);
    }
    world_close(&w);
}

/* One 64 MiB all-reduce (1 MiB under valgrind). */
static void test_large_allreduce(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    uint64_t count = (under_valgrind ? 1u << 20 : 64u << 20) / sizeof(float);
    float *host = malloc(count * sizeof *host);
    assert_non_null(host);
    accel_ref x[2];
    for (int r = 0; r < 2; r++) {
        for (uint64_t i = 0; i < count; i++)
            host[i] = (float)((i % 1000) + (uint64_t)r);
        assert_status(accel_alloc(w.dev[r], ACCEL_F32, count, &x[r]), ACCEL_OK);
        assert_status(accel_copy_to_device(w.stream[r], x[r], 0, host,
                                           count * sizeof *host),
                      ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
    }
    for (int r = 0; r < 2; r++)
        assert_status(accel_allreduce(w.comm[r], w.stream[r], x[r], x[r], count,
                                      ACCEL_REDUCE_SUM),
                      ACCEL_OK);
    for (int r = 0; r < 2; r++) {
        assert_status(accel_copy_to_host(w.stream[r], host, x[r], 0,
                                         count * sizeof *host),
                      ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
        for (uint64_t i = 0; i < count; i += 4099)
            assert_true(host[i] == (float)(2 * (i % 1000) + 1));
        assert_true(host[count - 1] == (float)(2 * ((count - 1) % 1000) + 1));
        assert_status(accel_free(w.dev[r], x[r]), ACCEL_OK);
    }
    free(host);
    world_close(&w);
}

/* ---- arguments ---- */

static void test_bad_arguments_are_refused_with_their_codes(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_comm *c = w.comm[0];
    accel_stream *s = w.stream[0];
    accel_ref a, b, small, other, wrong_type, freed;
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 16, &a), ACCEL_OK);
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 16, &b), ACCEL_OK);
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 4, &small), ACCEL_OK);
    assert_status(accel_alloc(w.dev[1], ACCEL_F32, 16, &other), ACCEL_OK);
    assert_status(accel_alloc(w.dev[0], ACCEL_I32, 16, &wrong_type), ACCEL_OK);
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 16, &freed), ACCEL_OK);
    assert_status(accel_free(w.dev[0], freed), ACCEL_OK);
    accel_ref zero;
    memset(&zero, 0, sizeof zero);

    assert_status(accel_allreduce(NULL, s, a, b, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_allreduce(c, NULL, a, b, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_allreduce(c, w.stream[1], a, b, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_allreduce(c, s, freed, b, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_allreduce(c, s, zero, b, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_allreduce(c, s, a, other, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_allreduce(c, s, a, wrong_type, 16, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_allreduce(c, s, a, b, 17, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "needs 17");
    assert_status(accel_allreduce(c, s, a, b, 16, ACCEL_REDUCE_OP_COUNT),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* The gathered side holds size * count. */
    assert_status(accel_allgather(c, s, small, small, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_allgather(c, s, small, b, 4), ACCEL_OK);
    assert_status(accel_reduce_scatter(c, s, small, b, 4, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_broadcast(c, s, a, b, 16, 2), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_reduce(c, s, a, b, 16, ACCEL_REDUCE_SUM, -1),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_send(c, s, a, 16, 0), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_recv(c, s, a, 16, 5), ACCEL_ERR_INVALID_ARGUMENT);
    /* Rank 1 completes the one accepted allgather. */
    accel_ref b1, s1;
    assert_status(accel_alloc(w.dev[1], ACCEL_F32, 4, &s1), ACCEL_OK);
    assert_status(accel_alloc(w.dev[1], ACCEL_F32, 8, &b1), ACCEL_OK);
    assert_status(accel_allgather(w.comm[1], w.stream[1], s1, b1, 4), ACCEL_OK);
    assert_status(accel_stream_sync(s), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[1]), ACCEL_OK);
    /* A reset makes every ref before it stale. */
    assert_status(accel_device_reset(w.dev[1]), ACCEL_OK);
    assert_status(accel_ref_check(w.dev[1], b1), ACCEL_ERR_STALE_REF);
    assert_status(accel_comm_status(w.comm[1]), ACCEL_ERR_COMM_ABORTED);
    assert_status(
        accel_allreduce(w.comm[1], w.stream[1], b1, b1, 1, ACCEL_REDUCE_SUM),
        ACCEL_ERR_COMM_ABORTED);
    for (accel_ref *r = (accel_ref[]){a, b, small, wrong_type}, *e = r + 4;
         r < e; r++)
        assert_status(accel_free(w.dev[0], *r), ACCEL_OK);
    world_close(&w);
}

static void test_stale_ref_is_refused(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_devices(&w, 1);
    accel_ref a;
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 16, &a), ACCEL_OK);
    assert_status(accel_device_reset(w.dev[0]), ACCEL_OK);
    assert_status(accel_comm_create_local(w.dev, 1, w.comm), ACCEL_OK);
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], a, a, 16, ACCEL_REDUCE_SUM),
        ACCEL_ERR_STALE_REF);
    world_close(&w);
}

/* ---- failures while a collective is in flight ---- */

struct later {
    accel_comm *comm;
    unsigned ms;
};

static void sleep_ms(unsigned ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static void *abort_later(void *arg)
{
    struct later *l = arg;
    sleep_ms(l->ms);
    accel_comm_abort(l->comm);
    return NULL;
}

static void test_abort_from_another_thread_fails_the_collective(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_ref x;
    assert_status(accel_alloc(w.dev[0], ACCEL_F32, 8, &x), ACCEL_OK);
    /* Rank 1 never joins: only the abort ends the wait. */
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 8, ACCEL_REDUCE_SUM),
        ACCEL_OK);
    struct later l = {w.comm[0], 50};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, abort_later, &l), 0);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "accel_comm_abort");
    pthread_join(thread, NULL);
    /* The error was reported once; later calls fail at once. */
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "accel_comm_abort");
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 8, ACCEL_REDUCE_SUM),
        ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_comm_abort(w.comm[0]), ACCEL_OK); /* idempotent */
    assert_status(accel_free(w.dev[0], x), ACCEL_OK);
    world_close(&w);
}

static void test_rank_that_never_calls_times_out(void **state)
{
    (void)state;
    env_set();
    setenv("ACCEL_COMM_TIMEOUT_MS", "200", 1);
    struct world w;
    world_open(&w, 2);
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
    accel_ref x;
    assert_status(accel_alloc(w.dev[0], ACCEL_I64, 8, &x), ACCEL_OK);
    assert_status(accel_broadcast(w.comm[0], w.stream[0], x, x, 8, 1), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "ACCEL_COMM_TIMEOUT_MS");
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_comm_barrier(w.comm[0], w.stream[0]),
                  ACCEL_ERR_COMM_ABORTED);
    /* The other rank's communicator is untouched by rank 0's timeout. */
    assert_status(accel_free(w.dev[0], x), ACCEL_OK);
    world_close(&w);
}

static void test_reset_during_a_collective_aborts_it(void **state)
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
    /* The default timeout is minutes: the reset must not wait for it. */
    assert_status(accel_device_reset(w.dev[0]), ACCEL_OK);
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "reset");
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 8, ACCEL_REDUCE_MAX),
        ACCEL_ERR_COMM_ABORTED);
    world_close(&w);
}

static void test_device_close_with_a_live_communicator(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_ref x;
    assert_status(accel_alloc(w.dev[1], ACCEL_F32, 8, &x), ACCEL_OK);
    assert_status(
        accel_allreduce(w.comm[1], w.stream[1], x, x, 8, ACCEL_REDUCE_SUM),
        ACCEL_OK);
    /* Closing aborts and destroys the device's communicator (its handle
     * is gone with the device) and does not wait for rank 0. */
    accel_device_close(w.dev[1]);
    w.stream[1] = NULL;
    w.dev[1] = NULL;
    w.comm[1] = NULL;
    /* The provider tells rank 0 that its peer is gone. */
    assert_status(accel_comm_status(w.comm[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "rank 1");
    world_close(&w);
}

struct joiner {
    struct world *w;
    struct buffers *b;
    unsigned ms;
};

static void *join_later(void *arg)
{
    struct joiner *j = arg;
    sleep_ms(j->ms);
    assert_status(accel_allreduce(j->w->comm[1], j->w->stream[1], j->b->send[1],
                                  j->b->send[1], 64, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    return NULL;
}

#define SLICE_BYTES 4096u
#define SLICES_PER_PAGE 512u

/*
 * A page kept by a collective in flight is not moved by a compaction
 * meanwhile (its slice is pinned), the result lands where the ref is, and
 * once the collective is over the page can move again.
 */
static void test_compaction_while_a_collective_is_in_flight(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    accel_pool_policy manual = {.struct_size = sizeof manual,
                                .automatic = false,
                                .outdated_percent = 25};
    assert_status(accel_device_set_pool_policy(w.dev[0], &manual), ACCEL_OK);
    enum { N = 2 * SLICES_PER_PAGE };
    accel_ref *refs = calloc(N, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < N; i++)
        assert_status(accel_alloc(w.dev[0], ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
    /* The second page keeps one slice, the collective's. */
    struct buffers b = {.type = ACCEL_BYTE};
    b.send[0] = refs[SLICES_PER_PAGE];
    uint8_t in[64], out[64];
    memset(in, 3, sizeof in);
    assert_status(accel_copy_to_device(w.stream[0], b.send[0], 0, in, 64),
                  ACCEL_OK);
    assert_status(accel_alloc(w.dev[1], ACCEL_BYTE, 64, &b.send[1]), ACCEL_OK);
    memset(in, 4, sizeof in);
    assert_status(accel_copy_to_device(w.stream[1], b.send[1], 0, in, 64),
                  ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[1]), ACCEL_OK);
    for (uint32_t i = SLICES_PER_PAGE + 1; i < N; i++)
        assert_status(accel_free(w.dev[0], refs[i]), ACCEL_OK);
    for (uint32_t i = 0; i < 10; i++)
        assert_status(accel_free(w.dev[0], refs[i]), ACCEL_OK);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], b.send[0], b.send[0],
                                  64, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    struct joiner j = {&w, &b, 100};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, join_later, &j), 0);
    uint64_t moves = support_memory_stats(w.dev[0]).relocations;
    uint32_t pages = 0;
    assert_status(accel_device_compact(w.dev[0], &pages), ACCEL_OK);
    assert_int_equal(pages, 0);
    assert_int_equal(support_memory_stats(w.dev[0]).relocations, moves);
    pthread_join(thread, NULL);
    assert_status(accel_copy_to_host(w.stream[0], out, b.send[0], 0, 64),
                  ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[1]), ACCEL_OK);
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], 7);
    /* Over: the page may move now, contents intact. */
    assert_status(accel_device_sync(w.dev[0]), ACCEL_OK);
    assert_status(accel_device_compact(w.dev[0], &pages), ACCEL_OK);
    assert_int_equal(pages, 1);
    assert_status(accel_copy_to_host(w.stream[0], out, b.send[0], 0, 64),
                  ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], 7);
    free(refs);
    world_close(&w);
}

/* A ref freed while its collective waits is freed after it, not under it. */
static void test_free_during_a_collective_waits_for_it(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 2);
    struct buffers b = {.type = ACCEL_U8};
    for (int r = 0; r < 2; r++)
        assert_status(accel_alloc(w.dev[r], ACCEL_U8, 64, &b.send[r]), ACCEL_OK);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], b.send[0], b.send[0],
                                  64, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(accel_free(w.dev[0], b.send[0]), ACCEL_OK);
    assert_true(support_memory_stats(w.dev[0]).pending_frees >= 1);
    struct joiner j = {&w, &b, 20};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, join_later, &j), 0);
    pthread_join(thread, NULL);
    assert_status(accel_device_sync(w.dev[0]), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[1]), ACCEL_OK);
    assert_int_equal(support_memory_stats(w.dev[0]).pending_frees, 0);
    world_close(&w);
}

/* ---- split ---- */

struct splitter {
    accel_comm *comm;
    accel_comm *out;
    accel_status status;
};

static void *split_main(void *arg)
{
    struct splitter *s = arg;
    int rank = accel_comm_rank(s->comm);
    s->status = accel_comm_split(s->comm, rank % 2, -rank, &s->out);
    return NULL;
}

static void test_split_by_parity(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_open(&w, 4);
    struct splitter s[4];
    pthread_t threads[4];
    for (int r = 0; r < 4; r++) {
        s[r] = (struct splitter){.comm = w.comm[r]};
        assert_int_equal(pthread_create(&threads[r], NULL, split_main, &s[r]), 0);
    }
    for (int r = 0; r < 4; r++)
        pthread_join(threads[r], NULL);
    accel_ref x[4];
    for (int r = 0; r < 4; r++) {
        assert_status(s[r].status, ACCEL_OK);
        assert_int_equal(accel_comm_size(s[r].out), 2);
        /* Keys are -rank: the higher rank comes first. */
        assert_int_equal(accel_comm_rank(s[r].out), r < 2 ? 1 : 0);
        int32_t v = r + 1;
        assert_status(accel_alloc(w.dev[r], ACCEL_I32, 1, &x[r]), ACCEL_OK);
        assert_status(accel_copy_to_device(w.stream[r], x[r], 0, &v, 4),
                      ACCEL_OK);
        assert_status(accel_allreduce(s[r].out, w.stream[r], x[r], x[r], 1,
                                      ACCEL_REDUCE_SUM),
                      ACCEL_OK);
    }
    for (int r = 0; r < 4; r++) {
        int32_t v = 0;
        assert_status(accel_copy_to_host(w.stream[r], &v, x[r], 0, 4), ACCEL_OK);
        assert_status(accel_stream_sync(w.stream[r]), ACCEL_OK);
        assert_int_equal(v, r % 2 == 0 ? 1 + 3 : 2 + 4);
        accel_comm_destroy(s[r].out);
    }
    world_close(&w);
}

/* ---- providers ---- */

static void test_stream_native_of_the_null_plugin(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_devices(&w, 2);
    struct accel_native_handles native = {.struct_size = sizeof native};
    assert_status(accel_stream_native(w.stream[1], &native), ACCEL_OK);
    assert_int_equal(native.kind, ACCEL_NATIVE_CPU);
    assert_int_equal(native.device_ordinal, 1);
    assert_non_null(native.stream);
    native.struct_size = 4;
    assert_status(accel_stream_native(w.stream[1], &native),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_stream_native(NULL, &native), ACCEL_ERR_INVALID_ARGUMENT);
    world_close(&w);
}

static void test_unknown_provider_is_not_found_with_reasons(void **state)
{
    (void)state;
    env_set();
    setenv("ACCEL_COMM", "nosuch", 1);
    struct world w;
    world_devices(&w, 2);
    assert_status(accel_comm_create_local(w.dev, 2, w.comm), ACCEL_ERR_NOT_FOUND);
    assert_contains(accel_last_error(), "nosuch: no file accel-comm-nosuch.so");
    assert_null(w.comm[0]);
    const accel_comm_provider_info *list = NULL;
    size_t count = 0;
    assert_status(accel_host_comm_providers(w.host, &list, &count), ACCEL_OK);
    assert_int_equal(count, 1);
    assert_string_equal(list[0].name, "nosuch");
    assert_int_equal(list[0].open, 0);
    assert_null(list[0].path);
    world_close(&w);
    /* A malformed list is an argument error. */
    setenv("ACCEL_COMM", "host,Bad-Name", 1);
    world_devices(&w, 1);
    assert_status(accel_comm_create_local(w.dev, 1, w.comm),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "Bad-Name");
    world_close(&w);
}

static void test_size_one_create_needs_no_bootstrap(void **state)
{
    (void)state;
    env_set();
    struct world w;
    world_devices(&w, 1);
    assert_status(accel_comm_create(w.dev[0], &w.comm[0]), ACCEL_OK);
    assert_int_equal(accel_comm_size(w.comm[0]), 1);
    assert_int_equal(accel_comm_rank(w.comm[0]), 0);
    accel_ref x;
    assert_status(accel_alloc(w.dev[0], ACCEL_F64, 3, &x), ACCEL_OK);
    assert_status(
        accel_allreduce(w.comm[0], w.stream[0], x, x, 3, ACCEL_REDUCE_SUM),
        ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    world_close(&w);
    /* A rank past the size is refused, naming the variables. */
    setenv("ACCEL_RANK", "3", 1);
    setenv("ACCEL_SIZE", "2", 1);
    world_devices(&w, 1);
    assert_status(accel_comm_create(w.dev[0], &w.comm[0]),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "ACCEL_RANK");
    world_close(&w);
}

struct refusal {
    const char *variant;
    const char *reason;
};

static void test_malformed_providers_are_refused_with_their_reason(void **state)
{
    (void)state;
    static const struct refusal cases[] = {
        {"comm-bad-name", "the table's name is not 'fixture'"},
        {"comm-null-entry", "required entry 'submit' is NULL"},
        {"comm-small", "struct_size 16 is less than"},
        {"comm-major", "ABI major 2"},
        {"comm-open-fails", "libfixture.so.1 is not installed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        env_set();
        char *dir = support_make_temp_dir();
        char from[1024];
        snprintf(from, sizeof from, "%s/fixture-%s.so", FIXTURE_DIR,
                 cases[i].variant);
        support_copy_file(from, dir, "accel-comm-fixture.so");
        char path[2048];
        snprintf(path, sizeof path, "%s:%s:%s", NULL_PLUGIN_PATH, dir,
                 COMM_HOST_PLUGIN_PATH);
        setenv("ACCEL_PLUGIN_PATH", path, 1);
        setenv("ACCEL_COMM", "fixture,host", 1);
        struct world w;
        world_open(&w, 2); /* host serves, after the fixture's refusal */
        const accel_comm_provider_info *list = NULL;
        size_t count = 0;
        assert_status(accel_host_comm_providers(w.host, &list, &count), ACCEL_OK);
        assert_int_equal(count, 2);
        assert_int_equal(list[0].open, 0);
        assert_non_null(list[0].path);
        assert_contains(list[0].reason, cases[i].reason);
        assert_int_equal(list[1].open, 1);
        assert_null(list[1].reason);
        world_close(&w);
        support_remove_dir(dir);
    }
}

/* ---- bootstraps between processes ---- */

/* One rank in a child process: its own host, a 2-rank all-reduce. */
static int child_rank(int rank)
{
    char text[8];
    snprintf(text, sizeof text, "%d", rank);
    setenv("ACCEL_RANK", text, 1);
    setenv("ACCEL_SIZE", "2", 1);
    accel_host *host = NULL;
    accel_device *device = NULL;
    accel_stream *stream = NULL;
    accel_comm *comm = NULL;
    accel_ref x;
    int32_t v = rank + 5;
    if (accel_host_create(NULL, &host) != ACCEL_OK ||
        accel_device_open(host, "null", 0, &device) != ACCEL_OK ||
        accel_stream_create(device, &stream) != ACCEL_OK)
        return 2;
    if (accel_comm_create(device, &comm) != ACCEL_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, accel_last_error());
        return 3;
    }
    if (accel_alloc(device, ACCEL_I32, 1, &x) != ACCEL_OK ||
        accel_copy_to_device(stream, x, 0, &v, 4) != ACCEL_OK ||
        accel_allreduce(comm, stream, x, x, 1, ACCEL_REDUCE_SUM) != ACCEL_OK ||
        accel_copy_to_host(stream, &v, x, 0, 4) != ACCEL_OK ||
        accel_stream_sync(stream) != ACCEL_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, accel_last_error());
        return 4;
    }
    accel_comm_destroy(comm);
    accel_host_destroy(host);
    return v == 5 + 6 ? 0 : 5;
}

static void two_processes(const char *rendezvous)
{
    env_set();
    setenv("ACCEL_COMM_RENDEZVOUS", rendezvous, 1);
    setenv("ACCEL_COMM_TIMEOUT_MS", "20000", 1);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        assert_true(pids[r] >= 0);
        if (pids[r] == 0)
            _exit(child_rank(r));
    }
    for (int r = 0; r < 2; r++) {
        int status = 0;
        assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    unsetenv("ACCEL_COMM_RENDEZVOUS");
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
}

static void test_file_rendezvous_between_processes(void **state)
{
    (void)state;
    char *dir = support_make_temp_dir();
    chmod(dir, 0700);
    char spec[1024];
    snprintf(spec, sizeof spec, "file:%s", dir);
    two_processes(spec);
    support_remove_dir(dir);
}

static void test_file_rendezvous_refuses_a_shared_directory(void **state)
{
    (void)state;
    env_set();
    setenv("ACCEL_RANK", "0", 1);
    setenv("ACCEL_SIZE", "2", 1);
    char *dir = support_make_temp_dir();
    chmod(dir, 0777);
    char spec[1024];
    snprintf(spec, sizeof spec, "file:%s", dir);
    setenv("ACCEL_COMM_RENDEZVOUS", spec, 1);
    struct world w;
    world_devices(&w, 1);
    assert_status(accel_comm_create(w.dev[0], &w.comm[0]),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "writable by no other");
    world_close(&w);
    support_remove_dir(dir);
}

static void test_tcp_rendezvous_between_processes(void **state)
{
    (void)state;
    char spec[64];
    /* A port of this run's own, so parallel runs do not meet. */
    snprintf(spec, sizeof spec, "tcp:127.0.0.1:%d",
             20000 + (int)(getpid() % 20000));
    two_processes(spec);
}

int main(void)
{
    under_valgrind = getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL;
    if (getenv("COMM_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("COMM_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_collective_1_rank),
        cmocka_unit_test(test_every_collective_2_ranks),
        cmocka_unit_test(test_every_collective_3_ranks),
        cmocka_unit_test(test_every_collective_4_ranks),
        cmocka_unit_test(test_every_collective_8_ranks),
        cmocka_unit_test(test_in_place_and_zero_count),
        cmocka_unit_test(test_large_allreduce),
        cmocka_unit_test(test_bad_arguments_are_refused_with_their_codes),
        cmocka_unit_test(test_stale_ref_is_refused),
        cmocka_unit_test(test_abort_from_another_thread_fails_the_collective),
        cmocka_unit_test(test_rank_that_never_calls_times_out),
        cmocka_unit_test(test_reset_during_a_collective_aborts_it),
        cmocka_unit_test(test_device_close_with_a_live_communicator),
        cmocka_unit_test(test_compaction_while_a_collective_is_in_flight),
        cmocka_unit_test(test_free_during_a_collective_waits_for_it),
        cmocka_unit_test(test_split_by_parity),
        cmocka_unit_test(test_stream_native_of_the_null_plugin),
        cmocka_unit_test(test_unknown_provider_is_not_found_with_reasons),
        cmocka_unit_test(test_size_one_create_needs_no_bootstrap),
        cmocka_unit_test(test_malformed_providers_are_refused_with_their_reason),
        cmocka_unit_test(test_file_rendezvous_between_processes),
        cmocka_unit_test(test_file_rendezvous_refuses_a_shared_directory),
        cmocka_unit_test(test_tcp_rendezvous_between_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
