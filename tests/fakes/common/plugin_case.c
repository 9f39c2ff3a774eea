/*
 * What the tests of a GPU plugin over its fake driver share.
 */
#include "plugin_case.h"

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the fixture ---- */

static void clean_environment(const struct plugin_case_kind *kind)
{
    support_clean_environment();
    unsetenv(kind->library_env);
    for (const char *const *knob = kind->knobs; *knob != NULL; knob++)
        unsetenv(*knob);
}

int plugin_case_setup(void **state, const struct plugin_case_kind *kind)
{
    struct plugin_case *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    c->kind = kind;
    clean_environment(kind);
    setenv("ACCEL_PLUGIN_PATH", kind->plugin_path, 1);
    setenv(kind->library_env, kind->fake_path, 1);
    *state = c;
    return 0;
}

int plugin_case_teardown(void **state)
{
    struct plugin_case *c = *state;
    const struct plugin_case_kind *kind = c->kind;

    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    clean_environment(kind);
    return 0;
}

const accel_plugin_info *plugin_case_open_host(struct plugin_case *c)
{
    const accel_plugin_info *plugin;

    assert_status(accel_host_create(NULL, &c->host), ACCEL_OK);
    plugin = support_find_plugin(c->host, c->kind->plugin, 0);
    assert_non_null(plugin);
    return plugin;
}

void plugin_case_open_fake_device(struct plugin_case *c)
{
    const accel_plugin_info *plugin = plugin_case_open_host(c);

    if (plugin->state != ACCEL_PLUGIN_LOADED)
        fail_msg("the fake gave no device: %s",
                 plugin->reason ? plugin->reason : "");
    assert_status(accel_device_open(c->host, c->kind->plugin, 0, &c->device),
                  ACCEL_OK);
    assert_status(accel_stream_create(c->device, &c->stream), ACCEL_OK);
}

void plugin_case_assert_no_device_because(struct plugin_case *c,
                                          const char *fragment)
{
    const accel_plugin_info *plugin = plugin_case_open_host(c);

    assert_int_equal(plugin->state, ACCEL_PLUGIN_NO_DEVICE);
    assert_int_equal(plugin->device_count, 0);
    assert_non_null(plugin->reason);
    assert_contains(plugin->reason, fragment);
    assert_status(accel_device_open(c->host, c->kind->plugin, 0, &c->device),
                  ACCEL_ERR_NO_DEVICE);
}

void plugin_case_round_trip(struct plugin_case *c, uint32_t count)
{
    uint32_t *in = malloc(count * sizeof(uint32_t)),
             *out = calloc(count, sizeof(uint32_t));
    accel_ref ref;

    assert_non_null(in);
    assert_non_null(out);
    for (uint32_t i = 0; i < count; i++)
        in[i] = i * 2654435761u;
    assert_status(accel_alloc(c->device, ACCEL_U32, count, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, in, count), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, ref, count), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(in, out, count * sizeof(uint32_t));
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    free(in);
    free(out);
}

uint64_t plugin_case_fake_calls_in(const struct plugin_case *c,
                                   const char *library_path, const char *name)
{
    void *library = dlopen(library_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*calls)(const char *);
    uint64_t count;

    if (library == NULL)
        return 0;
    *(void **)&calls = dlsym(library, c->kind->calls_symbol);
    assert_non_null(calls);
    count = calls(name);
    dlclose(library);
    return count;
}

uint64_t plugin_case_fake_calls(const struct plugin_case *c, const char *name)
{
    return plugin_case_fake_calls_in(c, c->kind->fake_path, name);
}

uint64_t plugin_case_fake_registered_bytes(const struct plugin_case *c)
{
    void *library = dlopen(c->kind->fake_path,
                           RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*registered)(void);
    uint64_t bytes;

    assert_non_null(library);
    *(void **)&registered = dlsym(library, c->kind->registered_symbol);
    assert_non_null(registered);
    bytes = registered();
    dlclose(library);
    return bytes;
}

/* ---- checks ---- */

/* Calls of `name` made by one device-to-device layout copy. */
static uint64_t calls_for_copy(struct plugin_case *c, accel_ref dst,
                               accel_ref src,
                               const struct accel_copy_layout *layout,
                               const char *name)
{
    uint64_t before = plugin_case_fake_calls(c, name);

    assert_status(accel_copy_on_device_layout(c->stream, dst, src, layout),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    return plugin_case_fake_calls(c, name) - before;
}

void plugin_case_check_copy_layouts(struct plugin_case *c, const char *copy_3d,
                                    const char *copy_2d)
{
    struct accel_copy_layout whole_rows = {.row_bytes = 48,
                                           .rows = 10,
                                           .depth = 6,
                                           .src_pitch = 64,
                                           .dst_pitch = 256,
                                           .src_slice_pitch = 64 * 12,
                                           .dst_slice_pitch = 256 * 10};
    struct accel_copy_layout odd_slices = whole_rows;
    struct accel_copy_layout pitched = {.row_bytes = 100,
                                        .rows = 30,
                                        .depth = 1,
                                        .src_pitch = 128,
                                        .dst_pitch = 512};
    unsigned char *pinned = NULL;
    uint64_t before;
    accel_ref a, b;

    odd_slices.src_slice_pitch = 64 * 10 + 7;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 1 << 16, &a), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 1 << 16, &b), ACCEL_OK);
    assert_int_equal(calls_for_copy(c, b, a, &whole_rows, copy_3d), 1);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, copy_2d), 6);
    assert_int_equal(calls_for_copy(c, b, a, &odd_slices, copy_3d), 0);
    assert_int_equal(calls_for_copy(c, b, a, &pitched, copy_2d), 1);
    /* From pinned memory the host hands the layout over whole: one 2D copy. */
    assert_status(accel_host_alloc(c->device, 128 * 30, (void **)&pinned),
                  ACCEL_OK);
    before = plugin_case_fake_calls(c, copy_2d);
    assert_status(accel_copy_to_device_layout(c->stream, b, pinned, &pitched),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, copy_2d) - before, 1);
    accel_host_free(c->device, pinned);
    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(c->device, b), ACCEL_OK);
}

void plugin_case_launch_saxpy(struct plugin_case *c, accel_kernel *saxpy,
                              accel_ref x, accel_ref y, uint32_t n,
                              accel_status expected)
{
    float a = 2.0f;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};

    assert_status(accel_launch(c->stream, saxpy, (accel_dim3){(n + 63) / 64, 1, 1},
                               (accel_dim3){64, 1, 1}, 0, args, 4),
                  expected);
}

/* x[i] = i and y[i] = 1 on the device, in new allocations. */
static void saxpy_inputs(struct plugin_case *c, float *x, float *y,
                         accel_ref *dx, accel_ref *dy)
{
    for (int i = 0; i < 256; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, *dx, x, 256), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, *dy, y, 256), ACCEL_OK);
}

accel_module *plugin_case_load_module(struct plugin_case *c, const char *path)
{
    accel_module *module = NULL;

    assert_status(accel_module_load_file(c->device, path, &module), ACCEL_OK);
    return module;
}

void plugin_case_check_fault_and_reset(struct plugin_case *c,
                                       const char *module_path,
                                       const char *lost_detail)
{
    accel_module *module = plugin_case_load_module(c, module_path);
    float x[256], y[256], out[256];
    accel_ref dx, dy, other;
    accel_kernel *saxpy;

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    saxpy_inputs(c, x, y, &dx, &dy);
    /* As on a GPU: the launch is accepted, the fault shows at the next wait. */
    plugin_case_launch_saxpy(c, saxpy, dx, dy, 256, ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(), lost_detail);
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_ref_check(c->device, dx), ACCEL_ERR_STALE_REF);
    assert_status(accel_alloc(c->device, ACCEL_F32, 16, &other),
                  ACCEL_ERR_DEVICE_LOST);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, dy), ACCEL_ERR_STALE_REF);
    saxpy_inputs(c, x, y, &dx, &dy);
    /* The host reloaded the module behind the same handles. */
    plugin_case_launch_saxpy(c, saxpy, dx, dy, 256, ACCEL_OK);
    assert_status(accel_copy_out(c->stream, out, dy, 256), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 256; i++)
        assert_true(out[i] == 2.0f * x[i] + 1.0f);
    accel_module_unload(module);
}

void plugin_case_check_copy_loss_and_reset(struct plugin_case *c)
{
    uint32_t *pinned = NULL;
    accel_ref ref;

    assert_status(
        accel_host_alloc(c->device, 16 * sizeof(uint32_t), (void **)&pinned),
        ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, 16, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, pinned, 16),
                  ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_status(c->device), ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_ref_check(c->device, ref), ACCEL_ERR_STALE_REF);
    plugin_case_round_trip(c, 300);
}

void plugin_case_check_reset_through_one_open(struct plugin_case *c)
{
    struct plugin_case second = {.kind = c->kind};
    accel_ref ref;

    /* A second host in the process: the same driver context. */
    assert_status(accel_host_create(NULL, &second.host), ACCEL_OK);
    assert_status(
        accel_device_open(second.host, c->kind->plugin, 0, &second.device),
        ACCEL_OK);
    assert_status(accel_alloc(second.device, ACCEL_U32, 100, &ref), ACCEL_OK);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(second.device), ACCEL_ERR_DEVICE_LOST);
    assert_contains(accel_last_error(),
                    "another open of the device reset its context");
    /* Its reset takes the fresh context without resetting it again ... */
    assert_status(accel_device_reset(second.device), ACCEL_OK);
    assert_status(accel_ref_check(second.device, ref), ACCEL_ERR_STALE_REF);
    assert_status(accel_stream_create(second.device, &second.stream), ACCEL_OK);
    /* ... so that the first open's new work survives, and both work. */
    assert_status(accel_device_status(c->device), ACCEL_OK);
    plugin_case_round_trip(c, 500);
    plugin_case_round_trip(&second, 500);
    accel_stream_destroy(second.stream);
    accel_device_close(second.device);
    accel_host_destroy(second.host);
}

static void fill_bytes(unsigned char *bytes, size_t count, unsigned seed)
{
    for (size_t i = 0; i < count; i++)
        bytes[i] = (unsigned char)(i * 7u + seed);
}

/* `bytes` of `src` to new device memory and back into `dst`, through the case's stream. */
static void device_round_trip(struct plugin_case *c, void *dst, const void *src,
                              size_t bytes)
{
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, bytes, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, src, bytes), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, dst, ref, 0, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

void plugin_case_check_pinned_blocks_registered_again(struct plugin_case *c)
{
    enum { SMALL = 5000, LARGE = 3 * 4096 };
    unsigned char *small = NULL, *large = NULL;
    unsigned char expected[SMALL];
    uint64_t unregisters, base;

    plugin_case_open_fake_device(c);
    base = plugin_case_fake_registered_bytes(c);
    assert_status(accel_host_alloc(c->device, SMALL, (void **)&small), ACCEL_OK);
    assert_status(accel_host_alloc(c->device, LARGE, (void **)&large), ACCEL_OK);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base + SMALL + LARGE);
    fill_bytes(small, SMALL, 5);
    memcpy(expected, small, SMALL);
    device_round_trip(c, large, small, SMALL);

    unregisters = plugin_case_fake_calls(c, c->kind->unregister_call);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    /* Unregistered before the reset, registered again after. */
    assert_int_equal(
        plugin_case_fake_calls(c, c->kind->unregister_call) - unregisters, 2);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base + SMALL + LARGE);
    assert_memory_equal(small, expected, SMALL);
    memset(large, 0, LARGE);
    device_round_trip(c, large, small, SMALL);
    assert_memory_equal(large, expected, SMALL);

    accel_host_free(c->device, small);
    assert_int_equal(
        plugin_case_fake_calls(c, c->kind->unregister_call) - unregisters, 3);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base + LARGE);
    accel_host_free(c->device, large);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base);
}

void plugin_case_check_pinned_block_refused_at_reset_stays_usable(
    struct plugin_case *c, const char *fail_knob, const char *refuse_second)
{
    enum { BYTES = 4 * 4096 };
    unsigned char *pinned = NULL;
    unsigned char *expected = malloc(BYTES), *back = calloc(1, BYTES);
    uint64_t unregisters, base;

    setenv(fail_knob, refuse_second, 1);
    plugin_case_open_fake_device(c);
    base = plugin_case_fake_registered_bytes(c);
    assert_non_null(expected);
    assert_non_null(back);
    assert_status(accel_host_alloc(c->device, BYTES, (void **)&pinned), ACCEL_OK);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base + BYTES);
    fill_bytes(pinned, BYTES, 9);
    memcpy(expected, pinned, BYTES);

    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_status(accel_device_status(c->device), ACCEL_OK);
    assert_int_equal(plugin_case_fake_registered_bytes(c), base);
    assert_memory_equal(pinned, expected, BYTES);
    /* Pageable now: the copies still arrive, both ways. */
    device_round_trip(c, back, pinned, BYTES);
    assert_memory_equal(back, expected, BYTES);
    memset(pinned, 0, BYTES);
    device_round_trip(c, pinned, back, BYTES);
    assert_memory_equal(pinned, expected, BYTES);

    unregisters = plugin_case_fake_calls(c, c->kind->unregister_call);
    accel_host_free(c->device, pinned);
    assert_int_equal(plugin_case_fake_calls(c, c->kind->unregister_call),
                     unregisters);
    free(expected);
    free(back);
}

void plugin_case_lose_and_close(struct plugin_case *c)
{
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    accel_stream_destroy(c->stream);
    c->stream = NULL;
    accel_device_close(c->device);
    c->device = NULL;
}

void plugin_case_check_two_devices(struct plugin_case *c, const char *devices_knob)
{
    uint32_t in[500], out[500] = {0};
    struct plugin_case second = {.kind = c->kind};
    accel_ref a, b;

    setenv(devices_knob, "2", 1);
    plugin_case_open_fake_device(c);
    assert_int_equal(
        support_find_plugin(c->host, c->kind->plugin, 0)->device_count, 2);
    assert_status(accel_device_open(c->host, c->kind->plugin, 1, &second.device),
                  ACCEL_OK);
    for (int i = 0; i < 500; i++)
        in[i] = (uint32_t)i * 11u;
    assert_status(accel_alloc(c->device, ACCEL_U32, 500, &a), ACCEL_OK);
    assert_status(accel_alloc(second.device, ACCEL_U32, 500, &b), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, a, in, 500), ACCEL_OK);
    assert_status(accel_copy_on_device(c->stream, b, 0, a, 0, sizeof(in)),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_stream_create(second.device, &second.stream), ACCEL_OK);
    assert_status(accel_copy_out(second.stream, out, b, 500), ACCEL_OK);
    assert_status(accel_stream_sync(second.stream), ACCEL_OK);
    accel_stream_destroy(second.stream);
    assert_memory_equal(in, out, sizeof(in));
    accel_device_close(second.device);
}

void plugin_case_check_peer_copies(struct plugin_case *c,
                                   const char *devices_knob,
                                   const char *peer_1d, const char *peer_nd)
{
    uint32_t in[500], back[500] = {0}, out[500] = {0};
    struct plugin_case second = {.kind = c->kind};
    /* Rows of 100 words at a pitch of 125: 4 rows, the gaps left alone. */
    struct accel_copy_layout rows = {.row_bytes = 400,
                                     .rows = 4,
                                     .src_pitch = 500,
                                     .dst_pitch = 500,
                                     .depth = 1};
    uint64_t calls_1d, calls_nd;
    accel_ref a, b;

    setenv(devices_knob, "2", 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_device_open(c->host, c->kind->plugin, 1, &second.device),
                  ACCEL_OK);
    assert_status(accel_stream_create(second.device, &second.stream), ACCEL_OK);
    for (int i = 0; i < 500; i++)
        in[i] = (uint32_t)i * 7u + 1u;
    assert_status(accel_alloc(c->device, ACCEL_U32, 500, &a), ACCEL_OK);
    assert_status(accel_alloc(second.device, ACCEL_U32, 500, &b), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, a, in, 500), ACCEL_OK);
    assert_status(accel_copy_in(second.stream, b, back, 500), ACCEL_OK);
    assert_status(accel_stream_sync(second.stream), ACCEL_OK);

    /* To the other device, on this device's stream: one run. */
    calls_1d = plugin_case_fake_calls(c, peer_1d);
    assert_status(accel_copy_on_device(c->stream, b, 0, a, 0, sizeof(in)),
                  ACCEL_OK);
    assert_int_equal(plugin_case_fake_calls(c, peer_1d) - calls_1d, 1);
    assert_status(accel_copy_out(second.stream, out, b, 500), ACCEL_OK);
    assert_status(accel_stream_sync(second.stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof(in));

    /* From the other device, pitched, on the other device's stream. */
    assert_status(accel_copy_in(c->stream, a, back, 500), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    calls_nd = plugin_case_fake_calls(c, peer_nd != NULL ? peer_nd : peer_1d);
    assert_status(accel_copy_on_device_layout(second.stream, a, b, &rows),
                  ACCEL_OK);
    assert_int_equal(
        plugin_case_fake_calls(c, peer_nd != NULL ? peer_nd : peer_1d) - calls_nd,
        peer_nd != NULL ? 1 : rows.rows);
    assert_status(accel_copy_out(c->stream, out, a, 500), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 500; i++)
        assert_int_equal(out[i], i % 125 < 100 && i < 4 * 125 ? in[i] : 0u);

    assert_status(accel_free(c->device, a), ACCEL_OK);
    assert_status(accel_free(second.device, b), ACCEL_OK);
    accel_stream_destroy(second.stream);
    accel_device_close(second.device);
}

/* ---- stderr ---- */

void plugin_case_capture_stderr(struct plugin_case_stderr *capture,
                                const char *name)
{
    snprintf(capture->path, sizeof(capture->path),
             "/tmp/accel-%s-stderr-XXXXXX", name);
    capture->saved = dup(STDERR_FILENO);
    capture->capture = mkstemp(capture->path);
    assert_true(capture->saved >= 0 && capture->capture >= 0);
    fflush(stderr);
    assert_true(dup2(capture->capture, STDERR_FILENO) >= 0);
}

long plugin_case_stderr_bytes(struct plugin_case_stderr *capture)
{
    off_t size;

    fflush(stderr);
    dup2(capture->saved, STDERR_FILENO);
    close(capture->saved);
    size = lseek(capture->capture, 0, SEEK_END);
    close(capture->capture);
    unlink(capture->path);
    return (long)size;
}

/* ---- what only real drivers used to show (issue 20) ---- */

void plugin_case_check_stale_open_is_refused(struct plugin_case *c,
                                             const char *enter_call)
{
    uint64_t entered;
    struct plugin_case second = {.kind = c->kind};
    uint32_t mine[64], theirs[64], back[64];
    accel_stream *more[3];
    accel_ref ref, other;

    for (uint32_t i = 0; i < 64; i++) {
        mine[i] = 0x11110000u + i;
        theirs[i] = 0xdead0000u + i;
    }
    assert_status(accel_host_create(NULL, &second.host), ACCEL_OK);
    assert_status(
        accel_device_open(second.host, c->kind->plugin, 0, &second.device),
        ACCEL_OK);
    assert_status(accel_stream_create(second.device, &second.stream), ACCEL_OK);
    assert_status(accel_alloc(second.device, ACCEL_U32, 64, &other), ACCEL_OK);
    assert_status(accel_copy_in(second.stream, other, theirs, 64), ACCEL_OK);
    assert_status(accel_stream_sync(second.stream), ACCEL_OK);

    /*
     * The first open resets: the second's objects are gone, and the fake, as
     * a driver may, hands their handles and addresses to the first open's
     * new streams and memory (of the same size), which it makes now.
     */
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    for (int i = 0; i < 3; i++)
        assert_status(accel_stream_create(c->device, &more[i]), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, ref, mine, 64), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);

    /* The second open has not asked for its status: its next calls must not reach the driver. */
    entered = plugin_case_fake_calls(c, enter_call);
    assert_status(accel_copy_in(second.stream, other, theirs, 64),
                  ACCEL_ERR_DEVICE_LOST);
    assert_int_equal(plugin_case_fake_calls(c, enter_call), entered);
    assert_contains(accel_last_error(),
                    "another open of the device reset its context");
    assert_status(accel_device_status(second.device), ACCEL_ERR_DEVICE_LOST);

    /* The first open's data was not touched through the second's stale handles. */
    assert_status(accel_copy_out(c->stream, back, ref, 64), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_memory_equal(back, mine, sizeof(mine));
    /* The second's reset takes the new context; both work after it. */
    assert_status(accel_device_reset(second.device), ACCEL_OK);
    plugin_case_round_trip(&second, 100);
    plugin_case_round_trip(c, 100);
    for (int i = 0; i < 3; i++)
        accel_stream_destroy(more[i]);
    accel_stream_destroy(second.stream);
    accel_device_close(second.device);
    accel_host_destroy(second.host);
}

/* CPU time of the whole process, in nanoseconds: every thread's, the fake's included. */
static uint64_t process_cpu_ns(void)
{
    struct timespec now;

    assert_int_equal(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now), 0);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static uint64_t wall_ns(void)
{
    struct timespec now;

    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &now), 0);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A copy that takes the fake's delay (pinned source: one piece of stream work), enqueued. */
static void enqueue_slow_copy(struct plugin_case *c, uint32_t *pinned,
                              accel_ref ref)
{
    assert_status(
        accel_copy_to_device(c->stream, ref, 0, pinned, 64 * sizeof(uint32_t)),
        ACCEL_OK);
}

/* How much of a core a wait took: CPU time over wall time, in percent. */
static uint64_t share_of_a_core(uint64_t cpu_before, uint64_t wall_before)
{
    uint64_t cpu = process_cpu_ns() - cpu_before;
    uint64_t wall = wall_ns() - wall_before;

    assert_true(wall >= 100000000u); /* the fake's delay: the wait did wait */
    return cpu * 100u / wall;
}

void plugin_case_check_blocking_waits_use_no_core(struct plugin_case *c,
                                                  const char *delay_knob)
{
    uint32_t *pinned = NULL;
    accel_event *event = NULL;
    uint64_t cpu, wall;
    accel_ref ref;

    setenv(delay_knob, "200000", 1);
    plugin_case_open_fake_device(c);
    assert_status(
        accel_host_alloc(c->device, 64 * sizeof(uint32_t), (void **)&pinned),
        ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_U32, 64, &ref), ACCEL_OK);
    assert_status(accel_event_create(c->device, &event), ACCEL_OK);

    /* A spinning wait takes what it gets of a core (on a loaded machine, still a good part
     * of one); a blocking one next to nothing: a tenth of a core is a generous bound. */
    enqueue_slow_copy(c, pinned, ref);
    cpu = process_cpu_ns();
    wall = wall_ns();
    assert_status(
        accel_stream_wait(c->stream, ACCEL_WAIT_BLOCK, ACCEL_WAIT_FOREVER),
        ACCEL_OK);
    assert_true(share_of_a_core(cpu, wall) < 10);

    enqueue_slow_copy(c, pinned, ref);
    assert_status(accel_event_record(event, c->stream), ACCEL_OK);
    cpu = process_cpu_ns();
    wall = wall_ns();
    assert_status(accel_event_wait(event, ACCEL_WAIT_BLOCK, ACCEL_WAIT_FOREVER),
                  ACCEL_OK);
    assert_true(share_of_a_core(cpu, wall) < 10);

    accel_event_destroy(event);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
    accel_host_free(c->device, pinned);
}

void plugin_case_check_refused_reset_is_unrecoverable(struct plugin_case *c,
                                                      const char *fail_knob,
                                                      const char *refusals,
                                                      const char *reset_call)
{
    uint32_t *pinned = NULL;
    uint64_t resets;

    setenv(fail_knob, refusals, 1);
    plugin_case_open_fake_device(c);
    assert_status(accel_host_alloc(c->device, 4096, (void **)&pinned), ACCEL_OK);
    assert_true(plugin_case_fake_registered_bytes(c) >= 4096);

    resets = plugin_case_fake_calls(c, reset_call);
    assert_status(accel_device_reset(c->device), ACCEL_ERR_UNRECOVERABLE);
    assert_contains(accel_last_error(), reset_call);
    assert_contains(accel_last_error(), "cannot recover");
    /* Asked again, the plugin answers the same without asking the driver: never a loop. */
    assert_status(accel_device_reset(c->device), ACCEL_ERR_UNRECOVERABLE);
    assert_contains(accel_last_error(), reset_call);
    assert_int_equal(plugin_case_fake_calls(c, reset_call) - resets, 1);

    /* The driver refused to unregister the block before the failed reset: it is still pinned. */
    accel_host_free(c->device, pinned);
    assert_int_equal(plugin_case_fake_registered_bytes(c), 0);
}

/* What a callback was told, once it ran. */
struct told {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool ran;
    accel_status status;
};

static void tell(void *user, accel_status status)
{
    struct told *told = user;

    pthread_mutex_lock(&told->lock);
    told->ran = true;
    told->status = status;
    pthread_cond_broadcast(&told->cond);
    pthread_mutex_unlock(&told->lock);
}

/* Whether the callback ran within `ms` milliseconds; what it was told in *out_status. */
static bool told_within(struct told *told, unsigned ms, accel_status *out_status)
{
    struct timespec until;
    bool ran;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000u;
    until.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&told->lock);
    while (!told->ran &&
           pthread_cond_timedwait(&told->cond, &told->lock, &until) == 0)
        continue;
    ran = told->ran;
    *out_status = told->status;
    pthread_mutex_unlock(&told->lock);
    return ran;
}

void plugin_case_check_callback_after_a_fault_is_lost(struct plugin_case *c,
                                                      const char *module_path)
{
    struct told told = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                        false, ACCEL_OK};
    accel_module *module = plugin_case_load_module(c, module_path);
    float x[256], y[256];
    accel_status status = ACCEL_OK;
    accel_kernel *saxpy;
    accel_ref dx, dy;

    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    saxpy_inputs(c, x, y, &dx, &dy);
    plugin_case_launch_saxpy(c, saxpy, dx, dy, 256,
                             ACCEL_OK); /* faults when it runs */
    assert_status(accel_stream_add_callback(c->stream, tell, &told), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_ERR_DEVICE_LOST);
    /* The work before it failed: the callback must not be told it completed. */
    if (told_within(&told, 200, &status))
        assert_status(status, ACCEL_ERR_DEVICE_LOST);
    assert_status(accel_device_reset(c->device), ACCEL_OK);
    assert_true(told_within(&told, 10000, &status));
    assert_status(status, ACCEL_ERR_DEVICE_LOST);
    accel_module_unload(module);
}
