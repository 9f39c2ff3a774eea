/*
 * The workload cases through OpenCL (opencl_workloads.c), for
 * opencl_cases.c, which owns the device and the queue.
 */
#ifndef ACCEL_BENCH_OPENCL_WORKLOADS_H
#define ACCEL_BENCH_OPENCL_WORKLOADS_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "workloads.h"

struct bench_cl_queue {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
};

struct bench_cl_workloads;

/* Measure the run's workload point; *state is made on first use. */
bool bench_cl_workload_measure(struct bench_cl_workloads **state,
                               const struct bench_cl_queue *q,
                               struct bench_run *run);
void bench_cl_workloads_free(struct bench_cl_workloads *state);

/* The real-code suite's programs (hecbench_opencl.c), likewise. */
struct bench_cl_hecbench;
bool bench_cl_hecbench_measure(struct bench_cl_hecbench **state,
                               const struct bench_cl_queue *q,
                               struct bench_run *run);
void bench_cl_hecbench_free(struct bench_cl_hecbench *state);

#endif /* ACCEL_BENCH_OPENCL_WORKLOADS_H */
