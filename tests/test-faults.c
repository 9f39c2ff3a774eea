/*
 * Failures at every plugin call, device loss and recovery, driven by the
 * null plugin's knobs (ACCEL_NULL_FAIL, ACCEL_NULL_LOSE_AT and
 * ACCEL_NULL_REPORT; null_plugin.c documents them):
 *
 *  - a sweep runs a full workflow (discover, open, allocate, stage, copy
 *    both ways, launch, compact, free, close) once to count its plugin
 *    calls, then once per call with that call failing, then once per call
 *    with the device lost there (reset by the test), then again with the
 *    host recovering by itself. Every run ends with success or an allowed
 *    error with a detail; whatever succeeded is verified, and after a
 *    failure what was on the device still is; the device works afterwards
 *    (after a loss: every ref is stale, a reset brings it back, new work
 *    is verified); every callback runs exactly once; and the plugin
 *    reports no object the host forgot to destroy. The sanitizers and
 *    valgrind see the rest of "nothing leaks";
 *  - automatic recovery rebuilds a lost device and tells the application,
 *    past its budget marks it unrecoverable until a reset by hand;
 *  - out of memory leaves the device usable.
 *
 * FAULTS_STRIDE=k sweeps every k-th call only, for slow runs (valgrind).
 */
#include "support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 256 KiB refs: eight fill a 2 MiB pool page, so a ninth starts another. */
#define WORDS 65536u
#define REFS 9
#define MOVER 8 /* the ref alone on the second page */
#define FRESH_WORDS 4096u
#define CALLBACKS 2
#define WAIT_NS 5000000000ull

/* Count the calls; fail one; lose the device at one, and reset it by hand
 * or (RECOVER) let the host rebuild it. */
enum mode { MODE_COUNT, MODE_FAIL, MODE_LOSE, MODE_RECOVER };

struct report {
    unsigned long long calls, faults, losses, left_at_close, left_at_reset;
};

struct callback_record {
    atomic_int runs;
    atomic_int status;
};

struct loss_record {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count;
    uint32_t generation[4];
    accel_status status[4];
};

/* What a ref should hold, when known: fill(seed, add). */
struct expect {
    bool known;
    uint32_t seed, add;
};

struct run {
    /* Set before the workflow: rebuild a lost device by itself. */
    bool automatic;
    struct loss_record *losses;
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
    accel_kernel *add;
    accel_event *event;
    void *pinned;
    accel_ref refs[REFS];
    struct expect expect[REFS];
    accel_ref fresh;
    struct callback_record callbacks[CALLBACKS];
    int callbacks_added;
    uint32_t compacted; /* pages the compaction emptied */
    /* The first step that failed, its status and detail. */
    const char *failed_step;
    accel_status failed;
    char detail[1024];
    uint32_t a[WORDS], b[WORDS], out[WORDS];
};

static char *scratch;
static char report_path[4200];

/* ---- environment and the plugin's report ---- */

/*
 * The knobs every run has: staging exercised (memory not host-visible, in
 * chunks of 64 KiB, four to a ref), two block threads, a delay, a report.
 */
static void set_environment(const char *fail, const char *lose)
{
    support_clean_environment();
    setenv("ACCEL_NULL_HOST_VISIBLE", "0", 1);
    setenv("ACCEL_STAGING_CHUNK", "65536", 1);
    setenv("ACCEL_NULL_THREADS", "2", 1);
    /* Work stays in flight a little, so that a host that frees or reuses
     * memory too early after a failure is caught. */
    setenv("ACCEL_NULL_DELAY_US", "100", 1);
    setenv("ACCEL_NULL_REPORT", report_path, 1);
    if (fail != NULL)
        setenv("ACCEL_NULL_FAIL", fail, 1);
    if (lose != NULL)
        setenv("ACCEL_NULL_LOSE_AT", lose, 1);
}

/* The line the plugin wrote when its host was destroyed. */
static struct report read_report(void)
{
    struct report r = {0};
    FILE *file = fopen(report_path, "r");
    if (file == NULL)
        fail_msg("the null plugin wrote no report to %s", report_path);
    int fields = fscanf(file,
                        "calls=%llu faults=%llu losses=%llu left_at_close=%llu "
                        "left_at_reset=%llu",
                        &r.calls, &r.faults, &r.losses, &r.left_at_close,
                        &r.left_at_reset);
    fclose(file);
    remove(report_path);
    assert_int_equal(fields, 5);
    return r;
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
    scratch = NULL;
    return 0;
}

/* ---- data ---- */

static void fill(uint32_t *words, uint32_t count, uint32_t seed, uint32_t add)
{
    for (uint32_t i = 0; i < count; i++)
        words[i] = ((seed * 2654435761u) ^ (i * 40503u)) + add;
}

/* Whether `words` hold what fill(seed, add) wrote. */
static bool holds(const uint32_t *words, uint32_t count, uint32_t seed,
                  uint32_t add)
{
    for (uint32_t i = 0; i < count; i++) {
        if (words[i] != ((seed * 2654435761u) ^ (i * 40503u)) + add)
            return false;
    }
    return true;
}

static void on_callback(void *user, accel_status status)
{
    struct callback_record *record = user;
    atomic_store(&record->status, (int)status);
    atomic_fetch_add(&record->runs, 1);
}

/* ---- losses told through a recovery policy ---- */

static void on_loss(accel_device *device, uint32_t generation,
                    accel_status status, void *user)
{
    (void)device;
    struct loss_record *r = user;
    pthread_mutex_lock(&r->lock);
    if (r->count < 4) {
        r->generation[r->count] = generation;
        r->status[r->count] = status;
    }
    r->count++;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Wait until `count` losses have been told. */
static void await_losses(struct loss_record *r, int count)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)(WAIT_NS / 1000000000u);
    pthread_mutex_lock(&r->lock);
    while (r->count < count &&
           pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == 0)
        ;
    int seen = r->count;
    pthread_mutex_unlock(&r->lock);
    assert_int_equal(seen, count);
}

/* ---- the workflow ---- */

/* Note a step's result; false ends the workflow at its first failure. */
static bool step(struct run *run, accel_status status, const char *what)
{
    if (status == ACCEL_OK)
        return true;
    run->failed = status;
    run->failed_step = what;
    snprintf(run->detail, sizeof run->detail, "%s", accel_last_error());
    return false;
}

static accel_status launch_add(struct run *run, accel_ref ref, uint32_t value)
{
    uint32_t n = (uint32_t)ref.count;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(ref),
                        ACCEL_ARG_VALUE(value)};
    return accel_launch(run->stream, run->add,
                        (accel_dim3){(n + 255) / 256, 1, 1},
                        (accel_dim3){256, 1, 1}, 0, args, 3);
}

static accel_status add_callback(struct run *run)
{
    assert_true(run->callbacks_added < CALLBACKS);
    struct callback_record *record = &run->callbacks[run->callbacks_added];
    accel_status status = accel_stream_add_callback(run->stream, on_callback,
                                                    record);
    if (status == ACCEL_OK)
        run->callbacks_added++;
    return status;
}

static bool open_and_load(struct run *run)
{
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    if (!step(run, accel_host_create(&options, &run->host), "accel_host_create") ||
        !step(run, accel_device_open(run->host, "null", 0, &run->device),
              "accel_device_open"))
        return false;
    /* Compaction when the workflow asks, of pages under half full. */
    accel_pool_policy policy = {.automatic = false, .outdated_percent = 50};
    assert_status(accel_device_set_pool_policy(run->device, &policy), ACCEL_OK);
    if (run->automatic) {
        accel_recovery_policy recovery = {.automatic = true,
                                          .max_losses = 4,
                                          .on_loss = on_loss,
                                          .user = run->losses};
        assert_status(accel_device_set_recovery(run->device, &recovery),
                      ACCEL_OK);
    }
    return step(run, accel_stream_create(run->device, &run->stream),
                "accel_stream_create") &&
           step(run,
                accel_module_load_file(run->device, TESTING_CPU_IMAGE,
                                       &run->module),
                "accel_module_load_file") &&
           step(run, accel_kernel_get(run->module, "add_u32", &run->add),
                "accel_kernel_get");
}

/* Copy `src` (fill(seed)) into ref `i`; until it succeeds, i is unknown. */
static bool copy_in_step(struct run *run, int i, const uint32_t *src,
                         uint32_t seed, const char *what)
{
    run->expect[i].known = false;
    if (!step(run, accel_copy_in(run->stream, run->refs[i], src, WORDS), what))
        return false;
    run->expect[i] = (struct expect){.known = true, .seed = seed};
    return true;
}

/* Add `value` to every word of ref `i` with a launch. */
static bool add_step(struct run *run, int i, uint32_t value, const char *what)
{
    if (!step(run, launch_add(run, run->refs[i], value), what))
        return false;
    run->expect[i].add += value;
    return true;
}

/* Staged copies both ways, a launch, a device copy, a callback. */
static bool copy_and_launch(struct run *run)
{
    fill(run->a, WORDS, 1, 0);
    fill(run->b, WORDS, 2, 0);
    if (!copy_in_step(run, MOVER, run->a, 1, "copy in (mover)") ||
        !add_step(run, MOVER, 7, "accel_launch") ||
        !copy_in_step(run, 0, run->b, 2, "copy in"))
        return false;
    run->expect[1].known = false;
    if (!step(run,
              accel_copy_on_device(run->stream, run->refs[1], 0, run->refs[0],
                                   0, accel_ref_bytes(run->refs[0])),
              "accel_copy_on_device"))
        return false;
    run->expect[1] = run->expect[0];
    if (!step(run, accel_copy_out(run->stream, run->out, run->refs[1], WORDS),
              "copy out") ||
        !step(run, add_callback(run), "accel_stream_add_callback") ||
        !step(run, accel_stream_sync(run->stream), "accel_stream_sync"))
        return false;
    if (!holds(run->out, WORDS, 2, 0))
        fail_msg("a device copy came back wrong");
    return true;
}

/*
 * Thin the first page, compact while a launch on the ref to move is still
 * in flight, and read the moved ref back.
 */
static bool compact_and_check(struct run *run)
{
    uint32_t pages = 0;
    for (int i = 1; i < 4; i++) {
        if (!step(run, accel_free(run->device, run->refs[i]), "accel_free"))
            return false;
        run->refs[i].count = 0;
    }
    if (!add_step(run, MOVER, 1, "accel_launch (mover)") ||
        !step(run, accel_device_compact(run->device, &pages),
              "accel_device_compact") ||
        !step(run, accel_copy_out(run->stream, run->out, run->refs[MOVER], WORDS),
              "copy out (mover)") ||
        !step(run, accel_stream_sync(run->stream), "accel_stream_sync (mover)"))
        return false;
    run->compacted = pages;
    if (!holds(run->out, WORDS, 1, 8))
        fail_msg("a launch's result came back wrong (compacted: %u page(s))",
                 pages);
    return true;
}

/* Events, and direct copies from pinned host memory. */
static bool events_and_pinned(struct run *run)
{
    uint32_t *pinned = NULL;
    if (!step(run, accel_event_create(run->device, &run->event),
              "accel_event_create") ||
        !step(run, accel_event_record(run->event, run->stream),
              "accel_event_record") ||
        !step(run, accel_event_sync(run->event), "accel_event_sync") ||
        !step(run, accel_event_query(run->event), "accel_event_query") ||
        !step(run,
              accel_host_alloc(run->device, WORDS * sizeof(uint32_t), &run->pinned),
              "accel_host_alloc"))
        return false;
    pinned = run->pinned;
    fill(pinned, WORDS, 3, 0);
    if (!copy_in_step(run, 4, pinned, 3, "copy in (pinned)") ||
        !step(run, add_callback(run), "accel_stream_add_callback") ||
        !step(run, accel_copy_out(run->stream, run->out, run->refs[4], WORDS),
              "copy out (pinned)") ||
        !step(run, accel_stream_sync(run->stream), "accel_stream_sync (pinned)"))
        return false;
    if (!holds(run->out, WORDS, 3, 0))
        fail_msg("a copy through pinned memory came back wrong");
    return true;
}

static void workflow(struct run *run)
{
    if (!open_and_load(run))
        return;
    /* The knobs have been read: the plugin at host creation, the staging
     * chunk at device open. */
    support_clean_environment();
    for (int i = 0; i < REFS; i++) {
        if (!step(run, accel_alloc(run->device, ACCEL_U32, WORDS, &run->refs[i]),
                  "accel_alloc"))
            return;
    }
    if (copy_and_launch(run) && compact_and_check(run))
        events_and_pinned(run);
}

/* ---- after the workflow ---- */

/* Small work from scratch on whatever the workflow left: must succeed. */
static accel_status fresh_work(struct run *run)
{
    accel_status status = ACCEL_OK;
    if (run->stream == NULL)
        status = accel_stream_create(run->device, &run->stream);
    if (status == ACCEL_OK && run->module == NULL)
        status = accel_module_load_file(run->device, TESTING_CPU_IMAGE,
                                        &run->module);
    if (status == ACCEL_OK && run->add == NULL)
        status = accel_kernel_get(run->module, "add_u32", &run->add);
    if (status == ACCEL_OK && run->fresh.count == 0)
        status = accel_alloc(run->device, ACCEL_U32, FRESH_WORDS, &run->fresh);
    fill(run->a, FRESH_WORDS, 9, 0);
    memset(run->out, 0, FRESH_WORDS * sizeof(uint32_t));
    if (status == ACCEL_OK)
        status = accel_copy_in(run->stream, run->fresh, run->a, FRESH_WORDS);
    if (status == ACCEL_OK)
        status = launch_add(run, run->fresh, 3);
    if (status == ACCEL_OK)
        status = accel_copy_out(run->stream, run->out, run->fresh, FRESH_WORDS);
    if (status == ACCEL_OK)
        status = accel_stream_sync(run->stream);
    if (status == ACCEL_OK && !holds(run->out, FRESH_WORDS, 9, 3))
        fail_msg("new work came back wrong");
    return status;
}

/*
 * After a failure that was not a loss, what the workflow had written must
 * still be there: an error (a failed compaction above all) loses no data.
 */
static void check_survivors(struct run *run)
{
    for (int i = 0; i < REFS; i++) {
        if (run->refs[i].count == 0 || !run->expect[i].known)
            continue;
        memset(run->out, 0, sizeof run->out);
        assert_status(accel_copy_out(run->stream, run->out, run->refs[i], WORDS),
                      ACCEL_OK);
        assert_status(accel_stream_sync(run->stream), ACCEL_OK);
        if (!holds(run->out, WORDS, run->expect[i].seed, run->expect[i].add))
            fail_msg("ref %d lost its contents after %s failed", i,
                     run->failed_step);
    }
}

/* After a loss, every ref minted before is stale. */
static void check_stale(struct run *run)
{
    for (int i = 0; i < REFS; i++) {
        if (run->refs[i].device_id != 0)
            assert_status(accel_ref_check(run->device, run->refs[i]),
                          ACCEL_ERR_STALE_REF);
    }
    if (run->fresh.count != 0)
        assert_status(accel_ref_check(run->device, run->fresh),
                      ACCEL_ERR_STALE_REF);
    run->fresh.count = 0;
}

/* A lost device: every ref stale, and a reset brings it back. */
static void check_lost(struct run *run)
{
    assert_status(accel_device_status(run->device), ACCEL_ERR_DEVICE_LOST);
    check_stale(run);
    assert_status(accel_device_reset(run->device), ACCEL_OK);
    assert_status(accel_device_status(run->device), ACCEL_OK);
}

/*
 * With automatic recovery a loss the workflow met was rebuilt before its
 * call returned; one on an entry that returns nothing, which nothing has
 * noticed yet, is found (and rebuilt) by the status call. Either way the
 * refs are stale, the application is told, and new work succeeds.
 */
static void check_recovered(struct run *run)
{
    bool lost = run->failed == ACCEL_ERR_DEVICE_LOST;
    accel_status status = accel_device_status(run->device);
    if (status != ACCEL_OK) {
        assert_status(status, ACCEL_ERR_DEVICE_LOST);
        lost = true;
        assert_status(accel_device_status(run->device), ACCEL_OK);
    }
    if (lost) {
        check_stale(run);
        await_losses(run->losses, 1);
    }
    status = fresh_work(run);
    if (status != ACCEL_OK) {
        assert_status(status, ACCEL_ERR_DEVICE_LOST);
        assert_false(lost);
        check_stale(run);
        await_losses(run->losses, 1);
        status = fresh_work(run);
    }
    assert_status(status, ACCEL_OK);
    assert_true(run->losses->count <= 1);
    if (run->losses->count == 1)
        assert_status(run->losses->status[0], ACCEL_OK);
}

/*
 * After the workflow the device must work: new work succeeds, at once or
 * after the one fault still to come (the workflow may have ended before
 * its call) and, for a loss, a reset.
 */
static void check_usable(struct run *run, enum mode mode)
{
    if (run->device == NULL)
        return;
    if (mode == MODE_RECOVER) {
        check_recovered(run);
        return;
    }
    if (mode == MODE_LOSE && accel_device_status(run->device) != ACCEL_OK)
        check_lost(run);
    accel_status status = fresh_work(run);
    if (status != ACCEL_OK && mode == MODE_LOSE) {
        assert_status(status, ACCEL_ERR_DEVICE_LOST);
        check_lost(run);
        status = fresh_work(run);
    } else if (status != ACCEL_OK && mode == MODE_FAIL) {
        assert_status(status, ACCEL_ERR_DRIVER);
        status = fresh_work(run);
    }
    assert_status(status, ACCEL_OK);
    /* Its one fault spent, the run has no more: every read must work. */
    if (mode == MODE_FAIL && run->failed != ACCEL_OK)
        check_survivors(run);
}

/* Close everything; a failed free is fine (stale, freed), a crash is not. */
static void close_run(struct run *run)
{
    for (int i = 0; i < REFS; i++) {
        if (run->refs[i].count != 0)
            accel_free(run->device, run->refs[i]);
    }
    if (run->fresh.count != 0)
        accel_free(run->device, run->fresh);
    accel_host_free(run->device, run->pinned);
    accel_event_destroy(run->event);
    accel_module_unload(run->module);
    accel_stream_destroy(run->stream);
    accel_device_close(run->device);
    accel_host_destroy(run->host);
}

static bool failure_allowed(const struct run *run, enum mode mode)
{
    if (mode == MODE_LOSE || mode == MODE_RECOVER)
        return run->failed == ACCEL_ERR_DEVICE_LOST;
    /* A plugin whose plugin_open or device_count fails is rejected, and
     * opening a device of it says so. */
    return run->failed == ACCEL_ERR_DRIVER || run->failed == ACCEL_ERR_NO_DEVICE;
}

/* One run of the workflow with call `n` failing or losing the device. */
static struct report run_once(enum mode mode, unsigned long long n)
{
    char knob[64];
    bool lose = mode == MODE_LOSE || mode == MODE_RECOVER;
    snprintf(knob, sizeof knob, mode == MODE_FAIL ? "any:%llu" : "%llu", n);
    set_environment(lose                ? NULL
                    : mode == MODE_FAIL ? knob
                                        : "any:0",
                    lose ? knob : NULL);
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    struct run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    run->automatic = mode == MODE_RECOVER;
    run->losses = &losses;
    workflow(run);
    support_clean_environment();
    if (run->failed != ACCEL_OK &&
        (mode == MODE_COUNT || !failure_allowed(run, mode) ||
         run->detail[0] == '\0'))
        fail_msg("%s %llu: %s returned %s: \"%s\"",
                 lose ? "ACCEL_NULL_LOSE_AT" : "ACCEL_NULL_FAIL", n,
                 run->failed_step, accel_status_name(run->failed), run->detail);
    /* The workflow must do what it says, or the sweep tests less. */
    if (mode == MODE_COUNT)
        assert_int_equal(run->compacted, 1);
    check_usable(run, mode);
    close_run(run);
    for (int i = 0; i < run->callbacks_added; i++)
        assert_int_equal(atomic_load(&run->callbacks[i].runs), 1);
    free(run);

    struct report report = read_report();
    if (report.left_at_close != 0 || report.left_at_reset != 0)
        fail_msg("call %llu: the host left %llu object(s) at close and %llu at "
                 "reset",
                 n, report.left_at_close, report.left_at_reset);
    assert_true(report.faults <= 1 && report.losses <= 1);
    return report;
}

static unsigned long long sweep_stride(void)
{
    const char *text = getenv("FAULTS_STRIDE");
    unsigned long long stride = text != NULL ? strtoull(text, NULL, 10) : 1;
    return stride == 0 ? 1 : stride;
}

static void sweep(enum mode mode)
{
    struct report counted = run_once(MODE_COUNT, 0);
    assert_true(counted.calls > 50);
    unsigned long long stride = sweep_stride(), hits = 0, runs = 0;
    /* A few past the end: the count may vary a little with timing. */
    for (unsigned long long n = 1; n <= counted.calls + 3; n += stride) {
        struct report report = run_once(mode, n);
        hits += mode == MODE_FAIL ? report.faults : report.losses;
        runs++;
    }
    /* Most calls must have been hit, or the sweep tested little. Entries
     * that return nothing are counted but never fail. */
    if (hits * 4 < runs * 3)
        fail_msg("only %llu of %llu runs hit their call", hits, runs);
}

static void test_every_failing_plugin_call_ends_cleanly(void **state)
{
    (void)state;
    sweep(MODE_FAIL);
}

static void test_a_loss_at_every_plugin_call_ends_cleanly_and_resets(void **state)
{
    (void)state;
    sweep(MODE_LOSE);
}

static void test_automatic_recovery_from_a_loss_at_every_plugin_call(void **state)
{
    (void)state;
    sweep(MODE_RECOVER);
}

/* ---- one device with a stream, the testing module and a ref ---- */

/* Open with the knobs given and make a ref filled with seed 5. */
static struct run *open_with(const char *fail, const char *lose)
{
    set_environment(fail, lose);
    struct run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    assert_true(open_and_load(run));
    support_clean_environment();
    assert_status(accel_alloc(run->device, ACCEL_U32, FRESH_WORDS, &run->refs[0]),
                  ACCEL_OK);
    fill(run->a, FRESH_WORDS, 5, 0);
    assert_status(accel_copy_in(run->stream, run->refs[0], run->a, FRESH_WORDS),
                  ACCEL_OK);
    assert_status(accel_stream_sync(run->stream), ACCEL_OK);
    return run;
}

static struct report close_with_report(struct run *run)
{
    close_run(run);
    for (int i = 0; i < run->callbacks_added; i++)
        assert_int_equal(atomic_load(&run->callbacks[i].runs), 1);
    free(run);
    struct report report = read_report();
    assert_int_equal(report.left_at_close, 0);
    assert_int_equal(report.left_at_reset, 0);
    return report;
}

static uint32_t generation_of(accel_device *device)
{
    accel_device_info info;
    assert_status(accel_device_info_get(device, &info), ACCEL_OK);
    return info.generation;
}

static void test_stale_refs_after_a_loss_until_reset(void **state)
{
    (void)state;
    struct run *run = open_with(NULL, "launch:1");
    accel_ref before = run->refs[0];
    assert_status(launch_add(run, before, 1), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_status(run->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_ref_check(run->device, before), ACCEL_ERR_STALE_REF);
    accel_ref other = {0};
    assert_status(accel_alloc(run->device, ACCEL_U32, 16, &other),
                  ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_copy_in(run->stream, before, run->a, 16),
                  ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_stream_sync(run->stream), ACCEL_ERR_DEVICE_LOST);

    assert_status(accel_device_reset(run->device), ACCEL_OK);
    assert_status(accel_ref_check(run->device, before), ACCEL_ERR_STALE_REF);
    assert_status(accel_free(run->device, before), ACCEL_ERR_STALE_REF);
    run->refs[0].count = 0;
    /* The same stream and kernel handles work on the rebuilt device. */
    assert_status(fresh_work(run), ACCEL_OK);
    struct report report = close_with_report(run);
    assert_int_equal(report.losses, 1);
}

static void test_out_of_memory_leaves_the_device_usable(void **state)
{
    (void)state;
    struct run *run = open_with(NULL, NULL);
    accel_device_info info;
    assert_status(accel_device_info_get(run->device, &info), ACCEL_OK);
    accel_ref huge = {0};
    assert_status(accel_alloc(run->device, ACCEL_BYTE,
                              info.props.total_memory * 2, &huge),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_status(accel_device_status(run->device), ACCEL_OK);
    assert_status(accel_ref_check(run->device, run->refs[0]), ACCEL_OK);
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);

    /* The same when the plugin says so of a size it could give. */
    run = open_with("mem_alloc:2:ACCEL_ERR_OUT_OF_DEVICE_MEMORY", NULL);
    uint32_t generation = generation_of(run->device);
    assert_status(accel_alloc(run->device, ACCEL_U32, 1u << 20, &huge),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_contains(accel_last_error(), "injected");
    assert_status(accel_device_status(run->device), ACCEL_OK);
    assert_int_equal(generation_of(run->device), generation);
    assert_status(accel_ref_check(run->device, run->refs[0]), ACCEL_OK);
    assert_status(fresh_work(run), ACCEL_OK);
    struct report report = close_with_report(run);
    assert_int_equal(report.faults, 1);
    assert_int_equal(report.losses, 0);
}

static void test_injected_status_and_detail_reach_the_caller(void **state)
{
    (void)state;
    struct run *run = open_with("copy_to_device:2:ACCEL_ERR_COPY", NULL);
    assert_status(accel_copy_in(run->stream, run->refs[0], run->a, FRESH_WORDS),
                  ACCEL_ERR_COPY);
    assert_contains(accel_last_error(), "copy_to_device: injected failure");
    assert_status(accel_device_status(run->device), ACCEL_OK);
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);
}

/*
 * The plugin's detail comes after the public call the application made and
 * the entry that failed (issue 15: sites named by the path, not typed), and
 * the call's name does not outlive it.
 */
static void test_plugin_failure_is_named_by_the_public_call_and_entry(void **state)
{
    (void)state;
    struct run *run = open_with("copy_to_device:2:ACCEL_ERR_COPY", NULL);
    assert_status(accel_copy_in(run->stream, run->refs[0], run->a, FRESH_WORDS),
                  ACCEL_ERR_COPY);
    const char *want = "accel_copy_to_device_typed: copy_to_device: injected "
                       "failure at plugin call";
    if (strncmp(accel_last_error(), want, strlen(want)) != 0)
        fail_msg("detail '%s' does not begin with '%s'", accel_last_error(),
                 want);
    /* A later failure in another call is named by that call. */
    accel_ref stale = run->refs[0];
    assert_status(accel_free(run->device, run->refs[0]), ACCEL_OK);
    run->refs[0].count = 0;
    assert_status(accel_copy_out(run->stream, run->out, stale, FRESH_WORDS),
                  ACCEL_ERR_FREED_REF);
    assert_null(strstr(accel_last_error(), "accel_copy_to_device_typed"));
    assert_status(accel_device_sync(run->device), ACCEL_OK);
    close_with_report(run);
}

static void test_entries_returning_nothing_count_but_never_fail(void **state)
{
    (void)state;
    const char *knobs[] = {"mem_free:1",  "stream_destroy:1", "event_destroy:1",
                           "host_free:1", "module_unload:1",  "device_close:1"};
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        struct run *run = open_with(knobs[i], NULL);
        assert_status(fresh_work(run), ACCEL_OK);
        struct report report = close_with_report(run);
        assert_int_equal(report.faults, 0);
        assert_true(report.calls > 10);
    }
}

static void test_malformed_fault_knobs_leave_no_device(void **state)
{
    (void)state;
    const char *const bad[][2] = {
        {"ACCEL_NULL_FAIL", ""},
        {"ACCEL_NULL_FAIL", "mem_alloc"},
        {"ACCEL_NULL_FAIL", "nosuch:1"},
        {"ACCEL_NULL_FAIL", "any:x"},
        {"ACCEL_NULL_FAIL", "any:-1"},
        {"ACCEL_NULL_FAIL", "any:1:ACCEL_OK"},
        {"ACCEL_NULL_FAIL", "any:1:NOPE"},
        {"ACCEL_NULL_FAIL", "any:1:"},
        {"ACCEL_NULL_LOSE_AT", "x"},
        {"ACCEL_NULL_LOSE_AT", "nosuch:3"},
        {"ACCEL_NULL_LOSE_AT", "99999999999999999999"},
        {"ACCEL_NULL_REPORT", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        support_clean_environment();
        setenv(bad[i][0], bad[i][1], 1);
        accel_host *host = NULL;
        accel_device *device = NULL;
        accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
        assert_status(accel_host_create(&options, &host), ACCEL_OK);
        support_clean_environment();
        assert_status(accel_device_open(host, "null", 0, &device),
                      ACCEL_ERR_NO_DEVICE);
        const accel_plugin_info *null = support_find_plugin(host, "null", 0);
        assert_non_null(null);
        assert_int_equal(null->device_count, 0);
        assert_contains(null->reason, bad[i][0]);
        accel_host_destroy(host);
    }
}

static void test_automatic_recovery_rebuilds_and_tells(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    struct run *run = open_with(NULL, "launch:1");
    accel_recovery_policy policy = {.automatic = true,
                                    .max_losses = 2,
                                    .window_ns = 60000000000ull,
                                    .on_loss = on_loss,
                                    .user = &losses};
    assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
    uint32_t before = generation_of(run->device);
    /* A callback queued before the loss runs once, reached or not. */
    assert_status(add_callback(run), ACCEL_OK);

    assert_status(launch_add(run, run->refs[0], 1), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(), "rebuilt");
    /* Rebuilt before the call returned: the device takes work at once. */
    assert_status(accel_device_status(run->device), ACCEL_OK);
    assert_status(accel_ref_check(run->device, run->refs[0]),
                  ACCEL_ERR_STALE_REF);
    uint32_t after = generation_of(run->device);
    assert_true(after > before);
    await_losses(&losses, 1);
    assert_status(losses.status[0], ACCEL_OK);
    assert_int_equal(losses.generation[0], after);

    run->refs[0].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    struct report report = close_with_report(run);
    assert_int_equal(report.losses, 1);
}

static void test_losses_past_the_budget_make_the_device_unrecoverable(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    /* Two losses: a real one, then one the plugin only reports. */
    struct run *run = open_with("launch:2:ACCEL_ERR_DEVICE_LOST", "launch:1");
    accel_recovery_policy policy = {.automatic = true,
                                    .max_losses = 1,
                                    .window_ns = 60000000000ull,
                                    .on_loss = on_loss,
                                    .user = &losses};
    assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
    assert_status(launch_add(run, run->refs[0], 1), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_status(run->device), ACCEL_OK);
    run->refs[0].count = 0;
    assert_status(accel_alloc(run->device, ACCEL_U32, FRESH_WORDS, &run->refs[1]),
                  ACCEL_OK);
    /* The loss past the budget is told apart from "rebuilt, retry". */
    assert_status(launch_add(run, run->refs[1], 1), ACCEL_ERR_UNRECOVERABLE);
    assert_contains(accel_last_error(), "unrecoverable");
    await_losses(&losses, 2);
    assert_status(losses.status[0], ACCEL_OK);
    assert_status(losses.status[1], ACCEL_ERR_UNRECOVERABLE);

    /* Every call says so now. */
    accel_ref ref = {0};
    accel_event *event = NULL;
    assert_status(accel_device_status(run->device), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_alloc(run->device, ACCEL_U32, 16, &ref),
                  ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_copy_in(run->stream, run->refs[1], run->a, 16),
                  ACCEL_ERR_UNRECOVERABLE);
    assert_status(launch_add(run, run->refs[1], 1), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_stream_sync(run->stream), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_event_create(run->device, &event),
                  ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_device_sync(run->device), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_ref_check(run->device, run->refs[1]),
                  ACCEL_ERR_STALE_REF);

    /* The application may still decide to try again. */
    assert_status(accel_device_reset(run->device), ACCEL_OK);
    assert_status(accel_device_status(run->device), ACCEL_OK);
    run->refs[1].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);
}

/*
 * With a budget of no losses, the device lost at the plugin's first launch
 * (ACCEL_NULL_LOSE_AT) is given up at once: the very call that found the
 * loss returns ACCEL_ERR_UNRECOVERABLE, not ACCEL_ERR_DEVICE_LOST.
 */
static void test_the_call_that_exceeds_the_budget_returns_unrecoverable(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    struct run *run = open_with(NULL, "launch:1");
    accel_recovery_policy policy = {
        .automatic = true, .max_losses = 0, .on_loss = on_loss, .user = &losses};
    assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
    assert_status(launch_add(run, run->refs[0], 1), ACCEL_ERR_UNRECOVERABLE);
    assert_contains(accel_last_error(), "unrecoverable");
    await_losses(&losses, 1);
    assert_status(losses.status[0], ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_device_status(run->device), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_stream_sync(run->stream), ACCEL_ERR_UNRECOVERABLE);
    assert_status(accel_device_reset(run->device), ACCEL_OK);
    run->refs[0].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);
}

static void test_losses_further_apart_than_the_window_are_recovered(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    struct run *run = open_with("launch:2:ACCEL_ERR_DEVICE_LOST", "launch:1");
    accel_recovery_policy policy = {.automatic = true,
                                    .max_losses = 1,
                                    .window_ns = 1000000, /* 1 ms */
                                    .on_loss = on_loss,
                                    .user = &losses};
    assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
    assert_status(launch_add(run, run->refs[0], 1), ACCEL_ERR_DEVICE_LOST);
    nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    run->refs[0].count = 0;
    assert_status(accel_alloc(run->device, ACCEL_U32, FRESH_WORDS, &run->refs[1]),
                  ACCEL_OK);
    assert_status(launch_add(run, run->refs[1], 1), ACCEL_ERR_DEVICE_LOST);
    await_losses(&losses, 2);
    assert_status(losses.status[0], ACCEL_OK);
    assert_status(losses.status[1], ACCEL_OK);
    assert_true(losses.generation[1] > losses.generation[0]);
    assert_status(accel_device_status(run->device), ACCEL_OK);
    run->refs[1].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);
}

static void test_without_automatic_recovery_a_loss_is_told_and_waits(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    struct run *run = open_with(NULL, "copy_to_host:1");
    accel_recovery_policy policy = {.on_loss = on_loss, .user = &losses};
    assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
    assert_status(accel_copy_out(run->stream, run->out, run->refs[0], FRESH_WORDS),
                  ACCEL_ERR_DEVICE_LOST);
    await_losses(&losses, 1);
    assert_status(losses.status[0], ACCEL_ERR_DEVICE_LOST);
    assert_int_equal(losses.generation[0], generation_of(run->device));
    assert_status(accel_device_status(run->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(run->device), ACCEL_OK);
    run->refs[0].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    close_with_report(run);
}

/* Work queued behind a slow command when the device is lost. */
static void
test_work_queued_at_a_loss_is_dropped_and_callbacks_run_once(void **state)
{
    (void)state;
    set_environment(NULL, "event_create:1");
    /* Direct copies, which return before they run, kept in flight. */
    setenv("ACCEL_NULL_HOST_VISIBLE", "1", 1);
    setenv("ACCEL_NULL_DELAY_US", "2000", 1);
    struct run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    assert_true(open_and_load(run));
    support_clean_environment();
    assert_status(accel_alloc(run->device, ACCEL_U32, WORDS, &run->refs[0]),
                  ACCEL_OK);
    fill(run->b, WORDS, 6, 0);
    assert_status(accel_copy_in(run->stream, run->refs[0], run->b, WORDS),
                  ACCEL_OK);
    assert_status(add_callback(run), ACCEL_OK);
    assert_status(launch_add(run, run->refs[0], 1), ACCEL_OK);
    assert_status(accel_copy_out(run->stream, run->out, run->refs[0], WORDS),
                  ACCEL_OK);
    assert_status(add_callback(run), ACCEL_OK);
    /* Lost here, with the copies, the launch and the callbacks in flight. */
    assert_status(accel_event_create(run->device, &run->event),
                  ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_stream_sync(run->stream), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(run->device), ACCEL_OK);
    /* A callback the stream never reached was told so at the reset. */
    for (int i = 0; i < run->callbacks_added; i++) {
        for (int wait = 0;
             wait < 5000 && atomic_load(&run->callbacks[i].runs) == 0; wait++)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        assert_int_equal(atomic_load(&run->callbacks[i].runs), 1);
    }
    accel_status last = (accel_status)atomic_load(&run->callbacks[1].status);
    assert_true(last == ACCEL_OK || last == ACCEL_ERR_DEVICE_LOST);
    run->refs[0].count = 0;
    assert_status(fresh_work(run), ACCEL_OK);
    struct report report = close_with_report(run);
    assert_int_equal(report.losses, 1);
}

/*
 * A reset that fails part way (the plugin's reset, or rebuilding a stream,
 * a module or a kernel) leaves the device lost and consistent: a second
 * reset rebuilds it, by hand or after a failed automatic one.
 */
static void test_a_failed_reset_leaves_the_device_lost_until_another(void **state)
{
    (void)state;
    const char *knobs[] = {"device_reset:1", "stream_create:2", "module_load:2",
                           "kernel_get:2", "event_create:4"};
    for (size_t i = 0; i < 2 * sizeof knobs / sizeof knobs[0]; i++) {
        bool automatic = i % 2 == 1;
        struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                     .cond = PTHREAD_COND_INITIALIZER};
        struct run *run = open_with(knobs[i / 2], "launch:1");
        /* An event of the application's, rebuilt with the streams. */
        assert_status(accel_event_create(run->device, &run->event), ACCEL_OK);
        accel_recovery_policy policy = {.automatic = automatic,
                                        .max_losses = 4,
                                        .on_loss = on_loss,
                                        .user = &losses};
        assert_status(accel_device_set_recovery(run->device, &policy), ACCEL_OK);
        assert_status(launch_add(run, run->refs[0], 1), ACCEL_ERR_DEVICE_LOST);
        run->refs[0].count = 0;
        if (automatic)
            assert_contains(accel_last_error(), "reset failed");
        else
            assert_status(accel_device_reset(run->device), ACCEL_ERR_DRIVER);
        await_losses(&losses, 1);
        assert_status(losses.status[0], ACCEL_ERR_DEVICE_LOST);
        assert_status(accel_device_status(run->device), ACCEL_ERR_DEVICE_LOST);
        assert_status(accel_stream_sync(run->stream), ACCEL_ERR_DEVICE_LOST);
        assert_status(accel_device_reset(run->device), ACCEL_OK);
        assert_status(accel_event_record(run->event, run->stream), ACCEL_OK);
        assert_status(accel_event_sync(run->event), ACCEL_OK);
        assert_status(fresh_work(run), ACCEL_OK);
        struct report report = close_with_report(run);
        assert_int_equal(report.faults, 1);
    }
}

/* A copy between two devices that loses the stream's device. */
static void test_a_loss_in_a_copy_between_devices_is_recovered(void **state)
{
    (void)state;
    struct loss_record losses = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                 .cond = PTHREAD_COND_INITIALIZER};
    set_environment(NULL, "copy_on_device:1");
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    struct run *run = calloc(1, sizeof *run);
    assert_non_null(run);
    assert_true(open_and_load(run));
    accel_device *second = NULL;
    accel_stream *stream = NULL;
    assert_status(accel_device_open(run->host, "null", 1, &second), ACCEL_OK);
    support_clean_environment();
    /* The stream's device is the one opened later: its lock is taken
     * second, and the loss must still be handled under it. */
    assert_status(accel_stream_create(second, &stream), ACCEL_OK);
    accel_recovery_policy policy = {
        .automatic = true, .max_losses = 1, .on_loss = on_loss, .user = &losses};
    assert_status(accel_device_set_recovery(second, &policy), ACCEL_OK);
    accel_ref here = {0};
    assert_status(accel_alloc(run->device, ACCEL_U32, FRESH_WORDS, &run->refs[0]),
                  ACCEL_OK);
    assert_status(accel_alloc(second, ACCEL_U32, FRESH_WORDS, &here), ACCEL_OK);
    assert_status(accel_copy_on_device(stream, here, 0, run->refs[0], 0,
                                       accel_ref_bytes(here)),
                  ACCEL_ERR_DEVICE_LOST);
    await_losses(&losses, 1);
    assert_status(losses.status[0], ACCEL_OK);
    assert_status(accel_device_status(second), ACCEL_OK);
    assert_status(accel_device_status(run->device), ACCEL_OK);
    assert_status(accel_ref_check(second, here), ACCEL_ERR_STALE_REF);
    assert_status(accel_ref_check(run->device, run->refs[0]), ACCEL_OK);

    /* Both work again, together. */
    assert_status(accel_alloc(second, ACCEL_U32, FRESH_WORDS, &here), ACCEL_OK);
    fill(run->a, FRESH_WORDS, 8, 0);
    assert_status(accel_copy_in(run->stream, run->refs[0], run->a, FRESH_WORDS),
                  ACCEL_OK);
    assert_status(accel_stream_sync(run->stream), ACCEL_OK);
    assert_status(accel_copy_on_device(stream, here, 0, run->refs[0], 0,
                                       accel_ref_bytes(here)),
                  ACCEL_OK);
    assert_status(accel_copy_out(stream, run->out, here, FRESH_WORDS), ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    assert_true(holds(run->out, FRESH_WORDS, 8, 0));
    accel_stream_destroy(stream);
    accel_device_close(second);
    close_with_report(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_every_failing_plugin_call_ends_cleanly),
        T(test_a_loss_at_every_plugin_call_ends_cleanly_and_resets),
        T(test_automatic_recovery_from_a_loss_at_every_plugin_call),
        T(test_stale_refs_after_a_loss_until_reset),
        T(test_out_of_memory_leaves_the_device_usable),
        T(test_injected_status_and_detail_reach_the_caller),
        T(test_plugin_failure_is_named_by_the_public_call_and_entry),
        T(test_entries_returning_nothing_count_but_never_fail),
        T(test_malformed_fault_knobs_leave_no_device),
        T(test_automatic_recovery_rebuilds_and_tells),
        T(test_losses_past_the_budget_make_the_device_unrecoverable),
        T(test_the_call_that_exceeds_the_budget_returns_unrecoverable),
        T(test_losses_further_apart_than_the_window_are_recovered),
        T(test_without_automatic_recovery_a_loss_is_told_and_waits),
        T(test_work_queued_at_a_loss_is_dropped_and_callbacks_run_once),
        T(test_a_loss_in_a_copy_between_devices_is_recovered),
        T(test_a_failed_reset_leaves_the_device_lost_until_another),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
