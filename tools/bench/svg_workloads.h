/* The workload panel of the --svg plot (svg_workloads.c), drawn by svg.c. */
#ifndef ACCEL_BENCH_SVG_WORKLOADS_H
#define ACCEL_BENCH_SVG_WORKLOADS_H

#include <stdio.h>

#include "report.h"

/* The panel's height; 0 when the report has no workload result. */
int bench_svg_workloads_height(const struct bench_report *report);
/* The width the panel needs, every point drawn. */
int bench_svg_workloads_width(void);
/* Draw the panel with its top at y0 (nothing when its height is 0). */
void bench_svg_write_workloads(FILE *out, const struct bench_report *report,
                               int y0);

/*
 * The real-code panel (svg_hecbench.c), under the workload panel: its
 * height (0 without hecbench results), its width, and its drawing.
 */
int bench_svg_hecbench_height(const struct bench_report *report);
int bench_svg_hecbench_width(const struct bench_report *report);
void bench_svg_write_hecbench(FILE *out, const struct bench_report *report,
                              int y0);

#endif /* ACCEL_BENCH_SVG_WORKLOADS_H */
