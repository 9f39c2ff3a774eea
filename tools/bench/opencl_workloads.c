/*
 * The workload cases through OpenCL: the kernels of kernels/workloads.cu
 * written in OpenCL C, arithmetic in the same order, on the device and
 * queue of opencl_cases.c.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdlib.h>
#include <string.h>

#include "opencl_workloads.h"

static const char workloads_source[] =
    "__kernel void matvec(uint n, __global const float *restrict a,\n"
    "                     __global const float *restrict x, __global float "
    "*restrict y)\n"
    "{\n"
    "    size_t row = (get_group_id(0) * get_local_size(1) + get_local_id(1))\n"
    "                 * get_local_size(0) + get_local_id(0);\n"
    "    if (row >= n)\n"
    "        return;\n"
    "    __global const float *r = a + row * n;\n"
    "    float sum = 0.0f;\n"
    "    for (uint k = 0; k < n; k++)\n"
    "        sum += r[k] * x[k];\n"
    "    y[row] = sum;\n"
    "}\n"
    "__kernel void stencil_2d(uint n, __global const float *restrict in,\n"
    "                         __global float *restrict out)\n"
    "{\n"
    "    size_t x = get_global_id(0), y = get_global_id(1), i = y * n + x;\n"
    "    if (x >= n || y >= n)\n"
    "        return;\n"
    "    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {\n"
    "        out[i] = in[i];\n"
    "        return;\n"
    "    }\n"
    "    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + "
    "in[i + n]);\n"
    "}\n"
    "__kernel void conv3d(uint n, __global const float *restrict in,\n"
    "                     __global float *restrict out)\n"
    "{\n"
    "    size_t x = get_global_id(0), y = get_global_id(1), z = "
    "get_global_id(2);\n"
    "    size_t plane = (size_t)n * n, i = z * plane + y * n + x;\n"
    "    float sum = 0.0f;\n"
    "    if (x >= n || y >= n || z >= n)\n"
    "        return;\n"
    "    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n "
    "- 1) {\n"
    "        out[i] = 0.0f;\n"
    "        return;\n"
    "    }\n"
    "    for (int dz = -1; dz <= 1; dz++)\n"
    "        for (int dy = -1; dy <= 1; dy++)\n"
    "            for (int dx = -1; dx <= 1; dx++)\n"
    "                sum += (0.03f + 0.001f * (float)((dz + 1) * 9 + (dy + 1) "
    "* 3 + dx + 1))\n"
    "                       * in[(long)i + dz * (long)plane + dy * (long)n + "
    "dx];\n"
    "    out[i] = sum;\n"
    "}\n"
    "__kernel void histogram(uint n, __global const uint *restrict values,\n"
    "                        __global uint *restrict bins)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        atomic_inc(&bins[values[i] >> 24]);\n"
    "}\n";

/* The kernels with local memory and work-group barriers, and gemm's barrier-free form. */
static const char barrier_source[] =
    "__kernel void gemm(uint n, __global const float *restrict a,\n"
    "                   __global const float *restrict b, __global float "
    "*restrict c)\n"
    "{\n"
    "    size_t col = get_global_id(0), row = get_global_id(1);\n"
    "    float sum = 0.0f;\n"
    "    if (row >= n || col >= n)\n"
    "        return;\n"
    "    for (uint k = 0; k < n; k++)\n"
    "        sum += a[row * n + k] * b[(size_t)k * n + col];\n"
    "    c[row * n + col] = sum;\n"
    "}\n"
    "#define TILE 16\n"
    "__kernel void gemm_tiled(uint n, __global const float *restrict a,\n"
    "                         __global const float *restrict b, __global float "
    "*restrict c)\n"
    "{\n"
    "    __local float ta[TILE * TILE], tb[TILE * TILE];\n"
    "    uint tx = get_local_id(0), ty = get_local_id(1);\n"
    "    uint row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE "
    "+ tx;\n"
    "    float sum = 0.0f;\n"
    "    for (uint t = 0; t < n; t += TILE) {\n"
    "        ta[ty * TILE + tx] = row < n && t + tx < n ? a[(size_t)row * n + "
    "t + tx] : 0.0f;\n"
    "        tb[ty * TILE + tx] = col < n && t + ty < n ? b[(size_t)(t + ty) * "
    "n + col] : 0.0f;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (uint k = 0; k < TILE; k++)\n"
    "            sum += ta[ty * TILE + k] * tb[k * TILE + tx];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (row < n && col < n)\n"
    "        c[(size_t)row * n + col] = sum;\n"
    "}\n"
    "#define SX 32\n"
    "#define SY 8\n"
    "#define HX (SX + 2)\n"
    "#define HY (SY + 2)\n"
    "__kernel void stencil_2d_tiled(uint n, __global const float *restrict "
    "in,\n"
    "                               __global float *restrict out)\n"
    "{\n"
    "    __local float tile[HX * HY];\n"
    "    size_t x = get_global_id(0), y = get_global_id(1), i = y * n + x;\n"
    "    uint c = (get_local_id(1) + 1) * HX + get_local_id(0) + 1;\n"
    "    for (uint k = get_local_id(1) * SX + get_local_id(0); k < HX * HY; k "
    "+= SX * SY) {\n"
    "        long sx = (long)get_group_id(0) * SX + k % HX - 1;\n"
    "        long sy = (long)get_group_id(1) * SY + k / HX - 1;\n"
    "        tile[k] = sx >= 0 && sy >= 0 && sx < n && sy < n ? in[sy * "
    "(long)n + sx] : 0.0f;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (x >= n || y >= n)\n"
    "        return;\n"
    "    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {\n"
    "        out[i] = tile[c];\n"
    "        return;\n"
    "    }\n"
    "    out[i] = 0.5f * tile[c] + 0.125f * (tile[c - 1] + tile[c + 1] + "
    "tile[c - HX]\n"
    "                                        + tile[c + HX]);\n"
    "}\n"
    "__kernel void reduce_shared(uint n, __global const float *restrict x,\n"
    "                            __global float *restrict partial)\n"
    "{\n"
    "    __local float s[256];\n"
    "    uint t = get_local_id(0);\n"
    "    size_t i = get_global_id(0);\n"
    "    s[t] = i < n ? x[i] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint stride = get_local_size(0) / 2; stride > 0; stride /= 2) {\n"
    "        if (t < stride)\n"
    "            s[t] += s[t + stride];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (t == 0)\n"
    "        partial[get_group_id(0)] = s[0];\n"
    "}\n"
    "__kernel void scan_block(uint n, __global const float *restrict x,\n"
    "                         __global float *restrict out)\n"
    "{\n"
    "    __local float buf[2 * 256];\n"
    "    uint t = get_local_id(0), size = get_local_size(0), in_half = 1, "
    "out_half = 0;\n"
    "    size_t i = get_global_id(0);\n"
    "    buf[t] = i < n ? x[i] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint offset = 1; offset < size; offset *= 2) {\n"
    "        out_half = 1 - out_half;\n"
    "        in_half = 1 - out_half;\n"
    "        buf[out_half * size + t] = t >= offset ? buf[in_half * size + t]\n"
    "                                                 + buf[in_half * size + t "
    "- offset]\n"
    "                                               : buf[in_half * size + "
    "t];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (i < n)\n"
    "        out[i] = buf[out_half * size + t];\n"
    "}\n";

struct bench_cl_workloads {
    cl_program program;
    struct {
        cl_kernel kernels[2]; /* by bench_workload_form */
        cl_mem inputs[2];
        cl_mem output;
    } w[BENCH_WORKLOAD_COUNT];
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

static bool build(struct bench_cl_workloads *s, const struct bench_cl_queue *q,
                  struct bench_run *run)
{
    const char *sources[] = {workloads_source, barrier_source};
    char log[2048] = "";
    cl_int error;

    if (s->program != NULL)
        return true;
    s->program = clCreateProgramWithSource(q->context, 2, sources, NULL, &error);
    if (error == CL_SUCCESS)
        error = clBuildProgram(s->program, 1, &q->device, "", NULL, NULL);
    if (error == CL_SUCCESS)
        return true;
    if (s->program != NULL)
        clGetProgramBuildInfo(s->program, q->device, CL_PROGRAM_BUILD_LOG,
                              sizeof(log) - 1, log, NULL);
    return bench_fail(run, "building the workload kernels: OpenCL error %d: %s",
                      error, log);
}

/* The workload's buffers, once for both its forms. */
static bool prepare_buffers(struct bench_cl_workloads *s,
                            const struct bench_cl_queue *q, struct bench_run *run,
                            const struct bench_workload_data *d)
{
    int slot = bench_workload_slot(d->case_id);
    cl_int error = CL_SUCCESS;

    if (s->w[slot].output != NULL)
        return true;
    for (uint32_t i = 0; i < d->input_count; i++) {
        s->w[slot].inputs[i] = clCreateBuffer(q->context, CL_MEM_READ_ONLY,
                                              d->input_bytes[i], NULL, &error);
        TRY(run, error);
        TRY(run, clEnqueueWriteBuffer(q->queue, s->w[slot].inputs[i], CL_TRUE,
                                      0, d->input_bytes[i], d->inputs[i], 0,
                                      NULL, NULL));
    }
    s->w[slot].output = clCreateBuffer(q->context, CL_MEM_READ_WRITE,
                                       d->output_bytes, NULL, &error);
    TRY(run, error);
    return true;
}

static bool prepare(struct bench_cl_workloads *s, const struct bench_cl_queue *q,
                    struct bench_run *run, const struct bench_workload_data *d)
{
    int slot = bench_workload_slot(d->case_id),
        form = bench_workload_form(run->point);
    cl_uint n = d->n;
    cl_int error = CL_SUCCESS;
    cl_uint arg = 0;
    cl_kernel kernel;

    if (s->w[slot].kernels[form] != NULL)
        return true;
    if (!prepare_buffers(s, q, run, d))
        return false;
    kernel = s->w[slot].kernels[form] = clCreateKernel(
        s->program, bench_workload_kernel(run->point), &error);
    TRY(run, error);
    TRY(run, clSetKernelArg(kernel, arg++, sizeof(n), &n));
    for (uint32_t i = 0; i < d->input_count; i++)
        TRY(run, clSetKernelArg(kernel, arg++, sizeof(cl_mem),
                                &s->w[slot].inputs[i]));
    TRY(run, clSetKernelArg(kernel, arg++, sizeof(cl_mem), &s->w[slot].output));
    return true;
}

struct cl_step {
    struct bench_run *run;
    struct bench_cl_workloads *s;
    const struct bench_cl_queue *q;
    const struct bench_workload_data *d;
    size_t global[3], local[3];
};

static bool step_workload(void *context, double *out_ns)
{
    struct cl_step *st = context;
    int slot = bench_workload_slot(st->d->case_id);
    cl_uint zero = 0;
    uint64_t start = bench_now_ns();

    if (st->d->zero_output)
        TRY(st->run, clEnqueueFillBuffer(st->q->queue, st->s->w[slot].output,
                                         &zero, sizeof(zero), 0,
                                         st->d->output_bytes, 0, NULL, NULL));
    TRY(st->run, clEnqueueNDRangeKernel(
                     st->q->queue,
                     st->s->w[slot].kernels[bench_workload_form(st->run->point)],
                     3, NULL, st->global, st->local, 0, NULL, NULL));
    TRY(st->run, clFinish(st->q->queue));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool check(struct cl_step *st)
{
    void *output = malloc(st->d->output_bytes);
    cl_int error;
    bool ok;

    if (output == NULL)
        return bench_fail(st->run, "out of host memory");
    error = clEnqueueReadBuffer(
        st->q->queue, st->s->w[bench_workload_slot(st->d->case_id)].output,
        CL_TRUE, 0, st->d->output_bytes, output, 0, NULL, NULL);
    ok = error == CL_SUCCESS ? bench_workload_check(st->run, st->d, output)
                             : cl_fail(st->run, "clEnqueueReadBuffer", error);
    free(output);
    return ok;
}

bool bench_cl_workload_measure(struct bench_cl_workloads **state,
                               const struct bench_cl_queue *q,
                               struct bench_run *run)
{
    const struct bench_workload_data *d = bench_workload_data(run);
    struct cl_step st = {.run = run, .q = q, .d = d};
    struct bench_geometry g;
    struct bench_samples ns;
    char detail[256];
    bool ok;

    if (d == NULL)
        return false;
    if (*state == NULL && (*state = calloc(1, sizeof(**state))) == NULL)
        return bench_fail(run, "out of host memory");
    st.s = *state;
    if (!build(st.s, q, run) || !prepare(st.s, q, run, d))
        return false;
    g = bench_workload_geometry(run->point);
    for (int k = 0; k < 3; k++) {
        st.local[k] = g.block[k];
        st.global[k] = (size_t)g.grid[k] * g.block[k];
    }
    snprintf(detail, sizeof(detail),
             "%s, %zux%zux%zu work-items, groups of %zux%zux%zu, "
             "clFinish",
             bench_workload_kernel(run->point), st.global[0], st.global[1],
             st.global[2], st.local[0], st.local[1], st.local[2]);
    ok = bench_sample(&run->budget, step_workload, &st, &ns) && check(&st) &&
         bench_emit_bandwidth(run, detail, &ns, d->counted_bytes);
    bench_samples_deinit(&ns);
    return ok;
}

void bench_cl_workloads_free(struct bench_cl_workloads *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < BENCH_WORKLOAD_COUNT; i++) {
        for (int k = 0; k < 2; k++)
            if (s->w[i].kernels[k] != NULL)
                clReleaseKernel(s->w[i].kernels[k]);
        for (int k = 0; k < 2; k++)
            if (s->w[i].inputs[k] != NULL)
                clReleaseMemObject(s->w[i].inputs[k]);
        if (s->w[i].output != NULL)
            clReleaseMemObject(s->w[i].output);
    }
    if (s->program != NULL)
        clReleaseProgram(s->program);
    free(s);
}
