/*
 * Samples, percentiles and the measuring loop of accel-bench.
 *
 * A case is measured by calling one step function again and again: a few
 * warm-up runs that are thrown away, then runs until both a minimum count
 * and a time budget are reached (or a maximum count is). Every step returns
 * the nanoseconds of one operation; what the samples then mean (time per
 * operation, bytes per nanosecond) is for the caller to say.
 *
 * Nothing here knows about accel: the tests link it alone.
 */
#ifndef ACCEL_BENCH_STATS_H
#define ACCEL_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long to measure one implementation of one case at one size. */
struct bench_budget {
    uint32_t warmup;   /* runs made first and not counted */
    uint32_t min_runs; /* at least this many counted runs, */
    uint32_t max_runs; /* at most this many, */
    uint64_t max_ns;   /* and no more once this much time has passed */
};

/* Counted values, in the order they were taken. */
struct bench_samples {
    double *values;
    size_t count;
    size_t capacity;
};

/* The figures every result reports. */
struct bench_summary {
    double median;
    double p10;
    double p90;
    uint32_t runs;
};

/* Monotonic time in nanoseconds; only differences mean anything. */
uint64_t bench_now_ns(void);

/* Room for `capacity` values. False when out of memory. */
bool bench_samples_init(struct bench_samples *samples, size_t capacity);
void bench_samples_deinit(struct bench_samples *samples);
/* Append; false when full. */
bool bench_samples_add(struct bench_samples *samples, double value);
/* Append `count` values, growing the room as needed. False when out of memory. */
bool bench_samples_extend(struct bench_samples *samples, const double *values,
                          size_t count);

/*
 * The p-th percentile (0 to 100) of `count` sorted values, interpolating
 * linearly between the two nearest ranks (the method of numpy's default and
 * of Excel's PERCENTILE.INC). 0 for no values.
 */
double bench_percentile(const double *sorted, size_t count, double p);

/* Median, 10th and 90th percentiles and count of the values, unchanged. */
bool bench_summarize(const struct bench_samples *samples,
                     struct bench_summary *out_summary);

/*
 * One run of what is measured: its duration in nanoseconds in *out_ns.
 * False on failure (the step reports why).
 */
typedef bool (*bench_step_fn)(void *context, double *out_ns);

/*
 * Warm up, then run `step` within `budget` into `out_samples`, which is
 * initialised here (deinit it either way). False when a step failed or
 * memory ran out.
 */
bool bench_sample(const struct bench_budget *budget, bench_step_fn step,
                  void *context, struct bench_samples *out_samples);

#endif /* ACCEL_BENCH_STATS_H */
