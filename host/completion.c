/*
 * Completion: waiting with a strategy, and callbacks.
 *
 * A callback rides on the plugin's host function: when the stream reaches
 * it, the plugin's thread only moves the record to the device's ready queue
 * and wakes whoever delivers (the device's callback thread, or an eventfd
 * for a loop that calls accel_device_dispatch). The user's function never
 * runs on a driver thread, so it may call accel freely.
 *
 * Records the stream will never reach (the device was lost, reset or
 * closed) are delivered with ACCEL_ERR_DEVICE_LOST: every callback runs
 * exactly once. A device's loss callback (recovery.c) travels the same
 * way, so that it too runs where no accel lock is held.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "completion.h"
#include "device.h"
#include "drop.h"
#include "host.h"
#include "os.h"
#include "recovery.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

struct accel__callback {
    accel_callback fn;
    void *user;
    accel_status status;
    /* A loss record instead, when on_loss is set. */
    accel_loss_callback on_loss;
    accel_device *device;
    uint32_t generation;
    struct accel__completion *owner;
    struct accel__cb_counter *counter; /* its stream's; NULL for a loss */
    struct accel__callback *prev, *next;
};

/* ---- waiting ---- */

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* Poll a plugin event until it completes, the timeout passes, or it fails. */
static accel_status poll_event(accel_device *device, accel_drv_event *event,
                               accel_wait_mode mode, uint64_t timeout_ns)
{
    uint64_t start = accel__now_ns();
    uint64_t nap = 1000; /* block mode's sleep, doubling to 1 ms */
    for (uint32_t round = 0;; round++) {
        accel_status status = ACCEL__DRV_WAIT(device, event_query, event);
        if (status != ACCEL_NOT_READY)
            return status;
        /* The clock is read every few polls: it costs more than a poll. */
        if ((mode != ACCEL_WAIT_SPIN || round % 64 == 0) &&
            timeout_ns != ACCEL_WAIT_FOREVER &&
            accel__now_ns() - start >= timeout_ns)
            return accel__error(ACCEL_ERR_TIMEOUT,
                                "the wait passed its timeout of %llu ns",
                                (unsigned long long)timeout_ns);
        if (mode == ACCEL_WAIT_YIELD) {
            sched_yield();
        } else if (mode == ACCEL_WAIT_BLOCK) {
            sleep_ns(nap);
            nap = nap < 1000000 ? nap * 2 : nap;
        }
    }
}

static bool mode_valid(accel_wait_mode mode)
{
    return mode == ACCEL_WAIT_BLOCK || mode == ACCEL_WAIT_SPIN ||
           mode == ACCEL_WAIT_YIELD;
}

/* Wait for a borrowed event, without the device lock. */
static accel_status wait_event(accel_device *device, accel_drv_event *event,
                               accel_wait_mode mode, uint64_t timeout_ns)
{
    if (mode == ACCEL_WAIT_BLOCK && timeout_ns == ACCEL_WAIT_FOREVER)
        return ACCEL__DRV_WAIT(device, event_sync, event);
    return poll_event(device, event, mode, timeout_ns);
}

/* The accel__now_ns at which a wait of `timeout_ns` from now ends. */
static uint64_t deadline_after(uint64_t timeout_ns)
{
    if (timeout_ns == ACCEL_WAIT_FOREVER)
        return UINT64_MAX;
    uint64_t now = accel__now_ns();
    return timeout_ns > UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + timeout_ns;
}

/*
 * After a wait for device work that ended with `status`: wait for the
 * callbacks before the point too (only if the work completed: those the
 * stream never reaches are delivered at a reset or close), then let go of
 * the point. No device lock held.
 */
static accel_status callbacks_wait(accel_device *device,
                                   struct accel__cb_point *point,
                                   accel_status status, uint64_t deadline_ns)
{
    if (status == ACCEL_OK)
        status = accel__cb_point_wait(&device->completion, point, deadline_ns);
    accel__cb_point_release(&device->completion, point);
    return status;
}

/* After a wait, lock held: a failure other than a timeout may be a loss. */
static accel_status wait_status(accel_device *device, accel_status status)
{
    if (status == ACCEL_ERR_TIMEOUT)
        return status;
    status = accel__device_check_loss(device, status);
    if (status == ACCEL_OK && atomic_load(&device->lost))
        status = accel__device_gone(device, "wait");
    return status;
}

static accel_status event_wait_untraced(accel_event *event, accel_wait_mode mode,
                                        uint64_t timeout_ns)
{
    if (event == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_event_wait: NULL");
    if (!mode_valid(mode))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "wait: %d is not an accel_wait_mode", (int)mode);
    accel_device *device = event->device;
    if (accel__process_check(device->pid, "accel_event_wait") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    uint64_t deadline = deadline_after(timeout_ns);
    struct accel__cb_point callbacks = {0};
    pthread_mutex_lock(&device->lock);
    accel__device_reset_wait(device);
    accel_drv_event *drv = event->drv;
    if (drv != NULL) {
        accel__borrow_begin(device);
        accel__cb_point_copy(&device->completion, &event->callbacks, &callbacks);
    }
    pthread_mutex_unlock(&device->lock);
    if (drv == NULL)
        return accel__device_gone(device, "accel_event_wait");
    accel_status status = wait_event(device, drv, mode, timeout_ns);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    status = wait_status(device, status);
    pthread_mutex_unlock(&device->lock);
    return callbacks_wait(device, &callbacks, status, deadline);
}

accel_status accel_event_wait(accel_event *event, accel_wait_mode mode,
                              uint64_t timeout_ns)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = event_wait_untraced(event, mode, timeout_ns);
    return accel__trace_end(traced, status, 0);
}

static accel_status stream_wait_untraced(accel_stream *stream,
                                         accel_wait_mode mode,
                                         uint64_t timeout_ns)
{
    if (mode == ACCEL_WAIT_BLOCK && timeout_ns == ACCEL_WAIT_FOREVER)
        return accel_stream_sync(stream);
    if (!mode_valid(mode))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "wait: %d is not an accel_wait_mode", (int)mode);
    uint64_t deadline = deadline_after(timeout_ns);
    accel_status status = accel__submit_begin(stream, "accel_stream_wait");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__fence fence;
    status = accel__fence_stream(device, stream->drv, &fence);
    if (status != ACCEL_OK)
        return accel__submit_end(stream, status);
    struct accel__cb_point callbacks;
    accel__cb_point_take(&device->completion, stream->callbacks, &callbacks);
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    status = wait_event(device, fence.events[0], mode, timeout_ns);
    pthread_mutex_lock(&device->lock);
    /* After a timeout the event may still be pending in the stream; a spare
     * event is recorded again before any use, so it can go back now. */
    accel__fence_release(device, &fence);
    accel__borrow_end(device);
    status = wait_status(device, status);
    if (status == ACCEL_OK && device->drop.list != NULL)
        accel__drop_collect(device, false);
    accel__device_unlock(device);
    return callbacks_wait(device, &callbacks, status, deadline);
}

accel_status accel_stream_wait(accel_stream *stream, accel_wait_mode mode,
                               uint64_t timeout_ns)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = stream_wait_untraced(stream, mode, timeout_ns);
    return accel__trace_end(traced, status, 0);
}

/* ---- callbacks ---- */

/* The record a callback on this thread is running, for nested syncs. */
static _Thread_local struct accel__callback *running_here;

static void ready_push(struct accel__completion *c, struct accel__callback *cb)
{
    cb->next = NULL;
    cb->prev = c->ready_tail;
    if (c->ready_tail != NULL)
        c->ready_tail->next = cb;
    else
        c->ready = cb;
    c->ready_tail = cb;
    c->ready_count++;
}

static void ready_remove(struct accel__completion *c, struct accel__callback *cb)
{
    if (cb->prev != NULL)
        cb->prev->next = cb->next;
    else
        c->ready = cb->next;
    if (cb->next != NULL)
        cb->next->prev = cb->prev;
    else
        c->ready_tail = cb->prev;
    c->ready_count--;
}

static void outstanding_remove(struct accel__completion *c,
                               struct accel__callback *cb)
{
    if (cb->prev != NULL)
        cb->prev->next = cb->next;
    else
        c->outstanding = cb->next;
    if (cb->next != NULL)
        cb->next->prev = cb->prev;
}

/* Wake the deliverer; completion lock held. */
static void wake(struct accel__completion *c)
{
    if (c->fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(c->fd, &one, sizeof one);
        (void)n; /* a full counter is still readable: nothing is lost */
    } else {
        pthread_cond_signal(&c->cond);
    }
    /* A sync in fd mode may run it itself. */
    pthread_cond_broadcast(&c->ran);
}

/* Runs on the plugin's thread when the stream reaches the callback. */
static void reached(void *user)
{
    struct accel__callback *cb = user;
    struct accel__completion *c = cb->owner;
    pthread_mutex_lock(&c->lock);
    outstanding_remove(c, cb);
    ready_push(c, cb);
    wake(c);
    pthread_mutex_unlock(&c->lock);
}

static void counter_release(struct accel__cb_counter *counter)
{
    if (counter != NULL && --counter->refs == 0)
        free(counter);
}

/*
 * The first ready record that may run now: one of a stream none of whose
 * callbacks is running (so that each stream's run in order, whoever runs
 * them), of `only` when set. Taken off the queue. Completion lock held.
 */
static struct accel__callback *ready_pop(struct accel__completion *c,
                                         const struct accel__cb_counter *only)
{
    for (struct accel__callback *cb = c->ready; cb != NULL; cb = cb->next) {
        if (only != NULL && cb->counter != only)
            continue;
        if (cb->counter != NULL && cb->counter->running)
            continue;
        ready_remove(c, cb);
        return cb;
    }
    return NULL;
}

/* Run one record taken off the queue; completion lock held, let go meanwhile. */
static void run_one(struct accel__completion *c, struct accel__callback *cb)
{
    struct accel__cb_counter *counter = cb->counter;
    if (counter != NULL) {
        counter->running = true;
        counter->runner = pthread_self();
    }
    pthread_mutex_unlock(&c->lock);
    struct accel__callback *outer = running_here;
    running_here = cb;
    uint64_t traced = accel__tracing() ? accel__trace_now() : 0;
    if (cb->on_loss != NULL)
        cb->on_loss(cb->device, cb->generation, cb->status, cb->user);
    else
        cb->fn(cb->user, cb->status);
    accel__trace_callback(traced);
    running_here = outer;
    pthread_mutex_lock(&c->lock);
    if (counter != NULL) {
        counter->running = false;
        counter->done++;
        counter_release(counter);
    }
    free(cb);
    pthread_cond_broadcast(&c->ran);
    /* The callback thread may have passed over one of the same stream. */
    if (c->fd < 0)
        pthread_cond_signal(&c->cond);
}

/* Free a record that will not run (a loss told to a closing device). */
static void discard(struct accel__callback *cb)
{
    counter_release(cb->counter);
    free(cb);
}

static void *callback_thread(void *arg)
{
    struct accel__completion *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        struct accel__callback *cb = c->fd < 0 ? ready_pop(c, NULL) : NULL;
        if (cb != NULL) {
            run_one(c, cb);
            continue;
        }
        if (c->stopping || c->fd >= 0)
            break;
        pthread_cond_wait(&c->cond, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

accel_status accel__completion_init(struct accel__completion *c)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pthread_mutex_init");
    if (pthread_cond_init(&c->cond, NULL) != 0)
        goto fail_cond;
    if (pthread_cond_init(&c->ran, NULL) != 0)
        goto fail_ran;
    return ACCEL_OK;

fail_ran:
    pthread_cond_destroy(&c->cond);
fail_cond:
    pthread_mutex_destroy(&c->lock);
    return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pthread_cond_init");
}

/* Start the callback thread if callbacks need one; completion lock held. */
static accel_status thread_start(struct accel__completion *c)
{
    if (c->thread_running || c->fd >= 0)
        return ACCEL_OK;
    int error = pthread_create(&c->thread, NULL, callback_thread, c);
    if (error != 0)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "pthread_create for the callback thread: %s",
                            strerror(error));
    c->thread_running = true;
    return ACCEL_OK;
}

static void thread_stop(struct accel__completion *c)
{
    pthread_mutex_lock(&c->lock);
    bool running = c->thread_running;
    c->stopping = true;
    c->thread_running = false;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    /* From one of its own callbacks the thread cannot be joined; it ends by
     * itself once it sees `stopping` or the fd. */
    if (running && pthread_equal(c->thread, pthread_self()))
        pthread_detach(c->thread);
    else if (running)
        pthread_join(c->thread, NULL);
    pthread_mutex_lock(&c->lock);
    c->stopping = false;
    pthread_mutex_unlock(&c->lock);
}

/* The stream's counter, made at its first callback; device lock held. */
static accel_status stream_counter(accel_stream *stream)
{
    if (stream->callbacks != NULL)
        return ACCEL_OK;
    stream->callbacks = calloc(1, sizeof *stream->callbacks);
    if (stream->callbacks == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "callback counter");
    stream->callbacks->refs = 1; /* the stream's own */
    return ACCEL_OK;
}

/* Queue a record as outstanding and count it; completion lock held. */
static void outstanding_push(struct accel__completion *c,
                             struct accel__callback *cb)
{
    cb->prev = NULL;
    cb->next = c->outstanding;
    if (c->outstanding != NULL)
        c->outstanding->prev = cb;
    c->outstanding = cb;
    cb->counter->refs++;
    cb->counter->added++;
}

static accel_status stream_add_callback_untraced(accel_stream *stream,
                                                 accel_callback fn, void *user)
{
    if (fn == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_stream_add_callback: NULL function");
    accel_status status = accel__submit_begin(stream,
                                              "accel_stream_add_callback");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__completion *c = &device->completion;
    struct accel__callback *cb = NULL;
    if (!ACCEL__DRV_HAS(device, host_func)) {
        status = accel__error(ACCEL_ERR_NOT_SUPPORTED,
                              "plugin '%s' has no host function entry, so no "
                              "callbacks",
                              device->plugin->name);
        goto done;
    }
    cb = calloc(1, sizeof *cb);
    status = cb == NULL ? accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "callback")
                        : stream_counter(stream);
    if (status != ACCEL_OK)
        goto done;
    *cb = (struct accel__callback){
        .fn = fn, .user = user, .owner = c, .counter = stream->callbacks};
    pthread_mutex_lock(&c->lock);
    status = thread_start(c);
    if (status == ACCEL_OK)
        outstanding_push(c, cb);
    pthread_mutex_unlock(&c->lock);
    if (status != ACCEL_OK)
        goto done;
    status = ACCEL__DRV_CALL(device, host_func, stream->drv, reached, cb);
    if (status != ACCEL_OK) {
        pthread_mutex_lock(&c->lock);
        outstanding_remove(c, cb);
        cb->counter->added--;
        cb->counter->refs--; /* the stream still holds one */
        pthread_mutex_unlock(&c->lock);
    } else {
        cb = NULL; /* the stream owns it now */
    }
done:
    free(cb);
    return accel__submit_end(stream, status);
}

accel_status accel_stream_add_callback(accel_stream *stream, accel_callback fn,
                                       void *user)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = stream_add_callback_untraced(stream, fn, user);
    return accel__trace_end(traced, status, 0);
}

/* ---- waiting for callbacks ---- */

void accel__cb_point_take(struct accel__completion *c,
                          struct accel__cb_counter *counter,
                          struct accel__cb_point *out_point)
{
    *out_point = (struct accel__cb_point){0};
    if (counter == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    if (counter->done < counter->added) {
        counter->refs++;
        *out_point = (struct accel__cb_point){.counter = counter,
                                              .target = counter->added};
    }
    pthread_mutex_unlock(&c->lock);
}

void accel__cb_point_copy(struct accel__completion *c,
                          const struct accel__cb_point *point,
                          struct accel__cb_point *out_point)
{
    *out_point = *point;
    if (point->counter == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    point->counter->refs++;
    pthread_mutex_unlock(&c->lock);
}

void accel__cb_point_release(struct accel__completion *c,
                             struct accel__cb_point *point)
{
    if (point->counter == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    counter_release(point->counter);
    pthread_mutex_unlock(&c->lock);
    *point = (struct accel__cb_point){0};
}

bool accel__cb_point_reached(struct accel__completion *c,
                             const struct accel__cb_point *point)
{
    if (point->counter == NULL)
        return true;
    pthread_mutex_lock(&c->lock);
    bool reached_it = point->counter->done >= point->target;
    pthread_mutex_unlock(&c->lock);
    return reached_it;
}

bool accel__cb_point_running_here(struct accel__completion *c,
                                  const struct accel__cb_point *point)
{
    if (point->counter == NULL)
        return false;
    pthread_mutex_lock(&c->lock);
    bool mine = point->counter->running &&
                pthread_equal(point->counter->runner, pthread_self());
    pthread_mutex_unlock(&c->lock);
    return mine;
}

/* Sleep on `ran` for at most 1 ms past now, or until the deadline. */
static accel_status ran_wait(struct accel__completion *c, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX) {
        pthread_cond_wait(&c->ran, &c->lock);
        return ACCEL_OK;
    }
    if (accel__now_ns() >= deadline_ns)
        return accel__error(ACCEL_ERR_TIMEOUT,
                            "the wait passed its timeout before the callbacks "
                            "enqueued before it had run");
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&c->ran, &c->lock, &until);
    return ACCEL_OK;
}

accel_status accel__cb_point_wait(struct accel__completion *c,
                                  const struct accel__cb_point *point,
                                  uint64_t deadline_ns)
{
    struct accel__cb_counter *counter = point->counter;
    if (counter == NULL)
        return ACCEL_OK;
    accel_status status = ACCEL_OK;
    pthread_mutex_lock(&c->lock);
    while (status == ACCEL_OK && counter->done < point->target) {
        /* Inside one of the stream's own callbacks, the ones after it
         * cannot run before it returns. */
        if (counter->running && pthread_equal(counter->runner, pthread_self())) {
            status = accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                  "a sync from one of the stream's own "
                                  "callbacks would wait for itself");
            break;
        }
        /* In fd mode nobody may be dispatching (a single-threaded loop that
         * syncs), and on the callback thread nobody else runs them: run the
         * stream's ready ones here, in order. */
        struct accel__callback *cb = NULL;
        if (c->fd >= 0 || (running_here != NULL && running_here->owner == c))
            cb = ready_pop(c, counter);
        if (cb != NULL)
            run_one(c, cb);
        else
            status = ran_wait(c, deadline_ns);
    }
    /* What this thread left on the queue is the loop's, as before. */
    if (c->fd >= 0 && c->ready != NULL)
        wake(c);
    pthread_mutex_unlock(&c->lock);
    return status;
}

/* ---- losses, the fd, closing ---- */

void accel__completion_notify_loss(struct accel__completion *c,
                                   accel_device *device,
                                   accel_loss_callback on_loss, void *user,
                                   uint32_t generation, accel_status status)
{
    struct accel__callback *cb = calloc(1, sizeof *cb);
    if (cb == NULL) {
        accel__log(ACCEL_LOG_ERROR, "no memory to tell of a device loss");
        return;
    }
    *cb = (struct accel__callback){.on_loss = on_loss,
                                   .device = device,
                                   .generation = generation,
                                   .status = status,
                                   .user = user,
                                   .owner = c};
    pthread_mutex_lock(&c->lock);
    if (thread_start(c) == ACCEL_OK) {
        ready_push(c, cb);
        wake(c);
        cb = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (cb != NULL) {
        accel__log(ACCEL_LOG_ERROR, "cannot tell of a device loss: %s",
                   accel_last_error());
        free(cb);
    }
}

void accel__completion_abandon(struct accel__completion *c)
{
    pthread_mutex_lock(&c->lock);
    /* The list is newest first: deliver from its tail, in enqueue order. */
    struct accel__callback *cb = c->outstanding;
    while (cb != NULL && cb->next != NULL)
        cb = cb->next;
    c->outstanding = NULL;
    while (cb != NULL) {
        struct accel__callback *newer = cb->prev;
        cb->status = ACCEL_ERR_DEVICE_LOST;
        ready_push(c, cb);
        cb = newer;
    }
    if (c->ready != NULL)
        wake(c);
    pthread_mutex_unlock(&c->lock);
}

static accel_status device_completion_fd_untraced(accel_device *device,
                                                  int *out_fd)
{
    if (out_fd != NULL)
        *out_fd = -1;
    if (device == NULL || out_fd == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_completion_fd: NULL argument");
    if (accel__process_check(device->pid, "accel_device_completion_fd") !=
        ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__completion *c = &device->completion;
    pthread_mutex_lock(&c->lock);
    if (c->fd < 0) {
        c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->fd < 0) {
            int error = errno;
            pthread_mutex_unlock(&c->lock);
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "eventfd: %s",
                                strerror(error));
        }
        /* Whatever the thread had not yet run is now the loop's to run. */
        pthread_cond_broadcast(&c->cond);
        if (c->ready != NULL)
            wake(c);
    }
    int fd = c->fd;
    pthread_mutex_unlock(&c->lock);
    /* The thread sees the fd and ends; dispatch delivers from now on. */
    thread_stop(c);
    *out_fd = fd;
    return ACCEL_OK;
}

accel_status accel_device_completion_fd(accel_device *device, int *out_fd)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = device_completion_fd_untraced(device, out_fd);
    return accel__trace_end(traced, status, 0);
}

static accel_status device_dispatch_untraced(accel_device *device,
                                             size_t *out_count)
{
    if (out_count != NULL)
        *out_count = 0;
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_dispatch: NULL device");
    if (accel__process_check(device->pid, "accel_device_dispatch") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__completion *c = &device->completion;
    pthread_mutex_lock(&c->lock);
    if (c->fd < 0) {
        pthread_mutex_unlock(&c->lock);
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_dispatch: the device delivers "
                            "callbacks on its own thread; call "
                            "accel_device_completion_fd first");
    }
    uint64_t counter;
    ssize_t n = read(c->fd, &counter, sizeof counter);
    (void)n; /* EAGAIN: nothing was signalled, the queue is checked anyway */
    /* Those ready now: a callback that adds one which is reached at once
     * must not keep this call going for ever. */
    size_t count = 0, limit = c->ready_count;
    struct accel__callback *cb = NULL;
    while (count < limit && (cb = ready_pop(c, NULL)) != NULL) {
        run_one(c, cb);
        count++;
    }
    if (c->ready != NULL)
        wake(c);
    pthread_mutex_unlock(&c->lock);
    if (out_count != NULL)
        *out_count = count;
    return ACCEL_OK;
}

accel_status accel_device_dispatch(accel_device *device, size_t *out_count)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = device_dispatch_untraced(device, out_count);
    return accel__trace_end(traced, status, 0);
}

/* Take the loss records off the queue: a closing device tells of none. */
static void ready_drop_losses(struct accel__completion *c)
{
    struct accel__callback *cb = c->ready;
    while (cb != NULL) {
        struct accel__callback *next = cb->next;
        if (cb->on_loss != NULL) {
            ready_remove(c, cb);
            discard(cb);
        }
        cb = next;
    }
}

void accel__completion_quiesce(struct accel__completion *c)
{
    /* A loss callback may be running and use the device: let it finish. */
    thread_stop(c);
    pthread_mutex_lock(&c->lock);
    /* What is left are stream callbacks, run in order by deinit. */
    ready_drop_losses(c);
    pthread_mutex_unlock(&c->lock);
}

void accel__completion_deinit(struct accel__completion *c)
{
    /* Deliver what is left before the thread goes: exactly once. */
    accel__completion_abandon(c);
    thread_stop(c);
    pthread_mutex_lock(&c->lock);
    ready_drop_losses(c);
    struct accel__callback *cb = NULL;
    while ((cb = ready_pop(c, NULL)) != NULL)
        run_one(c, cb);
    pthread_mutex_unlock(&c->lock);
    if (c->fd >= 0)
        close(c->fd);
    pthread_cond_destroy(&c->ran);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
}
