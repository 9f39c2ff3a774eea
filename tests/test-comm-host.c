/*
 * The `host` communication provider, called through its table
 * (accel-comm-host.so, dlopen'd): loopback ranks as threads, every
 * operation, element type and reduce op against a serial reference,
 * mismatches, deadlines, abort, split, and ranks as processes over shared
 * memory (fork).
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

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/comm.h>

#include "reduce.h"

static const struct accel_comm_v1 *table;
static accel_comm_provider *provider;
static void *library;
static bool under_valgrind;

/* ---- services: errors kept per thread, for the asserts ---- */

static _Thread_local char last_error[512];

static void test_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status test_set_error(accel_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

static const char *test_getenv(const char *name)
{
    return getenv(name);
}

static const struct accel_comm_services services = {
    .struct_size = sizeof services,
    .host_minor = ACCEL_COMM_ABI_MINOR,
    .log = test_log,
    .set_error = test_set_error,
    .getenv = test_getenv,
};

/* ---- a bootstrap between threads or (in shared memory) processes ---- */

#define HOST_TEST_BOOT_BYTES (8 * 256)

struct boot_shared {
    pthread_barrier_t barrier;
    uint8_t data[HOST_TEST_BOOT_BYTES];
};

struct boot_rank {
    struct boot_shared *shared;
    int rank;
    int size;
};

static accel_status boot_broadcast(void *ctx, void *data, size_t bytes,
                                   int root)
{
    struct boot_rank *self = ctx;
    if (self->rank == root)
        memcpy(self->shared->data, data, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    if (self->rank != root)
        memcpy(data, self->shared->data, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    return ACCEL_OK;
}

static accel_status boot_allgather(void *ctx, const void *send, void *out,
                                   size_t bytes)
{
    struct boot_rank *self = ctx;
    memcpy(self->shared->data + (size_t)self->rank * bytes, send, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    memcpy(out, self->shared->data, (size_t)self->size * bytes);
    pthread_barrier_wait(&self->shared->barrier);
    return ACCEL_OK;
}

static struct boot_shared *boot_new(int size, bool processes)
{
    struct boot_shared *boot =
        mmap(NULL, sizeof *boot, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(boot != MAP_FAILED);
    pthread_barrierattr_t attr;
    pthread_barrierattr_init(&attr);
    pthread_barrierattr_setpshared(&attr, processes ? PTHREAD_PROCESS_SHARED
                                                    : PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_init(&boot->barrier, &attr, (unsigned)size);
    pthread_barrierattr_destroy(&attr);
    return boot;
}

static void boot_free(struct boot_shared *boot)
{
    pthread_barrier_destroy(&boot->barrier);
    munmap(boot, sizeof *boot);
}

/* ---- running ranks as threads ---- */

#define MAX_RANKS 8

struct group;
typedef void (*rank_fn)(struct group *group, int rank);

struct group {
    int size;
    accel_comm_handle *comms[MAX_RANKS];
    uint8_t id[ACCEL_COMM_UNIQUE_ID_MAX];
    size_t id_bytes;
    struct boot_shared *boot;
    rank_fn fn;
    void *arg;
    accel_status status[MAX_RANKS];
    char errors[MAX_RANKS][512];
};

struct rank_thread {
    struct group *group;
    int rank;
    pthread_t thread;
};

static accel_status create_rank(struct group *group, int rank,
                                accel_comm_handle **out_comm)
{
    struct boot_rank boot = {group->boot, rank, group->size};
    struct accel_comm_bootstrap bootstrap = {&boot, boot_broadcast,
                                             boot_allgather};
    struct accel_comm_init init = {
        .struct_size = sizeof init,
        .rank = rank,
        .size = group->size,
        .local_rank = rank,
        .local_size = group->size,
        .device = {.struct_size = sizeof init.device,
                   .kind = ACCEL_NATIVE_CPU,
                   .device_ordinal = rank},
        .id = group->id,
        .id_bytes = group->id_bytes,
        .bootstrap = &bootstrap,
        .timeout_ns = 20000000000ull,
    };
    return table->comm_create(provider, &init, out_comm);
}

static void *rank_main(void *arg)
{
    struct rank_thread *self = arg;
    struct group *group = self->group;
    if (group->comms[self->rank] == NULL) {
        group->status[self->rank] =
            create_rank(group, self->rank, &group->comms[self->rank]);
        snprintf(group->errors[self->rank], sizeof group->errors[0], "%s",
                 last_error);
        if (group->status[self->rank] != ACCEL_OK)
            return NULL;
    }
    group->fn(group, self->rank);
    return NULL;
}

/* Run fn on every rank, each in its own thread, and join them. */
static void run_ranks(struct group *group, rank_fn fn, void *arg)
{
    struct rank_thread threads[MAX_RANKS];
    group->fn = fn;
    group->arg = arg;
    for (int r = 0; r < group->size; r++) {
        threads[r] = (struct rank_thread){group, r, 0};
        assert_int_equal(
            pthread_create(&threads[r].thread, NULL, rank_main, &threads[r]), 0);
    }
    for (int r = 0; r < group->size; r++)
        pthread_join(threads[r].thread, NULL);
}

static void no_op(struct group *group, int rank)
{
    (void)group;
    (void)rank;
}

static struct group *group_new(int size)
{
    struct group *group = calloc(1, sizeof *group);
    assert_non_null(group);
    group->size = size;
    group->boot = boot_new(size, false);
    assert_int_equal(table->unique_id(provider, group->id, sizeof group->id,
                                      &group->id_bytes),
                     ACCEL_OK);
    run_ranks(group, no_op, NULL);
    for (int r = 0; r < size; r++) {
        if (group->status[r] != ACCEL_OK)
            fail_msg("rank %d: comm_create: %d: %s", r, group->status[r],
                     group->errors[r]);
    }
    return group;
}

static void group_free(struct group *group)
{
    for (int r = 0; r < group->size; r++)
        table->comm_destroy(group->comms[r]);
    boot_free(group->boot);
    free(group);
}

/* ---- data and the serial reference ---- */

static size_t elem_size(uint32_t type)
{
    return accel__comm_elem_size(type);
}

/* Small integers, chosen per reduce op so that every order of reduction
 * gives the same bits (sums stay small, products are powers of two with
 * signs, f16 and bf16 hold them exactly). */
static long gen_value(uint32_t op, int rank, uint64_t i)
{
    uint64_t mix = (uint64_t)rank * 7u + i * 13u;
    switch (op) {
    case ACCEL_REDUCE_PROD: {
        static const long factors[3] = {1, 2, -1};
        return factors[mix % 3];
    }
    case ACCEL_REDUCE_SUM:
        return (long)(mix % 9) - 4;
    default:
        return (long)(((uint64_t)rank * 31u + i * 17u) % 201) - 100;
    }
}

static void put_value(uint32_t type, void *base, uint64_t i, long value)
{
    uint8_t *at = (uint8_t *)base + i * elem_size(type);
    switch (type) {
    case ACCEL_F16: {
        uint16_t half = accel__comm_f32_to_f16((float)value);
        memcpy(at, &half, 2);
        break;
    }
    case ACCEL_BF16: {
        uint16_t half = accel__comm_f32_to_bf16((float)value);
        memcpy(at, &half, 2);
        break;
    }
    case ACCEL_F32: {
        float f = (float)value;
        memcpy(at, &f, 4);
        break;
    }
    case ACCEL_F64: {
        double d = (double)value;
        memcpy(at, &d, 8);
        break;
    }
    default: {
        /* Integers: the low bytes of the two's complement value. */
        uint64_t bits = (uint64_t)value;
        memcpy(at, &bits, elem_size(type));
        break;
    }
    }
}

static void *gen_buffer(uint32_t type, uint32_t op, int rank, uint64_t count)
{
    void *buffer = malloc(count * elem_size(type) + 1);
    assert_non_null(buffer);
    for (uint64_t i = 0; i < count; i++)
        put_value(type, buffer, i, gen_value(op, rank, i));
    return buffer;
}

enum in_place {
    OUT_OF_PLACE,
    IN_PLACE,      /* send == recv */
    IN_PLACE_SLOT, /* NCCL's: send (allgather) or recv (reduce_scatter) is
                      this rank's share of the other */
};

struct op_case {
    uint32_t kind;
    uint32_t type;
    uint32_t op;
    uint64_t count;
    int root;
    enum in_place in_place;
    /* Filled by prepare_case: each rank's input and expected output. */
    void *inputs[MAX_RANKS];
    void *expected[MAX_RANKS];
    uint64_t in_count;
    uint64_t out_count;
};

static void *reduce_reference(const struct op_case *c, int size,
                              uint64_t offset, uint64_t count)
{
    size_t es = elem_size(c->type);
    uint8_t *ref = malloc(count * es + 1);
    assert_non_null(ref);
    memcpy(ref, (uint8_t *)c->inputs[0] + offset * es, count * es);
    for (int q = 1; q < size; q++)
        accel__comm_reduce(c->type, c->op, ref,
                           (uint8_t *)c->inputs[q] + offset * es, count);
    return ref;
}

static void prepare_case(struct op_case *c, int size)
{
    uint64_t n = c->count;
    size_t es = elem_size(c->type);
    c->in_count = c->kind == ACCEL_COMM_REDUCE_SCATTER ? n * (uint64_t)size : n;
    c->out_count = c->kind == ACCEL_COMM_ALLGATHER ? n * (uint64_t)size : n;
    for (int q = 0; q < size; q++)
        c->inputs[q] = gen_buffer(c->type, c->op, q, c->in_count);
    for (int r = 0; r < size; r++) {
        switch (c->kind) {
        case ACCEL_COMM_ALLREDUCE:
            if (r == 0) {
                c->expected[r] = reduce_reference(c, size, 0, n);
            } else {
                c->expected[r] = malloc(n * es + 1);
                memcpy(c->expected[r], c->expected[0], n * es);
            }
            break;
        case ACCEL_COMM_REDUCE:
            c->expected[r] = r == c->root ? reduce_reference(c, size, 0, n)
                                          : NULL;
            break;
        case ACCEL_COMM_BROADCAST:
            c->expected[r] = malloc(n * es + 1);
            memcpy(c->expected[r], c->inputs[c->root], n * es);
            break;
        case ACCEL_COMM_ALLGATHER:
            c->expected[r] = malloc(n * es * (size_t)size + 1);
            for (int q = 0; q < size; q++)
                memcpy((uint8_t *)c->expected[r] + (size_t)q * n * es,
                       c->inputs[q], n * es);
            break;
        case ACCEL_COMM_REDUCE_SCATTER:
            c->expected[r] = reduce_reference(c, size, (uint64_t)r * n, n);
            break;
        default:
            c->expected[r] = NULL;
        }
    }
}

static void release_case(struct op_case *c)
{
    for (int q = 0; q < MAX_RANKS; q++) {
        free(c->inputs[q]);
        free(c->expected[q]);
        c->inputs[q] = c->expected[q] = NULL;
    }
}

static void rank_failed(struct group *group, int rank, accel_status status,
                        const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    group->status[rank] = status;
    vsnprintf(group->errors[rank], sizeof group->errors[0], fmt, args);
    va_end(args);
}

/* Lay out this rank's buffers as the case asks; *out_base is what to free,
 * and the result is read from *out_recv. */
static void place_buffers(const struct op_case *c, int rank, uint8_t **out_base,
                          uint8_t **out_send, uint8_t **out_recv)
{
    size_t es = elem_size(c->type);
    size_t in_bytes = c->in_count * es, out_bytes = c->out_count * es;
    size_t total = in_bytes + out_bytes + 1;
    uint8_t *base = malloc(total);
    assert_non_null(base);
    memset(base, 0xa5, total);
    uint8_t *send = base, *recv = base + in_bytes;
    if (c->in_place == IN_PLACE) {
        recv = send;
        if (c->kind == ACCEL_COMM_ALLGATHER)
            send = recv; /* the input at recv's start */
    } else if (c->in_place == IN_PLACE_SLOT) {
        if (c->kind == ACCEL_COMM_ALLGATHER) {
            recv = base;
            send = base + (size_t)rank * c->count * es;
        } else if (c->kind == ACCEL_COMM_REDUCE_SCATTER) {
            recv = send + (size_t)rank * c->count * es;
        } else {
            recv = send;
        }
    }
    memcpy(send, c->inputs[rank], in_bytes);
    *out_base = base;
    *out_send = send;
    *out_recv = recv;
}

static void run_case_rank(struct group *group, int rank)
{
    const struct op_case *c = group->arg;
    uint8_t *base, *send, *recv;
    place_buffers(c, rank, &base, &send, &recv);
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = c->kind,
        .type = c->type,
        .reduce_op = c->op,
        .count = c->count,
        .root = c->root,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)send,
        .recv = (uint64_t)(uintptr_t)recv,
    };
    accel_status status = table->submit(group->comms[rank], &op);
    if (status != ACCEL_OK)
        rank_failed(group, rank, status, "submit: %s", last_error);
    else if (c->expected[rank] != NULL &&
             memcmp(recv, c->expected[rank], c->out_count * elem_size(c->type)))
        rank_failed(group, rank, ACCEL_ERR_DRIVER,
                    "kind %u type %u op %u count %llu root %d in_place %d: "
                    "result differs from the serial reference",
                    c->kind, c->type, c->op, (unsigned long long)c->count,
                    c->root, (int)c->in_place);
    free(base);
}

static void expect_all_ok(struct group *group)
{
    for (int r = 0; r < group->size; r++)
        if (group->status[r] != ACCEL_OK)
            fail_msg("rank %d of %d: status %d: %s", r, group->size,
                     group->status[r], group->errors[r]);
}

static void run_case(struct group *group, struct op_case *c)
{
    prepare_case(c, group->size);
    run_ranks(group, run_case_rank, c);
    release_case(c);
    expect_all_ok(group);
}

/* ---- the tests ---- */

static const int sizes[] = {1, 2, 3, 4, 8};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

static uint64_t large_count(void)
{
    return under_valgrind ? 4099 : (1u << 20) + 3;
}

static void test_allreduce_sum_f32_matches_serial_reference(void **state)
{
    (void)state;
    const uint64_t counts[] = {0, 1, 7, 1000, large_count()};
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        struct group *group = group_new(sizes[s]);
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            for (int place = OUT_OF_PLACE; place <= IN_PLACE; place++) {
                struct op_case c = {.kind = ACCEL_COMM_ALLREDUCE,
                                    .type = ACCEL_F32,
                                    .op = ACCEL_REDUCE_SUM,
                                    .count = counts[i],
                                    .in_place = place};
                run_case(group, &c);
            }
        }
        group_free(group);
    }
}

/* Every kind, element type and reduce op, at two counts. */
static void run_every_case(struct group *group, uint64_t count)
{
    static const uint32_t kinds[] = {
        ACCEL_COMM_ALLREDUCE, ACCEL_COMM_REDUCE,    ACCEL_COMM_REDUCE_SCATTER,
        ACCEL_COMM_BROADCAST, ACCEL_COMM_ALLGATHER, ACCEL_COMM_BARRIER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        bool reducing = k < 3;
        for (uint32_t type = 0; type < ACCEL_ELEM_TYPE_COUNT; type++) {
            for (uint32_t op = 0; op < (reducing ? ACCEL_REDUCE_OP_COUNT : 1u);
                 op++) {
                struct op_case c = {.kind = kinds[k],
                                    .type = type,
                                    .op = op,
                                    .count = count,
                                    .root = group->size - 1};
                run_case(group, &c);
            }
        }
    }
}

static void test_every_kind_type_and_op_matches_serial_reference(void **state)
{
    (void)state;
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        struct group *group = group_new(sizes[s]);
        run_every_case(group, 7);
        run_every_case(group, 1000);
        group_free(group);
    }
}

static void run_placements(struct group *group, uint64_t count)
{
    static const uint32_t kinds[] = {
        ACCEL_COMM_ALLREDUCE, ACCEL_COMM_REDUCE,    ACCEL_COMM_REDUCE_SCATTER,
        ACCEL_COMM_BROADCAST, ACCEL_COMM_ALLGATHER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int place = OUT_OF_PLACE; place <= IN_PLACE_SLOT; place++) {
            struct op_case c = {.kind = kinds[k],
                                .type = ACCEL_I32,
                                .op = ACCEL_REDUCE_MAX,
                                .count = count,
                                .root = (int)(count % (uint64_t)group->size),
                                .in_place = place};
            run_case(group, &c);
        }
}

/* Out of place, in place (send == recv) and NCCL's in place (this rank's
 * share of the larger buffer), at every size; the large count at one
 * size of ranks that is not a power of two. */
static void test_every_kind_in_place_and_at_size(void **state)
{
    (void)state;
    const uint64_t counts[] = {0, 1, 7, 1000};
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        struct group *group = group_new(sizes[s]);
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            run_placements(group, counts[i]);
        if (sizes[s] == 3)
            run_placements(group, large_count());
        group_free(group);
    }
}

/* 64 MiB per rank, in place: every element is 1 + 2 + ... + size. */
static void large_rank(struct group *group, int rank)
{
    uint64_t count = *(uint64_t *)group->arg;
    float *data = malloc(count * sizeof *data);
    if (data == NULL) {
        rank_failed(group, rank, ACCEL_ERR_OUT_OF_HOST_MEMORY, "malloc");
        return;
    }
    for (uint64_t i = 0; i < count; i++)
        data[i] = (float)(rank + 1);
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = ACCEL_COMM_ALLREDUCE,
        .type = ACCEL_F32,
        .reduce_op = ACCEL_REDUCE_SUM,
        .count = count,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)data,
        .recv = (uint64_t)(uintptr_t)data,
    };
    accel_status status = table->submit(group->comms[rank], &op);
    float want = (float)(group->size * (group->size + 1) / 2);
    if (status != ACCEL_OK)
        rank_failed(group, rank, status, "submit: %s", last_error);
    for (uint64_t i = 0; status == ACCEL_OK && i < count; i++) {
        if (data[i] != want) {
            rank_failed(group, rank, ACCEL_ERR_DRIVER,
                        "element %llu is %g, not %g", (unsigned long long)i,
                        (double)data[i], (double)want);
            break;
        }
    }
    free(data);
}

static void test_allreduce_of_64_mib(void **state)
{
    (void)state;
    uint64_t count = (under_valgrind ? 1u << 20 : 64u << 20) / sizeof(float);
    struct group *group = group_new(2);
    run_ranks(group, large_rank, &count);
    expect_all_ok(group);
    group_free(group);
}

/* ---- the reductions themselves, against hand-worked values ---- */

static uint16_t f16_of(float value)
{
    return accel__comm_f32_to_f16(value);
}

static void test_half_conversions_round_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(f16_of(1.0f), 0x3c00);
    assert_int_equal(f16_of(-2.0f), 0xc000);
    assert_int_equal(f16_of(65504.0f), 0x7bff);
    assert_int_equal(f16_of(65519.0f), 0x7bff);
    assert_int_equal(f16_of(65520.0f), 0x7c00); /* the tie goes to infinity */
    assert_int_equal(f16_of(2049.0f), 0x6800);  /* tie: to even, 2048 */
    assert_int_equal(f16_of(2051.0f), 0x6802);  /* tie: to even, 2052 */
    assert_int_equal(f16_of(0x1p-24f), 0x0001); /* the smallest subnormal */
    assert_int_equal(f16_of(0x1p-25f), 0x0000); /* tie: to even, zero */
    assert_int_equal(f16_of(0x3p-25f), 0x0002); /* tie: to even, 2 */
    assert_int_equal(f16_of(-0.0f), 0x8000);
    assert_int_equal(f16_of(__builtin_inff()), 0x7c00);
    assert_true((f16_of(__builtin_nanf("")) & 0x7fff) > 0x7c00);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(accel__comm_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
    assert_true((accel__comm_f32_to_bf16(__builtin_nanf("")) & 0x7fff) >
                0x7f80);
    /* Every half that is a number survives the trip through f32. */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0)
            continue;
        assert_int_equal(f16_of(accel__comm_f16_to_f32((uint16_t)h)), h);
        if ((h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0)
            continue;
        assert_int_equal(
            accel__comm_f32_to_bf16(accel__comm_bf16_to_f32((uint16_t)h)), h);
    }
}

static void test_reductions_wrap_compare_and_round(void **state)
{
    (void)state;
    int8_t i8[2] = {127, -128}, i8s[2] = {1, 127};
    accel__comm_reduce(ACCEL_I8, ACCEL_REDUCE_SUM, i8, i8s, 2);
    assert_int_equal(i8[0], -128); /* wraps */
    assert_int_equal(i8[1], -1);
    int8_t m[2] = {-128, 5}, ms[2] = {127, -6};
    accel__comm_reduce(ACCEL_I8, ACCEL_REDUCE_MIN, m, ms, 2);
    assert_int_equal(m[0], -128); /* signed compare */
    assert_int_equal(m[1], -6);
    uint8_t b[1] = {200}, bs[1] = {100};
    accel__comm_reduce(ACCEL_BYTE, ACCEL_REDUCE_MAX, b, bs, 1);
    assert_int_equal(b[0], 200); /* bytes compare unsigned */
    uint16_t u16[1] = {65535}, u16s[1] = {65535};
    accel__comm_reduce(ACCEL_U16, ACCEL_REDUCE_PROD, u16, u16s, 1);
    assert_int_equal(u16[0], 1);
    int32_t i32[1] = {INT32_MAX}, i32s[1] = {2};
    accel__comm_reduce(ACCEL_I32, ACCEL_REDUCE_PROD, i32, i32s, 1);
    assert_int_equal(i32[0], -2);
    int64_t i64[1] = {INT64_MAX}, i64s[1] = {1};
    accel__comm_reduce(ACCEL_I64, ACCEL_REDUCE_SUM, i64, i64s, 1);
    assert_true(i64[0] == INT64_MIN);
    uint64_t u64[1] = {3}, u64s[1] = {UINT64_MAX};
    accel__comm_reduce(ACCEL_U64, ACCEL_REDUCE_MIN, u64, u64s, 1);
    assert_true(u64[0] == 3);
    double f64[1] = {1.5}, f64s[1] = {-2.25};
    accel__comm_reduce(ACCEL_F64, ACCEL_REDUCE_PROD, f64, f64s, 1);
    assert_true(f64[0] == -3.375);
    float f32[2] = {1.0f, -3.0f}, f32s[2] = {0.5f, 2.0f};
    accel__comm_reduce(ACCEL_F32, ACCEL_REDUCE_MAX, f32, f32s, 2);
    assert_true(f32[0] == 1.0f && f32[1] == 2.0f);
    /* f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even, 1; from
     * 1 + 2^-10 the same step goes up to 1 + 2^-9. */
    uint16_t h[2] = {0x3c00, 0x3c01}, hs[2] = {f16_of(0x1p-11f), f16_of(0x1p-11f)};
    accel__comm_reduce(ACCEL_F16, ACCEL_REDUCE_SUM, h, hs, 2);
    assert_int_equal(h[0], 0x3c00);
    assert_int_equal(h[1], 0x3c02);
    uint16_t bf[1] = {0x3f80}, bfs[1] = {accel__comm_f32_to_bf16(3.0f)};
    accel__comm_reduce(ACCEL_BF16, ACCEL_REDUCE_PROD, bf, bfs, 1);
    assert_int_equal(bf[0], accel__comm_f32_to_bf16(3.0f));
}

/* ---- mismatches, point to point ---- */

struct mismatch {
    struct op_case c;
    int odd_rank;
    uint64_t odd_count;
    uint32_t odd_kind;
    uint32_t odd_type;
    int odd_root;
};

static void mismatch_rank(struct group *group, int rank)
{
    struct mismatch *m = group->arg;
    float buffer[64] = {0}, out[64 * MAX_RANKS];
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = rank == m->odd_rank ? m->odd_kind : m->c.kind,
        .type = rank == m->odd_rank ? m->odd_type : m->c.type,
        .count = rank == m->odd_rank ? m->odd_count : m->c.count,
        .root = rank == m->odd_rank ? m->odd_root : m->c.root,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)buffer,
        .recv = (uint64_t)(uintptr_t)out,
    };
    group->status[rank] = table->submit(group->comms[rank], &op);
    snprintf(group->errors[rank], sizeof group->errors[0], "%s", last_error);
}

static void expect_mismatch(struct group *group, struct mismatch *m,
                            const char *mine, const char *theirs)
{
    run_ranks(group, mismatch_rank, m);
    for (int r = 0; r < group->size; r++) {
        assert_int_equal(group->status[r], ACCEL_ERR_INVALID_ARGUMENT);
        if (strstr(group->errors[r], mine) == NULL ||
            strstr(group->errors[r], theirs) == NULL)
            fail_msg("rank %d: '%s' lacks '%s' or '%s'", r, group->errors[r],
                     mine, theirs);
        group->status[r] = ACCEL_OK;
    }
}

static void test_mismatch_is_an_error_on_every_rank(void **state)
{
    (void)state;
    struct group *group = group_new(3);
    struct mismatch m = {
        .c = {.kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32, .count = 40},
        .odd_rank = 2, .odd_kind = ACCEL_COMM_ALLREDUCE, .odd_type = ACCEL_F32,
        .odd_count = 39};
    expect_mismatch(group, &m, "rank 0 runs allreduce of 40 f32 (sum)",
                    "rank 2 runs allreduce of 39 f32 (sum)");
    m.odd_count = 40;
    m.odd_type = ACCEL_I32;
    expect_mismatch(group, &m, "40 f32", "rank 2 runs allreduce of 40 i32");
    m.odd_type = ACCEL_F32;
    m.odd_kind = ACCEL_COMM_BARRIER;
    m.odd_rank = 1;
    expect_mismatch(group, &m, "allreduce", "rank 1 runs barrier");
    m.c.kind = m.odd_kind = ACCEL_COMM_BROADCAST;
    m.odd_root = 1;
    expect_mismatch(group, &m, "rooted at rank 0", "rooted at rank 1");
    /* The group is still whole. */
    struct op_case c = {.kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32,
                        .count = 100};
    run_case(group, &c);
    group_free(group);
}

static accel_status p2p(accel_comm_handle *comm, uint32_t kind, void *buffer,
                        uint64_t count, uint32_t type, int peer)
{
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = kind,
        .type = type,
        .count = count,
        .root = peer,
        .memory = ACCEL_NATIVE_CPU,
        .send = kind == ACCEL_COMM_SEND ? (uint64_t)(uintptr_t)buffer : 0,
        .recv = kind == ACCEL_COMM_RECV ? (uint64_t)(uintptr_t)buffer : 0,
    };
    return table->submit(comm, &op);
}

/* Pairs (0, 1), (2, 3): three messages each way, in order, then a
 * message the receiver does not expect. */
static void p2p_rank(struct group *group, int rank)
{
    uint64_t big = large_count();
    uint64_t counts[3] = {0, 5, big};
    int peer = rank ^ 1;
    uint32_t *data = malloc(big * sizeof *data);
    uint32_t *got = malloc(big * sizeof *got);
    for (int pass = 0; pass < 2; pass++) {
        bool sending = (pass == 0) == (rank % 2 == 0);
        for (int m = 0; m < 3; m++) {
            accel_status status;
            if (sending) {
                for (uint64_t i = 0; i < counts[m]; i++)
                    data[i] = (uint32_t)(rank * 1000003 + m * 7919) + (uint32_t)i;
                status = p2p(group->comms[rank], ACCEL_COMM_SEND, data,
                             counts[m], ACCEL_U32, peer);
            } else {
                memset(got, 0, big * sizeof *got);
                status = p2p(group->comms[rank], ACCEL_COMM_RECV, got,
                             counts[m], ACCEL_U32, peer);
                for (uint64_t i = 0; status == ACCEL_OK && i < counts[m]; i++)
                    if (got[i] != (uint32_t)(peer * 1000003 + m * 7919) + (uint32_t)i)
                        status = ACCEL_ERR_DRIVER;
            }
            if (status != ACCEL_OK) {
                rank_failed(group, rank, status, "message %d: %s", m, last_error);
                goto done;
            }
        }
    }
    /* Rank 0 sends 10 u32, rank 1 expects 11: both refuse, then go on. */
    if (rank < 2) {
        accel_status status =
            p2p(group->comms[rank], rank == 0 ? ACCEL_COMM_SEND : ACCEL_COMM_RECV,
                data, rank == 0 ? 10 : 11, ACCEL_U32, peer);
        if (status != ACCEL_ERR_INVALID_ARGUMENT ||
            strstr(last_error, rank == 0 ? "which receives 11 u32"
                                         : "which sends 10 u32") == NULL)
            rank_failed(group, rank, ACCEL_ERR_DRIVER,
                        "mismatch not refused: %d %s", status, last_error);
        status = p2p(group->comms[rank], rank == 0 ? ACCEL_COMM_SEND : ACCEL_COMM_RECV,
                     data, 3, ACCEL_U32, peer);
        if (status != ACCEL_OK)
            rank_failed(group, rank, status, "after a refusal: %s", last_error);
    }
done:
    free(data);
    free(got);
}

static void test_send_recv_in_order_and_refused_on_mismatch(void **state)
{
    (void)state;
    struct group *group = group_new(4);
    run_ranks(group, p2p_rank, NULL);
    expect_all_ok(group);
    group_free(group);
}

/* ---- deadlines and abort ---- */

struct stall {
    int absent;       /* the rank that never calls */
    uint64_t wait_ns; /* deadline from now, or 0 for none */
    bool abort;       /* the absent rank aborts instead, after a while */
};

static void stall_rank(struct group *group, int rank)
{
    struct stall *stall = group->arg;
    if (rank == stall->absent) {
        if (stall->abort) {
            struct timespec pause = {0, 100000000};
            nanosleep(&pause, NULL);
            table->comm_abort(group->comms[rank]);
            table->comm_abort(group->comms[rank]); /* idempotent */
        }
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    float data[16] = {0};
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = ACCEL_COMM_ALLREDUCE,
        .type = ACCEL_F32,
        .count = 16,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)data,
        .recv = (uint64_t)(uintptr_t)data,
        .deadline_ns = stall->wait_ns ? now_ns + stall->wait_ns : 0,
    };
    group->status[rank] = table->submit(group->comms[rank], &op);
    snprintf(group->errors[rank], sizeof group->errors[0], "%s", last_error);
}

static void expect_broken(struct group *group, accel_status waiters,
                          accel_status later)
{
    for (int r = 0; r < group->size; r++)
        if (r != ((struct stall *)group->arg)->absent)
            assert_int_equal(group->status[r], waiters);
    for (int r = 0; r < group->size; r++) {
        assert_int_equal(table->comm_error(group->comms[r]), later);
        uint8_t none = 0;
        struct accel_comm_op op = {.struct_size = sizeof op,
                                   .kind = ACCEL_COMM_BARRIER,
                                   .memory = ACCEL_NATIVE_CPU,
                                   .send = (uintptr_t)&none};
        assert_int_equal(table->submit(group->comms[r], &op),
                         ACCEL_ERR_COMM_ABORTED);
        group->status[r] = ACCEL_OK;
    }
}

static void test_missing_rank_times_out_the_others(void **state)
{
    (void)state;
    struct group *group = group_new(3);
    struct stall stall = {.absent = 2, .wait_ns = 200000000u};
    run_ranks(group, stall_rank, &stall);
    expect_broken(group, ACCEL_ERR_TIMEOUT, ACCEL_ERR_TIMEOUT);
    if (strstr(group->errors[0], "waiting for rank 2: ") == NULL)
        fail_msg("detail: %s", group->errors[0]);
    group_free(group);
}

static void test_abort_wakes_every_waiting_rank(void **state)
{
    (void)state;
    struct group *group = group_new(3);
    struct stall stall = {.absent = 1, .abort = true};
    run_ranks(group, stall_rank, &stall);
    expect_broken(group, ACCEL_ERR_COMM_ABORTED, ACCEL_ERR_COMM_ABORTED);
    assert_non_null(strstr(group->errors[0], "comm_abort was called on rank 1"));
    group_free(group);
}

/* ---- split ---- */

struct split {
    accel_comm_handle *children[MAX_RANKS];
};

/* Even and odd ranks, each color ordered by descending parent rank; rank 3
 * stays out. */
static void split_rank(struct group *group, int rank)
{
    struct split *split = group->arg;
    int color = rank == 3 ? -1 : rank % 2;
    accel_status status = table->comm_split(group->comms[rank], color, -rank,
                                            &split->children[rank]);
    if (status != ACCEL_OK) {
        rank_failed(group, rank, status, "comm_split: %s", last_error);
        return;
    }
    if ((split->children[rank] == NULL) != (color < 0)) {
        rank_failed(group, rank, ACCEL_ERR_DRIVER, "child is %p",
                    (void *)split->children[rank]);
        return;
    }
    if (color < 0)
        return;
    /* The allreduce of the parent ranks in this color, and this rank's
     * place in it (its index among the color's ranks, highest first). */
    int32_t value = rank, expect = 0, below = 0;
    for (int q = 0; q < group->size; q++) {
        if (q % 2 == color && q != 3) {
            expect += q;
            below += q > rank;
        }
    }
    int32_t place[MAX_RANKS] = {0};
    struct accel_comm_op op = {.struct_size = sizeof op,
                               .kind = ACCEL_COMM_ALLGATHER,
                               .type = ACCEL_I32,
                               .count = 1,
                               .memory = ACCEL_NATIVE_CPU,
                               .send = (uint64_t)(uintptr_t)&value,
                               .recv = (uint64_t)(uintptr_t)place};
    status = table->submit(split->children[rank], &op);
    if (status == ACCEL_OK && place[below] != rank)
        status = ACCEL_ERR_DRIVER;
    op.kind = ACCEL_COMM_ALLREDUCE;
    op.recv = op.send;
    if (status == ACCEL_OK)
        status = table->submit(split->children[rank], &op);
    if (status != ACCEL_OK || value != expect)
        rank_failed(group, rank, status ? status : ACCEL_ERR_DRIVER,
                    "in the child: %d, sum %d not %d: %s", status, value,
                    expect, last_error);
}

static void test_split_by_color_and_key(void **state)
{
    (void)state;
    struct group *group = group_new(8);
    struct split split = {{0}};
    run_ranks(group, split_rank, &split);
    expect_all_ok(group);
    for (int r = 0; r < group->size; r++)
        table->comm_destroy(split.children[r]);
    /* The parent still works after the split. */
    struct op_case c = {.kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32,
                        .count = 10};
    run_case(group, &c);
    group_free(group);
}

/* ---- ranks as processes over shared memory (fork) ---- */

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
                               .recv = (uint64_t)(uintptr_t)recv};
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
    status = process_op(p, ACCEL_COMM_ALLREDUCE, ACCEL_F32, ACCEL_REDUCE_SUM,
                        n, 0, send, send);
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
    accel_status status =
        process_op(p, ACCEL_COMM_REDUCE_SCATTER, ACCEL_I32, ACCEL_REDUCE_SUM, n,
                   0, send, recv);
    PROCESS_CHECK(status == ACCEL_OK, "reduce_scatter: %d", status);
    int32_t ranks = (int32_t)(3 * size * (size - 1) / 2);
    for (uint64_t i = 0; i < n; i++)
        PROCESS_CHECK(recv[i] == ranks + (int32_t)size * (p->rank + (int32_t)(i % 7)),
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
    status = process_op(p, ACCEL_COMM_REDUCE, ACCEL_U8, ACCEL_REDUCE_MAX, 100, 1,
                        mine, p->rank == 1 ? max : NULL);
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
    int32_t value = p->rank, out[PROCESS_RANKS];
    accel_status status =
        process_op(p, ACCEL_COMM_ALLGATHER, ACCEL_I32, 0,
                   p->rank == 2 ? 2 : 1, 0, &value, out);
    PROCESS_CHECK(status == ACCEL_ERR_INVALID_ARGUMENT &&
                      strstr(last_error, "rank 2 runs allgather of 2 i32"),
                  "mismatch: %d", status);
    accel_comm_handle *child = NULL;
    status = table->comm_split(p->comm, p->rank % 2, p->rank, &child);
    PROCESS_CHECK(status == ACCEL_OK && child != NULL, "split: %d", status);
    struct process c = {child, p->rank / 2, p->size / 2};
    status = process_op(&c, ACCEL_COMM_ALLREDUCE, ACCEL_I32, ACCEL_REDUCE_SUM, 1,
                        0, &value, &value);
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
    table->comm_destroy(p->comm);
    return failed;
}

static void test_processes_run_every_operation_over_shared_memory(void **state)
{
    (void)state;
    struct group group = {.size = PROCESS_RANKS};
    group.boot = boot_new(PROCESS_RANKS, true);
    assert_int_equal(table->unique_id(provider, group.id, sizeof group.id,
                                      &group.id_bytes),
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

static int setup(void **state)
{
    (void)state;
    under_valgrind = getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL;
    library = dlopen(COMM_HOST_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", COMM_HOST_PLUGIN_PATH, dlerror());
        return -1;
    }
    table = dlsym(library, ACCEL_COMM_SYMBOL);
    if (table == NULL)
        return -1;
    return table->plugin_open(&services, &provider) == ACCEL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    table->plugin_close(provider);
    dlclose(library);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_sum_f32_matches_serial_reference),
        cmocka_unit_test(test_every_kind_type_and_op_matches_serial_reference),
        cmocka_unit_test(test_every_kind_in_place_and_at_size),
        cmocka_unit_test(test_allreduce_of_64_mib),
        cmocka_unit_test(test_half_conversions_round_to_nearest_even),
        cmocka_unit_test(test_reductions_wrap_compare_and_round),
        cmocka_unit_test(test_mismatch_is_an_error_on_every_rank),
        cmocka_unit_test(test_send_recv_in_order_and_refused_on_mismatch),
        cmocka_unit_test(test_missing_rank_times_out_the_others),
        cmocka_unit_test(test_abort_wakes_every_waiting_rank),
        cmocka_unit_test(test_split_by_color_and_key),
        cmocka_unit_test(test_processes_run_every_operation_over_shared_memory),
    };
    /* ACCEL_TEST_FILTER=name runs the tests that match (cmocka's pattern). */
    if (getenv("ACCEL_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("ACCEL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}
