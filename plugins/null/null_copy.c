#include "null_copy.h"

#include <stdint.h>
#include <string.h>

/* Rows and slices of 0 mean 1 (see struct accel_copy_layout). */
static uint64_t null_copy_rows(const struct accel_copy_layout *layout)
{
    return layout->rows != 0 ? layout->rows : 1;
}

static uint64_t null_copy_depth(const struct accel_copy_layout *layout)
{
    return layout->depth != 0 ? layout->depth : 1;
}

uint64_t accel__null_copy_bytes(const struct null_copy *copy)
{
    const struct accel_copy_layout *layout = &copy->layout;

    /* The host validated the layout: the product does not overflow. */
    return layout->row_bytes * null_copy_rows(layout) * null_copy_depth(layout);
}

static void null_copy_move(const struct null_copy *copy, uint8_t *dst,
                           const uint8_t *src, uint64_t bytes)
{
    if (copy->may_overlap)
        memmove(dst, src, (size_t)bytes);
    else
        memcpy(dst, src, (size_t)bytes);
}

/* One slice: rows of row_bytes, each side at its own pitch. */
static void null_copy_plane(const struct null_copy *copy, uint8_t *dst,
                            const uint8_t *src, uint64_t rows, bool rows_packed)
{
    const struct accel_copy_layout *layout = &copy->layout;

    if (rows_packed) {
        null_copy_move(copy, dst, src, rows * layout->row_bytes);
        return;
    }
    for (uint64_t r = 0; r < rows; r++)
        null_copy_move(copy, dst + r * layout->dst_pitch,
                       src + r * layout->src_pitch, layout->row_bytes);
}

/*
 * A fill: memset for one byte; otherwise the pattern spread over a 64-bit
 * word, stored word by word (the compiler turns the loop into vector
 * stores), then the tail. dst is a multiple of the pattern size from an
 * aligned allocation, so the word's phase matches the pattern's.
 */
static void null_fill_run(const struct null_copy *fill)
{
    uint8_t *dst = (uint8_t *)fill->dst + fill->layout.dst_offset;
    uint64_t bytes = fill->layout.row_bytes, words = bytes / 8, word;
    uint8_t spread[8];

    if (fill->pattern_size == 1) {
        memset(dst, fill->pattern[0], (size_t)bytes);
        return;
    }
    for (size_t i = 0; i < sizeof(spread); i++)
        spread[i] = fill->pattern[i % fill->pattern_size];
    memcpy(&word, spread, sizeof(word));
    for (uint64_t i = 0; i < words; i++)
        memcpy(dst + i * 8, &word, sizeof(word));
    memcpy(dst + words * 8, spread, (size_t)(bytes - words * 8));
}

static void null_copy_layout_run(const struct null_copy *copy)
{
    const struct accel_copy_layout *layout = &copy->layout;
    uint64_t rows = null_copy_rows(layout);
    uint64_t depth = null_copy_depth(layout);
    uint8_t *dst = (uint8_t *)copy->dst + layout->dst_offset;
    const uint8_t *src = (const uint8_t *)copy->src + layout->src_offset;
    /* Pitches only mean something with several rows, slice pitches with
     * several slices (see struct accel_copy_layout). */
    bool rows_packed = rows == 1 || (layout->src_pitch == layout->row_bytes &&
                                     layout->dst_pitch == layout->row_bytes);
    uint64_t plane_bytes = rows * layout->row_bytes;
    bool planes_packed = rows_packed &&
                         (depth == 1 || (layout->src_slice_pitch == plane_bytes &&
                                         layout->dst_slice_pitch == plane_bytes));

    if (planes_packed) {
        null_copy_move(copy, dst, src, depth * plane_bytes);
        return;
    }
    for (uint64_t s = 0; s < depth; s++)
        null_copy_plane(copy, dst + s * layout->dst_slice_pitch,
                        src + s * layout->src_slice_pitch, rows, rows_packed);
}

void accel__null_copy_run(const struct null_copy *copy)
{
    if (copy->pattern_size != 0)
        null_fill_run(copy);
    else
        null_copy_layout_run(copy);
}
