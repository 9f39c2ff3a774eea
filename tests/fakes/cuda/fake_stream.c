/*
 * The fake driver's streams, events, copies and host functions, over the
 * common queues (tests/fakes/common/fake_queue.c): an event is the mark
 * of its stream taken when it is recorded.
 */
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>

/* ---- streams ---- */

acu_CUresult fake_stream_check(struct CUstream_st *stream, struct CUctx_st *ctx)
{
    /* The legacy default stream (NULL) is not offered: the plugin must not use it. */
    if (stream == NULL || stream->magic != FAKE_MAGIC_STREAM || stream->ctx != ctx)
        return ACU_CUDA_ERROR_INVALID_HANDLE;
    return ACU_CUDA_SUCCESS;
}

/* The current context and a stream of it, or why not. */
static acu_CUresult fake_stream_ready(struct CUstream_st *stream)
{
    struct CUctx_st *ctx;
    acu_CUresult result = fake_current(&ctx);

    return result != ACU_CUDA_SUCCESS ? result : fake_stream_check(stream, ctx);
}

/* Take a stream off the live list, then stop its thread once its queue is done. */
static void fake_stream_end(struct CUstream_st *stream)
{
    for (struct CUstream_st **link = &fake.streams; *link != NULL;
         link = &(*link)->next) {
        if (*link == stream) {
            *link = stream->next;
            break;
        }
    }
    stream->magic = FAKE_MAGIC_RETIRED;
    fake_stream_retire(&stream->queue);
    /* Only once its thread is joined may the handle be handed out again. */
    stream->next = fake.retired_streams;
    fake.retired_streams = stream;
}

static void fake_event_end(struct CUevent_st **link)
{
    struct CUevent_st *event = *link;

    *link = event->next;
    event->magic = FAKE_MAGIC_RETIRED;
    event->next = fake.retired_events;
    fake.retired_events = event;
}

FAKE_EXPORT acu_CUresult cuStreamCreate(acu_CUstream *out_stream,
                                        unsigned int flags)
{
    struct CUstream_st *stream;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (out_stream == NULL || (flags & ~(unsigned)ACU_CU_STREAM_NON_BLOCKING) != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    /* A destroyed stream's handle comes back first, as the driver's may. */
    if (fake.retired_streams != NULL) {
        stream = fake.retired_streams;
        fake.retired_streams = stream->next;
        if (!fake_stream_restart(&stream->queue, &ctx->owner)) {
            stream->next = fake.retired_streams;
            fake.retired_streams = stream;
            FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
        }
    } else {
        stream = calloc(1, sizeof(*stream));
        if (stream == NULL)
            FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
        if (!fake_stream_start(&stream->queue, &ctx->owner)) {
            free(stream);
            FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
        }
    }
    stream->magic = FAKE_MAGIC_STREAM;
    stream->ctx = ctx;
    stream->next = fake.streams;
    fake.streams = stream;
    *out_stream = stream;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuStreamDestroy_v2(acu_CUstream stream)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    if (!fake_current_to_release(&ctx, &result))
        FAKE_RETURN(result);
    if (fake_stream_check(stream, ctx) != ACU_CUDA_SUCCESS)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    /* CUDA returns at once and lets the work finish; waiting for it here is the same. */
    fake_stream_end(stream);
    FAKE_RETURN(result);
}

/* What a stream sync waits for: the ticket in `ticket`, or the context's loss. */
struct fake_stream_point {
    struct CUstream_st *stream;
    uint64_t ticket;
};

static bool fake_stream_point_done(const void *arg)
{
    const struct fake_stream_point *point = arg;

    return point->stream->queue.completed >= point->ticket ||
           point->stream->ctx->owner.lost;
}

/* Spins, as the driver does under the default scheduling (no blocking-sync context here). */
FAKE_EXPORT acu_CUresult cuStreamSynchronize(acu_CUstream stream)
{
    struct fake_stream_point point;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    point = (struct fake_stream_point){stream, stream->queue.submitted};
    fake_spin_until(fake_stream_point_done, &point);
    FAKE_RETURN(stream->ctx->owner.lost ? ACU_CUDA_ERROR_ILLEGAL_ADDRESS
                                        : ACU_CUDA_SUCCESS);
}

void fake_release_streams(struct CUctx_st *ctx)
{
    /* Streams first, threads stopped; the scan restarts after each, as ending drops the lock. */
    for (;;) {
        struct CUstream_st *stream = fake.streams;

        while (stream != NULL && stream->ctx != ctx)
            stream = stream->next;
        if (stream == NULL)
            break;
        fake_stream_end(stream);
    }
    for (struct CUevent_st **link = &fake.events; *link != NULL;) {
        if ((*link)->ctx == ctx)
            fake_event_end(link);
        else
            link = &(*link)->next;
    }
}

/* ---- events ---- */

static acu_CUresult fake_event_check(struct CUevent_st *event,
                                     struct CUctx_st *ctx)
{
    if (event == NULL || event->magic != FAKE_MAGIC_EVENT || event->ctx != ctx)
        return ACU_CUDA_ERROR_INVALID_HANDLE;
    return ACU_CUDA_SUCCESS;
}

/* The current context and an event of it, or why not. */
static acu_CUresult fake_event_ready(struct CUevent_st *event,
                                     struct CUctx_st **out_ctx)
{
    acu_CUresult result = fake_current(out_ctx);

    return result != ACU_CUDA_SUCCESS ? result
                                      : fake_event_check(event, *out_ctx);
}

FAKE_EXPORT acu_CUresult cuEventCreate(acu_CUevent *out_event, unsigned int flags)
{
    struct CUevent_st *event;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (out_event == NULL ||
        (flags & ~(unsigned)(ACU_CU_EVENT_DISABLE_TIMING |
                             ACU_CU_EVENT_BLOCKING_SYNC)) != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    /* A destroyed event's handle comes back first, as the driver's may. */
    event = fake.retired_events;
    if (event != NULL)
        fake.retired_events = event->next;
    else
        event = malloc(sizeof(*event));
    if (event == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    memset(event, 0, sizeof(*event));
    event->magic = FAKE_MAGIC_EVENT;
    event->ctx = ctx;
    event->blocking = (flags & ACU_CU_EVENT_BLOCKING_SYNC) != 0;
    event->timing = (flags & ACU_CU_EVENT_DISABLE_TIMING) == 0;
    event->next = fake.events;
    fake.events = event;
    *out_event = event;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuEventDestroy_v2(acu_CUevent event)
{
    struct CUevent_st **link = &fake.events;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    if (!fake_current_to_release(&ctx, &result))
        FAKE_RETURN(result);
    if (fake_event_check(event, ctx) != ACU_CUDA_SUCCESS)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    while (*link != event)
        link = &(*link)->next;
    fake_event_end(link);
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuEventRecord(acu_CUevent event, acu_CUstream stream)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_event_ready(event, &ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_stream_check(stream, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    event->mark = fake_mark_now(&stream->queue);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuEventQuery(acu_CUevent event)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_event_ready(event, &ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    FAKE_RETURN(fake_mark_done(&event->mark) ? ACU_CUDA_SUCCESS
                                             : ACU_CUDA_ERROR_NOT_READY);
}

static bool fake_event_done(const void *arg)
{
    const struct CUevent_st *event = arg;

    return fake_mark_done(&event->mark) || event->ctx->owner.lost;
}

/* Sleeps for an event made with CU_EVENT_BLOCKING_SYNC; spins for any other. */
/*
 * As the driver: both events of the current context, made with timing and
 * recorded (else CUDA_ERROR_INVALID_HANDLE), and done (else NOT_READY).
 */
FAKE_EXPORT acu_CUresult cuEventElapsedTime(float *milliseconds,
                                            acu_CUevent start, acu_CUevent end)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_event_ready(start, &ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_event_check(end, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (milliseconds == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!start->timing || !end->timing || start->mark.stream == NULL ||
        end->mark.stream == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    if (!fake_mark_done(&start->mark) || !fake_mark_done(&end->mark))
        FAKE_RETURN(ACU_CUDA_ERROR_NOT_READY);
    *milliseconds = (float)((double)((int64_t)(fake_mark_time(&end->mark) -
                                               fake_mark_time(&start->mark))) /
                            1e6);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuEventSynchronize(acu_CUevent event)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_event_ready(event, &ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (event->blocking)
        fake_mark_wait(&event->mark, &ctx->owner);
    else
        fake_spin_until(fake_event_done, event);
    FAKE_RETURN(ctx->owner.lost ? ACU_CUDA_ERROR_ILLEGAL_ADDRESS
                                : ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuStreamWaitEvent(acu_CUstream stream,
                                           acu_CUevent event, unsigned int flags)
{
    struct fake_op *op;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_event_check(event, stream->ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (flags != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    /* The event as recorded now; never recorded, or done: nothing to wait for. */
    if (fake_mark_done(&event->mark))
        FAKE_RETURN(ACU_CUDA_SUCCESS);
    op = fake_op_new(FAKE_OP_WAIT);
    if (op == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    op->u.wait.stream = event->mark.stream;
    op->u.wait.value = event->mark.value;
    fake_stream_push(&stream->queue, op);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuLaunchHostFunc(acu_CUstream stream, acu_CUhostFn fn,
                                          void *user)
{
    struct fake_op *op;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (fn == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    op = fake_op_new(FAKE_OP_HOST_FUNC);
    if (op == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    op->u.host.fn = fn;
    op->u.host.user = user;
    fake_stream_push(&stream->queue, op);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* ---- copies ---- */

/* One side of a copy as cuda.h describes it. */
struct fake_side {
    acu_CUmemorytype type;
    uintptr_t base; /* host pointer or device address */
    size_t x, y, z, pitch, height;
    /* The context a device address must belong to; NULL: the stream's. As
     * the driver does without unified addressing between the two, a
     * single-context copy refuses a peer device's address. */
    struct CUctx_st *ctx;
};

/* Whether device memory [start, start + span) is one allocation of `ctx`. */
static bool fake_side_owned(const struct fake_side *side, struct CUctx_st *ctx,
                            uintptr_t start, size_t span)
{
    const struct fake_block *block;

    if (side->type != ACU_CU_MEMORYTYPE_DEVICE)
        return true;
    block = fake_block_find(start, span, true);
    return block != NULL &&
           block->owner == &(side->ctx != NULL ? side->ctx : ctx)->owner;
}

/* Where the side's bytes start and end; false for a side CUDA would refuse. */
static bool fake_side_range(const struct fake_side *side, size_t width,
                            size_t height, size_t depth, uintptr_t *out_start,
                            size_t *out_span)
{
    size_t slice = side->pitch * side->height;

    if (side->type != ACU_CU_MEMORYTYPE_HOST &&
        side->type != ACU_CU_MEMORYTYPE_DEVICE)
        return false;
    if (side->base == 0 || (height > 1 && side->x + width > side->pitch))
        return false;
    if (depth > 1 && side->height < height + side->y)
        return false;
    if ((height > 1 || depth > 1) && side->pitch > fake.max_pitch)
        return false;
    *out_start = side->base + (side->z * side->height + side->y) * side->pitch +
                 side->x;
    *out_span = (depth - 1) * slice + (height - 1) * side->pitch + width;
    return true;
}

/*
 * Check a copy (device memory must be a live allocation, the whole range
 * of it) and enqueue it with CUDA's host-memory rules (fake_copy_enqueue).
 */
static acu_CUresult fake_copy_sides(struct CUstream_st *stream,
                                    const struct fake_side *src,
                                    const struct fake_side *dst, size_t width,
                                    size_t height, size_t depth)
{
    uintptr_t src_start, dst_start;
    size_t src_span, dst_span;
    struct fake_copy copy;

    if (width == 0 || height == 0 || depth == 0)
        return ACU_CUDA_SUCCESS;
    if (!fake_side_range(src, width, height, depth, &src_start, &src_span) ||
        !fake_side_range(dst, width, height, depth, &dst_start, &dst_span))
        return ACU_CUDA_ERROR_INVALID_VALUE;
    if (!fake_side_owned(src, stream->ctx, src_start, src_span) ||
        !fake_side_owned(dst, stream->ctx, dst_start, dst_span))
        return ACU_CUDA_ERROR_INVALID_VALUE;
    copy = (struct fake_copy){(unsigned char *)dst_start,
                              (const unsigned char *)src_start,
                              width,
                              height,
                              depth,
                              src->pitch,
                              dst->pitch,
                              src->pitch * src->height,
                              dst->pitch * dst->height,
                              NULL};
    return fake_copy_enqueue(&stream->queue, &copy,
                             src->type == ACU_CU_MEMORYTYPE_HOST,
                             dst->type == ACU_CU_MEMORYTYPE_HOST)
               ? ACU_CUDA_SUCCESS
               : ACU_CUDA_ERROR_OUT_OF_MEMORY;
}

/* A 1D copy of `bytes` between linear ranges, on a ready stream. Lock held. */
static acu_CUresult fake_copy_linear(acu_CUstream stream,
                                     acu_CUmemorytype src_type, uintptr_t src,
                                     acu_CUmemorytype dst_type, uintptr_t dst,
                                     size_t bytes)
{
    struct fake_side from = {src_type, src, 0, 0, 0, bytes, 1, NULL};
    struct fake_side to = {dst_type, dst, 0, 0, 0, bytes, 1, NULL};
    acu_CUresult result = fake_stream_ready(stream);

    return result != ACU_CUDA_SUCCESS
               ? result
               : fake_copy_sides(stream, &from, &to, bytes, 1, 1);
}

FAKE_EXPORT acu_CUresult cuMemcpyHtoDAsync_v2(acu_CUdeviceptr dst,
                                              const void *src, size_t bytes,
                                              acu_CUstream stream)
{
    FAKE_ENTER(lose);
    FAKE_RETURN(fake_copy_linear(stream, ACU_CU_MEMORYTYPE_HOST, (uintptr_t)src,
                                 ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)dst, bytes));
}

FAKE_EXPORT acu_CUresult cuMemcpyDtoHAsync_v2(void *dst, acu_CUdeviceptr src,
                                              size_t bytes, acu_CUstream stream)
{
    FAKE_ENTER(lose);
    FAKE_RETURN(fake_copy_linear(stream, ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)src,
                                 ACU_CU_MEMORYTYPE_HOST, (uintptr_t)dst, bytes));
}

FAKE_EXPORT acu_CUresult cuMemcpyDtoDAsync_v2(acu_CUdeviceptr dst,
                                              acu_CUdeviceptr src, size_t bytes,
                                              acu_CUstream stream)
{
    FAKE_ENTER(lose);
    FAKE_RETURN(fake_copy_linear(stream, ACU_CU_MEMORYTYPE_DEVICE,
                                 (uintptr_t)src, ACU_CU_MEMORYTYPE_DEVICE,
                                 (uintptr_t)dst, bytes));
}

static struct fake_side fake_side_2d(acu_CUmemorytype type, const void *host,
                                     acu_CUdeviceptr device, size_t x, size_t y,
                                     size_t pitch, size_t height)
{
    uintptr_t base = type == ACU_CU_MEMORYTYPE_HOST ? (uintptr_t)host
                                                    : (uintptr_t)device;

    return (struct fake_side){type, base, x, y, 0, pitch, height, NULL};
}

FAKE_EXPORT acu_CUresult cuMemcpy2DAsync_v2(const acu_CUDA_MEMCPY2D *copy,
                                            acu_CUstream stream)
{
    struct fake_side from, to;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (copy == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    from = fake_side_2d(copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                        copy->srcXInBytes, copy->srcY, copy->srcPitch,
                        copy->Height + copy->srcY);
    to = fake_side_2d(copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                      copy->dstXInBytes, copy->dstY, copy->dstPitch,
                      copy->Height + copy->dstY);
    if (copy->Height > 1 && (copy->srcPitch < copy->WidthInBytes ||
                             copy->dstPitch < copy->WidthInBytes))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    FAKE_RETURN(fake_copy_sides(stream, &from, &to, copy->WidthInBytes,
                                copy->Height, 1));
}

FAKE_EXPORT acu_CUresult cuMemcpy3DAsync_v2(const acu_CUDA_MEMCPY3D *copy,
                                            acu_CUstream stream)
{
    struct fake_side from, to;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (copy == NULL || copy->srcLOD != 0 || copy->dstLOD != 0 ||
        copy->reserved0 != NULL || copy->reserved1 != NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    from = fake_side_2d(copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                        copy->srcXInBytes, copy->srcY, copy->srcPitch,
                        copy->srcHeight);
    from.z = copy->srcZ;
    to = fake_side_2d(copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                      copy->dstXInBytes, copy->dstY, copy->dstPitch,
                      copy->dstHeight);
    to.z = copy->dstZ;
    FAKE_RETURN(fake_copy_sides(stream, &from, &to, copy->WidthInBytes,
                                copy->Height, copy->Depth));
}

/* ---- peer copies: each side in its own context ---- */

/* A live context handle, or NULL. Lock held. */
static struct CUctx_st *fake_peer_context(acu_CUcontext ctx)
{
    return ctx != NULL && ctx->magic == FAKE_MAGIC_CONTEXT && ctx->active ? ctx
                                                                          : NULL;
}

FAKE_EXPORT acu_CUresult cuMemcpyPeerAsync(acu_CUdeviceptr dst,
                                           acu_CUcontext dst_context,
                                           acu_CUdeviceptr src,
                                           acu_CUcontext src_context,
                                           size_t bytes, acu_CUstream stream)
{
    struct fake_side from = {
        ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)src, 0, 0, 0, bytes, 1, NULL};
    struct fake_side to = {
        ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)dst, 0, 0, 0, bytes, 1, NULL};
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    from.ctx = fake_peer_context(src_context);
    to.ctx = fake_peer_context(dst_context);
    if (from.ctx == NULL || to.ctx == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    FAKE_RETURN(fake_copy_sides(stream, &from, &to, bytes, 1, 1));
}

FAKE_EXPORT acu_CUresult cuMemcpy3DPeerAsync(const acu_CUDA_MEMCPY3D_PEER *copy,
                                             acu_CUstream stream)
{
    struct fake_side from, to;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (copy == NULL || copy->srcLOD != 0 || copy->dstLOD != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    from = fake_side_2d(copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                        copy->srcXInBytes, copy->srcY, copy->srcPitch,
                        copy->srcHeight);
    from.z = copy->srcZ;
    from.ctx = fake_peer_context(copy->srcContext);
    to = fake_side_2d(copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                      copy->dstXInBytes, copy->dstY, copy->dstPitch,
                      copy->dstHeight);
    to.z = copy->dstZ;
    to.ctx = fake_peer_context(copy->dstContext);
    if ((from.type == ACU_CU_MEMORYTYPE_DEVICE && from.ctx == NULL) ||
        (to.type == ACU_CU_MEMORYTYPE_DEVICE && to.ctx == NULL))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    FAKE_RETURN(fake_copy_sides(stream, &from, &to, copy->WidthInBytes,
                                copy->Height, copy->Depth));
}
