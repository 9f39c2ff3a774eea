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
            c->expected[r] = reduce_reference(c, size, 0, n);
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

static void test_every_kind_in_place_and_at_size(void **state)
{
    (void)state;
    static const uint32_t kinds[] = {
        ACCEL_COMM_ALLREDUCE, ACCEL_COMM_REDUCE,    ACCEL_COMM_REDUCE_SCATTER,
        ACCEL_COMM_BROADCAST, ACCEL_COMM_ALLGATHER};
    const uint64_t counts[] = {0, 1, 7, large_count()};
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        struct group *group = group_new(sizes[s]);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
                for (int place = OUT_OF_PLACE; place <= IN_PLACE_SLOT;
                     place++) {
                    struct op_case c = {.kind = kinds[k],
                                        .type = ACCEL_I32,
                                        .op = ACCEL_REDUCE_MAX,
                                        .count = counts[i],
                                        .root = (int)(i % (size_t)sizes[s]),
                                        .in_place = place};
                    run_case(group, &c);
                }
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
    struct group *group = group_new(4);
    run_ranks(group, large_rank, &count);
    expect_all_ok(group);
    group_free(group);
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
