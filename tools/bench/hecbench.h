/*
 * The real-code suite: programs of HeCBench (github.com/zjin-lcf/HeCBench),
 * whose kernels nobody here wrote, run three ways at the same sizes:
 *
 *   accel   the program's CUDA kernels, their bodies unchanged
 *           (kernels/hecbench/NAME.cu), built by accel-cc into
 *           accel-bench-NAME.accelpack beside the example bundle
 *   openmp  the program's own OpenMP version (HeCBench's NAME-omp), its
 *           loops unchanged (tools/bench/hecbench/NAME-omp.cpp), built by
 *           g++ -O3 -fopenmp for the host, on as many threads as accel's
 *   opencl  the same kernels in OpenCL C (tools/bench/hecbench/NAME.cl),
 *           on the OpenCL platform's CPU device (PoCL)
 *
 * Each program is described once (tools/bench/hecbench/NAME.c): its
 * buffers and how they start, and one timed step as a list of launches,
 * which the accel and OpenCL sides issue alike. A step is what HeCBench's
 * own timer measures, or one iteration of it; the buffers a step changes
 * and reads again are put back before each step, outside the time. Every
 * side's result is compared with a reference: the program's own host
 * reference where HeCBench has one, else its OpenMP version.
 */
#ifndef ACCEL_BENCH_HECBENCH_H
#define ACCEL_BENCH_HECBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HB_MAX_BUFFERS 10
#define HB_MAX_ARGS 16

/* What a buffer's elements are, for the comparison of results. */
enum hb_type { HB_F32, HB_F64, HB_I32, HB_U32 };

struct hb_buffer {
    const char *name; /* the program's own name for it: "d_f_old" */
    enum hb_type type;
    uint64_t bytes;
    bool reset; /* restored from its first contents before every step */
    bool check; /* compared with the reference after the last step */
};

enum hb_arg_kind {
    HB_ARG_BUFFER,
    HB_ARG_I32,
    HB_ARG_U32,
    HB_ARG_I64,
    HB_ARG_F32,
    HB_ARG_F64
};

struct hb_arg {
    enum hb_arg_kind kind;
    union {
        uint32_t buffer;
        int32_t i32;
        uint32_t u32;
        int64_t i64; /* also size_t and long parameters */
        float f32;
        double f64;
    } v;
};

#define HB_BUF(i) ((struct hb_arg){HB_ARG_BUFFER, {.buffer = (i)}})
#define HB_I32(x) ((struct hb_arg){HB_ARG_I32, {.i32 = (x)}})
#define HB_U32(x) ((struct hb_arg){HB_ARG_U32, {.u32 = (x)}})
#define HB_I64(x) ((struct hb_arg){HB_ARG_I64, {.i64 = (x)}})
#define HB_F32(x) ((struct hb_arg){HB_ARG_F32, {.f32 = (x)}})
#define HB_F64(x) ((struct hb_arg){HB_ARG_F64, {.f64 = (x)}})

/*
 * One kernel launch: CUDA's <<<grid, block, shared_bytes>>>. The OpenCL
 * form of a kernel with dynamic shared memory takes it as a __local
 * pointer after its other arguments.
 */
struct hb_launch {
    const char *kernel; /* the name in the bundle and in the OpenCL source */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_bytes;
    uint32_t arg_count;
    struct hb_arg args[HB_MAX_ARGS];
};

/* Where a step's launches go: accel's stream, or an OpenCL queue. */
struct hb_launcher {
    void *context;
    bool (*launch)(void *context, const struct hb_launch *launch);
};

struct hb_program {
    const char *name;    /* the variant of the hecbench case: "jacobi" */
    const char *origin;  /* "src/jacobi-cuda/main.cu" */
    const char *license; /* SPDX: "Apache-2.0" */
    const char *covers;  /* what about it the suite needs, for the table */
    const char *size;    /* the problem size, in the program's words */
    const char *opencl;  /* the OpenCL C source */
    uint32_t buffer_count;
    struct hb_buffer buffers[HB_MAX_BUFFERS];
    /* Fill every buffer's first contents (zeroed before). */
    void (*init)(void *const buffers[]);
    /* Issue one step's launches, in order; false as soon as one failed. */
    bool (*step)(const struct hb_launcher *launcher);
    /* One step of the program's own OpenMP version, on host buffers. */
    void (*openmp)(void *const buffers[]);
    /*
     * The program's host reference for one step, where HeCBench has one
     * (NULL: the OpenMP version is the reference).
     */
    void (*reference)(void *const buffers[]);
    /* The largest relative difference a float result may have (0: exact). */
    double tolerance;
};

/* Issue a launch through a launcher. */
static inline bool hb_launch(const struct hb_launcher *l,
                             const struct hb_launch *launch)
{
    return l->launch(l->context, launch);
}

/* The programs, in the order the case measures them; NULL-ended. */
extern const struct hb_program *const hb_programs[];

#endif /* ACCEL_BENCH_HECBENCH_H */
