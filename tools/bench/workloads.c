/*
 * The workload cases' shared side: their shapes, their host data and
 * reference results, the check every implementation's output goes through,
 * and the choice of the C loops' ISA level.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

#define WORKLOAD_COUNT 4

/* The host data of every workload, made on demand. */
struct bench_workloads {
    struct bench_workload_data data[WORKLOAD_COUNT];
};

static int workload_index(enum bench_case_id id)
{
    switch (id) {
    case BENCH_MATVEC: return 0;
    case BENCH_STENCIL_2D: return 1;
    case BENCH_CONV3D: return 2;
    case BENCH_HISTOGRAM: return 3;
    default: return -1;
    }
}

bool bench_is_workload(enum bench_case_id id)
{
    return workload_index(id) >= 0;
}

const char *const *bench_workload_variants(enum bench_case_id id)
{
    static const char *const matvec[] = {"32x8", "256x1", NULL};
    static const char *const single[] = {"", NULL};

    return id == BENCH_MATVEC ? matvec : single;
}

struct bench_geometry bench_workload_geometry(const struct bench_point *point)
{
    switch (point->case_id) {
    case BENCH_MATVEC:
        if (strcmp(point->variant, "256x1") == 0)
            return (struct bench_geometry){{BENCH_MATVEC_N / 256, 1, 1}, {256, 1, 1}};
        return (struct bench_geometry){{BENCH_MATVEC_N / 256, 1, 1}, {32, 8, 1}};
    case BENCH_STENCIL_2D:
        return (struct bench_geometry){{BENCH_STENCIL_N / 32, BENCH_STENCIL_N / 8, 1},
                                       {32, 8, 1}};
    case BENCH_CONV3D:
        return (struct bench_geometry){{BENCH_CONV3D_N / 32, BENCH_CONV3D_N / 8,
                                        BENCH_CONV3D_N}, {32, 8, 1}};
    default:
        return (struct bench_geometry){{BENCH_HISTOGRAM_COUNT / 256, 1, 1}, {256, 1, 1}};
    }
}

static void dims_text(const uint32_t d[3], char *out, size_t size)
{
    if (d[2] != 1)
        snprintf(out, size, "%ux%ux%u", d[0], d[1], d[2]);
    else if (d[1] != 1)
        snprintf(out, size, "%ux%u", d[0], d[1]);
    else
        snprintf(out, size, "%u", d[0]);
}

void bench_geometry_text(const struct bench_geometry *g, char *out, size_t size)
{
    char grid[40], block[40];

    dims_text(g->grid, grid, sizeof(grid));
    dims_text(g->block, block, sizeof(block));
    snprintf(out, size, "<<<%s, %s>>>", grid, block);
}

/* ---- host data ---- */

/* A well-mixed 32-bit hash of i (splitmix-like), for inputs anyone can remake. */
static uint32_t mix(uint64_t i)
{
    i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9ull;
    i = (i ^ (i >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((i ^ (i >> 31)) >> 16);
}

/* Floats in [-0.5, 0.5), from the hash. */
static void *random_floats(uint64_t count, uint64_t seed)
{
    float *f = bench_alloc_touched(count * sizeof(float));

    for (uint64_t i = 0; f != NULL && i < count; i++)
        f[i] = (float)(mix(i + seed) & 0xffff) / 65536.0f - 0.5f;
    return f;
}

static void *random_words(uint64_t count)
{
    uint32_t *w = bench_alloc_touched(count * sizeof(uint32_t));

    for (uint64_t i = 0; w != NULL && i < count; i++)
        w[i] = mix(i) * 2654435761u;
    return w;
}

/* The inputs of a workload, and its reference from the baseline loops. */
static bool make_data(enum bench_case_id id, struct bench_workload_data *d)
{
    const struct bench_workload_loops *loops = bench_workload_loops_baseline();
    uint64_t n, cells;

    switch (id) {
    case BENCH_MATVEC:
        n = BENCH_MATVEC_N;
        *d = (struct bench_workload_data){id, "matvec", (uint32_t)n, 2,
                                          {random_floats(n * n, 1), random_floats(n, 7)},
                                          {n * n * 4, n * 4}, NULL, n * 4, false, n * n * 4};
        break;
    case BENCH_STENCIL_2D:
        n = BENCH_STENCIL_N;
        cells = n * n;
        *d = (struct bench_workload_data){id, "stencil_2d", (uint32_t)n, 1,
                                          {random_floats(cells, 3), NULL}, {cells * 4, 0},
                                          NULL, cells * 4, false, 2 * cells * 4};
        break;
    case BENCH_CONV3D:
        n = BENCH_CONV3D_N;
        cells = n * n * n;
        *d = (struct bench_workload_data){id, "conv3d", (uint32_t)n, 1,
                                          {random_floats(cells, 5), NULL}, {cells * 4, 0},
                                          NULL, cells * 4, false, 2 * cells * 4};
        break;
    default:
        n = BENCH_HISTOGRAM_COUNT;
        *d = (struct bench_workload_data){id, "histogram", (uint32_t)n, 1,
                                          {random_words(n), NULL}, {n * 4, 0}, NULL,
                                          BENCH_HISTOGRAM_BINS * 4, true, n * 4};
        break;
    }
    d->expected = bench_alloc_touched(d->output_bytes);
    if (d->inputs[0] == NULL || (d->input_count == 2 && d->inputs[1] == NULL) ||
        d->expected == NULL)
        return false;
    switch (id) {
    case BENCH_MATVEC:
        loops->matvec(d->n, d->inputs[0], d->inputs[1], d->expected, 0, d->n);
        break;
    case BENCH_STENCIL_2D:
        loops->stencil_2d(d->n, d->inputs[0], d->expected, 0, d->n);
        break;
    case BENCH_CONV3D:
        loops->conv3d(d->n, d->inputs[0], d->expected, 0, d->n);
        break;
    default:
        memset(d->expected, 0, d->output_bytes);
        loops->histogram(d->inputs[0], d->expected, 0, d->n);
        break;
    }
    return true;
}

const struct bench_workload_data *bench_workload_data(struct bench_run *run)
{
    struct bench_env *env = run->env;
    int index = workload_index(run->point->case_id);
    struct bench_workload_data *d;

    if (index < 0) {
        bench_fail(run, "not a workload case");
        return NULL;
    }
    if (env->workloads == NULL && (env->workloads = calloc(1, sizeof(*env->workloads))) == NULL) {
        bench_fail(run, "out of host memory");
        return NULL;
    }
    d = &env->workloads->data[index];
    if (d->expected != NULL)
        return d;
    if (!make_data(run->point->case_id, d)) {
        bench_fail(run, "out of host memory for the %s data", d->kernel);
        return NULL;
    }
    return d;
}

void bench_workloads_free(struct bench_env *env)
{
    if (env->workloads == NULL)
        return;
    for (int i = 0; i < WORKLOAD_COUNT; i++) {
        struct bench_workload_data *d = &env->workloads->data[i];

        free(d->inputs[0]);
        free(d->inputs[1]);
        free(d->expected);
    }
    free(env->workloads);
    env->workloads = NULL;
}

bool bench_workload_check(struct bench_run *run, const struct bench_workload_data *d,
                          const void *output)
{
    if (d->zero_output) {
        const uint32_t *got = output, *want = d->expected;

        for (uint64_t i = 0; i < d->output_bytes / 4; i++)
            if (got[i] != want[i])
                return bench_fail(run, "%s: %s's bin %llu is %u, expected %u", d->kernel,
                                  run->impl, (unsigned long long)i, got[i], want[i]);
        return true;
    }
    const float *got = output, *want = d->expected;

    for (uint64_t i = 0; i < d->output_bytes / 4; i++) {
        float scale = fabsf(want[i]) > 1.0f ? fabsf(want[i]) : 1.0f;

        if (!(fabsf(got[i] - want[i]) <= 1e-4f * scale))
            return bench_fail(run, "%s: %s's element %llu is %.9g, expected %.9g", d->kernel,
                              run->impl, (unsigned long long)i, (double)got[i],
                              (double)want[i]);
    }
    return true;
}
