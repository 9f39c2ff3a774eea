/*
 * The real-code suite's targets for the CPU plugin (issue 26): every
 * program at least PoCL's speed and at least 0.9 of its own OpenMP
 * version's, and the geometric mean of the speed-ups over PoCL at least
 * 1.3. Speed is the inverse of the median time of one step. Goals printed
 * under the table, never an error.
 */
#include <math.h>
#include <string.h>

#include "hecbench_case.h"

static double median_ns(const struct bench_report *report, const char *program,
                        const char *impl)
{
    const struct bench_result *r = bench_report_find(report, "hecbench", program,
                                                     UINT64_MAX, impl, NULL);

    return r != NULL ? r->summary.median : 0.0;
}

void bench_write_hecbench_targets(const struct bench_report *report, FILE *out)
{
    double log_sum = 0.0;
    unsigned points = 0;

    for (const char *const *name = bench_hecbench_variants(); *name != NULL;
         name++) {
        double accel = median_ns(report, *name, "accel");
        double opencl = median_ns(report, *name, "opencl");
        double openmp = median_ns(report, *name, "openmp");

        if (accel <= 0.0)
            continue;
        if (opencl > 0.0) {
            fprintf(out,
                    "  %s  hecbench %s >= 1.0 x PoCL's speed: %.3g ms against "
                    "%.3g ms (%.3g)\n",
                    opencl >= accel ? "met   " : "MISSED", *name, accel / 1e6,
                    opencl / 1e6, opencl / accel);
            log_sum += log(opencl / accel);
            points++;
        }
        if (openmp > 0.0)
            fprintf(out,
                    "  %s  hecbench %s >= 0.9 x its OpenMP version's speed: "
                    "%.3g ms against %.3g ms (%.3g)\n",
                    openmp >= 0.9 * accel ? "met   " : "MISSED", *name,
                    accel / 1e6, openmp / 1e6, openmp / accel);
    }
    if (points > 1)
        fprintf(out,
                "  %s  the hecbench programs' geometric mean >= 1.3 x PoCL's "
                "speed: %.3g over %u\n",
                exp(log_sum / points) >= 1.3 ? "met   " : "MISSED",
                exp(log_sum / points), points);
}
