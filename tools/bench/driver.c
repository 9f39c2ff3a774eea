/*
 * The driver: which points each case has, how long each is measured, and
 * the walk over cases, points and implementations.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compile_cases.h"
#include "hecbench_case.h"
#include "workloads.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

static const char *const case_names[BENCH_CASE_COUNT] = {
    [BENCH_DISCOVERY] = "discovery",
    [BENCH_DISCOVERY_MANY] = "discovery_many",
    [BENCH_DISPATCH] = "dispatch",
    [BENCH_LAUNCH_EMPTY] = "launch_empty",
    [BENCH_LAUNCH_STREAM] = "launch_stream",
    [BENCH_VADD] = "vadd",
    [BENCH_COPY_H2D] = "copy_h2d",
    [BENCH_COPY_D2H] = "copy_d2h",
    [BENCH_COPY_D2D] = "copy_d2d",
    [BENCH_FILL] = "fill",
    [BENCH_ALLOC_FREE] = "alloc_free",
    [BENCH_MATVEC] = "matvec",
    [BENCH_STENCIL_2D] = "stencil_2d",
    [BENCH_CONV3D] = "conv3d",
    [BENCH_HISTOGRAM] = "histogram",
    [BENCH_GEMM_TILED] = "gemm_tiled",
    [BENCH_REDUCE_SHARED] = "reduce_shared",
    [BENCH_SCAN_BLOCK] = "scan_block",
    [BENCH_HECBENCH] = "hecbench",
    [BENCH_COMPILE] = "compile",
    [BENCH_ALLREDUCE] = "allreduce",
};

/* Transfer sizes: every power of four from 4 KiB to 256 MiB; fewer in a quick run. */
static const uint64_t copy_sizes[] = {4 * KIB,   16 * KIB, 64 * KIB,
                                      256 * KIB, MIB,      4 * MIB,
                                      16 * MIB,  64 * MIB, 256 * MIB};
static const uint64_t copy_sizes_quick[] = {4 * KIB, 64 * KIB, MIB, 16 * MIB};
static const uint64_t allreduce_sizes[] = {4 * KIB, 64 * KIB, MIB, 16 * MIB,
                                           256 * MIB};
static const uint64_t allreduce_sizes_quick[] = {4 * KIB, 64 * KIB, MIB,
                                                 16 * MIB};
static const uint64_t alloc_sizes[] = {256, 4 * KIB, 64 * KIB, MIB, 16 * MIB};
static const uint64_t alloc_sizes_quick[] = {256, 64 * KIB, 16 * MIB};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/*
 * The implementations take turns at a point this many times, each with a
 * share of the budget, so that a slow drift of a busy machine touches them
 * all alike; their samples are pooled.
 */
#define BENCH_ROUNDS 3

/* The implementations, in the order each point is measured: accel first. */
static const struct bench_impl *const impls[] = {
    &bench_impl_accel,  &bench_impl_plugin,   &bench_impl_c,
    &bench_impl_opencl, &bench_impl_cuda_raw, &bench_impl_comm,
    &bench_impl_mpi,    &bench_impl_openmp,
};
#define IMPL_COUNT COUNT(impls)

const char *bench_case_name(enum bench_case_id id)
{
    return (unsigned)id < BENCH_CASE_COUNT ? case_names[id] : "?";
}

bool bench_case_from_name(const char *name, size_t length,
                          enum bench_case_id *out_id)
{
    for (int id = 0; id < BENCH_CASE_COUNT; id++) {
        if (strlen(case_names[id]) == length &&
            strncmp(case_names[id], name, length) == 0) {
            *out_id = (enum bench_case_id)id;
            return true;
        }
    }
    return false;
}

uint64_t bench_max_copy_bytes(bool quick)
{
    return quick ? copy_sizes_quick[COUNT(copy_sizes_quick) - 1]
                 : copy_sizes[COUNT(copy_sizes) - 1];
}

/* How long one implementation measures one point. */
static struct bench_budget budget_for(enum bench_case_id id, bool quick)
{
    const uint64_t ms = 1000000;

    switch (id) {
    case BENCH_DISCOVERY:
        return quick ? (struct bench_budget){1, 5, 10, 100 * ms}
                     : (struct bench_budget){2, 15, 60, 1500 * ms};
    case BENCH_DISCOVERY_MANY:
        return quick ? (struct bench_budget){1, 3, 10, 300 * ms}
                     : (struct bench_budget){1, 10, 30, 3000 * ms};
    case BENCH_VADD:
        return quick ? (struct bench_budget){1, 3, 50, 60 * ms}
                     : (struct bench_budget){3, 15, 200, 1500 * ms};
    case BENCH_COPY_H2D:
    case BENCH_COPY_D2H:
    case BENCH_COPY_D2D:
    case BENCH_FILL:
        return quick ? (struct bench_budget){2, 5, 20000, 15 * ms}
                     : (struct bench_budget){3, 10, 50000, 150 * ms};
    case BENCH_MATVEC:
    case BENCH_STENCIL_2D:
    case BENCH_CONV3D:
    case BENCH_HISTOGRAM:
    case BENCH_GEMM_TILED:
    case BENCH_REDUCE_SHARED:
    case BENCH_SCAN_BLOCK:
        /* A quick run checks that they run and verify: one run a round. */
        return quick ? (struct bench_budget){0, 1, 50, 1 * ms}
                     : (struct bench_budget){2, 10, 200, 1000 * ms};
    case BENCH_HECBENCH:
        /* A program's step takes milliseconds to a second. */
        return quick ? (struct bench_budget){0, 1, 50, 1 * ms}
                     : (struct bench_budget){2, 9, 200, 1500 * ms};
    case BENCH_COMPILE:
        /* A cold compile runs the C compiler: tenths of a second each. */
        return quick ? (struct bench_budget){1, 2, 5, 200 * ms}
                     : (struct bench_budget){1, 5, 200, 3000 * ms};
    default:
        return quick ? (struct bench_budget){3, 5, 100000, 20 * ms}
                     : (struct bench_budget){10, 20, 100000, 300 * ms};
    }
}

/* The points of a case, written to `out` (room for 32); their count. */
static size_t case_points(enum bench_case_id id, bool quick,
                          struct bench_point *out)
{
    static const char *const memories[] = {"pageable", "pinned"};
    static const char *const crowds[] = {"scanned", "over_cap"};
    const uint64_t *sizes = NULL;
    size_t size_count = 0, variant_count = 1, n = 0;
    const char *const *variants = NULL;

    switch (id) {
    case BENCH_COPY_H2D:
    case BENCH_COPY_D2H:
        variants = memories;
        variant_count = COUNT(memories);
        /* fall through */
    case BENCH_COPY_D2D:
    case BENCH_FILL:
        sizes = quick ? copy_sizes_quick : copy_sizes;
        size_count = quick ? COUNT(copy_sizes_quick) : COUNT(copy_sizes);
        break;
    case BENCH_DISCOVERY_MANY:
        variants = crowds;
        variant_count = COUNT(crowds);
        break;
    case BENCH_ALLOC_FREE:
        sizes = quick ? alloc_sizes_quick : alloc_sizes;
        size_count = quick ? COUNT(alloc_sizes_quick) : COUNT(alloc_sizes);
        break;
    case BENCH_COMPILE:
        variants = bench_compile_variants;
        variant_count = 2;
        break;
    case BENCH_HECBENCH:
        variants = bench_hecbench_variants();
        for (variant_count = 0; variants[variant_count] != NULL; variant_count++)
            ;
        break;
    case BENCH_ALLREDUCE:
        sizes = quick ? allreduce_sizes_quick : allreduce_sizes;
        size_count = quick ? COUNT(allreduce_sizes_quick)
                           : COUNT(allreduce_sizes);
        break;
    default:
        if (bench_is_workload(id)) {
            variants = bench_workload_variants(id);
            for (variant_count = 0; variants[variant_count] != NULL;
                 variant_count++)
                ;
        }
        break;
    }
    for (size_t v = 0; v < variant_count; v++)
        for (size_t i = 0; i < (sizes != NULL ? size_count : 1); i++)
            out[n++] = (struct bench_point){.case_id = id,
                                            .variant = variants ? variants[v] : "",
                                            .bytes = sizes ? sizes[i] : 0};
    return n;
}

/* ---- results: samples pooled over the rounds of a point ---- */

/* The samples of one future result. */
struct series {
    struct bench_result result; /* all but the summary */
    struct bench_samples values;
    size_t slot; /* the implementation's place in the walk */
};

struct bench_collector {
    struct series *series;
    size_t count;
    size_t capacity;
    size_t slot; /* the implementation measuring now */
};

static struct series *series_for(struct bench_run *run, const char *variant,
                                 const char *detail, const char *unit)
{
    struct bench_collector *c = run->collector;
    struct bench_result key;

    memset(&key, 0, sizeof(key));
    snprintf(key.case_name, sizeof(key.case_name), "%s",
             bench_case_name(run->point->case_id));
    snprintf(key.variant, sizeof(key.variant), "%s",
             variant ? variant : run->point->variant);
    key.bytes = run->point->bytes;
    snprintf(key.impl, sizeof(key.impl), "%s", run->impl);
    snprintf(key.detail, sizeof(key.detail), "%s", detail);
    snprintf(key.unit, sizeof(key.unit), "%s", unit);
    for (size_t i = 0; i < c->count; i++)
        if (memcmp(&c->series[i].result, &key, sizeof(key)) == 0)
            return &c->series[i];
    if (c->count == c->capacity) {
        size_t capacity = c->capacity ? c->capacity * 2 : 16;
        struct series *grown = realloc(c->series, capacity * sizeof(*grown));

        if (grown == NULL)
            return NULL;
        c->series = grown;
        c->capacity = capacity;
    }
    c->series[c->count] = (struct series){.result = key, .slot = c->slot};
    return &c->series[c->count++];
}

bool bench_emit_time(struct bench_run *run, const char *variant,
                     const char *detail, const struct bench_samples *ns)
{
    struct series *series = series_for(run, variant, detail, BENCH_UNIT_NS);

    return series != NULL &&
           bench_samples_extend(&series->values, ns->values, ns->count);
}

bool bench_emit_bandwidth(struct bench_run *run, const char *detail,
                          const struct bench_samples *ns, uint64_t bytes)
{
    struct series *series = series_for(run, NULL, detail, BENCH_UNIT_GBPS);

    if (series == NULL)
        return false;
    /* Bytes per nanosecond are (decimal) gigabytes per second. */
    for (size_t i = 0; i < ns->count; i++) {
        double rate = ns->values[i] > 0 ? (double)bytes / ns->values[i] : 0.0;

        if (!bench_samples_extend(&series->values, &rate, 1))
            return false;
    }
    return true;
}

bool bench_measure(struct bench_run *run, bench_step_fn step, void *context,
                   const char *detail, uint64_t bytes)
{
    struct bench_samples ns;
    bool ok = bench_sample(&run->budget, step, context, &ns) &&
              (bytes != 0 ? bench_emit_bandwidth(run, detail, &ns, bytes)
                          : bench_emit_time(run, NULL, detail, &ns));

    bench_samples_deinit(&ns);
    return ok;
}

/* Drop what an implementation emitted at this point: one of its rounds failed. */
static void collector_forget(struct bench_collector *c, size_t slot)
{
    size_t kept = 0;

    for (size_t i = 0; i < c->count; i++) {
        if (c->series[i].slot == slot)
            bench_samples_deinit(&c->series[i].values);
        else
            c->series[kept++] = c->series[i];
    }
    c->count = kept;
}

/* Summarise every series into the report, in the order they began, and empty. */
static bool collector_flush(struct bench_collector *c, struct bench_report *report)
{
    bool ok = true;

    for (size_t i = 0; i < c->count; i++) {
        struct bench_result *r = &c->series[i].result;

        ok = ok && bench_summarize(&c->series[i].values, &r->summary) &&
             bench_report_add(report, r);
        bench_samples_deinit(&c->series[i].values);
    }
    c->count = 0;
    return ok;
}

bool bench_fail(struct bench_run *run, const char *fmt, ...)
{
    char message[512], size[32] = "";
    va_list args;

    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    if (run->point->bytes != 0)
        bench_format_bytes(run->point->bytes, size, sizeof(size));
    bench_report_note(run->env->report, "%s %s%s%s%s%s: %s", run->impl,
                      bench_case_name(run->point->case_id),
                      run->point->variant[0] ? " " : "", run->point->variant,
                      size[0] ? " " : "", size, message);
    return false;
}

void *bench_alloc_touched(uint64_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = NULL;

    if (posix_memalign(&p, page, (size_t)bytes) != 0)
        return NULL;
    memset(p, 0, (size_t)bytes);
    return p;
}

/* ---- the walk ---- */

/* One implementation as the walk sees it: opened when first needed. */
struct impl_slot {
    const struct bench_impl *impl;
    void *state;
    bool opened;
    bool available;
};

bool bench_list_has(const char *list, const char *name)
{
    size_t length = strlen(name);

    if (list == NULL)
        return true;
    for (const char *p = list; *p != '\0';) {
        size_t item = strcspn(p, ",");

        if (item == length && strncmp(p, name, length) == 0)
            return true;
        p += item;
        p += *p == ',';
    }
    return false;
}

bool bench_list_known(const char *list, const char *const *names,
                      const char **out_bad, size_t *out_length)
{
    for (const char *p = list; *p != '\0';) {
        size_t item = strcspn(p, ",");
        bool known = false;

        for (size_t i = 0; names[i] != NULL; i++)
            known |= strlen(names[i]) == item && strncmp(names[i], p, item) == 0;
        if (!known) {
            *out_bad = p;
            *out_length = item;
            return false;
        }
        p += item;
        p += *p == ',';
    }
    return true;
}

bool bench_impl_names_valid(const char *list, const char **out_bad,
                            size_t *out_length)
{
    const char *names[IMPL_COUNT + 1];

    for (size_t i = 0; i < IMPL_COUNT; i++)
        names[i] = impls[i]->name;
    names[IMPL_COUNT] = NULL;
    return bench_list_known(list, names, out_bad, out_length);
}

/* Where the walk is, for the progress line. */
struct walk {
    struct bench_env *env;
    struct impl_slot slots[IMPL_COUNT];
    uint64_t start;
    int case_index, case_total;
    int last_case_shown;
    struct bench_collector collector;
};

/* Only runs long enough to wonder about say where they are. */
static bool progress_wanted(const struct walk *w)
{
    return !w->env->options->quick || bench_now_ns() - w->start >= 1500000000ull;
}

/* On a terminal, one line rewritten per measurement; else a line per case. */
static void progress(struct walk *w, const struct bench_run *run)
{
    const struct bench_point *point = run->point;
    char size[32] = "";

    if (!progress_wanted(w) ||
        (!w->env->progress_tty && w->last_case_shown == w->case_index))
        return;
    w->last_case_shown = w->case_index;
    if (!w->env->progress_tty) {
        fprintf(stderr, "accel-bench: [%d/%d] %s\n", w->case_index,
                w->case_total, bench_case_name(point->case_id));
        return;
    }
    if (point->bytes != 0)
        bench_format_bytes(point->bytes, size, sizeof(size));
    fprintf(stderr, "\r\033[Kaccel-bench: [%d/%d] %s %s %s %s", w->case_index,
            w->case_total, bench_case_name(point->case_id), point->variant,
            size, run->impl);
}

/* Open an implementation the first time it is needed; false when it cannot run. */
static bool slot_ready(struct bench_env *env, struct impl_slot *slot)
{
    if (!slot->opened) {
        slot->opened = true;
        slot->available = slot->impl->open(env, &slot->state);
        if (!slot->available) {
            slot->impl->close(slot->state);
            slot->state = NULL;
        }
    }
    return slot->available;
}

/* A share of a point's budget for one round; the first round warms up fully. */
static struct bench_budget round_budget(struct bench_budget whole, int round)
{
    struct bench_budget part = {
        .warmup = round == 0 ? whole.warmup : 1,
        .min_runs = (whole.min_runs + BENCH_ROUNDS - 1) / BENCH_ROUNDS,
        .max_runs = (whole.max_runs + BENCH_ROUNDS - 1) / BENCH_ROUNDS,
        .max_ns = whole.max_ns / BENCH_ROUNDS,
    };

    return part;
}

/*
 * Every wanted implementation measures the point, taking turns over the
 * rounds; then the pooled samples become the point's results.
 */
static bool measure_point(struct walk *w, const struct bench_point *point)
{
    struct bench_env *env = w->env;
    bool failed[IMPL_COUNT] = {false};
    bool accel_ok = true;

    for (int round = 0; round < BENCH_ROUNDS; round++) {
        for (size_t i = 0; i < IMPL_COUNT; i++) {
            struct impl_slot *slot = &w->slots[i];
            bench_measure_fn measure = slot->impl->measure[point->case_id];
            struct bench_run run = {
                .env = env,
                .point = point,
                .impl = slot->impl->name,
                .budget = round_budget(
                    budget_for(point->case_id, env->options->quick), round),
                .collector = &w->collector};

            if (measure == NULL || failed[i] ||
                !bench_list_has(env->options->impls, slot->impl->name) ||
                !slot_ready(env, slot))
                continue;
            if (round == 0)
                progress(w, &run);
            w->collector.slot = i;
            if (!measure(slot->state, &run)) {
                failed[i] = true;
                collector_forget(&w->collector, i);
                if (slot->impl == &bench_impl_accel)
                    accel_ok = false;
            }
        }
    }
    if (!collector_flush(&w->collector, env->report)) {
        bench_report_note(env->report, "out of memory for the results");
        accel_ok = false;
    }
    return accel_ok;
}

bool bench_run_all(struct bench_env *env)
{
    struct walk w = {.env = env, .start = bench_now_ns()};
    bool ok = true;

    for (size_t i = 0; i < IMPL_COUNT; i++)
        w.slots[i].impl = impls[i];
    for (int id = 0; id < BENCH_CASE_COUNT; id++)
        w.case_total += env->options->cases[id];
    for (int id = 0; id < BENCH_CASE_COUNT; id++) {
        struct bench_point points[32];
        size_t count;

        if (!env->options->cases[id])
            continue;
        w.case_index++;
        count = case_points((enum bench_case_id)id, env->options->quick, points);
        for (size_t p = 0; p < count; p++)
            if (points[p].case_id != BENCH_HECBENCH ||
                bench_list_has(env->options->programs, points[p].variant))
                ok &= measure_point(&w, &points[p]);
    }
    if (env->progress_tty && w.last_case_shown != 0)
        fputs("\r\033[K", stderr);
    for (size_t i = IMPL_COUNT; i-- > 0;)
        if (w.slots[i].available)
            w.slots[i].impl->close(w.slots[i].state);
    free(w.collector.series);
    return ok;
}
