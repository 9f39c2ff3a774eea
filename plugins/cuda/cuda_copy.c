/*
 * Copies, enqueued on a stream: host to device, device to host and device
 * to device, in 1D, 2D and 3D.
 *
 * The layout becomes driver calls through copy_plan.h (shared with the
 * other GPU plugins): one cuMemcpy*Async for a contiguous run,
 * cuMemcpy2DAsync_v2 for pitched rows, cuMemcpy3DAsync_v2 for slices whose
 * pitch is a whole number of rows on both sides (CUDA_MEMCPY3D says a slice
 * pitch as srcHeight rows of srcPitch), one 2D copy per slice for any other
 * slice pitch, and one 1D copy per row for a pitch past the device's
 * CU_DEVICE_ATTRIBUTE_MAX_PITCH. Offsets go into the base addresses, never
 * into srcXInBytes/srcY, so that no pitch has to cover them.
 *
 * A copy between two devices (copy_peer) takes the same plan through the
 * peer calls, each side in its own device's context, as cuda.h documents
 * for memory of two contexts: cuMemcpyPeerAsync for a run, and
 * cuMemcpy3DPeerAsync for pitched rows and slices (a 2D copy is one slice).
 */
#include <stdint.h>

#include "copy_plan.h"
#include "cuda_plugin.h"

/* One side of a copy: host memory or a device address. */
struct cuda_copy_side {
    bool device;
    acu_CUdeviceptr address; /* the device address, or the host pointer's value */
};

/* The copy in flight: what every driver call of one plan shares. */
struct cuda_copy {
    accel_drv_device *device;
    acu_CUstream stream;
    struct cuda_copy_side dst;
    struct cuda_copy_side src;
    /* A peer copy: the contexts the two addresses belong to; else NULL. */
    acu_CUcontext dst_context;
    acu_CUcontext src_context;
};

static accel_status cuda_copy_3d_peer(const struct cuda_copy *copy,
                                      const struct accel__copy_plan *plan,
                                      uint64_t src_offset, uint64_t dst_offset,
                                      uint64_t depth)
{
    acu_CUDA_MEMCPY3D_PEER params = {0};

    params.srcMemoryType = ACU_CU_MEMORYTYPE_DEVICE;
    params.srcDevice = copy->src.address + src_offset;
    params.srcContext = copy->src_context;
    params.srcPitch = (size_t)plan->src_pitch;
    params.srcHeight = depth > 1 ? (size_t)plan->src_slice_rows
                                 : (size_t)plan->height;
    params.dstMemoryType = ACU_CU_MEMORYTYPE_DEVICE;
    params.dstDevice = copy->dst.address + dst_offset;
    params.dstContext = copy->dst_context;
    params.dstPitch = (size_t)plan->dst_pitch;
    params.dstHeight = depth > 1 ? (size_t)plan->dst_slice_rows
                                 : (size_t)plan->height;
    params.WidthInBytes = (size_t)plan->width;
    params.Height = (size_t)plan->height;
    params.Depth = (size_t)depth;
    return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpy3DPeerAsync,
                     (&params, copy->stream));
}

static void *cuda_host_pointer(acu_CUdeviceptr address)
{
    return (void *)(uintptr_t)address;
}

static accel_status cuda_copy_1d(const void *data, uint64_t src_offset,
                                 uint64_t dst_offset, uint64_t bytes)
{
    const struct cuda_copy *copy = data;
    acu_CUdeviceptr src = copy->src.address + src_offset;
    acu_CUdeviceptr dst = copy->dst.address + dst_offset;

    if (copy->src_context != NULL)
        return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpyPeerAsync,
                         (dst, copy->dst_context, src, copy->src_context,
                          (size_t)bytes, copy->stream));
    if (copy->src.device && copy->dst.device)
        return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpyDtoDAsync_v2,
                         (dst, src, (size_t)bytes, copy->stream));
    if (copy->dst.device)
        return CUDA_CALL(
            copy->device, ACCEL_ERR_COPY, cuMemcpyHtoDAsync_v2,
            (dst, cuda_host_pointer(src), (size_t)bytes, copy->stream));
    return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpyDtoHAsync_v2,
                     (cuda_host_pointer(dst), src, (size_t)bytes, copy->stream));
}

static accel_status cuda_copy_2d(const void *data,
                                 const struct accel__copy_plan *plan,
                                 uint64_t src_offset, uint64_t dst_offset)
{
    const struct cuda_copy *copy = data;
    acu_CUDA_MEMCPY2D params = {0};

    if (copy->src_context != NULL)
        return cuda_copy_3d_peer(copy, plan, src_offset, dst_offset, 1);

    params.srcMemoryType = copy->src.device ? ACU_CU_MEMORYTYPE_DEVICE
                                            : ACU_CU_MEMORYTYPE_HOST;
    if (copy->src.device)
        params.srcDevice = copy->src.address + src_offset;
    else
        params.srcHost = cuda_host_pointer(copy->src.address + src_offset);
    params.srcPitch = (size_t)plan->src_pitch;
    params.dstMemoryType = copy->dst.device ? ACU_CU_MEMORYTYPE_DEVICE
                                            : ACU_CU_MEMORYTYPE_HOST;
    if (copy->dst.device)
        params.dstDevice = copy->dst.address + dst_offset;
    else
        params.dstHost = cuda_host_pointer(copy->dst.address + dst_offset);
    params.dstPitch = (size_t)plan->dst_pitch;
    params.WidthInBytes = (size_t)plan->width;
    params.Height = (size_t)plan->height;
    return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpy2DAsync_v2,
                     (&params, copy->stream));
}

static accel_status cuda_copy_3d(const void *data,
                                 const struct accel__copy_plan *plan)
{
    const struct cuda_copy *copy = data;
    acu_CUDA_MEMCPY3D params = {0};

    if (copy->src_context != NULL)
        return cuda_copy_3d_peer(copy, plan, plan->src_offset, plan->dst_offset,
                                 plan->depth);

    params.srcMemoryType = copy->src.device ? ACU_CU_MEMORYTYPE_DEVICE
                                            : ACU_CU_MEMORYTYPE_HOST;
    if (copy->src.device)
        params.srcDevice = copy->src.address + plan->src_offset;
    else
        params.srcHost = cuda_host_pointer(copy->src.address + plan->src_offset);
    params.srcPitch = (size_t)plan->src_pitch;
    params.srcHeight = (size_t)plan->src_slice_rows;
    params.dstMemoryType = copy->dst.device ? ACU_CU_MEMORYTYPE_DEVICE
                                            : ACU_CU_MEMORYTYPE_HOST;
    if (copy->dst.device)
        params.dstDevice = copy->dst.address + plan->dst_offset;
    else
        params.dstHost = cuda_host_pointer(copy->dst.address + plan->dst_offset);
    params.dstPitch = (size_t)plan->dst_pitch;
    params.dstHeight = (size_t)plan->dst_slice_rows;
    params.WidthInBytes = (size_t)plan->width;
    params.Height = (size_t)plan->height;
    params.Depth = (size_t)plan->depth;
    return CUDA_CALL(copy->device, ACCEL_ERR_COPY, cuMemcpy3DAsync_v2,
                     (&params, copy->stream));
}

static const struct accel__copy_calls cuda_copy_calls = {
    cuda_copy_1d, cuda_copy_2d, cuda_copy_3d};

/* Plan a copy between two sides and enqueue it, in the device's context. */
static accel_status cuda_copy(accel_drv_device *device, accel_drv_stream *stream,
                              struct cuda_copy_side dst,
                              struct cuda_copy_side src,
                              const struct accel_copy_layout *layout)
{
    struct cuda_copy copy = {device, cuda_stream_handle(stream), dst, src, NULL,
                             NULL};
    struct accel__copy_plan plan;
    struct cuda_scope scope;
    accel_status status;

    accel__copy_plan_make(layout, device->physical->max_pitch, &plan);
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = accel__copy_plan_run(&plan, &cuda_copy_calls, &copy);
    accel__cuda_leave(device, &scope);
    return status;
}

accel_status accel__cuda_copy_to_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        const void *src,
                                        const struct accel_copy_layout *layout)
{
    return cuda_copy(
        device, stream, (struct cuda_copy_side){true, dst},
        (struct cuda_copy_side){false, (acu_CUdeviceptr)(uintptr_t)src}, layout);
}

accel_status accel__cuda_copy_to_host(accel_drv_device *device,
                                      accel_drv_stream *stream, void *dst,
                                      uint64_t src,
                                      const struct accel_copy_layout *layout)
{
    return cuda_copy(
        device, stream,
        (struct cuda_copy_side){false, (acu_CUdeviceptr)(uintptr_t)dst},
        (struct cuda_copy_side){true, src}, layout);
}

accel_status accel__cuda_copy_on_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        uint64_t src,
                                        const struct accel_copy_layout *layout)
{
    return cuda_copy(device, stream, (struct cuda_copy_side){true, dst},
                     (struct cuda_copy_side){true, src}, layout);
}

/*
 * Each side's context, read inside the scopes that keep them: the stream's
 * device is entered (its context current), the other one's state held
 * against a reset and checked for this open's epoch. The two states are
 * taken in address order, so that two copies in opposite directions never
 * take them in opposite orders.
 */
accel_status accel__cuda_copy_peer(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   accel_drv_device *dst_device, uint64_t dst,
                                   accel_drv_device *src_device, uint64_t src,
                                   const struct accel_copy_layout *layout)
{
    accel_drv_device *other = dst_device == device ? src_device : dst_device;
    const struct cuda_symbols *symbols = cuda_symbols_of(device);
    struct cuda_copy copy = {device,      cuda_stream_handle(stream),
                             {true, dst}, {true, src},
                             NULL,        NULL};
    struct accel__copy_plan plan;
    struct cuda_scope scope;
    accel_status status;

    if (symbols->cuMemcpyPeerAsync == NULL || symbols->cuMemcpy3DPeerAsync == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "copy_peer: the driver has no cuMemcpyPeerAsync");
    bool other_first = other->physical->context < device->physical->context;

    accel__copy_plan_make(layout, device->physical->max_pitch, &plan);
    if (other_first) {
        status = accel__context_state_enter(
            other->physical->context, &other->epoch,
            other->plugin->base.services, other->name);
        if (status != ACCEL_OK)
            return status;
    }
    status = accel__cuda_enter(device, &scope);
    if (status == ACCEL_OK && !other_first) {
        status = accel__context_state_enter(
            other->physical->context, &other->epoch,
            other->plugin->base.services, other->name);
        if (status != ACCEL_OK) {
            accel__cuda_leave(device, &scope);
            return status;
        }
    }
    if (status == ACCEL_OK) {
        copy.dst_context = atomic_load_explicit(&dst_device->context,
                                                memory_order_acquire);
        copy.src_context = atomic_load_explicit(&src_device->context,
                                                memory_order_acquire);
        status = accel__copy_plan_run(&plan, &cuda_copy_calls, &copy);
        accel__context_state_leave(other->physical->context);
        accel__cuda_leave(device, &scope);
    } else if (other_first) {
        accel__context_state_leave(other->physical->context);
    }
    return status;
}
