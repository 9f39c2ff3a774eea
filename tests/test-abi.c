/*
 * The plugin ABI's promises, tried from both sides: the host's services
 * grow and plugins built against either side's header still meet; a
 * plugin whose devices run no kernels may leave the kernel entries NULL;
 * the pool's pages fit a small device; host functions may run inline.
 *
 * Fixture plugins (tests/fixtures) are installed into a scratch directory
 * under the names the tests want; the null and CUDA plugins are opened
 * directly with services of a 1.0 host.
 */
#include "support.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "os.h"

struct scratch {
    char *dir;
    accel_host *host;
    accel_device *device;
};

static int setup(void **state)
{
    struct scratch *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    support_clean_environment();
    s->dir = support_make_temp_dir();
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct scratch *s = *state;
    accel_device_close(s->device);
    accel_host_destroy(s->host);
    support_remove_dir(s->dir);
    free(s);
    return 0;
}

/* A host over the fixture `variant` installed as `variant`, and its device 0. */
static void open_fixture(struct scratch *s, const char *variant)
{
    support_install_fixture(s->dir, variant, variant);
    accel_host_options options = {.plugin_path = s->dir};
    assert_status(accel_host_create(&options, &s->host), ACCEL_OK);
    support_expect_plugin(s->host, variant, ACCEL_PLUGIN_LOADED);
    assert_status(accel_device_open(s->host, variant, 0, &s->device), ACCEL_OK);
}

/* `count` bytes to the device and back through a new stream. */
static void round_trip(accel_device *device, accel_ref ref, size_t count)
{
    unsigned char *out = malloc(count), *back = calloc(1, count);
    accel_stream *stream = NULL;
    assert_non_null(out);
    assert_non_null(back);
    for (size_t i = 0; i < count; i++)
        out[i] = (unsigned char)(i * 7 + 3);
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    assert_status(accel_copy_to_device(stream, ref, 0, out, count), ACCEL_OK);
    assert_status(accel_copy_to_host(stream, back, ref, 0, count), ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    assert_memory_equal(out, back, count);
    accel_stream_destroy(stream);
    free(out);
    free(back);
}

/* ---- devices without kernels ---- */

static void
test_plugin_without_kernel_entries_loads_and_refuses_modules(void **state)
{
    struct scratch *s = *state;
    open_fixture(s, "nokernels");
    accel_module *module = (accel_module *)&module;
    static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};
    assert_status(accel_module_load(s->device, image, sizeof image, &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_null(module);
    assert_contains(accel_last_error(), "its plugin has no kernel entries");
    /* Everything else the device does still works. */
    accel_ref ref;
    assert_status(accel_alloc(s->device, ACCEL_BYTE, 4096, &ref), ACCEL_OK);
    round_trip(s->device, ref, 4096);
    assert_status(accel_free(s->device, ref), ACCEL_OK);
}

static void
test_module_load_without_the_kernel_cap_is_answered_by_the_host(void **state)
{
    /* The good fixture has kernel entries but its devices lack the cap:
     * the host answers, and the fixture's own refusal is never reached. */
    struct scratch *s = *state;
    open_fixture(s, "good");
    accel_module *module = NULL;
    static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};
    assert_status(accel_module_load(s->device, image, sizeof image, &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(accel_last_error(), "lacks ACCEL_DEVICE_CAP_KERNELS");
}

/* ---- the pool on a small device ---- */

static void test_small_allocations_fit_a_device_of_one_mebibyte(void **state)
{
    struct scratch *s = *state;
    open_fixture(s, "small");
    accel_device_info info;
    assert_status(accel_device_info_get(s->device, &info), ACCEL_OK);
    assert_int_equal(info.props.total_memory, 1u << 20);

    accel_ref small, more[3];
    assert_status(accel_alloc(s->device, ACCEL_BYTE, 100, &small), ACCEL_OK);
    round_trip(s->device, small, 100);
    /* Class pages are a quarter of the device: four classes at once. */
    for (int i = 0; i < 3; i++)
        assert_status(accel_alloc(s->device, ACCEL_BYTE, 512u << i, &more[i]),
                      ACCEL_OK);
    accel_memory_stats stats = support_memory_stats(s->device);
    assert_int_equal(stats.reserved_bytes, info.props.total_memory);
    for (int i = 0; i < 3; i++)
        assert_status(accel_free(s->device, more[i]), ACCEL_OK);
    assert_status(accel_free(s->device, small), ACCEL_OK);
}

static void test_misaligned_device_memory_is_a_plugin_abi_error(void **state)
{
    struct scratch *s = *state;
    open_fixture(s, "misaligned");
    accel_ref ref;
    assert_status(accel_alloc(s->device, ACCEL_BYTE, 100, &ref),
                  ACCEL_ERR_PLUGIN_ABI);
    assert_contains(accel_last_error(), "not aligned to 256 bytes");
    /* The page went back: nothing is left reserved, and the device lives. */
    assert_int_equal(support_memory_stats(s->device).reserved_bytes, 0);
    assert_status(accel_device_status(s->device), ACCEL_OK);
}

/* ---- host functions ---- */

static void count_call(void *user, accel_status status)
{
    assert_status(status, ACCEL_OK);
    (*(int *)user)++;
}

static void
test_host_function_run_inline_by_the_plugin_delivers_the_callback(void **state)
{
    /* The fixture runs fn inside host_func, on the caller's thread. */
    struct scratch *s = *state;
    open_fixture(s, "good");
    accel_stream *stream = NULL;
    int calls = 0;
    assert_status(accel_stream_create(s->device, &stream), ACCEL_OK);
    for (int i = 0; i < 3; i++)
        assert_status(accel_stream_add_callback(stream, count_call, &calls),
                      ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    accel_stream_destroy(stream);
    accel_device_close(s->device);
    s->device = NULL;
    assert_int_equal(calls, 3);
}

/* ---- the services, both ways ---- */

static void
test_plugin_expecting_newer_services_reads_only_what_is_there(void **state)
{
    struct scratch *s = *state;
    open_fixture(s, "services");
    accel_device_info info;
    assert_status(accel_device_info_get(s->device, &info), ACCEL_OK);
    char expected[96];
    snprintf(expected, sizeof expected,
             "host minor %d privilege 0 future absent", ACCEL_DRIVER_ABI_MINOR);
    assert_string_equal(info.props.name, expected);
}

/*
 * Two-way negotiation, the plugin's side: a plugin built for the next minor
 * (its table says ACCEL_DRIVER_ABI_MINOR + 1 and has one entry more) loads
 * on this host, works, and sees this host's minor in the services.
 */
static void
test_plugin_of_the_next_minor_loads_and_sees_the_hosts_minor(void **state)
{
    struct scratch *s = *state;
    open_fixture(s, "nextminor");
    accel_device_info info;
    assert_status(accel_device_info_get(s->device, &info), ACCEL_OK);
    char expected[96];
    snprintf(expected, sizeof expected,
             "host minor %d privilege 0 future absent", ACCEL_DRIVER_ABI_MINOR);
    assert_string_equal(info.props.name, expected);
    accel_ref ref;
    uint32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
    accel_stream *stream = NULL;
    assert_status(accel_stream_create(s->device, &stream), ACCEL_OK);
    assert_status(accel_alloc(s->device, ACCEL_U32, 4, &ref), ACCEL_OK);
    assert_status(accel_copy_in(stream, ref, in, 4), ACCEL_OK);
    assert_status(accel_copy_out(stream, out, ref, 4), ACCEL_OK);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    assert_memory_equal(in, out, sizeof in);
    assert_status(accel_free(s->device, ref), ACCEL_OK);
    accel_stream_destroy(stream);
}

/* The privilege bits: elevated, and the opt-in only with it. */
static void test_services_tell_elevation_and_the_programs_opt_in(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "services", "services");
    struct accel__ids ids;
    accel__ids_current(&ids);
    if (accel__ids_elevated(&ids)) {
        print_message("skipped: this process itself runs elevated\n");
        skip();
    }
    static const struct {
        bool elevated, opt_in;
        const char *privilege;
    } cases[] = {
        {false, true, "privilege 0 "},
        {true, false, "privilege 1 "},
        {true, true, "privilege 3 "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct accel__ids as = ids;
        if (cases[i].elevated)
            as.ruid = ids.euid == 1000 ? 1001 : 1000;
        accel_host_options options = {
            .plugin_path = s->dir,
            .vendor_runtimes_when_elevated = cases[i].opt_in};
        accel_host *host = NULL;
        struct accel_device_props props;
        assert_status(accel__host_create_as(&options, &as, &host), ACCEL_OK);
        assert_status(accel_host_device_props(host, "services", 0, &props),
                      ACCEL_OK);
        assert_contains(props.name, cases[i].privilege);
        accel_host_destroy(host);
    }
}

/* Services as a 1.0 host gives them: the 1.0 fields only. */
static const char *getenv_for_plugin(const char *name)
{
    return getenv(name);
}

static void services_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status services_set_error(accel_status status, const char *fmt, ...)
{
    (void)fmt;
    return status;
}

/* Open the plugin at `path` with 1.0 services; its device count. */
static uint32_t open_with_v1_0_services(const char *path)
{
    struct accel_host_services services = {
        .struct_size = ACCEL_HOST_SERVICES_V1_0_SIZE,
        .version = ACCEL_HOST_SERVICES_VERSION,
        .log = services_log,
        .set_error = services_set_error,
        .getenv = getenv_for_plugin,
    };
    /* Poison what a 1.0 host does not have: a plugin must not read it. */
    services.host_minor = 0xdeadu;
    services.privilege = 0xffffffffu;
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(library);
    const struct accel_driver_v1 *table = dlsym(library, ACCEL_DRIVER_SYMBOL);
    assert_non_null(table);
    accel_drv_plugin *plugin = NULL;
    assert_status(table->plugin_open(&services, &plugin), ACCEL_OK);
    uint32_t count = 0;
    const char *reason = NULL;
    assert_status(table->device_count(plugin, &count, &reason), ACCEL_OK);
    if (count == 0)
        print_message("no device: %s\n", reason ? reason : "(no reason)");
    table->plugin_close(plugin);
    dlclose(library);
    return count;
}

static void test_null_plugin_accepts_services_of_a_1_0_host(void **state)
{
    (void)state;
    assert_true(open_with_v1_0_services(NULL_PLUGIN_PATH) >= 1);
}

static void test_gpu_plugin_accepts_services_of_a_1_0_host(void **state)
{
    (void)state;
#ifdef CUDA_PLUGIN_PATH
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    uint32_t count = open_with_v1_0_services(CUDA_PLUGIN_PATH);
    unsetenv("ACCEL_CUDA_LIBRARY");
    assert_true(count >= 1);
#else
    print_message("skipped: the CUDA plugin and its fake are not built\n");
    skip();
#endif
}

/* Smaller than a 1.0 host's: there is no way even to say why. */
static void test_services_smaller_than_1_0_are_refused(void **state)
{
    (void)state;
    struct accel_host_services services = {
        .struct_size = ACCEL_HOST_SERVICES_V1_0_SIZE - 8,
        .version = ACCEL_HOST_SERVICES_VERSION,
        .log = services_log,
        .set_error = services_set_error,
    };
    void *library = dlopen(NULL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(library);
    const struct accel_driver_v1 *table = dlsym(library, ACCEL_DRIVER_SYMBOL);
    accel_drv_plugin *plugin = NULL;
    assert_status(table->plugin_open(&services, &plugin),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_null(plugin);
    dlclose(library);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_plugin_without_kernel_entries_loads_and_refuses_modules),
        T(test_module_load_without_the_kernel_cap_is_answered_by_the_host),
        T(test_small_allocations_fit_a_device_of_one_mebibyte),
        T(test_misaligned_device_memory_is_a_plugin_abi_error),
        T(test_host_function_run_inline_by_the_plugin_delivers_the_callback),
        T(test_plugin_of_the_next_minor_loads_and_sees_the_hosts_minor),
        T(test_plugin_expecting_newer_services_reads_only_what_is_there),
        T(test_services_tell_elevation_and_the_programs_opt_in),
        T(test_null_plugin_accepts_services_of_a_1_0_host),
        T(test_gpu_plugin_accepts_services_of_a_1_0_host),
        T(test_services_smaller_than_1_0_are_refused),
    };
#undef T
    return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
