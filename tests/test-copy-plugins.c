/*
 * Copies between devices of two plugins (accel.h, accel_copy_on_device):
 * the bytes go through host memory, each side by the host's own transfer on
 * its device, and the copy has completed on return.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

struct two_plugins {
    char *dir;
    accel_host *host;
    accel_device *cpu, *other;
    accel_stream *cpu_stream, *other_stream;
};

static int setup(void **state)
{
    struct two_plugins *t = calloc(1, sizeof *t);
    assert_non_null(t);
    support_clean_environment();
    t->dir = support_make_temp_dir();
    support_copy_file(NULL_PLUGIN_PATH, t->dir, "accel-plugin-null.so");
    support_install_fixture(t->dir, "good", "good");
    accel_host_options options = accel_host_options_default();
    options.plugin_path = t->dir;
    assert_status(accel_host_create(&options, &t->host), ACCEL_OK);
    assert_status(accel_device_open(t->host, "null", 0, &t->cpu), ACCEL_OK);
    assert_status(accel_device_open(t->host, "good", 0, &t->other), ACCEL_OK);
    assert_status(accel_stream_create(t->cpu, &t->cpu_stream), ACCEL_OK);
    assert_status(accel_stream_create(t->other, &t->other_stream), ACCEL_OK);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct two_plugins *t = *state;
    accel_stream_destroy(t->cpu_stream);
    accel_stream_destroy(t->other_stream);
    accel_device_close(t->cpu);
    accel_device_close(t->other);
    accel_host_destroy(t->host);
    support_remove_dir(t->dir);
    free(t);
    return 0;
}

static void test_copy_between_two_plugins_arrives_both_ways(void **state)
{
    struct two_plugins *t = *state;
    uint32_t in[1024], out[1024];
    for (uint32_t i = 0; i < 1024; i++)
        in[i] = i * 2654435761u;
    accel_ref on_cpu, on_other;
    assert_status(accel_alloc(t->cpu, ACCEL_U32, 1024, &on_cpu), ACCEL_OK);
    assert_status(accel_alloc(t->other, ACCEL_U32, 1024, &on_other), ACCEL_OK);
    assert_status(accel_copy_in(t->cpu_stream, on_cpu, in, 1024), ACCEL_OK);

    /* Into the other plugin's device, on its stream, at an offset. */
    assert_status(accel_copy_on_device(t->other_stream, on_other, 64, on_cpu, 0,
                                       4096 - 64),
                  ACCEL_OK);
    memset(out, 0, sizeof out);
    assert_status(accel_copy_out(t->other_stream, out, on_other, 1024), ACCEL_OK);
    assert_status(accel_stream_sync(t->other_stream), ACCEL_OK);
    assert_memory_equal((char *)out + 64, in, 4096 - 64);

    /* Back, on the CPU device's stream: the stream's device is the source. */
    assert_status(accel_copy_on_device(t->cpu_stream, on_other, 0, on_cpu, 4, 8),
                  ACCEL_OK);
    assert_status(accel_copy_out(t->other_stream, out, on_other, 1024), ACCEL_OK);
    assert_status(accel_stream_sync(t->other_stream), ACCEL_OK);
    assert_int_equal(out[0], in[1]);
    assert_int_equal(out[1], in[2]);

    /* A pitched layout between two plugins is refused, with the reason. */
    struct accel_copy_layout pitched = {
        .row_bytes = 8, .rows = 2, .src_pitch = 16, .dst_pitch = 16};
    assert_status(accel_copy_on_device_layout(t->other_stream, on_other, on_cpu,
                                              &pitched),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(accel_last_error(), "row by row");

    /* A freed source is the ref's error, not a crash. */
    assert_status(accel_free(t->cpu, on_cpu), ACCEL_OK);
    assert_status(accel_copy_on_device(t->other_stream, on_other, 0, on_cpu, 0, 4),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_free(t->other, on_other), ACCEL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_copy_between_two_plugins_arrives_both_ways, setup, teardown),
    };
    return cmocka_run_group_tests_name("copy-plugins", tests, NULL, NULL);
}
