/*
 * The targets the CPU plugin is held to, checked against the run's medians
 * and printed under the table. They are goals for a 2-core machine, not
 * tests: a missed one is reported, never an error.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hecbench_case.h"
#include "targets.h"
#include "workloads.h"

static const char *verdict(bool met)
{
    return met ? "met   " : "MISSED";
}

static double median_of(const struct bench_result *r)
{
    return r != NULL ? r->summary.median : 0.0;
}

/* accel's median against a fixed bound, in the unit of the result. */
static void check_bound(const struct bench_report *report, FILE *out,
                        const char *case_name, const char *variant,
                        double bound, const char *text)
{
    const struct bench_result *a = bench_report_find(report, case_name, variant,
                                                     UINT64_MAX, "accel", NULL);
    char value[32];

    if (a == NULL)
        return;
    bench_format_value(a->summary.median, a->unit, value, sizeof(value));
    fprintf(out, "  %s  %s: %s\n", verdict(a->summary.median <= bound), text,
            value);
}

/* accel's median at most `share` of a baseline's (a time). */
static void check_share(const struct bench_report *report, FILE *out,
                        const char *case_name, const char *variant,
                        const char *impl, double share, const char *text)
{
    const struct bench_result *a = bench_report_find(report, case_name, variant,
                                                     UINT64_MAX, "accel", NULL);
    const struct bench_result *b = bench_report_find(report, case_name, variant,
                                                     UINT64_MAX, impl, NULL);
    char av[32], bv[32];

    if (a == NULL)
        return;
    if (b == NULL || median_of(b) <= 0.0) {
        fprintf(out, "  n/a     %s: no %s figure in this run\n", text, impl);
        return;
    }
    bench_format_value(a->summary.median, a->unit, av, sizeof(av));
    bench_format_value(b->summary.median, b->unit, bv, sizeof(bv));
    fprintf(out, "  %s  %s: %s against %s (%.3g)\n",
            verdict(a->summary.median <= share * b->summary.median), text, av,
            bv, a->summary.median / b->summary.median);
}

/* vadd: accel's bandwidth against the best plain C loop. */
static void check_vadd(const struct bench_report *report, FILE *out)
{
    const struct bench_result *a = bench_report_find(report, "vadd", "", 0,
                                                     "accel", NULL);
    double best = 0.0;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (strcmp(r->case_name, "vadd") == 0 && strcmp(r->impl, "c") == 0 &&
            r->summary.median > best)
            best = r->summary.median;
    }
    if (a == NULL)
        return;
    if (best <= 0.0) {
        fprintf(out, "  n/a     vadd >= 0.95 x the best C loop: no C figure in "
                     "this run\n");
        return;
    }
    fprintf(
        out, "  %s  vadd >= 0.95 x the best C loop: %.2f GB/s against %.2f GB/s (%.3g)\n",
        verdict(a->summary.median >= 0.95 * best), a->summary.median, best,
        a->summary.median / best);
}

/*
 * A per-size target over every size of a case and variant: how many sizes
 * meet it, and the worst. `want_ratio` compares accel ÷ c against `limit`
 * (at least); else accel's own median (at most).
 */
static void check_sizes(const struct bench_report *report, FILE *out,
                        const char *case_name, const char *variant,
                        bool want_ratio, double limit, const char *text)
{
    unsigned met = 0, total = 0;
    double worst = 0.0;
    uint64_t worst_bytes = 0, smallest_met_run = 0;
    char size[32], value[32];

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];
        double figure;
        bool ok;

        if (strcmp(r->case_name, case_name) != 0 ||
            strcmp(r->variant, variant) != 0 ||
            strcmp(r->impl, want_ratio ? "c" : "accel") != 0)
            continue;
        if (want_ratio && !bench_report_ratio(report, r, &figure))
            continue;
        if (!want_ratio)
            figure = r->summary.median;
        ok = want_ratio ? figure >= limit : figure <= limit;
        total++;
        met += ok;
        /* The smallest size from which every larger one meets the target. */
        if (!ok)
            smallest_met_run = 0;
        else if (smallest_met_run == 0)
            smallest_met_run = r->bytes;
        if (total == 1 || (want_ratio ? figure < worst : figure > worst)) {
            worst = figure;
            worst_bytes = r->bytes;
        }
    }
    if (total == 0)
        return;
    bench_format_bytes(worst_bytes, size, sizeof(size));
    if (want_ratio)
        snprintf(value, sizeof(value), "%.3g", worst);
    else
        bench_format_value(worst, BENCH_UNIT_NS, value, sizeof(value));
    fprintf(out, "  %s  %s: %u of %u sizes, worst %s at %s",
            verdict(met == total), text, met, total, value, size);
    if (met != total && smallest_met_run != 0) {
        bench_format_bytes(smallest_met_run, size, sizeof(size));
        fprintf(out, "; met from %s up", size);
    }
    fputc('\n', out);
}

/* dispatch: what accel_event_query adds to the plugin's own entry. */
static void check_dispatch(const struct bench_report *report, FILE *out)
{
    const struct bench_result *a = bench_report_find(report, "dispatch", "", 0,
                                                     "accel", NULL);
    const struct bench_result *p = bench_report_find(report, "dispatch", "", 0,
                                                     "plugin", NULL);

    if (a == NULL)
        return;
    if (p == NULL) {
        fprintf(out, "  n/a     dispatch <= 10 ns over the direct call: no "
                     "plugin figure\n");
        return;
    }
    fprintf(
        out,
        "  %s  dispatch <= 10 ns over the direct call: %.1f ns over (%.1f ns "
        "against %.1f ns)\n",
        verdict(a->summary.median - p->summary.median <= 10.0),
        a->summary.median - p->summary.median, a->summary.median,
        p->summary.median);
}

/* discovery with the selection as run (every plugin, when ACCEL_BACKEND is unset) against
 * the CPU plugin alone: GPU plugins without a GPU must cost <= 2 ms more. */
static void check_discovery_beside_null(const struct bench_report *report,
                                        FILE *out)
{
    const struct bench_result *all = bench_report_find(report, "discovery",
                                                       "net", 0, "accel", NULL);
    const struct bench_result *null = bench_report_find(
        report, "discovery", "net-null", 0, "accel", NULL);
    char over[32];

    if (all == NULL || null == NULL)
        return;
    bench_format_value(all->summary.median - null->summary.median,
                       BENCH_UNIT_NS, over, sizeof(over));
    fprintf(out, "  %s  discovery <= ACCEL_BACKEND=null's + 2 ms: %s more\n",
            verdict(all->summary.median - null->summary.median <= 2e6), over);
}

/* Every target whose case ran, into `out`. */
static void write_checks(const struct bench_report *report, FILE *out)
{
    check_bound(report, out, "discovery", "net", 2e6, "discovery <= 2 ms");
    check_discovery_beside_null(report, out);
    check_share(report, out, "discovery", "net", "opencl", 0.1,
                "discovery <= 0.1 x OpenCL's");
    check_bound(report, out, "launch_empty", "", 2e3, "launch_empty <= 2 µs");
    check_share(report, out, "launch_empty", "", "opencl", 0.1,
                "launch_empty <= 0.1 x OpenCL's");
    check_bound(report, out, "launch_stream", "", 500.0,
                "launch_stream <= 0.5 µs a launch");
    check_vadd(report, out);
    check_sizes(report, out, "copy_h2d", "pageable", true, 0.9,
                "copy_h2d pageable >= 0.9 x memcpy");
    check_sizes(report, out, "copy_h2d", "pinned", true, 0.9,
                "copy_h2d pinned >= 0.9 x memcpy");
    check_sizes(report, out, "copy_d2h", "pageable", true, 0.9,
                "copy_d2h pageable >= 0.9 x memcpy");
    check_sizes(report, out, "copy_d2h", "pinned", true, 0.9,
                "copy_d2h pinned >= 0.9 x memcpy");
    check_sizes(report, out, "fill", "", true, 0.9, "fill >= 0.9 x memset");
    check_sizes(report, out, "alloc_free", "", false, 100.0,
                "alloc_free <= 100 ns a pair");
    check_dispatch(report, out);
    check_bound(report, out, "compile", "warm", 1e6,
                "compile warm (cached) <= 1 ms");
    check_share(report, out, "compile", "warm", "opencl", 0.5,
                "compile warm <= 0.5 x OpenCL's clBuildProgram warm");
    check_share(report, out, "compile", "cold", "opencl", 1.5,
                "compile cold <= 1.5 x OpenCL's clBuildProgram cold");
}

void bench_write_targets(const struct bench_report *report, FILE *out)
{
    char *text = NULL;
    size_t size = 0;
    FILE *lines;

    if (strcmp(report->machine.plugin, "null") != 0)
        return;
    lines = open_memstream(&text, &size);
    if (lines == NULL)
        return;
    write_checks(report, lines);
    bench_write_workload_targets(report, lines);
    bench_write_hecbench_targets(report, lines);
    if (fclose(lines) == 0 && size != 0)
        fprintf(
            out, "\nTargets for the CPU plugin (medians of this run; goals, not tests):\n%s",
            text);
    free(text);
}
