/*
 * The results of one accel-bench run and the three ways of writing them:
 * a table for people, one JSON document for programs, and an SVG plot of
 * copy bandwidth against transfer size.
 *
 * A result is one implementation's figures for one point of a case. Points
 * with the same case, variant and size form a group; within a group every
 * result other than accel's is shown with the ratio accel ÷ it, so that
 * each comparison is between figures taken on the same machine in the same
 * run.
 *
 * Nothing here knows about accel: the tests link it alone.
 */
#ifndef ACCEL_BENCH_REPORT_H
#define ACCEL_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

#define BENCH_UNIT_NS "ns"
#define BENCH_UNIT_GBPS "GB/s"

struct bench_result {
    char case_name[24]; /* "copy_h2d", ... */
    char variant[16];   /* "pageable", "pinned", "net", ...; "" for none */
    uint64_t bytes;     /* transfer or allocation size; 0 for none */
    char impl[16];      /* "accel", "c", "opencl", "cuda-raw", "plugin" */
    char detail[96];    /* how this implementation did it, for people */
    char unit[8];       /* BENCH_UNIT_NS or BENCH_UNIT_GBPS */
    struct bench_summary summary;
};

/* What the results were measured on. */
struct bench_machine {
    char plugin[32]; /* the selected device's plugin */
    uint32_t device_index;
    char device_name[128];
    char arch[32];
    uint32_t cpus; /* CPUs this process may use */
    bool quick;    /* a --quick run */
};

struct bench_report {
    struct bench_machine machine;
    struct bench_result *results;
    size_t count;
    size_t capacity;
    char **notes; /* why a baseline did not run, and the like */
    size_t note_count;
    size_t note_capacity;
};

void bench_report_init(struct bench_report *report);
void bench_report_deinit(struct bench_report *report);
/* Append a copy of `result`. False when out of memory. */
bool bench_report_add(struct bench_report *report,
                      const struct bench_result *result);
/* Append a note, printf-style. False when out of memory. */
bool bench_report_note(struct bench_report *report, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True when both results belong to the same group (case, variant, size). */
bool bench_result_same_group(const struct bench_result *a,
                             const struct bench_result *b);
/* accel's result in the group of `result`; NULL when there is none. */
const struct bench_result *
bench_report_accel_for(const struct bench_report *report,
                       const struct bench_result *result);
/*
 * accel's median divided by this result's, for a result that is not
 * accel's own and has accel beside it in its group. False otherwise.
 */
bool bench_report_ratio(const struct bench_report *report,
                        const struct bench_result *result, double *out_ratio);
/*
 * The first result matching each non-NULL field (`bytes` matched unless
 * UINT64_MAX); NULL when none does.
 */
const struct bench_result *bench_report_find(const struct bench_report *report,
                                             const char *case_name,
                                             const char *variant,
                                             uint64_t bytes, const char *impl,
                                             const char *detail);

/* "4 KiB", "256 MiB", "100 B". */
void bench_format_bytes(uint64_t bytes, char *out, size_t size);
/* A value in its unit, scaled for reading: "850.0 ns", "1.21 µs", "9.87 GB/s". */
void bench_format_value(double value, const char *unit, char *out, size_t size);

/* The table, with the notes below it. */
void bench_write_table(const struct bench_report *report, FILE *out);
/* One JSON document (RFC 8259), ending with a newline. */
void bench_write_json(const struct bench_report *report, FILE *out);
/*
 * An SVG plot of the median bandwidth of every copy case against transfer
 * size, one panel per case, one line per implementation and memory kind,
 * the 10th to 90th percentile as a bar at each point. Writes a plot that
 * says "no copy results" when there are none.
 */
void bench_write_svg(const struct bench_report *report, FILE *out);

#endif /* ACCEL_BENCH_REPORT_H */
