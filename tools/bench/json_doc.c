/* The JSON document of accel-bench --json. */
#include <math.h>
#include <string.h>

#include "report.h"

void bench_json_write_string(FILE *out, const char *value)
{
    const unsigned char *s = (const unsigned char *)value;

    fputc('"', out);
    while (*s != '\0') {
        size_t length;

        switch (*s) {
        case '"': fputs("\\\"", out); s++; continue;
        case '\\': fputs("\\\\", out); s++; continue;
        case '\n': fputs("\\n", out); s++; continue;
        case '\r': fputs("\\r", out); s++; continue;
        case '\t': fputs("\\t", out); s++; continue;
        default: break;
        }
        if (*s < 0x20 || *s == 0x7f) {
            fprintf(out, "\\u%04x", *s++);
            continue;
        }
        length = bench_utf8_length(s);
        if (length == 0) {
            fputs("\\ufffd", out);
            s++;
            continue;
        }
        fwrite(s, 1, length, out);
        s += length;
    }
    fputc('"', out);
}

/* JSON has no NaN or infinity: those become null. */
static void write_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.6g", value);
    else
        fputs("null", out);
}

static void write_member(FILE *out, int indent, const char *key, const char *value,
                         bool comma)
{
    fprintf(out, "%*s\"%s\": ", indent, "", key);
    bench_json_write_string(out, value);
    fputs(comma ? ",\n" : "\n", out);
}

static void write_result(const struct bench_report *report,
                         const struct bench_result *r, bool last, FILE *out)
{
    double ratio;

    fputs("    {\n", out);
    write_member(out, 6, "case", r->case_name, true);
    write_member(out, 6, "variant", r->variant, true);
    fprintf(out, "      \"bytes\": %llu,\n", (unsigned long long)r->bytes);
    write_member(out, 6, "impl", r->impl, true);
    write_member(out, 6, "detail", r->detail, true);
    fputs("      \"median\": ", out);
    write_number(out, r->summary.median);
    fputs(",\n      \"p10\": ", out);
    write_number(out, r->summary.p10);
    fputs(",\n      \"p90\": ", out);
    write_number(out, r->summary.p90);
    fputs(",\n", out);
    write_member(out, 6, "unit", r->unit, true);
    fprintf(out, "      \"runs\": %u,\n", r->summary.runs);
    fputs("      \"accel_ratio\": ", out);
    if (bench_report_ratio(report, r, &ratio))
        write_number(out, ratio);
    else
        fputs("null", out);
    fprintf(out, "\n    }%s\n", last ? "" : ",");
}

void bench_write_json(const struct bench_report *report, FILE *out)
{
    const struct bench_machine *m = &report->machine;

    fputs("{\n  \"tool\": \"accel-bench\",\n  \"quick\": ", out);
    fputs(m->quick ? "true" : "false", out);
    fputs(",\n  \"device\": {\n", out);
    write_member(out, 4, "plugin", m->plugin, true);
    fprintf(out, "    \"index\": %u,\n", m->device_index);
    write_member(out, 4, "name", m->device_name, true);
    write_member(out, 4, "arch", m->arch, false);
    fprintf(out, "  },\n  \"cpus\": %u,\n  \"results\": [\n", m->cpus);
    for (size_t i = 0; i < report->count; i++)
        write_result(report, &report->results[i], i + 1 == report->count, out);
    fputs("  ],\n  \"notes\": [", out);
    for (size_t i = 0; i < report->note_count; i++) {
        fputs(i == 0 ? "\n    " : ",\n    ", out);
        bench_json_write_string(out, report->notes[i]);
    }
    fputs(report->note_count != 0 ? "\n  ]\n}\n" : "]\n}\n", out);
}
