/*
 * Two-way negotiation, the host's side: this executable links libaccel's
 * sources built as the next minor's host would be (host_minor raised by
 * one, a services struct one field larger), and a 1.0 plugin (abi_minor 0,
 * its table ending with the 1.0 entries) must load on it and work. The
 * plugin names its device after what the services held, which shows that
 * the host it ran on really was raised.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include <accel/accel.h>

#include "host.h"
#include "loader.h"
#include "status.h"
#include "support.h"

static void test_plugin_of_1_0_loads_on_the_next_minors_host(void **state)
{
    (void)state;
    _Static_assert(ACCEL__HOST_MINOR == ACCEL_DRIVER_ABI_MINOR + 1,
                   "built as the next minor's host");
    char *dir = support_make_temp_dir();
    support_install_fixture(dir, "oldminor", "oldminor");
    accel_host_options options = {.plugin_path = dir};
    accel_host *host = NULL;
    assert_int_equal(accel_host_create(&options, &host), ACCEL_OK);
    support_expect_plugin(host, "oldminor", ACCEL_PLUGIN_LOADED);

    accel_device *device = NULL;
    accel_device_info info;
    assert_int_equal(accel_device_open(host, "oldminor", 0, &device), ACCEL_OK);
    assert_int_equal(accel_device_info_get(device, &info), ACCEL_OK);
    char expected[96];
    snprintf(expected, sizeof expected,
             "host minor %d privilege 0 future present",
             ACCEL_DRIVER_ABI_MINOR + 1);
    assert_string_equal(info.props.name, expected);

    accel_stream *stream = NULL;
    accel_ref ref;
    uint32_t in[8] = {8, 7, 6, 5, 4, 3, 2, 1}, out[8] = {0};
    assert_int_equal(accel_stream_create(device, &stream), ACCEL_OK);
    assert_int_equal(accel_alloc(device, ACCEL_U32, 8, &ref), ACCEL_OK);
    assert_int_equal(accel_copy_in(stream, ref, in, 8), ACCEL_OK);
    assert_int_equal(accel_copy_out(stream, out, ref, 8), ACCEL_OK);
    assert_int_equal(accel_stream_sync(stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_int_equal(accel_free(device, ref), ACCEL_OK);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
    support_remove_dir(dir);
}

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_of_1_0_loads_on_the_next_minors_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
