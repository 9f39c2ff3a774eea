#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool bench_samples_init(struct bench_samples *samples, size_t capacity)
{
    samples->count = 0;
    samples->capacity = capacity;
    samples->values = capacity != 0 ? malloc(capacity * sizeof(double)) : NULL;
    return capacity == 0 || samples->values != NULL;
}

void bench_samples_deinit(struct bench_samples *samples)
{
    free(samples->values);
    samples->values = NULL;
    samples->count = 0;
    samples->capacity = 0;
}

bool bench_samples_add(struct bench_samples *samples, double value)
{
    if (samples->count == samples->capacity)
        return false;
    samples->values[samples->count++] = value;
    return true;
}

bool bench_samples_extend(struct bench_samples *samples, const double *values,
                          size_t count)
{
    if (samples->capacity - samples->count < count) {
        size_t capacity = samples->count + count;
        double *grown = realloc(samples->values, capacity * sizeof(double));

        if (grown == NULL)
            return false;
        samples->values = grown;
        samples->capacity = capacity;
    }
    if (count != 0)
        memcpy(samples->values + samples->count, values, count * sizeof(double));
    samples->count += count;
    return true;
}

double bench_percentile(const double *sorted, size_t count, double p)
{
    double rank, below;
    size_t low;

    if (count == 0)
        return 0.0;
    if (p <= 0.0)
        return sorted[0];
    if (p >= 100.0)
        return sorted[count - 1];
    rank = p / 100.0 * (double)(count - 1);
    below = floor(rank);
    low = (size_t)below;
    if (low + 1 >= count)
        return sorted[count - 1];
    return sorted[low] + (rank - below) * (sorted[low + 1] - sorted[low]);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

bool bench_summarize(const struct bench_samples *samples,
                     struct bench_summary *out_summary)
{
    double *sorted;

    memset(out_summary, 0, sizeof(*out_summary));
    if (samples->count == 0)
        return true;
    sorted = malloc(samples->count * sizeof(double));
    if (sorted == NULL)
        return false;
    memcpy(sorted, samples->values, samples->count * sizeof(double));
    qsort(sorted, samples->count, sizeof(double), compare_doubles);
    out_summary->median = bench_percentile(sorted, samples->count, 50.0);
    out_summary->p10 = bench_percentile(sorted, samples->count, 10.0);
    out_summary->p90 = bench_percentile(sorted, samples->count, 90.0);
    out_summary->runs = (uint32_t)samples->count;
    free(sorted);
    return true;
}

bool bench_sample(const struct bench_budget *budget, bench_step_fn step,
                  void *context, struct bench_samples *out_samples)
{
    uint64_t start;
    double ns;

    if (!bench_samples_init(out_samples, budget->max_runs))
        return false;
    for (uint32_t i = 0; i < budget->warmup; i++)
        if (!step(context, &ns))
            return false;
    start = bench_now_ns();
    while (out_samples->count < budget->max_runs) {
        if (out_samples->count >= budget->min_runs &&
            bench_now_ns() - start >= budget->max_ns)
            break;
        if (!step(context, &ns))
            return false;
        bench_samples_add(out_samples, ns);
    }
    return true;
}
