/*
 * accel_fill: a byte pattern over a ref's range, through the plugin's
 * optional fill entry, or from host memory when the plugin has none (or
 * its driver no call for the pattern size).
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "refs.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/*
 * The host buffer the fallback copies from, at most: a multiple of every
 * pattern size, large enough that a big fill is a few long copies.
 */
#define FILL_CHUNK (256u * 1024u)

static bool pattern_size_valid(size_t size)
{
    return size == 1 || size == 2 || size == 4 || size == 8;
}

/* What can be checked before the device is touched. */
static accel_status fill_args(uint64_t offset, uint64_t bytes,
                              const void *pattern, size_t pattern_size)
{
    if (pattern == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_fill: NULL pattern");
    if (!pattern_size_valid(pattern_size))
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "accel_fill: a pattern of %zu bytes (1, 2, 4 or 8 are "
            "allowed)",
            pattern_size);
    if (offset % pattern_size != 0 || bytes % pattern_size != 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_fill: offset %llu and length %llu must be "
                            "multiples of the %zu-byte pattern",
                            (unsigned long long)offset,
                            (unsigned long long)bytes, pattern_size);
    return ACCEL_OK;
}

/* The range lies inside the allocation, overflow included. */
static accel_status fill_range(const struct accel__slot *slot, uint64_t offset,
                               uint64_t bytes)
{
    if (offset <= slot->bytes && bytes <= slot->bytes - offset)
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                        "accel_fill: %llu bytes from offset %llu are past the "
                        "ref's %llu bytes",
                        (unsigned long long)bytes, (unsigned long long)offset,
                        (unsigned long long)slot->bytes);
}

/*
 * No fill entry: copy the pattern from a host buffer of our own, then wait
 * for the stream, since the buffer must outlive the copies. The wait
 * happens after a failed copy too: earlier chunks may still read it.
 */
static accel_status fill_from_host(accel_stream *stream, accel_ref dst,
                                   uint64_t offset, uint64_t bytes,
                                   const void *pattern, size_t pattern_size)
{
    size_t chunk = bytes < FILL_CHUNK ? (size_t)bytes : FILL_CHUNK;
    uint8_t *buffer = malloc(chunk);
    if (buffer == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "accel_fill: %zu bytes for the pattern", chunk);
    for (size_t i = 0; i < chunk; i += pattern_size)
        memcpy(buffer + i, pattern, pattern_size);
    accel_status status = ACCEL_OK;
    for (uint64_t done = 0; done < bytes && status == ACCEL_OK; done += chunk) {
        uint64_t left = bytes - done;
        status = accel_copy_to_device(stream, dst, offset + done, buffer,
                                      left < chunk ? left : chunk);
    }
    accel_status synced = accel_stream_sync(stream);
    free(buffer);
    return status != ACCEL_OK ? status : synced;
}

/* Lock held; released here. ACCEL_ERR_NOT_SUPPORTED: take the fallback. */
static accel_status fill_by_plugin(accel_stream *stream, struct accel__slot *slot,
                                   uint64_t offset, uint64_t bytes,
                                   const void *pattern, size_t pattern_size)
{
    accel_device *device = stream->device;
    if (!ACCEL__DRV_HAS(device, fill)) {
        pthread_mutex_unlock(&device->lock);
        return ACCEL_ERR_NOT_SUPPORTED;
    }
    /* Tried first: a plugin may decline a pattern, and the fallback then
     * fills without a failure on record. */
    accel_status status = ACCEL__DRV_TRY(device, fill, stream->drv,
                                         slot->slice.address + offset, bytes,
                                         pattern, (uint32_t)pattern_size);
    if (status == ACCEL_ERR_NOT_SUPPORTED) {
        pthread_mutex_unlock(&device->lock);
        return status;
    }
    if (status != ACCEL_OK)
        status = accel__submit_failed(status, __func__, "fill");
    status = accel__submit_command(
        stream,
        &(struct accel__trace_command){.kind = ACCEL__TRACE_FILL, .bytes = bytes},
        status);
    slot->lanes |= accel__lane_bit(stream);
    return accel__submit_end(stream, status);
}

static accel_status fill_untraced(accel_stream *stream, accel_ref dst,
                                  uint64_t offset, uint64_t bytes,
                                  const void *pattern, size_t pattern_size)
{
    accel_status status = fill_args(offset, bytes, pattern, pattern_size);
    if (status == ACCEL_OK)
        status = accel__submit_begin(stream, "accel_fill");
    if (status != ACCEL_OK)
        return status;
    struct accel__slot *slot = NULL;
    status = accel__ref_resolve(stream->device, dst, &slot);
    if (status == ACCEL_OK)
        status = fill_range(slot, offset, bytes);
    if (status != ACCEL_OK || bytes == 0) {
        pthread_mutex_unlock(&stream->device->lock);
        return status;
    }
    status = fill_by_plugin(stream, slot, offset, bytes, pattern, pattern_size);
    if (status != ACCEL_ERR_NOT_SUPPORTED)
        return status;
    return fill_from_host(stream, dst, offset, bytes, pattern, pattern_size);
}

accel_status accel_fill(accel_stream *stream, accel_ref dst, uint64_t offset,
                        uint64_t bytes, const void *pattern, size_t pattern_size)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = fill_untraced(stream, dst, offset, bytes, pattern,
                                        pattern_size);
    return accel__trace_end(traced, status, bytes);
}
