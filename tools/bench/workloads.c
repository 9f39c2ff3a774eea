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

/* The host data of every workload, made on demand. */
struct bench_workloads {
    struct bench_workload_data data[BENCH_WORKLOAD_COUNT];
};

int bench_workload_slot(enum bench_case_id id)
{
    switch (id) {
    case BENCH_MATVEC:
        return 0;
    case BENCH_STENCIL_2D:
        return 1;
    case BENCH_CONV3D:
        return 2;
    case BENCH_HISTOGRAM:
        return 3;
    case BENCH_GEMM_TILED:
        return 4;
    case BENCH_REDUCE_SHARED:
        return 5;
    case BENCH_SCAN_BLOCK:
        return 6;
    default:
        return -1;
    }
}

bool bench_is_workload(enum bench_case_id id)
{
    return bench_workload_slot(id) >= 0;
}

const char *const *bench_workload_variants(enum bench_case_id id)
{
    static const char *const matvec[] = {"32x8", "256x1", NULL};
    static const char *const stencil[] = {"", "tiled", NULL};
    static const char *const gemm[] = {"tiled", "naive", NULL};
    static const char *const single[] = {"", NULL};

    return id == BENCH_MATVEC       ? matvec
           : id == BENCH_STENCIL_2D ? stencil
           : id == BENCH_GEMM_TILED ? gemm
                                    : single;
}

int bench_workload_form(const struct bench_point *point)
{
    return (point->case_id == BENCH_STENCIL_2D ||
            point->case_id == BENCH_GEMM_TILED) &&
           strcmp(point->variant, "tiled") == 0;
}

const char *bench_workload_kernel(const struct bench_point *point)
{
    switch (point->case_id) {
    case BENCH_MATVEC:
        return "matvec";
    case BENCH_STENCIL_2D:
        return bench_workload_form(point) ? "stencil_2d_tiled" : "stencil_2d";
    case BENCH_CONV3D:
        return "conv3d";
    case BENCH_HISTOGRAM:
        return "histogram";
    case BENCH_GEMM_TILED:
        return bench_workload_form(point) ? "gemm_tiled" : "gemm";
    case BENCH_REDUCE_SHARED:
        return "reduce_shared";
    default:
        return "scan_block";
    }
}

struct bench_geometry bench_workload_geometry(const struct bench_point *point)
{
    switch (point->case_id) {
    case BENCH_MATVEC:
        if (strcmp(point->variant, "256x1") == 0)
            return (struct bench_geometry){{BENCH_MATVEC_N / 256, 1, 1},
                                           {256, 1, 1}};
        return (struct bench_geometry){{BENCH_MATVEC_N / 256, 1, 1}, {32, 8, 1}};
    case BENCH_STENCIL_2D:
        return (struct bench_geometry){
            {BENCH_STENCIL_N / 32, BENCH_STENCIL_N / 8, 1}, {32, 8, 1}};
    case BENCH_CONV3D:
        return (struct bench_geometry){
            {BENCH_CONV3D_N / 32, BENCH_CONV3D_N / 8, BENCH_CONV3D_N},
            {32, 8, 1}};
    case BENCH_GEMM_TILED:
        return (struct bench_geometry){{BENCH_GEMM_N / 16, BENCH_GEMM_N / 16, 1},
                                       {16, 16, 1}};
    case BENCH_REDUCE_SHARED:
    case BENCH_SCAN_BLOCK:
        return (struct bench_geometry){
            {BENCH_SEGMENTED_COUNT / BENCH_SEGMENT, 1, 1}, {BENCH_SEGMENT, 1, 1}};
    default:
        return (struct bench_geometry){{BENCH_HISTOGRAM_COUNT / 256, 1, 1},
                                       {256, 1, 1}};
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

/*
 * The inputs of a case whose kernel needs barriers, and its reference from
 * the baseline loops.
 */
static bool make_barrier_case_data(enum bench_case_id id,
                                   struct bench_workload_data *d)
{
    const struct bench_workload_loops *loops = bench_workload_loops_baseline();
    uint64_t n = id == BENCH_GEMM_TILED ? BENCH_GEMM_N : BENCH_SEGMENTED_COUNT;
    uint64_t segments = n / BENCH_SEGMENT;

    if (id == BENCH_GEMM_TILED)
        *d = (struct bench_workload_data){
            id,
            "gemm_tiled",
            (uint32_t)n,
            2,
            {random_floats(n * n, 11), random_floats(n * n, 13)},
            {n * n * 4, n * n * 4},
            NULL,
            n * n * 4,
            false,
            2 * n * n * n * 4,
            (uint32_t)n};
    else if (id == BENCH_REDUCE_SHARED)
        *d = (struct bench_workload_data){id,
                                          "reduce_shared",
                                          (uint32_t)n,
                                          1,
                                          {random_floats(n, 17), NULL},
                                          {n * 4, 0},
                                          NULL,
                                          segments * 4,
                                          false,
                                          n * 4,
                                          (uint32_t)segments};
    else
        *d = (struct bench_workload_data){id,
                                          "scan_block",
                                          (uint32_t)n,
                                          1,
                                          {random_floats(n, 19), NULL},
                                          {n * 4, 0},
                                          NULL,
                                          n * 4,
                                          false,
                                          2 * n * 4,
                                          (uint32_t)segments};
    d->expected = bench_alloc_touched(d->output_bytes);
    if (d->inputs[0] == NULL || (d->input_count == 2 && d->inputs[1] == NULL) ||
        d->expected == NULL)
        return false;
    if (id == BENCH_GEMM_TILED)
        loops->gemm(d->n, d->inputs[0], d->inputs[1], d->expected, 0, d->n);
    else if (id == BENCH_REDUCE_SHARED)
        loops->reduce(d->inputs[0], d->expected, 0, d->units);
    else
        loops->scan(d->inputs[0], d->expected, 0, d->units);
    return true;
}

/* The inputs of a workload, and its reference from the baseline loops. */
static bool make_data(enum bench_case_id id, struct bench_workload_data *d)
{
    const struct bench_workload_loops *loops = bench_workload_loops_baseline();
    uint64_t n, cells;

    if (id == BENCH_GEMM_TILED || id == BENCH_REDUCE_SHARED ||
        id == BENCH_SCAN_BLOCK)
        return make_barrier_case_data(id, d);
    switch (id) {
    case BENCH_MATVEC:
        n = BENCH_MATVEC_N;
        *d = (struct bench_workload_data){
            id,
            "matvec",
            (uint32_t)n,
            2,
            {random_floats(n * n, 1), random_floats(n, 7)},
            {n * n * 4, n * 4},
            NULL,
            n * 4,
            false,
            n * n * 4,
            (uint32_t)n};
        break;
    case BENCH_STENCIL_2D:
        n = BENCH_STENCIL_N;
        cells = n * n;
        *d = (struct bench_workload_data){id,
                                          "stencil_2d",
                                          (uint32_t)n,
                                          1,
                                          {random_floats(cells, 3), NULL},
                                          {cells * 4, 0},
                                          NULL,
                                          cells * 4,
                                          false,
                                          2 * cells * 4,
                                          (uint32_t)n};
        break;
    case BENCH_CONV3D:
        n = BENCH_CONV3D_N;
        cells = n * n * n;
        *d = (struct bench_workload_data){id,
                                          "conv3d",
                                          (uint32_t)n,
                                          1,
                                          {random_floats(cells, 5), NULL},
                                          {cells * 4, 0},
                                          NULL,
                                          cells * 4,
                                          false,
                                          2 * cells * 4,
                                          (uint32_t)n};
        break;
    default:
        n = BENCH_HISTOGRAM_COUNT;
        *d = (struct bench_workload_data){id,
                                          "histogram",
                                          (uint32_t)n,
                                          1,
                                          {random_words(n), NULL},
                                          {n * 4, 0},
                                          NULL,
                                          BENCH_HISTOGRAM_BINS * 4,
                                          true,
                                          n * 4,
                                          (uint32_t)n};
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
    int index = bench_workload_slot(run->point->case_id);
    struct bench_workload_data *d;

    if (index < 0) {
        bench_fail(run, "not a workload case");
        return NULL;
    }
    if (env->workloads == NULL &&
        (env->workloads = calloc(1, sizeof(*env->workloads))) == NULL) {
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
    for (int i = 0; i < BENCH_WORKLOAD_COUNT; i++) {
        struct bench_workload_data *d = &env->workloads->data[i];

        free(d->inputs[0]);
        free(d->inputs[1]);
        free(d->expected);
    }
    free(env->workloads);
    env->workloads = NULL;
}

bool bench_workload_check(struct bench_run *run,
                          const struct bench_workload_data *d, const void *output)
{
    if (d->zero_output) {
        const uint32_t *got = output, *want = d->expected;

        for (uint64_t i = 0; i < d->output_bytes / 4; i++)
            if (got[i] != want[i])
                return bench_fail(run, "%s: %s's bin %llu is %u, expected %u",
                                  d->kernel, run->impl, (unsigned long long)i,
                                  got[i], want[i]);
        return true;
    }
    const float *got = output, *want = d->expected;

    for (uint64_t i = 0; i < d->output_bytes / 4; i++) {
        float scale = fabsf(want[i]) > 1.0f ? fabsf(want[i]) : 1.0f;

        if (!(fabsf(got[i] - want[i]) <= 1e-4f * scale))
            return bench_fail(run, "%s: %s's element %llu is %.9g, expected %.9g",
                              d->kernel, run->impl, (unsigned long long)i,
                              (double)got[i], (double)want[i]);
    }
    return true;
}
