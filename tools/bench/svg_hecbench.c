/*
 * The real-code panel of accel-bench --svg, under the workload panel: for
 * each program of the hecbench case, a bar per side (accel, OpenCL on
 * PoCL, the program's OpenMP version), its height the side's speed as a
 * share of the fastest side's (the shortest median time), the median in
 * milliseconds written above it.
 */
#include <string.h>

#include "report.h"
#include "svg_workloads.h"

enum {
    PANEL_H = 300,
    TOP = 40,
    BOTTOM = 46,
    LEFT = 62,
    BAR_W = 22,
    GROUP_GAP = 34,
    BARS = 3,
    MAX_PROGRAMS = 32
};

static const struct {
    const char *impl, *label, *color;
} bars[BARS] = {
    {"accel", "accel", "#1f77b4"},
    {"opencl", "OpenCL (PoCL)", "#d62728"},
    {"openmp", "the program's OpenMP version", "#2ca02c"},
};

/* The programs in the order of the report, at most MAX_PROGRAMS; their count. */
static size_t programs(const struct bench_report *report,
                       const char *out[MAX_PROGRAMS])
{
    size_t n = 0;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];
        bool seen = false;

        if (strcmp(r->case_name, "hecbench") != 0)
            continue;
        for (size_t k = 0; k < n; k++)
            seen |= strcmp(out[k], r->variant) == 0;
        if (!seen && n < MAX_PROGRAMS)
            out[n++] = r->variant;
    }
    return n;
}

static double median_ns(const struct bench_report *report, const char *program,
                        const char *impl)
{
    const struct bench_result *r = bench_report_find(report, "hecbench", program,
                                                     UINT64_MAX, impl, NULL);

    return r != NULL ? r->summary.median : 0.0;
}

int bench_svg_hecbench_height(const struct bench_report *report)
{
    const char *names[MAX_PROGRAMS];

    return programs(report, names) != 0 ? PANEL_H : 0;
}

int bench_svg_hecbench_width(const struct bench_report *report)
{
    const char *names[MAX_PROGRAMS];

    return LEFT + (int)programs(report, names) * (BARS * BAR_W + GROUP_GAP);
}

static void write_group(FILE *out, const struct bench_report *report,
                        const char *program, int x0, int y0)
{
    int plot_h = PANEL_H - TOP - BOTTOM;
    double ns[BARS], fastest = 0.0;

    for (int b = 0; b < BARS; b++) {
        ns[b] = median_ns(report, program, bars[b].impl);
        if (ns[b] > 0.0 && (fastest == 0.0 || ns[b] < fastest))
            fastest = ns[b];
    }
    for (int b = 0; b < BARS && fastest > 0.0; b++) {
        int h, x = x0 + b * BAR_W;

        if (ns[b] <= 0.0)
            continue;
        h = (int)(plot_h * fastest / ns[b] + 0.5);
        fprintf(
            out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
            x, y0 + TOP + plot_h - h, BAR_W - 3, h, bars[b].color);
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" font-size=\"9\" "
                "transform=\"rotate(-90 %d %d)\">%.3g ms</text>\n",
                x + 14, y0 + TOP + plot_h - h - 3, x + 14,
                y0 + TOP + plot_h - h - 3, ns[b] / 1e6);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            x0 + BARS * BAR_W / 2, y0 + PANEL_H - BOTTOM + 16, program);
}

void bench_svg_write_hecbench(FILE *out, const struct bench_report *report, int y0)
{
    const char *names[MAX_PROGRAMS];
    size_t count = programs(report, names);
    int plot_h = PANEL_H - TOP - BOTTOM, x = LEFT;

    if (count == 0)
        return;
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" font-size=\"15\">HeCBench programs: each "
            "side's speed as a share of the fastest's (median time above each "
            "bar)</text>\n",
            LEFT, y0 + 20);
    fprintf(
        out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
        LEFT - 6, y0 + TOP + plot_h,
        LEFT + (int)count * (BARS * BAR_W + GROUP_GAP), y0 + TOP + plot_h);
    for (size_t p = 0; p < count; p++, x += BARS * BAR_W + GROUP_GAP)
        write_group(out, report, names[p], x, y0);
    for (int b = 0; b < BARS; b++) {
        int lx = LEFT + b * 170, ly = y0 + PANEL_H - 14;

        fprintf(
            out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
            lx, ly - 10, bars[b].color);
        fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 16, ly,
                bars[b].label);
    }
}
