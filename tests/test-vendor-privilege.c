/*
 * Privileged programs and vendor runtimes: under elevated privileges the
 * CUDA and HIP plugins do not open their vendor runtime unless the program
 * opts in (accel_host_options.vendor_runtimes_when_elevated), and with the
 * opt-in they remove the vendor's variables that name files or libraries
 * before the runtime is loaded.
 *
 * The privileged process is presented to the host through its internal ids
 * (accel__host_create_as), as in test-security; the runtimes are the fakes
 * of tests/fakes, which keep a copy of the environment they were loaded
 * with (fake_loaded_with_variable), so that "removed before the library was
 * opened" is checked where a real runtime would read it.
 */
#include "support.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "os.h"

#define ELEVATED_REASON "elevated privileges: vendor runtime not opened"
/* A variable no vendor list names: it must reach the runtime untouched. */
#define KEPT_VARIABLE "ACCEL_TEST_PRIVILEGE_KEPT"

struct vendor_case {
    const char *plugin;      /* "cuda" */
    const char *plugin_path; /* the built plugin */
    const char *library_env; /* the variable that points the plugin at the fake */
    const char *fake_path;   /* the fake runtime */
    const char *const *file_variables; /* what the README lists, NULL-terminated */
};

static const char *const cuda_variables[] = {
    "CUDA_INJECTION64_PATH",
    "CUDA_CACHE_PATH",
    "CUDA_LOG_FILE",
    "CUDA_COREDUMP_FILE",
    "CUDA_COREDUMP_PIPE",
    "CUDA_MPS_PIPE_DIRECTORY",
    NULL,
};

static const char *const hip_variables[] = {
    "AMD_LOG_LEVEL_FILE",
    "HSA_TOOLS_LIB",
    "ROCP_TOOL_LIBRARIES",
    "AMD_COMGR_REDIRECT_LOGS",
    NULL,
};

#ifdef CUDA_PLUGIN_PATH
static const struct vendor_case cuda_case = {
    "cuda",         CUDA_PLUGIN_PATH, "ACCEL_CUDA_LIBRARY",
    FAKE_CUDA_PATH, cuda_variables,
};
#endif
#ifdef HIP_PLUGIN_PATH
static const struct vendor_case hip_case = {
    "hip", HIP_PLUGIN_PATH, "ACCEL_HIP_LIBRARY", FAKE_HIP_PATH, hip_variables,
};
#endif

/* ---- ids ---- */

static struct accel__ids ids_real(void)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    return ids;
}

/* A setuid program run by another user. */
static struct accel__ids ids_setuid(void)
{
    struct accel__ids ids = ids_real();
    ids.ruid = ids.euid == 1000 ? 1001 : 1000;
    return ids;
}

/* ---- helpers ---- */

/* Every file variable set to a path a runtime must never open, and the kept one. */
static void set_vendor_variables(const struct vendor_case *v)
{
    for (const char *const *name = v->file_variables; *name != NULL; name++)
        setenv(*name, "/nonexistent/accel-privilege-test", 1);
    setenv(KEPT_VARIABLE, "1", 1);
}

static int setup(void **state)
{
    const struct vendor_case *v = *state;
    support_clean_environment();
    for (const char *const *name = v->file_variables; *name != NULL; name++)
        unsetenv(*name);
    setenv(v->library_env, v->fake_path, 1);
    return 0;
}

static int teardown(void **state)
{
    const struct vendor_case *v = *state;
    for (const char *const *name = v->file_variables; *name != NULL; name++)
        unsetenv(*name);
    unsetenv(KEPT_VARIABLE);
    unsetenv(v->library_env);
    return 0;
}

/*
 * Each check runs in a child process of its own: a runtime, once loaded,
 * stays in the process (the fakes are not unloaded by dlclose), and each
 * check needs one loaded fresh, whose copy of the environment is the one
 * the plugin left. A failed check prints why and makes the child exit 1.
 */
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            return 1;                                                          \
        }                                                                      \
    } while (0)

static void run_in_child(int (*check)(const struct vendor_case *v),
                         const struct vendor_case *v)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(check(v));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Whether the fake runtime is loaded in the process now. */
static bool fake_loaded(const struct vendor_case *v)
{
    void *library = dlopen(v->fake_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (library != NULL)
        dlclose(library);
    return library != NULL;
}

/* Whether the loaded fake found `name` in the environment when it was
 * loaded; false when it is not loaded. */
static bool fake_saw(const struct vendor_case *v, const char *name)
{
    void *library = dlopen(v->fake_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    bool (*saw)(const char *) = NULL;
    bool seen = false;

    if (library == NULL)
        return false;
    *(void **)&saw = dlsym(library, "fake_loaded_with_variable");
    seen = saw != NULL && saw(name);
    dlclose(library);
    return seen;
}

/* A host as a process with `ids` would create it; NULL on failure. */
static accel_host *create_host_as(const struct vendor_case *v,
                                  const struct accel__ids *ids, bool opt_in)
{
    accel_host_options options = {.plugin_path = v->plugin_path,
                                  .vendor_runtimes_when_elevated = opt_in};
    accel_host *host = NULL;
    if (accel__host_create_as(&options, ids, &host) != ACCEL_OK)
        return NULL;
    return host;
}

/* The plugin's entry, if it is in `state`. */
static const accel_plugin_info *plugin_in(accel_host *host,
                                          const struct vendor_case *v,
                                          accel_plugin_state state)
{
    const accel_plugin_info *info = support_find_plugin(host, v->plugin, 0);
    if (info == NULL || info->state != state) {
        fprintf(stderr, "plugin %s: state %s, reason %s\n", v->plugin,
                info ? accel_plugin_state_name(info->state) : "(absent)",
                info && info->reason ? info->reason : "(none)");
        return NULL;
    }
    return info;
}

/* ---- tests ---- */

static int refused_without_opt_in(const struct vendor_case *v)
{
    struct accel__ids ids = ids_setuid();
    set_vendor_variables(v);
    CHECK(!fake_loaded(v));

    accel_host *host = create_host_as(v, &ids, false);
    CHECK(host != NULL);
    const accel_plugin_info *info = plugin_in(host, v, ACCEL_PLUGIN_NO_DEVICE);
    CHECK(info != NULL && info->reason != NULL);
    CHECK(strstr(info->reason, ELEVATED_REASON) != NULL);
    CHECK(strstr(info->reason, "vendor_runtimes_when_elevated") != NULL);
    CHECK(!fake_loaded(v));
    /* Nothing is removed for a runtime that is not opened. */
    CHECK(getenv(v->file_variables[0]) != NULL);
    accel_host_destroy(host);
    return 0;
}

static void test_elevated_process_does_not_open_the_vendor_runtime(void **state)
{
    run_in_child(refused_without_opt_in, *state);
}

static int opted_in(const struct vendor_case *v)
{
    struct accel__ids ids = ids_setuid();
    set_vendor_variables(v);
    CHECK(!fake_loaded(v));

    accel_host *host = create_host_as(v, &ids, true);
    CHECK(host != NULL);
    const accel_plugin_info *info = plugin_in(host, v, ACCEL_PLUGIN_LOADED);
    CHECK(info != NULL && info->device_count >= 1);
    CHECK(fake_saw(v, KEPT_VARIABLE));
    for (const char *const *name = v->file_variables; *name != NULL; name++) {
        if (fake_saw(v, *name) || getenv(*name) != NULL) {
            fprintf(stderr, "%s was still in the environment\n", *name);
            return 1;
        }
    }
    accel_host_destroy(host);
    return 0;
}

static void
test_elevated_process_that_opts_in_removes_file_variables_first(void **state)
{
    run_in_child(opted_in, *state);
}

static int plain(const struct vendor_case *v)
{
    struct accel__ids ids = ids_real();
    set_vendor_variables(v);
    CHECK(!fake_loaded(v));

    /* Zeroed options, as every caller before the opt-in wrote them. */
    accel_host *host = create_host_as(v, &ids, false);
    CHECK(host != NULL);
    CHECK(plugin_in(host, v, ACCEL_PLUGIN_LOADED) != NULL);
    for (const char *const *name = v->file_variables; *name != NULL; name++)
        CHECK(fake_saw(v, *name) && getenv(*name) != NULL);
    accel_host_destroy(host);
    return 0;
}

static void test_plain_process_keeps_its_environment_and_runtime(void **state)
{
    struct accel__ids ids = ids_real();
    if (accel__ids_elevated(&ids)) {
        print_message("skipped: this process itself runs elevated\n");
        skip();
    }
    run_in_child(plain, *state);
}

#define VENDOR_TESTS(kind)                                                     \
    cmocka_unit_test_prestate_setup_teardown(                                  \
        test_elevated_process_does_not_open_the_vendor_runtime, setup,         \
        teardown, (void *)&kind),                                              \
        cmocka_unit_test_prestate_setup_teardown(                              \
            test_elevated_process_that_opts_in_removes_file_variables_first,   \
            setup, teardown, (void *)&kind),                                   \
        cmocka_unit_test_prestate_setup_teardown(                              \
            test_plain_process_keeps_its_environment_and_runtime, setup,       \
            teardown, (void *)&kind)

int main(void)
{
    int failed = 0;
#ifdef CUDA_PLUGIN_PATH
    const struct CMUnitTest cuda_tests[] = {VENDOR_TESTS(cuda_case)};
    failed += cmocka_run_group_tests_name("vendor-privilege-cuda", cuda_tests,
                                          NULL, NULL);
#endif
#ifdef HIP_PLUGIN_PATH
    const struct CMUnitTest hip_tests[] = {VENDOR_TESTS(hip_case)};
    failed += cmocka_run_group_tests_name("vendor-privilege-hip", hip_tests,
                                          NULL, NULL);
#endif
    return failed;
}
