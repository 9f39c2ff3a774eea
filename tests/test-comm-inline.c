/*
 * Collectives run on the caller's thread (host/comm_gate.c, "on the
 * caller's thread"): ranks as threads of this process, one thread each,
 * with ACCEL_COMM_INLINE=1 over the `host` provider on null devices.
 *
 * On an idle stream the call returns once the collective is done and a
 * kernel enqueued after it reads its result; behind a busy stream it still
 * waits its turn; a command another thread enqueues while it runs waits
 * for it; an abort ends it, and the failure is the stream's, as for a
 * gated one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <time.h>

#include <accel/comm.h>

#include "support.h"

#define WORDS 64u

struct world {
    accel_host *host;
    accel_device *dev[2];
    accel_stream *stream[2];
    accel_comm *comm[2];
    accel_module *module[2];
    accel_kernel *add[2];
    accel_ref x[2];
};

static void sleep_ms(unsigned ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Two ranks as threads; `delay_us` slows every command of the null plugin
 * (ACCEL_NULL_DELAY_US), so that a stream stays busy. */
static void world_open(struct world *w, const char *delay_us)
{
    memset(w, 0, sizeof *w);
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH ":" COMM_HOST_PLUGIN_PATH, 1);
    setenv("ACCEL_BACKEND", "null", 1);
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    setenv("ACCEL_COMM", "host", 1);
    setenv("ACCEL_COMM_INLINE", "1", 1);
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
    if (delay_us != NULL)
        setenv("ACCEL_NULL_DELAY_US", delay_us, 1);
    assert_status(accel_host_create(NULL, &w->host), ACCEL_OK);
    unsetenv("ACCEL_NULL_DELAY_US");
    for (int r = 0; r < 2; r++) {
        assert_status(accel_device_open(w->host, "null", (uint32_t)r, &w->dev[r]),
                      ACCEL_OK);
        assert_status(accel_stream_create(w->dev[r], &w->stream[r]), ACCEL_OK);
        assert_status(
            accel_module_load_file(w->dev[r], TESTING_CPU_IMAGE, &w->module[r]),
            ACCEL_OK);
        assert_status(accel_kernel_get(w->module[r], "add_u32", &w->add[r]),
                      ACCEL_OK);
        assert_status(accel_alloc(w->dev[r], ACCEL_U32, WORDS, &w->x[r]),
                      ACCEL_OK);
    }
    assert_status(accel_comm_create_local(w->dev, 2, w->comm), ACCEL_OK);
    unsetenv("ACCEL_COMM_INLINE");
}

static void world_close(struct world *w)
{
    for (int r = 0; r < 2; r++)
        accel_comm_destroy(w->comm[r]);
    for (int r = 0; r < 2; r++) {
        accel_stream_destroy(w->stream[r]);
        accel_device_close(w->dev[r]);
    }
    accel_host_destroy(w->host);
}

static accel_status launch_add(struct world *w, int r, uint32_t value)
{
    uint32_t n = WORDS;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(w->x[r]),
                        ACCEL_ARG_VALUE(value)};
    return accel_launch(w->stream[r], w->add[r], (accel_dim3){1, 1, 1},
                        (accel_dim3){WORDS, 1, 1}, 0, args, 3);
}

/* x = rank + 1 everywhere, waited for: the stream is idle afterwards. */
static void fill_rank(struct world *w, int r)
{
    uint32_t in[WORDS];
    for (uint32_t i = 0; i < WORDS; i++)
        in[i] = (uint32_t)r + 1;
    assert_status(accel_copy_in(w->stream[r], w->x[r], in, WORDS), ACCEL_OK);
    assert_status(accel_stream_sync(w->stream[r]), ACCEL_OK);
}

static void expect_all(const uint32_t *out, uint32_t want)
{
    for (uint32_t i = 0; i < WORDS; i++)
        assert_int_equal(out[i], want);
}

/* Rank 1: join the all-reduce late, then read the result back. */
struct late {
    struct world *w;
    unsigned ms;
    accel_status status;
    uint32_t out[WORDS];
};

static void *late_rank(void *arg)
{
    struct late *l = arg;
    struct world *w = l->w;
    sleep_ms(l->ms);
    l->status = accel_allreduce(w->comm[1], w->stream[1], w->x[1], w->x[1],
                                WORDS, ACCEL_REDUCE_SUM);
    if (l->status == ACCEL_OK)
        l->status = accel_copy_out(w->stream[1], l->out, w->x[1], WORDS);
    if (l->status == ACCEL_OK)
        l->status = accel_stream_sync(w->stream[1]);
    return NULL;
}

static void test_on_an_idle_stream_the_call_returns_it_done(void **state)
{
    (void)state;
    struct world w;
    world_open(&w, NULL);
    fill_rank(&w, 0);
    fill_rank(&w, 1);
    uint64_t address = 0;
    assert_status(accel_ref_native(w.dev[0], w.x[0], &address), ACCEL_OK);
    const volatile uint32_t *host = (const volatile uint32_t *)(uintptr_t)address;
    struct late l = {.w = &w, .ms = 100};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, late_rank, &l), 0);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], w.x[0], w.x[0], WORDS,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    /* Done on return, before any sync: rank 1 joined in the meantime. */
    uint32_t seen[WORDS];
    for (uint32_t i = 0; i < WORDS; i++)
        seen[i] = host[i];
    pthread_join(thread, NULL);
    expect_all(seen, 1 + 2);
    /* A kernel enqueued after it reads its result. */
    uint32_t out[WORDS];
    assert_status(launch_add(&w, 0, 5), ACCEL_OK);
    assert_status(accel_copy_out(w.stream[0], out, w.x[0], WORDS), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    expect_all(out, 1 + 2 + 5);
    assert_status(l.status, ACCEL_OK);
    expect_all(l.out, 1 + 2);
    world_close(&w);
}

/* Each rank: copy in, a kernel, the all-reduce, a kernel, copy out; every
 * command of the null plugin slowed, so the all-reduce finds its stream
 * busy. */
struct busy {
    struct world *w;
    int rank;
    uint32_t out[WORDS];
};

static void *busy_rank(void *arg)
{
    struct busy *b = arg;
    struct world *w = b->w;
    int r = b->rank;
    uint32_t in[WORDS];
    for (uint32_t i = 0; i < WORDS; i++)
        in[i] = (uint32_t)r + 1;
    assert_status(accel_copy_in(w->stream[r], w->x[r], in, WORDS), ACCEL_OK);
    assert_status(launch_add(w, r, 5), ACCEL_OK);
    assert_status(accel_allreduce(w->comm[r], w->stream[r], w->x[r], w->x[r],
                                  WORDS, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(launch_add(w, r, 1), ACCEL_OK);
    assert_status(accel_copy_out(w->stream[r], b->out, w->x[r], WORDS), ACCEL_OK);
    assert_status(accel_stream_sync(w->stream[r]), ACCEL_OK);
    return NULL;
}

static void test_behind_a_busy_stream_it_keeps_its_place(void **state)
{
    (void)state;
    struct world w;
    world_open(&w, "20000");
    struct busy b[2] = {{.w = &w, .rank = 0}, {.w = &w, .rank = 1}};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, busy_rank, &b[1]), 0);
    busy_rank(&b[0]);
    pthread_join(thread, NULL);
    for (int r = 0; r < 2; r++)
        expect_all(b[r].out, (1 + 5) + (2 + 5) + 1);
    world_close(&w);
}

/* Another thread's commands on rank 0's stream, enqueued while rank 0's
 * all-reduce runs on its caller, come after it. */
struct other {
    struct world *w;
    atomic_bool *calling;
    accel_status status;
    uint32_t out[WORDS];
};

static void *other_thread(void *arg)
{
    struct other *o = arg;
    while (!atomic_load(o->calling))
        sleep_ms(1);
    sleep_ms(50); /* rank 0 is inside accel_allreduce, rank 1 not yet */
    o->status = launch_add(o->w, 0, 5);
    if (o->status == ACCEL_OK)
        o->status = accel_copy_out(o->w->stream[0], o->out, o->w->x[0], WORDS);
    if (o->status == ACCEL_OK)
        o->status = accel_stream_sync(o->w->stream[0]);
    return NULL;
}

static void test_a_command_of_another_thread_waits_for_it(void **state)
{
    (void)state;
    struct world w;
    world_open(&w, NULL);
    fill_rank(&w, 0);
    fill_rank(&w, 1);
    atomic_bool calling = false;
    struct late l = {.w = &w, .ms = 400};
    struct other o = {.w = &w, .calling = &calling};
    pthread_t threads[2];
    assert_int_equal(pthread_create(&threads[0], NULL, late_rank, &l), 0);
    assert_int_equal(pthread_create(&threads[1], NULL, other_thread, &o), 0);
    atomic_store(&calling, true);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], w.x[0], w.x[0], WORDS,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    pthread_join(threads[1], NULL);
    pthread_join(threads[0], NULL);
    assert_status(o.status, ACCEL_OK);
    expect_all(o.out, 1 + 2 + 5);
    assert_status(l.status, ACCEL_OK);
    expect_all(l.out, 1 + 2);
    world_close(&w);
}

struct aborter {
    accel_comm *comm;
    atomic_bool aborted;
};

static void *abort_later(void *arg)
{
    struct aborter *a = arg;
    sleep_ms(50);
    atomic_store(&a->aborted, true);
    accel_comm_abort(a->comm);
    return NULL;
}

static void test_an_abort_ends_it_and_the_stream_reports_it(void **state)
{
    (void)state;
    struct world w;
    world_open(&w, NULL);
    fill_rank(&w, 0);
    /* Rank 1 never joins: only the abort ends the wait. */
    struct aborter a = {.comm = w.comm[0]};
    atomic_init(&a.aborted, false);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, abort_later, &a), 0);
    accel_status status = accel_allreduce(w.comm[0], w.stream[0], w.x[0],
                                          w.x[0], WORDS, ACCEL_REDUCE_SUM);
    bool ran_until_abort = atomic_load(&a.aborted);
    pthread_join(thread, NULL);
    assert_status(status, ACCEL_OK);
    assert_true(ran_until_abort);
    /* The stream goes on; its sync reports the failure once. */
    uint32_t out[WORDS];
    assert_status(launch_add(&w, 0, 5), ACCEL_OK);
    assert_status(accel_copy_out(w.stream[0], out, w.x[0], WORDS), ACCEL_OK);
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "accel_comm_abort");
    assert_status(accel_stream_sync(w.stream[0]), ACCEL_OK);
    expect_all(out, 1 + 5);
    assert_status(accel_allreduce(w.comm[0], w.stream[0], w.x[0], w.x[0], WORDS,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_ERR_COMM_ABORTED);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_an_idle_stream_the_call_returns_it_done),
        cmocka_unit_test(test_behind_a_busy_stream_it_keeps_its_place),
        cmocka_unit_test(test_a_command_of_another_thread_waits_for_it),
        cmocka_unit_test(test_an_abort_ends_it_and_the_stream_reports_it),
    };
    return cmocka_run_group_tests_name("comm-inline", tests, NULL, NULL);
}
