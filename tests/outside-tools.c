/*
 * accel-cc as the README documents it ("Building kernels: accel-cc"), run
 * from outside: "A target whose compiler is missing is an error (exit 2);
 * a compiler that fails gives exit 1", whether the compiler is the one
 * found on the PATH or the one ACCEL_NVCC, ACCEL_HIPCC or --cc names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static char *work;

/* accel-cc's exit status with `args` and the variable `name=value`. */
static int accel_cc(const char *name, const char *value, const char *const *args)
{
    char *output = support_path_in(work, "out.accelpack");
    char *source = support_path_in(work, "k.cu");
    const char *argv[16] = {"sh", ACCEL_CC_PATH};
    int n = 2;
    for (; *args != NULL; args++)
        argv[n++] = *args;
    argv[n++] = "-o";
    argv[n++] = output;
    argv[n++] = source;
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (name != NULL)
            setenv(name, value, 1);
        execv("/bin/sh", (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    struct stat st;
    /* A failed run leaves no output. */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        assert_int_not_equal(stat(output, &st), 0);
    unlink(output);
    free(output);
    free(source);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void test_a_missing_compiler_is_exit_2(void **state)
{
    (void)state;
    const char *cuda[] = {"--target", "cuda", NULL};
    const char *hip[] = {"--target", "hip", NULL};
    const char *cc[] = {"--cc", "/nonexistent/accel-outside-cc", NULL};
    const char *none[] = {NULL};
    assert_int_equal(accel_cc("ACCEL_NVCC", "/nonexistent/nvcc", cuda), 2);
    assert_int_equal(accel_cc("ACCEL_HIPCC", "/nonexistent/hipcc", hip), 2);
    assert_int_equal(accel_cc(NULL, NULL, cc), 2);
    assert_int_equal(accel_cc("ACCEL_CC", "/nonexistent/accel-outside-cc", none),
                     2);
}

static void test_a_compiler_that_fails_is_exit_1(void **state)
{
    (void)state;
    const char *cuda[] = {"--target", "cuda", NULL};
    const char *hip[] = {"--target", "hip", NULL};
    const char *cc[] = {"--cc", "false", NULL};
    assert_int_equal(accel_cc("ACCEL_NVCC", "false", cuda), 1);
    assert_int_equal(accel_cc("ACCEL_HIPCC", "false", hip), 1);
    assert_int_equal(accel_cc(NULL, NULL, cc), 1);
}

int main(void)
{
    if (access("/bin/sh", X_OK) != 0) {
        printf("SKIP: no /bin/sh to run accel-cc with\n");
        return 77;
    }
    work = support_make_temp_dir();
    char *source = support_path_in(work, "k.cu");
    FILE *f = fopen(source, "w");
    if (f == NULL)
        return 1;
    fputs("#include <accel/kernel.h>\n"
          "ACCEL_KERNEL(scale, (uint32_t, n), (float *, d))\n"
          "{\n    uint64_t i = accel_global_idx_x();\n"
          "    if (i < n)\n        d[i] *= 2.0f;\n}\n",
          f);
    fclose(f);
    free(source);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_missing_compiler_is_exit_2),
        cmocka_unit_test(test_a_compiler_that_fails_is_exit_1),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    support_remove_dir(work);
    return failed;
}
