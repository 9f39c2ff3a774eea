#include "compile_case.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *compile_case_real_cc(void)
{
    static char found[4096];
    const char *path = getenv("PATH");
    static const char *names[] = {"gcc", "clang", "cc"};
    for (size_t n = 0; n < 3; n++) {
        for (const char *at = path; at != NULL && *at != '\0';) {
            size_t length = strcspn(at, ":");
            snprintf(found, sizeof found, "%.*s/%s", (int)length, at, names[n]);
            if (length > 0 && access(found, X_OK) == 0)
                return found;
            at += length + (at[length] == ':');
        }
    }
    return "";
}

/* The wrapper: one line per run, then the real compiler, exec'd. */
static void write_wrapper(struct compile_case *c, const char *real_cc)
{
    snprintf(c->wrapper, sizeof c->wrapper, "%s/cc-wrapper", c->dir);
    snprintf(c->runs, sizeof c->runs, "%s/runs", c->dir);
    FILE *file = fopen(c->wrapper, "w");
    assert_non_null(file);
    fprintf(
        file,
        "#!/bin/sh\n"
        "echo run >> '%s'\n"
        "# COMPILE_CASE_MEET=N: wait (up to 10 s) until N runs have begun,\n"
        "# so that racing processes both compile.\n"
        "if [ -n \"${COMPILE_CASE_MEET:-}\" ]; then\n"
        "    i=0\n"
        "    while [ \"$(wc -l < '%s')\" -lt \"$COMPILE_CASE_MEET\" ] && [ $i "
        "-lt 200 ]; do\n"
        "        sleep 0.05; i=$((i + 1))\n"
        "    done\n"
        "fi\n"
        "exec '%s' \"$@\"\n",
        c->runs, c->runs, real_cc);
    fclose(file);
    assert_int_equal(chmod(c->wrapper, 0700), 0);
}

int compile_case_setup(void **state)
{
    const char *real_cc = compile_case_real_cc();
    if (real_cc[0] == '\0') {
        print_message("no C compiler (gcc, clang, cc) on PATH: skipped\n");
        skip();
    }
    struct compile_case *c = calloc(1, sizeof *c);
    assert_non_null(c);
    if (support_null_open(&c->null, NULL) != 0) {
        support_null_close(&c->null);
        free(c);
        return -1;
    }
    c->dir = support_make_temp_dir();
    snprintf(c->cache, sizeof c->cache, "%s/cache", c->dir);
    write_wrapper(c, real_cc);
    setenv("ACCEL_CC", c->wrapper, 1);
    setenv("ACCEL_CACHE_DIR", c->cache, 1);
    *state = c;
    return 0;
}

int compile_case_teardown(void **state)
{
    struct compile_case *c = *state;
    unsetenv("ACCEL_CC");
    unsetenv("ACCEL_CACHE_DIR");
    unsetenv("ACCEL_CACHE");
    unsetenv("ACCEL_CACHE_MAX_BYTES");
    unsetenv("COMPILE_CASE_MEET");
    support_null_close(&c->null);
    chmod(c->cache, 0700);
    support_remove_dir(c->dir);
    free(c);
    return 0;
}

int compile_case_runs(const struct compile_case *c)
{
    FILE *file = fopen(c->runs, "r");
    if (file == NULL)
        return 0;
    int runs = 0;
    for (int ch = fgetc(file); ch != EOF; ch = fgetc(file))
        runs += ch == '\n';
    fclose(file);
    return runs;
}

int compile_case_entries(const struct compile_case *c, char *out_path, size_t size)
{
    DIR *dir = opendir(c->cache);
    if (dir == NULL)
        return 0;
    int entries = 0;
    for (struct dirent *d = readdir(dir); d != NULL; d = readdir(dir)) {
        size_t length = strlen(d->d_name);
        if (strncmp(d->d_name, "tmp-", 4) == 0)
            fail_msg("a temporary file was left in the cache: %s", d->d_name);
        if (length > 3 && strcmp(d->d_name + length - 3, ".kc") == 0) {
            if (entries++ == 0 && out_path != NULL)
                snprintf(out_path, size, "%s/%s", c->cache, d->d_name);
        }
    }
    closedir(dir);
    return entries;
}

accel_module *compile_case_saxpy(struct compile_case *c, const char *options)
{
    accel_module *module = NULL;
    accel_status status = accel_module_compile(c->null.device, SAXPY_SOURCE,
                                               options, &module);
    if (status != ACCEL_OK)
        fail_msg("accel_module_compile: %s: %s\nlog:\n%s",
                 accel_status_name(status), accel_last_error(),
                 accel_last_build_log());
    assert_non_null(module);
    return module;
}

void compile_case_check_saxpy(struct compile_case *c, accel_module *module,
                              float bias)
{
    enum { N = 1000 };
    float x[N], y[N], result[N];
    for (uint32_t i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 3.0f - (float)i;
    }
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(module, "saxpy", &kernel), ACCEL_OK);
    accel_ref dx, dy;
    assert_status(accel_alloc(c->null.device, ACCEL_F32, N, &dx), ACCEL_OK);
    assert_status(accel_alloc(c->null.device, ACCEL_F32, N, &dy), ACCEL_OK);
    assert_status(accel_copy_to_device(c->null.stream, dx, 0, x, sizeof x),
                  ACCEL_OK);
    assert_status(accel_copy_to_device(c->null.stream, dy, 0, y, sizeof y),
                  ACCEL_OK);
    uint32_t n = N;
    float a = 2.0f;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
    assert_status(accel_launch(c->null.stream, kernel,
                               (accel_dim3){(N + 127) / 128, 1, 1},
                               (accel_dim3){128, 1, 1}, 0, args, 4),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->null.stream, result, dy, 0, sizeof result),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->null.stream), ACCEL_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_float_equal(result[i], 2.0f * x[i] + y[i] + bias, 1e-4);
    accel_free(c->null.device, dx);
    accel_free(c->null.device, dy);
}
