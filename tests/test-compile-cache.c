/*
 * The on-disk kernel cache behind accel_module_compile: a second compile
 * loads without running the compiler, a damaged entry is found and
 * compiled again, a directory other users can write is not used, the size
 * cap evicts, ACCEL_CACHE=0 turns it off, and two processes that compile
 * the same kernel at once both succeed and leave one entry.
 */
#include "compile_case.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void
test_second_compile_loads_from_the_cache_without_the_compiler(void **state)
{
    struct compile_case *c = *state;
    accel_module *first = compile_case_saxpy(c, "-DSAXPY_BIAS=0");
    assert_int_equal(compile_case_runs(c), 1);
    assert_int_equal(compile_case_entries(c, NULL, 0), 1);
    accel_module *second = compile_case_saxpy(c, "-DSAXPY_BIAS=0");
    assert_int_equal(compile_case_runs(c), 1);
    assert_string_equal(accel_last_build_log(), "");
    compile_case_check_saxpy(c, second, 0.0f);
    /* Other options are another key. */
    accel_module *third = compile_case_saxpy(c, "-DSAXPY_BIAS=1");
    assert_int_equal(compile_case_runs(c), 2);
    assert_int_equal(compile_case_entries(c, NULL, 0), 2);
    compile_case_check_saxpy(c, third, 1.0f);
    accel_module_unload(first);
    accel_module_unload(second);
    accel_module_unload(third);
}

static void test_cache_turned_off_compiles_every_time(void **state)
{
    struct compile_case *c = *state;
    setenv("ACCEL_CACHE", "0", 1);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 2);
    assert_int_equal(compile_case_entries(c, NULL, 0), 0);
}

/* Overwrite one byte of the file at `offset` from its end. */
static void flip_byte(const char *path, off_t from_end)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    off_t at = lseek(fd, -from_end, SEEK_END);
    unsigned char byte = 0;
    assert_int_equal(pread(fd, &byte, 1, at), 1);
    byte ^= 0x5a;
    assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

/* The path of the one entry that appeared since `before` (a path). */
static void new_entry(struct compile_case *c, const char *before, char *out,
                      size_t size)
{
    DIR *dir = opendir(c->cache);
    assert_non_null(dir);
    out[0] = '\0';
    for (struct dirent *d = readdir(dir); d != NULL; d = readdir(dir)) {
        if (strstr(d->d_name, ".kc") == NULL)
            continue;
        int length = snprintf(out, size, "%s/%s", c->cache, d->d_name);
        assert_true(length > 0 && (size_t)length < size);
        if (strcmp(out, before) != 0)
            break;
        out[0] = '\0';
    }
    closedir(dir);
    assert_true(out[0] != '\0');
}

/*
 * An entry whose image is replaced by another whole, valid image of the
 * same size (another entry's), its header kept: only the SHA-256 tells.
 */
static void test_entry_with_another_image_is_detected_by_its_hash(void **state)
{
    struct compile_case *c = *state;
    char first[4096], second[4096];
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=1"));
    assert_int_equal(compile_case_entries(c, first, sizeof first), 1);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=2"));
    new_entry(c, first, second, sizeof second);
    size_t first_size = 0, second_size = 0;
    unsigned char *a = support_read_file(first, &first_size);
    unsigned char *b = support_read_file(second, &second_size);
    assert_int_equal(first_size, second_size);
    memcpy(a + 80, b + 80, first_size - 80);
    FILE *file = fopen(first, "wb");
    assert_non_null(file);
    assert_int_equal(fwrite(a, 1, first_size, file), first_size);
    fclose(file);
    free(a);
    free(b);
    accel_module *module = compile_case_saxpy(c, "-DSAXPY_BIAS=1");
    assert_int_equal(compile_case_runs(c), 3);
    compile_case_check_saxpy(c, module, 1.0f);
    accel_module_unload(module);
}

static void test_tampered_entry_is_detected_and_compiled_again(void **state)
{
    struct compile_case *c = *state;
    char entry[4096];
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_entries(c, entry, sizeof entry), 1);
    flip_byte(entry, 100);
    accel_module *module = compile_case_saxpy(c, "-DSAXPY_BIAS=0");
    assert_int_equal(compile_case_runs(c), 2);
    compile_case_check_saxpy(c, module, 0.0f);
    accel_module_unload(module);
    /* A cut entry too. */
    assert_int_equal(compile_case_entries(c, entry, sizeof entry), 1);
    struct stat st;
    assert_int_equal(stat(entry, &st), 0);
    assert_int_equal(truncate(entry, st.st_size - 1), 0);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 3);
    /* The entry written again is whole: the next compile is a hit. */
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 3);
}

static void test_cache_directory_writable_by_others_is_bypassed(void **state)
{
    struct compile_case *c = *state;
    assert_int_equal(mkdir(c->cache, 0700), 0);
    assert_int_equal(chmod(c->cache, 0777), 0);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 2);
    assert_int_equal(compile_case_entries(c, NULL, 0), 0);
    /* Group-writable is other users too. */
    assert_int_equal(chmod(c->cache, 0770), 0);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    assert_int_equal(compile_case_runs(c), 3);
    assert_int_equal(compile_case_entries(c, NULL, 0), 0);
}

static void test_size_cap_evicts_the_entry_used_least_recently(void **state)
{
    struct compile_case *c = *state;
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=0"));
    char first[4096];
    assert_int_equal(compile_case_entries(c, first, sizeof first), 1);
    setenv("ACCEL_CACHE_MAX_BYTES", "1", 1);
    accel_module_unload(compile_case_saxpy(c, "-DSAXPY_BIAS=1"));
    char second[4096];
    assert_int_equal(compile_case_entries(c, second, sizeof second), 1);
    assert_string_not_equal(first, second);
    assert_int_equal(access(first, F_OK), -1);
}

/* ---- two processes ---- */

static pid_t spawn_child(const char *self)
{
    char *argv[] = {(char *)self, "--race-child", NULL};
    pid_t pid = -1;
    assert_int_equal(posix_spawn(&pid, self, NULL, NULL, argv, environ), 0);
    return pid;
}

static const char *self_path;

static void
test_two_processes_compiling_one_kernel_both_succeed_with_one_entry(void **state)
{
    struct compile_case *c = *state;
    /* The wrapper holds each compile until both have begun: a real race. */
    setenv("COMPILE_CASE_MEET", "2", 1);
    pid_t a = spawn_child(self_path), b = spawn_child(self_path);
    int status_a = -1, status_b = -1;
    assert_int_equal(waitpid(a, &status_a, 0), a);
    assert_int_equal(waitpid(b, &status_b, 0), b);
    assert_true(WIFEXITED(status_a) && WEXITSTATUS(status_a) == 0);
    assert_true(WIFEXITED(status_b) && WEXITSTATUS(status_b) == 0);
    assert_int_equal(compile_case_runs(c), 2);
    assert_int_equal(compile_case_entries(c, NULL, 0), 1);
    /* A third process loads the entry without compiling. (A process, not
     * this one: under valgrind this one sees another CPU, so another ISA
     * level, so another key.) */
    unsetenv("COMPILE_CASE_MEET");
    pid_t third = spawn_child(self_path);
    int status_third = -1;
    assert_int_equal(waitpid(third, &status_third, 0), third);
    assert_true(WIFEXITED(status_third) && WEXITSTATUS(status_third) == 0);
    assert_int_equal(compile_case_runs(c), 2);
}

/* A racing child: compile saxpy (ACCEL_CC and ACCEL_CACHE_DIR inherited). */
static int race_child(void)
{
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    accel_host *host = NULL;
    accel_device *device = NULL;
    accel_module *module = NULL;
    int result = 1;
    if (accel_host_create(&options, &host) == ACCEL_OK &&
        accel_device_open(host, "null", 0, &device) == ACCEL_OK &&
        accel_module_compile(device, SAXPY_SOURCE, "-DSAXPY_BIAS=0", &module) ==
            ACCEL_OK)
        result = 0;
    else
        fprintf(stderr, "race child: %s\n%s\n", accel_last_error(),
                accel_last_build_log());
    accel_module_unload(module);
    accel_device_close(device);
    accel_host_destroy(host);
    return result;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--race-child") == 0)
        return race_child();
    self_path = argv[0];
    const struct CMUnitTest tests[] = {
#define CASE(test)                                                             \
    cmocka_unit_test_setup_teardown(test, compile_case_setup,                  \
                                    compile_case_teardown)
        CASE(test_second_compile_loads_from_the_cache_without_the_compiler),
        CASE(test_cache_turned_off_compiles_every_time),
        CASE(test_tampered_entry_is_detected_and_compiled_again),
        CASE(test_entry_with_another_image_is_detected_by_its_hash),
        CASE(test_cache_directory_writable_by_others_is_bypassed),
        CASE(test_size_cap_evicts_the_entry_used_least_recently),
        CASE(test_two_processes_compiling_one_kernel_both_succeed_with_one_entry),
#undef CASE
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
