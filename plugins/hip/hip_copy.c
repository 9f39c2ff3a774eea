/*
 * Copies, enqueued on a stream: host to device, device to host and device
 * to device, in 1D, 2D and 3D.
 *
 * The layout becomes runtime calls through copy_plan.h (shared with the
 * other GPU plugins): one hipMemcpyAsync for a contiguous run,
 * hipMemcpy2DAsync for pitched rows, hipMemcpy3DAsync for slices whose
 * pitch is a whole number of rows on both sides (hipPitchedPtr says a
 * slice as ysize rows of pitch bytes), one 2D copy per slice for any other
 * slice pitch, and one 1D copy per row for a pitch past the device's
 * hipDeviceAttributeMaxPitch. Offsets go into the pointers, never into
 * hipPos, so that no pitch has to cover them. Every call names its
 * direction: HIP's device addresses are plain pointers, and the kind tells
 * the runtime which side is which without a lookup.
 *
 * A copy between two devices (copy_peer) names both devices' ordinals
 * through hipMemcpyPeerAsync, one call for a run and one per row of a
 * pitched layout (HIP 5.2 has no pitched peer copy).
 */
#include <stdint.h>

#include "copy_plan.h"
#include "hip_plugin.h"

/* The copy in flight: what every runtime call of one plan shares. */
struct hip_copy {
    accel_drv_device *device;
    ahip_hipStream_t stream;
    ahip_hipMemcpyKind kind;
    uintptr_t dst; /* a device address or a host pointer, as `kind` says */
    uintptr_t src;
    /* A peer copy: the devices' ordinals; else -1. */
    int dst_device;
    int src_device;
};

static void *hip_pointer(uintptr_t base, uint64_t offset)
{
    return (void *)(base + (uintptr_t)offset);
}

static accel_status hip_copy_1d(const void *data, uint64_t src_offset,
                                uint64_t dst_offset, uint64_t bytes)
{
    const struct hip_copy *copy = data;

    if (copy->src_device >= 0)
        return HIP_CALL(copy->device, ACCEL_ERR_COPY, hipMemcpyPeerAsync,
                        (hip_pointer(copy->dst, dst_offset), copy->dst_device,
                         hip_pointer(copy->src, src_offset), copy->src_device,
                         (size_t)bytes, copy->stream));
    return HIP_CALL(copy->device, ACCEL_ERR_COPY, hipMemcpyAsync,
                    (hip_pointer(copy->dst, dst_offset),
                     hip_pointer(copy->src, src_offset), (size_t)bytes,
                     copy->kind, copy->stream));
}

static accel_status hip_copy_2d(const void *data,
                                const struct accel__copy_plan *plan,
                                uint64_t src_offset, uint64_t dst_offset)
{
    const struct hip_copy *copy = data;

    return HIP_CALL(copy->device, ACCEL_ERR_COPY, hipMemcpy2DAsync,
                    (hip_pointer(copy->dst, dst_offset),
                     (size_t)plan->dst_pitch, hip_pointer(copy->src, src_offset),
                     (size_t)plan->src_pitch, (size_t)plan->width,
                     (size_t)plan->height, copy->kind, copy->stream));
}

static accel_status hip_copy_3d(const void *data,
                                const struct accel__copy_plan *plan)
{
    const struct hip_copy *copy = data;
    ahip_hipMemcpy3DParms params = {0};

    params.srcPtr = (ahip_hipPitchedPtr){
        hip_pointer(copy->src, plan->src_offset), (size_t)plan->src_pitch,
        (size_t)plan->width, (size_t)plan->src_slice_rows};
    params.dstPtr = (ahip_hipPitchedPtr){
        hip_pointer(copy->dst, plan->dst_offset), (size_t)plan->dst_pitch,
        (size_t)plan->width, (size_t)plan->dst_slice_rows};
    params.extent = (ahip_hipExtent){(size_t)plan->width, (size_t)plan->height,
                                     (size_t)plan->depth};
    params.kind = copy->kind;
    return HIP_CALL(copy->device, ACCEL_ERR_COPY, hipMemcpy3DAsync,
                    (&params, copy->stream));
}

static const struct accel__copy_calls hip_copy_calls = {hip_copy_1d, hip_copy_2d,
                                                        hip_copy_3d};

/* Plan a copy and enqueue it with the device current. */
static accel_status hip_copy(accel_drv_device *device, accel_drv_stream *stream,
                             ahip_hipMemcpyKind kind, uintptr_t dst,
                             uintptr_t src,
                             const struct accel_copy_layout *layout)
{
    struct hip_copy copy = {
        device, hip_stream_handle(stream), kind, dst, src, -1, -1};
    struct accel__copy_plan plan;
    struct hip_scope scope;
    accel_status status;

    accel__copy_plan_make(layout, device->physical->max_pitch, &plan);
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = accel__copy_plan_run(&plan, &hip_copy_calls, &copy);
    accel__hip_leave(device, &scope);
    return status;
}

accel_status accel__hip_copy_to_device(accel_drv_device *device,
                                       accel_drv_stream *stream, uint64_t dst,
                                       const void *src,
                                       const struct accel_copy_layout *layout)
{
    return hip_copy(device, stream, AHIP_hipMemcpyHostToDevice, (uintptr_t)dst,
                    (uintptr_t)src, layout);
}

accel_status accel__hip_copy_to_host(accel_drv_device *device,
                                     accel_drv_stream *stream, void *dst,
                                     uint64_t src,
                                     const struct accel_copy_layout *layout)
{
    return hip_copy(device, stream, AHIP_hipMemcpyDeviceToHost, (uintptr_t)dst,
                    (uintptr_t)src, layout);
}

accel_status accel__hip_copy_on_device(accel_drv_device *device,
                                       accel_drv_stream *stream, uint64_t dst,
                                       uint64_t src,
                                       const struct accel_copy_layout *layout)
{
    return hip_copy(device, stream, AHIP_hipMemcpyDeviceToDevice,
                    (uintptr_t)dst, (uintptr_t)src, layout);
}

/* The stream's device is entered (current); the other one's state is held
 * against a reset and checked for this open's epoch. The two states are
 * taken in address order, as the CUDA plugin's are. */
accel_status accel__hip_copy_peer(accel_drv_device *device,
                                  accel_drv_stream *stream,
                                  accel_drv_device *dst_device, uint64_t dst,
                                  accel_drv_device *src_device, uint64_t src,
                                  const struct accel_copy_layout *layout)
{
    accel_drv_device *other = dst_device == device ? src_device : dst_device;
    struct hip_copy copy = {device,
                            hip_stream_handle(stream),
                            AHIP_hipMemcpyDeviceToDevice,
                            (uintptr_t)dst,
                            (uintptr_t)src,
                            dst_device->physical->handle,
                            src_device->physical->handle};
    struct accel__copy_plan plan;
    struct hip_scope scope;
    accel_status status;

    if (hip_symbols_of(device)->hipMemcpyPeerAsync == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "copy_peer: the runtime has no hipMemcpyPeerAsync");
    accel__copy_plan_make(layout, device->physical->max_pitch, &plan);
    if (plan.shape != ACCEL__COPY_1D)
        plan.shape = ACCEL__COPY_1D_ROWS;
    bool other_first = other->physical->context < device->physical->context;
    if (other_first) {
        status = accel__context_state_enter(
            other->physical->context, &other->epoch,
            other->plugin->base.services, other->name);
        if (status != ACCEL_OK)
            return status;
    }
    status = accel__hip_enter(device, &scope);
    if (status == ACCEL_OK && !other_first) {
        status = accel__context_state_enter(
            other->physical->context, &other->epoch,
            other->plugin->base.services, other->name);
        if (status != ACCEL_OK) {
            accel__hip_leave(device, &scope);
            return status;
        }
    }
    if (status == ACCEL_OK) {
        status = accel__copy_plan_run(&plan, &hip_copy_calls, &copy);
        accel__context_state_leave(other->physical->context);
        accel__hip_leave(device, &scope);
    } else if (other_first) {
        accel__context_state_leave(other->physical->context);
    }
    return status;
}
