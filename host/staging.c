/*
 * Pinned staging: copies between pageable host memory and a device that
 * cannot see host memory go through pinned buffers, chunk by chunk.
 *
 * A copy checks out two buffers and alternates between them, so that the
 * host copies one chunk while the device transfers the other. Each buffer
 * carries the event recorded behind its last transfer; it is written again
 * only once that event has completed. Buffers go back to the device's set
 * when the copy returns, and are reused by the next copy: repeated
 * transfers do not grow it.
 *
 * Host to device returns once every chunk is enqueued (the source may then
 * be reused). Device to host returns once the data has arrived.
 */
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "device.h"
#include "drop.h"
#include "layout.h"
#include "os.h"
#include "recovery.h"
#include "refs.h"
#include "staging.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

#define STAGING_DEFAULT_CHUNK (1u << 20)
#define STAGING_MIN_CHUNK 4096u
#define STAGING_MAX_CHUNK (256u << 20)

uint64_t accel__staging_chunk_from_env(void)
{
    const char *text = accel__getenv("ACCEL_STAGING_CHUNK");
    if (text == NULL || text[0] == '\0')
        return STAGING_DEFAULT_CHUNK;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] == '-' || value < STAGING_MIN_CHUNK ||
        value > STAGING_MAX_CHUNK) {
        accel__log(
            ACCEL_LOG_WARN,
            "ACCEL_STAGING_CHUNK='%s' is not a byte count from %u to %u; "
            "using %u",
            text, STAGING_MIN_CHUNK, STAGING_MAX_CHUNK, STAGING_DEFAULT_CHUNK);
        return STAGING_DEFAULT_CHUNK;
    }
    return value;
}

/* ---- the set of buffers (device lock held) ---- */

/*
 * A new buffer, counted in `total` from the start. Its host_alloc (pinning,
 * cuMemHostRegister, as long as the pages it locks) runs without the lock;
 * the caller has borrowed the device, so a reset waits for it, and host_alloc
 * memory outlives a reset anyway.
 */
static accel_status buffer_new(accel_device *device,
                               struct accel__staging_buffer *out_buffer)
{
    memset(out_buffer, 0, sizeof *out_buffer);
    device->staging.total++;
    pthread_mutex_unlock(&device->lock);
    accel_status status = ACCEL__DRV_WAIT(
        device, host_alloc, (size_t)device->staging.chunk, &out_buffer->ptr);
    pthread_mutex_lock(&device->lock);
    if (status != ACCEL_OK) {
        device->staging.total--;
        pthread_cond_broadcast(&device->staging.returned);
        return status;
    }
    status = accel__event_take(device, &out_buffer->event);
    if (status != ACCEL_OK) {
        ACCEL__DRV_VOID(device, host_free, out_buffer->ptr);
        out_buffer->ptr = NULL;
        device->staging.total--;
        pthread_cond_broadcast(&device->staging.returned);
    }
    return status;
}

/*
 * Check out up to two buffers, waiting while other copies hold them all.
 * On success the device is borrowed once (buffers_give ends it): from
 * before a buffer is made without the lock, so that no reset runs between
 * the two buffers.
 */
static accel_status buffers_take(accel_device *device,
                                 struct accel__staging_buffer out_buffers[2],
                                 uint32_t *out_count)
{
    struct accel__staging *staging = &device->staging;
    *out_count = 0;
    while (staging->idle_count == 0 &&
           staging->total >= ACCEL__STAGING_MAX_BUFFERS)
        pthread_cond_wait(&staging->returned, &device->lock);
    accel__borrow_begin(device);
    for (uint32_t i = 0; i < 2; i++) {
        if (staging->idle_count > 0) {
            out_buffers[i] = staging->idle[--staging->idle_count];
        } else if (staging->total < ACCEL__STAGING_MAX_BUFFERS) {
            accel_status status = buffer_new(device, &out_buffers[i]);
            if (status != ACCEL_OK) {
                if (i > 0)
                    break; /* one buffer still works, without overlap */
                accel__borrow_end(device);
                return status;
            }
        } else {
            break;
        }
        (*out_count)++;
    }
    return ACCEL_OK;
}

static void buffers_give(accel_device *device,
                         struct accel__staging_buffer *buffers, uint32_t count)
{
    struct accel__staging *staging = &device->staging;
    for (uint32_t i = 0; i < count; i++)
        staging->idle[staging->idle_count++] = buffers[i];
    pthread_cond_broadcast(&staging->returned);
    /* Last: a recovery this copy put off may run now, and frees them. */
    accel__borrow_end(device);
}

void accel__staging_release(accel_device *device)
{
    struct accel__staging *staging = &device->staging;
    for (uint32_t i = 0; i < staging->idle_count; i++) {
        ACCEL__DRV_TRY(device, event_sync, staging->idle[i].event);
        accel__event_give(device, staging->idle[i].event);
        ACCEL__DRV_VOID(device, host_free, staging->idle[i].ptr);
    }
    staging->total -= staging->idle_count;
    staging->idle_count = 0;
}

/* ---- chunks of a layout ---- */

/* One chunk: rows of one slice, or a piece of one row. */
struct piece {
    uint64_t host_offset;
    uint64_t device_offset;
    uint64_t row_bytes;
    uint64_t rows;
    uint64_t host_pitch;
    uint64_t device_pitch;
};

struct piece_walk {
    const struct accel_copy_layout *layout;
    bool host_is_source;
    uint64_t chunk;
    uint64_t slice, row, byte; /* where the next piece starts */
};

static bool walk_next(struct piece_walk *walk, struct piece *out_piece)
{
    const struct accel_copy_layout *l = walk->layout;
    if (walk->slice == l->depth)
        return false;
    uint64_t host_offset = walk->host_is_source ? l->src_offset : l->dst_offset;
    uint64_t device_offset = walk->host_is_source ? l->dst_offset : l->src_offset;
    uint64_t host_pitch = walk->host_is_source ? l->src_pitch : l->dst_pitch;
    uint64_t device_pitch = walk->host_is_source ? l->dst_pitch : l->src_pitch;
    uint64_t host_slice = walk->host_is_source ? l->src_slice_pitch
                                               : l->dst_slice_pitch;
    uint64_t device_slice = walk->host_is_source ? l->dst_slice_pitch
                                                 : l->src_slice_pitch;

    struct piece p = {
        .host_offset = host_offset + walk->slice * host_slice +
                       walk->row * host_pitch + walk->byte,
        .device_offset = device_offset + walk->slice * device_slice +
                         walk->row * device_pitch + walk->byte,
        .host_pitch = host_pitch,
        .device_pitch = device_pitch,
    };
    if (l->row_bytes > walk->chunk) {
        /* A row longer than a chunk goes in pieces of a chunk. */
        p.rows = 1;
        p.row_bytes = l->row_bytes - walk->byte < walk->chunk
                          ? l->row_bytes - walk->byte
                          : walk->chunk;
        walk->byte += p.row_bytes;
        if (walk->byte == l->row_bytes) {
            walk->byte = 0;
            walk->row++;
        }
    } else {
        uint64_t fit = walk->chunk / l->row_bytes;
        p.row_bytes = l->row_bytes;
        p.rows = l->rows - walk->row < fit ? l->rows - walk->row : fit;
        walk->row += p.rows;
    }
    if (walk->row == l->rows) {
        walk->row = 0;
        walk->slice++;
    }
    *out_piece = p;
    return true;
}

/* The plugin's layout for a piece: packed in the buffer, pitched on the
 * device. */
static struct accel_copy_layout piece_layout(const struct piece *p,
                                             bool host_is_source)
{
    struct accel_copy_layout l = {
        .row_bytes = p->row_bytes,
        .rows = p->rows,
        .depth = 1,
    };
    if (host_is_source) {
        l.dst_offset = p->device_offset;
        l.src_pitch = p->row_bytes;
        l.dst_pitch = p->device_pitch;
    } else {
        l.src_offset = p->device_offset;
        l.src_pitch = p->device_pitch;
        l.dst_pitch = p->row_bytes;
    }
    if (p->rows == 1 ||
        (l.src_pitch == l.row_bytes && l.dst_pitch == l.row_bytes)) {
        l.row_bytes *= l.rows;
        l.rows = 1;
        l.src_pitch = l.dst_pitch = l.row_bytes;
    }
    l.src_slice_pitch = l.src_pitch * (l.rows - 1) + l.row_bytes;
    l.dst_slice_pitch = l.dst_pitch * (l.rows - 1) + l.row_bytes;
    return l;
}

static void pack(void *buffer, const unsigned char *host, const struct piece *p)
{
    unsigned char *out = buffer;
    for (uint64_t r = 0; r < p->rows; r++)
        memcpy(out + r * p->row_bytes,
               host + p->host_offset + r * p->host_pitch, p->row_bytes);
}

static void unpack(unsigned char *host, const void *buffer, const struct piece *p)
{
    const unsigned char *in = buffer;
    for (uint64_t r = 0; r < p->rows; r++)
        memcpy(host + p->host_offset + r * p->host_pitch, in + r * p->row_bytes,
               p->row_bytes);
}

/*
 * Wait for a buffer's last transfer without holding the device lock. A
 * failure may be a loss; its recovery waits until the buffers are back.
 */
static accel_status buffer_wait(accel_device *device,
                                struct accel__staging_buffer *buffer)
{
    return accel__device_check_loss_unlocked(
        device, ACCEL__DRV_WAIT(device, event_sync, buffer->event));
}

/*
 * Enqueue one piece between a buffer and the ref, and record the buffer's
 * event behind it. The ref is resolved again for every piece, under the
 * lock: between two pieces the pool may have moved the allocation.
 */
static accel_status piece_submit(accel_stream *stream, accel_ref ref,
                                 struct accel__staging_buffer *buffer,
                                 const struct piece *p, bool host_is_source)
{
    accel_device *device = stream->device;
    struct accel__slot *slot = NULL;
    accel_status status = accel__submit_begin(stream, "staged copy");
    if (status != ACCEL_OK)
        return status;
    status = accel__ref_resolve(device, ref, &slot);
    if (status == ACCEL_OK) {
        struct accel_copy_layout l = piece_layout(p, host_is_source);
        struct accel__trace_command command = {
            .kind = host_is_source ? ACCEL__TRACE_COPY_H2D : ACCEL__TRACE_COPY_D2H,
            .bytes = accel__layout_bytes(&l)};
        status = host_is_source
                     ? ACCEL__DRV_COMMAND(stream, &command, copy_to_device,
                                          slot->slice.address, buffer->ptr, &l)
                     : ACCEL__DRV_COMMAND(stream, &command, copy_to_host,
                                          buffer->ptr, slot->slice.address, &l);
        slot->lanes |= accel__lane_bit(stream);
    }
    if (status == ACCEL_OK) {
        status = ACCEL__DRV_CALL(device, event_record, buffer->event,
                                 stream->drv);
        /* The buffer's event does not cover the piece just enqueued: wait
         * for the stream, or the buffer would be reused, or freed, under
         * the copy. */
        if (status != ACCEL_OK)
            ACCEL__DRV_TRY(device, stream_sync, stream->drv);
    }
    return accel__submit_end(stream, status);
}

static accel_status
staged_run(accel_stream *stream, accel_ref ref, unsigned char *host,
           const struct accel_copy_layout *layout, bool host_is_source,
           struct accel__staging_buffer *buffers, uint32_t count)
{
    struct piece_walk walk = {
        .layout = layout,
        .host_is_source = host_is_source,
        .chunk = stream->device->staging.chunk,
    };
    struct piece pending[2];
    bool has_pending[2] = {false, false};
    accel_status status = ACCEL_OK;
    struct piece p;
    for (uint32_t turn = 0; status == ACCEL_OK && walk_next(&walk, &p);
         turn = (turn + 1) % count) {
        struct accel__staging_buffer *buffer = &buffers[turn];
        status = buffer_wait(stream->device, buffer);
        if (status != ACCEL_OK)
            break;
        if (host_is_source) {
            pack(buffer->ptr, host, &p);
        } else if (has_pending[turn]) {
            unpack(host, buffer->ptr, &pending[turn]);
            has_pending[turn] = false;
        }
        status = piece_submit(stream, ref, buffer, &p, host_is_source);
        if (!host_is_source && status == ACCEL_OK) {
            pending[turn] = p;
            has_pending[turn] = true;
        }
    }
    /* Device to host: the chunks still in flight. */
    for (uint32_t turn = 0; turn < count && !host_is_source; turn++) {
        if (!has_pending[turn])
            continue;
        accel_status waited = buffer_wait(stream->device, &buffers[turn]);
        if (waited == ACCEL_OK && status == ACCEL_OK)
            unpack(host, buffers[turn].ptr, &pending[turn]);
        if (status == ACCEL_OK)
            status = waited;
        has_pending[turn] = false;
    }
    return status;
}

accel_status accel__staged_copy(accel_stream *stream, accel_ref ref, void *host,
                                const struct accel_copy_layout *layout,
                                bool host_is_source)
{
    accel_device *device = stream->device;
    struct accel__staging_buffer buffers[2];
    uint32_t count = 0;
    pthread_mutex_lock(&device->lock);
    /* Borrowed: a reset waits until they are back. */
    accel_status status = buffers_take(device, buffers, &count);
    pthread_mutex_unlock(&device->lock);
    if (status != ACCEL_OK)
        return status;
    status = staged_run(stream, ref, host, layout, host_is_source, buffers,
                        count);
    pthread_mutex_lock(&device->lock);
    buffers_give(device, buffers, count);
    pthread_mutex_unlock(&device->lock);
    return status;
}

/* ---- between devices of two plugins ---- */

/* One synchronous transfer between host memory and a ref of `device`, on
 * its internal stream: for either side of a copy between plugins, without
 * a way back through the public copies and their checks. */
static accel_status transfer_through_own(accel_device *device, accel_ref ref,
                                         uint64_t offset, void *host,
                                         uint64_t bytes, bool host_is_source)
{
    struct accel_copy_layout l = host_is_source
                                     ? accel__layout_linear(0, offset, bytes)
                                     : accel__layout_linear(offset, 0, bytes);
    struct accel__slot *slot = NULL;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK)
        status = accel__ref_resolve(device, ref, &slot);
    if (status == ACCEL_OK)
        status = accel__internal_stream(device);
    if (status == ACCEL_OK)
        status = host_is_source
                     ? ACCEL__DRV_CALL(device, copy_to_device, device->own.stream,
                                       slot->slice.address, host, &l)
                     : ACCEL__DRV_CALL(device, copy_to_host, device->own.stream,
                                       host, slot->slice.address, &l);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_CALL(device, stream_sync, device->own.stream);
    status = accel__device_check_loss(device, status);
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel__copy_through_host(accel_stream *stream, accel_device *there,
                                      accel_ref dst, accel_ref src,
                                      const struct accel_copy_layout *layout,
                                      bool dst_here)
{
    if (layout->rows != 1 || layout->depth != 1)
        return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                            "a pitched copy between devices of two plugins is "
                            "not supported; copy it row by row");
    /* The stream's earlier work comes first, as on any stream. */
    accel_status status = accel_stream_sync(stream);
    uint64_t chunk = stream->device->staging.chunk;
    void *buffer = status == ACCEL_OK ? malloc((size_t)chunk) : NULL;
    if (status == ACCEL_OK && buffer == NULL)
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "copy buffer");
    accel_device *here = stream->device;
    accel_device *from = dst_here ? there : here, *to = dst_here ? here : there;
    for (uint64_t done = 0; status == ACCEL_OK && done < layout->row_bytes;) {
        uint64_t n = layout->row_bytes - done < chunk ? layout->row_bytes - done
                                                      : chunk;
        status = transfer_through_own(from, src, layout->src_offset + done,
                                      buffer, n, false);
        if (status == ACCEL_OK)
            status = transfer_through_own(to, dst, layout->dst_offset + done,
                                          buffer, n, true);
        done += n;
    }
    free(buffer);
    return status;
}
