/*
 * The OpenCL baseline of a build that found no OpenCL (the ICD loader and
 * its headers: Debian's ocl-icd-opencl-dev): it says so, once.
 */
#include "bench.h"

static bool opencl_open(struct bench_env *env, void **out_state)
{
    *out_state = NULL;
    bench_report_note(env->report,
                      "opencl: not built: no OpenCL was found at build time "
                      "(install ocl-icd-opencl-dev and an OpenCL driver such "
                      "as pocl-opencl-icd, then set up the build again)");
    return false;
}

static void opencl_close(void *state)
{
    (void)state;
}

static bool measure_none(void *state, struct bench_run *run)
{
    (void)state;
    (void)run;
    return false;
}

/* Entries for every case, so that the driver opens it and the note is made. */
const struct bench_impl bench_impl_opencl = {
    .name = "opencl",
    .open = opencl_open,
    .close = opencl_close,
    .measure =
        {
            [BENCH_DISCOVERY] = measure_none,
            [BENCH_DISPATCH] = measure_none,
            [BENCH_LAUNCH_EMPTY] = measure_none,
            [BENCH_LAUNCH_STREAM] = measure_none,
            [BENCH_VADD] = measure_none,
            [BENCH_COPY_H2D] = measure_none,
            [BENCH_COPY_D2H] = measure_none,
            [BENCH_COPY_D2D] = measure_none,
            [BENCH_ALLOC_FREE] = measure_none,
        },
};
