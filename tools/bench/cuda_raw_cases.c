/*
 * The cases through raw CUDA Driver API calls, on the device the cuda
 * plugin selected: what a program written against libcuda by hand does.
 * Run only when the selected device's plugin is `cuda`.
 *
 * libcuda.so.1 is opened at run time (no CUDA at build time), and the
 * kernels are the PTX that the example bundle holds for the cuda backend:
 * the same source accel launches. The entry points are declared here, one
 * X-macro list, as the CUDA headers declare them (the _v2 names are what
 * cuda.h maps the plain names to).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { DISPATCH_BATCH = 1000, ALLOC_BATCH = 100 };

typedef int CUresult; /* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

#define CUDA_RAW_SYMBOLS(X)                                                    \
    X(cuInit, (unsigned int flags))                                            \
    X(cuGetErrorName, (CUresult error, const char **name))                     \
    X(cuDeviceGet, (CUdevice * device, int ordinal))                           \
    X(cuDevicePrimaryCtxRetain, (CUcontext * context, CUdevice device))        \
    X(cuCtxSetCurrent, (CUcontext context))                                    \
    X(cuStreamCreate, (CUstream * stream, unsigned int flags))                 \
    X(cuStreamSynchronize, (CUstream stream))                                  \
    X(cuEventCreate, (CUevent * event, unsigned int flags))                    \
    X(cuEventRecord, (CUevent event, CUstream stream))                         \
    X(cuEventQuery, (CUevent event))                                           \
    X(cuModuleLoadData, (CUmodule * module, const void *image))                \
    X(cuModuleGetFunction,                                                     \
      (CUfunction * function, CUmodule module, const char *name))              \
    X(cuLaunchKernel,                                                          \
      (CUfunction f, unsigned int grid_x, unsigned int grid_y,                 \
       unsigned int grid_z, unsigned int block_x, unsigned int block_y,        \
       unsigned int block_z, unsigned int shared_bytes, CUstream stream,       \
       void **params, void **extra))                                           \
    X(cuMemAlloc_v2, (CUdeviceptr * address, size_t bytes))                    \
    X(cuMemFree_v2, (CUdeviceptr address))                                     \
    X(cuMemAllocHost_v2, (void **ptr, size_t bytes))                           \
    X(cuMemFreeHost, (void *ptr))                                              \
    X(cuMemcpyHtoDAsync_v2,                                                    \
      (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))       \
    X(cuMemcpyDtoHAsync_v2,                                                    \
      (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))             \
    X(cuMemcpyDtoDAsync_v2,                                                    \
      (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))

struct cuda_api {
#define CUDA_RAW_DECLARE(name, params) CUresult(*name) params;
    CUDA_RAW_SYMBOLS(CUDA_RAW_DECLARE)
#undef CUDA_RAW_DECLARE
};

struct cuda_state {
    struct bench_env *env;
    void *dl;
    struct cuda_api api;
    CUstream stream;
    CUevent event; /* recorded and completed: what dispatch queries */
    CUmodule module;
    CUfunction empty, vadd;
    CUdeviceptr device_a, device_b;
    void *pinned, *pageable;
    CUdeviceptr va, vb, vc;
};

struct step {
    struct cuda_state *s;
    struct bench_run *run;
    uint64_t bytes;
    void *host;
};

/* Resolve every entry point; the name of the first missing one, or NULL. */
static const char *cuda_load(void **out_dl, struct cuda_api *api)
{
    void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

    *out_dl = dl;
    if (dl == NULL)
        return "libcuda.so.1";
#define CUDA_RAW_RESOLVE(name, params)                                         \
    *(void **)&api->name = dlsym(dl, #name);                                   \
    if (api->name == NULL)                                                     \
        return #name;
    CUDA_RAW_SYMBOLS(CUDA_RAW_RESOLVE)
#undef CUDA_RAW_RESOLVE
    return NULL;
}

static bool cuda_failed(struct cuda_state *s, struct bench_run *run,
                        const char *call, CUresult error)
{
    const char *name = NULL;

    if (s->api.cuGetErrorName == NULL || s->api.cuGetErrorName(error, &name) != 0)
        name = "an unknown CUresult";
    return bench_fail(run, "%s: %s (%d)", call, name, error);
}

#define TRY(s, run, call)                                                      \
    do {                                                                       \
        CUresult error_ = (call);                                              \
        if (error_ != 0)                                                       \
            return cuda_failed((s), (run), #call, error_);                     \
    } while (0)

/* A context made current and a stream on device `ordinal`. */
static CUresult cuda_ready(const struct cuda_api *api, int ordinal,
                           CUstream *out_stream)
{
    CUcontext context;
    CUdevice device;
    CUresult error;

    if ((error = api->cuInit(0)) != 0 ||
        (error = api->cuDeviceGet(&device, ordinal)) != 0 ||
        (error = api->cuDevicePrimaryCtxRetain(&context, device)) != 0 ||
        (error = api->cuCtxSetCurrent(context)) != 0)
        return error;
    return api->cuStreamCreate(out_stream, 0);
}

static bool cuda_discover(const char *arg)
{
    struct cuda_api api;
    CUstream stream;
    void *dl;

    return cuda_load(&dl, &api) == NULL &&
           cuda_ready(&api, arg != NULL ? atoi(arg) : 0, &stream) == 0;
}

/*
 * The PTX of the cuda backend in the bundle, NUL-terminated, malloc'd. The
 * format is host/bundle.h's: a 32-byte header (magic, version, header
 * size, entry count), then 88-byte entries (backend, target, format, then
 * the image's offset and size as little-endian u64 at 72 and 80).
 */
static char *bundle_ptx(const char *path)
{
    unsigned char *file = NULL;
    char *ptx = NULL;
    long size;
    FILE *f = fopen(path, "rb");

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 32 &&
        fseek(f, 0, SEEK_SET) == 0 && (file = malloc((size_t)size)) != NULL &&
        fread(file, 1, (size_t)size, f) == (size_t)size &&
        memcmp(file, "ACCELPK", 8) == 0) {
        uint32_t count = file[12] | file[13] << 8 | (uint32_t)file[14] << 16 |
                         (uint32_t)file[15] << 24;

        for (uint32_t i = 0;
             i < count && 32 + (i + 1) * 88ul <= (unsigned long)size; i++) {
            const unsigned char *e = file + 32 + i * 88ul;
            uint64_t offset = 0, bytes = 0;

            for (int b = 7; b >= 0; b--) {
                offset = offset << 8 | e[72 + b];
                bytes = bytes << 8 | e[80 + b];
            }
            if (strcmp((const char *)e, "cuda") != 0 ||
                strcmp((const char *)e + 64, "ptx") != 0 ||
                offset > (uint64_t)size || bytes > (uint64_t)size - offset)
                continue;
            ptx = malloc(bytes + 1);
            if (ptx != NULL) {
                memcpy(ptx, file + offset, bytes);
                ptx[bytes] = '\0';
            }
            break;
        }
    }
    free(file);
    fclose(f);
    return ptx;
}

static void cuda_close(void *state)
{
    struct cuda_state *s = state;

    if (s == NULL)
        return;
    if (s->stream != NULL)
        s->api.cuStreamSynchronize(s->stream);
    CUdeviceptr buffers[] = {s->device_a, s->device_b, s->va, s->vb, s->vc};
    for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); i++)
        if (buffers[i] != 0)
            s->api.cuMemFree_v2(buffers[i]);
    if (s->pinned != NULL)
        s->api.cuMemFreeHost(s->pinned);
    free(s->pageable);
    /* The primary context, its stream, event and module go with the process. */
    free(s);
}

static bool cuda_open(struct bench_env *env, void **out_state)
{
    struct cuda_state *s;
    const char *missing;
    char *ptx;
    CUresult error;

    *out_state = NULL;
    if (strcmp(env->info.plugin, "cuda") != 0)
        return false; /* a baseline for CUDA devices only: nothing to note */
    s = calloc(1, sizeof(*s));
    *out_state = s;
    if (s == NULL)
        return false;
    s->env = env;
    missing = cuda_load(&s->dl, &s->api);
    if (missing != NULL) {
        bench_report_note(env->report, "cuda-raw: %s: %s", missing, dlerror());
        return false;
    }
    error = cuda_ready(&s->api, (int)env->info.index, &s->stream);
    if (error == 0)
        error = s->api.cuEventCreate(&s->event, 0);
    ptx = env->bundle_path != NULL ? bundle_ptx(env->bundle_path) : NULL;
    if (error == 0 && ptx == NULL) {
        bench_report_note(env->report,
                          "cuda-raw: no PTX in the example bundle");
        return false;
    }
    if (error == 0)
        error = s->api.cuModuleLoadData(&s->module, ptx);
    free(ptx);
    if (error == 0)
        error = s->api.cuModuleGetFunction(&s->empty, s->module, "empty");
    if (error == 0)
        error = s->api.cuModuleGetFunction(&s->vadd, s->module, "vadd");
    if (error != 0) {
        bench_report_note(
            env->report, "cuda-raw: setting up device %u failed with CUresult %d",
            env->info.index, error);
        return false;
    }
    return true;
}

static bool measure_discovery(void *state, struct bench_run *run)
{
    char ordinal[16];

    (void)state;
    snprintf(ordinal, sizeof(ordinal), "%u", run->env->info.index);
    return bench_discovery_measure(
        run, "cuda-raw", ordinal,
        "cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, "
        "cuCtxSetCurrent, cuStreamCreate");
}

static bool step_query(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < DISPATCH_BATCH; i++)
        TRY(st->s, st->run, st->s->api.cuEventQuery(st->s->event));
    *out_ns = (double)(bench_now_ns() - start) / DISPATCH_BATCH;
    return true;
}

static bool measure_dispatch(void *state, struct bench_run *run)
{
    struct cuda_state *s = state;
    struct step st = {.s = s, .run = run};

    TRY(s, run, s->api.cuEventRecord(s->event, s->stream));
    TRY(s, run, s->api.cuStreamSynchronize(s->stream));
    return bench_measure(run, step_query, &st,
                         "cuEventQuery of a completed event", 0);
}

static CUresult launch_empty(struct cuda_state *s)
{
    return s->api.cuLaunchKernel(s->empty, 1, 1, 1, 1, 1, 1, 0, s->stream, NULL,
                                 NULL);
}

static bool step_launch(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->s, st->run, launch_empty(st->s));
    TRY(st->s, st->run, st->s->api.cuStreamSynchronize(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_launch_stream(void *context, double *out_ns)
{
    struct step *st = context;
    uint32_t launches = st->s->env->stream_launches;
    uint64_t start = bench_now_ns();

    for (uint32_t i = 0; i < launches; i++)
        TRY(st->s, st->run, launch_empty(st->s));
    TRY(st->s, st->run, st->s->api.cuStreamSynchronize(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start) / launches;
    return true;
}

static bool measure_launch_empty(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};

    return bench_measure(run, step_launch, &st,
                         "cuLaunchKernel(empty, 1, 1), cuStreamSynchronize", 0);
}

static bool measure_launch_stream(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};

    return bench_measure(
        run, step_launch_stream, &st,
        "cuLaunchKernel(empty, 1, 1) back to back, one cuStreamSynchronize", 0);
}

static bool step_vadd(void *context, double *out_ns)
{
    struct step *st = context;
    struct cuda_state *s = st->s;
    unsigned int n = BENCH_VADD_COUNT;
    void *params[] = {&n, &s->va, &s->vb, &s->vc};
    uint64_t start = bench_now_ns();

    TRY(s, st->run,
        s->api.cuLaunchKernel(s->vadd, BENCH_VADD_COUNT / BENCH_VADD_BLOCK, 1,
                              1, BENCH_VADD_BLOCK, 1, 1, 0, s->stream, params,
                              NULL));
    TRY(s, st->run, s->api.cuStreamSynchronize(s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_vadd(void *state, struct bench_run *run)
{
    struct cuda_state *s = state;
    struct step st = {.s = s, .run = run};
    size_t bytes = BENCH_VADD_COUNT * sizeof(float);
    float *host;
    bool ok = true;

    if (s->vc == 0) {
        TRY(s, run, s->api.cuMemAlloc_v2(&s->va, bytes));
        TRY(s, run, s->api.cuMemAlloc_v2(&s->vb, bytes));
        TRY(s, run, s->api.cuMemAlloc_v2(&s->vc, bytes));
    }
    host = malloc(bytes);
    if (host == NULL)
        return bench_fail(run, "out of host memory");
    for (uint32_t i = 0; i < BENCH_VADD_COUNT; i++)
        host[i] = (float)(i % 1024);
    ok = s->api.cuMemcpyHtoDAsync_v2(s->va, host, bytes, s->stream) == 0 &&
         s->api.cuMemcpyHtoDAsync_v2(s->vb, host, bytes, s->stream) == 0 &&
         s->api.cuStreamSynchronize(s->stream) == 0 &&
         bench_measure(run, step_vadd, &st,
                       "vadd<<<65536, 256>>>, cuStreamSynchronize",
                       3ull * bytes) &&
         s->api.cuMemcpyDtoHAsync_v2(host, s->vc, bytes, s->stream) == 0 &&
         s->api.cuStreamSynchronize(s->stream) == 0;
    for (uint32_t i = 0; ok && i < BENCH_VADD_COUNT; i++)
        ok = host[i] == 2.0f * (float)(i % 1024);
    free(host);
    return ok || bench_fail(run, "vadd failed or its result is wrong");
}

static bool copy_prepare(struct cuda_state *s, struct bench_run *run)
{
    size_t bytes = s->env->max_copy_bytes;

    if (s->pageable != NULL)
        return true;
    TRY(s, run, s->api.cuMemAlloc_v2(&s->device_a, bytes));
    TRY(s, run, s->api.cuMemAlloc_v2(&s->device_b, bytes));
    TRY(s, run, s->api.cuMemAllocHost_v2(&s->pinned, bytes));
    memset(s->pinned, 0, bytes);
    s->pageable = bench_alloc_touched(bytes);
    return s->pageable != NULL || bench_fail(run, "out of host memory");
}

static bool step_h2d(void *context, double *out_ns)
{
    struct step *st = context;
    struct cuda_state *s = st->s;
    uint64_t start = bench_now_ns();

    TRY(s, st->run,
        s->api.cuMemcpyHtoDAsync_v2(s->device_a, st->host, st->bytes, s->stream));
    TRY(s, st->run, s->api.cuStreamSynchronize(s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2h(void *context, double *out_ns)
{
    struct step *st = context;
    struct cuda_state *s = st->s;
    uint64_t start = bench_now_ns();

    TRY(s, st->run,
        s->api.cuMemcpyDtoHAsync_v2(st->host, s->device_a, st->bytes, s->stream));
    TRY(s, st->run, s->api.cuStreamSynchronize(s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2d(void *context, double *out_ns)
{
    struct step *st = context;
    struct cuda_state *s = st->s;
    uint64_t start = bench_now_ns();

    TRY(s, st->run,
        s->api.cuMemcpyDtoDAsync_v2(s->device_b, s->device_a, st->bytes,
                                    s->stream));
    TRY(s, st->run, s->api.cuStreamSynchronize(s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_copy(struct cuda_state *s, struct bench_run *run,
                         bench_step_fn step, const char *detail_pageable,
                         const char *detail_pinned)
{
    bool pinned = strcmp(run->point->variant, "pinned") == 0;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};

    if (!copy_prepare(s, run))
        return false;
    st.host = pinned ? s->pinned : s->pageable;
    return bench_measure(run, step, &st,
                         pinned ? detail_pinned : detail_pageable, st.bytes);
}

static bool measure_copy_h2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_h2d,
                        "cuMemcpyHtoDAsync (malloc memory), sync",
                        "cuMemcpyHtoDAsync (cuMemAllocHost memory), sync");
}

static bool measure_copy_d2h(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2h,
                        "cuMemcpyDtoHAsync (malloc memory), sync",
                        "cuMemcpyDtoHAsync (cuMemAllocHost memory), sync");
}

static bool measure_copy_d2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2d, "cuMemcpyDtoDAsync, sync",
                        "cuMemcpyDtoDAsync, sync");
}

static bool step_alloc_free(void *context, double *out_ns)
{
    struct step *st = context;
    struct cuda_state *s = st->s;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < ALLOC_BATCH; i++) {
        CUdeviceptr address;

        TRY(s, st->run, s->api.cuMemAlloc_v2(&address, st->bytes));
        TRY(s, st->run, s->api.cuMemFree_v2(address));
    }
    *out_ns = (double)(bench_now_ns() - start) / ALLOC_BATCH;
    return true;
}

static bool measure_alloc_free(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run, .bytes = run->point->bytes};

    return bench_measure(run, step_alloc_free, &st, "cuMemAlloc, cuMemFree", 0);
}

const struct bench_impl bench_impl_cuda_raw = {
    .name = "cuda-raw",
    .open = cuda_open,
    .close = cuda_close,
    .discover = cuda_discover,
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
        },
};
