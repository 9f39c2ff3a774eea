/*
 * Completion: waiting with each strategy, timeouts, callbacks in order and
 * exactly once, and the pollable file descriptor.
 */
#include "support.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct completion_case {
    struct support_null null;
    accel_device *device;
    accel_stream *stream;
    accel_stream *other;
    accel_ref ref;       /* written by work on `stream` */
    accel_ref other_ref; /* written by work on `other` */
};

static int setup_with(void **state, const char *const *env)
{
    struct completion_case *c = calloc(1, sizeof *c);
    *state = c;
    if (c == NULL || support_null_open(&c->null, env) != 0)
        return -1;
    c->device = c->null.device;
    c->stream = c->null.stream;
    if (accel_stream_create(c->device, &c->other) != ACCEL_OK ||
        accel_alloc(c->device, ACCEL_U8, 4096, &c->ref) != ACCEL_OK ||
        accel_alloc(c->device, ACCEL_U8, 4096, &c->other_ref) != ACCEL_OK)
        return -1;
    return 0;
}

/* Each command on the device takes 20 ms, so that waits really wait, also
 * under valgrind on a loaded machine. */
static int setup(void **state)
{
    static const char *const env[] = {"ACCEL_NULL_DELAY_US=20000", NULL};
    return setup_with(state, env);
}

static int setup_fast(void **state)
{
    return setup_with(state, NULL);
}

static int teardown(void **state)
{
    struct completion_case *c = *state;
    if (c == NULL)
        return 0;
    /* A test may have closed the device itself. */
    if (c->null.device != NULL && c->ref.count != 0) {
        accel_free(c->device, c->ref);
        accel_free(c->device, c->other_ref);
    }
    accel_stream_destroy(c->other);
    support_null_close(&c->null);
    free(c);
    return 0;
}

static uint8_t scratch[4096];

/* Enqueue one command: with the delay it is still pending on return. Each
 * stream writes its own ref: two streams are not ordered with each other. */
static void enqueue_work(struct completion_case *c, accel_stream *stream)
{
    accel_ref ref = stream == c->stream ? c->ref : c->other_ref;
    assert_status(accel_copy_to_device(stream, ref, 0, scratch, sizeof scratch),
                  ACCEL_OK);
}

static void wait_with(void **state, accel_wait_mode mode)
{
    struct completion_case *c = *state;
    accel_event *event;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    enqueue_work(c, c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_query(event), ACCEL_NOT_READY);
    assert_status(accel_event_wait(event, mode, ACCEL_WAIT_FOREVER), ACCEL_OK);
    assert_status(accel_event_query(event), ACCEL_OK);
    enqueue_work(c, c->stream);
    assert_status(accel_stream_wait(c->stream, mode, ACCEL_WAIT_FOREVER),
                  ACCEL_OK);
    accel_event_destroy(event);
}

static void test_spin_wait_completes(void **state)
{
    wait_with(state, ACCEL_WAIT_SPIN);
}

static void test_yield_wait_completes(void **state)
{
    wait_with(state, ACCEL_WAIT_YIELD);
}

static void test_block_wait_completes(void **state)
{
    wait_with(state, ACCEL_WAIT_BLOCK);
}

static void timeout_with(void **state, accel_wait_mode mode)
{
    struct completion_case *c = *state;
    accel_event *event;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    for (int i = 0; i < 10; i++)
        enqueue_work(c, c->stream); /* about 200 ms of work */
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_wait(event, mode, 1000000), ACCEL_ERR_TIMEOUT);
    assert_status(accel_stream_wait(c->stream, mode, 1000000), ACCEL_ERR_TIMEOUT);
    assert_status(accel_event_wait(event, mode, 10000000000ull), ACCEL_OK);
    assert_status(accel_stream_wait(c->stream, mode, 0), ACCEL_OK);
    accel_event_destroy(event);
}

static void test_spin_wait_times_out(void **state)
{
    timeout_with(state, ACCEL_WAIT_SPIN);
}

static void test_yield_wait_times_out(void **state)
{
    timeout_with(state, ACCEL_WAIT_YIELD);
}

static void test_block_wait_times_out(void **state)
{
    timeout_with(state, ACCEL_WAIT_BLOCK);
}

static void test_bad_wait_mode_is_rejected(void **state)
{
    struct completion_case *c = *state;
    accel_event *event;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    assert_status(accel_event_wait(event, (accel_wait_mode)7, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_event_wait(NULL, ACCEL_WAIT_SPIN, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
    accel_event_destroy(event);
}

/* ---- callbacks ---- */

#define CALLS 200

struct record {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int order[2][CALLS];
    int count[2];
    int total;
    accel_status statuses[2 * CALLS];
    pthread_t threads[2 * CALLS];
};

struct call {
    struct record *record;
    int stream;
    int index;
};

static void on_complete(void *user, accel_status status)
{
    struct call *call = user;
    struct record *r = call->record;
    pthread_mutex_lock(&r->lock);
    r->order[call->stream][r->count[call->stream]++] = call->index;
    r->statuses[r->total] = status;
    r->threads[r->total] = pthread_self();
    r->total++;
    pthread_cond_broadcast(&r->done);
    pthread_mutex_unlock(&r->lock);
}

static void record_init(struct record *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->done, NULL);
}

static void record_wait(struct record *r, int total)
{
    pthread_mutex_lock(&r->lock);
    while (r->total < total)
        pthread_cond_wait(&r->done, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

static void record_check_order(const struct record *r)
{
    for (int s = 0; s < 2; s++) {
        assert_int_equal(r->count[s], CALLS);
        for (int i = 0; i < CALLS; i++)
            assert_int_equal(r->order[s][i], i);
    }
}

static void add_callbacks(struct completion_case *c, struct record *r,
                          struct call calls[2][CALLS])
{
    for (int i = 0; i < CALLS; i++) {
        for (int s = 0; s < 2; s++) {
            calls[s][i] = (struct call){.record = r, .stream = s, .index = i};
            accel_stream *stream = s ? c->other : c->stream;
            if (i % 50 == 0)
                enqueue_work(c, stream);
            assert_status(
                accel_stream_add_callback(stream, on_complete, &calls[s][i]),
                ACCEL_OK);
        }
    }
}

static void test_callbacks_run_once_in_order_on_a_host_thread(void **state)
{
    struct completion_case *c = *state;
    static struct record r;
    static struct call calls[2][CALLS];
    record_init(&r);
    add_callbacks(c, &r, calls);
    record_wait(&r, 2 * CALLS);
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    record_check_order(&r);
    assert_int_equal(r.total, 2 * CALLS);
    for (int i = 0; i < 2 * CALLS; i++) {
        assert_status(r.statuses[i], ACCEL_OK);
        assert_false(pthread_equal(r.threads[i], pthread_self()));
    }
}

static void test_callbacks_through_the_fd_with_poll(void **state)
{
    struct completion_case *c = *state;
    static struct record r;
    static struct call calls[2][CALLS];
    record_init(&r);
    int fd = -1, again = -2;
    assert_status(accel_device_completion_fd(c->device, &fd), ACCEL_OK);
    assert_true(fd >= 0);
    assert_status(accel_device_completion_fd(c->device, &again), ACCEL_OK);
    assert_int_equal(again, fd);
    struct pollfd idle = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&idle, 1, 0), 0);

    add_callbacks(c, &r, calls);
    int dispatched = 0;
    while (dispatched < 2 * CALLS) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 10000), 1);
        size_t count = 0;
        assert_status(accel_device_dispatch(c->device, &count), ACCEL_OK);
        dispatched += (int)count;
    }
    assert_int_equal(dispatched, 2 * CALLS);
    record_check_order(&r);
    /* Every callback ran on this thread, inside dispatch. */
    for (int i = 0; i < 2 * CALLS; i++)
        assert_true(pthread_equal(r.threads[i], pthread_self()));
    struct pollfd drained = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&drained, 1, 0), 0);
}

static void test_dispatch_without_fd_mode_is_an_error(void **state)
{
    struct completion_case *c = *state;
    assert_status(accel_device_dispatch(c->device, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static atomic_int closing_calls;
static accel_status closing_status;

static void on_close(void *user, accel_status status)
{
    (void)user;
    closing_status = status;
    atomic_fetch_add(&closing_calls, 1);
}

static void test_pending_callback_runs_once_when_device_closes(void **state)
{
    struct completion_case *c = *state;
    atomic_store(&closing_calls, 0);
    enqueue_work(c, c->stream);
    assert_status(accel_stream_add_callback(c->stream, on_close, NULL), ACCEL_OK);
    accel_free(c->device, c->ref);
    accel_free(c->device, c->other_ref);
    c->ref.count = 0;
    accel_stream_destroy(c->null.stream);
    accel_stream_destroy(c->other);
    c->null.stream = c->other = NULL;
    accel_device_close(c->null.device);
    c->null.device = NULL;
    assert_int_equal(atomic_load(&closing_calls), 1);
    assert_status(closing_status, ACCEL_OK);
}

/* ---- syncs wait for the callbacks enqueued before them ---- */

/* User data a callback writes after a pause, freed right after a sync. */
struct slow_data {
    atomic_int ran;
    pthread_t thread;
    accel_status status;
};

static void on_slow(void *user, accel_status status)
{
    struct slow_data *data = user;
    /* Long enough that a sync that does not wait returns first. */
    nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    data->thread = pthread_self();
    data->status = status;
    atomic_store(&data->ran, 1);
}

static struct slow_data *add_slow(accel_stream *stream)
{
    struct slow_data *data = calloc(1, sizeof *data);
    assert_non_null(data);
    assert_status(accel_stream_add_callback(stream, on_slow, data), ACCEL_OK);
    return data;
}

/* The callback has run, on the expected side of this thread; then the
 * application may free its data (ASan sees a callback that has not). */
static void ran_and_free(struct slow_data *data, bool on_this_thread)
{
    assert_int_equal(atomic_load(&data->ran), 1);
    assert_status(data->status, ACCEL_OK);
    assert_int_equal(pthread_equal(data->thread, pthread_self()) != 0,
                     on_this_thread);
    free(data);
}

static void test_stream_sync_waits_for_callbacks_on_the_thread(void **state)
{
    struct completion_case *c = *state;
    enqueue_work(c, c->stream);
    struct slow_data *data = add_slow(c->stream);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    ran_and_free(data, false);
    /* accel_stream_wait is a sync too, in every mode. */
    data = add_slow(c->stream);
    assert_status(
        accel_stream_wait(c->stream, ACCEL_WAIT_SPIN, ACCEL_WAIT_FOREVER),
        ACCEL_OK);
    ran_and_free(data, false);
}

static void test_an_event_after_a_callback_completes_after_it_ran(void **state)
{
    struct completion_case *c = *state;
    accel_event *event = NULL;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    struct slow_data *data = add_slow(c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    ran_and_free(data, false);

    data = add_slow(c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    accel_status status;
    while ((status = accel_event_query(event)) == ACCEL_NOT_READY)
        sched_yield();
    /* Complete means the callback has run. */
    assert_status(status, ACCEL_OK);
    ran_and_free(data, false);

    data = add_slow(c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_wait(event, ACCEL_WAIT_YIELD, ACCEL_WAIT_FOREVER),
                  ACCEL_OK);
    ran_and_free(data, false);
    accel_event_destroy(event);
}

/*
 * fd mode with a loop that has not dispatched: the sync runs the stream's
 * ready callbacks itself, on the calling thread, so that a single-threaded
 * loop that syncs cannot deadlock. Dispatch then has nothing left to run.
 */
static void test_in_fd_mode_a_sync_runs_the_streams_callbacks_itself(void **state)
{
    struct completion_case *c = *state;
    int fd = -1;
    assert_status(accel_device_completion_fd(c->device, &fd), ACCEL_OK);
    enqueue_work(c, c->stream);
    struct slow_data *data = add_slow(c->stream);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    ran_and_free(data, true);

    accel_event *event = NULL;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    data = add_slow(c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    ran_and_free(data, true);

    /* A query does not run callbacks: not complete until dispatched. */
    data = add_slow(c->stream);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    for (int i = 0; i < 50; i++) {
        assert_status(accel_event_query(event), ACCEL_NOT_READY);
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    size_t count = 0;
    assert_status(accel_device_dispatch(c->device, &count), ACCEL_OK);
    assert_int_equal(count, 1);
    assert_status(accel_event_query(event), ACCEL_OK);
    ran_and_free(data, true);

    data = add_slow(c->stream);
    assert_status(accel_stream_wait(c->stream, ACCEL_WAIT_BLOCK, 5000000000ull),
                  ACCEL_OK);
    ran_and_free(data, true);
    assert_status(accel_device_dispatch(c->device, &count), ACCEL_OK);
    assert_int_equal(count, 0);
    accel_event_destroy(event);
}

/*
 * The application frees the callback's data as soon as the sync returns,
 * and the device goes on (or the loop dispatches): a callback that had not
 * run yet would write freed memory, which ASan reports.
 */
static void test_user_data_freed_right_after_a_sync_is_not_used_again(void **state)
{
    struct completion_case *c = *state;
    for (int fd_mode = 0; fd_mode < 2; fd_mode++) {
        int fd = -1;
        if (fd_mode)
            assert_status(accel_device_completion_fd(c->device, &fd), ACCEL_OK);
        enqueue_work(c, c->stream);
        struct slow_data *data = calloc(1, sizeof *data);
        assert_non_null(data);
        assert_status(accel_stream_add_callback(c->stream, on_slow, data),
                      ACCEL_OK);
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        free(data);
        nanosleep(&(struct timespec){.tv_nsec = 60000000}, NULL);
        if (fd_mode)
            assert_status(accel_device_dispatch(c->device, NULL), ACCEL_OK);
        assert_status(accel_device_sync(c->device), ACCEL_OK);
    }
}

static atomic_int nested_status;

static void on_sync_own_stream(void *user, accel_status status)
{
    (void)status;
    atomic_store(&nested_status, accel_stream_sync(user));
}

static void test_a_sync_from_the_streams_own_callback_is_refused(void **state)
{
    struct completion_case *c = *state;
    atomic_store(&nested_status, -1);
    assert_status(
        accel_stream_add_callback(c->stream, on_sync_own_stream, c->stream),
        ACCEL_OK);
    struct slow_data *data = add_slow(c->stream);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(atomic_load(&nested_status), ACCEL_ERR_INVALID_ARGUMENT);
    ran_and_free(data, false);
}

static void test_null_callback_is_rejected(void **state)
{
    struct completion_case *c = *state;
    assert_status(accel_stream_add_callback(c->stream, NULL, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define F(name) cmocka_unit_test_setup_teardown(name, setup_fast, teardown)
        T(test_spin_wait_completes),
        T(test_yield_wait_completes),
        T(test_block_wait_completes),
        T(test_spin_wait_times_out),
        T(test_yield_wait_times_out),
        T(test_block_wait_times_out),
        F(test_bad_wait_mode_is_rejected),
        /* The delay holds every command, callbacks too: 400 of them run
         * without it. */
        F(test_callbacks_run_once_in_order_on_a_host_thread),
        F(test_callbacks_through_the_fd_with_poll),
        F(test_dispatch_without_fd_mode_is_an_error),
        T(test_pending_callback_runs_once_when_device_closes),
        F(test_null_callback_is_rejected),
        T(test_stream_sync_waits_for_callbacks_on_the_thread),
        T(test_an_event_after_a_callback_completes_after_it_ran),
        T(test_in_fd_mode_a_sync_runs_the_streams_callbacks_itself),
        F(test_a_sync_from_the_streams_own_callback_is_refused),
        T(test_user_data_freed_right_after_a_sync_is_not_used_again),
#undef T
#undef F
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
