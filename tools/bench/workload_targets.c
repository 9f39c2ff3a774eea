/*
 * The workload cases' targets for the CPU plugin: each at least PoCL's
 * speed, their geometric mean at least 1.2 times it, and the kernels that
 * need no barrier at 0.95 of the best plain C loop or more, and the
 * kernels with shared memory and barriers at 0.7 of their barrier-free
 * form or more (the cost of the machinery). Goals printed under the table,
 * never an error.
 */
#include <math.h>
#include <string.h>

#include "workloads.h"

static const enum bench_case_id workload_cases[] = {
    BENCH_MATVEC,     BENCH_STENCIL_2D,    BENCH_CONV3D,    BENCH_HISTOGRAM,
    BENCH_GEMM_TILED, BENCH_REDUCE_SHARED, BENCH_SCAN_BLOCK};

/* The best median of `impl` at the case's variant (several C loops). */
static double best_median(const struct bench_report *report,
                          const char *case_name, const char *variant,
                          const char *impl)
{
    double best = 0.0;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (strcmp(r->case_name, case_name) == 0 &&
            strcmp(r->variant, variant) == 0 && strcmp(r->impl, impl) == 0 &&
            r->summary.median > best)
            best = r->summary.median;
    }
    return best;
}

static const char *label(const char *case_name, const char *variant, char *out,
                         size_t size)
{
    snprintf(out, size, "%s%s%s", case_name, variant[0] != '\0' ? " " : "",
             variant);
    return out;
}

/* accel's barrier kernels against their barrier-free forms, in the same run. */
static void write_barrier_costs(const struct bench_report *report, FILE *out)
{
    static const struct {
        enum bench_case_id id;
        const char *barrier, *free;
    } pairs[] = {{BENCH_GEMM_TILED, "tiled", "naive"},
                 {BENCH_STENCIL_2D, "tiled", ""}};

    for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
        const char *case_name = bench_case_name(pairs[p].id);
        double with = best_median(report, case_name, pairs[p].barrier, "accel");
        double without = best_median(report, case_name, pairs[p].free, "accel");

        if (with > 0.0 && without > 0.0)
            fprintf(out,
                    "  %s  %s tiled >= 0.7 x its barrier-free form: %.2f GB/s "
                    "against "
                    "%.2f GB/s (%.3g)\n",
                    with >= 0.7 * without ? "met   " : "MISSED", case_name,
                    with, without, with / without);
    }
}

void bench_write_workload_targets(const struct bench_report *report, FILE *out)
{
    double log_sum = 0.0;
    unsigned points = 0;
    char name[48];

    for (size_t c = 0; c < sizeof(workload_cases) / sizeof(workload_cases[0]);
         c++) {
        const char *case_name = bench_case_name(workload_cases[c]);

        for (const char *const *v = bench_workload_variants(workload_cases[c]);
             *v != NULL; v++) {
            double accel = best_median(report, case_name, *v, "accel");
            double opencl = best_median(report, case_name, *v, "opencl");
            double c_best = best_median(report, case_name, *v, "c");

            if (accel <= 0.0)
                continue;
            label(case_name, *v, name, sizeof(name));
            if (opencl > 0.0) {
                fprintf(
                    out, "  %s  %s >= 1.0 x OpenCL's: %.2f GB/s against %.2f GB/s (%.3g)\n",
                    accel >= opencl ? "met   " : "MISSED", name, accel, opencl,
                    accel / opencl);
                log_sum += log(accel / opencl);
                points++;
            }
            if (c_best > 0.0 &&
                (workload_cases[c] == BENCH_MATVEC ||
                 (workload_cases[c] == BENCH_STENCIL_2D && **v == '\0')))
                fprintf(out,
                        "  %s  %s >= 0.95 x the best C loop: %.2f GB/s against "
                        "%.2f GB/s "
                        "(%.3g)\n",
                        accel >= 0.95 * c_best ? "met   " : "MISSED", name,
                        accel, c_best, accel / c_best);
        }
    }
    write_barrier_costs(report, out);
    if (points > 1)
        fprintf(
            out, "  %s  the workloads' geometric mean >= 1.2 x OpenCL's: %.3g over %u\n",
            exp(log_sum / points) >= 1.2 ? "met   " : "MISSED",
            exp(log_sum / points), points);
}
