/*
 * The plot of accel-bench --svg: median copy bandwidth against transfer
 * size, one panel per copy case (and the workloads' bars below,
 * svg_workloads.c), written as plain SVG 1.1 with no script
 * and no external reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "svg_workloads.h"

enum {
    PANEL_W = 400,
    PANEL_H = 330,
    MARGIN_LEFT = 62,
    MARGIN_RIGHT = 26,
    MARGIN_TOP = 34,
    MARGIN_BOTTOM = 52,
    TITLE_H = 34,
    LEGEND_ROW_H = 22,
    LEGEND_ENTRY_W = 230,
    MAX_SERIES = 16,
    MAX_POINTS = 64
};

static const char *const copy_cases[] = {"copy_h2d", "copy_d2h", "copy_d2d"};
#define COPY_CASE_COUNT (sizeof(copy_cases) / sizeof(copy_cases[0]))

/* A line of the plot: one implementation with one kind of memory. */
struct series {
    const char *impl;
    const char *variant;
};

/* The x range shared by the panels, as log2 of bytes. */
struct x_range {
    double lo, hi;
};

/* Text as XML character data: markup escaped, anything else XML refuses replaced. */
static void write_escaped(FILE *out, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    const unsigned char *end = s + strlen(text);

    while (s < end) {
        size_t length;

        switch (*s) {
        case '&':
            fputs("&amp;", out);
            s++;
            continue;
        case '<':
            fputs("&lt;", out);
            s++;
            continue;
        case '>':
            fputs("&gt;", out);
            s++;
            continue;
        case '"':
            fputs("&quot;", out);
            s++;
            continue;
        case '\'':
            fputs("&apos;", out);
            s++;
            continue;
        default:
            break;
        }
        /* XML 1.0 allows no control characters, not even as references. */
        if (*s < 0x20 || *s == 0x7f) {
            fputc(' ', out);
            s++;
            continue;
        }
        length = json_utf8_length(s, (size_t)(end - s));
        if (length == 0) {
            fputs("&#xfffd;", out);
            s++;
            continue;
        }
        fwrite(s, 1, length, out);
        s += length;
    }
}

static bool is_copy_result(const struct bench_result *r, const char *case_name)
{
    return strcmp(r->case_name, case_name) == 0 &&
           strcmp(r->unit, BENCH_UNIT_GBPS) == 0 && r->bytes != 0 &&
           r->summary.runs != 0;
}

static const char *impl_color(const char *impl)
{
    static const struct {
        const char *impl, *color;
    } colors[] = {
        {"accel", "#1f77b4"},
        {"c", "#555555"},
        {"opencl", "#d62728"},
        {"cuda-raw", "#2ca02c"},
    };

    for (size_t i = 0; i < sizeof(colors) / sizeof(colors[0]); i++)
        if (strcmp(colors[i].impl, impl) == 0)
            return colors[i].color;
    return "#9467bd";
}

static const char *variant_dash(const char *variant)
{
    return strcmp(variant, "pinned") == 0 ? "7 4" : "none";
}

/* Where an implementation or a memory kind comes in the legend. */
static int rank(const char *name, const char *const *order, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(order[i], name) == 0)
            return i;
    return count;
}

static int series_compare(const void *a, const void *b)
{
    static const char *const impls[] = {"accel", "c", "opencl", "cuda-raw"};
    static const char *const variants[] = {"pageable", "pinned", ""};
    const struct series *x = a, *y = b;
    int by_impl = rank(x->impl, impls, 4) - rank(y->impl, impls, 4);

    if (by_impl != 0)
        return by_impl;
    return rank(x->variant, variants, 3) - rank(y->variant, variants, 3);
}

/* Add (impl, variant) to `list` unless there; returns the new count. */
static size_t series_add(struct series *list, size_t count,
                         const struct bench_result *r)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i].impl, r->impl) == 0 &&
            strcmp(list[i].variant, r->variant) == 0)
            return count;
    if (count == MAX_SERIES)
        return count;
    list[count].impl = r->impl;
    list[count].variant = r->variant;
    return count + 1;
}

/* The round number at or above `value` that the y axis ends at, and its step. */
static double nice_top(double value, double *out_step)
{
    double raw = value > 0.0 ? value / 5.0 : 0.2;
    double magnitude = pow(10.0, floor(log10(raw)));
    double norm = raw / magnitude;
    double step = (norm <= 1.0   ? 1.0
                   : norm <= 2.0 ? 2.0
                   : norm <= 5.0 ? 5.0
                                 : 10.0) *
                  magnitude;

    double top = ceil(value / step - 1e-9) * step;

    *out_step = step;
    return top > 0.0 ? top : step;
}

/* "4K", "256K", "16M": the short labels of the x axis. */
static void short_size(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        snprintf(out, size, "%lluG", (unsigned long long)(bytes >> 30));
    else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(out, size, "%lluM", (unsigned long long)(bytes >> 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(out, size, "%lluK", (unsigned long long)(bytes >> 10));
    else
        snprintf(out, size, "%llu", (unsigned long long)bytes);
}

static double x_of(const struct x_range *xr, uint64_t bytes)
{
    double span = PANEL_W - MARGIN_LEFT - MARGIN_RIGHT;

    return MARGIN_LEFT +
           (log2((double)bytes) - xr->lo) / (xr->hi - xr->lo) * span;
}

static double y_of(double value, double top)
{
    double span = PANEL_H - MARGIN_TOP - MARGIN_BOTTOM;

    return MARGIN_TOP + span - value / top * span;
}

/* The sizes measured for a case, ascending, without repeats. */
static size_t case_sizes(const struct bench_report *report,
                         const char *case_name, uint64_t *sizes)
{
    size_t count = 0;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];
        size_t at = 0;

        if (!is_copy_result(r, case_name))
            continue;
        while (at < count && sizes[at] < r->bytes)
            at++;
        if ((at < count && sizes[at] == r->bytes) || count == MAX_POINTS)
            continue;
        memmove(&sizes[at + 1], &sizes[at], (count - at) * sizeof(*sizes));
        sizes[at] = r->bytes;
        count++;
    }
    return count;
}

static void write_axes(FILE *out, const struct x_range *xr, const uint64_t *sizes,
                       size_t size_count, double top, double step)
{
    double bottom = PANEL_H - MARGIN_BOTTOM, right = PANEL_W - MARGIN_RIGHT;

    for (double v = 0.0; v <= top + step / 2; v += step) {
        double y = y_of(v, top);

        fprintf(out,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#e4e4e4\"/>\n",
                MARGIN_LEFT, y, right, y);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                MARGIN_LEFT - 6, y + 4, v);
    }
    for (size_t i = 0; i < size_count; i++) {
        char label[32];
        double x = x_of(xr, sizes[i]);

        short_size(sizes[i], label, sizeof(label));
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#999\"/>\n",
                x, bottom, x, bottom + 4);
        fprintf(
            out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            x, bottom + 17, label);
    }
    fprintf(out,
            "<path d=\"M%d %d V%.1f H%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
            MARGIN_LEFT, MARGIN_TOP, bottom, right);
    fprintf(out,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">transfer size "
            "(bytes)</text>\n",
            (MARGIN_LEFT + right) / 2, bottom + 38);
    fprintf(out,
            "<text transform=\"translate(16 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">GB/s (median)</text>\n",
            (MARGIN_TOP + bottom) / 2);
}

static void write_series(FILE *out, const struct bench_report *report,
                         const char *case_name, const struct series *s,
                         const struct x_range *xr, double top)
{
    const char *color = impl_color(s->impl);
    bool started = false;

    fprintf(
        out,
        "<g stroke=\"%s\" fill=\"%s\">\n<path fill=\"none\" stroke-width=\"2\" "
        "stroke-dasharray=\"%s\" d=\"",
        color, color, variant_dash(s->variant));
    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (!is_copy_result(r, case_name) || strcmp(r->impl, s->impl) != 0 ||
            strcmp(r->variant, s->variant) != 0)
            continue;
        fprintf(out, "%s%.1f %.1f", started ? " L" : "M", x_of(xr, r->bytes),
                y_of(r->summary.median, top));
        started = true;
    }
    fputs("\"/>\n", out);
    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];
        double x;

        if (!is_copy_result(r, case_name) || strcmp(r->impl, s->impl) != 0 ||
            strcmp(r->variant, s->variant) != 0)
            continue;
        x = x_of(xr, r->bytes);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n",
                x, y_of(r->summary.p10, top), x, y_of(r->summary.p90, top), x,
                y_of(r->summary.median, top));
    }
    fputs("</g>\n", out);
}

static void write_panel(FILE *out, const struct bench_report *report,
                        const char *case_name, int index,
                        const struct x_range *xr)
{
    struct series list[MAX_SERIES];
    uint64_t sizes[MAX_POINTS];
    size_t count = 0, size_count = case_sizes(report, case_name, sizes);
    double max = 0.0, step, top;

    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (!is_copy_result(r, case_name))
            continue;
        count = series_add(list, count, r);
        if (r->summary.p90 > max)
            max = r->summary.p90;
    }
    top = nice_top(max, &step);
    fprintf(out, "<g transform=\"translate(%d %d)\">\n", index * PANEL_W,
            TITLE_H);
    fprintf(out, "<text x=\"%d\" y=\"20\" font-weight=\"bold\">", MARGIN_LEFT);
    write_escaped(out, case_name);
    fputs("</text>\n", out);
    write_axes(out, xr, sizes, size_count, top, step);
    for (size_t i = 0; i < count; i++)
        write_series(out, report, case_name, &list[i], xr, top);
    fputs("</g>\n", out);
}

/* One legend entry: a line in a colour and a dash, and its label. */
static void legend_entry(FILE *out, int slot, int per_row, int y0,
                         const char *color, const char *dash, const char *label)
{
    int x = MARGIN_LEFT + slot % per_row * LEGEND_ENTRY_W;
    int y = y0 + slot / per_row * LEGEND_ROW_H;

    fprintf(out,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n",
            x, y - 4, x + 28, y - 4, color, dash);
    fprintf(out, "<text x=\"%d\" y=\"%d\">", x + 34, y);
    write_escaped(out, label);
    fputs("</text>\n", out);
}

static bool any_pinned(const struct series *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i].variant, "pinned") == 0)
            return true;
    return false;
}

/* Entries of the legend of a sorted series list: as write_legend draws them. */
static int legend_size(const struct series *list, size_t count)
{
    int entries = any_pinned(list, count) ? 2 : 0;

    for (size_t i = 0; i < count; i++)
        entries += i == 0 || strcmp(list[i].impl, list[i - 1].impl) != 0;
    return entries;
}

/* A colour per implementation, then what solid and dashed lines mean. */
static void write_legend(FILE *out, const struct series *list, size_t count,
                         int y0, int per_row)
{
    int slot = 0;

    for (size_t i = 0; i < count; i++)
        if (i == 0 || strcmp(list[i].impl, list[i - 1].impl) != 0)
            legend_entry(out, slot++, per_row, y0, impl_color(list[i].impl),
                         "none", list[i].impl);
    if (any_pinned(list, count)) {
        legend_entry(out, slot++, per_row, y0, "#999", "none",
                     "pageable, or device to device");
        legend_entry(out, slot, per_row, y0, "#999", variant_dash("pinned"),
                     "pinned host memory");
    }
}

void bench_write_svg(const struct bench_report *report, FILE *out)
{
    const struct bench_machine *m = &report->machine;
    struct series legend[MAX_SERIES];
    struct x_range xr = {INFINITY, -INFINITY};
    size_t legend_count = 0;
    int panels = 0, width, height, per_row, legend_rows;
    const char *present[COPY_CASE_COUNT];

    for (size_t c = 0; c < COPY_CASE_COUNT; c++) {
        bool any = false;

        for (size_t i = 0; i < report->count; i++) {
            const struct bench_result *r = &report->results[i];

            if (!is_copy_result(r, copy_cases[c]))
                continue;
            any = true;
            legend_count = series_add(legend, legend_count, r);
            xr.lo = fmin(xr.lo, log2((double)r->bytes));
            xr.hi = fmax(xr.hi, log2((double)r->bytes));
        }
        if (any)
            present[panels++] = copy_cases[c];
    }
    qsort(legend, legend_count, sizeof(legend[0]), series_compare);
    if (xr.hi <= xr.lo) {
        xr.lo = isfinite(xr.lo) ? xr.lo - 1 : 0;
        xr.hi = xr.lo + 2;
    }
    /* Room for the title even with one panel. */
    width = (panels > 2 ? panels : 2) * PANEL_W;
    per_row = (width - MARGIN_LEFT) / LEGEND_ENTRY_W > 0
                  ? (width - MARGIN_LEFT) / LEGEND_ENTRY_W
                  : 1;
    legend_rows = (legend_size(legend, legend_count) + per_row - 1) / per_row;
    height = TITLE_H + PANEL_H + legend_rows * LEGEND_ROW_H + 12;
    height += bench_svg_workloads_height(report);
    if (bench_svg_workloads_height(report) != 0 &&
        width < bench_svg_workloads_width())
        width = bench_svg_workloads_width();
    height += bench_svg_hecbench_height(report);
    if (width < bench_svg_hecbench_width(report))
        width = bench_svg_hecbench_width(report);

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width,
            height);
    fprintf(out, "<text x=\"%d\" y=\"22\" font-size=\"15\">Copy bandwidth: ",
            MARGIN_LEFT);
    write_escaped(out, m->plugin);
    fprintf(out, " device %u (", m->device_index);
    write_escaped(out, m->device_name);
    fprintf(out, "), %u CPUs%s</text>\n", m->cpus, m->quick ? ", quick run" : "");
    if (panels == 0)
        fprintf(out, "<text x=\"%d\" y=\"%d\">no copy results</text>\n",
                MARGIN_LEFT, TITLE_H + PANEL_H / 2);
    for (int p = 0; p < panels; p++)
        write_panel(out, report, present[p], p, &xr);
    write_legend(out, legend, legend_count, TITLE_H + PANEL_H + 6, per_row);
    bench_svg_write_workloads(
        out, report, TITLE_H + PANEL_H + legend_rows * LEGEND_ROW_H + 12);
    bench_svg_write_hecbench(out, report,
                             TITLE_H + PANEL_H + legend_rows * LEGEND_ROW_H +
                                 12 + bench_svg_workloads_height(report));
    fputs("</svg>\n", out);
}
