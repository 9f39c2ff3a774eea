/*
 * Conformance: device properties, memory and copies (1D, 2D and 3D in
 * every direction, pinned host memory, direct copies on a host-visible
 * device, compaction), through the public API.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite.h"

/* ---- devices ---- */

static void test_device_describes_itself(struct conformance *c)
{
    const struct accel_device_props *p = &c->info.props;

    assert_true(strlen(p->name) > 0);
    assert_true(strlen(p->arch) > 0);
    assert_true(p->total_memory > 0);
    assert_true(p->compute_units > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    /* Launch limits mean something only on a device that runs kernels. */
    if (!has_kernels(c))
        return;
    assert_true(p->max_threads_per_block >= 64);
    for (int d = 0; d < 3; d++) {
        assert_true(p->max_block_dim[d] > 0);
        assert_true(p->max_grid_dim[d] > 0);
    }
}

/* ---- memory ---- */

static void test_alloc_then_free_then_use_is_freed_ref(struct conformance *c)
{
    accel_ref ref;
    float data[16] = {0};

    assert_status(accel_alloc(c->device, ACCEL_F32, 1000, &ref), ACCEL_OK);
    assert_int_equal(accel_ref_bytes(ref), 4000);
    assert_status(accel_ref_check(c->device, ref), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device, ref), ACCEL_ERR_FREED_REF);
    assert_status(accel_copy_in(c->stream, ref, data, 16), ACCEL_ERR_FREED_REF);
}

static void test_alloc_of_nothing_is_invalid(struct conformance *c)
{
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_F32, 0, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_out_of_memory_leaves_device_usable(struct conformance *c)
{
    uint64_t too_much = c->info.props.total_memory + (1ull << 30);
    uint32_t in[256], out[256] = {0};
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, too_much, &ref),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    for (uint32_t i = 0; i < 256; i++)
        in[i] = i * 3u + 1u;
    assert_status(accel_alloc(c->device, ACCEL_U32, 256, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, 256), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, 256), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof(in));
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

/* ---- 1D copies ---- */

static void test_copy_1d_round_trip_with_offsets(struct conformance *c)
{
    enum { BYTES = 100000, OFFSET = 4093, LENGTH = 50021 };
    unsigned char *in = malloc(BYTES), *out = malloc(BYTES);
    accel_ref ref;

    assert_non_null(in);
    assert_non_null(out);
    fill_pattern(in, BYTES, 1);
    memset(out, 0, BYTES);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, in, BYTES), ACCEL_OK);
    /* Overwrite a middle range from another part of the input. */
    assert_status(accel_copy_to_device(c->stream, ref, OFFSET, in + 7, LENGTH),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out, ref, 0, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(out, in, OFFSET);
    assert_memory_equal(out + OFFSET, in + 7, LENGTH);
    assert_memory_equal(out + OFFSET + LENGTH, in + OFFSET + LENGTH,
                        BYTES - OFFSET - LENGTH);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_copy_past_the_allocation_is_rejected(struct conformance *c)
{
    unsigned char bytes[64] = {0};
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, 32, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 16, bytes, 17),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, bytes, ref, 0, 33),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_typed_copy_of_another_type_is_rejected(struct conformance *c)
{
    double wrong[4] = {0};
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_F32, 4, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, wrong, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_copy_on_device_moves_bytes(struct conformance *c)
{
    enum { BYTES = 65536 };
    unsigned char *in = malloc(BYTES), *out = malloc(BYTES);
    accel_ref a, b;

    assert_non_null(in);
    assert_non_null(out);
    fill_pattern(in, BYTES, 2);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &b), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, a, 0, in, BYTES), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, b, 0, in, BYTES), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, b, 1000, a, 20000, 30000),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out, b, 0, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(out, in, 1000);
    assert_memory_equal(out + 1000, in + 20000, 30000);
    assert_memory_equal(out + 31000, in + 31000, BYTES - 31000);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
    free(in);
    free(out);
}

static void test_copies_through_pinned_host_memory(struct conformance *c)
{
    enum { BYTES = 3 << 20 };
    unsigned char *in = NULL, *out = NULL;
    unsigned char *expected = malloc(BYTES);

    assert_non_null(expected);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&in), ACCEL_OK);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&out), ACCEL_OK);
    fill_pattern(in, BYTES, 3);
    memcpy(expected, in, BYTES);
    memset(out, 0, BYTES);
    round_trip_bytes(c, out, in, BYTES);
    assert_memory_equal(out, expected, BYTES);
    accel_host_free(c->device, in);
    accel_host_free(c->device, out);
    free(expected);
}

/* ---- 2D and 3D copies ---- */

/*
 * One shape, copied host -> device -> device -> host, each side with its
 * own offset and pitches; the result must hold the copied bytes where the
 * layout puts them and the fill everywhere else.
 */
struct shape {
    uint64_t row_bytes, rows, depth;
    uint64_t host_pitch, host_slice; /* the source host buffer's */
    uint64_t dev_pitch, dev_slice;   /* the first device buffer's */
    uint64_t dev2_pitch, dev2_slice; /* the second device buffer's */
    uint64_t out_pitch, out_slice;   /* the destination host buffer's */
};

static uint64_t extent(uint64_t offset, const struct shape *s, uint64_t pitch,
                       uint64_t slice)
{
    return offset + (s->depth - 1) * slice + (s->rows - 1) * pitch + s->row_bytes;
}

static struct accel_copy_layout
layout_of(const struct shape *s, uint64_t src_offset, uint64_t src_pitch,
          uint64_t src_slice, uint64_t dst_offset, uint64_t dst_pitch,
          uint64_t dst_slice)
{
    return (struct accel_copy_layout){.src_offset = src_offset,
                                      .dst_offset = dst_offset,
                                      .row_bytes = s->row_bytes,
                                      .rows = s->rows,
                                      .src_pitch = src_pitch,
                                      .dst_pitch = dst_pitch,
                                      .depth = s->depth,
                                      .src_slice_pitch = src_slice,
                                      .dst_slice_pitch = dst_slice};
}

static void copy_shape_round_trip(struct conformance *c, const struct shape *s)
{
    const uint64_t in_off = 5, dev_off = 64, dev2_off = 3, out_off = 11;
    uint64_t in_bytes = extent(in_off, s, s->host_pitch, s->host_slice);
    uint64_t out_bytes = extent(out_off, s, s->out_pitch, s->out_slice);
    unsigned char *in = malloc(in_bytes), *out = malloc(out_bytes);
    struct accel_copy_layout layout;
    accel_ref dev, dev2;

    assert_non_null(in);
    assert_non_null(out);
    fill_pattern(in, in_bytes, (unsigned)(s->rows + s->depth));
    memset(out, 0xee, out_bytes);
    assert_status(accel_alloc(c->device, ACCEL_BYTE,
                              extent(dev_off, s, s->dev_pitch, s->dev_slice),
                              &dev),
                  ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE,
                              extent(dev2_off, s, s->dev2_pitch, s->dev2_slice),
                              &dev2),
                  ACCEL_OK);
    layout = layout_of(s, in_off, s->host_pitch, s->host_slice, dev_off,
                       s->dev_pitch, s->dev_slice);
    assert_status(accel_copy_to_device_layout(c->stream, dev, in, &layout),
                  ACCEL_OK);
    layout = layout_of(s, dev_off, s->dev_pitch, s->dev_slice, dev2_off,
                       s->dev2_pitch, s->dev2_slice);
    assert_status(accel_copy_on_device_layout(c->stream, dev2, dev, &layout),
                  ACCEL_OK);
    layout = layout_of(s, dev2_off, s->dev2_pitch, s->dev2_slice, out_off,
                       s->out_pitch, s->out_slice);
    assert_status(accel_copy_to_host_layout(c->stream, out, dev2, &layout),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);

    for (uint64_t b = 0; b < out_bytes; b++) {
        uint64_t rel = b - out_off;
        uint64_t z = rel / s->out_slice, y = (rel % s->out_slice) / s->out_pitch;
        uint64_t x = (rel % s->out_slice) % s->out_pitch;
        bool inside = b >= out_off && z < s->depth && y < s->rows &&
                      x < s->row_bytes;
        unsigned char want =
            inside ? in[in_off + z * s->host_slice + y * s->host_pitch + x]
                   : 0xee;

        if (out[b] != want)
            fail_msg("byte %llu (slice %llu row %llu column %llu): %u, not %u",
                     (unsigned long long)b, (unsigned long long)z,
                     (unsigned long long)y, (unsigned long long)x, out[b], want);
    }
    assert_status(accel_free(c->device, dev), ACCEL_OK);
    assert_status(accel_free(c->device, dev2), ACCEL_OK);
    free(in);
    free(out);
}

static void test_copy_2d_in_every_direction_with_pitches(struct conformance *c)
{
    /* row_bytes, rows, depth; pitches and slices of host in, dev, dev2, host out */
    const struct shape shapes[] = {
        {100, 37, 1, 128, 0, 256, 0, 101, 0, 333, 0},
        {1, 500, 1, 3, 0, 512, 0, 1, 0, 7, 0},
        {4096, 9, 1, 4096, 0, 8192, 0, 4100, 0, 4096, 0},
    };

    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        struct shape s = shapes[i];

        s.host_slice = s.host_pitch * s.rows;
        s.dev_slice = s.dev_pitch * s.rows;
        s.dev2_slice = s.dev2_pitch * s.rows;
        s.out_slice = s.out_pitch * s.rows;
        copy_shape_round_trip(c, &s);
    }
}

static void
test_copy_3d_in_every_direction_with_slice_pitches(struct conformance *c)
{
    const struct shape shapes[] = {
        /* Slice pitches whole numbers of rows: one 3D copy on a GPU. */
        {48, 10, 6, 64, 64 * 12, 256, 256 * 10, 50, 50 * 11, 48, 48 * 10},
        /* Slice pitches that are not: a 2D copy per slice. */
        {48, 10, 6, 64, 64 * 10 + 7, 256, 256 * 11 + 64, 48, 48 * 10 + 1, 49,
         49 * 10 + 3},
        /* One row per slice: rows with the slice pitch. */
        {300, 1, 17, 0, 333, 0, 512, 0, 300, 0, 1001},
        /* Contiguous rows in spaced slices. */
        {32, 8, 5, 32, 32 * 8 + 100, 32, 32 * 8, 32, 32 * 9, 32, 32 * 8 + 1},
    };

    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        struct shape s = shapes[i];

        /* A pitch is ignored with one row; the checks still divide by it. */
        if (s.rows == 1)
            s.host_pitch = s.dev_pitch = s.dev2_pitch = s.out_pitch = s.row_bytes;
        copy_shape_round_trip(c, &s);
    }
}

/* ---- direct copies and moves ---- */

/*
 * A host-visible device's memory is the host's: the host copies to it with
 * memcpy, and a native address reads as the bytes copied in.
 */
static void test_host_visible_memory_reads_as_copied(struct conformance *c)
{
    enum { COUNT = 4099 };
    uint32_t in[COUNT], out[COUNT];
    uint64_t address = 0;
    accel_ref ref;

    if ((c->info.props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE) == 0)
        skip_because("the device has no ACCEL_DEVICE_CAP_HOST_VISIBLE: "
                     "direct-copy test skipped");
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i * 2246822519u;
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, COUNT), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_ref_native(c->device, ref, &address), ACCEL_OK);
    assert_true(address % ACCEL_DRIVER_MEM_ALIGNMENT == 0);
    assert_memory_equal((const void *)(uintptr_t)address, in, sizeof(in));
    /* Written through the address, read back through a copy. */
    memset((void *)(uintptr_t)address, 0x5c, sizeof(in));
    assert_status(accel_copy_out(c->stream, out, ref, COUNT), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    memset(in, 0x5c, sizeof(in));
    assert_memory_equal(out, in, sizeof(in));
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

/*
 * Compaction moves live allocations with the plugin's copy_on_device (and
 * waits through wait_outside_streams where the plugin has it): every
 * survivor keeps its bytes.
 */
static void test_compaction_keeps_every_survivor_intact(struct conformance *c)
{
    enum { SLICES = 64, BYTES = 4096 };
    accel_pool_policy manual = {.automatic = false, .outdated_percent = 50};
    unsigned char in[BYTES], out[BYTES];
    accel_ref refs[SLICES];

    assert_status(accel_device_set_pool_policy(c->device, &manual), ACCEL_OK);
    for (unsigned i = 0; i < SLICES; i++) {
        fill_pattern(in, BYTES, i);
        assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &refs[i]),
                      ACCEL_OK);
        assert_status(accel_copy_to_device(c->stream, refs[i], 0, in, BYTES),
                      ACCEL_OK);
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    }
    for (unsigned i = 0; i < SLICES; i++) {
        if (i % 16 != 5)
            assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    }
    assert_status(accel_device_compact(c->device, NULL), ACCEL_OK);
    for (unsigned i = 5; i < SLICES; i += 16) {
        fill_pattern(in, BYTES, i);
        assert_status(accel_copy_to_host(c->stream, out, refs[i], 0, BYTES),
                      ACCEL_OK);
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        assert_memory_equal(out, in, BYTES);
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    }
}

/* Pinned memory the host cannot have: an error, never a crash. */
static void test_impossible_pinned_allocation_is_refused(struct conformance *c)
{
    void *ptr = (void *)&ptr;
    accel_status status = accel_host_alloc(c->device, SIZE_MAX / 2, &ptr);

    if (status != ACCEL_ERR_OUT_OF_HOST_MEMORY &&
        status != ACCEL_ERR_INVALID_ARGUMENT)
        fail_msg("accel_host_alloc(SIZE_MAX / 2) returned %s: expected "
                 "ACCEL_ERR_OUT_OF_HOST_MEMORY",
                 accel_status_name(status));
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

/* ---- fills ---- */

/* Fill [offset, offset + bytes) of a fresh 4 KiB ref over 0xee, and check
 * every byte: the pattern inside, the old bytes outside. */
static void check_fill(struct conformance *c, const void *pattern, size_t size,
                       uint64_t offset, uint64_t bytes)
{
    enum { BYTES = 4096 };
    unsigned char before[BYTES], after[BYTES];
    accel_ref ref;

    memset(before, 0xee, sizeof(before));
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, before, BYTES),
                  ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, offset, bytes, pattern, size),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, after, ref, 0, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint64_t i = 0; i < BYTES; i++) {
        bool inside = i >= offset && i < offset + bytes;
        unsigned char want =
            inside ? ((const unsigned char *)pattern)[(i - offset) % size] : 0xee;
        if (after[i] != want)
            fail_msg("pattern of %zu bytes at %llu+%llu: byte %llu is 0x%02x, "
                     "not 0x%02x",
                     size, (unsigned long long)offset, (unsigned long long)bytes,
                     (unsigned long long)i, after[i], want);
    }
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_fill_writes_each_pattern_size(struct conformance *c)
{
    const unsigned char pattern[8] = {0x11, 0x22, 0x33, 0x44,
                                      0x55, 0x66, 0x77, 0x88};

    check_fill(c, pattern, 1, 0, 4096);
    check_fill(c, pattern, 1, 3, 5);
    check_fill(c, pattern, 2, 2, 1022);
    check_fill(c, pattern, 4, 4, 4092);
    check_fill(c, pattern, 8, 8, 4080);
    check_fill(c, pattern, 8, 4088, 8);
    check_fill(c, pattern, 4, 1024, 12);
}

static void test_fill_refuses_bad_sizes_and_ranges(struct conformance *c)
{
    const unsigned char pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned char back[64];
    accel_ref ref, freed;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, 64, &ref), ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 1), ACCEL_OK);
    /* A pattern of 3 (or 0, or 16) bytes. */
    assert_status(accel_fill(c->stream, ref, 0, 3, pattern, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 16),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, NULL, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* A length or an offset that is not a multiple of the pattern. */
    assert_status(accel_fill(c->stream, ref, 0, 6, pattern, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 2, 8, pattern, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* The range past the ref: by one pattern, from past its end, wrapping. */
    assert_status(accel_fill(c->stream, ref, 0, 72, pattern, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 64, 4, pattern, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 72, 0, pattern, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 8, UINT64_MAX - 7, pattern, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* Zero bytes: the ref is checked, nothing is written. */
    assert_status(accel_fill(c->stream, ref, 64, 0, pattern + 1, 1), ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, 0, 0, pattern + 1, 1), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, back, ref, 0, sizeof(back)),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (size_t i = 0; i < sizeof(back); i++)
        assert_int_equal(back[i], 1);
    /* A freed ref, and one never allocated. */
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 64, &freed), ACCEL_OK);
    assert_status(accel_free(c->device, freed), ACCEL_OK);
    assert_status(accel_fill(c->stream, freed, 0, 8, pattern, 8),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(c->stream, freed, 0, 0, pattern, 8),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(c->stream, (accel_ref){0}, 0, 8, pattern, 8),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(NULL, ref, 0, 8, pattern, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

const struct conf_test conf_copy_tests[] = {
#define T(name)                                                                \
    {                                                                          \
#name, test_##name                                                     \
    }
    T(device_describes_itself),
    T(alloc_then_free_then_use_is_freed_ref),
    T(alloc_of_nothing_is_invalid),
    T(out_of_memory_leaves_device_usable),
    T(impossible_pinned_allocation_is_refused),
    T(copy_1d_round_trip_with_offsets),
    T(copy_past_the_allocation_is_rejected),
    T(typed_copy_of_another_type_is_rejected),
    T(copy_on_device_moves_bytes),
    T(copies_through_pinned_host_memory),
    T(copy_2d_in_every_direction_with_pitches),
    T(copy_3d_in_every_direction_with_slice_pitches),
    T(host_visible_memory_reads_as_copied),
    T(compaction_keeps_every_survivor_intact),
    T(fill_writes_each_pattern_size),
    T(fill_refuses_bad_sizes_and_ranges),
#undef T
};
const size_t conf_copy_test_count = sizeof(conf_copy_tests) /
                                    sizeof(conf_copy_tests[0]);
