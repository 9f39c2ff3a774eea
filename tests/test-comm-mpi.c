/*
 * The mpi communication provider, through its table (accel-comm-mpi.so).
 *
 * Two ways to run:
 *  - plain (meson test comm-mpi-plain): no launcher, so plugin_open must
 *    refuse with the reason, and a named library that does not exist must
 *    be named in the refusal;
 *  - under `mpirun --oversubscribe -np 4` (tests/comm-mpi-run.sh, meson test
 *    comm-mpi): every operation on every element type and reduce op, sizes
 *    0, 1 and 1000 elements, against a serial reference each rank computes
 *    from every rank's known input; the same through the chunked path
 *    (ACCEL_MPI_CHUNK_ELEMS=7); a rank that stalls; an abort from another
 *    thread; the signature check; split; the bootstrap.
 * Every rank runs the same tests in the same order; a rank that fails an
 * assertion makes the others time out (deadline below), never hang.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <accel/comm.h>

#ifndef COMM_MPI_PLUGIN_PATH
#error "COMM_MPI_PLUGIN_PATH must name the built accel-comm-mpi.so"
#endif

/* Long enough for 4 ranks on 2 loaded cores; short enough that a failed
 * rank costs the others seconds. */
#define OP_TIMEOUT_NS (60ull * 1000000000ull)

static const struct accel_comm_v1 *table;
static char last_error[1024];

static void services_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status services_set_error(accel_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

static const char *services_getenv(const char *name)
{
    return getenv(name);
}

static const struct accel_comm_services services = {
    .struct_size = sizeof(struct accel_comm_services),
    .host_minor = ACCEL_COMM_ABI_MINOR,
    .log = services_log,
    .set_error = services_set_error,
    .getenv = services_getenv,
};

static uint64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static const struct accel_comm_v1 *load_table(void)
{
    void *dl = dlopen(COMM_MPI_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (dl == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", COMM_MPI_PLUGIN_PATH, dlerror());
        return NULL;
    }
    return dlsym(dl, ACCEL_COMM_SYMBOL);
}

/* ---- element values: every rank's input is known to every rank ---- */

static size_t elem_size(accel_elem_type type)
{
    static const size_t sizes[ACCEL_ELEM_TYPE_COUNT] = {1, 2, 2, 4, 8, 1, 2,
                                                        4, 8, 1, 2, 4, 8};
    return sizes[type];
}

static int is_signed(accel_elem_type type)
{
    return type == ACCEL_F16 || type == ACCEL_BF16 || type == ACCEL_F32 ||
           type == ACCEL_F64 || type == ACCEL_I8 || type == ACCEL_I16 ||
           type == ACCEL_I32 || type == ACCEL_I64;
}

/* Small integers, exact in every type (f16, bf16 and i8 included) through
 * sums and products of 4 ranks; negative ones for signed types. */
static double input(accel_elem_type type, accel_reduce_op op, int rank, uint64_t i)
{
    if (op == ACCEL_REDUCE_PROD)
        return (double)(1 + (rank + (int)(i % 7)) % 3);
    double v = (double)((rank * 7 + (int)(i % 11) * 3) % 11);
    return is_signed(type) ? v - 5 : v;
}

/* An f16 or bf16 of a small integer (|v| <= 256), written directly. */
static uint16_t half_of(double v, int bf16)
{
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000u : 0;
    int exponent;
    double mantissa = frexp(fabs(v), &exponent); /* [0.5, 1) */
    int bits = bf16 ? 7 : 10;
    uint32_t fraction = (uint32_t)((mantissa * 2 - 1) * (double)(1u << bits) +
                                   0.5);
    int bias = bf16 ? 127 : 15;
    return (uint16_t)(sign | (uint32_t)(exponent - 1 + bias) << bits | fraction);
}

static double half_value(uint16_t h, int bf16)
{
    int bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
    int exponent = (h & 0x7fffu) >> bits;
    if (exponent == 0)
        return 0;
    double v = ldexp(1.0 + (double)(h & ((1u << bits) - 1)) / (1u << bits),
                     exponent - bias);
    return (h & 0x8000u) ? -v : v;
}

static void put(accel_elem_type type, void *buf, uint64_t i, double v)
{
    char *at = (char *)buf + i * elem_size(type);
    switch (type) {
    case ACCEL_F16:
    case ACCEL_BF16: {
        uint16_t h = half_of(v, type == ACCEL_BF16);
        memcpy(at, &h, 2);
        break;
    }
    case ACCEL_F32:
        *(float *)at = (float)v;
        break;
    case ACCEL_F64:
        *(double *)at = v;
        break;
    case ACCEL_I8:
        *(int8_t *)at = (int8_t)v;
        break;
    case ACCEL_I16:
        *(int16_t *)at = (int16_t)v;
        break;
    case ACCEL_I32:
        *(int32_t *)at = (int32_t)v;
        break;
    case ACCEL_I64:
        *(int64_t *)at = (int64_t)v;
        break;
    case ACCEL_U16:
        *(uint16_t *)at = (uint16_t)v;
        break;
    case ACCEL_U32:
        *(uint32_t *)at = (uint32_t)v;
        break;
    case ACCEL_U64:
        *(uint64_t *)at = (uint64_t)v;
        break;
    default:
        *(uint8_t *)at = (uint8_t)v;
        break;
    }
}

static double get(accel_elem_type type, const void *buf, uint64_t i)
{
    const char *at = (const char *)buf + i * elem_size(type);
    uint16_t h;
    switch (type) {
    case ACCEL_F16:
    case ACCEL_BF16:
        memcpy(&h, at, 2);
        return half_value(h, type == ACCEL_BF16);
    case ACCEL_F32:
        return *(const float *)at;
    case ACCEL_F64:
        return *(const double *)at;
    case ACCEL_I8:
        return *(const int8_t *)at;
    case ACCEL_I16:
        return *(const int16_t *)at;
    case ACCEL_I32:
        return *(const int32_t *)at;
    case ACCEL_I64:
        return (double)*(const int64_t *)at;
    case ACCEL_U16:
        return *(const uint16_t *)at;
    case ACCEL_U32:
        return *(const uint32_t *)at;
    case ACCEL_U64:
        return (double)*(const uint64_t *)at;
    default:
        return *(const uint8_t *)at;
    }
}

/* The serial reference: element i reduced over every rank's input. */
static double reference(accel_elem_type type, accel_reduce_op op, int size,
                        uint64_t i)
{
    double r = input(type, op, 0, i);
    for (int rank = 1; rank < size; rank++) {
        double v = input(type, op, rank, i);
        if (op == ACCEL_REDUCE_SUM)
            r += v;
        else if (op == ACCEL_REDUCE_PROD)
            r *= v;
        else if (op == ACCEL_REDUCE_MIN)
            r = v < r ? v : r;
        else
            r = v > r ? v : r;
    }
    return r;
}

/* ---- the harness: a provider and a communicator per group ---- */

struct rig {
    accel_comm_provider *provider;
    accel_comm_handle *comm;
    int rank;
    int size;
};

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v != NULL ? atoi(v) : -1;
}

/* Operations made with no deadline (ACCEL_COMM_TIMEOUT_MS=0): the
 * all-reduce then takes the blocking MPI_Allreduce after a barrier. */
static bool no_deadline;

static struct accel_comm_op make_op(accel_comm_op_kind kind, accel_elem_type type,
                                    accel_reduce_op op, uint64_t count,
                                    int root, void *send, void *recv)
{
    struct accel_comm_op o = {.struct_size = sizeof o,
                              .kind = kind,
                              .type = type,
                              .reduce_op = op,
                              .count = count,
                              .root = root,
                              .memory = ACCEL_NATIVE_CPU,
                              .send = (uint64_t)(uintptr_t)send,
                              .recv = (uint64_t)(uintptr_t)recv,
                              .deadline_ns = now_ns() + OP_TIMEOUT_NS};
    if (no_deadline)
        o.deadline_ns = 0;
    return o;
}

static void rig_open(struct rig *rig)
{
    memset(rig, 0, sizeof *rig);
    accel_status status = table->plugin_open(&services, &rig->provider);
    if (status != ACCEL_OK)
        fail_msg("plugin_open: %d: %s", status, last_error);
    rig->rank = env_int("OMPI_COMM_WORLD_RANK");
    rig->size = env_int("OMPI_COMM_WORLD_SIZE");
    if (rig->rank < 0) {
        rig->rank = env_int("PMI_RANK");
        rig->size = env_int("PMI_SIZE");
    }
    struct accel_comm_init init = {.struct_size = sizeof init,
                                   .rank = rig->rank,
                                   .size = rig->size,
                                   .local_rank = rig->rank,
                                   .local_size = rig->size,
                                   .timeout_ns = OP_TIMEOUT_NS};
    status = table->comm_create(rig->provider, &init, &rig->comm);
    if (status != ACCEL_OK)
        fail_msg("comm_create: %d: %s", status, last_error);
}

static void rig_close(struct rig *rig)
{
    if (rig->comm != NULL)
        table->comm_destroy(rig->comm);
    if (rig->provider != NULL)
        table->plugin_close(rig->provider);
}

static int group_setup(void **state)
{
    struct rig *rig = calloc(1, sizeof *rig);
    rig_open(rig);
    *state = rig;
    return 0;
}

static int group_teardown(void **state)
{
    rig_close(*state);
    free(*state);
    return 0;
}

static void submit_ok(struct rig *rig, struct accel_comm_op op)
{
    accel_status status = table->submit(rig->comm, &op);
    if (status != ACCEL_OK)
        fail_msg("kind %u type %u op %u count %llu: %d: %s", op.kind, op.type,
                 op.reduce_op, (unsigned long long)op.count, status, last_error);
}

static void expect(accel_elem_type type, const void *buf, uint64_t i,
                   double want, const char *what)
{
    double got = get(type, buf, i);
    if (got != want)
        fail_msg("%s: type %d element %llu is %g, not %g", what, type,
                 (unsigned long long)i, got, want);
}

static const uint64_t sizes[] = {0, 1, 1000};

/* ---- one check per kind, for one type, op and size ---- */

static void check_allreduce(struct rig *rig, accel_elem_type t,
                            accel_reduce_op op, uint64_t n, int in_place)
{
    size_t bytes = (n + 1) * elem_size(t);
    void *send = malloc(bytes), *recv = malloc(bytes);
    for (uint64_t i = 0; i < n; i++)
        put(t, in_place ? recv : send, i, input(t, op, rig->rank, i));
    submit_ok(rig, make_op(ACCEL_COMM_ALLREDUCE, t, op, n, 0,
                           in_place ? recv : send, recv));
    for (uint64_t i = 0; i < n; i++)
        expect(t, recv, i, reference(t, op, rig->size, i), "allreduce");
    free(send);
    free(recv);
}

static void check_reduce(struct rig *rig, accel_elem_type t, accel_reduce_op op,
                         uint64_t n, int root, int in_place)
{
    size_t bytes = (n + 1) * elem_size(t);
    void *send = malloc(bytes), *recv = malloc(bytes);
    void *src = in_place && rig->rank == root ? recv : send;
    for (uint64_t i = 0; i < n; i++)
        put(t, src, i, input(t, op, rig->rank, i));
    submit_ok(rig, make_op(ACCEL_COMM_REDUCE, t, op, n, root, src, recv));
    if (rig->rank == root)
        for (uint64_t i = 0; i < n; i++)
            expect(t, recv, i, reference(t, op, rig->size, i), "reduce");
    free(send);
    free(recv);
}

static void check_broadcast(struct rig *rig, accel_elem_type t, uint64_t n,
                            int root)
{
    size_t bytes = (n + 1) * elem_size(t);
    void *send = malloc(bytes), *recv = calloc(1, bytes);
    for (uint64_t i = 0; i < n; i++)
        put(t, send, i, input(t, ACCEL_REDUCE_SUM, rig->rank, i));
    submit_ok(rig, make_op(ACCEL_COMM_BROADCAST, t, 0, n, root,
                           rig->rank == root ? send : NULL, recv));
    for (uint64_t i = 0; i < n; i++)
        expect(t, recv, i, input(t, ACCEL_REDUCE_SUM, root, i), "broadcast");
    free(send);
    free(recv);
}

static void check_allgather(struct rig *rig, accel_elem_type t, uint64_t n,
                            int in_place)
{
    size_t es = elem_size(t);
    void *send = malloc((n + 1) * es);
    char *recv = malloc(((uint64_t)rig->size * n + 1) * es);
    char *mine = in_place ? recv + (uint64_t)rig->rank * n * es : send;
    for (uint64_t i = 0; i < n; i++)
        put(t, mine, i, input(t, ACCEL_REDUCE_SUM, rig->rank, i));
    submit_ok(rig, make_op(ACCEL_COMM_ALLGATHER, t, 0, n, 0, mine, recv));
    for (int r = 0; r < rig->size; r++)
        for (uint64_t i = 0; i < n; i++)
            expect(t, recv, (uint64_t)r * n + i,
                   input(t, ACCEL_REDUCE_SUM, r, i), "allgather");
    free(send);
    free(recv);
}

static void check_reduce_scatter(struct rig *rig, accel_elem_type t,
                                 accel_reduce_op op, uint64_t n, int in_place)
{
    uint64_t all = (uint64_t)rig->size * n;
    void *send = malloc((all + 1) * elem_size(t));
    void *recv = in_place ? send : malloc((n + 1) * elem_size(t));
    for (uint64_t i = 0; i < all; i++)
        put(t, send, i, input(t, op, rig->rank, i));
    submit_ok(rig, make_op(ACCEL_COMM_REDUCE_SCATTER, t, op, n, 0, send, recv));
    for (uint64_t i = 0; i < n; i++)
        expect(t, recv, i,
               reference(t, op, rig->size, (uint64_t)rig->rank * n + i),
               "reduce-scatter");
    free(send);
    if (!in_place)
        free(recv);
}

/* Pairs (0,1), (2,3): the even rank sends first, the odd one receives. */
static void check_send_recv(struct rig *rig, accel_elem_type t, uint64_t n)
{
    int peer = rig->rank ^ 1;
    if (peer >= rig->size)
        return;
    size_t bytes = (n + 1) * elem_size(t);
    void *send = malloc(bytes), *recv = calloc(1, bytes);
    for (uint64_t i = 0; i < n; i++)
        put(t, send, i, input(t, ACCEL_REDUCE_SUM, rig->rank, i));
    struct accel_comm_op s = make_op(ACCEL_COMM_SEND, t, 0, n, peer, send, NULL);
    struct accel_comm_op r = make_op(ACCEL_COMM_RECV, t, 0, n, peer, NULL, recv);
    submit_ok(rig, rig->rank % 2 == 0 ? s : r);
    submit_ok(rig, rig->rank % 2 == 0 ? r : s);
    for (uint64_t i = 0; i < n; i++)
        expect(t, recv, i, input(t, ACCEL_REDUCE_SUM, peer, i), "recv");
    free(send);
    free(recv);
}

static void every_op_every_type(struct rig *rig, const uint64_t *counts,
                                size_t ncounts)
{
    for (size_t s = 0; s < ncounts; s++)
        for (int t = 0; t < ACCEL_ELEM_TYPE_COUNT; t++) {
            uint64_t n = counts[s];
            for (int op = 0; op < ACCEL_REDUCE_OP_COUNT; op++) {
                check_allreduce(rig, t, op, n, 0);
                check_reduce(rig, t, op, n, (op + 1) % rig->size, 0);
                check_reduce_scatter(rig, t, op, n, 0);
            }
            check_broadcast(rig, t, n, t % rig->size);
            check_allgather(rig, t, n, 0);
            check_send_recv(rig, t, n);
            check_allreduce(rig, t, ACCEL_REDUCE_SUM, n, 1);
            check_reduce(rig, t, ACCEL_REDUCE_MAX, n, 1 % rig->size, 1);
            check_allgather(rig, t, n, 1);
            check_reduce_scatter(rig, t, ACCEL_REDUCE_MIN, n, 1);
        }
    submit_ok(rig, make_op(ACCEL_COMM_BARRIER, ACCEL_BYTE, 0, 0, 0, NULL, NULL));
}

/* ---- tests under mpirun ---- */

static void test_every_op_and_type_matches_the_serial_reference(void **state)
{
    every_op_every_type(*state, sizes, sizeof sizes / sizeof sizes[0]);
}

/* Counts over the chunk limit take the split path (INT_MAX elements in
 * real use): 23 elements in chunks of 7, a remainder included. */
static void test_counts_over_the_chunk_limit_are_split(void **state)
{
    (void)state;
    struct rig rig;
    setenv("ACCEL_MPI_CHUNK_ELEMS", "7", 1);
    rig_open(&rig);
    unsetenv("ACCEL_MPI_CHUNK_ELEMS");
    static const uint64_t counts[] = {23, 7};
    every_op_every_type(&rig, counts, 2);
    rig_close(&rig);
}

static void test_a_stalled_rank_times_out_the_others(void **state)
{
    (void)state;
    struct rig rig;
    rig_open(&rig);
    float send[16] = {1}, recv[16];
    if (rig.rank != 1) {
        struct accel_comm_op op = make_op(ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                          ACCEL_REDUCE_SUM, 16, 0, send, recv);
        op.deadline_ns = now_ns() + 300000000u; /* 0.3 s */
        assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_TIMEOUT);
        assert_non_null(strstr(last_error, "deadline"));
        assert_int_equal(table->comm_error(rig.comm), ACCEL_ERR_TIMEOUT);
        /* Unusable afterwards: no second wait, the same answer. */
        op.deadline_ns = now_ns() + OP_TIMEOUT_NS;
        assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_TIMEOUT);
    } else {
        assert_int_equal(table->comm_error(rig.comm), ACCEL_OK);
    }
    rig_close(&rig);
}

struct abort_arg {
    accel_comm_handle *comm;
};

static void *abort_later(void *p)
{
    struct abort_arg *arg = p;
    struct timespec pause = {0, 100000000}; /* 0.1 s */
    nanosleep(&pause, NULL);
    table->comm_abort(arg->comm);
    return NULL;
}

static void test_abort_from_another_thread_ends_a_wait(void **state)
{
    (void)state;
    struct rig rig;
    rig_open(&rig);
    /* A receive nobody sends: only the abort can end it. */
    int32_t recv[4];
    struct accel_comm_op op = make_op(ACCEL_COMM_RECV, ACCEL_I32, 0, 4,
                                      (rig.rank + 1) % rig.size, NULL, recv);
    struct abort_arg arg = {rig.comm};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, abort_later, &arg), 0);
    uint64_t started = now_ns();
    assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_COMM_ABORTED);
    pthread_join(thread, NULL);
    assert_true(now_ns() - started < OP_TIMEOUT_NS / 2);
    assert_int_equal(table->comm_error(rig.comm), ACCEL_ERR_COMM_ABORTED);
    assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_COMM_ABORTED);
    table->comm_abort(rig.comm); /* idempotent */
    rig_close(&rig);
}

/* Without a deadline (and MPI_THREAD_MULTIPLE) the all-reduce is the
 * blocking MPI_Allreduce: every type, op, size and in place, chunked too. */
static void test_allreduce_without_a_deadline_matches_the_reference(void **state)
{
    struct rig chunked;
    setenv("ACCEL_MPI_CHUNK_ELEMS", "7", 1);
    rig_open(&chunked);
    unsetenv("ACCEL_MPI_CHUNK_ELEMS");
    no_deadline = true;
    static const uint64_t counts[] = {0, 1, 23, 1000};
    for (size_t s = 0; s < sizeof counts / sizeof counts[0]; s++)
        for (int t = 0; t < ACCEL_ELEM_TYPE_COUNT; t++)
            for (int op = 0; op < ACCEL_REDUCE_OP_COUNT; op++) {
                struct rig *rig = s == 2 ? &chunked : *state;
                check_allreduce(rig, t, op, counts[s], 0);
                check_allreduce(rig, t, op, counts[s], 1);
            }
    no_deadline = false;
    rig_close(&chunked);
}

/* Without a deadline a rank that never comes leaves the others waiting at
 * the barrier before MPI_Allreduce, where an abort still ends the wait. */
static void test_abort_ends_an_allreduce_without_a_deadline(void **state)
{
    (void)state;
    struct rig rig;
    rig_open(&rig);
    if (rig.rank != 1) {
        float send[16] = {1}, recv[16];
        struct accel_comm_op op = make_op(ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                          ACCEL_REDUCE_SUM, 16, 0, send, recv);
        op.deadline_ns = 0;
        struct abort_arg arg = {rig.comm};
        pthread_t thread;
        assert_int_equal(pthread_create(&thread, NULL, abort_later, &arg), 0);
        uint64_t started = now_ns();
        assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_COMM_ABORTED);
        pthread_join(thread, NULL);
        assert_true(now_ns() - started < OP_TIMEOUT_NS / 2);
        assert_int_equal(table->comm_error(rig.comm), ACCEL_ERR_COMM_ABORTED);
    }
    rig_close(&rig);
}

static void test_check_finds_mismatched_counts(void **state)
{
    (void)state;
    struct rig rig;
    setenv("ACCEL_COMM_CHECK", "1", 1);
    rig_open(&rig);
    unsetenv("ACCEL_COMM_CHECK");
    float data[8] = {0};
    struct accel_comm_op op = make_op(ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                      ACCEL_REDUCE_SUM, rig.rank == 0 ? 5 : 6,
                                      0, data, data);
    assert_int_equal(table->submit(rig.comm, &op), ACCEL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(last_error, "count from 5 to 6"));
    /* Matching calls pass the check. */
    op.count = 6;
    assert_int_equal(table->submit(rig.comm, &op), ACCEL_OK);
    rig_close(&rig);
}

static void test_create_refuses_a_rank_mpi_disagrees_with(void **state)
{
    struct rig *rig = *state;
    struct accel_comm_init init = {.struct_size = sizeof init,
                                   .rank = (rig->rank + 1) % rig->size,
                                   .size = rig->size,
                                   .timeout_ns = OP_TIMEOUT_NS};
    accel_comm_handle *comm = (accel_comm_handle *)&init;
    assert_int_equal(table->comm_create(rig->provider, &init, &comm),
                     ACCEL_ERR_INVALID_ARGUMENT);
    assert_null(comm);
    char want[64];
    snprintf(want, sizeof want, "MPI's rank %d of %d", rig->rank, rig->size);
    assert_non_null(strstr(last_error, want));
}

static void test_split_by_parity_reduces_within_each_half(void **state)
{
    struct rig *rig = *state;
    int color = rig->rank == 3 ? -1 : rig->rank % 2;
    accel_comm_handle *half = NULL;
    assert_int_equal(table->comm_split(rig->comm, color, rig->rank, &half),
                     ACCEL_OK);
    if (color < 0) {
        assert_null(half);
        return;
    }
    assert_non_null(half);
    int32_t mine = rig->rank + 1, sum = 0;
    struct accel_comm_op op = make_op(ACCEL_COMM_ALLREDUCE, ACCEL_I32,
                                      ACCEL_REDUCE_SUM, 1, 0, &mine, &sum);
    assert_int_equal(table->submit(half, &op), ACCEL_OK);
    /* Ranks 0 and 2 (1 + 3), rank 1 alone (2): rank 3 left. */
    assert_int_equal(sum, color == 0 ? 4 : 2);
    table->comm_destroy(half);
}

static void test_bootstrap_broadcasts_and_gathers_bytes(void **state)
{
    struct rig *rig = *state;
    struct accel_comm_bootstrap boot;
    assert_true(ACCEL_COMM_HAS_ENTRY(table, bootstrap));
    assert_true(table->caps & ACCEL_COMM_CAP_BOOTSTRAP);
    assert_int_equal(table->bootstrap(rig->provider, &boot), ACCEL_OK);
    char id[ACCEL_COMM_UNIQUE_ID_MAX] = {0};
    if (rig->rank == 2 % rig->size)
        snprintf(id, sizeof id, "the id of rank %d", rig->rank);
    assert_int_equal(boot.broadcast(boot.ctx, id, sizeof id, 2 % rig->size),
                     ACCEL_OK);
    char want[64];
    snprintf(want, sizeof want, "the id of rank %d", 2 % rig->size);
    assert_string_equal(id, want);
    int32_t mine = 100 + rig->rank, all[64] = {0};
    assert_int_equal(boot.allgather(boot.ctx, &mine, all, sizeof mine), ACCEL_OK);
    for (int r = 0; r < rig->size; r++)
        assert_int_equal(all[r], 100 + r);
}

static void test_cpu_memory_is_taken_and_gpu_memory_only_when_mpi_says(void **state)
{
    struct rig *rig = *state;
    assert_int_equal(table->accepts_memory(rig->provider, ACCEL_NATIVE_CPU),
                     ACCEL_OK);
    accel_native_kind gpus[2] = {ACCEL_NATIVE_CUDA, ACCEL_NATIVE_HIP};
    for (int i = 0; i < 2; i++) {
        accel_status status = table->accepts_memory(rig->provider, gpus[i]);
        if (status != ACCEL_OK) {
            assert_int_equal(status, ACCEL_ERR_NOT_SUPPORTED);
            assert_non_null(strstr(last_error, "stages through pinned"));
        }
    }
}

/* ---- tests without a launcher ---- */

static const char *const launcher_variables[] = {
    "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",           "PMI_RANK",       "PMI_SIZE",
    "MPI_LOCALRANKID",      "MV2_COMM_WORLD_RANK", "FLUX_TASK_RANK", NULL};

static void test_open_without_a_launcher_is_not_supported(void **state)
{
    (void)state;
    for (int i = 0; launcher_variables[i] != NULL; i++)
        unsetenv(launcher_variables[i]);
    accel_comm_provider *provider = (accel_comm_provider *)&provider;
    last_error[0] = '\0';
    assert_int_equal(table->plugin_open(&services, &provider),
                     ACCEL_ERR_NOT_SUPPORTED);
    assert_null(provider);
    /* Either no MPI here, or one that was not launched. */
    if (strstr(last_error, "no usable MPI library") == NULL)
        assert_non_null(strstr(last_error, "not started by mpirun"));
}

static void test_a_named_library_that_is_absent_is_named(void **state)
{
    (void)state;
    accel_comm_provider *provider = NULL;
    setenv("ACCEL_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
    assert_int_equal(table->plugin_open(&services, &provider),
                     ACCEL_ERR_NOT_SUPPORTED);
    unsetenv("ACCEL_MPI_LIBRARY");
    assert_null(provider);
    assert_non_null(strstr(last_error, "/nonexistent/libmpi.so.40"));
}

static void test_the_table_is_whole(void **state)
{
    (void)state;
    assert_int_equal(table->struct_size, sizeof(struct accel_comm_v1));
    assert_int_equal(table->abi_major, ACCEL_COMM_ABI_MAJOR);
    assert_string_equal(table->name, "mpi");
    assert_int_equal(table->caps, ACCEL_COMM_CAP_BOOTSTRAP);
    assert_non_null(table->plugin_open);
    assert_non_null(table->comm_create);
    assert_non_null(table->submit);
}

int main(void)
{
    table = load_table();
    if (table == NULL)
        return 1;
    if (getenv("OMPI_COMM_WORLD_SIZE") == NULL && getenv("PMI_SIZE") == NULL) {
        const struct CMUnitTest plain[] = {
            cmocka_unit_test(test_the_table_is_whole),
            cmocka_unit_test(test_a_named_library_that_is_absent_is_named),
            cmocka_unit_test(test_open_without_a_launcher_is_not_supported),
        };
        return cmocka_run_group_tests_name("comm-mpi-plain", plain, NULL, NULL);
    }
    /* Under a launcher without a usable MPI: skip, every rank alike. */
    accel_comm_provider *probe = NULL;
    if (table->plugin_open(&services, &probe) != ACCEL_OK) {
        fprintf(stderr, "SKIP: %s\n", last_error);
        return 77;
    }
    const struct CMUnitTest launched[] = {
        cmocka_unit_test(
            test_cpu_memory_is_taken_and_gpu_memory_only_when_mpi_says),
        cmocka_unit_test(test_every_op_and_type_matches_the_serial_reference),
        cmocka_unit_test(test_counts_over_the_chunk_limit_are_split),
        cmocka_unit_test(test_create_refuses_a_rank_mpi_disagrees_with),
        cmocka_unit_test(test_split_by_parity_reduces_within_each_half),
        cmocka_unit_test(test_bootstrap_broadcasts_and_gathers_bytes),
        cmocka_unit_test(test_check_finds_mismatched_counts),
        cmocka_unit_test(test_abort_from_another_thread_ends_a_wait),
        cmocka_unit_test(test_allreduce_without_a_deadline_matches_the_reference),
        cmocka_unit_test(test_abort_ends_an_allreduce_without_a_deadline),
        cmocka_unit_test(test_a_stalled_rank_times_out_the_others),
    };
    int failed = cmocka_run_group_tests_name("comm-mpi", launched, group_setup,
                                             group_teardown);
    /* The probe opened MPI first: it finalises it, last. */
    table->plugin_close(probe);
    return failed;
}
