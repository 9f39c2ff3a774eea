/* The CPU plugin's targets, checked against a run (targets.c). */
#ifndef ACCEL_BENCH_TARGETS_H
#define ACCEL_BENCH_TARGETS_H

#include <stdio.h>

#include "report.h"

/* For a run on the null plugin: each target, met or missed. Else nothing. */
void bench_write_targets(const struct bench_report *report, FILE *out);

#endif /* ACCEL_BENCH_TARGETS_H */
