/*
 * Copy layouts: checked once, overflow included, and put in the one form a
 * plugin receives (see struct accel_copy_layout in driver.h).
 */
#include "layout.h"
#include "status.h"

/* Bytes from a side's offset to the end of its last row. */
static bool side_extent(uint64_t row_bytes, uint64_t rows, uint64_t pitch,
                        uint64_t depth, uint64_t slice_pitch,
                        uint64_t *out_extent)
{
    uint64_t rows_part, slices_part, extent;
    if (__builtin_mul_overflow(rows - 1, pitch, &rows_part) ||
        __builtin_mul_overflow(depth - 1, slice_pitch, &slices_part) ||
        __builtin_add_overflow(rows_part, slices_part, &extent) ||
        __builtin_add_overflow(extent, row_bytes, &extent))
        return false;
    *out_extent = extent;
    return true;
}

static accel_status check_side(const char *side, uint64_t offset,
                               uint64_t row_bytes, uint64_t rows,
                               uint64_t pitch, uint64_t depth,
                               uint64_t slice_pitch, uint64_t limit)
{
    if (rows > 1 && pitch < row_bytes)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "layout: %s pitch %llu is smaller than row_bytes %llu", side,
            (unsigned long long)pitch, (unsigned long long)row_bytes);
    uint64_t plane = 0, extent = 0, end = 0;
    if (!side_extent(row_bytes, rows, pitch, 1, 0, &plane) ||
        !side_extent(row_bytes, rows, pitch, depth, slice_pitch, &extent) ||
        __builtin_add_overflow(offset, extent, &end))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "layout: the %s extent overflows 64 bits", side);
    if (depth > 1 && slice_pitch < plane)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "layout: %s slice pitch %llu is smaller than a "
                            "slice's %llu bytes",
                            side, (unsigned long long)slice_pitch,
                            (unsigned long long)plane);
    if (end > limit)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "layout: the %s side reaches byte %llu, past its "
                            "end at %llu",
                            side, (unsigned long long)end,
                            (unsigned long long)limit);
    return ACCEL_OK;
}

accel_status accel__layout_normalize(const struct accel_copy_layout *layout,
                                     uint64_t src_limit, uint64_t dst_limit,
                                     struct accel_copy_layout *out_layout)
{
    if (layout == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "layout: NULL");
    struct accel_copy_layout l = *layout;
    if (l.row_bytes == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "layout: row_bytes is 0");
    if (l.rows == 0)
        l.rows = 1;
    if (l.depth == 0)
        l.depth = 1;
    accel_status status = check_side("source", l.src_offset, l.row_bytes,
                                     l.rows, l.src_pitch, l.depth,
                                     l.src_slice_pitch, src_limit);
    if (status == ACCEL_OK)
        status = check_side("destination", l.dst_offset, l.row_bytes, l.rows,
                            l.dst_pitch, l.depth, l.dst_slice_pitch, dst_limit);
    if (status != ACCEL_OK)
        return status;

    /* Contiguous rows, then contiguous slices, become one longer row: the
     * plugin then makes a single 1D copy. Within the checked extent, so the
     * products cannot overflow. */
    if (l.rows == 1) {
        l.src_pitch = l.dst_pitch = l.row_bytes;
    } else if (l.src_pitch == l.row_bytes && l.dst_pitch == l.row_bytes) {
        l.row_bytes *= l.rows;
        l.rows = 1;
    }
    if (l.depth == 1) {
        l.src_slice_pitch = l.src_pitch * (l.rows - 1) + l.row_bytes;
        l.dst_slice_pitch = l.dst_pitch * (l.rows - 1) + l.row_bytes;
    } else if (l.rows == 1 && l.src_slice_pitch == l.row_bytes &&
               l.dst_slice_pitch == l.row_bytes) {
        l.row_bytes *= l.depth;
        l.depth = 1;
        l.src_slice_pitch = l.dst_slice_pitch = l.row_bytes;
    }
    if (l.rows == 1)
        l.src_pitch = l.dst_pitch = l.row_bytes;
    *out_layout = l;
    return ACCEL_OK;
}

struct accel_copy_layout accel__layout_linear(uint64_t src_offset,
                                              uint64_t dst_offset, uint64_t bytes)
{
    return (struct accel_copy_layout){
        .src_offset = src_offset,
        .dst_offset = dst_offset,
        .row_bytes = bytes,
        .rows = 1,
        .depth = 1,
        .src_pitch = bytes,
        .dst_pitch = bytes,
        .src_slice_pitch = bytes,
        .dst_slice_pitch = bytes,
    };
}

void accel__layout_span(const struct accel_copy_layout *layout, bool source,
                        uint64_t *out_first, uint64_t *out_end)
{
    uint64_t offset = source ? layout->src_offset : layout->dst_offset;
    uint64_t pitch = source ? layout->src_pitch : layout->dst_pitch;
    uint64_t slice = source ? layout->src_slice_pitch : layout->dst_slice_pitch;
    *out_first = offset;
    *out_end = offset + (layout->depth - 1) * slice +
               (layout->rows - 1) * pitch + layout->row_bytes;
}
