/*
 * libFuzzer target for the copy-layout validator (accel__layout_normalize
 * and accel__layout_span in host/layout.c).
 *
 * The input is a struct accel_copy_layout (nine little-endian u64: offsets,
 * row_bytes, rows, pitches, depth, slice pitches) followed by the source and
 * destination limits (two u64); missing bytes read as zero.
 *
 * An accepted layout must be in the form driver.h promises a plugin
 * (row_bytes > 0, rows and depth >= 1, pitches that keep rows apart, slice
 * pitches that keep slices apart, every byte inside its limit, no
 * overflow), must move as many bytes as the layout asked for, and, where
 * the limits are small enough to simulate, must copy exactly the bytes the
 * original layout copies. A refusal is ACCEL_ERR_INVALID_ARGUMENT.
 *
 * Built by meson (see tests/meson.build and the README), or by hand.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)

/* Limits up to this many bytes are simulated byte by byte. */
#define SIMULATE_MAX 4096

static uint64_t read_u64(const uint8_t *data, size_t size, size_t index)
{
    uint64_t value = 0;
    for (size_t b = 0; b < 8; b++) {
        size_t at = index * 8 + b;
        if (at < size)
            value |= (uint64_t)data[at] << (8 * b);
    }
    return value;
}

/* Walk a layout as driver.h defines it, copying src to dst row by row. */
static void simulate(const struct accel_copy_layout *l, const uint8_t *src,
                     uint8_t *dst)
{
    uint64_t rows = l->rows == 0 ? 1 : l->rows;
    uint64_t depth = l->depth == 0 ? 1 : l->depth;
    for (uint64_t s = 0; s < depth; s++) {
        for (uint64_t r = 0; r < rows; r++) {
            uint64_t from = l->src_offset + s * l->src_slice_pitch +
                            r * l->src_pitch;
            uint64_t to = l->dst_offset + s * l->dst_slice_pitch +
                          r * l->dst_pitch;
            memcpy(dst + to, src + from, (size_t)l->row_bytes);
        }
    }
}

static void check_same_copy(const struct accel_copy_layout *in,
                            const struct accel_copy_layout *out,
                            uint64_t dst_limit)
{
    static uint8_t src[SIMULATE_MAX], want[SIMULATE_MAX], got[SIMULATE_MAX];
    for (size_t i = 0; i < SIMULATE_MAX; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    memset(want, 0, sizeof want);
    memset(got, 0, sizeof got);
    simulate(in, src, want);
    simulate(out, src, got);
    CHECK(memcmp(want, got, (size_t)dst_limit) == 0);
}

static void check_normalized(const struct accel_copy_layout *in,
                             const struct accel_copy_layout *l,
                             uint64_t src_limit, uint64_t dst_limit)
{
    CHECK(l->row_bytes > 0 && l->rows >= 1 && l->depth >= 1);
    if (l->rows > 1)
        CHECK(l->src_pitch >= l->row_bytes && l->dst_pitch >= l->row_bytes);
    __uint128_t src_plane = (__uint128_t)(l->rows - 1) * l->src_pitch +
                            l->row_bytes;
    __uint128_t dst_plane = (__uint128_t)(l->rows - 1) * l->dst_pitch +
                            l->row_bytes;
    if (l->depth > 1)
        CHECK(l->src_slice_pitch >= src_plane && l->dst_slice_pitch >= dst_plane);
    __uint128_t src_end = (__uint128_t)l->src_offset +
                          (__uint128_t)(l->depth - 1) * l->src_slice_pitch +
                          src_plane;
    __uint128_t dst_end = (__uint128_t)l->dst_offset +
                          (__uint128_t)(l->depth - 1) * l->dst_slice_pitch +
                          dst_plane;
    CHECK(src_end <= src_limit && dst_end <= dst_limit);

    uint64_t first, end;
    accel__layout_span(l, true, &first, &end);
    CHECK(first == l->src_offset && end == (uint64_t)src_end);
    accel__layout_span(l, false, &first, &end);
    CHECK(first == l->dst_offset && end == (uint64_t)dst_end);

    __uint128_t asked = (__uint128_t)in->row_bytes * (in->rows ? in->rows : 1) *
                        (in->depth ? in->depth : 1);
    CHECK((__uint128_t)l->row_bytes * l->rows * l->depth == asked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct accel_copy_layout in = {
        .src_offset = read_u64(data, size, 0),
        .dst_offset = read_u64(data, size, 1),
        .row_bytes = read_u64(data, size, 2),
        .rows = read_u64(data, size, 3),
        .src_pitch = read_u64(data, size, 4),
        .dst_pitch = read_u64(data, size, 5),
        .depth = read_u64(data, size, 6),
        .src_slice_pitch = read_u64(data, size, 7),
        .dst_slice_pitch = read_u64(data, size, 8),
    };
    uint64_t src_limit = read_u64(data, size, 9);
    uint64_t dst_limit = read_u64(data, size, 10);

    struct accel_copy_layout out;
    accel_status status = accel__layout_normalize(&in, src_limit, dst_limit,
                                                  &out);
    if (status != ACCEL_OK) {
        CHECK(status == ACCEL_ERR_INVALID_ARGUMENT);
        return 0;
    }
    check_normalized(&in, &out, src_limit, dst_limit);
    if (src_limit <= SIMULATE_MAX && dst_limit <= SIMULATE_MAX)
        check_same_copy(&in, &out, dst_limit);

    /* Normalizing is idempotent: a plugin's layout is already final. */
    struct accel_copy_layout again;
    CHECK(accel__layout_normalize(&out, src_limit, dst_limit, &again) == ACCEL_OK);
    CHECK(memcmp(&again, &out, sizeof out) == 0);
    return 0;
}
