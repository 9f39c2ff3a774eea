/* What the conformance suites share: patterns, round trips, kernels. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite.h"

void fill_pattern(unsigned char *bytes, size_t count, unsigned seed)
{
    for (size_t i = 0; i < count; i++)
        bytes[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xffu);
}

void round_trip_bytes(struct conformance *c, void *dst, const void *src,
                      size_t bytes)
{
    accel_ref ref;

    assert_status(accel_alloc(c->device, ACCEL_BYTE, bytes, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, ref, 0, src, bytes), ACCEL_OK);
    assert_status(accel_copy_to_host(c->stream, dst, ref, 0, bytes), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

bool has_kernels(const struct conformance *c)
{
    return (c->info.props.caps & ACCEL_DEVICE_CAP_KERNELS) != 0;
}

void skip_without_kernels(const struct conformance *c)
{
    if (!has_kernels(c))
        skip_because(
            "the device has no ACCEL_DEVICE_CAP_KERNELS: kernel test skipped");
}

accel_module *load_examples(struct conformance *c)
{
    accel_module *module = NULL;

    skip_without_kernels(c);
    if (c->module_path == NULL || c->module_path[0] == '\0')
        skip_because(
            "no module image of kernels/examples.cu given (--module, or "
            "ACCEL_CONFORMANCE_MODULE): kernel test skipped");
    if (accel_module_load_file(c->device, c->module_path, &module) != ACCEL_OK)
        fail_msg("accel_module_load_file(%s): %s", c->module_path,
                 accel_last_error());
    return module;
}

void skip_without_entry(const struct conformance *c, unsigned slot,
                        const char *entry, const char *what)
{
    if (!c->plugin->table_read)
        return;
    if (!conf_plugin_has_entry(c->plugin, slot))
        skip_because("the plugin's table has no %s (optional): %s", entry, what);
}

/* y = a * x + y on n elements, checked against C; values keep every result exact. */
void run_saxpy(struct conformance *c, accel_kernel *saxpy, uint32_t n)
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
        accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                            ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
        accel_dim3 block = {256, 1, 1}, grid = {(n + 255) / 256, 1, 1};

        assert_status(accel_launch(c->stream, saxpy, grid, block, 0, args, 4),
                      ACCEL_OK);
    }
    assert_status(accel_copy_out(c->stream, out, dy, n), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] != a * x[i] + y[i])
            fail_msg("saxpy[%u] = %g, not %g", i, (double)out[i],
                     (double)(a * x[i] + y[i]));
    }
    assert_status(accel_free(c->device, dx), ACCEL_OK);
    assert_status(accel_free(c->device, dy), ACCEL_OK);
    free(x);
    free(y);
    free(out);
}

static const struct {
    const struct conf_test *tests;
    const size_t *count;
} device_areas[] = {
    {conf_copy_tests, &conf_copy_test_count},
    {conf_stream_tests, &conf_stream_test_count},
    {conf_kernel_tests, &conf_kernel_test_count},
};

size_t conf_device_test_count(void)
{
    size_t total = 0;

    for (size_t a = 0; a < sizeof(device_areas) / sizeof(device_areas[0]); a++)
        total += *device_areas[a].count;
    return total;
}

const struct conf_test *conf_device_test(size_t i)
{
    for (size_t a = 0; a < sizeof(device_areas) / sizeof(device_areas[0]); a++) {
        if (i < *device_areas[a].count)
            return &device_areas[a].tests[i];
        i -= *device_areas[a].count;
    }
    return NULL;
}
