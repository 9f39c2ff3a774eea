/*
 * Stress: several threads on two null devices, for a bounded time, mixing
 * allocations, frees, staged copies both ways, device copies within and
 * between the devices, launches, callbacks, events, pinned memory and
 * compactions. Every result is verified against what the thread wrote,
 * every callback must run exactly once and with success, and at the end
 * the pools are empty and the plugin reports nothing left behind.
 *
 * STRESS_SECONDS sets how long it runs (2 by default); a slow run goes on
 * until each thread has done a few hundred operations. STRESS_VERBOSE
 * prints how much it did. Run under
 * ThreadSanitizer, AddressSanitizer and valgrind by those passes (README).
 */
#include "support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEVICES 2
#define THREADS 6
#define MAX_REFS 24
#define MAX_WORDS 20000u
#define MAX_CALLBACKS 16384
#define OPS 10
#define MIN_OPS 250u /* per thread, however slow the run */
#define HARD_LIMIT_NS 120000000000ull

struct record {
    accel_ref ref;
    int device;         /* which of the shared devices holds it */
    uint32_t seed, add; /* it holds fill(seed) + add */
};

struct callback_record {
    atomic_int runs;
    atomic_int status;
};

struct shared {
    accel_host *host;
    accel_device *device[DEVICES];
    accel_stream *common[DEVICES]; /* streams every thread uses too */
    accel_module *module[DEVICES];
    accel_kernel *add[DEVICES];
    uint64_t deadline_ns;
    uint64_t hard_deadline_ns;
    atomic_int failures;
    atomic_ullong ops[OPS];
};

struct worker {
    struct shared *s;
    int id;
    uint64_t rng;
    accel_stream *stream[DEVICES]; /* its own, one per device */
    accel_event *event[DEVICES];
    struct record refs[MAX_REFS];
    int count;
    struct callback_record callbacks[MAX_CALLBACKS];
    int callbacks_added;
    uint32_t in[MAX_WORDS], out[MAX_WORDS];
};

static char *scratch;
static char report_path[4200];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t next_random(struct worker *w)
{
    /* xorshift64*: good enough to mix the operations, and reproducible. */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return (uint32_t)((w->rng * 2685821657736338717ull) >> 32);
}

static void fill(uint32_t *words, uint64_t count, uint32_t seed, uint32_t add)
{
    for (uint64_t i = 0; i < count; i++)
        words[i] = ((seed * 2654435761u) ^ ((uint32_t)i * 40503u)) + add;
}

static bool holds(const uint32_t *words, uint64_t count, uint32_t seed,
                  uint32_t add)
{
    for (uint64_t i = 0; i < count; i++) {
        if (words[i] != ((seed * 2654435761u) ^ ((uint32_t)i * 40503u)) + add)
            return false;
    }
    return true;
}

static bool check(struct worker *w, accel_status status, const char *what)
{
    if (status == ACCEL_OK)
        return true;
    if (atomic_fetch_add(&w->s->failures, 1) == 0)
        print_error("thread %d: %s: %s: %s\n", w->id, what,
                    accel_status_name(status), accel_last_error());
    return false;
}

static void mismatch(struct worker *w, const char *what)
{
    if (atomic_fetch_add(&w->s->failures, 1) == 0)
        print_error("thread %d: %s came back wrong\n", w->id, what);
}

static void on_callback(void *user, accel_status status)
{
    struct callback_record *record = user;
    atomic_store(&record->status, (int)status);
    atomic_fetch_add(&record->runs, 1);
}

/* ---- operations; each leaves every record's contents as recorded ---- */

/*
 * A stream of the record's device: the thread's own, now and then the
 * shared one. The thread's own stream is synced first, since the record's
 * earlier work is there, and the caller syncs the shared one before the
 * record goes back to its own.
 */
static accel_stream *pick_stream(struct worker *w, int device, bool *out_shared)
{
    *out_shared = next_random(w) % 4 == 0 &&
                  check(w, accel_stream_sync(w->stream[device]), "sync own");
    return *out_shared ? w->s->common[device] : w->stream[device];
}

static void op_alloc(struct worker *w)
{
    if (w->count == MAX_REFS)
        return;
    int device = (int)(next_random(w) % DEVICES);
    /* Mostly 48 to 64 KiB, one pool class of 32 slices a page, so that
     * pages fill and thin out and the pool moves slices; now and then any
     * size. */
    uint32_t words = next_random(w) % 4 != 0 ? 12289 + next_random(w) % 4096
                                             : 1 + next_random(w) % MAX_WORDS;
    struct record r = {.device = device, .seed = next_random(w)};
    if (!check(w, accel_alloc(w->s->device[device], ACCEL_U32, words, &r.ref),
               "accel_alloc"))
        return;
    bool shared;
    accel_stream *stream = pick_stream(w, device, &shared);
    fill(w->in, words, r.seed, 0);
    /* Staged: returns once the source has been read. */
    if (!check(w, accel_copy_in(stream, r.ref, w->in, words), "copy in") ||
        (shared && !check(w, accel_stream_sync(stream), "sync shared"))) {
        accel_free(w->s->device[device], r.ref);
        return;
    }
    w->refs[w->count++] = r;
}

static void op_verify(struct worker *w, struct record *r)
{
    bool shared;
    accel_stream *stream = pick_stream(w, r->device, &shared);
    memset(w->out, 0, r->ref.count * sizeof(uint32_t));
    if (check(w, accel_copy_out(stream, w->out, r->ref, r->ref.count),
              "copy out") &&
        !holds(w->out, r->ref.count, r->seed, r->add))
        mismatch(w, "a ref");
}

static void op_launch(struct worker *w, struct record *r)
{
    uint32_t n = (uint32_t)r->ref.count, value = 1 + next_random(w) % 1000;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(r->ref),
                        ACCEL_ARG_VALUE(value)};
    if (check(w,
              accel_launch(w->stream[r->device], w->s->add[r->device],
                           (accel_dim3){(n + 127) / 128, 1, 1},
                           (accel_dim3){128, 1, 1}, 0, args, 3),
              "accel_launch"))
        r->add += value;
}

/* A copy of a record, on its device or (through the plugin) the other. */
static void op_copy(struct worker *w, struct record *src, bool across)
{
    if (w->count == MAX_REFS)
        return;
    struct record dst = *src;
    dst.device = across ? 1 - src->device : src->device;
    if (!check(w,
               accel_alloc(w->s->device[dst.device], ACCEL_U32, src->ref.count,
                           &dst.ref),
               "accel_alloc (copy)"))
        return;
    /* Across devices the copy has completed on return; on one device the
     * destination's later work is on the same stream. */
    if (!check(w,
               accel_copy_on_device(w->stream[src->device], dst.ref, 0,
                                    src->ref, 0, accel_ref_bytes(src->ref)),
               across ? "copy between devices" : "copy on device")) {
        accel_free(w->s->device[dst.device], dst.ref);
        return;
    }
    w->refs[w->count++] = dst;
}

static void op_free(struct worker *w, int index)
{
    struct record *r = &w->refs[index];
    /* Often right after a launch on it: the drop queue waits for it. */
    check(w, accel_free(w->s->device[r->device], r->ref), "accel_free");
    w->refs[index] = w->refs[--w->count];
}

static void op_callback(struct worker *w)
{
    if (w->callbacks_added == MAX_CALLBACKS)
        return;
    int device = (int)(next_random(w) % DEVICES);
    struct callback_record *record = &w->callbacks[w->callbacks_added];
    if (check(w, accel_stream_add_callback(w->stream[device], on_callback, record),
              "accel_stream_add_callback"))
        w->callbacks_added++;
}

static void op_event(struct worker *w)
{
    int device = (int)(next_random(w) % DEVICES);
    if (!check(w, accel_event_record(w->event[device], w->stream[device]),
               "accel_event_record"))
        return;
    accel_status status = accel_event_query(w->event[device]);
    if (status != ACCEL_NOT_READY)
        check(w, status, "accel_event_query");
    check(w,
          accel_event_wait(w->event[device],
                           next_random(w) % 2 ? ACCEL_WAIT_YIELD : ACCEL_WAIT_BLOCK,
                           ACCEL_WAIT_FOREVER),
          "accel_event_wait");
}

/* Pinned memory is copied directly, no staging. */
static void op_pinned(struct worker *w, struct record *r)
{
    accel_device *device = w->s->device[r->device];
    uint32_t *pinned = NULL;
    uint64_t bytes = r->ref.count * sizeof(uint32_t);
    if (!check(w, accel_host_alloc(device, bytes, (void **)&pinned),
               "accel_host_alloc"))
        return;
    accel_stream *stream = w->stream[r->device];
    if (check(w, accel_copy_out(stream, pinned, r->ref, r->ref.count),
              "copy out (pinned)") &&
        check(w, accel_stream_sync(stream), "sync (pinned)") &&
        !holds(pinned, r->ref.count, r->seed, r->add))
        mismatch(w, "a ref read into pinned memory");
    accel_host_free(device, pinned);
}

static void op_compact(struct worker *w)
{
    uint32_t pages = 0;
    check(w, accel_device_compact(w->s->device[next_random(w) % DEVICES], &pages),
          "accel_device_compact");
}

static void one_op(struct worker *w)
{
    uint32_t op = next_random(w) % OPS;
    atomic_fetch_add(&w->s->ops[op], 1);
    struct record *r = w->count > 0
                           ? &w->refs[next_random(w) % (uint32_t)w->count]
                           : NULL;
    if (r == NULL && op != 0 && op != 5 && op != 6 && op != 8) {
        op_alloc(w);
        return;
    }
    switch (op) {
    case 0:
        op_alloc(w);
        break;
    case 1:
        op_launch(w, r);
        break;
    case 2:
        op_verify(w, r);
        break;
    case 3:
        op_copy(w, r, false);
        break;
    case 4:
        op_copy(w, r, true);
        break;
    case 5:
        op_callback(w);
        break;
    case 6:
        op_compact(w);
        break;
    case 7:
        op_free(w, (int)(r - w->refs));
        break;
    case 8:
        op_event(w);
        break;
    case 9:
        op_pinned(w, r);
        break;
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct shared *s = w->s;
    for (int d = 0; d < DEVICES; d++) {
        if (!check(w, accel_stream_create(s->device[d], &w->stream[d]), "stream") ||
            !check(w, accel_event_create(s->device[d], &w->event[d]), "event"))
            return NULL;
    }
    /* A slow run (valgrind) still does enough to mean something, within a
     * hard bound. */
    for (uint32_t done = 0; atomic_load(&s->failures) == 0; done++) {
        uint64_t now = now_ns();
        if ((now >= s->deadline_ns && done >= MIN_OPS) ||
            now >= s->hard_deadline_ns)
            break;
        one_op(w);
    }
    /* Everything still held is read back once more, then freed. */
    while (w->count > 0) {
        op_verify(w, &w->refs[w->count - 1]);
        op_free(w, w->count - 1);
    }
    return NULL;
}

static double stress_seconds(void)
{
    const char *text = getenv("STRESS_SECONDS");
    double seconds = text != NULL ? strtod(text, NULL) : 2.0;
    return seconds > 0 ? seconds : 2.0;
}

static void open_devices(struct shared *s)
{
    support_clean_environment();
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    setenv("ACCEL_NULL_THREADS", "3", 1);
    setenv("ACCEL_NULL_HOST_VISIBLE", "0", 1);
    setenv("ACCEL_STAGING_CHUNK", "16384", 1);
    setenv("ACCEL_NULL_REPORT", report_path, 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    assert_status(accel_host_create(&options, &s->host), ACCEL_OK);
    /* Pages outdated often: automatic relocations under the threads. */
    accel_pool_policy eager = {.automatic = true, .outdated_percent = 60};
    for (int d = 0; d < DEVICES; d++) {
        assert_status(
            accel_device_open(s->host, "null", (uint32_t)d, &s->device[d]),
            ACCEL_OK);
        assert_status(accel_device_set_pool_policy(s->device[d], &eager),
                      ACCEL_OK);
        assert_status(accel_stream_create(s->device[d], &s->common[d]), ACCEL_OK);
        assert_status(accel_module_load_file(s->device[d], TESTING_CPU_IMAGE,
                                             &s->module[d]),
                      ACCEL_OK);
        assert_status(accel_kernel_get(s->module[d], "add_u32", &s->add[d]),
                      ACCEL_OK);
    }
    support_clean_environment();
}

static void test_threads_on_two_devices_mix_every_operation(void **state)
{
    (void)state;
    struct shared s = {0};
    open_devices(&s);
    s.deadline_ns = now_ns() + (uint64_t)(stress_seconds() * 1e9);
    s.hard_deadline_ns = s.deadline_ns + HARD_LIMIT_NS;
    struct worker *workers = calloc(THREADS, sizeof *workers);
    assert_non_null(workers);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i].s = &s;
        workers[i].id = i;
        workers[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(atomic_load(&s.failures), 0);

    unsigned long long relocations = 0;
    for (int d = 0; d < DEVICES; d++) {
        accel_memory_stats stats;
        assert_status(accel_device_sync(s.device[d]), ACCEL_OK);
        assert_status(accel_device_memory_stats(s.device[d], &stats), ACCEL_OK);
        assert_int_equal(stats.slices, 0);
        assert_int_equal(stats.pending_frees, 0);
        relocations += stats.relocations;
    }
    /* Worth something only if slices really moved under the threads. */
    assert_true(relocations > 0);
    for (int i = 0; i < THREADS; i++) {
        for (int d = 0; d < DEVICES; d++) {
            accel_event_destroy(workers[i].event[d]);
            accel_stream_destroy(workers[i].stream[d]);
        }
    }
    for (int d = 0; d < DEVICES; d++) {
        accel_module_unload(s.module[d]);
        accel_stream_destroy(s.common[d]);
        accel_device_close(s.device[d]);
    }
    accel_host_destroy(s.host);

    /* Every callback ran once, and the work before it completed. */
    unsigned long long callbacks = 0;
    for (int i = 0; i < THREADS; i++) {
        for (int c = 0; c < workers[i].callbacks_added; c++) {
            assert_int_equal(atomic_load(&workers[i].callbacks[c].runs), 1);
            assert_status(
                (accel_status)atomic_load(&workers[i].callbacks[c].status),
                ACCEL_OK);
        }
        callbacks += (unsigned long long)workers[i].callbacks_added;
    }
    free(workers);
    unsigned long long total = 0;
    for (int op = 0; op < OPS; op++) {
        assert_true(atomic_load(&s.ops[op]) > 0);
        total += atomic_load(&s.ops[op]);
    }
    assert_true(callbacks > 0);
    if (getenv("STRESS_VERBOSE") != NULL)
        print_message("%llu operations, %llu callbacks, %llu relocations\n",
                      total, callbacks, relocations);

    FILE *file = fopen(report_path, "r");
    assert_non_null(file);
    unsigned long long calls = 0, faults = 1, losses = 1, left_close = 1,
                       left_reset = 1;
    assert_int_equal(
        fscanf(file,
               "calls=%llu faults=%llu losses=%llu left_at_close=%llu "
               "left_at_reset=%llu",
               &calls, &faults, &losses, &left_close, &left_reset),
        5);
    fclose(file);
    assert_int_equal(faults + losses + left_close + left_reset, 0);
}

static int setup(void **state)
{
    (void)state;
    scratch = support_make_temp_dir();
    snprintf(report_path, sizeof report_path, "%s/report", scratch);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    support_clean_environment();
    support_remove_dir(scratch);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_threads_on_two_devices_mix_every_operation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
