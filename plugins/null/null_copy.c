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

/* The first bytes of a large fill, written block by block; a multiple of 64. */
#define NULL_FILL_SEED 4096u

/* The pattern is one byte repeated (zero, 0x01010101, ...): a memset. */
static bool null_fill_uniform(const struct null_copy *fill)
{
    for (uint32_t i = 1; i < fill->pattern_size; i++) {
        if (fill->pattern[i] != fill->pattern[0])
            return false;
    }
    return true;
}

/*
 * A fill: memset when the pattern is one byte repeated; otherwise one
 * 64-byte block of the pattern, doubled in place by memcpy until it is the
 * 4 KiB seed (each copy libc's widest stores, from the L1 cache: storing the
 * block 64 bytes at a time cost twice a memset), and the seed copied over
 * the rest. dst is a multiple of the pattern size from an aligned
 * allocation, and every copy starts at a multiple of 64 bytes, so its phase
 * matches the pattern's.
 */
static void null_fill_run(const struct null_copy *fill)
{
    uint8_t *dst = (uint8_t *)fill->dst + fill->layout.dst_offset;
    uint64_t bytes = fill->layout.row_bytes;
    uint8_t block[64];

    if (null_fill_uniform(fill)) {
        memset(dst, fill->pattern[0], (size_t)bytes);
        return;
    }
    /* Doubled, not indexed modulo the size: a division a byte cost more
     * than the stores of a small fill. The size is a power of two <= 8. */
    memcpy(block, fill->pattern, fill->pattern_size);
    for (size_t n = fill->pattern_size; n < sizeof(block); n *= 2)
        memcpy(block + n, block, n);
    size_t seed = bytes < NULL_FILL_SEED ? (size_t)bytes : NULL_FILL_SEED;
    size_t done = seed < sizeof(block) ? seed : sizeof(block);
    if (done == sizeof(block))
        memcpy(dst, block, sizeof(block));
    else
        memcpy(dst, block, done);
    while (done < seed) {
        size_t more = done < seed - done ? done : seed - done;
        memcpy(dst + done, dst, more);
        done += more;
    }
    /* The rest copied from the seed, which stays in the L1 cache. */
    for (uint64_t at = NULL_FILL_SEED; at < bytes; at += NULL_FILL_SEED) {
        uint64_t left = bytes - at;
        memcpy(dst + at, dst,
               (size_t)(left < NULL_FILL_SEED ? left : NULL_FILL_SEED));
    }
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
