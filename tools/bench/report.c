#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void bench_report_init(struct bench_report *report)
{
    memset(report, 0, sizeof(*report));
}

void bench_report_deinit(struct bench_report *report)
{
    for (size_t i = 0; i < report->note_count; i++)
        free(report->notes[i]);
    free(report->notes);
    free(report->results);
    bench_report_init(report);
}

bool bench_report_add(struct bench_report *report,
                      const struct bench_result *result)
{
    if (report->count == report->capacity) {
        size_t capacity = report->capacity ? report->capacity * 2 : 64;
        struct bench_result *grown = realloc(report->results,
                                             capacity * sizeof(*grown));

        if (grown == NULL)
            return false;
        report->results = grown;
        report->capacity = capacity;
    }
    report->results[report->count++] = *result;
    return true;
}

bool bench_report_note(struct bench_report *report, const char *fmt, ...)
{
    va_list args;
    char *note;
    int length;

    if (report->note_count == report->note_capacity) {
        size_t capacity = report->note_capacity ? report->note_capacity * 2 : 8;
        char **grown = realloc(report->notes, capacity * sizeof(*grown));

        if (grown == NULL)
            return false;
        report->notes = grown;
        report->note_capacity = capacity;
    }
    va_start(args, fmt);
    length = vasprintf(&note, fmt, args);
    va_end(args);
    if (length < 0)
        return false;
    report->notes[report->note_count++] = note;
    return true;
}

bool bench_result_same_group(const struct bench_result *a,
                             const struct bench_result *b)
{
    return strcmp(a->case_name, b->case_name) == 0 &&
           strcmp(a->variant, b->variant) == 0 && a->bytes == b->bytes;
}

const struct bench_result *
bench_report_accel_for(const struct bench_report *report,
                       const struct bench_result *result)
{
    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if (strcmp(r->impl, "accel") == 0 && bench_result_same_group(r, result))
            return r;
    }
    return NULL;
}

bool bench_report_ratio(const struct bench_report *report,
                        const struct bench_result *result, double *out_ratio)
{
    const struct bench_result *accel;

    *out_ratio = 0.0;
    if (strcmp(result->impl, "accel") == 0 || result->summary.median <= 0.0)
        return false;
    accel = bench_report_accel_for(report, result);
    if (accel == NULL || accel->summary.runs == 0)
        return false;
    *out_ratio = accel->summary.median / result->summary.median;
    return true;
}

const struct bench_result *bench_report_find(const struct bench_report *report,
                                             const char *case_name,
                                             const char *variant, uint64_t bytes,
                                             const char *impl, const char *detail)
{
    for (size_t i = 0; i < report->count; i++) {
        const struct bench_result *r = &report->results[i];

        if ((case_name == NULL || strcmp(r->case_name, case_name) == 0) &&
            (variant == NULL || strcmp(r->variant, variant) == 0) &&
            (bytes == UINT64_MAX || r->bytes == bytes) &&
            (impl == NULL || strcmp(r->impl, impl) == 0) &&
            (detail == NULL || strcmp(r->detail, detail) == 0))
            return r;
    }
    return NULL;
}

void bench_format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t unit = 0;

    while (unit + 1 < sizeof(units) / sizeof(units[0]) && bytes >= 1024 &&
           bytes % 1024 == 0) {
        bytes /= 1024;
        unit++;
    }
    snprintf(out, size, "%llu %s", (unsigned long long)bytes, units[unit]);
}

void bench_format_value(double value, const char *unit, char *out, size_t size)
{
    /* A difference (discovery's net) may be negative: scale by its size. */
    double magnitude = fabs(value);

    if (strcmp(unit, BENCH_UNIT_NS) != 0)
        snprintf(out, size, "%.2f %s", value, unit);
    else if (magnitude < 1e3)
        snprintf(out, size, "%.1f ns", value);
    else if (magnitude < 1e6)
        snprintf(out, size, "%.2f µs", value / 1e3);
    else if (magnitude < 1e9)
        snprintf(out, size, "%.2f ms", value / 1e6);
    else
        snprintf(out, size, "%.2f s", value / 1e9);
}
