/*
 * The workload panel of accel-bench --svg, under the copy panels: for each
 * workload point, a bar per implementation (accel, OpenCL, plain C on one
 * thread and on every CPU), its height the median's share of the fastest
 * at that point, its GB/s written above it.
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
    GROUP_GAP = 30,
    BARS = 4
};

static const struct {
    const char *case_name, *variant;
} points[] = {
    {"matvec", "32x8"},      {"matvec", "256x1"},     {"stencil_2d", ""},
    {"conv3d", ""},          {"histogram", ""},       {"stencil_2d", "tiled"},
    {"gemm_tiled", "tiled"}, {"gemm_tiled", "naive"}, {"reduce_shared", ""},
    {"scan_block", ""},
};
#define POINT_COUNT (sizeof(points) / sizeof(points[0]))

static const struct {
    const char *impl, *label, *color;
    int threads; /* for c: 1 for the one-thread loop, 2 for the others; 0: any */
} bars[BARS] = {
    {"accel", "accel", "#1f77b4", 0},
    {"opencl", "OpenCL", "#d62728", 0},
    {"c", "C, one thread", "#aaaaaa", 1},
    {"c", "C, every CPU", "#555555", 2},
};

static double bar_value(const struct bench_report *report, size_t p, int b)
{
    double best = 0.0;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];
        bool one = strstr(r->detail, "one thread") != NULL;

        if (strcmp(r->case_name, points[p].case_name) != 0 ||
            strcmp(r->variant, points[p].variant) != 0 ||
            strcmp(r->impl, bars[b].impl) != 0 ||
            (bars[b].threads == 1 && !one) || (bars[b].threads == 2 && one))
            continue;
        if (r->summary.median > best)
            best = r->summary.median;
    }
    return best;
}

static bool any_point(const struct bench_report *report)
{
    for (size_t p = 0; p < POINT_COUNT; p++)
        if (bar_value(report, p, 0) > 0.0)
            return true;
    return false;
}

int bench_svg_workloads_width(void)
{
    return LEFT + (int)POINT_COUNT * (BARS * BAR_W + GROUP_GAP);
}

int bench_svg_workloads_height(const struct bench_report *report)
{
    return any_point(report) ? PANEL_H : 0;
}

static void write_group(FILE *out, const struct bench_report *report, size_t p,
                        int x0, int y0)
{
    int plot_h = PANEL_H - TOP - BOTTOM;
    double values[BARS], top = 0.0;

    for (int b = 0; b < BARS; b++) {
        values[b] = bar_value(report, p, b);
        top = values[b] > top ? values[b] : top;
    }
    for (int b = 0; b < BARS && top > 0.0; b++) {
        int h = (int)(plot_h * values[b] / top + 0.5), x = x0 + b * BAR_W;

        if (values[b] <= 0.0)
            continue;
        fprintf(
            out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
            x, y0 + TOP + plot_h - h, BAR_W - 3, h, bars[b].color);
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" font-size=\"9\" "
                "transform=\"rotate(-90 %d %d)\">"
                "%.2f</text>\n",
                x + 14, y0 + TOP + plot_h - h - 3, x + 14,
                y0 + TOP + plot_h - h - 3, values[b]);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s%s%s</text>\n",
            x0 + BARS * BAR_W / 2, y0 + PANEL_H - BOTTOM + 16,
            points[p].case_name, points[p].variant[0] != '\0' ? " " : "",
            points[p].variant);
}

void bench_svg_write_workloads(FILE *out, const struct bench_report *report,
                               int y0)
{
    int plot_h = PANEL_H - TOP - BOTTOM, x = LEFT;

    if (!any_point(report))
        return;
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" font-size=\"15\">Workloads: each median "
            "as a share "
            "of the fastest at that point (GB/s above each bar)</text>\n",
            LEFT, y0 + 20);
    fprintf(
        out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
        LEFT - 6, y0 + TOP + plot_h,
        LEFT + (int)POINT_COUNT * (BARS * BAR_W + GROUP_GAP), y0 + TOP + plot_h);
    for (size_t p = 0; p < POINT_COUNT; p++, x += BARS * BAR_W + GROUP_GAP)
        write_group(out, report, p, x, y0);
    for (int b = 0; b < BARS; b++) {
        int lx = LEFT + b * 150, ly = y0 + PANEL_H - 14;

        fprintf(
            out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
            lx, ly - 10, bars[b].color);
        fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 16, ly,
                bars[b].label);
    }
}
