/*
 * The compile case: the example kernels (empty, saxpy, vadd) compiled from
 * source at run time, cold (a source the cache has never seen: an empty
 * kernel of a fresh name makes each one new) and warm (the same source again,
 * from the cache), by accel_module_compile and by OpenCL's clBuildProgram
 * (PoCL, which keeps a kernel cache of its own, on a CPU).
 */
#ifndef ACCEL_BENCH_COMPILE_CASES_H
#define ACCEL_BENCH_COMPILE_CASES_H

#include <stddef.h>

#include "bench.h"

/* The case's variants, NULL-terminated: "cold", "warm". */
extern const char *const bench_compile_variants[];

/*
 * The example kernels in `dialect` ("accel": <accel/kernel.h>; "opencl":
 * OpenCL C), into out: for "cold" with an empty kernel named after
 * `serial` and the process, so that no cache has seen it. False when it does not fit.
 */
bool bench_compile_source(const char *dialect, const char *variant,
                          unsigned long serial, char *out, size_t size);

/* accel's measurement of a compile point on the env's device. */
bool bench_accel_measure_compile(struct bench_run *run);

#endif /* ACCEL_BENCH_COMPILE_CASES_H */
