/*
 * The hecbench case inside accel-bench: its points (one a program of
 * hecbench.h), the host data they share, and the measurement of each side.
 */
#ifndef ACCEL_BENCH_HECBENCH_CASE_H
#define ACCEL_BENCH_HECBENCH_CASE_H

#include <stdio.h>

#include "bench.h"
#include "hecbench.h"

#define BENCH_HECBENCH_MAX 24

/* A program's host buffers: as it starts, and after one reference step. */
struct bench_hecbench_data {
    void *initial[HB_MAX_BUFFERS];
    void *reference[HB_MAX_BUFFERS];
};

/* The programs' names, the case's variants, NULL-ended. */
const char *const *bench_hecbench_variants(void);
/* "2D stencil, ... (2048 x 2048; src/jacobi-cuda/main.cu, Apache-2.0)". */
const char *bench_hecbench_program_summary(const char *name);
/* The place of the point's program in hb_programs; -1 for none. */
int bench_hecbench_slot(const struct bench_point *point);
/* The program a point runs; NULL for none. */
const struct hb_program *bench_hecbench_program(const struct bench_point *point);
/* The point's program's data, made on first use; NULL after bench_fail. */
const struct bench_hecbench_data *bench_hecbench_data(struct bench_run *run);
void bench_hecbench_free(struct bench_env *env);

/* Page-aligned host copies of `from` (zeroed where NULL); false when out of memory. */
bool bench_hecbench_buffers(const struct hb_program *p,
                            void *const from[HB_MAX_BUFFERS],
                            void *out[HB_MAX_BUFFERS]);
void bench_hecbench_buffers_free(void *buffers[HB_MAX_BUFFERS]);
/* Put the buffers a step changes and reads back as they started. */
void bench_hecbench_restore(const struct hb_program *p,
                            const struct bench_hecbench_data *d,
                            void *const buffers[HB_MAX_BUFFERS]);
/* Compare a checked buffer with the reference; false after bench_fail. */
bool bench_hecbench_check(struct bench_run *run, const struct hb_program *p,
                          const struct bench_hecbench_data *d, uint32_t buffer,
                          const void *got);

/*
 * Read buffer `buffer` of the device side back into `out` (its whole
 * size); false after bench_fail.
 */
typedef bool (*bench_hecbench_read_fn)(void *context, uint32_t buffer, void *out);
/* Read back and compare every checked buffer; false after bench_fail. */
bool bench_hecbench_check_outputs(struct bench_run *run,
                                  const struct hb_program *p,
                                  const struct bench_hecbench_data *d,
                                  bench_hecbench_read_fn read, void *context);

/* The most kernels a program launches. */
#define BENCH_HECBENCH_KERNELS 8
/*
 * Where a side keeps its handle of kernel `name`, among a program's
 * `names`: its slot (*out_found true), else the first free one, else -1.
 */
int bench_hecbench_kernel_slot(const char *const names[BENCH_HECBENCH_KERNELS],
                               const char *name, bool *out_found);

/* accel's side (hecbench_accel.c). */
struct bench_accel_hecbench;
bool bench_accel_hecbench_measure(struct bench_accel_hecbench **state,
                                  accel_stream *stream, struct bench_run *run);
void bench_accel_hecbench_free(struct bench_accel_hecbench *state,
                               accel_device *device);

/* Check the suite's targets against the report; print under the others. */
void bench_write_hecbench_targets(const struct bench_report *report, FILE *out);

#endif /* ACCEL_BENCH_HECBENCH_CASE_H */
