/* The compile case for accel (compile_cases.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_cases.h"

const char *const bench_compile_variants[] = {"cold", "warm", NULL};

static const char accel_source[] =
    "#include <accel/kernel.h>\n"
    "ACCEL_KERNEL(empty)\n"
    "{\n"
    "}\n"
    "ACCEL_KERNEL(saxpy, (uint32_t, n), (float, a), (const float "
    "*ACCEL_RESTRICT, x),\n"
    "             (float *ACCEL_RESTRICT, y))\n"
    "{\n"
    "    uint64_t i = accel_global_idx_x();\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n"
    "ACCEL_KERNEL(vadd, (uint32_t, n), (const float *ACCEL_RESTRICT, a),\n"
    "             (const float *ACCEL_RESTRICT, b), (float *ACCEL_RESTRICT, "
    "c))\n"
    "{\n"
    "    uint64_t i = accel_global_idx_x();\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

static const char opencl_source[] =
    "__kernel void empty(void)\n"
    "{\n"
    "}\n"
    "__kernel void saxpy(uint n, float a, __global const float *restrict x,\n"
    "                    __global float *restrict y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__kernel void vadd(uint n, __global const float *restrict a,\n"
    "                   __global const float *restrict b, __global float "
    "*restrict c)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

bool bench_compile_source(const char *dialect, const char *variant,
                          unsigned long serial, char *out, size_t size)
{
    bool opencl = strcmp(dialect, "opencl") == 0;
    const char *source = opencl ? opencl_source : accel_source;
    /* A cold source has one more empty kernel of a new name: a comment would
     * not do, as PoCL keys its cache on the preprocessed source. */
    int length = strcmp(variant, "cold") == 0
                     ? snprintf(
                           out, size,
                           opencl ? "%s__kernel void cold_%ld_%lu(void)\n{\n}\n"
                                  : "%sACCEL_KERNEL(cold_%ld_%lu)\n{\n}\n",
                           source, (long)getpid(), serial)
                     : snprintf(out, size, "%s", source);
    return length > 0 && (size_t)length < size;
}

struct compile_step {
    struct bench_run *run;
    unsigned long serial;
};

static bool step_compile(void *context, double *out_ns)
{
    struct compile_step *st = context;
    char source[4096];
    if (!bench_compile_source("accel", st->run->point->variant, st->serial++,
                              source, sizeof source))
        return bench_fail(st->run, "accel compile: the source does not fit");
    accel_module *module = NULL;
    uint64_t start = bench_now_ns();
    accel_status status = accel_module_compile(st->run->env->device, source,
                                               NULL, &module);
    *out_ns = (double)(bench_now_ns() - start);
    if (status != ACCEL_OK)
        return bench_fail(st->run, "accel compile %s: %s: %s",
                          st->run->point->variant, accel_status_name(status),
                          accel_last_error());
    accel_module_unload(module);
    return true;
}

/*
 * A private cache directory for the run, so that a user's cache neither
 * helps the cold figures nor fills with the cold entries; removed at exit.
 */
static char cache_dir[64];

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_cache_dir(void)
{
    nftw(cache_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static bool use_private_cache(struct bench_run *run)
{
    if (cache_dir[0] != '\0')
        return true;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/accel-bench-cache-XXXXXX");
    if (mkdtemp(cache_dir) == NULL) {
        cache_dir[0] = '\0';
        return bench_fail(run, "accel compile: mkdtemp for the cache failed");
    }
    setenv("ACCEL_CACHE_DIR", cache_dir, 1);
    unsetenv("ACCEL_CACHE");
    atexit(remove_cache_dir);
    return true;
}

bool bench_accel_measure_compile(struct bench_run *run)
{
    static unsigned long serial;
    if (!use_private_cache(run))
        return false;
    struct compile_step st = {.run = run, .serial = serial};
    bool ok = bench_measure(
        run, step_compile, &st,
        strcmp(run->point->variant, "cold") == 0
            ? "accel_module_compile of a new source (the C compiler)"
            : "accel_module_compile of a cached source",
        0);
    serial = st.serial;
    return ok;
}
