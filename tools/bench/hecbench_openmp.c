/*
 * The real-code suite's OpenMP side: each program's own OpenMP version
 * (hecbench.h), on host buffers, with as many threads as the device's
 * CPUs, which is what the CPU plugin and PoCL use.
 */
#include <stdlib.h>

#include "hecbench_case.h"

/* omp_set_num_threads, from the OpenMP library (hecbench/openmp_threads.cpp). */
void hb_openmp_set_threads(int threads);

struct openmp_state {
    void *buffers[BENCH_HECBENCH_MAX][HB_MAX_BUFFERS];
};

static bool openmp_open(struct bench_env *env, void **out_state)
{
    *out_state = calloc(1, sizeof(struct openmp_state));
    if (*out_state == NULL) {
        bench_report_note(env->report, "openmp: out of host memory");
        return false;
    }
    hb_openmp_set_threads((int)env->cpus);
    return true;
}

static void openmp_close(void *state)
{
    struct openmp_state *s = state;

    if (s == NULL)
        return;
    for (int i = 0; i < BENCH_HECBENCH_MAX; i++)
        bench_hecbench_buffers_free(s->buffers[i]);
    free(s);
}

struct omp_step {
    const struct hb_program *p;
    const struct bench_hecbench_data *d;
    void **buffers;
};

static bool step_program(void *context, double *out_ns)
{
    struct omp_step *st = context;
    uint64_t start;

    bench_hecbench_restore(st->p, st->d, st->buffers);
    start = bench_now_ns();
    st->p->openmp(st->buffers);
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_hecbench(void *state, struct bench_run *run)
{
    struct openmp_state *s = state;
    const struct hb_program *p = bench_hecbench_program(run->point);
    const struct bench_hecbench_data *d = bench_hecbench_data(run);
    struct omp_step st = {.p = p, .d = d};

    if (d == NULL)
        return false;
    st.buffers = s->buffers[bench_hecbench_slot(run->point)];
    if (st.buffers[0] == NULL &&
        !bench_hecbench_buffers(p, (void *const *)d->initial, st.buffers))
        return bench_fail(run, "out of host memory");
    if (!bench_measure(run, step_program, &st, "g++ -O3 -fopenmp", 0))
        return false;
    for (uint32_t i = 0; i < p->buffer_count; i++)
        if (p->buffers[i].check &&
            !bench_hecbench_check(run, p, d, i, st.buffers[i]))
            return false;
    return true;
}

static bool openmp_discover(const char *arg)
{
    (void)arg;
    return false;
}

const struct bench_impl bench_impl_openmp = {
    .name = "openmp",
    .open = openmp_open,
    .close = openmp_close,
    .discover = openmp_discover,
    .measure = {[BENCH_HECBENCH] = measure_hecbench},
};
