/*
 * Copies: refs resolved and layouts checked under the device lock, then
 * handed to the plugin on the stream. Nothing reaches the plugin before
 * every check has passed.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* How far a host pointer may reach before the address space wraps. */
static uint64_t host_limit(const void *ptr)
{
    return (uint64_t)(UINTPTR_MAX - (uintptr_t)ptr);
}

/* Lock the stream's device and check that it can take work. */
static accel_status begin(accel_stream *stream, const char *what)
{
    if (stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL stream", what);
    pthread_mutex_lock(&stream->device->lock);
    accel_status status = accel__device_usable(stream->device);
    if (status == ACCEL_OK && stream->drv == NULL)
        status = accel__error(ACCEL_ERR_DEVICE_LOST,
                              "%s: the stream's device was lost", what);
    if (status != ACCEL_OK)
        pthread_mutex_unlock(&stream->device->lock);
    return status;
}

static accel_status finish(accel_stream *stream, accel_status status,
                           const char *what)
{
    accel_device *device = stream->device;
    status = accel__device_check_loss(device, accel__from_plugin(status, what));
    pthread_mutex_unlock(&device->lock);
    return status;
}

/* Resolve a ref and check the host element type against it. */
static accel_status resolve_typed(accel_device *device, accel_ref ref,
                                  accel_elem_type host_type,
                                  struct accel__slot **out_slot)
{
    accel_status status = accel__ref_resolve(device, ref, out_slot);
    if (status != ACCEL_OK)
        return status;
    if (host_type != ACCEL_BYTE && ref.type != ACCEL_BYTE &&
        (uint32_t)host_type != ref.type)
        return accel__error(ACCEL_ERR_TYPE_MISMATCH,
                            "the ref holds %s elements, the host data is %s",
                            accel_elem_type_name((accel_elem_type)ref.type),
                            accel_elem_type_name(host_type));
    return ACCEL_OK;
}

static accel_status to_device(accel_stream *stream, accel_ref dst,
                              accel_elem_type src_type, const void *src,
                              const struct accel_copy_layout *layout)
{
    if (src == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_copy_to_device: NULL source");
    accel_status status = begin(stream, "accel_copy_to_device");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__slot *slot = NULL;
    struct accel_copy_layout checked;
    status = resolve_typed(device, dst, src_type, &slot);
    if (status == ACCEL_OK)
        status = accel__layout_normalize(layout, host_limit(src), slot->bytes,
                                         &checked);
    if (status != ACCEL_OK) {
        pthread_mutex_unlock(&device->lock);
        return status;
    }
    return finish(stream,
                  device->drv->copy_to_device(device->drv_device, stream->drv,
                                              slot->address, src, &checked),
                  "copy_to_device");
}

static accel_status to_host(accel_stream *stream, accel_elem_type dst_type,
                            void *dst, accel_ref src,
                            const struct accel_copy_layout *layout)
{
    if (dst == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_copy_to_host: NULL destination");
    accel_status status = begin(stream, "accel_copy_to_host");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__slot *slot = NULL;
    struct accel_copy_layout checked;
    status = resolve_typed(device, src, dst_type, &slot);
    if (status == ACCEL_OK)
        status = accel__layout_normalize(layout, slot->bytes, host_limit(dst),
                                         &checked);
    if (status != ACCEL_OK) {
        pthread_mutex_unlock(&device->lock);
        return status;
    }
    return finish(stream,
                  device->drv->copy_to_host(device->drv_device, stream->drv, dst,
                                            slot->address, &checked),
                  "copy_to_host");
}

static bool spans_overlap(const struct accel_copy_layout *layout)
{
    uint64_t src_first, src_end, dst_first, dst_end;
    accel__layout_span(layout, true, &src_first, &src_end);
    accel__layout_span(layout, false, &dst_first, &dst_end);
    return src_first < dst_end && dst_first < src_end;
}

accel_status accel_copy_on_device_layout(accel_stream *stream, accel_ref dst,
                                         accel_ref src,
                                         const struct accel_copy_layout *layout)
{
    accel_status status = begin(stream, "accel_copy_on_device");
    if (status != ACCEL_OK)
        return status;
    accel_device *device = stream->device;
    struct accel__slot *dst_slot = NULL, *src_slot = NULL;
    struct accel_copy_layout checked;
    status = accel__ref_resolve(device, dst, &dst_slot);
    if (status == ACCEL_OK)
        status = accel__ref_resolve(device, src, &src_slot);
    if (status == ACCEL_OK)
        status = accel__layout_normalize(layout, src_slot->bytes, dst_slot->bytes,
                                         &checked);
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
    return finish(stream,
                  device->drv->copy_on_device(device->drv_device, stream->drv,
                                              dst_slot->address,
                                              src_slot->address, &checked),
                  "copy_on_device");
}

accel_status accel_copy_to_device_layout(accel_stream *stream, accel_ref dst,
                                         const void *src,
                                         const struct accel_copy_layout *layout)
{
    return to_device(stream, dst, ACCEL_BYTE, src, layout);
}

accel_status accel_copy_to_host_layout(accel_stream *stream, void *dst,
                                       accel_ref src,
                                       const struct accel_copy_layout *layout)
{
    return to_host(stream, ACCEL_BYTE, dst, src, layout);
}

static struct accel_copy_layout linear(uint64_t src_offset, uint64_t dst_offset,
                                       uint64_t bytes)
{
    return (struct accel_copy_layout){
        .src_offset = src_offset, .dst_offset = dst_offset,
        .row_bytes = bytes, .rows = 1, .depth = 1,
    };
}

/* A zero-byte copy does nothing, but its ref must still be good. */
static accel_status empty_copy(accel_stream *stream, accel_ref ref,
                               uint64_t offset)
{
    if (stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "copy: NULL stream");
    accel_device *device = stream->device;
    pthread_mutex_lock(&device->lock);
    struct accel__slot *slot = NULL;
    accel_status status = accel__ref_resolve(device, ref, &slot);
    if (status == ACCEL_OK && offset > slot->bytes)
        status = accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                              "copy: offset %llu is past the allocation's %llu "
                              "bytes",
                              (unsigned long long)offset,
                              (unsigned long long)slot->bytes);
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_copy_to_device(accel_stream *stream, accel_ref dst,
                                  uint64_t offset, const void *src, uint64_t bytes)
{
    if (bytes == 0)
        return empty_copy(stream, dst, offset);
    struct accel_copy_layout layout = linear(0, offset, bytes);
    return to_device(stream, dst, ACCEL_BYTE, src, &layout);
}

accel_status accel_copy_to_host(accel_stream *stream, void *dst, accel_ref src,
                                uint64_t offset, uint64_t bytes)
{
    if (bytes == 0)
        return empty_copy(stream, src, offset);
    struct accel_copy_layout layout = linear(offset, 0, bytes);
    return to_host(stream, ACCEL_BYTE, dst, src, &layout);
}

accel_status accel_copy_on_device(accel_stream *stream, accel_ref dst,
                                  uint64_t dst_offset, accel_ref src,
                                  uint64_t src_offset, uint64_t bytes)
{
    if (bytes == 0) {
        accel_status status = empty_copy(stream, dst, dst_offset);
        return status == ACCEL_OK ? empty_copy(stream, src, src_offset) : status;
    }
    struct accel_copy_layout layout = linear(src_offset, dst_offset, bytes);
    return accel_copy_on_device_layout(stream, dst, src, &layout);
}

/* Bytes in `count` elements: of the ref's type, or the host's if untyped. */
static accel_status typed_bytes(accel_ref ref, accel_elem_type host_type,
                                uint64_t count, uint64_t *out_bytes)
{
    if ((unsigned)host_type >= ACCEL_ELEM_TYPE_COUNT)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "typed copy: %d is not an element type",
                            (int)host_type);
    accel_elem_type type =
        ref.type != ACCEL_BYTE ? (accel_elem_type)ref.type : host_type;
    size_t element = accel_elem_size(type);
    if (element == 0 || __builtin_mul_overflow(count, (uint64_t)element, out_bytes))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "typed copy: %llu elements overflow",
                            (unsigned long long)count);
    return ACCEL_OK;
}

accel_status accel_copy_to_device_typed(accel_stream *stream, accel_ref dst,
                                        accel_elem_type src_type, const void *src,
                                        uint64_t count)
{
    uint64_t bytes = 0;
    accel_status status = typed_bytes(dst, src_type, count, &bytes);
    if (status != ACCEL_OK)
        return status;
    if (bytes == 0)
        return empty_copy(stream, dst, 0);
    struct accel_copy_layout layout = linear(0, 0, bytes);
    return to_device(stream, dst, src_type, src, &layout);
}

accel_status accel_copy_to_host_typed(accel_stream *stream,
                                      accel_elem_type dst_type, void *dst,
                                      accel_ref src, uint64_t count)
{
    uint64_t bytes = 0;
    accel_status status = typed_bytes(src, dst_type, count, &bytes);
    if (status != ACCEL_OK)
        return status;
    if (bytes == 0)
        return empty_copy(stream, src, 0);
    struct accel_copy_layout layout = linear(0, 0, bytes);
    return to_host(stream, dst_type, dst, src, &layout);
}
