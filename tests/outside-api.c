/*
 * Tracing, the error-detail format, native handles and rank info checked
 * from outside: from README.md ("Tracing", "Using the library", "Ranks and
 * device binding") and include/accel/accel.h alone. ACCEL_TRACE is read at
 * the process's first host, so main sets it before any test runs; the
 * cases about a trace file that cannot be written run in children made
 * before this process has any host.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <accel/comm.h>

#include "support.h"

static char *trace_dir;
static char *trace_path;

static void env_base(void)
{
    support_clean_environment();
    /* Read once, at this process's first host. */
    setenv("ACCEL_TRACE", trace_path, 1);
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH ":" COMM_HOST_PLUGIN_PATH, 1);
    setenv("ACCEL_COMM", "host", 1);
    unsetenv("ACCEL_RANK");
    unsetenv("ACCEL_SIZE");
    unsetenv("ACCEL_LOCAL_RANK");
    unsetenv("ACCEL_LOCAL_SIZE");
}

/* ---- ACCEL_TRACE that cannot be written: in a child, its first host ---- */

/* The child's exit: 0 when flush gave `expected`, else 1 + what it gave. */
static int flush_in_child(const char *trace, accel_status expected,
                          const char *detail)
{
    env_base();
    setenv("ACCEL_TRACE", trace, 1);
    accel_host *host = NULL;
    if (accel_host_create(NULL, &host) != ACCEL_OK)
        return 10;
    accel_status status = accel_trace_flush();
    bool said = detail == NULL || strstr(accel_last_error(), detail) != NULL;
    if (status != expected || !said)
        fprintf(stderr, "ACCEL_TRACE=%s: flush gave %s: %s\n", trace,
                accel_status_name(status), accel_last_error());
    accel_host_destroy(host);
    return status == expected && said ? 0 : 11;
}

static void expect_child(const char *trace, accel_status expected,
                         const char *detail)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(flush_in_child(trace, expected, detail));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_trace_that_cannot_be_written(void **state)
{
    (void)state;
    /* "ACCEL_ERR_NOT_SUPPORTED when the file cannot be written". */
    if (access("/dev/full", W_OK) == 0)
        expect_child("/dev/full", ACCEL_ERR_NOT_SUPPORTED, "ACCEL_TRACE");
    /* "A file that cannot be opened is logged and nothing is traced":
     * then flush does nothing. */
    expect_child("/nonexistent/accel-outside/trace.json", ACCEL_OK, NULL);
    struct stat st;
    assert_int_not_equal(stat("/nonexistent/accel-outside", &st), 0);
}

/* ---- every public call is traced, but the documented lookups ---- */

static char *trace_text(void)
{
    assert_status(accel_trace_flush(), ACCEL_OK);
    size_t size = 0;
    char *text = support_read_file(trace_path, &size);
    text[size] = '\0';
    return text;
}

static bool traced(const char *text, const char *call)
{
    char needle[128];
    snprintf(needle, sizeof needle, "{\"name\":\"%s\"", call);
    return strstr(text, needle) != NULL;
}

static void test_public_calls_are_traced_by_their_own_name(void **state)
{
    (void)state;
    env_base();
    setenv("ACCEL_NULL_DEVICES", "1", 1);
    accel_host *host = NULL;
    accel_device *device = NULL;
    accel_stream *stream = NULL;
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    assert_status(accel_device_open(host, "null", 0, &device), ACCEL_OK);
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    const accel_comm_provider_info *list = NULL;
    size_t count = 0;
    assert_status(accel_host_comm_providers(host, &list, &count), ACCEL_OK);
    accel_comm *comm = NULL;
    assert_status(accel_comm_create_local(&device, 1, &comm), ACCEL_OK);
    assert_status(accel_comm_status(comm), ACCEL_OK);
    assert_status(accel_comm_abort(comm), ACCEL_OK);
    struct accel_native_handles native = {.struct_size = sizeof native};
    assert_status(accel_stream_native(stream, &native), ACCEL_OK);
    /* Fails either way (no compiler, or not C): still one call of its own. */
    setenv("ACCEL_CC", "/nonexistent/accel-outside-cc", 1);
    accel_module *module = NULL;
    assert_int_not_equal(accel_module_compile(device, "not C", NULL, &module),
                         ACCEL_OK);
    unsetenv("ACCEL_CC");
    char *text = trace_text();
    const char *const calls[] = {
        "accel_host_comm_providers", "accel_comm_create_local",
        "accel_comm_status",         "accel_comm_abort",
        "accel_stream_native",       "accel_module_compile",
    };
    int missing = 0;
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        if (!traced(text, calls[i])) {
            print_error("%s is not in the trace\n", calls[i]);
            missing++;
        }
    }
    /* A call made inside another is part of its caller's slice. */
    if (traced(text, "accel_module_load")) {
        print_error("accel_module_compile's own accel_module_load is traced\n");
        missing++;
    }
    free(text);
    accel_comm_destroy(comm);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
    assert_int_equal(missing, 0);
}

/* ---- the error-detail format ---- */

static void test_plugin_failure_names_the_call_and_the_entry_once(void **state)
{
    (void)state;
    env_base();
    setenv("ACCEL_NULL_FAIL", "copy_to_device:1", 1);
    accel_host *host = NULL;
    accel_device *device = NULL;
    accel_stream *stream = NULL;
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    assert_status(accel_device_open(host, "null", 0, &device), ACCEL_OK);
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    accel_ref x;
    assert_status(accel_alloc(device, ACCEL_F32, 4, &x), ACCEL_OK);
    float v[4] = {1, 2, 3, 4};
    accel_status status = accel_copy_to_device(stream, x, 0, v, sizeof v);
    if (status == ACCEL_OK)
        status = accel_stream_sync(stream);
    assert_status(status, ACCEL_ERR_DRIVER);
    const char *prefix = "accel_copy_to_device: copy_to_device: ";
    const char *detail = accel_last_error();
    if (strncmp(detail, prefix, strlen(prefix)) != 0 ||
        strstr(detail + strlen(prefix), "copy_to_device:") != NULL)
        fail_msg("detail '%s' is not '%s<the plugin's words>'", detail, prefix);
    unsetenv("ACCEL_NULL_FAIL");
    assert_status(accel_free(device, x), ACCEL_OK);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
}

/* ---- accel_stream_native ---- */

static void test_stream_native_checks_its_arguments(void **state)
{
    (void)state;
    env_base();
    accel_host *host = NULL;
    accel_device *device = NULL;
    accel_stream *stream = NULL;
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    assert_status(accel_device_open(host, "null", 0, &device), ACCEL_OK);
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    struct accel_native_handles native = {.struct_size = sizeof native};
    assert_status(accel_stream_native(NULL, &native), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_stream_native(stream, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    const uint32_t small[] = {0, 1, (uint32_t)sizeof native - 1};
    for (size_t i = 0; i < 3; i++) {
        native.struct_size = small[i];
        assert_status(accel_stream_native(stream, &native),
                      ACCEL_ERR_INVALID_ARGUMENT);
    }
    /* A caller built with a larger struct: nothing past the frozen one. */
    unsigned char big[sizeof native + 32];
    memset(big, 0xab, sizeof big);
    native.struct_size = (uint32_t)sizeof big;
    memcpy(big, &native, sizeof native.struct_size);
    assert_status(accel_stream_native(stream, (struct accel_native_handles *)big),
                  ACCEL_OK);
    memcpy(&native, big, sizeof native);
    assert_int_equal(native.kind, ACCEL_NATIVE_CPU);
    for (size_t i = sizeof native; i < sizeof big; i++)
        assert_int_equal(big[i], 0xab);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
}

/* ---- rank info from hostile variables ---- */

static void expect_rank_refused(const char *name, const char *value)
{
    env_base();
    setenv("ACCEL_SIZE", "4", 1);
    setenv("ACCEL_RANK", "1", 1);
    setenv(name, value, 1);
    accel_rank_info info;
    accel_status status = accel_rank_info_get(&info);
    if (status != ACCEL_ERR_INVALID_ARGUMENT ||
        strstr(accel_last_error(), name) == NULL)
        fail_msg("%s='%.40s': %s (%s); expected ACCEL_ERR_INVALID_ARGUMENT "
                 "naming the variable",
                 name, value, accel_status_name(status), accel_last_error());
}

static void test_hostile_rank_variables_are_errors_naming_them(void **state)
{
    (void)state;
    static char digits[5000];
    memset(digits, '9', sizeof digits - 1);
    const char *const bad[] = {"abc", "-1",  "1x",         " 1",  "+1",
                               "0x1", "1.0", "1e3",        "1 ",  "\t2",
                               "4",   "5",   "2147483648", "-0x", digits};
    const char *const names[] = {"ACCEL_RANK", "ACCEL_LOCAL_RANK"};
    for (size_t n = 0; n < 2; n++)
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            expect_rank_refused(names[n], bad[i]);
    expect_rank_refused("ACCEL_SIZE", "0");
    expect_rank_refused("ACCEL_SIZE", "1"); /* rank 1 of 1 */
    expect_rank_refused("ACCEL_SIZE", "-4");
    expect_rank_refused("ACCEL_LOCAL_SIZE", "5"); /* more than the size */
    expect_rank_refused("ACCEL_LOCAL_SIZE", "0");
    assert_status(accel_rank_info_get_sized(NULL, sizeof(accel_rank_info)),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* A good set reads back with its sources. */
    env_base();
    setenv("ACCEL_RANK", "3", 1);
    setenv("ACCEL_SIZE", "4", 1);
    setenv("ACCEL_LOCAL_RANK", "1", 1);
    setenv("ACCEL_LOCAL_SIZE", "2", 1);
    accel_rank_info info;
    assert_status(accel_rank_info_get(&info), ACCEL_OK);
    assert_int_equal(info.rank, 3);
    assert_int_equal(info.local_size, 2);
    assert_string_equal(info.rank_source, "ACCEL_RANK");
    assert_string_equal(info.local_size_source, "ACCEL_LOCAL_SIZE");
    env_base();
}

int main(void)
{
    trace_dir = support_make_temp_dir();
    trace_path = support_path_in(trace_dir, "trace.json");
    const struct CMUnitTest tests[] = {
        /* First: its children must be this process's first hosts. */
        cmocka_unit_test(test_trace_that_cannot_be_written),
        cmocka_unit_test(test_public_calls_are_traced_by_their_own_name),
        cmocka_unit_test(test_plugin_failure_names_the_call_and_the_entry_once),
        cmocka_unit_test(test_stream_native_checks_its_arguments),
        cmocka_unit_test(test_hostile_rank_variables_are_errors_naming_them),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(trace_path);
    support_remove_dir(trace_dir);
    return failed;
}
