/*
 * An application's reset of a healthy device while other threads work on
 * it. Run under ThreadSanitizer by the tsan build (README):
 *
 *  - launches check their arguments against the kernel's signature while
 *    the reset loads the kernel again: nothing a reset rebuilds may be read
 *    without the device lock;
 *  - a requested reset is not a loss: calls on other threads complete
 *    before it or wait for it and then see ACCEL_ERR_STALE_REF for refs
 *    minted before; none returns ACCEL_ERR_DEVICE_LOST, accel_device_status
 *    never says lost, and the recovery budget counts nothing.
 */
#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WORKERS 3
#define RESETS 20
#define WORDS 16384u /* 64 KiB: four staging chunks of 16 KiB */

struct shared {
    struct support_null null;
    accel_module *module;
    accel_kernel *add;
    atomic_bool stop;
    atomic_int lost;        /* ACCEL_ERR_DEVICE_LOST or UNRECOVERABLE returns */
    atomic_int failures;    /* any other unexpected result */
    atomic_int stale;       /* ACCEL_ERR_STALE_REF: allowed, counted */
    atomic_int verified;    /* rounds whose result was checked */
    atomic_int status_lost; /* accel_device_status that did not say OK */
    atomic_int losses_told; /* on_loss calls */
};

static void on_loss(accel_device *device, uint32_t generation,
                    accel_status status, void *user)
{
    (void)device;
    (void)generation;
    (void)status;
    struct shared *s = user;
    atomic_fetch_add(&s->losses_told, 1);
}

/* Sort a result: true when the round may go on. */
static bool judge(struct shared *s, const char *what, accel_status status)
{
    if (status == ACCEL_OK)
        return true;
    if (status == ACCEL_ERR_STALE_REF) {
        atomic_fetch_add(&s->stale, 1);
        return false;
    }
    if (status == ACCEL_ERR_DEVICE_LOST || status == ACCEL_ERR_UNRECOVERABLE)
        atomic_fetch_add(&s->lost, 1);
    else
        atomic_fetch_add(&s->failures, 1);
    if (atomic_load(&s->lost) + atomic_load(&s->failures) == 1)
        print_error("%s: %s: %s\n", what, accel_status_name(status),
                    accel_last_error());
    return false;
}

static accel_status launch_add(struct shared *s, accel_stream *stream,
                               accel_ref ref, uint32_t value)
{
    uint32_t n = (uint32_t)ref.count;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(ref),
                        ACCEL_ARG_VALUE(value)};
    return accel_launch(stream, s->add, (accel_dim3){(n + 255) / 256, 1, 1},
                        (accel_dim3){256, 1, 1}, 0, args, 3);
}

/* One round: allocate, copy in, add, copy out, sync, verify, free. */
static void round_trip(struct shared *s, accel_stream *stream, uint32_t *in,
                       uint32_t *out, uint32_t seed)
{
    accel_device *device = s->null.device;
    accel_ref ref = {0};
    if (!judge(s, "accel_alloc", accel_alloc(device, ACCEL_U32, WORDS, &ref)))
        return;
    for (uint32_t i = 0; i < WORDS; i++)
        in[i] = seed + i;
    memset(out, 0, WORDS * sizeof *out);
    bool ok = judge(s, "accel_copy_in", accel_copy_in(stream, ref, in, WORDS)) &&
              judge(s, "accel_launch", launch_add(s, stream, ref, 7)) &&
              judge(s, "accel_copy_out", accel_copy_out(stream, out, ref, WORDS)) &&
              judge(s, "accel_stream_sync", accel_stream_sync(stream));
    if (ok) {
        for (uint32_t i = 0; i < WORDS; i++) {
            if (out[i] != seed + i + 7) {
                judge(s, "contents", ACCEL_ERR_COPY);
                break;
            }
        }
        atomic_fetch_add(&s->verified, 1);
    }
    judge(s, "accel_free", accel_free(device, ref));
}

static void *work(void *arg)
{
    struct shared *s = arg;
    accel_stream *stream = NULL;
    uint32_t *in = malloc(WORDS * sizeof *in), *out = malloc(WORDS * sizeof *out);
    if (in == NULL || out == NULL ||
        !judge(s, "accel_stream_create",
               accel_stream_create(s->null.device, &stream))) {
        atomic_fetch_add(&s->failures, 1);
    } else {
        for (uint32_t seed = 1; !atomic_load(&s->stop); seed += WORDS)
            round_trip(s, stream, in, out, seed);
    }
    accel_stream_destroy(stream);
    free(in);
    free(out);
    return NULL;
}

/* Launches back to back, each checked against the kernel's signature. */
static void *launch_only(void *arg)
{
    struct shared *s = arg;
    accel_stream *stream = NULL;
    accel_ref ref = {0};
    if (!judge(s, "accel_stream_create",
               accel_stream_create(s->null.device, &stream)))
        return NULL;
    while (!atomic_load(&s->stop)) {
        if (ref.count == 0 &&
            !judge(s, "accel_alloc",
                   accel_alloc(s->null.device, ACCEL_U32, 256, &ref)))
            continue;
        if (judge(s, "accel_launch", launch_add(s, stream, ref, 1)))
            atomic_fetch_add(&s->verified, 1);
        else
            ref.count = 0; /* stale: the reset freed it */
    }
    judge(s, "accel_stream_sync", accel_stream_sync(stream));
    if (ref.count != 0)
        judge(s, "accel_free", accel_free(s->null.device, ref));
    accel_stream_destroy(stream);
    return NULL;
}

static void *watch_status(void *arg)
{
    struct shared *s = arg;
    while (!atomic_load(&s->stop)) {
        if (accel_device_status(s->null.device) != ACCEL_OK)
            atomic_fetch_add(&s->status_lost, 1);
        sched_yield();
    }
    return NULL;
}

static int setup(void **state)
{
    struct shared *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    *state = s;
    /* Staged copies: they hold buffers across chunks, the hard case. */
    const char *env[] = {"ACCEL_NULL_HOST_VISIBLE=0", "ACCEL_STAGING_CHUNK=16384",
                         "ACCEL_NULL_THREADS=2", NULL};
    if (support_null_open(&s->null, env) != 0)
        return -1;
    if (accel_module_load_file(s->null.device, TESTING_CPU_IMAGE, &s->module) !=
            ACCEL_OK ||
        accel_kernel_get(s->module, "add_u32", &s->add) != ACCEL_OK) {
        print_error("loading add_u32: %s\n", accel_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    struct shared *s = *state;
    accel_module_unload(s->module);
    support_null_close(&s->null);
    free(s);
    return 0;
}

/* Run WORKERS threads of `worker` while this one resets the device. */
static void run_against_resets(struct shared *s, void *(*worker)(void *),
                               int resets)
{
    pthread_t workers[WORKERS], watcher;
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&workers[i], NULL, worker, s), 0);
    assert_int_equal(pthread_create(&watcher, NULL, watch_status, s), 0);
    for (int i = 0; i < resets; i++) {
        /* Let the workers get some work in between. */
        int before = atomic_load(&s->verified) + atomic_load(&s->stale);
        for (int spin = 0;
             spin < 100000 &&
             atomic_load(&s->verified) + atomic_load(&s->stale) == before;
             spin++)
            sched_yield();
        assert_status(accel_device_reset(s->null.device), ACCEL_OK);
    }
    atomic_store(&s->stop, true);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(workers[i], NULL);
    pthread_join(watcher, NULL);
}

/*
 * Threads launch back to back while the main thread resets the device again
 * and again. Every launch reads the kernel's signature; every reset loads
 * the kernel again. TSan reports a signature read without the lock against
 * the reset's rewrite of it.
 */
static void test_launches_race_with_resets_without_a_data_race(void **state)
{
    struct shared *s = *state;
    run_against_resets(s, launch_only, RESETS);
    assert_int_equal(atomic_load(&s->failures), 0);
    assert_true(atomic_load(&s->verified) > 0);
}

static void test_a_requested_reset_is_not_a_loss_to_other_threads(void **state)
{
    struct shared *s = *state;
    /* A budget of no losses: one counted loss would make the device
     * unrecoverable, and on_loss would hear of it. */
    accel_recovery_policy policy = {
        .automatic = true, .max_losses = 0, .on_loss = on_loss, .user = s};
    assert_status(accel_device_set_recovery(s->null.device, &policy), ACCEL_OK);
    run_against_resets(s, work, RESETS);
    assert_int_equal(atomic_load(&s->lost), 0);
    assert_int_equal(atomic_load(&s->status_lost), 0);
    assert_int_equal(atomic_load(&s->failures), 0);
    assert_true(atomic_load(&s->verified) > 0);
    /* Nothing was counted against the budget, and nothing was told. */
    assert_status(accel_device_status(s->null.device), ACCEL_OK);
    assert_int_equal(atomic_load(&s->losses_told), 0);
    accel_device_info info;
    assert_status(accel_device_info_get(s->null.device, &info), ACCEL_OK);
    assert_true(info.generation >= 1 + RESETS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_launches_race_with_resets_without_a_data_race, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_requested_reset_is_not_a_loss_to_other_threads, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
