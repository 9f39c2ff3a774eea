/*
 * Conformance: streams, events across streams, callbacks, several threads,
 * copies between two devices of the plugin, and resets.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite.h"

/* ---- streams, events, callbacks ---- */

static void test_event_marks_completed_work(struct conformance *c)
{
    enum { COUNT = 1 << 18 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)),
             *out = calloc(COUNT, sizeof(uint32_t));
    accel_event *event;
    accel_ref ref;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i ^ 0x5a5a5a5au;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    /* Never recorded: complete. */
    assert_status(accel_event_query(event), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, COUNT), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, COUNT), ACCEL_OK);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    assert_status(accel_event_query(event), ACCEL_OK);
    assert_memory_equal(in, out, COUNT * sizeof(uint32_t));
    assert_status(accel_event_wait(event, ACCEL_WAIT_SPIN, ACCEL_WAIT_FOREVER),
                  ACCEL_OK);
    accel_event_destroy(event);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_stream_wait_event_orders_streams(struct conformance *c)
{
    enum { COUNT = 1 << 20 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)),
             *out = calloc(COUNT, sizeof(uint32_t));
    accel_stream *other;
    accel_event *event;
    accel_ref a, b;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i * 2654435761u;
    assert_status(accel_stream_create(c->device, &other), ACCEL_OK);
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &b), ACCEL_OK);
    /* Stream one fills a, then b from a; stream two waits for that, then reads b. */
    assert_status(accel_copy_in(c->stream, a, in, COUNT), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, b, 0, a, 0, accel_ref_bytes(a)),
                  ACCEL_OK);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_stream_wait_event(other, event), ACCEL_OK);
    assert_status(accel_copy_out(other, out, b, COUNT), ACCEL_OK);
    assert_status(accel_stream_sync(other), ACCEL_OK);
    assert_memory_equal(in, out, COUNT * sizeof(uint32_t));
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
    accel_event_destroy(event);
    accel_stream_destroy(other);
    free(in);
    free(out);
}

struct callback_record {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    accel_status status;
    const uint32_t *watched; /* host memory the copy before the callback fills */
    uint32_t seen;
};

static void on_complete(void *user, accel_status status)
{
    struct callback_record *r = user;

    pthread_mutex_lock(&r->lock);
    r->calls++;
    r->status = status;
    r->seen = r->watched[0];
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void test_callback_runs_once_after_the_work_before_it(struct conformance *c)
{
    struct callback_record record = {.status = ACCEL_ERR_DRIVER};
    uint32_t in[64], *out = NULL;
    accel_status status;
    accel_ref ref;

    skip_without_entry(c, 28, "host_func",
                       "the host offers no completion callbacks");
    pthread_mutex_init(&record.lock, NULL);
    pthread_cond_init(&record.cond, NULL);
    for (uint32_t i = 0; i < 64; i++)
        in[i] = 0xc0ffee00u + i;
    assert_status(accel_host_alloc(c->device, sizeof(in), (void **)&out),
                  ACCEL_OK);
    memset(out, 0, sizeof(in));
    record.watched = out;
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, 64), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, 64), ACCEL_OK);
    status = accel_stream_add_callback(c->stream, on_complete, &record);
    assert_status(status, ACCEL_OK);
    pthread_mutex_lock(&record.lock);
    while (record.calls == 0)
        pthread_cond_wait(&record.cond, &record.lock);
    pthread_mutex_unlock(&record.lock);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_int_equal(record.calls, 1);
    assert_status(record.status, ACCEL_OK);
    assert_int_equal(record.seen, in[0]);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_host_free(c->device, out);
    pthread_cond_destroy(&record.cond);
    pthread_mutex_destroy(&record.lock);
}

/* Several threads, each with its own stream, at once: any thread may submit. */
struct worker {
    struct conformance *c;
    unsigned seed;
    accel_status status;
    bool matched;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    enum { COUNT = 50000 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)),
             *out = calloc(COUNT, sizeof(uint32_t));
    accel_stream *stream = NULL;
    accel_ref ref = {0};

    w->status = in != NULL && out != NULL ? ACCEL_OK
                                          : ACCEL_ERR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; in != NULL && i < COUNT; i++)
        in[i] = i * 7u + w->seed;
    for (int round = 0; round < 8 && w->status == ACCEL_OK; round++) {
        if ((w->status = accel_stream_create(w->c->device, &stream)) != ACCEL_OK ||
            (w->status = accel_alloc(w->c->device, ACCEL_U32, COUNT, &ref)) !=
                ACCEL_OK ||
            (w->status = accel_copy_in(stream, ref, in, COUNT)) != ACCEL_OK ||
            (w->status = accel_copy_out(stream, out, ref, COUNT)) != ACCEL_OK ||
            (w->status = accel_stream_sync(stream)) != ACCEL_OK)
            break;
        w->matched = memcmp(in, out, COUNT * sizeof(uint32_t)) == 0;
        accel_free(w->c->device, ref);
        accel_stream_destroy(stream);
        stream = NULL;
        if (!w->matched)
            break;
    }
    accel_stream_destroy(stream);
    free(in);
    free(out);
    return NULL;
}

static void test_threads_submit_on_their_own_streams(struct conformance *c)
{
    struct worker workers[4];
    pthread_t threads[4];

    for (unsigned i = 0; i < 4; i++) {
        workers[i] = (struct worker){.c = c, .seed = i * 1000u};
        assert_int_equal(
            pthread_create(&threads[i], NULL, worker_main, &workers[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_status(workers[i].status, ACCEL_OK);
        assert_true(workers[i].matched);
    }
}

/* ---- reset ---- */

static void test_reset_makes_refs_stale_and_new_work_succeeds(struct conformance *c)
{
    const char *path = c->module_path;
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    accel_device_info after;
    uint32_t in[32] = {1, 2, 3}, out[32];
    accel_ref old, fresh;

    if (path != NULL && path[0] != '\0' && has_kernels(c)) {
        module = load_examples(c);
        assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    }
    assert_status(accel_alloc(c->device, ACCEL_U32, 32, &old), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, old, in, 32), ACCEL_OK);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_info_get(c->device, &after), ACCEL_OK);
    assert_true(after.generation > c->info.generation);
    assert_status(accel_ref_check(c->device, old), ACCEL_ERR_STALE_REF);
    assert_status(accel_copy_out(c->stream, out, old, 32), ACCEL_ERR_STALE_REF);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    /* The same stream, new memory. */
    assert_status(accel_alloc(c->device, ACCEL_U32, 32, &fresh), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, fresh, in, 32), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, fresh, 32), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof(in));
    assert_status(accel_free(c->device, fresh), ACCEL_OK);
    /* Modules survive a reset: the kernel found before runs after. */
    if (saxpy != NULL)
        run_saxpy(c, saxpy, 5000);
    accel_module_unload(module);
}

static void test_pinned_memory_survives_a_reset(struct conformance *c)
{
    enum { BYTES = 1 << 20 };
    unsigned char *pinned = NULL, *back = NULL;
    unsigned char *expected = malloc(BYTES);
    accel_ref before;

    assert_non_null(expected);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&pinned), ACCEL_OK);
    fill_pattern(pinned, BYTES, 11);
    memcpy(expected, pinned, BYTES);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &before), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, before, 0, pinned, BYTES),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    /* The same block, with what it held: a reset frees device memory, not pinned memory. */
    assert_memory_equal(pinned, expected, BYTES);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&back), ACCEL_OK);
    memset(back, 0, BYTES);
    round_trip_bytes(c, back, pinned, BYTES);
    assert_memory_equal(back, expected, BYTES);
    accel_host_free(c->device, back);
    accel_host_free(c->device, pinned);
    free(expected);
}

/* ---- several streams ---- */

/*
 * A chain across four streams: each waits for the event the one before
 * recorded, then copies that stream's buffer into its own. The last holds
 * the first's bytes only if every wait held.
 */
static void test_events_chain_work_across_several_streams(struct conformance *c)
{
    enum { STREAMS = 4, COUNT = 1 << 18 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)),
             *out = calloc(COUNT, sizeof(uint32_t));
    accel_stream *streams[STREAMS] = {c->stream};
    accel_event *events[STREAMS];
    accel_ref refs[STREAMS];

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i * 40503u + 17u;
    for (int s = 0; s < STREAMS; s++) {
        if (s > 0)
            assert_status(accel_stream_create(c->device, &streams[s]), ACCEL_OK);
        assert_status(accel_event_create(c->device, &events[s]), ACCEL_OK);
        assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &refs[s]),
                      ACCEL_OK);
    }
    assert_status(accel_copy_in(streams[0], refs[0], in, COUNT), ACCEL_OK);
    assert_status(accel_event_record(events[0], streams[0]), ACCEL_OK);
    for (int s = 1; s < STREAMS; s++) {
        assert_status(accel_stream_wait_event(streams[s], events[s - 1]),
                      ACCEL_OK);
        assert_status(accel_copy_on_device(streams[s], refs[s], 0, refs[s - 1],
                                           0, accel_ref_bytes(refs[s])),
                      ACCEL_OK);
        assert_status(accel_event_record(events[s], streams[s]), ACCEL_OK);
    }
    assert_status(accel_event_sync(events[STREAMS - 1]), ACCEL_OK);
    assert_status(
        accel_copy_out(streams[STREAMS - 1], out, refs[STREAMS - 1], COUNT),
        ACCEL_OK);
    assert_status(accel_stream_sync(streams[STREAMS - 1]), ACCEL_OK);
    assert_memory_equal(out, in, COUNT * sizeof(uint32_t));
    for (int s = 0; s < STREAMS; s++) {
        assert_status(accel_event_query(events[s]), ACCEL_OK);
        accel_event_destroy(events[s]);
        assert_status(accel_free(c->device, refs[s]), ACCEL_OK);
        if (s > 0)
            accel_stream_destroy(streams[s]);
    }
    free(in);
    free(out);
}

static void test_device_sync_waits_for_every_stream(struct conformance *c)
{
    enum { STREAMS = 3, COUNT = 100000 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t));
    uint32_t *out = calloc((size_t)STREAMS * COUNT, sizeof(uint32_t));
    accel_stream *streams[STREAMS];
    accel_ref refs[STREAMS];

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = ~i;
    for (int s = 0; s < STREAMS; s++) {
        assert_status(accel_stream_create(c->device, &streams[s]), ACCEL_OK);
        assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &refs[s]),
                      ACCEL_OK);
        assert_status(accel_copy_in(streams[s], refs[s], in, COUNT), ACCEL_OK);
        assert_status(
            accel_copy_out(streams[s], out + (size_t)s * COUNT, refs[s], COUNT),
            ACCEL_OK);
    }
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    for (int s = 0; s < STREAMS; s++) {
        assert_memory_equal(out + (size_t)s * COUNT, in,
                            COUNT * sizeof(uint32_t));
        assert_status(accel_free(c->device, refs[s]), ACCEL_OK);
        accel_stream_destroy(streams[s]);
    }
    free(in);
    free(out);
}

/* ---- two devices ---- */

/* `bytes` from `src` on one device to `dst` on the other, on `stream`, and back. */
static void peer_round_trip(struct conformance *c, accel_device *other,
                            size_t bytes)
{
    unsigned char *in = malloc(bytes), *out = calloc(1, bytes);
    accel_ref here, there, back;

    assert_non_null(in);
    assert_non_null(out);
    fill_pattern(in, bytes, 23);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, bytes, &here), ACCEL_OK);
    assert_status(accel_alloc(other, ACCEL_BYTE, bytes, &there), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, bytes, &back), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, here, 0, in, bytes), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, there, 0, here, 0, bytes),
                  ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, back, 0, there, 0, bytes),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out, back, 0, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(out, in, bytes);
    assert_status(accel_free(c->device, here), ACCEL_OK);
    assert_status(accel_free(other, there), ACCEL_OK);
    assert_status(accel_free(c->device, back), ACCEL_OK);
    free(in);
    free(out);
}

/*
 * Copies between two devices of the plugin: through copy_peer where the
 * table has it, else through copy_on_device with the other device's
 * address. Either way the bytes arrive.
 */
static void test_copies_between_two_devices_of_the_plugin(struct conformance *c)
{
    accel_device *other = NULL;

    if (c->plugin->device_count < 2)
        skip_because(
            "the plugin has %u device: copies between devices not tested",
            c->plugin->device_count);
    assert_status(accel_device_open(c->host, c->plugin->name,
                                    (c->index + 1) % c->plugin->device_count,
                                    &other),
                  ACCEL_OK);
    peer_round_trip(c, other, 1000);
    peer_round_trip(c, other, 3 << 20);
    accel_device_close(other);
}

/* ---- event timing ---- */

/* Skip a timing test on a plugin without event_elapsed (it is optional):
 * two completed events say so with ACCEL_ERR_NOT_SUPPORTED. */
static void skip_without_timing(struct conformance *c, accel_event *start,
                                accel_event *end)
{
    int64_t ns = 0;

    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(end), ACCEL_OK);
    if (accel_event_elapsed(start, end, &ns) != ACCEL_ERR_NOT_SUPPORTED)
        return;
    accel_event_destroy(end);
    accel_event_destroy(start);
    skip_because("the plugin cannot time events: test skipped");
}

static void test_event_elapsed_times_completed_work(struct conformance *c)
{
    enum { BYTES = 1 << 20 };
    unsigned char *host;
    accel_event *start, *end, *never;
    int64_t ns = -1;
    accel_ref ref;

    assert_status(accel_event_create(c->device, &start), ACCEL_OK);
    assert_status(accel_event_create(c->device, &end), ACCEL_OK);
    skip_without_timing(c, start, end);
    host = malloc(BYTES);
    assert_non_null(host);
    memset(host, 7, BYTES);
    assert_status(accel_event_create(c->device, &never), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &ref), ACCEL_OK);
    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    for (int i = 0; i < 8; i++)
        assert_status(accel_copy_to_device(c->stream, ref, 0, host, BYTES),
                      ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(end), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_OK);
    /* 8 MiB of copies take some time, and not a minute. */
    assert_true(ns > 0);
    assert_true(ns < 60 * (int64_t)1000000000);
    int64_t back = 0;
    assert_status(accel_event_elapsed(end, start, &back), ACCEL_OK);
    assert_true(back == -ns);
    assert_status(accel_event_elapsed(start, start, &back), ACCEL_OK);
    assert_true(back == 0);
    /* Never recorded; NULL arguments. */
    ns = 5;
    assert_status(accel_event_elapsed(start, never, &ns),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_true(ns == 0);
    assert_status(accel_event_elapsed(never, end, &ns),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_event_elapsed(NULL, end, &ns),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_event_elapsed(start, end, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_event_destroy(never);
    accel_event_destroy(end);
    accel_event_destroy(start);
    free(host);
}

/* A callback that holds its stream until the test lets it go. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
};

static void gate_wait(void *user, accel_status status)
{
    struct gate *gate = user;

    (void)status;
    pthread_mutex_lock(&gate->lock);
    while (!gate->open)
        pthread_cond_wait(&gate->cond, &gate->lock);
    pthread_mutex_unlock(&gate->lock);
}

static void
test_event_elapsed_of_unfinished_work_is_not_ready(struct conformance *c)
{
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                        false};
    accel_event *start, *end;
    accel_stream *other;
    int64_t ns = 5;

    assert_status(accel_event_create(c->device, &start), ACCEL_OK);
    assert_status(accel_event_create(c->device, &end), ACCEL_OK);
    skip_without_timing(c, start, end);
    assert_status(accel_stream_create(c->device, &other), ACCEL_OK);
    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(start), ACCEL_OK);
    /* `other` waits for an event that waits for a held callback. */
    accel_status added = accel_stream_add_callback(c->stream, gate_wait, &gate);
    if (added == ACCEL_ERR_NOT_SUPPORTED) {
        accel_stream_destroy(other);
        accel_event_destroy(end);
        accel_event_destroy(start);
        skip_because("no completion callbacks on this plugin: test skipped");
    }
    assert_status(added, ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_NOT_READY);
    assert_true(ns == 0);
    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_OK);
    assert_true(ns >= 0);
    accel_stream_destroy(other);
    accel_event_destroy(end);
    accel_event_destroy(start);
}

const struct conf_test conf_stream_tests[] = {
#define T(name)                                                                \
    {                                                                          \
#name, test_##name                                                     \
    }
    T(event_marks_completed_work),
    T(stream_wait_event_orders_streams),
    T(events_chain_work_across_several_streams),
    T(device_sync_waits_for_every_stream),
    T(callback_runs_once_after_the_work_before_it),
    T(threads_submit_on_their_own_streams),
    T(copies_between_two_devices_of_the_plugin),
    T(reset_makes_refs_stale_and_new_work_succeeds),
    T(pinned_memory_survives_a_reset),
    T(event_elapsed_times_completed_work),
    T(event_elapsed_of_unfinished_work_is_not_ready),
#undef T
};
const size_t conf_stream_test_count = sizeof(conf_stream_tests) /
                                      sizeof(conf_stream_tests[0]);
