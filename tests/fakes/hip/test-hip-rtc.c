/*
 * accel_module_compile on the HIP plugin through hiprtc. Debian 12's HIP
 * runtime (ROCm 5.2, libamdhip64.so.5, which holds hiprtc) compiles with no
 * GPU present, so the test runs against it where it is installed, over the
 * fake HIP runtime for the device: the code object comes back for the
 * device's target ID, with the source's kernels, and goes down the normal
 * module path (where the fake, which runs CPU images only, refuses it).
 * Elsewhere the hiprtc tests skip with the reason.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_case.h"
#include "support.h"

static const char *const fake_knobs[] = {"ACCEL_HIPRTC_LIBRARY",
                                         "ACCEL_CACHE_DIR", "ACCEL_CACHE",
                                         "FAKE_HIP_ARCH", NULL};

static const struct plugin_case_kind hip_kind = {
    .plugin = "hip",
    .plugin_path = HIP_PLUGIN_PATH,
    .library_env = "ACCEL_HIP_LIBRARY",
    .fake_path = FAKE_HIP_PATH,
    .calls_symbol = "fake_hip_calls",
    .registered_symbol = "fake_hip_registered_bytes",
    .unregister_call = "hipHostUnregister",
    .knobs = fake_knobs,
};

static char *cache_dir;

static int setup(void **state)
{
    int result = plugin_case_setup(state, &hip_kind);
    cache_dir = support_make_temp_dir();
    setenv("ACCEL_CACHE_DIR", cache_dir, 1);
    return result;
}

static int teardown(void **state)
{
    support_remove_dir(cache_dir);
    cache_dir = NULL;
    return plugin_case_teardown(state);
}

static void skip_without_hiprtc(void)
{
    if (HIPRTC_PATH[0] == '\0' || access(HIPRTC_PATH, R_OK) != 0) {
        print_message(
            "no HIP runtime with hiprtc (libamdhip64.so.5, libhiprtc.so.6) on "
            "this machine: test skipped\n");
        skip();
    }
    if (getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL) {
        print_message("hiprtc under valgrind takes minutes: test skipped\n");
        skip();
    }
    setenv("ACCEL_HIPRTC_LIBRARY", HIPRTC_PATH, 1);
}

/* The one cache entry's image, after the entry's 80-byte header. */
static char *cached_image(size_t *out_size)
{
    char command[4200];
    snprintf(command, sizeof command, "ls %s/*.kc", cache_dir);
    FILE *list = popen(command, "r");
    assert_non_null(list);
    char path[4096] = "";
    assert_non_null(fgets(path, sizeof path, list));
    pclose(list);
    path[strcspn(path, "\n")] = '\0';
    size_t size = 0;
    char *entry = support_read_file(path, &size);
    assert_true(size > 80 + sizeof(Elf64_Ehdr));
    *out_size = size - 80;
    char *image = malloc(*out_size);
    assert_non_null(image);
    memcpy(image, entry + 80, *out_size);
    free(entry);
    return image;
}

static bool holds(const char *data, size_t size, const char *text)
{
    return memmem(data, size, text, strlen(text)) != NULL;
}

static void
test_hiprtc_makes_a_code_object_for_the_target_with_the_kernels(void **state)
{
    struct plugin_case *c = *state;
    skip_without_hiprtc();
    setenv("FAKE_HIP_ARCH", "gfx90a:sramecc+:xnack-", 1);
    plugin_case_open_fake_device(c);
    size_t size = 0;
    char *source = support_read_file(EXAMPLES_CU_PATH, &size);
    char *text = strndup(source, size);
    accel_module *module = NULL;
    accel_status status = accel_module_compile(c->device, text, NULL, &module);
    if (status != ACCEL_ERR_MODULE)
        fail_msg("%s: %s\n%s", accel_status_name(status), accel_last_error(),
                 accel_last_build_log());
    assert_contains(accel_last_error(), "hipModuleLoadData failed");
    char *image = cached_image(&size);
    Elf64_Ehdr header;
    memcpy(&header, image, sizeof header);
    assert_memory_equal(header.e_ident, ELFMAG, SELFMAG);
    assert_int_equal(header.e_machine, 224 /* EM_AMDGPU */);
    assert_true(holds(image, size, "saxpy.kd"));
    assert_true(holds(image, size, "vadd.kd"));
    assert_true(holds(image, size, "transpose_f32.kd"));
    assert_true(holds(image, size, "gfx90a"));
    free(image);
    free(text);
    free(source);
}

static void test_hiprtc_compile_error_returns_its_log(void **state)
{
    struct plugin_case *c = *state;
    skip_without_hiprtc();
    plugin_case_open_fake_device(c);
    accel_module *module = NULL;
    assert_status(accel_module_compile(
                      c->device, "#include <accel/kernel.h>\n\nint broken = ;\n",
                      NULL, &module),
                  ACCEL_ERR_MODULE);
    /* ROCm 5.2 names the source CompileSource, whatever it is told. */
    assert_contains(accel_last_build_log(), ":3:14: error");
}

static void test_missing_hiprtc_is_not_supported_with_the_paths_tried(void **state)
{
    struct plugin_case *c = *state;
    setenv("ACCEL_HIPRTC_LIBRARY", "/nonexistent/libhiprtc.so.6", 1);
    plugin_case_open_fake_device(c);
    accel_module *module = NULL;
    assert_status(accel_module_compile(c->device, "#include <accel/kernel.h>\n",
                                       NULL, &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(accel_last_error(), "/nonexistent/libhiprtc.so.6");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_hiprtc_makes_a_code_object_for_the_target_with_the_kernels,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_hiprtc_compile_error_returns_its_log, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_missing_hiprtc_is_not_supported_with_the_paths_tried, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
