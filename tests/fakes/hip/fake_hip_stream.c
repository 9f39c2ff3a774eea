/*
 * The fake HIP runtime's streams, events, host functions and copies, over
 * the common queues (tests/fakes/common/fake_queue.c).
 */
#include "fake_hip.h"

#include <stdlib.h>
#include <string.h>

/* ---- streams ---- */

ahip_hipError_t fake_hip_stream_check(struct ihipStream_t *stream,
                                      struct fake_hip_context *ctx)
{
    /* The null stream is not offered: the plugin must use streams of its own. */
    if (stream == NULL || stream->magic != FAKE_HIP_MAGIC_STREAM ||
        stream->ctx != ctx)
        return AHIP_hipErrorInvalidHandle;
    return AHIP_hipSuccess;
}

/* The current context and a stream of it, or why not. */
static ahip_hipError_t fake_hip_stream_ready(struct ihipStream_t *stream)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result = fake_hip_current(&ctx);

    return result != AHIP_hipSuccess ? result
                                     : fake_hip_stream_check(stream, ctx);
}

static void fake_hip_stream_unlink(struct ihipStream_t *stream)
{
    for (struct ihipStream_t **link = &fake_hip.streams; *link != NULL;
         link = &(*link)->next) {
        if (*link == stream) {
            *link = stream->next;
            break;
        }
    }
    stream->magic = FAKE_HIP_MAGIC_RETIRED;
}

/* Stop a stream taken off the list, then let its handle be handed out again. Lock held. */
static void fake_hip_stream_retire(struct ihipStream_t *stream)
{
    fake_stream_retire(&stream->queue);
    stream->next = fake_hip.retired_streams;
    fake_hip.retired_streams = stream;
}

FAKE_EXPORT ahip_hipError_t hipStreamCreateWithFlags(ahip_hipStream_t *out_stream,
                                                     unsigned int flags)
{
    struct fake_hip_context *ctx;
    struct ihipStream_t *stream;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (out_stream == NULL || (flags & ~(unsigned)AHIP_hipStreamNonBlocking) != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    /* A destroyed stream's handle comes back first, as the runtime's may. */
    if (fake_hip.retired_streams != NULL) {
        stream = fake_hip.retired_streams;
        fake_hip.retired_streams = stream->next;
        if (!fake_stream_restart(&stream->queue, &ctx->owner)) {
            stream->next = fake_hip.retired_streams;
            fake_hip.retired_streams = stream;
            FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
        }
    } else {
        stream = calloc(1, sizeof(*stream));
        if (stream == NULL)
            FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
        if (!fake_stream_start(&stream->queue, &ctx->owner)) {
            free(stream);
            FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
        }
    }
    stream->magic = FAKE_HIP_MAGIC_STREAM;
    stream->ctx = ctx;
    stream->next = fake_hip.streams;
    fake_hip.streams = stream;
    *out_stream = stream;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipStreamDestroy(ahip_hipStream_t stream)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (ctx == NULL)
        FAKE_HIP_RETURN(result);
    if (fake_hip_stream_check(stream, ctx) != AHIP_hipSuccess)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    /* HIP returns at once and lets the work finish; waiting for it here is the same. */
    fake_hip_stream_unlink(stream);
    fake_hip_stream_retire(stream);
    FAKE_HIP_RETURN(result);
}

/* What a stream sync waits for: the ticket in `ticket`, or the context's loss. */
struct fake_hip_stream_point {
    struct ihipStream_t *stream;
    uint64_t ticket;
};

static bool fake_hip_stream_point_done(const void *arg)
{
    const struct fake_hip_stream_point *point = arg;

    return point->stream->queue.completed >= point->ticket ||
           point->stream->ctx->owner.lost;
}

/* Polls actively, as ROCm's runtime does without a blocking-sync device flag. */
FAKE_EXPORT ahip_hipError_t hipStreamSynchronize(ahip_hipStream_t stream)
{
    struct fake_hip_stream_point point;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_stream_ready(stream);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    point = (struct fake_hip_stream_point){stream, stream->queue.submitted};
    fake_spin_until(fake_hip_stream_point_done, &point);
    FAKE_HIP_RETURN(stream->ctx->owner.lost ? AHIP_hipErrorIllegalAddress
                                            : AHIP_hipSuccess);
}

void fake_hip_release_streams(struct fake_hip_context *ctx)
{
    /* Streams first, their threads stopped: the scan restarts after each, since retiring drops the lock. */
    for (;;) {
        struct ihipStream_t *stream = fake_hip.streams;

        while (stream != NULL && stream->ctx != ctx)
            stream = stream->next;
        if (stream == NULL)
            break;
        fake_hip_stream_unlink(stream);
        fake_hip_stream_retire(stream);
    }
    /*
     * Events outlive the reset, as the runtime's do (they are not the
     * device's: hipEventDestroy alone frees them), but the streams their
     * marks point into are gone, and a retired stream is handed out again:
     * each reads as never recorded.
     */
    for (struct ihipEvent_t *event = fake_hip.events; event != NULL;
         event = event->next) {
        if (event->ctx == ctx)
            event->mark = (struct fake_mark){0};
    }
}

/* ---- events ---- */

/* Live events, every context's: as modules, a reset leaves them to hipEventDestroy. */
FAKE_EXPORT uint64_t fake_hip_live_events(void)
{
    uint64_t count = 0;

    pthread_mutex_lock(&fake_core.lock);
    for (const struct ihipEvent_t *e = fake_hip.events; e != NULL; e = e->next)
        count++;
    pthread_mutex_unlock(&fake_core.lock);
    return count;
}

static ahip_hipError_t fake_hip_event_check(struct ihipEvent_t *event,
                                            struct fake_hip_context *ctx)
{
    if (event == NULL || event->magic != FAKE_HIP_MAGIC_EVENT || event->ctx != ctx)
        return AHIP_hipErrorInvalidHandle;
    return AHIP_hipSuccess;
}

/* The current context and an event of it, or why not. */
static ahip_hipError_t fake_hip_event_ready(struct ihipEvent_t *event,
                                            struct fake_hip_context **out_ctx)
{
    ahip_hipError_t result = fake_hip_current(out_ctx);

    return result != AHIP_hipSuccess ? result
                                     : fake_hip_event_check(event, *out_ctx);
}

FAKE_EXPORT ahip_hipError_t hipEventCreateWithFlags(ahip_hipEvent_t *out_event,
                                                    unsigned int flags)
{
    struct fake_hip_context *ctx;
    struct ihipEvent_t *event;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (out_event == NULL || (flags & ~(unsigned)(AHIP_hipEventDisableTiming |
                                                  AHIP_hipEventBlockingSync)) != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    event = calloc(1, sizeof(*event));
    if (event == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    event->magic = FAKE_HIP_MAGIC_EVENT;
    event->ctx = ctx;
    event->blocking = (flags & AHIP_hipEventBlockingSync) != 0;
    event->timing = (flags & AHIP_hipEventDisableTiming) == 0;
    event->next = fake_hip.events;
    fake_hip.events = event;
    *out_event = event;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipEventDestroy(ahip_hipEvent_t event)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (ctx == NULL)
        FAKE_HIP_RETURN(result);
    if (fake_hip_event_check(event, ctx) != AHIP_hipSuccess)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    for (struct ihipEvent_t **link = &fake_hip.events; *link != NULL;
         link = &(*link)->next) {
        if (*link == event) {
            *link = event->next;
            break;
        }
    }
    event->magic = FAKE_HIP_MAGIC_RETIRED;
    event->next = fake_hip.retired_events;
    fake_hip.retired_events = event;
    FAKE_HIP_RETURN(result);
}

FAKE_EXPORT ahip_hipError_t hipEventRecord(ahip_hipEvent_t event,
                                           ahip_hipStream_t stream)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_event_ready(event, &ctx);
    if (result == AHIP_hipSuccess)
        result = fake_hip_stream_check(stream, ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    event->mark = fake_mark_now(&stream->queue);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipEventQuery(ahip_hipEvent_t event)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_event_ready(event, &ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    FAKE_HIP_RETURN(fake_mark_done(&event->mark) ? AHIP_hipSuccess
                                                 : AHIP_hipErrorNotReady);
}

/*
 * As the runtime: both events of the current device, made with timing and
 * recorded (else hipErrorInvalidHandle), and done (else hipErrorNotReady).
 */
FAKE_EXPORT ahip_hipError_t hipEventElapsedTime(float *milliseconds,
                                                ahip_hipEvent_t start,
                                                ahip_hipEvent_t end)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_event_ready(start, &ctx);
    if (result == AHIP_hipSuccess)
        result = fake_hip_event_check(end, ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (milliseconds == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!start->timing || !end->timing || start->mark.stream == NULL ||
        end->mark.stream == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    if (!fake_mark_done(&start->mark) || !fake_mark_done(&end->mark))
        FAKE_HIP_RETURN(AHIP_hipErrorNotReady);
    *milliseconds = (float)((double)((int64_t)(fake_mark_time(&end->mark) -
                                               fake_mark_time(&start->mark))) /
                            1e6);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

static bool fake_hip_event_done(const void *arg)
{
    const struct ihipEvent_t *event = arg;

    return fake_mark_done(&event->mark) || event->ctx->owner.lost;
}

/* Sleeps for an event made with hipEventBlockingSync; polls actively for any other. */
FAKE_EXPORT ahip_hipError_t hipEventSynchronize(ahip_hipEvent_t event)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_event_ready(event, &ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (event->blocking)
        fake_mark_wait(&event->mark, &ctx->owner);
    else
        fake_spin_until(fake_hip_event_done, event);
    FAKE_HIP_RETURN(ctx->owner.lost ? AHIP_hipErrorIllegalAddress
                                    : AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipStreamWaitEvent(ahip_hipStream_t stream,
                                               ahip_hipEvent_t event,
                                               unsigned int flags)
{
    ahip_hipError_t result;
    struct fake_op *op;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_stream_ready(stream);
    if (result == AHIP_hipSuccess)
        result = fake_hip_event_check(event, stream->ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (flags != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    /* The event as recorded now; never recorded, or done: nothing to wait for. */
    if (fake_mark_done(&event->mark))
        FAKE_HIP_RETURN(AHIP_hipSuccess);
    op = fake_op_new(FAKE_OP_WAIT);
    if (op == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    op->u.wait.stream = event->mark.stream;
    op->u.wait.value = event->mark.value;
    fake_stream_push(&stream->queue, op);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* ---- host functions ---- */

static ahip_hipError_t fake_hip_enqueue_host(struct ihipStream_t *stream,
                                             void (*fn)(void *), void *user,
                                             bool even_lost)
{
    struct fake_op *op = fake_op_new(FAKE_OP_HOST_FUNC);

    if (op == NULL)
        return AHIP_hipErrorOutOfMemory;
    op->u.host.fn = fn;
    op->u.host.user = user;
    op->u.host.even_lost = even_lost;
    fake_stream_push(&stream->queue, op);
    return AHIP_hipSuccess;
}

#ifndef FAKE_HIP_ROCM5
FAKE_EXPORT ahip_hipError_t hipLaunchHostFunc(ahip_hipStream_t stream,
                                              ahip_hipHostFn_t fn, void *user)
{
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_stream_ready(stream);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (fn == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    FAKE_HIP_RETURN(fake_hip_enqueue_host(stream, fn, user, false));
}
#endif

/* hipStreamAddCallback's callback, run as a host function with the stream's status. */
struct fake_hip_callback {
    ahip_hipStreamCallback_t callback;
    struct ihipStream_t *stream;
    void *user;
};

static void fake_hip_callback_run(void *arg)
{
    struct fake_hip_callback call = *(struct fake_hip_callback *)arg;
    ahip_hipError_t status;

    pthread_mutex_lock(&fake_core.lock);
    status = call.stream->ctx->owner.lost ? AHIP_hipErrorIllegalAddress
                                          : AHIP_hipSuccess;
    pthread_mutex_unlock(&fake_core.lock);
    free(arg);
    call.callback(call.stream, status, call.user);
}

FAKE_EXPORT ahip_hipError_t hipStreamAddCallback(ahip_hipStream_t stream,
                                                 ahip_hipStreamCallback_t callback,
                                                 void *user, unsigned int flags)
{
    struct fake_hip_callback *call;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_stream_ready(stream);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (callback == NULL || flags != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    call = malloc(sizeof(*call));
    if (call == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    *call = (struct fake_hip_callback){callback, stream, user};
    /* Run on a lost stream too, with the error: what ROCm's runtime does. */
    result = fake_hip_enqueue_host(stream, fake_hip_callback_run, call, true);
    if (result != AHIP_hipSuccess)
        free(call);
    FAKE_HIP_RETURN(result);
}

/* ---- copies ---- */

/* One side of a copy: where it starts, its pitches, and whether it is device memory. */
struct fake_hip_side {
    uintptr_t start;
    size_t pitch;
    size_t slice; /* bytes from slice to slice */
    bool device;
    /* The device whose allocation a device side must be, from 0; -1: the
     * stream's. A copy with one device's kind refuses a peer device's
     * memory, so that only the peer call reaches it. */
    int owner;
};

/* Which sides a kind says are device memory; false for a kind the plugin must not use. */
static bool fake_hip_kind_sides(ahip_hipMemcpyKind kind, bool *out_src_device,
                                bool *out_dst_device)
{
    switch (kind) {
    case AHIP_hipMemcpyHostToDevice:
        *out_src_device = false;
        *out_dst_device = true;
        return true;
    case AHIP_hipMemcpyDeviceToHost:
        *out_src_device = true;
        *out_dst_device = false;
        return true;
    case AHIP_hipMemcpyDeviceToDevice:
        *out_src_device = true;
        *out_dst_device = true;
        return true;
    case AHIP_hipMemcpyHostToHost:
    case AHIP_hipMemcpyDefault:
        break;
    }
    return false;
}

/*
 * A side's bytes are what its kind says: device memory inside one live
 * allocation, or host memory that is not device memory.
 */
static bool fake_hip_side_valid(const struct fake_hip_side *side,
                                int stream_device, size_t width, size_t height,
                                size_t depth)
{
    size_t span = (depth - 1) * side->slice + (height - 1) * side->pitch + width;
    const struct fake_block *block;

    if (side->start == 0)
        return false;
    if (side->device) {
        block = fake_block_find(side->start, span, true);
        return block != NULL &&
               block->device == (side->owner >= 0 ? side->owner : stream_device);
    }
    return fake_block_find(side->start, 1, true) == NULL;
}

/* Check a copy's shape and sides and enqueue it. Lock held. */
static ahip_hipError_t fake_hip_copy(struct ihipStream_t *stream,
                                     const struct fake_hip_side *src,
                                     const struct fake_hip_side *dst,
                                     size_t width, size_t height, size_t depth)
{
    struct fake_copy copy;

    if (width == 0 || height == 0 || depth == 0)
        return AHIP_hipSuccess;
    if ((height > 1 || depth > 1) &&
        (src->pitch < width || dst->pitch < width ||
         src->pitch > fake_hip.max_pitch || dst->pitch > fake_hip.max_pitch))
        return AHIP_hipErrorInvalidPitchValue;
    if (depth > 1 &&
        (src->slice < height * src->pitch || dst->slice < height * dst->pitch))
        return AHIP_hipErrorInvalidValue;
    if (!fake_hip_side_valid(src, stream->ctx->owner.device, width, height,
                             depth) ||
        !fake_hip_side_valid(dst, stream->ctx->owner.device, width, height, depth))
        return AHIP_hipErrorInvalidValue;
    copy = (struct fake_copy){(unsigned char *)dst->start,
                              (const unsigned char *)src->start,
                              width,
                              height,
                              depth,
                              src->pitch,
                              dst->pitch,
                              src->slice,
                              dst->slice,
                              NULL};
    return fake_copy_enqueue(&stream->queue, &copy, !src->device, !dst->device)
               ? AHIP_hipSuccess
               : AHIP_hipErrorOutOfMemory;
}

/* The entries' common start: a ready stream and a direction the plugin may use. */
static ahip_hipError_t fake_hip_copy_ready(struct ihipStream_t *stream,
                                           ahip_hipMemcpyKind kind,
                                           bool *out_src_device,
                                           bool *out_dst_device)
{
    ahip_hipError_t result = fake_hip_stream_ready(stream);

    if (result != AHIP_hipSuccess)
        return result;
    return fake_hip_kind_sides(kind, out_src_device, out_dst_device)
               ? AHIP_hipSuccess
               : AHIP_hipErrorInvalidMemcpyDirection;
}

FAKE_EXPORT ahip_hipError_t hipMemcpyAsync(void *dst, const void *src,
                                           size_t bytes, ahip_hipMemcpyKind kind,
                                           ahip_hipStream_t stream)
{
    struct fake_hip_side from = {(uintptr_t)src, bytes, bytes, false, -1};
    struct fake_hip_side to = {(uintptr_t)dst, bytes, bytes, false, -1};
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_copy_ready(stream, kind, &from.device, &to.device);
    if (result == AHIP_hipSuccess)
        result = fake_hip_copy(stream, &from, &to, bytes, 1, 1);
    FAKE_HIP_RETURN(result);
}

FAKE_EXPORT ahip_hipError_t hipMemcpy2DAsync(void *dst, size_t dst_pitch,
                                             const void *src, size_t src_pitch,
                                             size_t width, size_t height,
                                             ahip_hipMemcpyKind kind,
                                             ahip_hipStream_t stream)
{
    struct fake_hip_side from = {(uintptr_t)src, src_pitch, src_pitch * height,
                                 false, -1};
    struct fake_hip_side to = {(uintptr_t)dst, dst_pitch, dst_pitch * height,
                               false, -1};
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_copy_ready(stream, kind, &from.device, &to.device);
    if (result == AHIP_hipSuccess)
        result = fake_hip_copy(stream, &from, &to, width, height, 1);
    FAKE_HIP_RETURN(result);
}

/* One side of hipMemcpy3DParms: a pitched pointer and a position in it. */
static struct fake_hip_side fake_hip_side_3d(const ahip_hipPitchedPtr *pointer,
                                             const ahip_hipPos *position)
{
    size_t slice = pointer->pitch * pointer->ysize;

    return (struct fake_hip_side){(uintptr_t)pointer->ptr + position->z * slice +
                                      position->y * pointer->pitch + position->x,
                                  pointer->pitch, slice, false, -1};
}

FAKE_EXPORT ahip_hipError_t hipMemcpy3DAsync(const ahip_hipMemcpy3DParms *copy,
                                             ahip_hipStream_t stream)
{
    struct fake_hip_side from, to;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    if (copy == NULL || copy->srcArray != NULL || copy->dstArray != NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    from = fake_hip_side_3d(&copy->srcPtr, &copy->srcPos);
    to = fake_hip_side_3d(&copy->dstPtr, &copy->dstPos);
    result = fake_hip_copy_ready(stream, copy->kind, &from.device, &to.device);
    if (result == AHIP_hipSuccess)
        result = fake_hip_copy(stream, &from, &to, copy->extent.width,
                               copy->extent.height, copy->extent.depth);
    FAKE_HIP_RETURN(result);
}

/* As HIP's: device memory of `dst_device` and of `src_device`, by their ordinals. */
FAKE_EXPORT ahip_hipError_t hipMemcpyPeerAsync(void *dst, int dst_device,
                                               const void *src, int src_device,
                                               size_t bytes,
                                               ahip_hipStream_t stream)
{
    struct fake_hip_side from = {(uintptr_t)src, bytes, bytes, true, src_device};
    struct fake_hip_side to = {(uintptr_t)dst, bytes, bytes, true, dst_device};
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_stream_ready(stream);
    if (result == AHIP_hipSuccess && (dst_device < 0 || src_device < 0))
        result = AHIP_hipErrorInvalidValue;
    if (result == AHIP_hipSuccess)
        result = fake_hip_copy(stream, &from, &to, bytes, 1, 1);
    FAKE_HIP_RETURN(result);
}
