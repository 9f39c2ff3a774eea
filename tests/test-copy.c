/*
 * Copies on the null plugin: 1D with offsets, pitched 2D and 3D layouts in
 * every direction, the validation that rejects a bad range or layout before
 * anything moves, and the stream/event ordering copies rely on.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#define BUF 512 /* bytes in each test allocation */

struct copy_case {
    accel_host *host;
    accel_device *device;
    accel_device *device1;
    accel_stream *stream;
    accel_stream *stream2;
    accel_event *event;
    accel_ref a, b;
};

static int try_open_case(void **state, const char *device_count)
{
    struct copy_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    *state = c;
    if (device_count != NULL)
        setenv("ACCEL_NULL_DEVICES", device_count, 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    accel_status status = accel_host_create(&options, &c->host);
    unsetenv("ACCEL_NULL_DEVICES");
    if (status != ACCEL_OK ||
        accel_device_open(c->host, "null", 0, &c->device) != ACCEL_OK ||
        accel_stream_create(c->device, &c->stream) != ACCEL_OK ||
        accel_stream_create(c->device, &c->stream2) != ACCEL_OK ||
        accel_event_create(c->device, &c->event) != ACCEL_OK ||
        accel_alloc(c->device, ACCEL_BYTE, BUF, &c->a) != ACCEL_OK ||
        accel_alloc(c->device, ACCEL_BYTE, BUF, &c->b) != ACCEL_OK)
        return -1;
    if (device_count != NULL &&
        accel_device_open(c->host, "null", 1, &c->device1) != ACCEL_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    struct copy_case *c = *state;
    if (c == NULL)
        return 0;
    if (c->device != NULL) {
        accel_free(c->device, c->a);
        accel_free(c->device, c->b);
    }
    accel_event_destroy(c->event);
    accel_stream_destroy(c->stream2);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device1);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    return 0;
}

/* A failed setup says why, with the library's detail, and cleans up. */
static int open_case(void **state, const char *device_count)
{
    if (try_open_case(state, device_count) == 0)
        return 0;
    print_error("setup on %s failed: %s\n", NULL_PLUGIN_PATH, accel_last_error());
    teardown(state);
    *state = NULL;
    return -1;
}

static int setup(void **state)
{
    return open_case(state, NULL);
}

static int setup_two_devices(void **state)
{
    return open_case(state, "2");
}

/* A recognisable byte pattern, different for each seed. */
static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7u + seed * 31u + 1u);
}

/* What a correct copy does: the reference the device is compared with. */
static void apply_layout(unsigned char *dst, const unsigned char *src,
                         const struct accel_copy_layout *l)
{
    uint64_t depth = l->depth == 0 ? 1 : l->depth;
    uint64_t rows = l->rows == 0 ? 1 : l->rows;
    for (uint64_t s = 0; s < depth; s++)
        for (uint64_t r = 0; r < rows; r++)
            memcpy(
                dst + l->dst_offset + s * l->dst_slice_pitch + r * l->dst_pitch,
                src + l->src_offset + s * l->src_slice_pitch + r * l->src_pitch,
                l->row_bytes);
}

static void write_all(struct copy_case *c, accel_ref ref, const unsigned char *p)
{
    assert_status(accel_copy_to_device(c->stream, ref, 0, p, BUF), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

static void read_all(struct copy_case *c, accel_ref ref, unsigned char *p)
{
    assert_status(accel_copy_to_host(c->stream, p, ref, 0, BUF), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

/* Fill a ref with a pattern, to see later that a rejected copy left it. */
static void prefill(struct copy_case *c, accel_ref ref, unsigned seed)
{
    unsigned char p[BUF];
    pattern(p, BUF, seed);
    write_all(c, ref, p);
}

static void assert_unchanged(struct copy_case *c, accel_ref ref, unsigned seed)
{
    unsigned char expected[BUF], actual[BUF];
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    pattern(expected, BUF, seed);
    read_all(c, ref, actual);
    assert_memory_equal(expected, actual, BUF);
}

static void test_1d_copy_with_offsets_touches_only_its_range(void **state)
{
    struct copy_case *c = *state;
    unsigned char expected[BUF], actual[BUF], src[64];
    pattern(expected, BUF, 1);
    pattern(src, sizeof src, 2);
    prefill(c, c->a, 1);

    assert_status(accel_copy_to_device(c->stream, c->a, 100, src + 3, 40),
                  ACCEL_OK);
    memcpy(expected + 100, src + 3, 40);
    read_all(c, c->a, actual);
    assert_memory_equal(expected, actual, BUF);

    /* The last byte of the allocation is reachable; one more is not. */
    assert_status(accel_copy_to_device(c->stream, c->a, BUF - 1, src, 1),
                  ACCEL_OK);
    unsigned char part[41];
    memset(part, 0xcc, sizeof part);
    assert_status(accel_copy_to_host(c->stream, part, c->a, 100, 40), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(part, src + 3, 40);
    assert_int_equal(part[40], 0xcc);
}

static void test_copy_on_device_with_offsets(void **state)
{
    struct copy_case *c = *state;
    unsigned char src[BUF], expected[BUF], actual[BUF];
    pattern(src, BUF, 3);
    pattern(expected, BUF, 4);
    write_all(c, c->a, src);
    prefill(c, c->b, 4);

    assert_status(accel_copy_on_device(c->stream, c->b, 10, c->a, 200, 123),
                  ACCEL_OK);
    memcpy(expected + 10, src + 200, 123);
    read_all(c, c->b, actual);
    assert_memory_equal(expected, actual, BUF);
}

/* Run one layout in every direction and compare every byte with the model. */
static void check_layout_all_directions(struct copy_case *c,
                                        const struct accel_copy_layout *l)
{
    unsigned char host_src[BUF], expected[BUF], actual[BUF];

    /* host -> device: the device's untouched bytes keep their pattern. */
    pattern(host_src, BUF, 5);
    pattern(expected, BUF, 6);
    prefill(c, c->a, 6);
    assert_status(accel_copy_to_device_layout(c->stream, c->a, host_src, l),
                  ACCEL_OK);
    apply_layout(expected, host_src, l);
    read_all(c, c->a, actual);
    assert_memory_equal(expected, actual, BUF);

    /* device -> host: the host's padding bytes are left alone. */
    unsigned char device_src[BUF];
    pattern(device_src, BUF, 7);
    write_all(c, c->a, device_src);
    memset(actual, 0xcc, BUF);
    memset(expected, 0xcc, BUF);
    assert_status(accel_copy_to_host_layout(c->stream, actual, c->a, l),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    apply_layout(expected, device_src, l);
    assert_memory_equal(expected, actual, BUF);

    /* device -> device. */
    pattern(expected, BUF, 8);
    prefill(c, c->b, 8);
    assert_status(accel_copy_on_device_layout(c->stream, c->b, c->a, l),
                  ACCEL_OK);
    apply_layout(expected, device_src, l);
    read_all(c, c->b, actual);
    assert_memory_equal(expected, actual, BUF);
}

static void test_2d_copies_with_pitches_keep_padding(void **state)
{
    struct accel_copy_layout l = {
        .src_offset = 4,
        .dst_offset = 8,
        .row_bytes = 32,
        .rows = 6,
        .src_pitch = 40,
        .dst_pitch = 48,
    };
    check_layout_all_directions(*state, &l);
}

static void test_2d_copy_to_the_last_byte_is_allowed(void **state)
{
    /* The last row ends exactly at the end of the allocation. */
    struct accel_copy_layout l = {
        .src_offset = 0,
        .dst_offset = BUF - (3 * 100 + 64),
        .row_bytes = 64,
        .rows = 4,
        .src_pitch = 100,
        .dst_pitch = 100,
    };
    check_layout_all_directions(*state, &l);
}

static void test_contiguous_2d_layout_copies_like_1d(void **state)
{
    struct accel_copy_layout l = {
        .src_offset = 16,
        .dst_offset = 3,
        .row_bytes = 20,
        .rows = 10,
        .src_pitch = 20,
        .dst_pitch = 20,
    };
    check_layout_all_directions(*state, &l);
}

static void test_3d_copies_with_slice_pitches(void **state)
{
    struct accel_copy_layout l = {
        .src_offset = 5,
        .dst_offset = 2,
        .row_bytes = 8,
        .rows = 3,
        .src_pitch = 10,
        .dst_pitch = 12,
        .depth = 4,
        .src_slice_pitch = 33,
        .dst_slice_pitch = 40,
    };
    check_layout_all_directions(*state, &l);
}

static void test_zero_rows_and_depth_count_as_one(void **state)
{
    /* Pitches are ignored for one row and one slice, even tiny ones. */
    struct accel_copy_layout l = {
        .src_offset = 7,
        .dst_offset = 9,
        .row_bytes = 50,
        .rows = 0,
        .src_pitch = 1,
        .dst_pitch = 0,
        .depth = 0,
    };
    check_layout_all_directions(*state, &l);
}

/* A layout that every direction must reject, leaving the device as it was. */
static void expect_layout_rejected(struct copy_case *c,
                                   const struct accel_copy_layout *l)
{
    unsigned char host[BUF];
    pattern(host, BUF, 9);
    prefill(c, c->a, 10);
    prefill(c, c->b, 11);
    assert_status(accel_copy_to_device_layout(c->stream, c->a, host, l),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host_layout(c->stream, host, c->a, l),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_on_device_layout(c->stream, c->b, c->a, l),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_unchanged(c, c->a, 10);
    assert_unchanged(c, c->b, 11);
    unsigned char untouched[BUF];
    pattern(untouched, BUF, 9);
    assert_memory_equal(host, untouched, BUF);
}

static void test_1d_range_past_the_end_is_rejected(void **state)
{
    struct copy_case *c = *state;
    unsigned char host[BUF + 16];
    pattern(host, sizeof host, 12);
    prefill(c, c->a, 13);
    prefill(c, c->b, 14);

    assert_status(accel_copy_to_device(c->stream, c->a, BUF - 8, host, 9),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device(c->stream, c->a, 0, host, BUF + 1),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device(c->stream, c->a, BUF + 100, host, 1),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, host, c->a, 1, BUF),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_on_device(c->stream, c->b, 0, c->a, 300, 300),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_on_device(c->stream, c->b, 300, c->a, 0, 300),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_unchanged(c, c->a, 13);
    assert_unchanged(c, c->b, 14);
}

static void test_1d_range_is_checked_against_the_element_bytes(void **state)
{
    /* 4 floats are 16 bytes: byte 17 is past the end though count is 4. */
    struct copy_case *c = *state;
    accel_ref f32;
    unsigned char host[32] = {0};
    assert_status(accel_alloc(c->device, ACCEL_F32, 4, &f32), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, f32, 0, host, 16), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, f32, 0, host, 17),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device(c->stream, f32, 8, host, 9),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, f32), ACCEL_OK);
}

static void test_1d_overflowing_offset_is_rejected(void **state)
{
    struct copy_case *c = *state;
    unsigned char host[64];
    pattern(host, sizeof host, 15);
    prefill(c, c->a, 16);
    prefill(c, c->b, 17);
    assert_status(accel_copy_to_device(c->stream, c->a, UINT64_MAX, host, 1),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device(c->stream, c->a, UINT64_MAX - 7, host, 16),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, host, c->a, 8, UINT64_MAX),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(
        accel_copy_on_device(c->stream, c->b, UINT64_MAX - 1, c->a, 0, 4),
        ACCEL_ERR_INVALID_ARGUMENT);
    assert_unchanged(c, c->a, 16);
    assert_unchanged(c, c->b, 17);
}

static void test_layout_whose_last_row_passes_the_end_is_rejected(void **state)
{
    /* Rows start in range, but 3 * 150 + 64 > 512. */
    struct accel_copy_layout l = {
        .row_bytes = 64, .rows = 4, .src_pitch = 150, .dst_pitch = 150};
    expect_layout_rejected(*state, &l);
}

static void test_layout_whose_last_slice_passes_the_end_is_rejected(void **state)
{
    struct accel_copy_layout l = {.row_bytes = 16,
                                  .rows = 2,
                                  .src_pitch = 16,
                                  .dst_pitch = 16,
                                  .depth = 5,
                                  .src_slice_pitch = 121,
                                  .dst_slice_pitch = 121};
    expect_layout_rejected(*state, &l);
}

static void test_pitch_smaller_than_row_is_rejected(void **state)
{
    struct accel_copy_layout l = {
        .row_bytes = 32, .rows = 4, .src_pitch = 16, .dst_pitch = 16};
    expect_layout_rejected(*state, &l);
    l.src_pitch = 32; /* now only the destination's is too small */
    expect_layout_rejected(*state, &l);
    l.src_pitch = 16;
    l.dst_pitch = 32;
    expect_layout_rejected(*state, &l);
}

static void test_slice_pitch_smaller_than_slice_is_rejected(void **state)
{
    /* A slice of 4 rows at pitch 16 needs 64 bytes; 48 would overlap. */
    struct accel_copy_layout l = {.row_bytes = 16,
                                  .rows = 4,
                                  .src_pitch = 16,
                                  .dst_pitch = 16,
                                  .depth = 2,
                                  .src_slice_pitch = 48,
                                  .dst_slice_pitch = 48};
    expect_layout_rejected(*state, &l);
}

static void test_overflowing_layouts_are_rejected(void **state)
{
    const struct accel_copy_layout bad[] = {
        {.dst_offset = UINT64_MAX, .row_bytes = 1, .rows = 1},
        {.src_offset = UINT64_MAX, .row_bytes = 1, .rows = 1},
        {.dst_offset = UINT64_MAX - 3, .row_bytes = 8, .rows = 1},
        {.row_bytes = UINT64_MAX, .rows = 1},
        {.row_bytes = 8, .rows = 2, .src_pitch = UINT64_MAX, .dst_pitch = UINT64_MAX},
        {.row_bytes = 8, .rows = 2, .src_pitch = 8, .dst_pitch = UINT64_MAX},
        {.row_bytes = 8, .rows = UINT64_MAX, .src_pitch = 8, .dst_pitch = 8},
        {.row_bytes = 8,
         .rows = (UINT64_MAX / 8) + 2,
         .src_pitch = 8,
         .dst_pitch = 8},
        {.row_bytes = 8,
         .rows = 1,
         .depth = 2,
         .src_slice_pitch = UINT64_MAX,
         .dst_slice_pitch = UINT64_MAX},
        {.row_bytes = 8,
         .rows = 2,
         .src_pitch = 8,
         .dst_pitch = 8,
         .depth = UINT64_MAX,
         .src_slice_pitch = 16,
         .dst_slice_pitch = 16},
        {.row_bytes = 8,
         .rows = UINT64_C(1) << 31,
         .src_pitch = UINT64_C(1) << 31,
         .dst_pitch = UINT64_C(1) << 31,
         .depth = UINT64_C(1) << 30,
         .src_slice_pitch = UINT64_C(1) << 62,
         .dst_slice_pitch = UINT64_C(1) << 62},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        print_message("layout %zu\n", i);
        expect_layout_rejected(*state, &bad[i]);
    }
}

static void test_zero_row_bytes_is_rejected(void **state)
{
    struct copy_case *c = *state;
    struct accel_copy_layout l = {
        .row_bytes = 0, .rows = 2, .src_pitch = 8, .dst_pitch = 8};
    expect_layout_rejected(c, &l);
}

static void test_null_host_pointer_or_layout_is_rejected(void **state)
{
    struct copy_case *c = *state;
    unsigned char host[64];
    struct accel_copy_layout l = {
        .row_bytes = 8, .rows = 2, .src_pitch = 8, .dst_pitch = 8};
    prefill(c, c->a, 18);
    prefill(c, c->b, 19);
    assert_status(accel_copy_to_device(c->stream, c->a, 0, NULL, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, NULL, c->a, 0, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device_layout(c->stream, c->a, NULL, &l),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host_layout(c->stream, NULL, c->a, &l),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_device_layout(c->stream, c->a, host, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host_layout(c->stream, host, c->a, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_on_device_layout(c->stream, c->b, c->a, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_unchanged(c, c->a, 18);
    assert_unchanged(c, c->b, 19);
}

static void test_event_is_complete_after_stream_sync(void **state)
{
    struct copy_case *c = *state;
    unsigned char host[BUF];
    pattern(host, BUF, 20);
    assert_status(accel_copy_to_device(c->stream, c->a, 0, host, BUF), ACCEL_OK);
    assert_status(accel_event_record(c->event, c->stream), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_event_query(c->event), ACCEL_OK);
    assert_status(accel_event_sync(c->event), ACCEL_OK);
}

static void test_stream_waits_for_event_of_another_stream(void **state)
{
    /* A large copy on stream 1, then stream 2 copies its result onwards. */
    struct copy_case *c = *state;
    enum { BIG = 8 << 20 };
    unsigned char *in = malloc(BIG), *out = malloc(BIG);
    assert_non_null(in);
    assert_non_null(out);
    pattern(in, BIG, 21);
    memset(out, 0, BIG);
    accel_ref big_a, big_b;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BIG, &big_a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BIG, &big_b), ACCEL_OK);

    assert_status(accel_copy_to_device(c->stream, big_a, 0, in, BIG), ACCEL_OK);
    assert_status(accel_event_record(c->event, c->stream), ACCEL_OK);
    assert_status(accel_stream_wait_event(c->stream2, c->event), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream2, big_b, 0, big_a, 0, BIG),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream2, out, big_b, 0, BIG), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream2), ACCEL_OK);
    assert_status(accel_event_query(c->event), ACCEL_OK);
    int same = memcmp(in, out, BIG) == 0;

    assert_status(accel_device_sync(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, big_a), ACCEL_OK);
    assert_status(accel_free(c->device, big_b), ACCEL_OK);
    free(in);
    free(out);
    assert_true(same);
}

static void test_device_sync_waits_for_every_stream(void **state)
{
    /* Copies large enough to be still running when device_sync is called. */
    struct copy_case *c = *state;
    enum { BIG = 16 << 20 };
    accel_stream *streams[2] = {c->stream, c->stream2};
    accel_event *events[2] = {c->event, NULL};
    unsigned char *in[2], *out[2];
    accel_ref refs[2];
    assert_status(accel_event_create(c->device, &events[1]), ACCEL_OK);
    for (int i = 0; i < 2; i++) {
        in[i] = malloc(BIG);
        out[i] = calloc(1, BIG);
        assert_non_null(in[i]);
        assert_non_null(out[i]);
        pattern(in[i], BIG, 22 + (unsigned)i);
        assert_status(accel_alloc(c->device, ACCEL_BYTE, BIG, &refs[i]),
                      ACCEL_OK);
    }
    for (int i = 0; i < 2; i++) {
        assert_status(accel_copy_to_device(streams[i], refs[i], 0, in[i], BIG),
                      ACCEL_OK);
        assert_status(accel_copy_to_host(streams[i], out[i], refs[i], 0, BIG),
                      ACCEL_OK);
        assert_status(accel_event_record(events[i], streams[i]), ACCEL_OK);
    }
    accel_status synced = accel_device_sync(c->device);
    accel_status queried[2] = {accel_event_query(events[0]),
                               accel_event_query(events[1])};
    int same[2] = {memcmp(in[0], out[0], BIG) == 0,
                   memcmp(in[1], out[1], BIG) == 0};

    accel_event_destroy(events[1]);
    for (int i = 0; i < 2; i++) {
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
        free(in[i]);
        free(out[i]);
    }
    assert_status(synced, ACCEL_OK);
    assert_status(queried[0], ACCEL_OK);
    assert_status(queried[1], ACCEL_OK);
    assert_true(same[0]);
    assert_true(same[1]);
}

static void test_waiting_on_another_devices_event_is_a_mismatch(void **state)
{
    struct copy_case *c = *state;
    accel_event *foreign = NULL;
    assert_status(accel_event_create(c->device1, &foreign), ACCEL_OK);
    accel_status waited = accel_stream_wait_event(c->stream, foreign);
    accel_status recorded = accel_event_record(foreign, c->stream);
    accel_event_destroy(foreign);
    assert_status(waited, ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(recorded, ACCEL_ERR_DEVICE_MISMATCH);
}

/* ---- typed copies: the host type must be the ref's ---- */

/* The case: a 4-byte host buffer of char against a ref of 4 floats
 * (16 bytes). Copied, it would read or write 12 bytes past the buffer; a
 * heap buffer, so that ASan and valgrind see it. */
static void test_typed_copy_of_char_data_into_a_wider_ref_is_refused(void **state)
{
    struct copy_case *c = *state;
    char *small = malloc(4);
    assert_non_null(small);
    memset(small, 0x5a, 4);
    accel_ref f32;
    assert_status(accel_alloc(c->device, ACCEL_F32, 4, &f32), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, f32, small, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(), "f32");
    assert_status(accel_copy_out(c->stream, small, f32, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    /* The entry points under the macros refuse every one-byte type alike. */
    const accel_elem_type bytes[] = {ACCEL_BYTE, ACCEL_I8, ACCEL_U8};
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        assert_status(
            accel_copy_to_device_typed(c->stream, f32, bytes[i], small, 4),
            ACCEL_ERR_TYPE_MISMATCH);
        assert_status(accel_copy_to_host_typed(c->stream, bytes[i], small, f32, 4),
                      ACCEL_ERR_TYPE_MISMATCH);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal((unsigned char)small[i], 0x5a);
    free(small);
    assert_status(accel_free(c->device, f32), ACCEL_OK);
}

/* Every pair of ref type and host type, both ways, by the entry points:
 * only the ref's own type passes, and one-byte types against ACCEL_BYTE. */
static void test_typed_copy_takes_only_the_refs_own_host_type(void **state)
{
    struct copy_case *c = *state;
    uint64_t host[4] = {0};
    for (int r = 0; r < ACCEL_ELEM_TYPE_COUNT; r++) {
        accel_ref ref;
        assert_status(accel_alloc(c->device, (accel_elem_type)r, 4, &ref),
                      ACCEL_OK);
        for (int h = 0; h < ACCEL_ELEM_TYPE_COUNT; h++) {
            accel_elem_type type = (accel_elem_type)h;
            bool fits = h == r || (r == ACCEL_BYTE && accel_elem_size(type) == 1);
            accel_status want = fits ? ACCEL_OK : ACCEL_ERR_TYPE_MISMATCH;
            for (uint64_t count = 0; count <= 4; count += 4) {
                assert_status(accel_copy_to_device_typed(c->stream, ref, type,
                                                         host, count),
                              want);
                assert_status(
                    accel_copy_to_host_typed(c->stream, type, host, ref, count),
                    want);
            }
        }
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        assert_status(accel_free(c->device, ref), ACCEL_OK);
    }
}

static void test_typed_copy_counts_elements_of_the_host_type(void **state)
{
    struct copy_case *c = *state;
    uint16_t in[8] = {1, 2, 3, 4, 5, 6, 7, 0xffff}, out[9] = {0};
    accel_ref u16;
    assert_status(accel_alloc(c->device, ACCEL_U16, 8, &u16), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, u16, in, 8), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, u16, 8), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, u16, 9),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(out[8], 0);
    assert_status(accel_free(c->device, u16), ACCEL_OK);

    /* A byte ref counts bytes, from char, int8_t and uint8_t alike. */
    accel_ref raw;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 8, &raw), ACCEL_OK);
    char text[8] = "abcdefg";
    int8_t signed_bytes[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
    uint8_t back[8] = {0};
    assert_status(accel_copy_in(c->stream, raw, text, 8), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, back, raw, 8), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(text, back, 8);
    assert_status(accel_copy_in(c->stream, raw, signed_bytes, 8), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, back, raw, 8), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, raw, back, 9),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(signed_bytes, back, 8);
    /* But wider host data is not bytes. */
    float floats[2] = {1, 2};
    assert_status(accel_copy_in(c->stream, raw, floats, 2),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(), "byte ref");
    assert_status(accel_copy_out(c->stream, floats, raw, 2),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_free(c->device, raw), ACCEL_OK);
}

/* Types that map to the same element as a fixed-width type but are other C
 * types (long long beside int64_t's long, unsigned char, size_t) copy as
 * that element; and none passes against a ref of another element. */
#define ROUND_TRIP(T, want)                                                    \
    do {                                                                       \
        T in_[3] = {(T)1, (T)2, (T)3}, out_[3] = {(T)0};                       \
        accel_ref ref_;                                                        \
        assert_int_equal(ACCEL_ELEM_TYPE_OF(in_), (want));                     \
        assert_status(accel_alloc(c->device, (want), 3, &ref_), ACCEL_OK);     \
        assert_status(accel_copy_in(c->stream, ref_, in_, 3), ACCEL_OK);       \
        assert_status(accel_copy_out(c->stream, out_, ref_, 3), ACCEL_OK);     \
        assert_status(accel_copy_in(c->stream, wrong, in_, 3),                 \
                      ACCEL_ERR_TYPE_MISMATCH);                                \
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);                 \
        assert_memory_equal(in_, out_, sizeof in_);                            \
        assert_status(accel_free(c->device, ref_), ACCEL_OK);                  \
    } while (0)

static void test_typed_macros_copy_every_standard_type(void **state)
{
    struct copy_case *c = *state;
    /* A ref no host type below matches: bf16 of 3. */
    accel_ref wrong;
    assert_status(accel_alloc(c->device, ACCEL_BF16, 3, &wrong), ACCEL_OK);
    ROUND_TRIP(signed char, ACCEL_I8);
    ROUND_TRIP(unsigned char, ACCEL_U8);
    ROUND_TRIP(short, ACCEL_I16);
    ROUND_TRIP(unsigned short, ACCEL_U16);
    ROUND_TRIP(int, ACCEL_I32);
    ROUND_TRIP(unsigned int, ACCEL_U32);
    ROUND_TRIP(long, sizeof(long) == 8 ? ACCEL_I64 : ACCEL_I32);
    ROUND_TRIP(unsigned long, sizeof(long) == 8 ? ACCEL_U64 : ACCEL_U32);
    ROUND_TRIP(long long, ACCEL_I64);
    ROUND_TRIP(unsigned long long, ACCEL_U64);
    ROUND_TRIP(size_t, sizeof(size_t) == 8 ? ACCEL_U64 : ACCEL_U32);
    ROUND_TRIP(float, ACCEL_F32);
    ROUND_TRIP(double, ACCEL_F64);
#if defined(__FLT16_MAX__)
    ROUND_TRIP(_Float16, ACCEL_F16);
#endif
    /* long long is not a double, though both are 8 bytes. */
    long long wide[2] = {1, 2};
    accel_ref f64;
    assert_status(accel_alloc(c->device, ACCEL_F64, 2, &f64), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, f64, wide, 2),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_free(c->device, f64), ACCEL_OK);
    assert_status(accel_free(c->device, wrong), ACCEL_OK);
}

static void test_typed_copy_of_a_type_outside_the_enum_is_invalid(void **state)
{
    struct copy_case *c = *state;
    uint64_t host[2] = {0};
    const accel_elem_type bad[] = {ACCEL_ELEM_TYPE_COUNT, (accel_elem_type)-1,
                                   (accel_elem_type)0x7fffffff};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (uint64_t count = 0; count <= 1; count++) {
            assert_status(accel_copy_to_device_typed(c->stream, c->a, bad[i],
                                                     host, count),
                          ACCEL_ERR_INVALID_ARGUMENT);
            assert_status(
                accel_copy_to_host_typed(c->stream, bad[i], host, c->a, count),
                ACCEL_ERR_INVALID_ARGUMENT);
        }
    }
    assert_status(
        accel_copy_to_device_typed(c->stream, c->a, ACCEL_U8, host, UINT64_MAX),
        ACCEL_ERR_INVALID_ARGUMENT);
    accel_ref u64;
    assert_status(accel_alloc(c->device, ACCEL_U64, 2, &u64), ACCEL_OK);
    assert_status(accel_copy_to_host_typed(c->stream, ACCEL_U64, host, u64,
                                           UINT64_MAX / 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(c->device, u64), ACCEL_OK);
}

#define COPY_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        COPY_TEST(test_1d_copy_with_offsets_touches_only_its_range),
        COPY_TEST(test_copy_on_device_with_offsets),
        COPY_TEST(test_2d_copies_with_pitches_keep_padding),
        COPY_TEST(test_2d_copy_to_the_last_byte_is_allowed),
        COPY_TEST(test_contiguous_2d_layout_copies_like_1d),
        COPY_TEST(test_3d_copies_with_slice_pitches),
        COPY_TEST(test_zero_rows_and_depth_count_as_one),
        COPY_TEST(test_1d_range_past_the_end_is_rejected),
        COPY_TEST(test_1d_range_is_checked_against_the_element_bytes),
        COPY_TEST(test_1d_overflowing_offset_is_rejected),
        COPY_TEST(test_layout_whose_last_row_passes_the_end_is_rejected),
        COPY_TEST(test_layout_whose_last_slice_passes_the_end_is_rejected),
        COPY_TEST(test_pitch_smaller_than_row_is_rejected),
        COPY_TEST(test_slice_pitch_smaller_than_slice_is_rejected),
        COPY_TEST(test_overflowing_layouts_are_rejected),
        COPY_TEST(test_zero_row_bytes_is_rejected),
        COPY_TEST(test_null_host_pointer_or_layout_is_rejected),
        COPY_TEST(test_event_is_complete_after_stream_sync),
        COPY_TEST(test_stream_waits_for_event_of_another_stream),
        COPY_TEST(test_device_sync_waits_for_every_stream),
        COPY_TEST(test_typed_copy_of_char_data_into_a_wider_ref_is_refused),
        COPY_TEST(test_typed_copy_takes_only_the_refs_own_host_type),
        COPY_TEST(test_typed_copy_counts_elements_of_the_host_type),
        COPY_TEST(test_typed_macros_copy_every_standard_type),
        COPY_TEST(test_typed_copy_of_a_type_outside_the_enum_is_invalid),
        cmocka_unit_test_setup_teardown(
            test_waiting_on_another_devices_event_is_a_mismatch,
            setup_two_devices, teardown),
    };
    return cmocka_run_group_tests_name("copy", tests, NULL, NULL);
}
