/*
 * The fake runtimes' streams: in-order queues of operations run by a
 * thread each, as a GPU runs work after the call that enqueued it has
 * returned.
 *
 * Each operation has a ticket, and the stream's `completed` says how far
 * it has got. A mark (what an event records) is a (stream, ticket) pair.
 * One condition variable, broadcast whenever any stream moves, serves
 * every wait.
 */
#include "fake_core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fake_copy_run(const struct fake_copy *copy)
{
    const unsigned char *src = copy->snapshot != NULL ? copy->snapshot
                                                      : copy->src;

    for (size_t z = 0; z < copy->depth; z++) {
        for (size_t y = 0; y < copy->height; y++)
            memmove(copy->dst + z * copy->dst_slice + y * copy->dst_pitch,
                    src + z * copy->src_slice + y * copy->src_pitch, copy->width);
    }
}

bool fake_mark_done(const struct fake_mark *mark)
{
    return mark->stream == NULL || mark->stream->completed >= mark->value;
}

static bool fake_wait_satisfied(const struct fake_op *op)
{
    const struct fake_stream *target = op->u.wait.stream;

    return target == NULL || target->completed >= op->u.wait.value ||
           target->owner->lost;
}

/* Run one operation, without the lock. */
static void fake_op_run(struct fake_op *op)
{
    switch (op->kind) {
    case FAKE_OP_COPY:
        fake_copy_run(&op->u.copy);
        break;
    case FAKE_OP_LAUNCH:
        fake_launch_run(&op->u.launch);
        break;
    case FAKE_OP_HOST_FUNC:
        op->u.host.fn(op->u.host.user);
        break;
    case FAKE_OP_WAIT:
    case FAKE_OP_LOSE:
        break;
    }
}

void fake_sleep_us(uint64_t us)
{
    struct timespec delay = {(time_t)(us / 1000000u),
                             (long)(us % 1000000u) * 1000L};

    nanosleep(&delay, NULL);
}

static void *fake_stream_main(void *arg)
{
    struct fake_stream *stream = arg;

    pthread_mutex_lock(&fake_core.lock);
    for (;;) {
        struct fake_op *op = stream->head;
        uint64_t delay_us = fake_core.delay_us;
        bool run;

        if (op == NULL) {
            if (stream->stopping)
                break;
            pthread_cond_wait(&fake_core.progress, &fake_core.lock);
            continue;
        }
        if (op->kind == FAKE_OP_WAIT && !fake_wait_satisfied(op)) {
            pthread_cond_wait(&fake_core.progress, &fake_core.lock);
            continue;
        }
        /*
         * A lost context runs nothing more: its work is dropped, as a GPU's
         * is, host functions too (the driver delivers none after a fault),
         * except a callback that is told of the error (HIP's
         * hipStreamAddCallback): it runs with the error, as the runtime's does.
         */
        run = !stream->owner->lost ||
              (op->kind == FAKE_OP_HOST_FUNC && op->u.host.even_lost);
        if (op->kind == FAKE_OP_LOSE)
            fake_owner_lose(stream->owner);
        pthread_mutex_unlock(&fake_core.lock);
        if (run && delay_us != 0)
            fake_sleep_us(delay_us);
        if (run)
            fake_op_run(op);
        pthread_mutex_lock(&fake_core.lock);
        stream->head = op->next;
        if (stream->head == NULL)
            stream->tail = NULL;
        stream->completed = op->ticket;
        stream->done_ns[op->ticket % FAKE_STAMPS] = fake_now_ns();
        fake_op_free(op);
        pthread_cond_broadcast(&fake_core.progress);
    }
    pthread_mutex_unlock(&fake_core.lock);
    return NULL;
}

bool fake_stream_start(struct fake_stream *stream, struct fake_owner *owner)
{
    memset(stream, 0, sizeof(*stream));
    stream->owner = owner;
    return pthread_create(&stream->thread, NULL, fake_stream_main, stream) == 0;
}

struct fake_op *fake_op_new(enum fake_op_kind kind)
{
    struct fake_op *op = calloc(1, sizeof(*op));

    if (op != NULL)
        op->kind = kind;
    return op;
}

void fake_op_free(struct fake_op *op)
{
    if (op->kind == FAKE_OP_COPY)
        free(op->u.copy.snapshot);
    if (op->kind == FAKE_OP_LAUNCH)
        free(op->u.launch.arg_bytes);
    free(op);
}

void fake_stream_push(struct fake_stream *stream, struct fake_op *op)
{
    op->ticket = ++stream->submitted;
    op->next = NULL;
    if (stream->tail != NULL)
        stream->tail->next = op;
    else
        stream->head = op;
    stream->tail = op;
    pthread_cond_broadcast(&fake_core.progress);
}

bool fake_stream_restart(struct fake_stream *stream, struct fake_owner *owner)
{
    uint64_t tickets = stream->submitted;

    memset(stream, 0, sizeof(*stream));
    stream->owner = owner;
    stream->submitted = tickets;
    stream->completed = tickets;
    return pthread_create(&stream->thread, NULL, fake_stream_main, stream) == 0;
}

void fake_spin_until(bool (*done)(const void *arg), const void *arg)
{
    while (!done(arg)) {
        struct timespec start, now;

        pthread_mutex_unlock(&fake_core.lock);
        clock_gettime(CLOCK_MONOTONIC, &start);
        do
            clock_gettime(CLOCK_MONOTONIC, &now);
        while ((now.tv_sec - start.tv_sec) * 1000000000L +
                   (now.tv_nsec - start.tv_nsec) <
               20000L);
        pthread_mutex_lock(&fake_core.lock);
    }
}

void fake_stream_wait_ticket(struct fake_stream *stream, uint64_t ticket)
{
    while (stream->completed < ticket && !stream->owner->lost)
        pthread_cond_wait(&fake_core.progress, &fake_core.lock);
}

void fake_stream_retire(struct fake_stream *stream)
{
    pthread_t thread = stream->thread;

    if (stream->retired)
        return;
    stream->retired = true;
    stream->stopping = true;
    pthread_cond_broadcast(&fake_core.progress);
    pthread_mutex_unlock(&fake_core.lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&fake_core.lock);
    /* Its queue ran out: every mark on it is done, every wait for it satisfied. */
    pthread_cond_broadcast(&fake_core.progress);
}

uint64_t fake_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

struct fake_mark fake_mark_now(struct fake_stream *stream)
{
    return (struct fake_mark){stream, stream->submitted, fake_now_ns()};
}

uint64_t fake_mark_time(const struct fake_mark *mark)
{
    uint64_t done = 0;

    if (mark->stream != NULL && mark->value != 0)
        done = mark->stream->done_ns[mark->value % FAKE_STAMPS];
    return done > mark->record_ns ? done : mark->record_ns;
}

void fake_mark_wait(const struct fake_mark *mark, const struct fake_owner *owner)
{
    while (!fake_mark_done(mark) && !owner->lost)
        pthread_cond_wait(&fake_core.progress, &fake_core.lock);
}

bool fake_copy_enqueue(struct fake_stream *stream, const struct fake_copy *copy,
                       bool src_host, bool dst_host)
{
    size_t src_span = (copy->depth - 1) * copy->src_slice +
                      (copy->height - 1) * copy->src_pitch + copy->width;
    size_t dst_span = (copy->depth - 1) * copy->dst_slice +
                      (copy->height - 1) * copy->dst_pitch + copy->width;
    struct fake_op *op = fake_op_new(FAKE_OP_COPY);

    if (op == NULL)
        return false;
    op->u.copy = *copy;
    op->u.copy.snapshot = NULL;
    if (src_host &&
        fake_block_find((uintptr_t)copy->src, src_span, false) == NULL) {
        op->u.copy.snapshot = malloc(src_span);
        if (op->u.copy.snapshot == NULL) {
            free(op);
            return false;
        }
        memcpy(op->u.copy.snapshot, copy->src, src_span);
    }
    fake_stream_push(stream, op);
    if (dst_host && fake_block_find((uintptr_t)copy->dst, dst_span, false) == NULL)
        fake_stream_wait_ticket(stream, op->ticket);
    return true;
}
