/* The table accel-bench prints for people. */
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Characters, not bytes: "µs" is one column wide but two bytes long. */
static int display_width(const char *s)
{
    int width = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            width++;
    return width;
}

/* `text` left-aligned in `width` columns, then one space. */
static void cell(FILE *out, const char *text, int width)
{
    fputs(text, out);
    for (int w = display_width(text); w < width; w++)
        fputc(' ', out);
    fputc(' ', out);
}

/* The same, right-aligned. */
static void cell_right(FILE *out, const char *text, int width)
{
    for (int w = display_width(text); w < width; w++)
        fputc(' ', out);
    fputs(text, out);
    fputc(' ', out);
}

enum {
    W_CASE = 13,
    W_VARIANT = 10,
    W_SIZE = 8,
    W_IMPL = 8,
    W_VALUE = 11,
    W_RUNS = 5,
    W_RATIO = 7
};

static void write_header(FILE *out)
{
    cell(out, "case", W_CASE);
    cell(out, "variant", W_VARIANT);
    cell_right(out, "size", W_SIZE);
    cell(out, "impl", W_IMPL);
    cell_right(out, "median", W_VALUE);
    cell_right(out, "p10", W_VALUE);
    cell_right(out, "p90", W_VALUE);
    cell_right(out, "runs", W_RUNS);
    cell_right(out, "accel÷", W_RATIO);
    fputs("how\n", out);
}

static void write_row(const struct bench_report *report,
                      const struct bench_result *r, bool first_of_group,
                      FILE *out)
{
    char size[32] = "", median[32], p10[32], p90[32], runs[16],
         ratio_text[16] = "";
    double ratio;

    if (first_of_group && r->bytes != 0)
        bench_format_bytes(r->bytes, size, sizeof(size));
    bench_format_value(r->summary.median, r->unit, median, sizeof(median));
    bench_format_value(r->summary.p10, r->unit, p10, sizeof(p10));
    bench_format_value(r->summary.p90, r->unit, p90, sizeof(p90));
    snprintf(runs, sizeof(runs), "%u", r->summary.runs);
    if (bench_report_ratio(report, r, &ratio))
        snprintf(ratio_text, sizeof(ratio_text), "%.3g", ratio);
    cell(out, first_of_group ? r->case_name : "", W_CASE);
    cell(out, first_of_group ? r->variant : "", W_VARIANT);
    cell_right(out, size, W_SIZE);
    cell(out, r->impl, W_IMPL);
    cell_right(out, median, W_VALUE);
    cell_right(out, p10, W_VALUE);
    cell_right(out, p90, W_VALUE);
    cell_right(out, runs, W_RUNS);
    cell_right(out, ratio_text, W_RATIO);
    fprintf(out, "%s\n", r->detail);
}

/* Every result of the group of `leader`: accel's first, then the others. */
static void write_group(const struct bench_report *report,
                        const struct bench_result *leader, FILE *out)
{
    bool first = true;

    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < report->count; i++) {
            const struct bench_result *r = &report->results[i];
            bool is_accel = strcmp(r->impl, "accel") == 0;

            if (!bench_result_same_group(r, leader) || is_accel != (pass == 0))
                continue;
            write_row(report, r, first, out);
            first = false;
        }
    }
}

static bool group_seen_before(const struct bench_report *report, size_t index)
{
    for (size_t i = 0; i < index; i++)
        if (bench_result_same_group(&report->results[i], &report->results[index]))
            return true;
    return false;
}

void bench_write_table(const struct bench_report *report, FILE *out)
{
    const struct bench_machine *m = &report->machine;
    const char *last_case = NULL;

    fprintf(out, "accel-bench: %s device %u (%s, %s), %u CPUs%s\n", m->plugin,
            m->device_index, m->device_name, m->arch, m->cpus,
            m->quick ? ", quick run" : "");
    fputs("accel÷: accel's median divided by this one's, from the same run: "
          "above 1 "
          "is faster for GB/s, below 1 is faster for times.\n\n",
          out);
    write_header(out);
    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (group_seen_before(report, i))
            continue;
        if (last_case != NULL && strcmp(last_case, r->case_name) != 0)
            fputc('\n', out);
        last_case = r->case_name;
        write_group(report, r, out);
    }
    if (report->note_count != 0)
        fputc('\n', out);
    for (size_t i = 0; i < report->note_count; i++)
        fprintf(out, "note: %s\n", report->notes[i]);
}
