/*
 * accel_module_compile in a process with elevated privileges: the kernel
 * cache is neither read nor written, and the null plugin ignores ACCEL_CC
 * (a compiler named by the caller's environment would run with the
 * program's privileges) and takes its compiler from /usr/bin or /bin. The
 * privileged process is presented to the host through its internal ids
 * (accel__host_create_as), as in test-vendor-privilege.
 */
#include "compile_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "os.h"
#include "status.h"

static accel_device *open_as(const struct accel__ids *ids, accel_host **out_host)
{
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    accel_device *device = NULL;
    assert_status(accel__host_create_as(&options, ids, out_host), ACCEL_OK);
    assert_status(accel_device_open(*out_host, "null", 0, &device), ACCEL_OK);
    return device;
}

static void test_elevated_process_uses_no_cache_and_ignores_accel_cc(void **state)
{
    struct compile_case *c = *state;
    if (access("/usr/bin/cc", X_OK) != 0 && access("/usr/bin/gcc", X_OK) != 0 &&
        access("/usr/bin/clang", X_OK) != 0) {
        print_message("no C compiler in /usr/bin: skipped\n");
        skip();
    }
    struct accel__ids ids;
    accel__ids_current(&ids);
    ids.ruid = ids.euid == 1000 ? 1001 : 1000;
    accel_host *host = NULL;
    accel_device *device = open_as(&ids, &host);
    for (int i = 0; i < 2; i++) {
        accel_module *module = NULL;
        accel_status status = accel_module_compile(device, SAXPY_SOURCE,
                                                   "-DSAXPY_BIAS=0", &module);
        if (status != ACCEL_OK)
            fail_msg("%s\n%s", accel_last_error(), accel_last_build_log());
        accel_module_unload(module);
    }
    /* The wrapper never ran, and the cache directory was not even made. */
    assert_int_equal(compile_case_runs(c), 0);
    assert_int_equal(access(c->cache, F_OK), -1);
    accel_device_close(device);
    accel_host_destroy(host);

    /* The same process, not elevated: the wrapper and the cache are used. */
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 1);
    assert_int_equal(compile_case_entries(c, NULL, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_elevated_process_uses_no_cache_and_ignores_accel_cc,
            compile_case_setup, compile_case_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
