/*
 * What the run-time compile tests share: a null device, a scratch
 * directory holding the kernel cache and an ACCEL_CC wrapper that counts
 * its runs (so that a test can tell a cache hit from a compile), and a
 * saxpy run that checks a compiled module computes.
 */
#ifndef ACCEL_TESTS_COMPILE_CASE_H
#define ACCEL_TESTS_COMPILE_CASE_H

#include "support.h"

struct compile_case {
    struct support_null null;
    char *dir;          /* scratch: cache/, cc-wrapper, runs */
    char cache[4096];   /* ACCEL_CACHE_DIR */
    char wrapper[4096]; /* ACCEL_CC */
    char runs[4096];    /* one line per compiler run */
};

#define SAXPY_SOURCE                                                           \
    "#include <accel/kernel.h>\n"                                              \
    "ACCEL_KERNEL(saxpy, (uint32_t, n), (float, a), (const float *, x),\n"     \
    "             (float *, y))\n"                                             \
    "{\n"                                                                      \
    "    uint64_t i = accel_global_idx_x();\n"                                 \
    "    if (i < n)\n"                                                         \
    "        y[i] = a * x[i] + y[i] + SAXPY_BIAS;\n"                           \
    "}\n"

/*
 * cmocka setup and teardown. Setup skips the test (with the reason) when
 * the machine has no C compiler; it sets ACCEL_CC to the counting wrapper
 * and ACCEL_CACHE_DIR to an empty directory.
 */
int compile_case_setup(void **state);
int compile_case_teardown(void **state);

/* How many times the wrapper has run the compiler. */
int compile_case_runs(const struct compile_case *c);
/* How many cache entries (*.kc) the cache directory holds; the first's
 * path in out_path when not NULL. Fails the test on a leftover temp file. */
int compile_case_entries(const struct compile_case *c, char *out_path,
                         size_t size);
/* Compile SAXPY_SOURCE with `options`, expecting ACCEL_OK. */
accel_module *compile_case_saxpy(struct compile_case *c, const char *options);
/* Launch saxpy from `module` and check y = 2x + y + bias. */
void compile_case_check_saxpy(struct compile_case *c, accel_module *module,
                              float bias);
/* Whether a C compiler is on PATH ("" if none), for the wrapper to run. */
const char *compile_case_real_cc(void);

#endif /* ACCEL_TESTS_COMPILE_CASE_H */
