/*
 * The drop queue: memory freed while enqueued work still uses it is
 * released only once that work has completed. The null plugin's command
 * delay (ACCEL_NULL_DELAY_US) keeps work in flight long enough for a host
 * that releases too early to be caught, by the contents checked here and by
 * AddressSanitizer.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

struct drop_case {
    struct support_null null;
    accel_device *device;
    accel_stream *stream;
    accel_stream *other;
};

static int setup(void **state)
{
    static const char *const env[] = {"ACCEL_NULL_DELAY_US=2000", NULL};
    struct drop_case *c = calloc(1, sizeof *c);
    *state = c;
    if (c == NULL || support_null_open(&c->null, env) != 0)
        return -1;
    c->device = c->null.device;
    c->stream = c->null.stream;
    return accel_stream_create(c->device, &c->other) == ACCEL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    struct drop_case *c = *state;
    if (c != NULL) {
        accel_stream_destroy(c->other);
        support_null_close(&c->null);
    }
    free(c);
    return 0;
}

static void test_free_after_enqueued_copy_waits_for_it(void **state)
{
    struct drop_case *c = *state;
    enum { N = 4096 };
    uint32_t in[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        in[i] = i * 7u + 1u;
    memset(out, 0, sizeof out);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U32, N, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, N), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, N), ACCEL_OK);
    /* Both copies are still queued behind the delay. */
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_memory_stats pending = support_memory_stats(c->device);
    assert_int_equal(pending.pending_frees, 1);
    assert_int_equal(pending.pending_free_bytes, sizeof in);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    accel_memory_stats after = support_memory_stats(c->device);
    assert_int_equal(after.pending_frees, 0);
    assert_int_equal(after.slices, 0);
}

static void test_freed_slice_is_not_reused_while_in_flight(void **state)
{
    struct drop_case *c = *state;
    enum { N = 1024 };
    uint32_t in[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        in[i] = 0xabcd0000u + i;
    accel_ref first, second;
    assert_status(accel_alloc(c->device, ACCEL_U32, N, &first), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, first, in, N), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, first, N), ACCEL_OK);
    uint64_t first_address = 0;
    assert_status(accel_ref_native(c->device, first, &first_address), ACCEL_OK);
    assert_status(accel_free(c->device, first), ACCEL_OK);
    /* Same size class: it must not land on the slice still being read. */
    assert_status(accel_alloc(c->device, ACCEL_U32, N, &second), ACCEL_OK);
    uint64_t second_address = 0;
    assert_status(accel_ref_native(c->device, second, &second_address), ACCEL_OK);
    assert_true(first_address != second_address);
    uint32_t zeros[N];
    memset(zeros, 0, sizeof zeros);
    assert_status(accel_copy_in(c->other, second, zeros, N), ACCEL_OK);
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_status(accel_free(c->device, second), ACCEL_OK);
}

static void test_unused_allocation_is_released_at_once(void **state)
{
    struct drop_case *c = *state;
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_F64, 10, &ref), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    assert_int_equal(support_memory_stats(c->device).pending_frees, 0);
}

static void test_memory_comes_back_after_device_sync(void **state)
{
    struct drop_case *c = *state;
    enum { COUNT = 20 };
    static uint8_t host[COUNT][8192];
    accel_ref refs[COUNT];
    for (int i = 0; i < COUNT; i++) {
        memset(host[i], i, sizeof host[i]);
        assert_status(accel_alloc(c->device, ACCEL_U8, sizeof host[i], &refs[i]),
                      ACCEL_OK);
        accel_stream *s = i % 2 ? c->stream : c->other;
        assert_status(accel_copy_to_device(s, refs[i], 0, host[i], sizeof host[i]),
                      ACCEL_OK);
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    }
    assert_true(support_memory_stats(c->device).pending_frees > 0);
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    accel_memory_stats stats = support_memory_stats(c->device);
    assert_int_equal(stats.pending_frees, 0);
    assert_int_equal(stats.pending_free_bytes, 0);
    assert_int_equal(stats.slices, 0);
}

static void test_large_page_waits_for_its_copy(void **state)
{
    struct drop_case *c = *state;
    size_t bytes = 3u << 20;
    uint8_t *in = malloc(bytes), *out = malloc(bytes);
    assert_non_null(in);
    assert_non_null(out);
    for (size_t i = 0; i < bytes; i++)
        in[i] = (uint8_t)(i * 31u);
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_U8, bytes, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, in, bytes), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out, ref, 0, bytes), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    assert_int_equal(support_memory_stats(c->device).pending_frees, 1);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, bytes);
    /* Released from the drop queue (kept as a spare page of the pool). */
    assert_int_equal(support_memory_stats(c->device).pending_frees, 0);
    assert_int_equal(support_memory_stats(c->device).slices, 0);
    free(in);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_free_after_enqueued_copy_waits_for_it),
        T(test_freed_slice_is_not_reused_while_in_flight),
        T(test_unused_allocation_is_released_at_once),
        T(test_memory_comes_back_after_device_sync),
        T(test_large_page_waits_for_its_copy),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
