/*
 * The `host` communication provider in loopback, through its table: ranks
 * as threads (1, 2, 3, 4, 8), every operation, element type and reduce op
 * against a serial reference, in place, mismatches, send/recv, deadlines,
 * abort and split.
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

#include <pthread.h>
#include <time.h>

#include "comm-host-harness.h"
#include "reduce.h"

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
        .deadline_ns = deadline_in(60),
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

/* Valgrind runs threads one at a time, 20-50x slower: there, only 2 and 3
 * ranks (a power of two and not). */
static bool size_tested(int size)
{
    return !under_valgrind || size == 2 || size == 3;
}

static uint64_t large_count(void)
{
    return under_valgrind ? 4099 : (1u << 20) + 3;
}

static void test_allreduce_sum_f32_matches_serial_reference(void **state)
{
    (void)state;
    const uint64_t counts[] = {0, 1, 7, 1000, large_count()};
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        if (!size_tested(sizes[s]))
            continue;
        struct group *group = group_new(sizes[s]);
        /* The large count at 3 and 8 ranks only, to keep the test short. */
        size_t count_n = sizeof counts / sizeof counts[0];
        if (sizes[s] != 3 && sizes[s] != 8)
            count_n--;
        for (size_t i = 0; i < count_n; i++) {
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
        if (!size_tested(sizes[s]))
            continue;
        struct group *group = group_new(sizes[s]);
        run_every_case(group, 7);
        run_every_case(group, 1000);
        group_free(group);
    }
}

static void run_placements(struct group *group, uint64_t count)
{
    static const uint32_t kinds[] = {ACCEL_COMM_ALLREDUCE, ACCEL_COMM_REDUCE,
                                     ACCEL_COMM_REDUCE_SCATTER,
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
 * share of the larger buffer), at every size, and a larger count at a
 * number of ranks that is not a power of two. */
static void test_every_kind_in_place_and_at_size(void **state)
{
    (void)state;
    const uint64_t counts[] = {0, 1, 7, 1000};
    for (size_t s = 0; s < SIZE_COUNT; s++) {
        if (!size_tested(sizes[s]))
            continue;
        struct group *group = group_new(sizes[s]);
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            run_placements(group, counts[i]);
        if (sizes[s] == 3)
            run_placements(group, under_valgrind ? 4099 : (1u << 16) + 3);
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
        .deadline_ns = deadline_in(60),
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

/* ---- mismatches, point to point ---- */

struct mismatch {
    struct op_case c;
    int odd_rank;
    uint64_t odd_count;
    uint32_t odd_kind;
    uint32_t odd_type;
    int odd_root;
    uint32_t odd_memory;
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
        .memory = rank == m->odd_rank ? m->odd_memory : ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)buffer,
        .recv = (uint64_t)(uintptr_t)out,
        .deadline_ns = deadline_in(60),
    };
    group->status[rank] = table->submit(group->comms[rank], &op);
    snprintf(group->errors[rank], sizeof group->errors[0], "%s", last_error);
}

/* Every rank fails with `status`. A mismatch names both ranks' operations
 * (`mine` and `theirs`) everywhere; a refused rank gives its own reason
 * (`mine`), the others say it refused (`theirs`). */
static void expect_refusal(struct group *group, struct mismatch *m,
                           accel_status status, const char *mine,
                           const char *theirs)
{
    run_ranks(group, mismatch_rank, m);
    for (int r = 0; r < group->size; r++) {
        const char *first = mine, *second = theirs;
        if (status != ACCEL_ERR_INVALID_ARGUMENT)
            first = second = r == m->odd_rank ? mine : theirs;
        assert_int_equal(group->status[r], status);
        if (strstr(group->errors[r], first) == NULL ||
            strstr(group->errors[r], second) == NULL)
            fail_msg("rank %d: '%s' lacks '%s' or '%s'", r, group->errors[r],
                     first, second);
        group->status[r] = ACCEL_OK;
    }
}

static void expect_mismatch(struct group *group, struct mismatch *m,
                            const char *mine, const char *theirs)
{
    expect_refusal(group, m, ACCEL_ERR_INVALID_ARGUMENT, mine, theirs);
}

static void test_mismatch_is_an_error_on_every_rank(void **state)
{
    (void)state;
    struct group *group = group_new(3);
    struct mismatch m = {
        .c = {.kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32, .count = 40},
        .odd_rank = 2,
        .odd_kind = ACCEL_COMM_ALLREDUCE,
        .odd_type = ACCEL_F32,
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
    /* A rank whose own arguments are refused tells the others, at once. */
    m.odd_root = 0;
    m.odd_memory = ACCEL_NATIVE_CUDA;
    expect_refusal(group, &m, ACCEL_ERR_NOT_SUPPORTED,
                   "buffers must be host pointers",
                   "rank 1 could not take part in broadcast");
    /* The group is still whole. */
    struct op_case c = {
        .kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32, .count = 100};
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
        .deadline_ns = deadline_in(60),
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
                    if (got[i] !=
                        (uint32_t)(peer * 1000003 + m * 7919) + (uint32_t)i)
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
        accel_status status = p2p(group->comms[rank],
                                  rank == 0 ? ACCEL_COMM_SEND : ACCEL_COMM_RECV,
                                  data, rank == 0 ? 10 : 11, ACCEL_U32, peer);
        if (status != ACCEL_ERR_INVALID_ARGUMENT ||
            strstr(last_error, rank == 0 ? "which receives 11 u32"
                                         : "which sends 10 u32") == NULL)
            rank_failed(group, rank, ACCEL_ERR_DRIVER,
                        "mismatch not refused: %d %s", status, last_error);
        status = p2p(group->comms[rank],
                     rank == 0 ? ACCEL_COMM_SEND : ACCEL_COMM_RECV, data, 3,
                     ACCEL_U32, peer);
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
    assert_non_null(
        strstr(group->errors[0], "comm_abort was called on rank 1"));
    group_free(group);
}

/* ---- a rank bound to a GPU, its buffers staged by the host ---- */

static accel_status no_broadcast(void *ctx, void *data, size_t bytes, int root)
{
    (void)ctx, (void)data, (void)bytes, (void)root;
    return ACCEL_ERR_DRIVER;
}

static accel_status no_allgather(void *ctx, const void *send, void *out,
                                 size_t bytes)
{
    (void)ctx, (void)send, (void)out, (void)bytes;
    return ACCEL_ERR_DRIVER;
}

static void test_gpu_rank_takes_host_pointers_only(void **state)
{
    (void)state;
    struct accel_comm_bootstrap unused = {NULL, no_broadcast, no_allgather};
    struct accel_comm_init init = {
        .struct_size = sizeof init,
        .size = 1,
        .local_size = 1,
        .device = {.struct_size = sizeof init.device, .kind = ACCEL_NATIVE_CUDA},
        .bootstrap = &unused,
    };
    accel_comm_handle *comm = NULL;
    assert_int_equal(table->comm_create(provider, &init, &comm), ACCEL_OK);
    float send[4] = {1, 2, 3, 4}, recv[4] = {0};
    struct accel_comm_op op = {
        .struct_size = sizeof op,
        .kind = ACCEL_COMM_ALLREDUCE,
        .type = ACCEL_F32,
        .count = 4,
        .memory = ACCEL_NATIVE_CPU,
        .send = (uint64_t)(uintptr_t)send,
        .recv = (uint64_t)(uintptr_t)recv,
        .deadline_ns = deadline_in(60),
    };
    assert_int_equal(table->submit(comm, &op), ACCEL_OK);
    assert_memory_equal(send, recv, sizeof send);
    op.memory = ACCEL_NATIVE_CUDA;
    assert_int_equal(table->submit(comm, &op), ACCEL_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(last_error, "host pointers"));
    assert_int_equal(table->accepts_memory(provider, ACCEL_NATIVE_CUDA),
                     ACCEL_ERR_NOT_SUPPORTED);
    table->comm_destroy(comm);
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
                               .recv = (uint64_t)(uintptr_t)place,
                               .deadline_ns = deadline_in(60)};
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
    struct op_case c = {
        .kind = ACCEL_COMM_ALLREDUCE, .type = ACCEL_F32, .count = 10};
    run_case(group, &c);
    group_free(group);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_sum_f32_matches_serial_reference),
        cmocka_unit_test(test_every_kind_type_and_op_matches_serial_reference),
        cmocka_unit_test(test_every_kind_in_place_and_at_size),
        cmocka_unit_test(test_allreduce_of_64_mib),
        cmocka_unit_test(test_mismatch_is_an_error_on_every_rank),
        cmocka_unit_test(test_send_recv_in_order_and_refused_on_mismatch),
        cmocka_unit_test(test_missing_rank_times_out_the_others),
        cmocka_unit_test(test_abort_wakes_every_waiting_rank),
        cmocka_unit_test(test_gpu_rank_takes_host_pointers_only),
        cmocka_unit_test(test_split_by_color_and_key),
    };
    /* ACCEL_TEST_FILTER=name runs the tests that match (cmocka's pattern). */
    if (getenv("ACCEL_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("ACCEL_TEST_FILTER"));
    return cmocka_run_group_tests(tests, comm_host_setup, comm_host_teardown);
}
