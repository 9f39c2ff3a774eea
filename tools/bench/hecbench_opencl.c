/*
 * The real-code suite through OpenCL: each program's kernels in OpenCL C
 * (hecbench.h), built once, on the device and queue of opencl_cases.c.
 */
#include <stdlib.h>
#include <string.h>

#include "hecbench_case.h"
#include "opencl_workloads.h"

struct program_state {
    cl_program program;
    cl_mem mems[HB_MAX_BUFFERS];
    const char *names[BENCH_HECBENCH_KERNELS];
    cl_kernel kernels[BENCH_HECBENCH_KERNELS];
};

struct bench_cl_hecbench {
    struct program_state p[BENCH_HECBENCH_MAX];
};

static bool cl_fail(struct bench_run *run, const char *call, cl_int error)
{
    return bench_fail(run, "%s: OpenCL error %d", call, error);
}

#define TRY(run, call)                                                         \
    do {                                                                       \
        cl_int error_ = (call);                                                \
        if (error_ != CL_SUCCESS)                                              \
            return cl_fail((run), #call, error_);                              \
    } while (0)

static bool build(struct program_state *s, const struct bench_cl_queue *q,
                  struct bench_run *run, const struct hb_program *p)
{
    const char *source = p->opencl;
    char log[4096] = "";
    cl_int error;

    s->program = clCreateProgramWithSource(q->context, 1, &source, NULL, &error);
    if (error == CL_SUCCESS)
        error = clBuildProgram(s->program, 1, &q->device, "", NULL, NULL);
    if (error == CL_SUCCESS)
        return true;
    if (s->program != NULL)
        clGetProgramBuildInfo(s->program, q->device, CL_PROGRAM_BUILD_LOG,
                              sizeof(log) - 1, log, NULL);
    return bench_fail(run, "building %s's OpenCL kernels: OpenCL error %d: %s",
                      p->name, error, log);
}

static bool open_program(struct program_state *s, const struct bench_cl_queue *q,
                         struct bench_run *run, const struct hb_program *p,
                         const struct bench_hecbench_data *d)
{
    cl_int error = CL_SUCCESS;

    if (s->program != NULL)
        return true;
    if (!build(s, q, run, p))
        return false;
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        s->mems[i] = clCreateBuffer(q->context, CL_MEM_READ_WRITE,
                                    p->buffers[i].bytes, NULL, &error);
        TRY(run, error);
        TRY(run, clEnqueueWriteBuffer(q->queue, s->mems[i], CL_TRUE, 0,
                                      p->buffers[i].bytes, d->initial[i], 0,
                                      NULL, NULL));
    }
    return true;
}

static cl_kernel kernel_named(struct program_state *s, struct bench_run *run,
                              const char *name)
{
    bool found;
    int i = bench_hecbench_kernel_slot(s->names, name, &found);
    cl_int error;

    if (i < 0) {
        bench_fail(run, "more than %d kernels", BENCH_HECBENCH_KERNELS);
        return NULL;
    }
    if (found)
        return s->kernels[i];
    s->kernels[i] = clCreateKernel(s->program, name, &error);
    if (error != CL_SUCCESS) {
        cl_fail(run, name, error);
        return NULL;
    }
    s->names[i] = name;
    return s->kernels[i];
}

struct cl_step {
    struct bench_run *run;
    struct program_state *s;
    const struct bench_cl_queue *q;
    const struct hb_program *p;
    const struct bench_hecbench_data *d;
};

static cl_int set_arg(struct program_state *s, cl_kernel k, cl_uint index,
                      const struct hb_arg *a)
{
    switch (a->kind) {
    case HB_ARG_BUFFER:
        return clSetKernelArg(k, index, sizeof(cl_mem), &s->mems[a->v.buffer]);
    case HB_ARG_I32:
    case HB_ARG_U32:
    case HB_ARG_F32:
        return clSetKernelArg(k, index, 4, &a->v);
    default:
        return clSetKernelArg(k, index, 8, &a->v);
    }
}

static bool launch(void *context, const struct hb_launch *l)
{
    struct cl_step *st = context;
    cl_kernel k = kernel_named(st->s, st->run, l->kernel);
    size_t global[3], local[3];

    if (k == NULL)
        return false;
    for (cl_uint i = 0; i < l->arg_count; i++)
        TRY(st->run, set_arg(st->s, k, i, &l->args[i]));
    if (l->shared_bytes != 0)
        TRY(st->run, clSetKernelArg(k, l->arg_count, l->shared_bytes, NULL));
    for (int i = 0; i < 3; i++) {
        local[i] = l->block[i];
        global[i] = (size_t)l->grid[i] * l->block[i];
    }
    TRY(st->run, clEnqueueNDRangeKernel(st->q->queue, k, 3, NULL, global, local,
                                        0, NULL, NULL));
    return true;
}

static bool step_program(void *context, double *out_ns)
{
    struct cl_step *st = context;
    struct hb_launcher launcher = {st, launch};
    uint64_t start;

    for (uint32_t i = 0; i < st->p->buffer_count; i++)
        if (st->p->buffers[i].reset)
            TRY(st->run,
                clEnqueueWriteBuffer(st->q->queue, st->s->mems[i], CL_FALSE, 0,
                                     st->p->buffers[i].bytes, st->d->initial[i],
                                     0, NULL, NULL));
    TRY(st->run, clFinish(st->q->queue));
    start = bench_now_ns();
    if (!st->p->step(&launcher))
        return false;
    TRY(st->run, clFinish(st->q->queue));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool read_back(void *context, uint32_t buffer, void *out)
{
    struct cl_step *st = context;

    TRY(st->run,
        clEnqueueReadBuffer(st->q->queue, st->s->mems[buffer], CL_TRUE, 0,
                            st->p->buffers[buffer].bytes, out, 0, NULL, NULL));
    return true;
}

bool bench_cl_hecbench_measure(struct bench_cl_hecbench **state,
                               const struct bench_cl_queue *q,
                               struct bench_run *run)
{
    const struct hb_program *p = bench_hecbench_program(run->point);
    const struct bench_hecbench_data *d = bench_hecbench_data(run);
    struct cl_step st = {.run = run, .q = q, .p = p, .d = d};

    if (d == NULL)
        return false;
    if (*state == NULL && (*state = calloc(1, sizeof(**state))) == NULL)
        return bench_fail(run, "out of host memory");
    st.s = &(*state)->p[bench_hecbench_slot(run->point)];
    if (!open_program(st.s, q, run, p, d))
        return false;
    return bench_measure(run, step_program, &st, "clFinish", 0) &&
           bench_hecbench_check_outputs(run, p, d, read_back, &st);
}

void bench_cl_hecbench_free(struct bench_cl_hecbench *state)
{
    if (state == NULL)
        return;
    for (int i = 0; i < BENCH_HECBENCH_MAX; i++) {
        struct program_state *s = &state->p[i];

        for (int k = 0; k < BENCH_HECBENCH_KERNELS && s->kernels[k] != NULL; k++)
            clReleaseKernel(s->kernels[k]);
        for (int b = 0; b < HB_MAX_BUFFERS; b++)
            if (s->mems[b] != NULL)
                clReleaseMemObject(s->mems[b]);
        if (s->program != NULL)
            clReleaseProgram(s->program);
    }
    free(state);
}
