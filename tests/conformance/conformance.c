/*
 * The conformance suite: what every plugin must do, tested through the
 * public API (accel.h) alone, so that the same tests run against each
 * backend. The build runs it against the null plugin and against the CUDA
 * plugin over the fake driver; tools/gpu-check.sh runs it on a real GPU.
 *
 * Environment:
 *   ACCEL_PLUGIN_PATH, ACCEL_BACKEND   which plugin and device, as for any
 *                                      program (the suite opens the
 *                                      selected device)
 *   ACCEL_CONFORMANCE_MODULE           a module image built from
 *                                      kernels/examples.cu for the device
 *                                      (CPU image, PTX, cubin or bundle);
 *                                      kernel tests are skipped without it
 *
 * A device without ACCEL_DEVICE_CAP_KERNELS is allowed: its kernel tests
 * are skipped with that reason, and it must answer a module load with
 * ACCEL_ERR_NOT_SUPPORTED.
 *
 * Kernels are checked against a C reference on inputs whose results are
 * exact in float, so that a GPU's fused multiply-add gives the same bits.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <accel/accel.h>

/*
 * The suite stands alone (no test support library) so that it builds
 * anywhere the library does, with cmocka alone: tools/gpu-check.sh builds
 * it with a plain cc command line where meson is missing.
 */
static void check_status(accel_status actual, accel_status expected, const char *expr,
                         const char *file, int line)
{
    char detail[1024];

    if (actual == expected)
        return;
    /* Copied first: any later accel call may replace it. */
    snprintf(detail, sizeof(detail), "%s", accel_last_error());
    print_error("%s returned %s (%d), expected %s (%d); last error: \"%s\"\n", expr,
                accel_status_name(actual), (int)actual, accel_status_name(expected),
                (int)expected, detail);
    _fail(file, line);
}

/* Assert a status by value, printing both names and the detail when they differ. */
#define assert_status(expr, expected) check_status((expr), (expected), #expr, __FILE__, __LINE__)

struct conformance {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_device_info info;
};

/* ---- setup ---- */

static int setup(void **state)
{
    struct conformance *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    assert_status(accel_host_create(NULL, &c->host), ACCEL_OK);
    if (accel_device_open_selected(c->host, &c->device) != ACCEL_OK)
        fail_msg("no device selected (ACCEL_BACKEND=%s): %s",
                 getenv("ACCEL_BACKEND") ? getenv("ACCEL_BACKEND") : "(unset)",
                 accel_last_error());
    assert_status(accel_device_info_get(c->device, &c->info), ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct conformance *c = *state;

    if (c == NULL)
        return 0;
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    return 0;
}

static bool has_kernels(const struct conformance *c)
{
    return (c->info.props.caps & ACCEL_DEVICE_CAP_KERNELS) != 0;
}

/* Skip a kernel test, saying why, on a device that runs no kernels. */
static void skip_without_kernels(const struct conformance *c)
{
    if (has_kernels(c))
        return;
    print_message("the device has no ACCEL_DEVICE_CAP_KERNELS: kernel test skipped\n");
    skip();
}

/* The module to run kernels from, or skip the test. */
static accel_module *load_examples(struct conformance *c)
{
    const char *path = getenv("ACCEL_CONFORMANCE_MODULE");
    accel_module *module = NULL;

    skip_without_kernels(c);
    if (path == NULL || path[0] == '\0') {
        print_message("ACCEL_CONFORMANCE_MODULE is not set: kernel test skipped\n");
        skip();
    }
    if (accel_module_load_file(c->device, path, &module) != ACCEL_OK)
        fail_msg("accel_module_load_file(%s): %s", path, accel_last_error());
    return module;
}

static void fill_pattern(unsigned char *bytes, size_t count, unsigned seed)
{
    for (size_t i = 0; i < count; i++)
        bytes[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xffu);
}

/* ---- devices ---- */

static void test_device_describes_itself(void **state)
{
    struct conformance *c = *state;
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

static void test_alloc_then_free_then_use_is_freed_ref(void **state)
{
    struct conformance *c = *state;
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

static void test_alloc_of_nothing_is_invalid(void **state)
{
    struct conformance *c = *state;
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_F32, 0, &ref), ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_out_of_memory_leaves_device_usable(void **state)
{
    struct conformance *c = *state;
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

static void test_copy_1d_round_trip_with_offsets(void **state)
{
    struct conformance *c = *state;
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
    assert_status(accel_copy_to_device(c->stream, ref, OFFSET, in + 7, LENGTH), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, out, ref, 0, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(out, in, OFFSET);
    assert_memory_equal(out + OFFSET, in + 7, LENGTH);
    assert_memory_equal(out + OFFSET + LENGTH, in + OFFSET + LENGTH, BYTES - OFFSET - LENGTH);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_copy_past_the_allocation_is_rejected(void **state)
{
    struct conformance *c = *state;
    unsigned char bytes[64] = {0};
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, 32, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 16, bytes, 17), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, bytes, ref, 0, 33), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_typed_copy_of_another_type_is_rejected(void **state)
{
    struct conformance *c = *state;
    double wrong[4] = {0};
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_F32, 4, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, wrong, 4), ACCEL_ERR_TYPE_MISMATCH);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_copy_on_device_moves_bytes(void **state)
{
    struct conformance *c = *state;
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
    assert_status(accel_copy_on_device(c->stream, b, 1000, a, 20000, 30000), ACCEL_OK);
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

/* `bytes` of `src` to new device memory and back into `dst`. */
static void round_trip_bytes(struct conformance *c, void *dst, const void *src, size_t bytes)
{
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, bytes, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, src, bytes), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, dst, ref, 0, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_copies_through_pinned_host_memory(void **state)
{
    struct conformance *c = *state;
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
    uint64_t host_pitch, host_slice;   /* the source host buffer's */
    uint64_t dev_pitch, dev_slice;     /* the first device buffer's */
    uint64_t dev2_pitch, dev2_slice;   /* the second device buffer's */
    uint64_t out_pitch, out_slice;     /* the destination host buffer's */
};

static uint64_t extent(uint64_t offset, const struct shape *s, uint64_t pitch, uint64_t slice)
{
    return offset + (s->depth - 1) * slice + (s->rows - 1) * pitch + s->row_bytes;
}

static struct accel_copy_layout layout_of(const struct shape *s, uint64_t src_offset,
                                          uint64_t src_pitch, uint64_t src_slice,
                                          uint64_t dst_offset, uint64_t dst_pitch,
                                          uint64_t dst_slice)
{
    return (struct accel_copy_layout){
        .src_offset = src_offset, .dst_offset = dst_offset, .row_bytes = s->row_bytes,
        .rows = s->rows, .src_pitch = src_pitch, .dst_pitch = dst_pitch, .depth = s->depth,
        .src_slice_pitch = src_slice, .dst_slice_pitch = dst_slice};
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
    assert_status(accel_alloc(c->device, ACCEL_BYTE, extent(dev_off, s, s->dev_pitch, s->dev_slice),
                              &dev), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE,
                              extent(dev2_off, s, s->dev2_pitch, s->dev2_slice), &dev2), ACCEL_OK);
    layout = layout_of(s, in_off, s->host_pitch, s->host_slice, dev_off, s->dev_pitch, s->dev_slice);
    assert_status(accel_copy_to_device_layout(c->stream, dev, in, &layout), ACCEL_OK);
    layout = layout_of(s, dev_off, s->dev_pitch, s->dev_slice, dev2_off, s->dev2_pitch,
                       s->dev2_slice);
    assert_status(accel_copy_on_device_layout(c->stream, dev2, dev, &layout), ACCEL_OK);
    layout = layout_of(s, dev2_off, s->dev2_pitch, s->dev2_slice, out_off, s->out_pitch,
                       s->out_slice);
    assert_status(accel_copy_to_host_layout(c->stream, out, dev2, &layout), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);

    for (uint64_t b = 0; b < out_bytes; b++) {
        uint64_t rel = b - out_off;
        uint64_t z = rel / s->out_slice, y = (rel % s->out_slice) / s->out_pitch;
        uint64_t x = (rel % s->out_slice) % s->out_pitch;
        bool inside = b >= out_off && z < s->depth && y < s->rows && x < s->row_bytes;
        unsigned char want = inside ? in[in_off + z * s->host_slice + y * s->host_pitch + x] : 0xee;

        if (out[b] != want)
            fail_msg("byte %llu (slice %llu row %llu column %llu): %u, not %u",
                     (unsigned long long)b, (unsigned long long)z, (unsigned long long)y,
                     (unsigned long long)x, out[b], want);
    }
    assert_status(accel_free(c->device, dev), ACCEL_OK);
    assert_status(accel_free(c->device, dev2), ACCEL_OK);
    free(in);
    free(out);
}

static void test_copy_2d_in_every_direction_with_pitches(void **state)
{
    struct conformance *c = *state;
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

static void test_copy_3d_in_every_direction_with_slice_pitches(void **state)
{
    struct conformance *c = *state;
    const struct shape shapes[] = {
        /* Slice pitches whole numbers of rows: one 3D copy on a GPU. */
        {48, 10, 6, 64, 64 * 12, 256, 256 * 10, 50, 50 * 11, 48, 48 * 10},
        /* Slice pitches that are not: a 2D copy per slice. */
        {48, 10, 6, 64, 64 * 10 + 7, 256, 256 * 11 + 64, 48, 48 * 10 + 1, 49, 49 * 10 + 3},
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

/* ---- streams, events, callbacks ---- */

static void test_event_marks_completed_work(void **state)
{
    struct conformance *c = *state;
    enum { COUNT = 1 << 18 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)), *out = calloc(COUNT, sizeof(uint32_t));
    accel_event *event;
    accel_ref ref;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i ^ 0x5a5a5a5au;
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    /* Never recorded: complete. */
    assert_status(accel_event_query(event), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, COUNT), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, COUNT), ACCEL_OK);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(event), ACCEL_OK);
    assert_status(accel_event_query(event), ACCEL_OK);
    assert_memory_equal(in, out, COUNT * sizeof(uint32_t));
    assert_status(accel_event_wait(event, ACCEL_WAIT_SPIN, ACCEL_WAIT_FOREVER), ACCEL_OK);
    accel_event_destroy(event);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

static void test_stream_wait_event_orders_streams(void **state)
{
    struct conformance *c = *state;
    enum { COUNT = 1 << 20 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)), *out = calloc(COUNT, sizeof(uint32_t));
    accel_stream *other;
    accel_event *event;
    accel_ref a, b;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < COUNT; i++)
        in[i] = i * 2654435761u;
    assert_status(accel_stream_create(c->device, &other), ACCEL_OK);
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, COUNT, &b), ACCEL_OK);
    /* Stream one fills a, then b from a; stream two waits for that, then reads b. */
    assert_status(accel_copy_in(c->stream, a, in, COUNT), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, b, 0, a, 0, accel_ref_bytes(a)), ACCEL_OK);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    assert_status(accel_stream_wait_event(other, event), ACCEL_OK);
    assert_status(accel_copy_out(other, out, b, COUNT), ACCEL_OK);
    assert_status(accel_stream_sync(other), ACCEL_OK);
    assert_memory_equal(in, out, COUNT * sizeof(uint32_t));
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
    accel_event_destroy(event);
    accel_stream_destroy(other);
    free(in);
    free(out);
}

struct callback_record {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    accel_status status;
    const uint32_t *watched; /* host memory the copy before the callback fills */
    uint32_t seen;
};

static void on_complete(void *user, accel_status status)
{
    struct callback_record *r = user;

    pthread_mutex_lock(&r->lock);
    r->calls++;
    r->status = status;
    r->seen = r->watched[0];
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void test_callback_runs_once_after_the_work_before_it(void **state)
{
    struct conformance *c = *state;
    struct callback_record record = {.status = ACCEL_ERR_DRIVER};
    uint32_t in[64], *out = NULL;
    accel_status status;
    accel_ref ref;

    pthread_mutex_init(&record.lock, NULL);
    pthread_cond_init(&record.cond, NULL);
    for (uint32_t i = 0; i < 64; i++)
        in[i] = 0xc0ffee00u + i;
    assert_status(accel_host_alloc(c->device, sizeof(in), (void **)&out), ACCEL_OK);
    memset(out, 0, sizeof(in));
    record.watched = out;
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, 64), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, 64), ACCEL_OK);
    status = accel_stream_add_callback(c->stream, on_complete, &record);
    if (status == ACCEL_ERR_NOT_SUPPORTED) {
        assert_status(accel_stream_sync(c->stream), ACCEL_OK);
        accel_host_free(c->device, out);
        skip();
    }
    assert_status(status, ACCEL_OK);
    pthread_mutex_lock(&record.lock);
    while (record.calls == 0)
        pthread_cond_wait(&record.cond, &record.lock);
    pthread_mutex_unlock(&record.lock);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_int_equal(record.calls, 1);
    assert_status(record.status, ACCEL_OK);
    assert_int_equal(record.seen, in[0]);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_host_free(c->device, out);
    pthread_cond_destroy(&record.cond);
    pthread_mutex_destroy(&record.lock);
}

/* Several threads, each with its own stream, at once: any thread may submit. */
struct worker {
    struct conformance *c;
    unsigned seed;
    accel_status status;
    bool matched;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    enum { COUNT = 50000 };
    uint32_t *in = malloc(COUNT * sizeof(uint32_t)), *out = calloc(COUNT, sizeof(uint32_t));
    accel_stream *stream = NULL;
    accel_ref ref = {0};

    w->status = in != NULL && out != NULL ? ACCEL_OK : ACCEL_ERR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; in != NULL && i < COUNT; i++)
        in[i] = i * 7u + w->seed;
    for (int round = 0; round < 8 && w->status == ACCEL_OK; round++) {
        if ((w->status = accel_stream_create(w->c->device, &stream)) != ACCEL_OK ||
            (w->status = accel_alloc(w->c->device, ACCEL_U32, COUNT, &ref)) != ACCEL_OK ||
            (w->status = accel_copy_in(stream, ref, in, COUNT)) != ACCEL_OK ||
            (w->status = accel_copy_out(stream, out, ref, COUNT)) != ACCEL_OK ||
            (w->status = accel_stream_sync(stream)) != ACCEL_OK)
            break;
        w->matched = memcmp(in, out, COUNT * sizeof(uint32_t)) == 0;
        accel_free(w->c->device, ref);
        accel_stream_destroy(stream);
        stream = NULL;
        if (!w->matched)
            break;
    }
    accel_stream_destroy(stream);
    free(in);
    free(out);
    return NULL;
}

static void test_threads_submit_on_their_own_streams(void **state)
{
    struct conformance *c = *state;
    struct worker workers[4];
    pthread_t threads[4];

    for (unsigned i = 0; i < 4; i++) {
        workers[i] = (struct worker){.c = c, .seed = i * 1000u};
        assert_int_equal(pthread_create(&threads[i], NULL, worker_main, &workers[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_status(workers[i].status, ACCEL_OK);
        assert_true(workers[i].matched);
    }
}

/* ---- modules and launches ---- */

static void test_module_from_file_has_its_kernels(void **state)
{
    struct conformance *c = *state;
    accel_module *module = load_examples(c);
    accel_kernel *kernel = NULL;

    assert_status(accel_kernel_get(module, "saxpy", &kernel), ACCEL_OK);
    assert_non_null(kernel);
    assert_status(accel_kernel_get(module, "vadd", &kernel), ACCEL_OK);
    assert_status(accel_kernel_get(module, "empty", &kernel), ACCEL_OK);
    assert_status(accel_kernel_get(module, "no_such_kernel", &kernel), ACCEL_ERR_NOT_FOUND);
    assert_true(strlen(accel_last_error()) > 0);
    accel_module_unload(module);
}

static void test_device_without_kernels_refuses_modules(void **state)
{
    struct conformance *c = *state;
    static const char image[] = "\177ELF any image at all";
    accel_module *module = NULL;

    if (has_kernels(c)) {
        print_message("the device runs kernels: test skipped\n");
        skip();
    }
    assert_status(accel_module_load(c->device, image, sizeof(image) - 1, &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_null(module);
    assert_true(strlen(accel_last_error()) > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

static void test_corrupt_module_is_refused_with_a_reason(void **state)
{
    struct conformance *c = *state;
    static const char garbage[] = "this is not a module image for any device\n";
    accel_module *module = NULL;

    skip_without_kernels(c);
    assert_status(accel_module_load(c->device, garbage, sizeof(garbage) - 1, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_true(strlen(accel_last_error()) > 0);
    assert_status(accel_device_status(c->device), ACCEL_OK);
}

/* y = a * x + y on n elements, checked against C; values keep every result exact. */
static void run_saxpy(struct conformance *c, accel_kernel *saxpy, uint32_t n)
{
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    float *out = malloc(n * sizeof(float));
    const float a = 2.5f;
    accel_ref dx, dy;

    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(out);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000);
        y[i] = (float)(i % 77) - 30.0f;
    }
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, n, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, n), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, n), ACCEL_OK);
    {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                            ACCEL_ARG_REF(dy)};
        accel_dim3 block = {256, 1, 1}, grid = {(n + 255) / 256, 1, 1};

        assert_status(accel_launch(c->stream, saxpy, grid, block, 0, args, 4), ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dy, n), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] != a * x[i] + y[i])
            fail_msg("saxpy[%u] = %g, not %g", i, (double)out[i], (double)(a * x[i] + y[i]));
    }
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    free(x);
    free(y);
    free(out);
}

static void test_saxpy_matches_the_c_reference(void **state)
{
    struct conformance *c = *state;
    accel_module *module = load_examples(c);
    accel_kernel *saxpy = NULL;

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    run_saxpy(c, saxpy, 100003);
    run_saxpy(c, saxpy, 1);
    accel_module_unload(module);
}

static void test_vadd_matches_the_c_reference(void **state)
{
    struct conformance *c = *state;
    accel_module *module = load_examples(c);
    enum { N = 70001 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    float *out = malloc(N * sizeof(float));
    accel_kernel *vadd = NULL;
    accel_ref da, db, dc;
    uint32_t n = N;

    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(out);
    for (uint32_t i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)(i % 333);
    }
    assert_status(accel_kernel_get(module, "vadd", &vadd), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &da), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &db), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dc), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, da, a, N), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, db, b, N), ACCEL_OK);
    {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(da), ACCEL_ARG_REF(db),
                            ACCEL_ARG_REF(dc)};

        assert_status(accel_launch(c->stream, vadd, (accel_dim3){(N + 127) / 128, 1, 1},
                                   (accel_dim3){128, 1, 1}, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dc, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < N; i++) {
        if (out[i] != a[i] + b[i])
            fail_msg("vadd[%u] = %g, not %g", i, (double)out[i], (double)(a[i] + b[i]));
    }
    assert_status(accel_free(c->device, da), ACCEL_OK);
    assert_status(accel_free(c->device, db), ACCEL_OK);
    assert_status(accel_free(c->device, dc), ACCEL_OK);
    accel_module_unload(module);
    free(a);
    free(b);
    free(out);
}

static void test_launches_stay_in_order_on_a_stream(void **state)
{
    struct conformance *c = *state;
    accel_module *module = load_examples(c);
    enum { N = 4096, ROUNDS = 20 };
    float x[N], y[N], out[N];
    const float a = 1.0f;
    accel_kernel *saxpy = NULL;
    accel_ref dx, dy;
    uint32_t n = N;

    for (uint32_t i = 0; i < N; i++) {
        x[i] = (float)(i % 10);
        y[i] = 0.0f;
    }
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, N, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, N), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, N), ACCEL_OK);
    for (int r = 0; r < ROUNDS; r++) {
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                            ACCEL_ARG_REF(dy)};

        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){N / 64, 1, 1},
                                   (accel_dim3){64, 1, 1}, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dy, N), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_true(out[i] == (float)ROUNDS * x[i]);
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    accel_module_unload(module);
}

static void test_launch_arguments_are_checked(void **state)
{
    struct conformance *c = *state;
    accel_module *module = load_examples(c);
    accel_kernel *saxpy = NULL;
    uint32_t n = 16;
    uint64_t wide = 16;
    float a = 1.0f;
    accel_ref dx, dy, freed;
    accel_dim3 one = {1, 1, 1}, block = {16, 1, 1};

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &dy), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &freed), ACCEL_OK);
    assert_status(accel_free(c->device, freed), ACCEL_OK);
    {
        accel_arg good[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                            ACCEL_ARG_REF(dy), ACCEL_ARG_VALUE(n)};
        accel_arg wrong_size[] = {ACCEL_ARG_VALUE(wide), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(dx),
                                  ACCEL_ARG_REF(dy)};
        accel_arg stale[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a), ACCEL_ARG_REF(freed),
                             ACCEL_ARG_REF(dy)};

        /* One argument too many, then one too few. */
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 5),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 3),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, wrong_size, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, stale, 4),
                      ACCEL_ERR_FREED_REF);
        assert_status(accel_launch(c->stream, saxpy, (accel_dim3){0, 1, 1}, block, 0, good, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one, (accel_dim3){1, 1, 0}, 0, good, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_launch(c->stream, saxpy, one,
                                   (accel_dim3){c->info.props.max_threads_per_block, 2, 1}, 0,
                                   good, 4),
                      ACCEL_ERR_INVALID_ARGUMENT);
        /* After every refusal, a good launch still runs. */
        assert_status(accel_launch(c->stream, saxpy, one, block, 0, good, 4), ACCEL_OK);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    accel_module_unload(module);
}

/* ---- reset ---- */

static void test_reset_makes_refs_stale_and_new_work_succeeds(void **state)
{
    struct conformance *c = *state;
    const char *path = getenv("ACCEL_CONFORMANCE_MODULE");
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    accel_device_info after;
    uint32_t in[32] = {1, 2, 3}, out[32];
    accel_ref old, fresh;

    if (path != NULL && path[0] != '\0' && has_kernels(c)) {
        module = load_examples(c);
        assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    }
    assert_status(accel_alloc(c->device, ACCEL_U32, 32, &old), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, old, in, 32), ACCEL_OK);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_info_get(c->device, &after), ACCEL_OK);
    assert_true(after.generation > c->info.generation);
    assert_status(accel_ref_check(c->device, old), ACCEL_ERR_STALE_REF);
    assert_status(accel_copy_out(c->stream, out, old, 32), ACCEL_ERR_STALE_REF);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    /* The same stream, new memory. */
    assert_status(accel_alloc(c->device, ACCEL_U32, 32, &fresh), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, fresh, in, 32), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, fresh, 32), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof(in));
    assert_status(accel_free(c->device, fresh), ACCEL_OK);
    /* Modules survive a reset: the kernel found before runs after. */
    if (saxpy != NULL)
        run_saxpy(c, saxpy, 5000);
    accel_module_unload(module);
}

static void test_pinned_memory_survives_a_reset(void **state)
{
    struct conformance *c = *state;
    enum { BYTES = 1 << 20 };
    unsigned char *pinned = NULL, *back = NULL;
    unsigned char *expected = malloc(BYTES);
    accel_ref before;

    assert_non_null(expected);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&pinned), ACCEL_OK);
    fill_pattern(pinned, BYTES, 11);
    memcpy(expected, pinned, BYTES);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &before), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, before, 0, pinned, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    /* The same block, with what it held: a reset frees device memory, not pinned memory. */
    assert_memory_equal(pinned, expected, BYTES);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&back), ACCEL_OK);
    memset(back, 0, BYTES);
    round_trip_bytes(c, back, pinned, BYTES);
    assert_memory_equal(back, expected, BYTES);
    accel_host_free(c->device, back);
    accel_host_free(c->device, pinned);
    free(expected);
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
    assert_status(accel_copy_to_device(c->stream, ref, 0, before, BYTES), ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, offset, bytes, pattern, size), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, after, ref, 0, BYTES), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint64_t i = 0; i < BYTES; i++) {
        bool inside = i >= offset && i < offset + bytes;
        unsigned char want = inside ? ((const unsigned char *)pattern)[(i - offset) % size]
                                    : 0xee;
        if (after[i] != want)
            fail_msg("pattern of %zu bytes at %llu+%llu: byte %llu is 0x%02x, not 0x%02x",
                     size, (unsigned long long)offset, (unsigned long long)bytes,
                     (unsigned long long)i, after[i], want);
    }
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

static void test_fill_writes_each_pattern_size(void **state)
{
    struct conformance *c = *state;
    const unsigned char pattern[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

    check_fill(c, pattern, 1, 0, 4096);
    check_fill(c, pattern, 1, 3, 5);
    check_fill(c, pattern, 2, 2, 1022);
    check_fill(c, pattern, 4, 4, 4092);
    check_fill(c, pattern, 8, 8, 4080);
    check_fill(c, pattern, 8, 4088, 8);
    check_fill(c, pattern, 4, 1024, 12);
}

static void test_fill_refuses_bad_sizes_and_ranges(void **state)
{
    struct conformance *c = *state;
    const unsigned char pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned char back[64];
    accel_ref ref, freed;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, 64, &ref), ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 1), ACCEL_OK);
    /* A pattern of 3 (or 0, or 16) bytes. */
    assert_status(accel_fill(c->stream, ref, 0, 3, pattern, 3), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 0), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, pattern, 16), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 0, 64, NULL, 4), ACCEL_ERR_INVALID_ARGUMENT);
    /* A length or an offset that is not a multiple of the pattern. */
    assert_status(accel_fill(c->stream, ref, 0, 6, pattern, 4), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 2, 8, pattern, 4), ACCEL_ERR_INVALID_ARGUMENT);
    /* The range past the ref: by one pattern, from past its end, wrapping. */
    assert_status(accel_fill(c->stream, ref, 0, 72, pattern, 8), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 64, 4, pattern, 4), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 72, 0, pattern, 8), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_fill(c->stream, ref, 8, UINT64_MAX - 7, pattern, 8),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* Zero bytes: the ref is checked, nothing is written. */
    assert_status(accel_fill(c->stream, ref, 64, 0, pattern + 1, 1), ACCEL_OK);
    assert_status(accel_fill(c->stream, ref, 0, 0, pattern + 1, 1), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, back, ref, 0, sizeof(back)), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (size_t i = 0; i < sizeof(back); i++)
        assert_int_equal(back[i], 1);
    /* A freed ref, and one never allocated. */
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 64, &freed), ACCEL_OK);
    assert_status(accel_free(c->device, freed), ACCEL_OK);
    assert_status(accel_fill(c->stream, freed, 0, 8, pattern, 8), ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(c->stream, freed, 0, 0, pattern, 8), ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(c->stream, (accel_ref){0}, 0, 8, pattern, 8), ACCEL_ERR_FREED_REF);
    assert_status(accel_fill(NULL, ref, 0, 8, pattern, 8), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

/* ---- event timing ---- */

/* Skip a timing test on a plugin without event_elapsed (it is optional):
 * two completed events say so with ACCEL_ERR_NOT_SUPPORTED. */
static void skip_without_timing(struct conformance *c, accel_event *start, accel_event *end)
{
    int64_t ns = 0;

    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(end), ACCEL_OK);
    if (accel_event_elapsed(start, end, &ns) != ACCEL_ERR_NOT_SUPPORTED)
        return;
    accel_event_destroy(end);
    accel_event_destroy(start);
    print_message("the plugin cannot time events: test skipped\n");
    skip();
}

static void test_event_elapsed_times_completed_work(void **state)
{
    struct conformance *c = *state;
    enum { BYTES = 1 << 20 };
    unsigned char *host;
    accel_event *start, *end, *never;
    int64_t ns = -1;
    accel_ref ref;

    assert_status(accel_event_create(c->device, &start), ACCEL_OK);
    assert_status(accel_event_create(c->device, &end), ACCEL_OK);
    skip_without_timing(c, start, end);
    host = malloc(BYTES);
    assert_non_null(host);
    memset(host, 7, BYTES);
    assert_status(accel_event_create(c->device, &never), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, BYTES, &ref), ACCEL_OK);
    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    for (int i = 0; i < 8; i++)
        assert_status(accel_copy_to_device(c->stream, ref, 0, host, BYTES), ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(end), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_OK);
    /* 8 MiB of copies take some time, and not a minute. */
    assert_true(ns > 0);
    assert_true(ns < 60 * (int64_t)1000000000);
    int64_t back = 0;
    assert_status(accel_event_elapsed(end, start, &back), ACCEL_OK);
    assert_true(back == -ns);
    assert_status(accel_event_elapsed(start, start, &back), ACCEL_OK);
    assert_true(back == 0);
    /* Never recorded; NULL arguments. */
    ns = 5;
    assert_status(accel_event_elapsed(start, never, &ns), ACCEL_ERR_INVALID_ARGUMENT);
    assert_true(ns == 0);
    assert_status(accel_event_elapsed(never, end, &ns), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_event_elapsed(NULL, end, &ns), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_event_elapsed(start, end, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_event_destroy(never);
    accel_event_destroy(end);
    accel_event_destroy(start);
    free(host);
}

/* A callback that holds its stream until the test lets it go. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
};

static void gate_wait(void *user, accel_status status)
{
    struct gate *gate = user;

    (void)status;
    pthread_mutex_lock(&gate->lock);
    while (!gate->open)
        pthread_cond_wait(&gate->cond, &gate->lock);
    pthread_mutex_unlock(&gate->lock);
}

static void test_event_elapsed_of_unfinished_work_is_not_ready(void **state)
{
    struct conformance *c = *state;
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    accel_event *start, *end;
    accel_stream *other;
    int64_t ns = 5;

    assert_status(accel_event_create(c->device, &start), ACCEL_OK);
    assert_status(accel_event_create(c->device, &end), ACCEL_OK);
    skip_without_timing(c, start, end);
    assert_status(accel_stream_create(c->device, &other), ACCEL_OK);
    assert_status(accel_event_record(start, c->stream), ACCEL_OK);
    assert_status(accel_event_sync(start), ACCEL_OK);
    /* `other` waits for an event that waits for a held callback. */
    accel_status added = accel_stream_add_callback(c->stream, gate_wait, &gate);
    if (added == ACCEL_ERR_NOT_SUPPORTED) {
        accel_stream_destroy(other);
        accel_event_destroy(end);
        accel_event_destroy(start);
        print_message("no completion callbacks on this plugin: test skipped\n");
        skip();
    }
    assert_status(added, ACCEL_OK);
    assert_status(accel_event_record(end, c->stream), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_NOT_READY);
    assert_true(ns == 0);
    pthread_mutex_lock(&gate.lock);
    gate.open = true;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_event_elapsed(start, end, &ns), ACCEL_OK);
    assert_true(ns >= 0);
    accel_stream_destroy(other);
    accel_event_destroy(end);
    accel_event_destroy(start);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_device_describes_itself),
        T(test_alloc_then_free_then_use_is_freed_ref),
        T(test_alloc_of_nothing_is_invalid),
        T(test_out_of_memory_leaves_device_usable),
        T(test_copy_1d_round_trip_with_offsets),
        T(test_copy_past_the_allocation_is_rejected),
        T(test_typed_copy_of_another_type_is_rejected),
        T(test_copy_on_device_moves_bytes),
        T(test_copies_through_pinned_host_memory),
        T(test_copy_2d_in_every_direction_with_pitches),
        T(test_copy_3d_in_every_direction_with_slice_pitches),
        T(test_event_marks_completed_work),
        T(test_stream_wait_event_orders_streams),
        T(test_callback_runs_once_after_the_work_before_it),
        T(test_threads_submit_on_their_own_streams),
        T(test_module_from_file_has_its_kernels),
        T(test_device_without_kernels_refuses_modules),
        T(test_corrupt_module_is_refused_with_a_reason),
        T(test_saxpy_matches_the_c_reference),
        T(test_vadd_matches_the_c_reference),
        T(test_launches_stay_in_order_on_a_stream),
        T(test_launch_arguments_are_checked),
        T(test_reset_makes_refs_stale_and_new_work_succeeds),
        T(test_pinned_memory_survives_a_reset),
        T(test_fill_writes_each_pattern_size),
        T(test_fill_refuses_bad_sizes_and_ranges),
        T(test_event_elapsed_times_completed_work),
        T(test_event_elapsed_of_unfinished_work_is_not_ready),
    };
#undef T
    return cmocka_run_group_tests_name(getenv("ACCEL_BACKEND") != NULL ? getenv("ACCEL_BACKEND")
                                                                       : "conformance",
                                       tests, NULL, NULL);
}
