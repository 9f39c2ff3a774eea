/*
 * Refs on the null plugin: allocation, typed round trips, and every way a
 * ref can be invalid (stale, freed, another device's, mistyped, garbage),
 * each with its own code and never a crash.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

struct refs_case {
    accel_host *host;
    accel_device *device;
    accel_device *device1; /* null:1, for the two-device cases */
    accel_stream *stream;
    accel_stream *stream1;
};

static int try_open_null_devices(void **state, const char *device_count)
{
    struct refs_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    *state = c;
    if (device_count != NULL)
        setenv("ACCEL_NULL_DEVICES", device_count, 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    accel_status status = accel_host_create(&options, &c->host);
    unsetenv("ACCEL_NULL_DEVICES");
    if (status != ACCEL_OK)
        return -1;
    if (accel_device_open(c->host, "null", 0, &c->device) != ACCEL_OK ||
        accel_stream_create(c->device, &c->stream) != ACCEL_OK)
        return -1;
    if (device_count != NULL &&
        (accel_device_open(c->host, "null", 1, &c->device1) != ACCEL_OK ||
         accel_stream_create(c->device1, &c->stream1) != ACCEL_OK))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    struct refs_case *c = *state;
    if (c == NULL)
        return 0;
    accel_stream_destroy(c->stream1);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device1);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    return 0;
}

/* A failed setup says why, with the library's detail, and cleans up. */
static int open_null_devices(void **state, const char *device_count)
{
    if (try_open_null_devices(state, device_count) == 0)
        return 0;
    print_error("setup on %s failed: %s\n", NULL_PLUGIN_PATH, accel_last_error());
    teardown(state);
    *state = NULL;
    return -1;
}

static int setup(void **state)
{
    return open_null_devices(state, NULL);
}

static int setup_two_devices(void **state)
{
    return open_null_devices(state, "2");
}

static accel_ref alloc_ok(accel_device *device, accel_elem_type type,
                          uint64_t count)
{
    accel_ref ref;
    assert_status(accel_alloc(device, type, count, &ref), ACCEL_OK);
    assert_status(accel_ref_check(device, ref), ACCEL_OK);
    return ref;
}

static void test_f32_values_round_trip(void **state)
{
    struct refs_case *c = *state;
    enum { N = 1000 };
    float in[N], out[N];
    for (int i = 0; i < N; i++) {
        in[i] = (float)i * 0.5f - 7.0f;
        out[i] = -1.0f;
    }
    accel_ref ref = alloc_ok(c->device, ACCEL_F32, N);
    assert_int_equal(ref.count, N);
    assert_int_equal(ref.type, ACCEL_F32);
    assert_int_equal(accel_ref_bytes(ref), N * sizeof(float));

    assert_status(accel_copy_in(c->stream, ref, in, N), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_u64_values_round_trip(void **state)
{
    struct refs_case *c = *state;
    uint64_t in[33], out[33] = {0};
    for (int i = 0; i < 33; i++)
        in[i] = UINT64_C(0x0123456789abcdef) * (uint64_t)(i + 1);
    accel_ref ref = alloc_ok(c->device, ACCEL_U64, 33);
    assert_status(accel_copy_in(c->stream, ref, in, 33), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, 33), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_native_address_is_nonzero(void **state)
{
    struct refs_case *c = *state;
    accel_ref ref = alloc_ok(c->device, ACCEL_I32, 4);
    uint64_t address = 0;
    assert_status(accel_ref_native(c->device, ref, &address), ACCEL_OK);
    assert_true(address != 0);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_device_is_described_without_opening(void **state)
{
    struct refs_case *c = *state;
    struct accel_device_props props;
    accel_device_info info;
    assert_status(accel_host_device_props(c->host, "null", 0, &props), ACCEL_OK);
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(props.name, info.props.name);
    assert_int_equal(props.total_memory, info.props.total_memory);
    assert_status(accel_host_device_props(c->host, "null", 9, &props),
                  ACCEL_ERR_NO_DEVICE);
    assert_contains(accel_last_error(), "out of range");
    assert_status(accel_host_device_props(c->host, "nosuch", 0, &props),
                  ACCEL_ERR_NOT_FOUND);
    assert_status(accel_host_device_props(c->host, "null", 0, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_stale_ref_after_reset_is_rejected(void **state)
{
    struct refs_case *c = *state;
    float data[4] = {1, 2, 3, 4};
    accel_ref ref = alloc_ok(c->device, ACCEL_F32, 4);

    accel_device_info before, after;
    assert_status(accel_device_info_get(c->device, &before), ACCEL_OK);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_info_get(c->device, &after), ACCEL_OK);
    assert_true(after.generation != before.generation);

    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_STALE_REF);
    assert_status(accel_copy_in(c->stream, ref, data, 4), ACCEL_ERR_STALE_REF);
    assert_status(accel_copy_out(c->stream, data, ref, 4), ACCEL_ERR_STALE_REF);
    assert_status(accel_free(c->device, ref), ACCEL_ERR_STALE_REF);
    uint64_t address = 0;
    assert_status(accel_ref_native(c->device, ref, &address),
                  ACCEL_ERR_STALE_REF);

    /* The device, and the stream made before the reset, work on. */
    float out[4] = {0};
    accel_ref fresh = alloc_ok(c->device, ACCEL_F32, 4);
    assert_status(accel_copy_in(c->stream, fresh, data, 4), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, fresh, 4), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(data, out, sizeof data);
    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_STALE_REF);
    assert_status(accel_free(c->device, fresh), ACCEL_OK);
}

static void test_every_reset_bumps_the_generation(void **state)
{
    struct refs_case *c = *state;
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    uint32_t generation = info.generation;
    for (int i = 0; i < 3; i++) {
        assert_status(accel_device_reset(c->device), ACCEL_OK);
        assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
        assert_true(info.generation != generation);
        generation = info.generation;
    }
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_freed_ref_is_rejected(void **state)
{
    struct refs_case *c = *state;
    int32_t data[8] = {0};
    accel_ref ref = alloc_ok(c->device, ACCEL_I32, 8);
    assert_status(accel_free(c->device, ref), ACCEL_OK);

    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_FREED_REF);
    assert_status(accel_copy_in(c->stream, ref, data, 8), ACCEL_ERR_FREED_REF);
    assert_status(accel_copy_out(c->stream, data, ref, 8), ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device, ref), ACCEL_ERR_FREED_REF);
}

static void test_freed_ref_stays_freed_when_its_slot_is_reused(void **state)
{
    struct refs_case *c = *state;
    accel_ref old = alloc_ok(c->device, ACCEL_I32, 8);
    assert_status(accel_free(c->device, old), ACCEL_OK);
    /* Enough new allocations that one of them very likely reuses the slot. */
    accel_ref fresh[16];
    for (int i = 0; i < 16; i++)
        fresh[i] = alloc_ok(c->device, ACCEL_I32, 8);
    assert_status(accel_ref_check(c->device, old), ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device, old), ACCEL_ERR_FREED_REF);
    for (int i = 0; i < 16; i++)
        assert_status(accel_free(c->device, fresh[i]), ACCEL_OK);
}

static void test_ref_of_another_device_is_a_mismatch(void **state)
{
    struct refs_case *c = *state;
    accel_device_info info0, info1;
    assert_status(accel_device_info_get(c->device, &info0), ACCEL_OK);
    assert_status(accel_device_info_get(c->device1, &info1), ACCEL_OK);
    assert_int_equal(info1.index, 1);
    assert_true(info0.id != info1.id);

    float data[4] = {0};
    accel_ref ref0 = alloc_ok(c->device, ACCEL_F32, 4);
    accel_ref ref1 = alloc_ok(c->device1, ACCEL_F32, 4);
    assert_status(accel_ref_check(c->device1, ref0), ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_ref_check(c->device, ref1), ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_copy_in(c->stream1, ref0, data, 4),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_copy_out(c->stream1, data, ref0, 4),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_free(c->device1, ref0), ACCEL_ERR_DEVICE_MISMATCH);

    /* The mismatch freed nothing: both refs are still live on their own. */
    assert_status(accel_ref_check(c->device, ref0), ACCEL_OK);
    assert_status(accel_free(c->device, ref0), ACCEL_OK);
    assert_status(accel_free(c->device1, ref1), ACCEL_OK);
}

static void test_copy_between_two_devices_of_one_plugin(void **state)
{
    /* accel.h: one ref may belong to another open device of the host; the
     * copy has completed on return. */
    struct refs_case *c = *state;
    float in[4] = {1, 2, 3, 4}, out[4] = {0};
    accel_ref ref0 = alloc_ok(c->device, ACCEL_F32, 4);
    accel_ref ref1 = alloc_ok(c->device1, ACCEL_F32, 4);
    assert_status(accel_copy_in(c->stream, ref0, in, 4), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream1, ref1, 0, ref0, 0, 16),
                  ACCEL_OK);
    assert_status(accel_copy_out(c->stream1, out, ref1, 4), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream1), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    /* The other way, on the other device's stream. */
    float back[4] = {0};
    assert_status(accel_copy_on_device(c->stream, ref0, 0, ref1, 8, 8), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, back, ref0, 4), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_true(back[0] == 3 && back[1] == 4 && back[2] == 3 && back[3] == 4);
    assert_status(accel_free(c->device, ref0), ACCEL_OK);
    assert_status(accel_free(c->device1, ref1), ACCEL_OK);
}

static void test_copy_with_refs_of_neither_stream_device_is_a_mismatch(void **state)
{
    /* Both refs of null:0, the stream of null:1; then a ref of a device
     * that is not open in this host at all. */
    struct refs_case *c = *state;
    accel_ref a = alloc_ok(c->device, ACCEL_F32, 4);
    accel_ref b = alloc_ok(c->device, ACCEL_F32, 4);
    assert_status(accel_copy_on_device(c->stream1, a, 0, b, 0, 16),
                  ACCEL_ERR_DEVICE_MISMATCH);
    accel_ref foreign = b;
    foreign.device_id = 0x7fffffff;
    accel_ref mine = alloc_ok(c->device1, ACCEL_F32, 4);
    assert_status(accel_copy_on_device(c->stream1, mine, 0, foreign, 0, 16),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
    assert_status(accel_free(c->device1, mine), ACCEL_OK);
}

static void test_reset_of_one_device_leaves_the_other_refs_live(void **state)
{
    struct refs_case *c = *state;
    accel_ref ref0 = alloc_ok(c->device, ACCEL_F32, 4);
    accel_ref ref1 = alloc_ok(c->device1, ACCEL_F32, 4);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, ref0), ACCEL_ERR_STALE_REF);
    assert_status(accel_ref_check(c->device1, ref1), ACCEL_OK);
    assert_status(accel_free(c->device1, ref1), ACCEL_OK);
}

static void test_typed_copy_of_wrong_host_type_is_a_type_mismatch(void **state)
{
    struct refs_case *c = *state;
    double wrong[4] = {1, 2, 3, 4};
    int32_t ints[4] = {0};
    uint8_t bytes[4] = {0};
    accel_ref ref = alloc_ok(c->device, ACCEL_F32, 4);
    assert_status(accel_copy_in(c->stream, ref, wrong, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_out(c->stream, wrong, ref, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_in(c->stream, ref, ints, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    /* uint8_t is a typed U8, not raw bytes. */
    assert_status(accel_copy_in(c->stream, ref, bytes, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    /* char, raw bytes, fits no float ref; nor does long long a double. */
    char text[4] = "abc";
    long long wide[4] = {0};
    assert_status(accel_copy_in(c->stream, ref, text, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_out(c->stream, text, ref, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_in(c->stream, ref, wide, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_byte_ref_takes_one_byte_host_types_only(void **state)
{
    struct refs_case *c = *state;
    char text[4] = "abc";
    uint8_t u8[4] = {1, 2, 3, 4};
    int8_t i8[4] = {-1, -2, -3, -4};
    float values[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    accel_ref raw = alloc_ok(c->device, ACCEL_BYTE, 16);
    assert_status(accel_copy_in(c->stream, raw, text, 4), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, raw, u8, 4), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, raw, i8, 4), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, raw, values, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_out(c->stream, values, raw, 4),
                  ACCEL_ERR_TYPE_MISMATCH);

    /* A typed one-byte ref takes its own type only: char is raw bytes,
     * and the signs differ. */
    accel_ref typed_u8 = alloc_ok(c->device, ACCEL_U8, 4);
    assert_status(accel_copy_in(c->stream, typed_u8, u8, 4), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, typed_u8, text, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_in(c->stream, typed_u8, i8, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_copy_out(c->stream, text, typed_u8, 4),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, typed_u8), ACCEL_OK);
    assert_status(accel_free(c->device, raw), ACCEL_OK);
}

static void test_zero_or_overflowing_size_is_invalid(void **state)
{
    struct refs_case *c = *state;
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_F32, 0, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_alloc(c->device, ACCEL_F64, UINT64_MAX / 8 + 1, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_alloc(c->device, ACCEL_U32, UINT64_MAX, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_alloc(c->device, ACCEL_ELEM_TYPE_COUNT, 4, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_alloc(c->device, (accel_elem_type)-1, 4, &ref),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void
test_huge_allocation_is_out_of_memory_and_device_stays_usable(void **state)
{
    struct refs_case *c = *state;
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, UINT64_C(1) << 60, &ref),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_status(accel_alloc(c->device, ACCEL_F64, UINT64_C(1) << 58, &ref),
                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY);
    assert_status(accel_device_status(c->device), ACCEL_OK);

    uint16_t in[5] = {1, 2, 3, 4, 5}, out[5] = {0};
    ref = alloc_ok(c->device, ACCEL_U16, 5);
    assert_status(accel_copy_in(c->stream, ref, in, 5), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, 5), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_garbage_slot_index_is_a_freed_ref(void **state)
{
    struct refs_case *c = *state;
    accel_ref ref = alloc_ok(c->device, ACCEL_F32, 4);

    accel_ref garbage = ref;
    garbage.slot = 0x7fffffffu;
    assert_status(accel_ref_check(c->device, garbage), ACCEL_ERR_FREED_REF);
    garbage.slot = UINT32_MAX;
    assert_status(accel_ref_check(c->device, garbage), ACCEL_ERR_FREED_REF);
    float data[4] = {0};
    assert_status(accel_copy_in(c->stream, garbage, data, 4),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device, garbage), ACCEL_ERR_FREED_REF);

    accel_ref wrong_generation = ref;
    wrong_generation.slot_generation += 1;
    assert_status(accel_ref_check(c->device, wrong_generation),
                  ACCEL_ERR_FREED_REF);

    assert_status(accel_ref_check(c->device, ref), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

/* Every entry that takes a ref, with `ref` where a ref goes (in both
 * places of a device copy), must say `want`. */
static void assert_every_ref_entry_says(struct refs_case *c, accel_ref ref,
                                        accel_status want)
{
    accel_ref live = alloc_ok(c->device, ACCEL_F32, 4);
    float data[4] = {0};
    struct accel_copy_layout layout = {.row_bytes = 4, .rows = 1};
    uint64_t address = 1;
    assert_status(accel_ref_check(c->device, ref), want);
    assert_status(accel_copy_to_device(c->stream, ref, 0, data, 4), want);
    assert_status(accel_copy_to_host(c->stream, data, ref, 0, 4), want);
    assert_status(accel_copy_to_device(c->stream, ref, 0, data, 0), want);
    assert_status(accel_copy_in(c->stream, ref, data, 4), want);
    assert_status(accel_copy_out(c->stream, data, ref, 4), want);
    assert_status(accel_copy_in(c->stream, ref, data, 0), want);
    assert_status(accel_copy_to_device_layout(c->stream, ref, data, &layout),
                  want);
    assert_status(accel_copy_to_host_layout(c->stream, data, ref, &layout), want);
    assert_status(accel_copy_on_device(c->stream, ref, 0, live, 0, 4), want);
    assert_status(accel_copy_on_device(c->stream, live, 0, ref, 0, 4), want);
    assert_status(accel_copy_on_device(c->stream, ref, 0, live, 0, 0), want);
    assert_status(accel_copy_on_device_layout(c->stream, live, ref, &layout),
                  want);
    assert_status(accel_ref_native(c->device, ref, &address), want);
    assert_int_equal(address, 0);
    assert_status(accel_free(c->device, ref), want);
    /* Nothing was harmed. */
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_ref_check(c->device, live), ACCEL_OK);
    assert_status(accel_free(c->device, live), ACCEL_OK);
}

static void test_zeroed_ref_is_a_freed_ref_on_every_entry(void **state)
{
    struct refs_case *c = *state;
    /* Make some live refs first, so that slot 0 is taken. */
    accel_ref live = alloc_ok(c->device, ACCEL_BYTE, 8);
    accel_ref zero;
    memset(&zero, 0, sizeof zero);
    assert_every_ref_entry_says(c, zero, ACCEL_ERR_FREED_REF);
    assert_contains(accel_last_error(), "never allocated");
    /* Zero with a plausible type and length is no better. */
    accel_ref typed = {.type = ACCEL_F32, .count = 4};
    assert_every_ref_entry_says(c, typed, ACCEL_ERR_FREED_REF);
    assert_status(accel_ref_check(c->device, live), ACCEL_OK);
    assert_status(accel_free(c->device, live), ACCEL_OK);
}

static void test_zeroed_ref_is_a_freed_ref_on_a_second_device(void **state)
{
    /* Device ids start at 1: a zeroed ref is no device's, on any device. */
    struct refs_case *c = *state;
    accel_ref zero = {.type = ACCEL_F32, .count = 4};
    accel_ref theirs = alloc_ok(c->device1, ACCEL_F32, 4);
    assert_status(accel_ref_check(c->device1, zero), ACCEL_ERR_FREED_REF);
    assert_status(accel_copy_on_device(c->stream, theirs, 0, zero, 0, 4),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_copy_on_device(c->stream, zero, 0, theirs, 0, 4),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device1, zero), ACCEL_ERR_FREED_REF);
    assert_status(accel_free(c->device1, theirs), ACCEL_OK);
}

static void test_ref_of_a_slot_never_minted_is_freed_not_stale(void **state)
{
    /* The device's own id, but a slot or slot generation no allocation
     * ever had: FREED_REF, whatever device generation it claims. */
    struct refs_case *c = *state;
    accel_ref live = alloc_ok(c->device, ACCEL_F32, 4);
    accel_ref ahead = live;
    ahead.slot_generation += 7;
    ahead.device_generation = 0;
    assert_every_ref_entry_says(c, ahead, ACCEL_ERR_FREED_REF);
    accel_ref past = live;
    past.slot = 100000;
    past.device_generation += 3;
    assert_every_ref_entry_says(c, past, ACCEL_ERR_FREED_REF);
    /* A ref that was minted, before a reset, stays stale. */
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, live), ACCEL_ERR_STALE_REF);
    assert_status(accel_ref_check(c->device, ahead), ACCEL_ERR_FREED_REF);
}

static void test_ref_whose_length_was_forged_is_rejected(void **state)
{
    /* A ref is a value: a caller can change count, but not what it covers. */
    struct refs_case *c = *state;
    accel_ref ref = alloc_ok(c->device, ACCEL_BYTE, 16);
    accel_ref forged = ref;
    forged.count = 1u << 20;
    unsigned char big[64] = {0};
    assert_true(accel_copy_to_device(c->stream, forged, 0, big, sizeof big) !=
                ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_elem_sizes_and_names(void **state)
{
    (void)state;
    assert_int_equal(accel_elem_size(ACCEL_BYTE), 1);
    assert_int_equal(accel_elem_size(ACCEL_F16), 2);
    assert_int_equal(accel_elem_size(ACCEL_BF16), 2);
    assert_int_equal(accel_elem_size(ACCEL_F32), 4);
    assert_int_equal(accel_elem_size(ACCEL_F64), 8);
    assert_int_equal(accel_elem_size(ACCEL_I8), 1);
    assert_int_equal(accel_elem_size(ACCEL_I16), 2);
    assert_int_equal(accel_elem_size(ACCEL_I32), 4);
    assert_int_equal(accel_elem_size(ACCEL_I64), 8);
    assert_int_equal(accel_elem_size(ACCEL_U8), 1);
    assert_int_equal(accel_elem_size(ACCEL_U16), 2);
    assert_int_equal(accel_elem_size(ACCEL_U32), 4);
    assert_int_equal(accel_elem_size(ACCEL_U64), 8);
    assert_int_equal(accel_elem_size(ACCEL_ELEM_TYPE_COUNT), 0);
    assert_string_equal(accel_elem_type_name(ACCEL_F32), "f32");
    assert_string_equal(accel_elem_type_name(ACCEL_U8), "u8");
    assert_string_equal(accel_elem_type_name(ACCEL_ELEM_TYPE_COUNT), "?");

    accel_ref ref = {.type = ACCEL_F64, .count = 3};
    assert_int_equal(accel_ref_bytes(ref), 24);
}

static void test_elem_type_of_host_pointers(void **state)
{
    (void)state;
    float *f = NULL;
    const double *d = NULL;
    accel_bf16 *bf = NULL;
    const accel_f16 *f16 = NULL;
    char *s = NULL;
    const char *cs = NULL;
    double array[2] = {0};
    const short consts[2] = {0};
    float *const fixed = NULL;
    assert_int_equal(ACCEL_ELEM_TYPE_OF(f), ACCEL_F32);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(d), ACCEL_F64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(bf), ACCEL_BF16);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(f16), ACCEL_F16);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(s), ACCEL_BYTE);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(cs), ACCEL_BYTE);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(fixed), ACCEL_F32);
    /* An array decays to its element pointer, as in a call. */
    assert_int_equal(ACCEL_ELEM_TYPE_OF(array), ACCEL_F64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF(consts), ACCEL_I16);
    /* Every fixed-width type, and the standard types behind them. */
    assert_int_equal(ACCEL_ELEM_TYPE_OF((int8_t *)NULL), ACCEL_I8);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((int16_t *)NULL), ACCEL_I16);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((int32_t *)NULL), ACCEL_I32);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((int64_t *)NULL), ACCEL_I64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((uint8_t *)NULL), ACCEL_U8);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((uint16_t *)NULL), ACCEL_U16);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((uint32_t *)NULL), ACCEL_U32);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((uint64_t *)NULL), ACCEL_U64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((signed char *)NULL), ACCEL_I8);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((unsigned char *)NULL), ACCEL_U8);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((long long *)NULL), ACCEL_I64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((unsigned long long *)NULL), ACCEL_U64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((const unsigned long long *)NULL),
                     ACCEL_U64);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((size_t *)NULL),
                     sizeof(size_t) == 8 ? ACCEL_U64 : ACCEL_U32);
    assert_int_equal(ACCEL_ELEM_TYPE_OF((ptrdiff_t *)NULL),
                     sizeof(ptrdiff_t) == 8 ? ACCEL_I64 : ACCEL_I32);
#if defined(__FLT16_MAX__)
    assert_int_equal(ACCEL_ELEM_TYPE_OF((_Float16 *)NULL), ACCEL_F16);
#endif
}

#define REFS_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define REFS_TEST2(f)                                                          \
    cmocka_unit_test_setup_teardown(f, setup_two_devices, teardown)

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        REFS_TEST(test_f32_values_round_trip),
        REFS_TEST(test_u64_values_round_trip),
        REFS_TEST(test_native_address_is_nonzero),
        REFS_TEST(test_stale_ref_after_reset_is_rejected),
        REFS_TEST(test_every_reset_bumps_the_generation),
        REFS_TEST(test_freed_ref_is_rejected),
        REFS_TEST(test_freed_ref_stays_freed_when_its_slot_is_reused),
        REFS_TEST2(test_ref_of_another_device_is_a_mismatch),
        REFS_TEST(test_device_is_described_without_opening),
        REFS_TEST2(test_copy_between_two_devices_of_one_plugin),
        REFS_TEST2(test_copy_with_refs_of_neither_stream_device_is_a_mismatch),
        REFS_TEST2(test_reset_of_one_device_leaves_the_other_refs_live),
        REFS_TEST(test_typed_copy_of_wrong_host_type_is_a_type_mismatch),
        REFS_TEST(test_byte_ref_takes_one_byte_host_types_only),
        REFS_TEST(test_zero_or_overflowing_size_is_invalid),
        REFS_TEST(test_huge_allocation_is_out_of_memory_and_device_stays_usable),
        REFS_TEST(test_garbage_slot_index_is_a_freed_ref),
        REFS_TEST(test_zeroed_ref_is_a_freed_ref_on_every_entry),
        REFS_TEST2(test_zeroed_ref_is_a_freed_ref_on_a_second_device),
        REFS_TEST(test_ref_of_a_slot_never_minted_is_freed_not_stale),
        REFS_TEST(test_ref_whose_length_was_forged_is_rejected),
        cmocka_unit_test(test_elem_sizes_and_names),
        cmocka_unit_test(test_elem_type_of_host_pointers),
    };
    return cmocka_run_group_tests_name("refs", tests, NULL, NULL);
}
