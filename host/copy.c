/*
 * Copies: refs resolved and layouts checked under the device lock, then
 * handed to the plugin on the stream. Nothing reaches the plugin before
 * every check has passed.
 *
 * Which path a copy takes:
 *  - a device whose memory the host can see (the CPU plugin), or host
 *    memory from accel_host_alloc: straight to the plugin, no staging;
 *  - other (pageable) host memory: through pinned staging (staging.c);
 *  - two refs of one plugin: the plugin's device copy;
 *  - refs of two plugins: through host memory, chunk by chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "host.h"
#include "layout.h"
#include "recovery.h"
#include "refs.h"
#include "staging.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/* How far a host pointer may reach before the address space wraps. */
static uint64_t host_limit(const void *ptr)
{
    return (uint64_t)(UINTPTR_MAX - (uintptr_t)ptr);
}

/* The host side of a copy by bytes: no element type to check. */
#define HOST_UNTYPED ACCEL_ELEM_TYPE_COUNT

/*
 * Whether host elements of `host_type` may be copied to or from a ref of
 * `ref_type`: only the same type, so that a count of host elements never
 * covers more host bytes than it says. An ACCEL_BYTE ref is raw bytes and
 * takes every one-byte type, since uint8_t, the usual byte buffer, is U8.
 */
static bool host_type_fits(uint32_t ref_type, accel_elem_type host_type)
{
    if (host_type == HOST_UNTYPED || (uint32_t)host_type == ref_type)
        return true;
    return ref_type == ACCEL_BYTE &&
           (host_type == ACCEL_I8 || host_type == ACCEL_U8);
}

/* Resolve a ref and check the host element type against it. */
static accel_status resolve_typed(accel_device *device, accel_ref ref,
                                  accel_elem_type host_type,
                                  struct accel__slot **out_slot)
{
    accel_status status = accel__ref_resolve(device, ref, out_slot);
    if (status != ACCEL_OK)
        return status;
    if (!host_type_fits(ref.type, host_type)) {
        *out_slot = NULL;
        return accel__error(ACCEL_ERR_TYPE_MISMATCH,
                            "the ref holds %s elements, the host data is %s%s",
                            accel_elem_type_name((accel_elem_type)ref.type),
                            accel_elem_type_name(host_type),
                            ref.type == ACCEL_BYTE
                                ? " (a byte ref takes byte, i8 or u8 host data)"
                                : "");
    }
    return ACCEL_OK;
}

/* True when the device can take this host range without staging. */
static bool host_direct(const accel_device *device, const void *host,
                        const struct accel_copy_layout *layout, bool source)
{
    if (device->props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE)
        return true;
    uint64_t first = 0, end = 0;
    accel__layout_span(layout, source, &first, &end);
    uintptr_t lo = (uintptr_t)host + first, hi = (uintptr_t)host + end;
    for (size_t i = 0; i < device->host_memory.count; i++) {
        uintptr_t base = (uintptr_t)device->host_memory.list[i].ptr;
        if (lo >= base && hi <= base + device->host_memory.list[i].bytes)
            return true;
    }
    return false;
}

/*
 * Host to device or device to host. `host_is_source` says which way.
 */
static accel_status host_copy(accel_stream *stream, accel_ref ref,
                              accel_elem_type host_type, void *host,
                              const struct accel_copy_layout *layout,
                              bool host_is_source)
{
    const char *what = host_is_source ? "accel_copy_to_device"
                                      : "accel_copy_to_host";
    if (host == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL host pointer",
                            what);
    accel_status status = accel__submit_begin(stream, what);
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__slot *slot = NULL;
    struct accel_copy_layout checked;
    status = resolve_typed(device, ref, host_type, &slot);
    if (status == ACCEL_OK)
        status = host_is_source
                     ? accel__layout_normalize(layout, host_limit(host),
                                               slot->bytes, &checked)
                     : accel__layout_normalize(layout, slot->bytes,
                                               host_limit(host), &checked);
    if (status != ACCEL_OK) {
        pthread_mutex_unlock(&device->lock);
        return status;
    }
    if (!host_direct(device, host, &checked, host_is_source)) {
        pthread_mutex_unlock(&device->lock);
        return accel__staged_copy(stream, ref, host, &checked, host_is_source);
    }
    struct accel__trace_command command = {
        .kind = host_is_source ? ACCEL__TRACE_COPY_H2D : ACCEL__TRACE_COPY_D2H,
        .bytes = accel__layout_bytes(&checked)};
    status = host_is_source
                 ? ACCEL__DRV_COMMAND(stream, &command, copy_to_device,
                                      slot->slice.address, host, &checked)
                 : ACCEL__DRV_COMMAND(stream, &command, copy_to_host, host,
                                      slot->slice.address, &checked);
    slot->lanes |= accel__lane_bit(stream);
    return accel__submit_end(stream, status);
}

static bool spans_overlap(const struct accel_copy_layout *layout)
{
    uint64_t src_first, src_end, dst_first, dst_end;
    accel__layout_span(layout, true, &src_first, &src_end);
    accel__layout_span(layout, false, &dst_first, &dst_end);
    return src_first < dst_end && dst_first < src_end;
}

/* Both refs on the stream's device. Lock held; released here. */
static accel_status same_device_copy(accel_stream *stream, accel_ref dst,
                                     accel_ref src,
                                     const struct accel_copy_layout *layout)
{
    accel_device *device = stream->device;
    struct accel__slot *dst_slot = NULL, *src_slot = NULL;
    struct accel_copy_layout checked;
    accel_status status = accel__ref_resolve(device, dst, &dst_slot);
    if (status == ACCEL_OK)
        status = accel__ref_resolve(device, src, &src_slot);
    if (status == ACCEL_OK)
        status = accel__layout_normalize(layout, src_slot->bytes,
                                         dst_slot->bytes, &checked);
    /* The plugins copy like memcpy: overlapping ranges have no defined
     * result, so the bounding spans must not meet. */
    if (status == ACCEL_OK && dst_slot == src_slot && spans_overlap(&checked))
        status = accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                              "accel_copy_on_device: source and destination "
                              "ranges overlap");
    if (status != ACCEL_OK) {
        pthread_mutex_unlock(&device->lock);
        return status;
    }
    status = ACCEL__DRV_COMMAND(
        stream,
        (&(struct accel__trace_command){.kind = ACCEL__TRACE_COPY_D2D,
                                        .bytes = accel__layout_bytes(&checked)}),
        copy_on_device, dst_slot->slice.address, src_slot->slice.address,
        &checked);
    dst_slot->lanes |= accel__lane_bit(stream);
    src_slot->lanes |= accel__lane_bit(stream);
    return accel__submit_end(stream, status);
}

/* The open device of this host with that id, or NULL. */
static accel_device *device_by_id(accel_host *host, uint32_t id)
{
    pthread_mutex_lock(&host->lock);
    accel_device *found = host->devices;
    while (found != NULL && found->id != id)
        found = found->next;
    pthread_mutex_unlock(&host->lock);
    return found;
}

/*
 * Within one plugin, the plugin copies between its devices on the stream.
 * Both device locks stay held until the copy has completed: the other
 * device's streams are not ordered with this one, so its pool must neither
 * move nor free either allocation meanwhile, and a relocation of its still
 * in flight (refs already name the new places) is waited for first.
 * *out_there_failed says that wait failed, not this device.
 */
static accel_status peer_copy(accel_stream *stream, accel_device *there,
                              const struct accel__slot *dst,
                              const struct accel__slot *src,
                              const struct accel_copy_layout *layout,
                              bool *out_there_failed)
{
    accel_device *here = stream->device;
    *out_there_failed = false;
    if (there->own.stream != NULL) {
        accel_status status = ACCEL__DRV_CALL(there, stream_sync,
                                              there->own.stream);
        if (status != ACCEL_OK) {
            *out_there_failed = true;
            return status;
        }
    }
    accel_status status = ACCEL__DRV_CALL(here, copy_on_device, stream->drv,
                                          dst->slice.address,
                                          src->slice.address, layout);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_CALL(here, stream_sync, stream->drv);
    return status;
}

/*
 * Within one plugin whose table has copy_peer: the copy is enqueued under
 * both device locks and waited for under the other device's lock alone
 * (its pool must neither move nor free its allocation meanwhile, and its
 * streams are not ordered with this one). The stream's device is borrowed
 * for the wait, so that a reset of it waits, and its own ref carries the
 * stream's lane, as after a copy on the device. Both locks held on entry;
 * none on return, except when *out_fallback says the plugin declined
 * (ACCEL_ERR_NOT_SUPPORTED, nothing enqueued): then both still are.
 * *out_there_failed as for peer_copy.
 */
static accel_status peer_copy_entry(accel_stream *stream, accel_device *there,
                                    struct accel__slot *dst,
                                    struct accel__slot *src, bool dst_here,
                                    const struct accel_copy_layout *layout,
                                    bool *out_fallback, bool *out_there_failed)
{
    accel_device *here = stream->device;
    *out_fallback = false;
    *out_there_failed = false;
    accel_status status = ACCEL_OK;
    /* Idle unless the other device has just moved memory. */
    if (there->own.stream != NULL)
        status = ACCEL__DRV_CALL(there, stream_sync, there->own.stream);
    *out_there_failed = status != ACCEL_OK;
    if (status == ACCEL_OK) {
        accel_drv_device *dst_device = dst_here ? here->drv_device
                                                : there->drv_device;
        accel_drv_device *src_device = dst_here ? there->drv_device
                                                : here->drv_device;
        status = ACCEL__DRV_CALL(here, copy_peer, stream->drv, dst_device,
                                 dst->slice.address, src_device,
                                 src->slice.address, layout);
        if (status == ACCEL_ERR_NOT_SUPPORTED) {
            *out_fallback = true;
            return status;
        }
    }
    if (status == ACCEL_OK)
        (dst_here ? dst : src)->lanes |= accel__lane_bit(stream);
    accel__borrow_begin(here);
    pthread_mutex_unlock(&here->lock);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_WAIT(here, stream_sync, stream->drv);
    pthread_mutex_unlock(&there->lock);
    pthread_mutex_lock(&here->lock);
    accel__borrow_end(here);
    pthread_mutex_unlock(&here->lock);
    return status;
}

/*
 * Refs on two devices: within one plugin, a copy by the plugin; across
 * plugins, through host memory. Either way the copy has completed when
 * this returns: a ref's drop queue knows only its own device's streams.
 */
static accel_status cross_device_copy(accel_stream *stream, accel_ref dst,
                                      accel_ref src,
                                      const struct accel_copy_layout *layout)
{
    accel_device *here = stream->device;
    /* A ref never minted is freed, not another device's. */
    accel_status unminted = accel__ref_unminted(dst);
    if (unminted == ACCEL_OK)
        unminted = accel__ref_unminted(src);
    if (unminted != ACCEL_OK)
        return unminted;
    bool dst_here = dst.device_id == here->id;
    accel_device *there = device_by_id(here->host, dst_here ? src.device_id
                                                            : dst.device_id);
    if ((!dst_here && src.device_id != here->id) || there == NULL)
        return accel__error(
            ACCEL_ERR_DEVICE_MISMATCH,
            "accel_copy_on_device: one ref must belong to the "
            "stream's device and the other to an open device of "
            "the same host");
    struct accel_copy_layout checked;
    struct accel__slot *dst_slot = NULL, *src_slot = NULL;
    /* Lock in id order, so two opposite copies cannot deadlock. */
    accel_device *first = here->id < there->id ? here : there;
    accel_device *second = first == here ? there : here;
    pthread_mutex_lock(&first->lock);
    pthread_mutex_lock(&second->lock);
    accel_status status = accel__device_usable(here);
    if (status == ACCEL_OK && stream->drv == NULL)
        status = accel__device_gone(here, "accel_copy_on_device");
    if (status == ACCEL_OK)
        status = accel__device_usable(there);
    if (status == ACCEL_OK)
        status = accel__ref_resolve(dst_here ? here : there, dst, &dst_slot);
    if (status == ACCEL_OK)
        status = accel__ref_resolve(dst_here ? there : here, src, &src_slot);
    if (status == ACCEL_OK)
        status = accel__layout_normalize(layout, src_slot->bytes,
                                         dst_slot->bytes, &checked);
    bool same_plugin = here->plugin == there->plugin;
    bool called = status == ACCEL_OK && same_plugin, there_failed = false;
    bool fallback = true;
    if (called && ACCEL__DRV_HAS(here, copy_peer))
        status = peer_copy_entry(stream, there, dst_slot, src_slot, dst_here,
                                 &checked, &fallback, &there_failed);
    if (called && fallback) {
        status = peer_copy(stream, there, dst_slot, src_slot, &checked,
                           &there_failed);
        pthread_mutex_unlock(&second->lock);
        pthread_mutex_unlock(&first->lock);
    } else if (!called) {
        pthread_mutex_unlock(&second->lock);
        pthread_mutex_unlock(&first->lock);
    }
    /* Only a plugin's failure can be a loss, not a check's. */
    if (status != ACCEL_OK && called)
        return accel__device_check_loss_unlocked(there_failed ? there : here,
                                                 status);
    if (status != ACCEL_OK || same_plugin)
        return status;
    return accel__copy_through_host(stream, there, dst, src, &checked, dst_here);
}

static accel_status
copy_on_device_layout_untraced(accel_stream *stream, accel_ref dst, accel_ref src,
                               const struct accel_copy_layout *layout)
{
    if (stream != NULL && (dst.device_id != stream->device->id ||
                           src.device_id != stream->device->id))
        return cross_device_copy(stream, dst, src, layout);
    accel_status status = accel__submit_begin(stream, "accel_copy_on_device");
    if (status != ACCEL_OK)
        return status;
    return same_device_copy(stream, dst, src, layout);
}

accel_status accel_copy_on_device_layout(accel_stream *stream, accel_ref dst,
                                         accel_ref src,
                                         const struct accel_copy_layout *layout)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_on_device_layout_untraced(stream, dst, src,
                                                         layout);
    return accel__trace_end(traced, status, 0);
}

static accel_status
copy_to_device_layout_untraced(accel_stream *stream, accel_ref dst,
                               const void *src,
                               const struct accel_copy_layout *layout)
{
    return host_copy(stream, dst, HOST_UNTYPED, (void *)src, layout, true);
}

accel_status accel_copy_to_device_layout(accel_stream *stream, accel_ref dst,
                                         const void *src,
                                         const struct accel_copy_layout *layout)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_device_layout_untraced(stream, dst, src,
                                                         layout);
    return accel__trace_end(traced, status, 0);
}

static accel_status
copy_to_host_layout_untraced(accel_stream *stream, void *dst, accel_ref src,
                             const struct accel_copy_layout *layout)
{
    return host_copy(stream, src, HOST_UNTYPED, dst, layout, false);
}

accel_status accel_copy_to_host_layout(accel_stream *stream, void *dst,
                                       accel_ref src,
                                       const struct accel_copy_layout *layout)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_host_layout_untraced(stream, dst, src, layout);
    return accel__trace_end(traced, status, 0);
}

/* A zero-byte copy does nothing, but its ref (and the host type against
 * it) must still be good. */
static accel_status empty_copy(accel_stream *stream, accel_ref ref,
                               uint64_t offset, accel_elem_type host_type)
{
    accel_status status = accel__submit_begin(stream, "copy");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__slot *slot = NULL;
    status = resolve_typed(device, ref, host_type, &slot);
    if (status == ACCEL_OK && offset > slot->bytes)
        status = accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                              "copy: offset %llu is past the allocation's %llu "
                              "bytes",
                              (unsigned long long)offset,
                              (unsigned long long)slot->bytes);
    pthread_mutex_unlock(&device->lock);
    return status;
}

static accel_status copy_to_device_untraced(accel_stream *stream, accel_ref dst,
                                            uint64_t offset, const void *src,
                                            uint64_t bytes)
{
    if (bytes == 0)
        return empty_copy(stream, dst, offset, HOST_UNTYPED);
    struct accel_copy_layout layout = accel__layout_linear(0, offset, bytes);
    return host_copy(stream, dst, HOST_UNTYPED, (void *)src, &layout, true);
}

accel_status accel_copy_to_device(accel_stream *stream, accel_ref dst,
                                  uint64_t offset, const void *src,
                                  uint64_t bytes)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_device_untraced(stream, dst, offset, src,
                                                  bytes);
    return accel__trace_end(traced, status, bytes);
}

static accel_status copy_to_host_untraced(accel_stream *stream, void *dst,
                                          accel_ref src, uint64_t offset,
                                          uint64_t bytes)
{
    if (bytes == 0)
        return empty_copy(stream, src, offset, HOST_UNTYPED);
    struct accel_copy_layout layout = accel__layout_linear(offset, 0, bytes);
    return host_copy(stream, src, HOST_UNTYPED, dst, &layout, false);
}

accel_status accel_copy_to_host(accel_stream *stream, void *dst, accel_ref src,
                                uint64_t offset, uint64_t bytes)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_host_untraced(stream, dst, src, offset, bytes);
    return accel__trace_end(traced, status, bytes);
}

static accel_status copy_on_device_untraced(accel_stream *stream, accel_ref dst,
                                            uint64_t dst_offset, accel_ref src,
                                            uint64_t src_offset, uint64_t bytes)
{
    if (bytes == 0) {
        accel_status status = empty_copy(stream, dst, dst_offset, HOST_UNTYPED);
        return status == ACCEL_OK
                   ? empty_copy(stream, src, src_offset, HOST_UNTYPED)
                   : status;
    }
    struct accel_copy_layout layout = accel__layout_linear(src_offset,
                                                           dst_offset, bytes);
    return accel_copy_on_device_layout(stream, dst, src, &layout);
}

accel_status accel_copy_on_device(accel_stream *stream, accel_ref dst,
                                  uint64_t dst_offset, accel_ref src,
                                  uint64_t src_offset, uint64_t bytes)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_on_device_untraced(stream, dst, dst_offset, src,
                                                  src_offset, bytes);
    return accel__trace_end(traced, status, bytes);
}

/* Bytes in `count` elements of the host type. The ref's type is checked
 * against it once the ref is resolved. */
static accel_status typed_bytes(accel_elem_type host_type, uint64_t count,
                                uint64_t *out_bytes)
{
    *out_bytes = 0;
    size_t element = accel_elem_size(host_type);
    if (element == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "typed copy: %d is not an element type",
                            (int)host_type);
    if (__builtin_mul_overflow(count, (uint64_t)element, out_bytes))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "typed copy: %llu elements of %zu bytes overflow",
                            (unsigned long long)count, element);
    return ACCEL_OK;
}

static accel_status copy_to_device_typed_untraced(accel_stream *stream,
                                                  accel_ref dst,
                                                  accel_elem_type src_type,
                                                  const void *src, uint64_t count)
{
    uint64_t bytes = 0;
    accel_status status = typed_bytes(src_type, count, &bytes);
    if (status != ACCEL_OK)
        return status;
    if (bytes == 0)
        return empty_copy(stream, dst, 0, src_type);
    struct accel_copy_layout layout = accel__layout_linear(0, 0, bytes);
    return host_copy(stream, dst, src_type, (void *)src, &layout, true);
}

accel_status accel_copy_to_device_typed(accel_stream *stream, accel_ref dst,
                                        accel_elem_type src_type,
                                        const void *src, uint64_t count)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_device_typed_untraced(stream, dst, src_type,
                                                        src, count);
    return accel__trace_end(traced, status, 0);
}

static accel_status copy_to_host_typed_untraced(accel_stream *stream,
                                                accel_elem_type dst_type,
                                                void *dst, accel_ref src,
                                                uint64_t count)
{
    uint64_t bytes = 0;
    accel_status status = typed_bytes(dst_type, count, &bytes);
    if (status != ACCEL_OK)
        return status;
    if (bytes == 0)
        return empty_copy(stream, src, 0, dst_type);
    struct accel_copy_layout layout = accel__layout_linear(0, 0, bytes);
    return host_copy(stream, src, dst_type, dst, &layout, false);
}

accel_status accel_copy_to_host_typed(accel_stream *stream,
                                      accel_elem_type dst_type, void *dst,
                                      accel_ref src, uint64_t count)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = copy_to_host_typed_untraced(stream, dst_type, dst,
                                                      src, count);
    return accel__trace_end(traced, status, 0);
}
