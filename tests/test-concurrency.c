/*
 * Several threads submitting copies and frees to their own streams and to a
 * shared one while another thread compacts the pool: every result is
 * verified. Run under ThreadSanitizer by the tsan build (README).
 */
#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WORKERS 4
#define ROUNDS 20
#define BATCH 24
#define WORDS 16000

struct shared {
    accel_device *device;
    accel_stream *common;
    atomic_bool stop;
    atomic_int failures;
};

struct worker {
    struct shared *shared;
    int id;
};

static void fail_once(struct shared *s, const char *what, accel_status status)
{
    if (atomic_fetch_add(&s->failures, 1) == 0)
        print_error("%s: %s: %s\n", what, accel_status_name(status),
                    accel_last_error());
}

static void pattern(uint32_t *words, uint64_t count, uint32_t seed)
{
    for (uint64_t i = 0; i < count; i++)
        words[i] = seed ^ ((uint32_t)i * 2654435761u);
}

/* Read a ref back on `stream` and compare it with its pattern. */
static void verify(struct shared *s, accel_stream *stream, accel_ref ref,
                   uint32_t seed)
{
    uint32_t expect[WORDS], out[WORDS];
    pattern(expect, ref.count, seed);
    accel_status status = accel_copy_out(stream, out, ref, ref.count);
    if (status == ACCEL_OK)
        status = accel_stream_sync(stream);
    if (status != ACCEL_OK)
        fail_once(s, "copy out", status);
    else if (memcmp(expect, out, ref.count * sizeof out[0]) != 0)
        fail_once(s, "contents differ", ACCEL_ERR_COPY);
}

/* Allocate and fill one ref; count 0 on failure. */
static accel_ref make(struct shared *s, accel_stream *stream, uint32_t seed)
{
    uint32_t in[WORDS];
    accel_ref ref = {0};
    /* About 64 KiB each: 32 to a page, so a few rounds fill several. */
    uint64_t count = WORDS - (seed % 200);
    accel_status status = accel_alloc(s->device, ACCEL_U32, count, &ref);
    if (status != ACCEL_OK) {
        fail_once(s, "accel_alloc", status);
        return (accel_ref){0};
    }
    pattern(in, count, seed);
    status = accel_copy_in(stream, ref, in, count);
    if (status == ACCEL_OK)
        status = accel_stream_sync(stream);
    if (status != ACCEL_OK)
        fail_once(s, "copy in", status);
    return ref;
}

/*
 * Each round allocates a batch, checks some of it, frees most of it right
 * away (reads may still be in flight) and keeps a few: pages fill up, then
 * thin out, and the compactor moves the kept refs around while this thread
 * and the others use them.
 */
static void *work(void *arg)
{
    struct worker *w = arg;
    struct shared *s = w->shared;
    accel_stream *own = NULL;
    accel_status status = accel_stream_create(s->device, &own);
    if (status != ACCEL_OK) {
        fail_once(s, "accel_stream_create", status);
        return NULL;
    }
    accel_ref kept[ROUNDS];
    uint32_t kept_seed[ROUNDS];
    for (uint32_t round = 0; round < ROUNDS; round++) {
        accel_ref batch[BATCH];
        uint32_t seeds[BATCH];
        for (uint32_t i = 0; i < BATCH; i++) {
            seeds[i] = ((uint32_t)w->id << 24) ^ (round * BATCH + i);
            /* A third of the work goes through the stream all share. */
            batch[i] = make(s, i % 3 ? own : s->common, seeds[i]);
        }
        verify(s, round % 2 ? own : s->common, batch[round % BATCH],
               seeds[round % BATCH]);
        kept[round] = batch[0];
        kept_seed[round] = seeds[0];
        for (uint32_t i = 1; i < BATCH; i++) {
            if (batch[i].count != 0 && accel_free(s->device, batch[i]) != ACCEL_OK)
                fail_once(s, "accel_free", ACCEL_ERR_FREED_REF);
        }
    }
    for (uint32_t round = 0; round < ROUNDS; round++) {
        if (kept[round].count == 0)
            continue;
        verify(s, own, kept[round], kept_seed[round]);
        if (accel_free(s->device, kept[round]) != ACCEL_OK)
            fail_once(s, "accel_free kept", ACCEL_ERR_FREED_REF);
    }
    accel_stream_destroy(own);
    return NULL;
}

static void *compact(void *arg)
{
    struct shared *s = arg;
    while (!atomic_load(&s->stop)) {
        uint32_t pages = 0;
        accel_status status = accel_device_compact(s->device, &pages);
        if (status != ACCEL_OK)
            fail_once(s, "accel_device_compact", status);
        accel_memory_stats stats;
        accel_device_memory_stats(s->device, &stats);
    }
    return NULL;
}

/* A host with the null plugin alone, and its device 0 in s->device. */
static accel_host *open_null(struct shared *s)
{
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    support_clean_environment();
    assert_status(accel_host_create(&options, &host), ACCEL_OK);
    assert_status(accel_device_open(host, "null", 0, &s->device), ACCEL_OK);
    return host;
}

static void test_threads_submit_and_free_while_another_compacts(void **state)
{
    (void)state;
    struct shared s = {0};
    accel_host *host = open_null(&s);
    assert_status(accel_stream_create(s.device, &s.common), ACCEL_OK);
    /* A high threshold makes pages outdated often: many relocations. */
    accel_pool_policy eager = {.automatic = true, .outdated_percent = 60};
    assert_status(accel_device_set_pool_policy(s.device, &eager), ACCEL_OK);

    pthread_t threads[WORKERS], compactor;
    struct worker workers[WORKERS];
    assert_int_equal(pthread_create(&compactor, NULL, compact, &s), 0);
    for (int i = 0; i < WORKERS; i++) {
        workers[i] = (struct worker){.shared = &s, .id = i};
        assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    atomic_store(&s.stop, true);
    pthread_join(compactor, NULL);

    assert_int_equal(atomic_load(&s.failures), 0);
    assert_status(accel_device_sync(s.device), ACCEL_OK);
    accel_memory_stats stats;
    assert_status(accel_device_memory_stats(s.device, &stats), ACCEL_OK);
    assert_int_equal(stats.slices, 0);
    assert_int_equal(stats.pending_frees, 0);
    /* The run is only worth something if slices really moved under it. */
    assert_true(stats.relocations > 0);
    accel_stream_destroy(s.common);
    accel_device_close(s.device);
    accel_host_destroy(host);
}

/* ---- event queries, which take no lock, against resets ---- */

#define POLLERS 2
#define RESETS 200

struct poller {
    struct shared *shared;
    accel_stream *stream;
    accel_event *event;
    atomic_int answered; /* queries that reached the plugin and came back */
};

static void *poll_events(void *arg)
{
    struct poller *p = arg;
    struct shared *s = p->shared;
    while (!atomic_load(&s->stop)) {
        accel_status status = accel_event_record(p->event, p->stream);
        if (status != ACCEL_OK && status != ACCEL_ERR_DEVICE_LOST)
            fail_once(s, "accel_event_record", status);
        for (int i = 0; i < 64; i++) {
            status = accel_event_query(p->event);
            if (status == ACCEL_OK || status == ACCEL_NOT_READY)
                atomic_fetch_add(&p->answered, 1);
            else if (status != ACCEL_ERR_DEVICE_LOST)
                fail_once(s, "accel_event_query", status);
        }
    }
    return NULL;
}

/*
 * A reset destroys and remakes every plugin event while other threads
 * query theirs without the device lock. ASan would see a query reaching a
 * destroyed event, TSan a query racing with its replacement.
 */
static void test_event_queries_race_with_resets(void **state)
{
    (void)state;
    struct shared s = {0};
    accel_host *host = open_null(&s);

    struct poller pollers[POLLERS];
    pthread_t threads[POLLERS];
    for (int i = 0; i < POLLERS; i++) {
        pollers[i] = (struct poller){.shared = &s};
        assert_status(accel_stream_create(s.device, &pollers[i].stream),
                      ACCEL_OK);
        assert_status(accel_event_create(s.device, &pollers[i].event), ACCEL_OK);
        assert_int_equal(
            pthread_create(&threads[i], NULL, poll_events, &pollers[i]), 0);
    }
    for (int i = 0; i < RESETS; i++) {
        accel_status status = accel_device_reset(s.device);
        if (status != ACCEL_OK)
            fail_once(&s, "accel_device_reset", status);
        /* Let the pollers in between resets. */
        for (int spin = 0;
             spin < 1000 && atomic_load(&pollers[i % POLLERS].answered) == 0;
             spin++)
            sched_yield();
    }
    atomic_store(&s.stop, true);
    for (int i = 0; i < POLLERS; i++) {
        pthread_join(threads[i], NULL);
        /* The device is whole again: queries answer. */
        assert_status(accel_event_query(pollers[i].event), ACCEL_OK);
        assert_true(atomic_load(&pollers[i].answered) > 0);
        accel_event_destroy(pollers[i].event);
        accel_stream_destroy(pollers[i].stream);
    }
    assert_int_equal(atomic_load(&s.failures), 0);
    accel_device_close(s.device);
    accel_host_destroy(host);
}

/* A few queries, then the thread ends: its query slot goes with it. */
static void *query_and_exit(void *arg)
{
    struct poller *p = arg;
    for (int i = 0; i < 16; i++) {
        accel_status status = accel_event_query(p->event);
        if (status == ACCEL_OK || status == ACCEL_NOT_READY)
            atomic_fetch_add(&p->answered, 1);
        else if (status != ACCEL_ERR_DEVICE_LOST)
            fail_once(p->shared, "accel_event_query", status);
    }
    return NULL;
}

/*
 * Each thread that queries without the lock has a slot a reset looks at
 * (recovery.h); threads that come and go while resets run must neither
 * leave a slot behind that a reset waits on nor race with the reset's walk
 * of the slots (TSan, ASan).
 */
static void test_query_threads_that_exit_leave_resets_working(void **state)
{
    (void)state;
    struct shared s = {0};
    accel_host *host = open_null(&s);
    struct poller p = {.shared = &s};
    assert_status(accel_stream_create(s.device, &p.stream), ACCEL_OK);
    assert_status(accel_event_create(s.device, &p.event), ACCEL_OK);
    assert_status(accel_event_record(p.event, p.stream), ACCEL_OK);
    for (int round = 0; round < 20; round++) {
        pthread_t threads[POLLERS];
        for (int i = 0; i < POLLERS; i++)
            assert_int_equal(
                pthread_create(&threads[i], NULL, query_and_exit, &p), 0);
        accel_status status = accel_device_reset(s.device);
        if (status != ACCEL_OK)
            fail_once(&s, "accel_device_reset", status);
        for (int i = 0; i < POLLERS; i++)
            pthread_join(threads[i], NULL);
        /* The reset forgot the record: make it again for the next round. */
        assert_status(accel_event_record(p.event, p.stream), ACCEL_OK);
    }
    assert_status(accel_device_reset(s.device), ACCEL_OK);
    assert_status(accel_event_record(p.event, p.stream), ACCEL_OK);
    assert_status(accel_stream_sync(p.stream), ACCEL_OK);
    assert_status(accel_event_query(p.event), ACCEL_OK);
    assert_int_equal(atomic_load(&s.failures), 0);
    accel_event_destroy(p.event);
    accel_stream_destroy(p.stream);
    accel_device_close(s.device);
    accel_host_destroy(host);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_submit_and_free_while_another_compacts),
        cmocka_unit_test(test_event_queries_race_with_resets),
        cmocka_unit_test(test_query_threads_that_exit_leave_resets_working),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
