/*
 * The workload cases in plain C: the loops of c_workload_loops.c at the
 * best ISA level this CPU runs, on one thread and on every CPU (threads
 * started per run, one slice of rows, planes or words each; the histogram
 * counts privately per thread and adds the bins up at the end, as a C
 * programmer would rather than contend on shared counters).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

#define DECLARE_LOOPS(level)                                                   \
    void bench_matvec_rows_##level(uint32_t n, const float *a, const float *x, \
                                   float *y, uint32_t from, uint32_t to);      \
    void bench_stencil_rows_##level(uint32_t n, const float *in, float *out,   \
                                    uint32_t from, uint32_t to);               \
    void bench_conv3d_planes_##level(uint32_t n, const float *in, float *out,  \
                                     uint32_t from, uint32_t to);              \
    void bench_histogram_range_##level(const uint32_t *values, uint32_t *bins, \
                                       uint32_t from, uint32_t to);            \
    void bench_gemm_rows_##level(uint32_t n, const float *a, const float *b,   \
                                 float *c, uint32_t from, uint32_t to);        \
    void bench_reduce_segments_##level(const float *x, float *out,             \
                                       uint32_t from, uint32_t to);            \
    void bench_scan_segments_##level(const float *x, float *out,               \
                                     uint32_t from, uint32_t to);
#define LOOPS(name, level)                                                     \
    {                                                                          \
        name, bench_matvec_rows_##level, bench_stencil_rows_##level,           \
            bench_conv3d_planes_##level, bench_histogram_range_##level,        \
            bench_gemm_rows_##level, bench_reduce_segments_##level,            \
            bench_scan_segments_##level                                        \
    }

DECLARE_LOOPS(baseline)
#if BENCH_HAVE_LOOPS_V3
DECLARE_LOOPS(v3)
#endif
#if BENCH_HAVE_LOOPS_V4
DECLARE_LOOPS(v4)
#endif

const struct bench_workload_loops *bench_workload_loops_baseline(void)
{
    static const struct bench_workload_loops loops = LOOPS("baseline", baseline);

    return &loops;
}

const struct bench_workload_loops *bench_workload_loops_best(void)
{
#if BENCH_HAVE_LOOPS_V4
    static const struct bench_workload_loops v4 = LOOPS("x86-64-v4", v4);

    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return &v4;
#endif
#if BENCH_HAVE_LOOPS_V3
    static const struct bench_workload_loops v3 = LOOPS("x86-64-v3", v3);

    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        return &v3;
#endif
    return bench_workload_loops_baseline();
}

/* One thread's share of a run. */
struct slice {
    const struct bench_workload_data *d;
    const struct bench_workload_loops *loops;
    void *output;
    uint32_t from, to;
    uint32_t bins[BENCH_HISTOGRAM_BINS];
    pthread_t thread;
};

/* The slice of a case whose kernel needs barriers (the loops need none). */
static void run_barrier_case_slice(struct slice *s)
{
    const struct bench_workload_data *d = s->d;

    switch (d->case_id) {
    case BENCH_GEMM_TILED:
        s->loops->gemm(d->n, d->inputs[0], d->inputs[1], s->output, s->from,
                       s->to);
        break;
    case BENCH_REDUCE_SHARED:
        s->loops->reduce(d->inputs[0], s->output, s->from, s->to);
        break;
    default:
        s->loops->scan(d->inputs[0], s->output, s->from, s->to);
        break;
    }
}

static void *run_slice(void *arg)
{
    struct slice *s = arg;
    const struct bench_workload_data *d = s->d;

    switch (d->case_id) {
    case BENCH_GEMM_TILED:
    case BENCH_REDUCE_SHARED:
    case BENCH_SCAN_BLOCK:
        run_barrier_case_slice(s);
        break;
    case BENCH_MATVEC:
        s->loops->matvec(d->n, d->inputs[0], d->inputs[1], s->output, s->from,
                         s->to);
        break;
    case BENCH_STENCIL_2D:
        s->loops->stencil_2d(d->n, d->inputs[0], s->output, s->from, s->to);
        break;
    case BENCH_CONV3D:
        s->loops->conv3d(d->n, d->inputs[0], s->output, s->from, s->to);
        break;
    default:
        memset(s->bins, 0, sizeof(s->bins));
        s->loops->histogram(d->inputs[0], s->bins, s->from, s->to);
        break;
    }
    return NULL;
}

struct c_step {
    struct bench_run *run;
    const struct bench_workload_data *d;
    const struct bench_workload_loops *loops;
    void *output;
    uint32_t threads;
    struct slice *slices;
};

static bool step_workload(void *context, double *out_ns)
{
    struct c_step *st = context;
    uint32_t units = st->d->units;
    uint32_t per = (units + st->threads - 1) / st->threads, started = 1;
    uint64_t start = bench_now_ns();
    bool ok = true;

    for (uint32_t t = 0; t < st->threads; t++) {
        uint64_t from = (uint64_t)t * per, to = from + per;

        st->slices[t].d = st->d;
        st->slices[t].loops = st->loops;
        st->slices[t].output = st->output;
        st->slices[t].from = (uint32_t)(from < units ? from : units);
        st->slices[t].to = (uint32_t)(to < units ? to : units);
    }
    for (; started < st->threads; started++)
        if (pthread_create(&st->slices[started].thread, NULL, run_slice,
                           &st->slices[started]) != 0) {
            ok = bench_fail(st->run, "pthread_create failed");
            break;
        }
    run_slice(&st->slices[0]);
    for (uint32_t t = 1; t < started; t++)
        pthread_join(st->slices[t].thread, NULL);
    if (st->d->case_id == BENCH_HISTOGRAM) {
        uint32_t *bins = st->output;

        memcpy(bins, st->slices[0].bins, sizeof(st->slices[0].bins));
        for (uint32_t t = 1; t < started; t++)
            for (uint32_t b = 0; b < BENCH_HISTOGRAM_BINS; b++)
                bins[b] += st->slices[t].bins[b];
    }
    *out_ns = (double)(bench_now_ns() - start);
    return ok;
}

static bool measure_threads(struct bench_run *run,
                            const struct bench_workload_data *d, uint32_t threads)
{
    const struct bench_workload_loops *loops = bench_workload_loops_best();
    struct c_step st = {.run = run, .d = d, .loops = loops, .threads = threads};
    struct bench_samples ns;
    char detail[128];
    bool ok;

    /* The units a run splits (rows, planes) are never fewer than the threads here. */
    st.output = bench_alloc_touched(d->output_bytes);
    st.slices = calloc(threads, sizeof(*st.slices));
    if (st.output == NULL || st.slices == NULL) {
        free(st.output);
        free(st.slices);
        return bench_fail(run, "out of host memory");
    }
    if (threads == 1)
        snprintf(detail, sizeof(detail), "a loop on one thread (-O3, %s)",
                 loops->level);
    else
        snprintf(detail, sizeof(detail),
                 "a loop on %u threads started per run (-O3, %s)", threads,
                 loops->level);
    ok = bench_sample(&run->budget, step_workload, &st, &ns) &&
         bench_workload_check(run, d, st.output) &&
         bench_emit_bandwidth(run, detail, &ns, d->counted_bytes);
    bench_samples_deinit(&ns);
    free(st.slices);
    free(st.output);
    return ok;
}

bool bench_c_workload_measure(struct bench_run *run)
{
    const struct bench_workload_data *d = bench_workload_data(run);
    uint32_t cpus = run->env->cpus;

    if (d == NULL)
        return false;
    if (cpus > 256)
        cpus = 256;
    return measure_threads(run, d, 1) &&
           (cpus == 1 || measure_threads(run, d, cpus));
}
