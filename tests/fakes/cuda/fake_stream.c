/*
 * The fake driver's streams, events, copies and host functions.
 *
 * A stream is a queue of operations run in order by a thread of its own;
 * each operation has a ticket, and the stream's `completed` says how far
 * it has got. An event is a (stream, ticket) pair taken when it is
 * recorded. One condition variable, broadcast whenever any stream moves,
 * serves every wait: the fake is for tests, not for speed.
 */
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the stream's thread ---- */

static void fake_copy_run(const struct fake_copy *copy)
{
    const unsigned char *src = copy->snapshot != NULL ? copy->snapshot : copy->src;

    for (size_t z = 0; z < copy->depth; z++) {
        for (size_t y = 0; y < copy->height; y++)
            memmove(copy->dst + z * copy->dst_slice + y * copy->dst_pitch,
                    src + z * copy->src_slice + y * copy->src_pitch, copy->width);
    }
}

static bool fake_wait_satisfied(const struct fake_op *op)
{
    const struct CUstream_st *target = op->u.wait.stream;

    return target == NULL || target->completed >= op->u.wait.value ||
           (target->ctx != NULL && target->ctx->lost);
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

static void fake_sleep_us(uint64_t us)
{
    struct timespec delay = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};

    nanosleep(&delay, NULL);
}

static void *fake_stream_main(void *arg)
{
    struct CUstream_st *stream = arg;

    pthread_mutex_lock(&fake.lock);
    for (;;) {
        struct fake_op *op = stream->head;
        bool run;

        if (op == NULL) {
            if (stream->stopping)
                break;
            pthread_cond_wait(&fake.progress, &fake.lock);
            continue;
        }
        if (op->kind == FAKE_OP_WAIT && !fake_wait_satisfied(op)) {
            pthread_cond_wait(&fake.progress, &fake.lock);
            continue;
        }
        /* A lost context runs nothing more: its work is dropped, as a GPU's is. */
        run = !stream->ctx->lost;
        if (op->kind == FAKE_OP_LOSE)
            stream->ctx->lost = true;
        pthread_mutex_unlock(&fake.lock);
        if (run && fake.delay_us != 0)
            fake_sleep_us(fake.delay_us);
        if (run)
            fake_op_run(op);
        pthread_mutex_lock(&fake.lock);
        stream->head = op->next;
        if (stream->head == NULL)
            stream->tail = NULL;
        stream->completed = op->ticket;
        fake_op_free(op);
        pthread_cond_broadcast(&fake.progress);
    }
    pthread_mutex_unlock(&fake.lock);
    return NULL;
}

void fake_op_free(struct fake_op *op)
{
    if (op->kind == FAKE_OP_COPY)
        free(op->u.copy.snapshot);
    if (op->kind == FAKE_OP_LAUNCH)
        free(op->u.launch.arg_bytes);
    free(op);
}

void fake_stream_push(struct CUstream_st *stream, struct fake_op *op)
{
    op->ticket = ++stream->submitted;
    op->next = NULL;
    if (stream->tail != NULL)
        stream->tail->next = op;
    else
        stream->head = op;
    stream->tail = op;
    pthread_cond_broadcast(&fake.progress);
}

void fake_stream_wait_ticket(struct CUstream_st *stream, uint64_t ticket)
{
    while (stream->completed < ticket && !stream->ctx->lost)
        pthread_cond_wait(&fake.progress, &fake.lock);
}

void fake_stream_retire(struct CUstream_st *stream)
{
    pthread_t thread = stream->thread;

    for (struct CUstream_st **link = &fake.streams; *link != NULL; link = &(*link)->next) {
        if (*link == stream) {
            *link = stream->next;
            break;
        }
    }
    stream->magic = FAKE_MAGIC_RETIRED;
    stream->stopping = true;
    pthread_cond_broadcast(&fake.progress);
    pthread_mutex_unlock(&fake.lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&fake.lock);
    /* Events recorded on it, and waits for it, are complete: its queue ran out. */
    for (struct CUevent_st *e = fake.events; e != NULL; e = e->next) {
        if (e->stream == stream)
            e->stream = NULL;
    }
    for (struct CUstream_st *s = fake.streams; s != NULL; s = s->next) {
        for (struct fake_op *op = s->head; op != NULL; op = op->next) {
            if (op->kind == FAKE_OP_WAIT && op->u.wait.stream == stream)
                op->u.wait.stream = NULL;
        }
    }
    stream->next = fake.retired_streams;
    fake.retired_streams = stream;
    pthread_cond_broadcast(&fake.progress);
}

acu_CUresult fake_stream_check(struct CUstream_st *stream, struct CUctx_st *ctx)
{
    /* The legacy default stream (NULL) is not offered: the plugin must not use it. */
    if (stream == NULL || stream->magic != FAKE_MAGIC_STREAM)
        return ACU_CUDA_ERROR_INVALID_HANDLE;
    if (stream->ctx != ctx)
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

/* ---- streams ---- */

FAKE_EXPORT acu_CUresult cuStreamCreate(acu_CUstream *out_stream, unsigned int flags)
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
    stream = calloc(1, sizeof(*stream));
    if (stream == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    stream->magic = FAKE_MAGIC_STREAM;
    stream->ctx = ctx;
    if (pthread_create(&stream->thread, NULL, fake_stream_main, stream) != 0) {
        free(stream);
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    }
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
    result = fake_current(&ctx);
    if (result == ACU_CUDA_ERROR_INVALID_CONTEXT || result == ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED)
        FAKE_RETURN(result);
    if (fake_stream_check(stream, ctx) != ACU_CUDA_SUCCESS)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    /* CUDA returns at once and lets the work finish; waiting for it here is the same. */
    fake_stream_retire(stream);
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuStreamSynchronize(acu_CUstream stream)
{
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    fake_stream_wait_ticket(stream, stream->submitted);
    FAKE_RETURN(stream->ctx->lost ? ACU_CUDA_ERROR_ILLEGAL_ADDRESS : ACU_CUDA_SUCCESS);
}

/* ---- events ---- */

static acu_CUresult fake_event_check(struct CUevent_st *event, struct CUctx_st *ctx)
{
    if (event == NULL || event->magic != FAKE_MAGIC_EVENT || event->ctx != ctx)
        return ACU_CUDA_ERROR_INVALID_HANDLE;
    return ACU_CUDA_SUCCESS;
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
    if (out_event == NULL || (flags & ~(unsigned)ACU_CU_EVENT_DISABLE_TIMING) != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    event = calloc(1, sizeof(*event));
    if (event == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    event->magic = FAKE_MAGIC_EVENT;
    event->ctx = ctx;
    event->next = fake.events;
    fake.events = event;
    *out_event = event;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuEventDestroy_v2(acu_CUevent event)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_ERROR_INVALID_CONTEXT || result == ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED)
        FAKE_RETURN(result);
    if (fake_event_check(event, ctx) != ACU_CUDA_SUCCESS)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    for (struct CUevent_st **link = &fake.events; *link != NULL; link = &(*link)->next) {
        if (*link == event) {
            *link = event->next;
            break;
        }
    }
    event->magic = FAKE_MAGIC_RETIRED;
    event->next = fake.retired_events;
    fake.retired_events = event;
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuEventRecord(acu_CUevent event, acu_CUstream stream)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_event_check(event, ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_stream_check(stream, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    event->stream = stream;
    event->value = stream->submitted;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

static bool fake_event_done(const struct CUevent_st *event)
{
    return event->stream == NULL || event->stream->completed >= event->value;
}

FAKE_EXPORT acu_CUresult cuEventQuery(acu_CUevent event)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_event_check(event, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    FAKE_RETURN(fake_event_done(event) ? ACU_CUDA_SUCCESS : ACU_CUDA_ERROR_NOT_READY);
}

FAKE_EXPORT acu_CUresult cuEventSynchronize(acu_CUevent event)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_event_check(event, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    while (!fake_event_done(event) && !ctx->lost)
        pthread_cond_wait(&fake.progress, &fake.lock);
    FAKE_RETURN(ctx->lost ? ACU_CUDA_ERROR_ILLEGAL_ADDRESS : ACU_CUDA_SUCCESS);
}

/* Enqueue `op` (malloc'd) on a checked stream, or free it and say why not. */
static acu_CUresult fake_enqueue(struct CUstream_st *stream, struct fake_op *op)
{
    if (op == NULL)
        return ACU_CUDA_ERROR_OUT_OF_MEMORY;
    fake_stream_push(stream, op);
    return ACU_CUDA_SUCCESS;
}

FAKE_EXPORT acu_CUresult cuStreamWaitEvent(acu_CUstream stream, acu_CUevent event,
                                           unsigned int flags)
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
    if (fake_event_done(event))
        FAKE_RETURN(ACU_CUDA_SUCCESS);
    op = calloc(1, sizeof(*op));
    if (op != NULL) {
        op->kind = FAKE_OP_WAIT;
        op->u.wait.stream = event->stream;
        op->u.wait.value = event->value;
    }
    FAKE_RETURN(fake_enqueue(stream, op));
}

FAKE_EXPORT acu_CUresult cuLaunchHostFunc(acu_CUstream stream, acu_CUhostFn fn, void *user)
{
    struct fake_op *op;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (fn == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    op = calloc(1, sizeof(*op));
    if (op != NULL) {
        op->kind = FAKE_OP_HOST_FUNC;
        op->u.host.fn = fn;
        op->u.host.user = user;
    }
    FAKE_RETURN(fake_enqueue(stream, op));
}

/* ---- copies ---- */

/* One side of a copy as cuda.h describes it. */
struct fake_side {
    acu_CUmemorytype type;
    uintptr_t base; /* host pointer or device address */
    size_t x, y, z, pitch, height;
};

/* Where the side's bytes start and end; false for a side CUDA would refuse. */
static bool fake_side_range(const struct fake_side *side, size_t width, size_t height,
                            size_t depth, uintptr_t *out_start, size_t *out_span)
{
    size_t slice = side->pitch * side->height;

    if (side->type != ACU_CU_MEMORYTYPE_HOST && side->type != ACU_CU_MEMORYTYPE_DEVICE)
        return false;
    if (side->base == 0 || (height > 1 && side->x + width > side->pitch))
        return false;
    if (depth > 1 && side->height < height + side->y)
        return false;
    if ((height > 1 || depth > 1) && side->pitch > fake.max_pitch)
        return false;
    *out_start = side->base + (side->z * side->height + side->y) * side->pitch + side->x;
    *out_span = (depth - 1) * slice + (height - 1) * side->pitch + width;
    return true;
}

static bool fake_side_pinned_or_device(const struct fake_side *side, uintptr_t start,
                                       size_t span)
{
    return fake_block_find(start, span, side->type == ACU_CU_MEMORYTYPE_DEVICE) != NULL;
}

/*
 * Check a copy and enqueue it with CUDA's host-memory rules: a pageable
 * source is read now (the call returns once it has been), a pageable
 * destination is written before the call returns; pinned memory and
 * device memory are fully asynchronous.
 */
static acu_CUresult fake_copy_enqueue(struct CUstream_st *stream, const struct fake_side *src,
                                      const struct fake_side *dst, size_t width,
                                      size_t height, size_t depth)
{
    uintptr_t src_start, dst_start;
    size_t src_span, dst_span;
    struct fake_op *op;

    if (width == 0 || height == 0 || depth == 0)
        return ACU_CUDA_SUCCESS;
    if (!fake_side_range(src, width, height, depth, &src_start, &src_span) ||
        !fake_side_range(dst, width, height, depth, &dst_start, &dst_span))
        return ACU_CUDA_ERROR_INVALID_VALUE;
    /* Device memory must be a live allocation, the whole range of it. */
    if ((src->type == ACU_CU_MEMORYTYPE_DEVICE &&
         !fake_side_pinned_or_device(src, src_start, src_span)) ||
        (dst->type == ACU_CU_MEMORYTYPE_DEVICE &&
         !fake_side_pinned_or_device(dst, dst_start, dst_span)))
        return ACU_CUDA_ERROR_INVALID_VALUE;
    op = calloc(1, sizeof(*op));
    if (op == NULL)
        return ACU_CUDA_ERROR_OUT_OF_MEMORY;
    op->kind = FAKE_OP_COPY;
    op->u.copy = (struct fake_copy){
        (unsigned char *)dst_start, (const unsigned char *)src_start, width, height, depth,
        src->pitch, dst->pitch, src->pitch * src->height, dst->pitch * dst->height, NULL};
    if (src->type == ACU_CU_MEMORYTYPE_HOST && !fake_side_pinned_or_device(src, src_start, src_span)) {
        op->u.copy.snapshot = malloc(src_span);
        if (op->u.copy.snapshot == NULL) {
            free(op);
            return ACU_CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(op->u.copy.snapshot, (const void *)src_start, src_span);
    }
    fake_stream_push(stream, op);
    if (dst->type == ACU_CU_MEMORYTYPE_HOST && !fake_side_pinned_or_device(dst, dst_start, dst_span))
        fake_stream_wait_ticket(stream, op->ticket);
    return ACU_CUDA_SUCCESS;
}

static struct fake_side fake_linear(acu_CUmemorytype type, uintptr_t base, size_t bytes)
{
    return (struct fake_side){type, base, 0, 0, 0, bytes, 1};
}

FAKE_EXPORT acu_CUresult cuMemcpyHtoDAsync_v2(acu_CUdeviceptr dst, const void *src, size_t bytes,
                                              acu_CUstream stream)
{
    struct fake_side from = fake_linear(ACU_CU_MEMORYTYPE_HOST, (uintptr_t)src, bytes);
    struct fake_side to = fake_linear(ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)dst, bytes);
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_copy_enqueue(stream, &from, &to, bytes, 1, 1);
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuMemcpyDtoHAsync_v2(void *dst, acu_CUdeviceptr src, size_t bytes,
                                              acu_CUstream stream)
{
    struct fake_side from = fake_linear(ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)src, bytes);
    struct fake_side to = fake_linear(ACU_CU_MEMORYTYPE_HOST, (uintptr_t)dst, bytes);
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_copy_enqueue(stream, &from, &to, bytes, 1, 1);
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuMemcpyDtoDAsync_v2(acu_CUdeviceptr dst, acu_CUdeviceptr src,
                                              size_t bytes, acu_CUstream stream)
{
    struct fake_side from = fake_linear(ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)src, bytes);
    struct fake_side to = fake_linear(ACU_CU_MEMORYTYPE_DEVICE, (uintptr_t)dst, bytes);
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_copy_enqueue(stream, &from, &to, bytes, 1, 1);
    FAKE_RETURN(result);
}

static struct fake_side fake_side_2d(acu_CUmemorytype type, const void *host,
                                     acu_CUdeviceptr device, size_t x, size_t y, size_t pitch,
                                     size_t height)
{
    uintptr_t base = type == ACU_CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)device;

    return (struct fake_side){type, base, x, y, 0, pitch, height};
}

FAKE_EXPORT acu_CUresult cuMemcpy2DAsync_v2(const acu_CUDA_MEMCPY2D *copy, acu_CUstream stream)
{
    struct fake_side from, to;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (copy == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    from = fake_side_2d(copy->srcMemoryType, copy->srcHost, copy->srcDevice, copy->srcXInBytes,
                        copy->srcY, copy->srcPitch, copy->Height + copy->srcY);
    to = fake_side_2d(copy->dstMemoryType, copy->dstHost, copy->dstDevice, copy->dstXInBytes,
                      copy->dstY, copy->dstPitch, copy->Height + copy->dstY);
    if (copy->Height > 1 && (copy->srcPitch < copy->WidthInBytes || copy->dstPitch < copy->WidthInBytes))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    FAKE_RETURN(fake_copy_enqueue(stream, &from, &to, copy->WidthInBytes, copy->Height, 1));
}

FAKE_EXPORT acu_CUresult cuMemcpy3DAsync_v2(const acu_CUDA_MEMCPY3D *copy, acu_CUstream stream)
{
    struct fake_side from, to;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_stream_ready(stream);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (copy == NULL || copy->srcLOD != 0 || copy->dstLOD != 0 || copy->reserved0 != NULL ||
        copy->reserved1 != NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    from = fake_side_2d(copy->srcMemoryType, copy->srcHost, copy->srcDevice, copy->srcXInBytes,
                        copy->srcY, copy->srcPitch, copy->srcHeight);
    from.z = copy->srcZ;
    to = fake_side_2d(copy->dstMemoryType, copy->dstHost, copy->dstDevice, copy->dstXInBytes,
                      copy->dstY, copy->dstPitch, copy->dstHeight);
    to.z = copy->dstZ;
    FAKE_RETURN(fake_copy_enqueue(stream, &from, &to, copy->WidthInBytes, copy->Height,
                                  copy->Depth));
}
