/*
 * Pinned staging on the null plugin told to hide its host-visible memory
 * (ACCEL_NULL_HOST_VISIBLE=0), with 4 KiB chunks (ACCEL_STAGING_CHUNK) and
 * a command delay, so that transfers cross many chunk boundaries while the
 * device side lags behind the host side.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 4096u

struct staging_case {
    struct support_null null;
    accel_device *device;
    accel_stream *stream;
};

static int setup(void **state)
{
    static const char *const env[] = {"ACCEL_NULL_HOST_VISIBLE=0",
                                      "ACCEL_NULL_DELAY_US=20",
                                      "ACCEL_STAGING_CHUNK=4096", NULL};
    struct staging_case *c = calloc(1, sizeof *c);
    *state = c;
    if (c == NULL || support_null_open(&c->null, env) != 0)
        return -1;
    c->device = c->null.device;
    c->stream = c->null.stream;
    return 0;
}

static int teardown(void **state)
{
    struct staging_case *c = *state;
    if (c != NULL)
        support_null_close(&c->null);
    free(c);
    return 0;
}

static void pattern(uint8_t *data, size_t bytes, uint32_t seed)
{
    for (size_t i = 0; i < bytes; i++)
        data[i] = (uint8_t)((i * 131u + seed * 17u) >> 3);
}

static void test_device_is_not_host_visible(void **state)
{
    struct staging_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_false(info.props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE);
    assert_int_equal(support_memory_stats(c->device).staging_chunk_bytes, CHUNK);
}

/* Round trip of `bytes` at a device offset, through unaligned host memory. */
static void round_trip(struct staging_case *c, size_t bytes, size_t offset)
{
    size_t total = bytes + offset + 64;
    uint8_t *in = malloc(total + 3), *out = malloc(total + 3);
    assert_non_null(in);
    assert_non_null(out);
    pattern(in, total + 3, (uint32_t)bytes);
    memset(out, 0xee, total + 3);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, total, &ref), ACCEL_OK);
    /* Host pointers 1 and 3 bytes into their blocks: unaligned. */
    assert_status(accel_copy_to_device(c->stream, ref, offset, in + 1, bytes),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out + 3, ref, offset, bytes),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in + 1, out + 3, bytes);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(out[i], 0xee);
    assert_int_equal(out[3 + bytes], 0xee);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_sizes_around_chunk_boundaries(void **state)
{
    struct staging_case *c = *state;
    const size_t sizes[] = {1,         2,         CHUNK - 1,     CHUNK,
                            CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 1, 37 * CHUNK + 5,
                            1u << 20};
    const size_t offsets[] = {0, 1, 7, CHUNK - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizeof offsets / sizeof offsets[0]; j++)
            round_trip(c, sizes[i], offsets[j]);
    }
}

static void test_zero_bytes_is_a_no_op(void **state)
{
    struct staging_case *c = *state;
    uint8_t byte = 5;
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, 16, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, &byte, 0), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, &byte, ref, 16, 0), ACCEL_OK);
    assert_int_equal(byte, 5);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_repeated_transfers_do_not_grow_the_staging_set(void **state)
{
    struct staging_case *c = *state;
    round_trip(c, 10 * CHUNK + 17, 3);
    uint64_t buffers = support_memory_stats(c->device).staging_buffers;
    assert_true(buffers >= 1 && buffers <= 2);
    for (int i = 0; i < 20; i++)
        round_trip(c, 10 * CHUNK + 17, 3);
    assert_int_equal(support_memory_stats(c->device).staging_buffers, buffers);
}

/* A pitched copy: rows shorter than a chunk, rows longer than a chunk. */
static void pitched(struct staging_case *c, uint64_t row_bytes, uint64_t rows)
{
    uint64_t host_pitch = row_bytes + 13, device_pitch = row_bytes + 64;
    size_t host_bytes = host_pitch * rows, device_bytes = device_pitch * rows;
    uint8_t *in = malloc(host_bytes), *out = malloc(host_bytes);
    assert_non_null(in);
    assert_non_null(out);
    pattern(in, host_bytes, 3);
    memset(out, 0x5a, host_bytes);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, device_bytes, &ref), ACCEL_OK);
    struct accel_copy_layout up = {.row_bytes = row_bytes,
                                   .rows = rows,
                                   .src_pitch = host_pitch,
                                   .dst_pitch = device_pitch};
    struct accel_copy_layout down = {.row_bytes = row_bytes,
                                     .rows = rows,
                                     .src_pitch = device_pitch,
                                     .dst_pitch = host_pitch};
    assert_status(accel_copy_to_device_layout(c->stream, ref, in, &up), ACCEL_OK);
    assert_status(accel_copy_to_host_layout(c->stream, out, ref, &down),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint64_t r = 0; r < rows; r++) {
        assert_memory_equal(in + r * host_pitch, out + r * host_pitch, row_bytes);
        for (uint64_t b = row_bytes; b < host_pitch; b++)
            assert_int_equal(out[r * host_pitch + b], 0x5a);
    }
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_pitched_copies_are_staged_by_rows(void **state)
{
    struct staging_case *c = *state;
    pitched(c, 100, 300);
    pitched(c, CHUNK, 5);
    pitched(c, 3 * CHUNK + 7, 4);
}

static void test_pinned_host_memory_is_copied_directly(void **state)
{
    struct staging_case *c = *state;
    size_t bytes = 5 * CHUNK + 9;
    uint8_t *pinned = NULL;
    assert_status(accel_host_alloc(c->device, bytes, (void **)&pinned), ACCEL_OK);
    pattern(pinned, bytes, 9);
    uint8_t *copy = malloc(bytes);
    assert_non_null(copy);
    memcpy(copy, pinned, bytes);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, bytes, &ref), ACCEL_OK);
    uint64_t buffers = support_memory_stats(c->device).staging_buffers;
    assert_status(accel_copy_to_device(c->stream, ref, 0, pinned, bytes),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    memset(pinned, 0, bytes);
    assert_status(accel_copy_to_host(c->stream, pinned, ref, 0, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(copy, pinned, bytes);
    /* Not a single staging buffer was needed. */
    assert_int_equal(support_memory_stats(c->device).staging_buffers, buffers);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_host_free(c->device, pinned);
    free(copy);
}

static void test_staged_source_may_be_reused_on_return(void **state)
{
    struct staging_case *c = *state;
    size_t bytes = 9 * CHUNK;
    uint8_t *in = malloc(bytes), *expect = malloc(bytes), *out = malloc(bytes);
    assert_non_null(in);
    assert_non_null(expect);
    assert_non_null(out);
    pattern(in, bytes, 11);
    memcpy(expect, in, bytes);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, bytes, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, in, bytes), ACCEL_OK);
    memset(in, 0, bytes); /* staged: the bytes were already taken */
    assert_status(accel_copy_to_host(c->stream, out, ref, 0, bytes), ACCEL_OK);
    assert_memory_equal(expect, out, bytes);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(expect);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_device_is_not_host_visible),
        T(test_sizes_around_chunk_boundaries),
        T(test_zero_bytes_is_a_no_op),
        T(test_repeated_transfers_do_not_grow_the_staging_set),
        T(test_pitched_copies_are_staged_by_rows),
        T(test_pinned_host_memory_is_copied_directly),
        T(test_staged_source_may_be_reused_on_return),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
