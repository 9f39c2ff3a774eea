/*
 * The cases through OpenCL 1.2 and the ICD loader: what a user would pick
 * instead of accel for the same device (PoCL for a CPU). The kernels are
 * built from OpenCL C at open; the device is the first of the kind of the
 * selected accel device (CPU or GPU) on the first platform that has one.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "compile_cases.h"
#include "opencl_workloads.h"

enum { DISPATCH_BATCH = 1000, ALLOC_BATCH = 100 };

static const char program_source[] =
    "__kernel void empty(void)\n"
    "{\n"
    "}\n"
    "__kernel void vadd(uint n, __global const float *restrict a,\n"
    "                   __global const float *restrict b, __global float "
    "*restrict c)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

struct cl_state {
    struct bench_env *env;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel empty, vadd;
    cl_event marker; /* completed: what dispatch queries */
    char name[160];  /* "PoCL: pthread-AMD EPYC" */
    /* The copy cases' buffers, max_copy_bytes each, made when first needed. */
    cl_mem device_a, device_b;
    cl_mem pinned_mem; /* CL_MEM_ALLOC_HOST_PTR, mapped at `pinned` */
    void *pinned;
    void *pageable;
    cl_mem va, vb, vc; /* vadd's vectors, made when first needed */
    struct bench_cl_workloads *workloads; /* the workload cases' */
    struct bench_cl_hecbench *hecbench;   /* the real-code suite's */
};

struct step {
    struct cl_state *s;
    struct bench_run *run;
    uint64_t bytes;
    void *host;
};

static const char *cl_error_name(cl_int error)
{
    switch (error) {
    case CL_DEVICE_NOT_FOUND:
        return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_RESOURCES:
        return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY:
        return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_BUILD_PROGRAM_FAILURE:
        return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE:
        return "CL_INVALID_VALUE";
    case CL_INVALID_BUFFER_SIZE:
        return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_KERNEL_ARGS:
        return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE:
        return "CL_INVALID_WORK_GROUP_SIZE";
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL driver installed)";
    default:
        return "an OpenCL error (see CL/cl.h)";
    }
}

static bool cl_failed(struct bench_run *run, const char *call, cl_int error)
{
    return bench_fail(run, "%s: %s (%d)", call, cl_error_name(error), error);
}

#define TRY(run, call)                                                         \
    do {                                                                       \
        cl_int error_ = (call);                                                \
        if (error_ != CL_SUCCESS)                                              \
            return cl_failed((run), #call, error_);                            \
    } while (0)

/* The first device of the wanted type (CPU or GPU) on the first platform with one. */
static cl_int pick_device(bool want_cpu, cl_device_id *out_device)
{
    cl_device_type type = want_cpu ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
    cl_platform_id platforms[16];
    cl_uint count = 0;
    cl_int error = clGetPlatformIDs(16, platforms, &count);

    if (error != CL_SUCCESS)
        return error;
    if (count > 16)
        count = 16;
    for (cl_uint i = 0; i < count; i++)
        if (clGetDeviceIDs(platforms[i], type, 1, out_device, NULL) == CL_SUCCESS)
            return CL_SUCCESS;
    return CL_DEVICE_NOT_FOUND;
}

static cl_int make_queue(bool want_cpu, cl_device_id *out_device,
                         cl_context *out_context, cl_command_queue *out_queue)
{
    cl_int error = pick_device(want_cpu, out_device);

    if (error != CL_SUCCESS)
        return error;
    *out_context = clCreateContext(NULL, 1, out_device, NULL, NULL, &error);
    if (error != CL_SUCCESS)
        return error;
    *out_queue = clCreateCommandQueue(*out_context, *out_device, 0, &error);
    return error;
}

static bool opencl_discover(const char *arg)
{
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;

    return make_queue(arg != NULL && strcmp(arg, "cpu") == 0, &device, &context,
                      &queue) == CL_SUCCESS;
}

static void release_mem(cl_mem *mem)
{
    if (*mem != NULL)
        clReleaseMemObject(*mem);
    *mem = NULL;
}

static void opencl_close(void *state)
{
    struct cl_state *s = state;

    if (s == NULL)
        return;
    if (s->queue != NULL)
        clFinish(s->queue);
    if (s->pinned != NULL)
        clEnqueueUnmapMemObject(s->queue, s->pinned_mem, s->pinned, 0, NULL,
                                NULL);
    if (s->queue != NULL)
        clFinish(s->queue);
    release_mem(&s->pinned_mem);
    release_mem(&s->device_a);
    release_mem(&s->device_b);
    release_mem(&s->va);
    release_mem(&s->vb);
    release_mem(&s->vc);
    bench_cl_workloads_free(s->workloads);
    bench_cl_hecbench_free(s->hecbench);
    free(s->pageable);
    if (s->marker != NULL)
        clReleaseEvent(s->marker);
    if (s->empty != NULL)
        clReleaseKernel(s->empty);
    if (s->vadd != NULL)
        clReleaseKernel(s->vadd);
    if (s->program != NULL)
        clReleaseProgram(s->program);
    if (s->queue != NULL)
        clReleaseCommandQueue(s->queue);
    if (s->context != NULL)
        clReleaseContext(s->context);
    free(s);
}

/* Build the program; on failure note the compiler's log. */
static bool build_program(struct cl_state *s, struct bench_env *env)
{
    const char *source = program_source;
    char log[1024] = "";
    cl_int error;

    s->program = clCreateProgramWithSource(s->context, 1, &source, NULL, &error);
    if (error == CL_SUCCESS)
        error = clBuildProgram(s->program, 1, &s->device, "", NULL, NULL);
    if (error == CL_SUCCESS)
        s->empty = clCreateKernel(s->program, "empty", &error);
    if (error == CL_SUCCESS)
        s->vadd = clCreateKernel(s->program, "vadd", &error);
    if (error == CL_SUCCESS)
        return true;
    if (s->program != NULL)
        clGetProgramBuildInfo(s->program, s->device, CL_PROGRAM_BUILD_LOG,
                              sizeof(log) - 1, log, NULL);
    bench_report_note(env->report, "opencl: building the kernels: %s (%d) %s",
                      cl_error_name(error), error, log);
    return false;
}

static bool opencl_open(struct bench_env *env, void **out_state)
{
    struct cl_state *s = calloc(1, sizeof(*s));
    char device[96] = "", platform_name[48] = "";
    cl_platform_id platform;
    cl_int error;

    *out_state = s;
    if (s == NULL)
        return false;
    s->env = env;
    error = make_queue(env->device_is_cpu, &s->device, &s->context, &s->queue);
    if (error != CL_SUCCESS) {
        bench_report_note(env->report, "opencl: no %s device: %s (%d)",
                          env->device_is_cpu ? "CPU" : "GPU",
                          cl_error_name(error), error);
        return false;
    }
    clGetDeviceInfo(s->device, CL_DEVICE_NAME, sizeof(device) - 1, device, NULL);
    clGetDeviceInfo(s->device, CL_DEVICE_PLATFORM, sizeof(platform), &platform,
                    NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(platform_name) - 1,
                      platform_name, NULL);
    snprintf(s->name, sizeof(s->name), "%s: %s", platform_name, device);
    bench_report_note(env->report, "opencl: %s", s->name);
    return build_program(s, env);
}

static bool measure_discovery(void *state, struct bench_run *run)
{
    (void)state;
    return bench_discovery_measure(
        run, "opencl", run->env->device_is_cpu ? "cpu" : "gpu",
        "clGetPlatformIDs, clGetDeviceIDs, clCreateContext, "
        "clCreateCommandQueue");
}

/* ---- dispatch ---- */

static bool step_query(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();
    cl_int status = CL_COMPLETE, sum = 0;

    for (int i = 0; i < DISPATCH_BATCH; i++) {
        TRY(st->run,
            clGetEventInfo(st->s->marker, CL_EVENT_COMMAND_EXECUTION_STATUS,
                           sizeof(status), &status, NULL));
        sum |= status;
    }
    *out_ns = (double)(bench_now_ns() - start) / DISPATCH_BATCH;
    return sum == CL_COMPLETE ||
           bench_fail(st->run, "the marker is not complete");
}

static bool measure_dispatch(void *state, struct bench_run *run)
{
    struct cl_state *s = state;
    struct step st = {.s = s, .run = run};

    if (s->marker == NULL) {
        TRY(run, clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &s->marker));
        TRY(run, clFinish(s->queue));
    }
    return bench_measure(
        run, step_query, &st,
        "clGetEventInfo(EXECUTION_STATUS) of a completed event", 0);
}

/* ---- launches ---- */

static cl_int enqueue_empty(struct cl_state *s)
{
    size_t one = 1;

    return clEnqueueNDRangeKernel(s->queue, s->empty, 1, NULL, &one, &one, 0,
                                  NULL, NULL);
}

static bool step_launch(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, enqueue_empty(st->s));
    TRY(st->run, clFinish(st->s->queue));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_launch_stream(void *context, double *out_ns)
{
    struct step *st = context;
    uint32_t launches = st->s->env->stream_launches;
    uint64_t start = bench_now_ns();

    for (uint32_t i = 0; i < launches; i++)
        TRY(st->run, enqueue_empty(st->s));
    TRY(st->run, clFinish(st->s->queue));
    *out_ns = (double)(bench_now_ns() - start) / launches;
    return true;
}

static bool measure_launch(struct bench_run *run, struct step *st,
                           bench_step_fn step, const char *detail)
{
    return bench_measure(run, step, st, detail, 0);
}

static bool measure_launch_empty(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};

    return measure_launch(run, &st, step_launch,
                          "clEnqueueNDRangeKernel(empty, 1, 1), "
                          "clFinish");
}

static bool measure_launch_stream(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};
    char detail[96];

    snprintf(detail, sizeof(detail),
             "%u x clEnqueueNDRangeKernel(empty, 1, 1), one clFinish",
             run->env->stream_launches);
    return measure_launch(run, &st, step_launch_stream, detail);
}

/* ---- vadd ---- */

static bool vadd_prepare(struct cl_state *s, struct bench_run *run)
{
    size_t bytes = BENCH_VADD_COUNT * sizeof(float);
    cl_uint n = BENCH_VADD_COUNT;
    cl_int error = CL_SUCCESS;
    float *host;

    if (s->vc != NULL)
        return true;
    s->va = clCreateBuffer(s->context, CL_MEM_READ_ONLY, bytes, NULL, &error);
    if (error == CL_SUCCESS)
        s->vb = clCreateBuffer(s->context, CL_MEM_READ_ONLY, bytes, NULL, &error);
    if (error == CL_SUCCESS)
        s->vc = clCreateBuffer(s->context, CL_MEM_WRITE_ONLY, bytes, NULL,
                               &error);
    if (error != CL_SUCCESS)
        return cl_failed(run, "clCreateBuffer", error);
    host = malloc(bytes);
    if (host == NULL)
        return bench_fail(run, "out of host memory");
    for (uint32_t i = 0; i < BENCH_VADD_COUNT; i++)
        host[i] = (float)(i % 1024);
    error = clEnqueueWriteBuffer(s->queue, s->va, CL_TRUE, 0, bytes, host, 0,
                                 NULL, NULL);
    if (error == CL_SUCCESS)
        error = clEnqueueWriteBuffer(s->queue, s->vb, CL_TRUE, 0, bytes, host,
                                     0, NULL, NULL);
    free(host);
    if (error != CL_SUCCESS)
        return cl_failed(run, "clEnqueueWriteBuffer", error);
    TRY(run, clSetKernelArg(s->vadd, 0, sizeof(n), &n));
    TRY(run, clSetKernelArg(s->vadd, 1, sizeof(cl_mem), &s->va));
    TRY(run, clSetKernelArg(s->vadd, 2, sizeof(cl_mem), &s->vb));
    TRY(run, clSetKernelArg(s->vadd, 3, sizeof(cl_mem), &s->vc));
    return true;
}

static bool step_vadd(void *context, double *out_ns)
{
    struct step *st = context;
    size_t local = BENCH_VADD_BLOCK;
    size_t global = (BENCH_VADD_COUNT + local - 1) / local * local;
    uint64_t start = bench_now_ns();

    TRY(st->run, clEnqueueNDRangeKernel(st->s->queue, st->s->vadd, 1, NULL,
                                        &global, &local, 0, NULL, NULL));
    TRY(st->run, clFinish(st->s->queue));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool vadd_check(struct cl_state *s, struct bench_run *run)
{
    float *c = malloc(BENCH_VADD_COUNT * sizeof(float));
    bool ok = c != NULL && clEnqueueReadBuffer(s->queue, s->vc, CL_TRUE, 0,
                                               BENCH_VADD_COUNT * sizeof(float),
                                               c, 0, NULL, NULL) == CL_SUCCESS;

    for (uint32_t i = 0; ok && i < BENCH_VADD_COUNT; i++)
        ok = c[i] == 2.0f * (float)(i % 1024);
    free(c);
    return ok || bench_fail(run, "the result of vadd is wrong");
}

static bool measure_vadd(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};
    struct bench_samples ns;
    char detail[96];
    bool ok;

    if (!vadd_prepare(state, run))
        return false;
    snprintf(detail, sizeof(detail),
             "vadd over %u work-items in groups of %u, clFinish",
             BENCH_VADD_COUNT, BENCH_VADD_BLOCK);
    ok = bench_sample(&run->budget, step_vadd, &st, &ns) &&
         vadd_check(state, run) &&
         bench_emit_bandwidth(run, detail, &ns,
                              3ull * BENCH_VADD_COUNT * sizeof(float));
    bench_samples_deinit(&ns);
    return ok;
}

/* ---- copies ---- */

static bool copy_prepare(struct cl_state *s, struct bench_run *run)
{
    uint64_t bytes = s->env->max_copy_bytes;
    cl_int error = CL_SUCCESS;

    if (s->pinned != NULL)
        return true;
    s->device_a = clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes, NULL,
                                 &error);
    if (error == CL_SUCCESS)
        s->device_b = clCreateBuffer(s->context, CL_MEM_READ_WRITE, bytes, NULL,
                                     &error);
    if (error == CL_SUCCESS)
        s->pinned_mem = clCreateBuffer(s->context,
                                       CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                       bytes, NULL, &error);
    if (error != CL_SUCCESS)
        return cl_failed(run, "clCreateBuffer", error);
    s->pageable = bench_alloc_touched(bytes);
    if (s->pageable == NULL)
        return bench_fail(run, "out of host memory");
    s->pinned = clEnqueueMapBuffer(s->queue, s->pinned_mem, CL_TRUE,
                                   CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   NULL, NULL, &error);
    if (error != CL_SUCCESS)
        return cl_failed(run, "clEnqueueMapBuffer", error);
    memset(s->pinned, 0, bytes);
    /* Touch the device buffers: the first touch is not what is measured. */
    TRY(run, clEnqueueWriteBuffer(s->queue, s->device_a, CL_TRUE, 0, bytes,
                                  s->pageable, 0, NULL, NULL));
    TRY(run, clEnqueueWriteBuffer(s->queue, s->device_b, CL_TRUE, 0, bytes,
                                  s->pageable, 0, NULL, NULL));
    return true;
}

static bool step_h2d(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, clEnqueueWriteBuffer(st->s->queue, st->s->device_a, CL_TRUE, 0,
                                      st->bytes, st->host, 0, NULL, NULL));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2h(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, clEnqueueReadBuffer(st->s->queue, st->s->device_a, CL_TRUE, 0,
                                     st->bytes, st->host, 0, NULL, NULL));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2d(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run,
        clEnqueueCopyBuffer(st->s->queue, st->s->device_a, st->s->device_b, 0,
                            0, st->bytes, 0, NULL, NULL));
    TRY(st->run, clFinish(st->s->queue));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_copy(struct cl_state *s, struct bench_run *run,
                         bench_step_fn step, const char *call)
{
    bool pinned = strcmp(run->point->variant, "pinned") == 0;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};
    char detail[96];

    if (!copy_prepare(s, run))
        return false;
    st.host = pinned ? s->pinned : s->pageable;
    snprintf(detail, sizeof(detail), "%s%s", call,
             step == step_d2d ? ", clFinish"
             : pinned         ? " (mapped CL_MEM_ALLOC_HOST_PTR memory)"
                              : " (malloc memory)");
    return bench_measure(run, step, &st, detail, st.bytes);
}

static bool measure_copy_h2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_h2d, "blocking clEnqueueWriteBuffer");
}

static bool measure_copy_d2h(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2h, "blocking clEnqueueReadBuffer");
}

static bool measure_copy_d2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2d, "clEnqueueCopyBuffer");
}

/* ---- alloc_free ---- */

static bool step_alloc_free(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < ALLOC_BATCH; i++) {
        cl_int error;
        cl_mem mem = clCreateBuffer(st->s->context, CL_MEM_READ_WRITE,
                                    st->bytes, NULL, &error);

        if (error != CL_SUCCESS)
            return cl_failed(st->run, "clCreateBuffer", error);
        clReleaseMemObject(mem);
    }
    *out_ns = (double)(bench_now_ns() - start) / ALLOC_BATCH;
    return true;
}

static bool measure_alloc_free(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run, .bytes = run->point->bytes};

    return bench_measure(run, step_alloc_free, &st,
                         "clCreateBuffer, clReleaseMemObject", 0);
}

static bool measure_workload(void *state, struct bench_run *run)
{
    struct cl_state *s = state;
    struct bench_cl_queue q = {s->device, s->context, s->queue};

    return bench_cl_workload_measure(&s->workloads, &q, run);
}

static bool measure_hecbench(void *state, struct bench_run *run)
{
    struct cl_state *s = state;
    struct bench_cl_queue q = {s->device, s->context, s->queue};

    return bench_cl_hecbench_measure(&s->hecbench, &q, run);
}

/* ---- compile: clCreateProgramWithSource and clBuildProgram (PoCL caches) ---- */

struct cl_compile_step {
    struct cl_state *s;
    struct bench_run *run;
    unsigned long serial;
};

static bool step_compile(void *context, double *out_ns)
{
    struct cl_compile_step *st = context;
    char source[4096];
    const char *text = source;
    cl_int error = CL_SUCCESS;

    if (!bench_compile_source("opencl", st->run->point->variant, st->serial++,
                              source, sizeof(source)))
        return bench_fail(st->run, "opencl compile: the source does not fit");
    uint64_t start = bench_now_ns();
    cl_program program = clCreateProgramWithSource(st->s->context, 1, &text,
                                                   NULL, &error);
    if (error == CL_SUCCESS)
        error = clBuildProgram(program, 1, &st->s->device, "", NULL, NULL);
    *out_ns = (double)(bench_now_ns() - start);
    if (program != NULL)
        clReleaseProgram(program);
    if (error != CL_SUCCESS)
        return bench_fail(st->run, "opencl compile %s: %s (%d)",
                          st->run->point->variant, cl_error_name(error), error);
    return true;
}

static bool measure_compile(void *state, struct bench_run *run)
{
    static unsigned long serial;
    struct cl_compile_step st = {.s = state, .run = run, .serial = serial};
    bool ok = bench_measure(run, step_compile, &st,
                            strcmp(run->point->variant, "cold") == 0
                                ? "clBuildProgram of a new source"
                                : "clBuildProgram of a cached source",
                            0);
    serial = st.serial;
    return ok;
}

const struct bench_impl bench_impl_opencl = {
    .name = "opencl",
    .open = opencl_open,
    .close = opencl_close,
    .discover = opencl_discover,
    .measure =
        {
            [BENCH_DISCOVERY] = measure_discovery,
            [BENCH_DISPATCH] = measure_dispatch,
            [BENCH_LAUNCH_EMPTY] = measure_launch_empty,
            [BENCH_LAUNCH_STREAM] = measure_launch_stream,
            [BENCH_VADD] = measure_vadd,
            [BENCH_COPY_H2D] = measure_copy_h2d,
            [BENCH_COPY_D2H] = measure_copy_d2h,
            [BENCH_COPY_D2D] = measure_copy_d2d,
            [BENCH_ALLOC_FREE] = measure_alloc_free,
            [BENCH_MATVEC] = measure_workload,
            [BENCH_STENCIL_2D] = measure_workload,
            [BENCH_CONV3D] = measure_workload,
            [BENCH_HISTOGRAM] = measure_workload,
            [BENCH_GEMM_TILED] = measure_workload,
            [BENCH_REDUCE_SHARED] = measure_workload,
            [BENCH_SCAN_BLOCK] = measure_workload,
            [BENCH_HECBENCH] = measure_hecbench,
            [BENCH_COMPILE] = measure_compile,
        },
};
