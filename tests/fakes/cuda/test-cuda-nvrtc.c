/*
 * accel_module_compile on the CUDA plugin: NVRTC's path over a fake NVRTC
 * (tests/fakes/cuda/fake_nvrtc.c, the system C compiler behind NVRTC's
 * calls) and the fake CUDA driver in every build; and with the real
 * libnvrtc where the machine has one: PTX whose .entry names and parameter
 * counts are the source's, handed to the driver by the module path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_case.h"
#include "support.h"

static const char *const fake_knobs[] = {"ACCEL_NVRTC_LIBRARY",
                                         "ACCEL_CACHE_DIR", "ACCEL_CACHE",
                                         "FAKE_NVRTC_VERSION", NULL};

static const struct plugin_case_kind cuda_kind = {
    .plugin = "cuda",
    .plugin_path = CUDA_PLUGIN_PATH,
    .library_env = "ACCEL_CUDA_LIBRARY",
    .fake_path = FAKE_CUDA_PATH,
    .calls_symbol = "fake_cuda_calls",
    .registered_symbol = "fake_cuda_registered_bytes",
    .unregister_call = "cuMemHostUnregister",
    .knobs = fake_knobs,
};

static char *cache_dir;

static int setup(void **state)
{
    int result = plugin_case_setup(state, &cuda_kind);
    cache_dir = support_make_temp_dir();
    setenv("ACCEL_CACHE_DIR", cache_dir, 1);
    setenv("ACCEL_NVRTC_LIBRARY", FAKE_NVRTC_PATH, 1);
    return result;
}

static int teardown(void **state)
{
    support_remove_dir(cache_dir);
    cache_dir = NULL;
    return plugin_case_teardown(state);
}

static const char saxpy_source[] = "#include <accel/kernel.h>\n"
                                   "ACCEL_KERNEL(saxpy, (uint32_t, n), (float, "
                                   "a), (const float *, x), (float *, y))\n"
                                   "{\n"
                                   "    uint64_t i = accel_global_idx_x();\n"
                                   "    if (i < n)\n"
                                   "        y[i] = a * x[i] + y[i] + BIAS;\n"
                                   "}\n";

static void
test_source_compiles_through_nvrtc_for_the_device_arch_and_runs(void **state)
{
    struct plugin_case *c = *state;
    plugin_case_open_fake_device(c);
    accel_module *module = NULL;
    accel_status status = accel_module_compile(c->device, saxpy_source,
                                               "-DBIAS=1.0f", &module);
    if (status != ACCEL_OK)
        fail_msg("%s\n%s", accel_last_error(), accel_last_build_log());
    /* The fake's log starts with the options it got: the fake GPU is 9.0. */
    assert_contains(accel_last_build_log(),
                    "--gpu-architecture=compute_90 -DBIAS=1.0f");
    accel_kernel *saxpy = NULL;
    assert_status(accel_kernel_get(module, "saxpy", &saxpy), ACCEL_OK);
    float x[256], y[256];
    for (int i = 0; i < 256; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    accel_ref dx, dy;
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->device, ACCEL_F32, 256, &dy), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dx, x, 256), ACCEL_OK);
    assert_status(accel_copy_in(c->stream, dy, y, 256), ACCEL_OK);
    plugin_case_launch_saxpy(c, saxpy, dx, dy, 256, ACCEL_OK);
    assert_status(accel_copy_out(c->stream, y, dy, 256), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 256; i++)
        assert_float_equal(y[i], 2.0f * (float)i + 2.0f, 1e-5);
    accel_free(c->device, dx);
    accel_free(c->device, dy);
    accel_module_unload(module);
}

static void test_nvrtc_compile_error_returns_its_log(void **state)
{
    struct plugin_case *c = *state;
    plugin_case_open_fake_device(c);
    accel_module *module = NULL;
    assert_status(accel_module_compile(
                      c->device, "#include <accel/kernel.h>\n\nint broken = ;\n",
                      NULL, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    assert_contains(accel_last_build_log(), "kernel.c:3:");
    assert_contains(accel_last_error(), "accel_last_build_log");
}

static void test_missing_nvrtc_is_not_supported_with_the_paths_tried(void **state)
{
    struct plugin_case *c = *state;
    setenv("ACCEL_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", 1);
    plugin_case_open_fake_device(c);
    accel_module *module = NULL;
    assert_status(
        accel_module_compile(c->device, saxpy_source, "-DBIAS=0", &module),
        ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(accel_last_error(), "/nonexistent/libnvrtc.so.13");
}

/* ---- the real NVRTC ---- */

/* The one cache entry's image (the PTX), after the entry's 80-byte header. */
static char *cached_image(void)
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
    assert_true(size > 80);
    char *ptx = strndup(entry + 80, size - 80);
    free(entry);
    return ptx;
}

/* The number of parameters of `.entry name(`, or -1 when there is none. */
static int ptx_entry_params(const char *ptx, const char *name)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    const char *at = strstr(ptx, pattern);
    if (at == NULL)
        return -1;
    const char *end = strchr(at, ')');
    int count = 0;
    for (const char *p = strstr(at, ".param"); p != NULL && p < end;
         p = strstr(p + 1, ".param"))
        count++;
    return count;
}

static void test_real_nvrtc_makes_ptx_with_the_sources_entries(void **state)
{
    struct plugin_case *c = *state;
    if (REAL_NVRTC_PATH[0] == '\0' || access(REAL_NVRTC_PATH, R_OK) != 0) {
        print_message(
            "no libnvrtc (CUDA toolkit) on this machine: test skipped\n");
        skip();
    }
    if (getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL) {
        print_message(
            "the real NVRTC under valgrind takes minutes: test skipped\n");
        skip();
    }
    setenv("ACCEL_NVRTC_LIBRARY", REAL_NVRTC_PATH, 1);
    /* PTX as NVRTC wrote it: no nvJitLink, wherever the machine has one. */
    setenv("ACCEL_NVJITLINK_LIBRARY", "/nonexistent/libnvJitLink.so.13", 1);
    plugin_case_open_fake_device(c);
    size_t size = 0;
    char *source = support_read_file(EXAMPLES_CU_PATH, &size);
    char *text = strndup(source, size);
    accel_module *module = NULL;
    /* The PTX goes down the normal module path to cuModuleLoadDataEx, where
     * the fake driver, which runs CPU images only, refuses it as PTX. */
    accel_status status = accel_module_compile(c->device, text, NULL, &module);
    if (status != ACCEL_ERR_MODULE)
        fail_msg("%s: %s\n%s", accel_status_name(status), accel_last_error(),
                 accel_last_build_log());
    assert_contains(accel_last_error(), "CUDA_ERROR_INVALID_PTX");
    char *ptx = cached_image();
    assert_contains(ptx, ".target sm_90");
    assert_int_equal(ptx_entry_params(ptx, "empty"), 0);
    assert_int_equal(ptx_entry_params(ptx, "saxpy"), 4);
    assert_int_equal(ptx_entry_params(ptx, "vadd"), 4);
    assert_int_equal(ptx_entry_params(ptx, "transpose_f32"), 6);
    assert_int_equal(ptx_entry_params(ptx, "no_such_kernel"), -1);
    free(ptx);
    free(text);
    free(source);
}

/* The one cache entry's image, bytes as they are. */
static unsigned char *cached_bytes(size_t *out_size)
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
    assert_true(size > 80 + 64);
    unsigned char *image = malloc(size - 80);
    assert_non_null(image);
    memcpy(image, entry + 80, size - 80);
    free(entry);
    *out_size = size - 80;
    return image;
}

/*
 * With the real nvJitLink too, the image is a cubin for the device's sm_90:
 * an ELF of machine EM_CUDA (190) holding the kernels' code, which the
 * fake driver (CPU images only) then refuses.
 */
static void test_real_nvjitlink_links_the_ptx_into_a_cubin(void **state)
{
    struct plugin_case *c = *state;
    if (REAL_NVRTC_PATH[0] == '\0' || access(REAL_NVRTC_PATH, R_OK) != 0 ||
        REAL_NVJITLINK_PATH[0] == '\0' || access(REAL_NVJITLINK_PATH, R_OK) != 0) {
        print_message("no libnvrtc and libnvJitLink (CUDA toolkit) on this "
                      "machine: test skipped\n");
        skip();
    }
    if (getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL) {
        print_message(
            "the real NVRTC under valgrind takes minutes: test skipped\n");
        skip();
    }
    setenv("ACCEL_NVRTC_LIBRARY", REAL_NVRTC_PATH, 1);
    setenv("ACCEL_NVJITLINK_LIBRARY", REAL_NVJITLINK_PATH, 1);
    plugin_case_open_fake_device(c);
    size_t size = 0;
    char *source = support_read_file(EXAMPLES_CU_PATH, &size);
    char *text = strndup(source, size);
    accel_module *module = NULL;
    accel_status status = accel_module_compile(c->device, text, NULL, &module);
    if (status != ACCEL_ERR_MODULE)
        fail_msg("%s: %s\n%s", accel_status_name(status), accel_last_error(),
                 accel_last_build_log());
    assert_null(module);
    unsigned char *image = cached_bytes(&size);
    assert_memory_equal(image, "\177ELF", 4);
    assert_int_equal(image[18] | image[19] << 8, 190); /* e_machine: EM_CUDA */
    assert_non_null(memmem(image, size, "saxpy", 5));
    assert_non_null(memmem(image, size, "transpose_f32", 13));
    assert_null(memmem(image, size, ".target sm_", 11)); /* not PTX */
    free(image);
    free(text);
    free(source);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_source_compiles_through_nvrtc_for_the_device_arch_and_runs,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_real_nvjitlink_links_the_ptx_into_a_cubin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvrtc_compile_error_returns_its_log,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_missing_nvrtc_is_not_supported_with_the_paths_tried, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_real_nvrtc_makes_ptx_with_the_sources_entries, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
