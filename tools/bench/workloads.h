/*
 * The workload cases: real GPU kernels (kernels/workloads.cu) run through
 * accel, the same kernels in OpenCL C on OpenCL (PoCL for a CPU), and the
 * same arithmetic as plain C loops on one thread and on every CPU. Every
 * implementation's result is checked element by element against the
 * plain C result of one thread.
 *
 *   matvec      y = A x, A 4096 x 4096 floats, one thread per row, blocks
 *               of 32x8 and of 256x1; GB/s counting A
 *   stencil_2d  a 5-point Jacobi step on 4096 x 4096 floats, blocks of
 *               32x8; GB/s counting the input and the output
 *   conv3d      a 3x3x3 convolution of 256^3 floats, blocks of 32x8x1;
 *               GB/s counting the input and the output
 *   histogram   256 bins of 16M random words with global atomics, blocks
 *               of 256; GB/s counting the words
 *
 * and the cases whose kernels use shared memory and block barriers:
 *
 *   gemm_tiled     C = A B, 512 x 512 floats, 16x16 blocks: "tiled"
 *                  through shared tiles (two barriers a tile), "naive" the
 *                  barrier-free form; GB/s counting the operands every
 *                  multiply-add reads (2 n^3 floats: 4 bytes a flop)
 *   stencil_2d     its "tiled" variant loads each 32x8 block's cells and
 *                  halo into shared memory first (one barrier)
 *   reduce_shared  each 256 floats' sum by a tree in shared memory, 4M
 *                  floats; GB/s counting the input
 *   scan_block     each 256 floats' inclusive prefix sums (Hillis-Steele),
 *                  4M floats; GB/s counting the input and the output
 *
 * The host data (inputs and the reference) is made once per run, by the
 * first implementation that needs it, and shared (bench_env.workloads).
 */
#ifndef ACCEL_BENCH_WORKLOADS_H
#define ACCEL_BENCH_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"

#define BENCH_MATVEC_N 4096u
#define BENCH_STENCIL_N 4096u
#define BENCH_CONV3D_N 256u
#define BENCH_HISTOGRAM_COUNT (16u * 1024u * 1024u)
#define BENCH_HISTOGRAM_BINS 256u
#define BENCH_GEMM_N 512u
#define BENCH_SEGMENTED_COUNT                                                  \
    (4u * 1024u * 1024u)   /* reduce_shared, scan_block */
#define BENCH_SEGMENT 256u /* their block, and a C loop's unit */
#define BENCH_WORKLOAD_COUNT 7

/* One workload's host side: its inputs, and the output they must give. */
struct bench_workload_data {
    enum bench_case_id case_id;
    const char *kernel;   /* the kernel's name, in accel and OpenCL alike */
    uint32_t n;           /* the kernel's first argument */
    uint32_t input_count; /* 1 or 2 */
    void *inputs[2];
    uint64_t input_bytes[2];
    void *expected; /* the output of the C loop on one thread */
    uint64_t output_bytes;
    bool zero_output;       /* the output accumulates: zeroed before each run */
    uint64_t counted_bytes; /* what a run's GB/s count */
    uint32_t units; /* what the C loops split: rows, planes, words or segments */
};

/* A launch's shape: blocks (work-groups) and threads per block. */
struct bench_geometry {
    uint32_t grid[3];
    uint32_t block[3];
};

/* Whether `id` is one of the workload cases. */
bool bench_is_workload(enum bench_case_id id);
/* The variants of a workload case ("32x8", "256x1" for matvec; "" else), NULL-ended. */
const char *const *bench_workload_variants(enum bench_case_id id);
/* The workload's place in per-workload arrays, below BENCH_WORKLOAD_COUNT. */
int bench_workload_slot(enum bench_case_id id);
/* The kernel a point runs ("gemm" or "gemm_tiled" for gemm_tiled's variants). */
const char *bench_workload_kernel(const struct bench_point *point);
/* 1 where the point runs its case's shared-memory form beside a barrier-free one, else 0. */
int bench_workload_form(const struct bench_point *point);
/* The launch of a point of a workload case. */
struct bench_geometry bench_workload_geometry(const struct bench_point *point);
/* "<<<16, 32x8>>>"-like text of a geometry, for the details. */
void bench_geometry_text(const struct bench_geometry *g, char *out, size_t size);

/*
 * The host data of the run's point, made the first time it is asked for
 * (seconds, for the reference). NULL after bench_fail when out of memory.
 */
const struct bench_workload_data *bench_workload_data(struct bench_run *run);
/* Free every workload's host data (env->workloads). */
void bench_workloads_free(struct bench_env *env);
/*
 * Compare an output with the reference, element by element: exactly for
 * the histogram, within a relative 1e-4 for the floats (contracted
 * multiply-adds and the order of a vectorised loop move the last bits).
 * False after bench_fail naming the first wrong element.
 */
bool bench_workload_check(struct bench_run *run,
                          const struct bench_workload_data *data,
                          const void *output);

/* ---- the C loops (c_workload_loops.c), at one ISA level each ---- */

/* Rows [from, to) of y = A x. */
typedef void (*bench_matvec_fn)(uint32_t n, const float *a, const float *x,
                                float *y, uint32_t from, uint32_t to);
/* Rows [from, to) of the stencil's output. */
typedef void (*bench_stencil_fn)(uint32_t n, const float *in, float *out,
                                 uint32_t from, uint32_t to);
/* Planes [from, to) of the convolution's output. */
typedef void (*bench_conv3d_fn)(uint32_t n, const float *in, float *out,
                                uint32_t from, uint32_t to);
/* Words [from, to) counted into bins (not zeroed here). */
typedef void (*bench_histogram_fn)(const uint32_t *values, uint32_t *bins,
                                   uint32_t from, uint32_t to);
/* Rows [from, to) of C = A B. */
typedef void (*bench_gemm_fn)(uint32_t n, const float *a, const float *b,
                              float *c, uint32_t from, uint32_t to);
/* Segments (of BENCH_SEGMENT values) [from, to): their sums, or their prefix sums. */
typedef void (*bench_segments_fn)(const float *x, float *out, uint32_t from,
                                  uint32_t to);

struct bench_workload_loops {
    const char *level; /* "x86-64-v3", or "baseline" */
    bench_matvec_fn matvec;
    bench_stencil_fn stencil_2d;
    bench_conv3d_fn conv3d;
    bench_histogram_fn histogram;
    bench_gemm_fn gemm;
    bench_segments_fn reduce;
    bench_segments_fn scan;
};

/* The loops built for the highest ISA level this CPU runs. */
const struct bench_workload_loops *bench_workload_loops_best(void);
/* The loops at the baseline, which make the reference. */
const struct bench_workload_loops *bench_workload_loops_baseline(void);

/* ---- the implementations' measurements (one file each) ---- */

/* accel: the kernels from accel-kernels-workloads.accelpack beside the examples. */
struct bench_accel_workloads;
bool bench_accel_workload_measure(struct bench_accel_workloads **state,
                                  accel_stream *stream, struct bench_run *run);
void bench_accel_workloads_free(struct bench_accel_workloads *state,
                                accel_device *device);

/* Plain C: the best loops on one thread and on env->cpus threads. */
bool bench_c_workload_measure(struct bench_run *run);

/* Check the workload targets against the report; print under the others. */
void bench_write_workload_targets(const struct bench_report *report, FILE *out);

#endif /* ACCEL_BENCH_WORKLOADS_H */
