/*
 * CPU kernel images as accel-cc builds them: a bundle of ISA levels loads
 * and runs, an image that calls libm loads in this program, which does not
 * link libm, and ACCEL_PERF_MAP=1 writes a perf map naming the kernels'
 * functions at the addresses where they run.
 */
#include "support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int setup(void **state)
{
    struct support_null *null = calloc(1, sizeof *null);

    if (null == NULL)
        return -1;
    *state = null;
    return support_null_open(null, NULL);
}

static int teardown(void **state)
{
    struct support_null *null = *state;

    support_null_close(null);
    free(null);
    support_clean_environment();
    return 0;
}

/* Run root_sum over k = 1..n: sqrtf(k*k) + cbrtf(k*k*k) is 2k. */
static void check_root_sum(struct support_null *null, accel_module *module)
{
    enum { N = 1000 };
    float squares[N], cubes[N], out[N];
    accel_kernel *kernel = NULL;
    accel_ref s, c, o;
    uint32_t n = N;

    for (uint32_t k = 0; k < N; k++) {
        squares[k] = (float)(k + 1) * (float)(k + 1);
        cubes[k] = (float)(k + 1) * (float)(k + 1) * (float)(k + 1);
    }
    assert_status(accel_kernel_get(module, "root_sum", &kernel), ACCEL_OK);
    assert_status(accel_alloc(null->device, ACCEL_F32, N, &s), ACCEL_OK);
    assert_status(accel_alloc(null->device, ACCEL_F32, N, &c), ACCEL_OK);
    assert_status(accel_alloc(null->device, ACCEL_F32, N, &o), ACCEL_OK);
    assert_status(accel_copy_in(null->stream, s, squares, N), ACCEL_OK);
    assert_status(accel_copy_in(null->stream, c, cubes, N), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(s), ACCEL_ARG_REF(c),
                        ACCEL_ARG_REF(o)};
    assert_status(accel_launch(null->stream, kernel,
                               (accel_dim3){(N + 127) / 128, 1, 1},
                               (accel_dim3){128, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    assert_status(accel_copy_out(null->stream, out, o, N), ACCEL_OK);
    assert_status(accel_stream_sync(null->stream), ACCEL_OK);
    for (uint32_t k = 0; k < N; k++) {
        float expected = 2.0f * (float)(k + 1);
        float error = out[k] - expected;

        if (error < 0)
            error = -error;
        if (error > 1e-5f * expected)
            fail_msg("root_sum[%u] = %.9g, expected %.9g", k, (double)out[k],
                     (double)expected);
    }
    accel_free(null->device, o);
    accel_free(null->device, c);
    accel_free(null->device, s);
}

static void test_image_calling_libm_loads_in_a_program_without_libm(void **state)
{
    struct support_null *null = *state;
    accel_module *module = NULL;

    assert_status(accel_module_load_file(null->device, LIBM_BUNDLE, &module),
                  ACCEL_OK);
    check_root_sum(null, module);
    accel_module_unload(module);
}

static void test_bundle_of_isa_levels_loads_and_runs(void **state)
{
    struct support_null *null = *state;
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;

    assert_status(accel_module_load_file(null->device, EXAMPLES_BUNDLE, &module),
                  ACCEL_OK);
    assert_status(accel_kernel_get(module, "saxpy", &kernel), ACCEL_OK);
    accel_module_unload(module);
}

static char *perf_map_path(void)
{
    char *path = malloc(64);

    assert_non_null(path);
    snprintf(path, 64, "/tmp/perf-%ld.map", (long)getpid());
    return path;
}

/*
 * Whether `address` lies in an executable mapping whose line in
 * /proc/self/maps holds `file` (the module's memory file or named file).
 */
static bool in_module_code(uintptr_t address, const char *file)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    bool found = false;

    assert_non_null(maps);
    while (!found && fgets(line, sizeof line, maps) != NULL) {
        uintptr_t from, to;
        char perms[8];

        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &from, &to, perms) == 3 &&
            perms[2] == 'x' && strstr(line, file) != NULL)
            found = address >= from && address < to;
    }
    fclose(maps);
    return found;
}

/* Whether an executable mapping's line in /proc/self/maps holds `file`. */
static bool maps_have_code_of(const char *file)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512], perms[8];
    bool found = false;

    assert_non_null(maps);
    while (!found && fgets(line, sizeof line, maps) != NULL)
        found = sscanf(line, "%*x-%*x %7s", perms) == 1 && perms[2] == 'x' &&
                strstr(line, file) != NULL;
    fclose(maps);
    return found;
}

/* The address perf's map gives `function`, or 0 when it names none. */
static uintptr_t perf_map_lookup(const char *path, const char *function)
{
    FILE *map = fopen(path, "r");
    char line[512], name[256];
    uintptr_t address = 0, start;
    uint64_t size;

    if (map == NULL)
        return 0;
    while (fgets(line, sizeof line, map) != NULL)
        if (sscanf(line, "%" SCNxPTR " %" SCNx64 " %255s", &start, &size,
                   name) == 3 &&
            strcmp(name, function) == 0 && size > 0)
            address = start;
    fclose(map);
    return address;
}

static void test_perf_map_lists_kernel_functions_when_asked(void **state)
{
    struct support_null *null = *state;
    accel_module *module = NULL;
    char *path = perf_map_path();
    uintptr_t address;

    unlink(path);
    setenv("ACCEL_PERF_MAP", "1", 1);
    assert_status(accel_module_load_file(null->device, LIBM_BUNDLE, &module),
                  ACCEL_OK);
    unsetenv("ACCEL_PERF_MAP");
    address = perf_map_lookup(path, "accel__run_root_sum");
    assert_true(address != 0);
    /* Loaded from a named file perf reads symbols from, not a memfd. */
    char file[64];
    snprintf(file, sizeof file, "/tmp/accel-perf-%ld/module-", (long)geteuid());
    assert_true(in_module_code(address, file));
    check_root_sum(null, module);
    accel_module_unload(module);
    unlink(path);
    free(path);
}

static void test_perf_map_is_not_written_unless_asked(void **state)
{
    struct support_null *null = *state;
    accel_module *module = NULL;
    char *path = perf_map_path();

    unlink(path);
    assert_status(accel_module_load_file(null->device, LIBM_BUNDLE, &module),
                  ACCEL_OK);
    assert_int_equal(access(path, F_OK), -1);
    /* From a memory file, as always: nothing is left on disk. */
    assert_true(maps_have_code_of("memfd:accel-module"));
    accel_module_unload(module);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_image_calling_libm_loads_in_a_program_without_libm, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_bundle_of_isa_levels_loads_and_runs,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_perf_map_lists_kernel_functions_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_perf_map_is_not_written_unless_asked, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
