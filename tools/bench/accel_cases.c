/*
 * The cases through accel's own API, on the selected device: what a user
 * of the library would write.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compile_cases.h"
#include "hecbench_case.h"
#include "workloads.h"

/* Calls timed together, where one is too short for the clock. */
enum { DISPATCH_BATCH = 1000, ALLOC_BATCH = 100 };

struct accel_state {
    struct bench_env *env;
    accel_stream *stream;
    accel_event *event;   /* recorded and completed: what dispatch queries */
    accel_module *module; /* the example kernels, NULL when not found */
    accel_kernel *empty;
    accel_kernel *vadd;
    /* The copy cases' buffers, max_copy_bytes each, made when first needed. */
    accel_ref device_a, device_b;
    void *pageable;
    void *pinned;
    /* vadd's vectors, made when first needed. */
    accel_ref va, vb, vc;
    struct bench_accel_workloads *workloads; /* the workload cases' */
    struct bench_accel_hecbench *hecbench;   /* the real-code suite's */
};

/* What a step needs: the state, the run (to report failures) and the point. */
struct step {
    struct accel_state *s;
    struct bench_run *run;
    uint64_t bytes;
    const void *src;
    void *dst;
};

static bool failed(struct bench_run *run, const char *call, accel_status status)
{
    return bench_fail(run, "%s: %s: %s", call, accel_status_name(status),
                      accel_last_error());
}

#define TRY(run, call)                                                         \
    do {                                                                       \
        accel_status status_ = (call);                                         \
        if (status_ != ACCEL_OK)                                               \
            return failed((run), #call, status_);                              \
    } while (0)

static void free_ref(accel_device *device, accel_ref *ref)
{
    if (ref->count != 0)
        accel_free(device, *ref);
    ref->count = 0;
}

static void accel_close(void *state)
{
    struct accel_state *s = state;
    accel_device *device;

    if (s == NULL)
        return;
    device = s->env->device;
    if (s->stream != NULL)
        accel_stream_sync(s->stream);
    free_ref(device, &s->device_a);
    free_ref(device, &s->device_b);
    free_ref(device, &s->va);
    free_ref(device, &s->vb);
    free_ref(device, &s->vc);
    bench_accel_workloads_free(s->workloads, device);
    bench_accel_hecbench_free(s->hecbench, device);
    accel_host_free(device, s->pinned);
    free(s->pageable);
    accel_module_unload(s->module);
    accel_event_destroy(s->event);
    accel_stream_destroy(s->stream);
    free(s);
}

static bool accel_open(struct bench_env *env, void **out_state)
{
    struct accel_state *s = calloc(1, sizeof(*s));
    accel_status status;

    *out_state = s;
    if (s == NULL)
        return false;
    s->env = env;
    if ((status = accel_stream_create(env->device, &s->stream)) != ACCEL_OK ||
        (status = accel_event_create(env->device, &s->event)) != ACCEL_OK) {
        bench_report_note(env->report, "accel: %s: %s",
                          accel_status_name(status), accel_last_error());
        return false;
    }
    if (env->bundle_path == NULL) {
        bench_report_note(env->report,
                          "accel: the example kernel bundle was not found "
                          "beside the tool (give it with --bundle): no "
                          "launches");
        return true;
    }
    if ((status = accel_module_load_file(env->device, env->bundle_path,
                                         &s->module)) != ACCEL_OK ||
        (status = accel_kernel_get(s->module, "empty", &s->empty)) != ACCEL_OK ||
        (status = accel_kernel_get(s->module, "vadd", &s->vadd)) != ACCEL_OK)
        bench_report_note(env->report, "accel: kernels from %s: %s: %s",
                          env->bundle_path, accel_status_name(status),
                          accel_last_error());
    return true;
}

static bool accel_discover(const char *arg)
{
    accel_host *host;
    accel_device *device;
    accel_stream *stream;

    /* "null": the CPU plugin alone, the figure the selection as run is held to. */
    accel_host_options options = {
        .backend = arg != NULL && strcmp(arg, "null") == 0 ? "null" : NULL};

    return accel_host_create(&options, &host) == ACCEL_OK &&
           accel_device_open_selected(host, &device) == ACCEL_OK &&
           accel_stream_create(device, &stream) == ACCEL_OK;
}

static bool measure_discovery(void *state, struct bench_run *run)
{
    (void)state;
    /* The selection as run (ACCEL_BACKEND, or every plugin when unset), then
     * the CPU plugin alone: what the other plugins add is the difference. */
    return bench_discovery_measure(
               run, "accel", NULL,
               "accel_host_create, accel_device_open_selected, "
               "accel_stream_create") &&
           bench_discovery_measure_as(run, "accel", "null", "null",
                                      "the same with ACCEL_BACKEND=null");
}

/* ---- discovery_many ---- */

/* Candidates in the scanned variant (the loader's cap) and the other. */
enum { MANY_SCANNED = 4096, MANY_OVER_CAP = 50000 };
enum { MANY_SCANNED_QUICK = 1024, MANY_OVER_CAP_QUICK = 5000 };

/*
 * A fresh directory holding `count` one-byte accel-plugin-fN.so files: in
 * /dev/shm where there is one, so that making and removing the files, which
 * is not what is measured, costs the disk nothing; in /tmp otherwise.
 */
static char *many_dir_make(struct bench_run *run, unsigned count)
{
    static const char *const templates[] = {"/dev/shm/accel-bench-many-XXXXXX",
                                            "/tmp/accel-bench-many-XXXXXX"};
    char *dir = NULL;

    for (size_t i = 0;
         dir == NULL && i < sizeof(templates) / sizeof(templates[0]); i++) {
        dir = strdup(templates[i]);
        if (dir != NULL && mkdtemp(dir) == NULL) {
            free(dir);
            dir = NULL;
        }
    }
    if (dir == NULL) {
        bench_fail(run, "mkdtemp in /dev/shm and /tmp: %s", strerror(errno));
        return NULL;
    }
    for (unsigned i = 0; i < count; i++) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/accel-plugin-f%u.so", dir, i);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "x", 1) != 1) {
            bench_fail(run, "%s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return dir; /* removed by the caller */
        }
        close(fd);
    }
    return dir;
}

static int many_remove_entry(const char *path, const struct stat *st, int flag,
                             struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static bool step_discovery_many(void *context, double *out_ns)
{
    struct step *st = context;
    accel_host_options options = {.plugin_path = (const char *)st->src};
    accel_host *host = NULL;
    uint64_t start = bench_now_ns();

    TRY(st->run, accel_host_create(&options, &host));
    *out_ns = (double)(bench_now_ns() - start);
    accel_host_destroy(host);
    return true;
}

/*
 * Discovery over a directory crowded with candidate files that are no
 * plugin (a shared sticky directory on the path, filled by someone else):
 * under the cap every one is opened and refused; over it the directory is
 * refused after its names are counted.
 */
static bool measure_discovery_many(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};
    bool over = strcmp(run->point->variant, "over_cap") == 0;
    bool quick = run->env->options->quick;
    unsigned count = over ? (quick ? MANY_OVER_CAP_QUICK : MANY_OVER_CAP)
                          : (quick ? MANY_SCANNED_QUICK : MANY_SCANNED);
    char detail[96];
    char *dir = many_dir_make(run, count);
    bool ok = false;

    if (dir == NULL)
        return false;
    snprintf(detail, sizeof(detail),
             "accel_host_create over %u candidate files", count);
    st.src = dir;
    ok = bench_measure(run, step_discovery_many, &st, detail, 0);
    nftw(dir, many_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
    return ok;
}

/* ---- dispatch ---- */

static bool step_query(void *context, double *out_ns)
{
    struct step *st = context;
    accel_event *event = st->s->event;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < DISPATCH_BATCH; i++)
        TRY(st->run, accel_event_query(event));
    *out_ns = (double)(bench_now_ns() - start) / DISPATCH_BATCH;
    return true;
}

static bool measure_dispatch(void *state, struct bench_run *run)
{
    struct accel_state *s = state;
    struct step st = {.s = s, .run = run};

    TRY(run, accel_event_record(s->event, s->stream));
    TRY(run, accel_stream_sync(s->stream));
    return bench_measure(run, step_query, &st,
                         "accel_event_query of a completed event", 0);
}

/* ---- launches ---- */

static bool has_kernels(struct accel_state *s, struct bench_run *run)
{
    return (s->empty != NULL && s->vadd != NULL) ||
           bench_fail(run, "no kernels (see the notes)");
}

static accel_status launch_empty(struct accel_state *s)
{
    return accel_launch(s->stream, s->empty, (accel_dim3){1, 1, 1},
                        (accel_dim3){1, 1, 1}, 0, NULL, 0);
}

static bool step_launch(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, launch_empty(st->s));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_compile(void *state, struct bench_run *run)
{
    (void)state;
    return bench_accel_measure_compile(run);
}

static bool measure_launch_empty(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};

    if (!has_kernels(state, run))
        return false;
    return bench_measure(run, step_launch, &st,
                         "empty<<<1, 1>>>, accel_stream_sync", 0);
}

static bool step_launch_stream(void *context, double *out_ns)
{
    struct step *st = context;
    uint32_t launches = st->s->env->stream_launches;
    uint64_t start = bench_now_ns();

    for (uint32_t i = 0; i < launches; i++)
        TRY(st->run, launch_empty(st->s));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start) / launches;
    return true;
}

static bool measure_launch_stream(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run};
    char detail[96];

    if (!has_kernels(state, run))
        return false;
    snprintf(detail, sizeof(detail),
             "%u x empty<<<1, 1>>>, one accel_stream_sync",
             run->env->stream_launches);
    return bench_measure(run, step_launch_stream, &st, detail, 0);
}

/* ---- vadd ---- */

static bool vadd_prepare(struct accel_state *s, struct bench_run *run)
{
    accel_device *device = s->env->device;
    float *host;
    bool ok;

    if (s->vc.count != 0)
        return true;
    TRY(run, accel_alloc(device, ACCEL_F32, BENCH_VADD_COUNT, &s->va));
    TRY(run, accel_alloc(device, ACCEL_F32, BENCH_VADD_COUNT, &s->vb));
    TRY(run, accel_alloc(device, ACCEL_F32, BENCH_VADD_COUNT, &s->vc));
    host = malloc(BENCH_VADD_COUNT * sizeof(float));
    if (host == NULL)
        return bench_fail(run, "out of host memory");
    for (uint32_t i = 0; i < BENCH_VADD_COUNT; i++)
        host[i] = (float)(i % 1024);
    /* c is written by the warm-up runs: its first touch is not measured. */
    ok = accel_copy_in(s->stream, s->va, host, BENCH_VADD_COUNT) == ACCEL_OK &&
         accel_copy_in(s->stream, s->vb, host, BENCH_VADD_COUNT) == ACCEL_OK &&
         accel_stream_sync(s->stream) == ACCEL_OK;
    free(host);
    return ok || bench_fail(run, "filling the vectors: %s", accel_last_error());
}

static accel_status launch_vadd(struct accel_state *s)
{
    uint32_t n = BENCH_VADD_COUNT;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(s->va),
                        ACCEL_ARG_REF(s->vb), ACCEL_ARG_REF(s->vc)};

    return accel_launch(
        s->stream, s->vadd,
        (accel_dim3){(n + BENCH_VADD_BLOCK - 1) / BENCH_VADD_BLOCK, 1, 1},
        (accel_dim3){BENCH_VADD_BLOCK, 1, 1}, 0, args, 4);
}

static bool step_vadd(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, launch_vadd(st->s));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

/* Every element must be a + b: a fast wrong answer is no result. */
static bool vadd_check(struct accel_state *s, struct bench_run *run)
{
    float *c = malloc(BENCH_VADD_COUNT * sizeof(float));
    bool ok = c != NULL;

    if (ok)
        ok = accel_copy_out(s->stream, c, s->vc, BENCH_VADD_COUNT) == ACCEL_OK &&
             accel_stream_sync(s->stream) == ACCEL_OK;
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

    if (!has_kernels(state, run) || !vadd_prepare(state, run))
        return false;
    snprintf(detail, sizeof(detail), "vadd<<<%u, %u>>>, accel_stream_sync",
             BENCH_VADD_COUNT / BENCH_VADD_BLOCK, BENCH_VADD_BLOCK);
    ok = bench_sample(&run->budget, step_vadd, &st, &ns) &&
         vadd_check(state, run) &&
         bench_emit_bandwidth(run, detail, &ns,
                              3ull * BENCH_VADD_COUNT * sizeof(float));
    bench_samples_deinit(&ns);
    return ok;
}

/* ---- copies ---- */

static bool copy_prepare(struct accel_state *s, struct bench_run *run)
{
    accel_device *device = s->env->device;
    uint64_t bytes = s->env->max_copy_bytes;

    if (s->pinned != NULL)
        return true;
    TRY(run, accel_alloc(device, ACCEL_BYTE, bytes, &s->device_a));
    TRY(run, accel_alloc(device, ACCEL_BYTE, bytes, &s->device_b));
    s->pageable = bench_alloc_touched(bytes);
    if (s->pageable == NULL)
        return bench_fail(run, "out of host memory");
    TRY(run, accel_host_alloc(device, bytes, &s->pinned));
    memset(s->pinned, 0, bytes);
    /* Touch the device buffers too: the first touch is not what is measured. */
    TRY(run, accel_copy_to_device(s->stream, s->device_a, 0, s->pageable, bytes));
    TRY(run, accel_copy_to_device(s->stream, s->device_b, 0, s->pageable, bytes));
    TRY(run, accel_stream_sync(s->stream));
    return true;
}

static bool step_h2d(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, accel_copy_to_device(st->s->stream, st->s->device_a, 0,
                                      st->src, st->bytes));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2h(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, accel_copy_to_host(st->s->stream, st->dst, st->s->device_a, 0,
                                    st->bytes));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool step_d2d(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    TRY(st->run, accel_copy_on_device(st->s->stream, st->s->device_b, 0,
                                      st->s->device_a, 0, st->bytes));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_copy(struct accel_state *s, struct bench_run *run,
                         bench_step_fn step, const char *call)
{
    bool pinned = strcmp(run->point->variant, "pinned") == 0;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};
    char detail[96];

    if (!copy_prepare(s, run))
        return false;
    st.src = pinned ? s->pinned : s->pageable;
    st.dst = pinned ? s->pinned : s->pageable;
    snprintf(detail, sizeof(detail), "%s%s, accel_stream_sync", call,
             step == step_d2d ? ""
             : pinned         ? " (accel_host_alloc memory)"
                              : " (malloc memory)");
    return bench_measure(run, step, &st, detail, st.bytes);
}

static bool measure_copy_h2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_h2d, "accel_copy_to_device");
}

static bool measure_copy_d2h(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2h, "accel_copy_to_host");
}

static bool measure_copy_d2d(void *state, struct bench_run *run)
{
    return measure_copy(state, run, step_d2d, "accel_copy_on_device");
}

/* ---- fill ---- */

static bool step_fill(void *context, double *out_ns)
{
    struct step *st = context;
    /* 1.0f: bytes that differ, so no plugin can take it for a memset. */
    const uint32_t pattern = 0x3f800000u;
    uint64_t start = bench_now_ns();

    TRY(st->run, accel_fill(st->s->stream, st->s->device_a, 0, st->bytes,
                            &pattern, sizeof(pattern)));
    TRY(st->run, accel_stream_sync(st->s->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_fill(void *state, struct bench_run *run)
{
    struct accel_state *s = state;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};

    if (!copy_prepare(s, run))
        return false;
    return bench_measure(run, step_fill, &st,
                         "accel_fill (1.0f), accel_stream_sync", st.bytes);
}

/* ---- alloc_free ---- */

static bool step_alloc_free(void *context, double *out_ns)
{
    struct step *st = context;
    accel_device *device = st->s->env->device;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < ALLOC_BATCH; i++) {
        accel_ref ref;

        TRY(st->run, accel_alloc(device, ACCEL_BYTE, st->bytes, &ref));
        TRY(st->run, accel_free(device, ref));
    }
    *out_ns = (double)(bench_now_ns() - start) / ALLOC_BATCH;
    return true;
}

static bool measure_alloc_free(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run, .bytes = run->point->bytes};

    return bench_measure(run, step_alloc_free, &st, "accel_alloc, accel_free", 0);
}

static bool measure_workload(void *state, struct bench_run *run)
{
    struct accel_state *s = state;

    return bench_accel_workload_measure(&s->workloads, s->stream, run);
}

static bool measure_hecbench(void *state, struct bench_run *run)
{
    struct accel_state *s = state;

    return bench_accel_hecbench_measure(&s->hecbench, s->stream, run);
}

const struct bench_impl bench_impl_accel = {
    .name = "accel",
    .open = accel_open,
    .close = accel_close,
    .discover = accel_discover,
    .measure =
        {
            [BENCH_DISCOVERY] = measure_discovery,
            [BENCH_DISCOVERY_MANY] = measure_discovery_many,
            [BENCH_DISPATCH] = measure_dispatch,
            [BENCH_LAUNCH_EMPTY] = measure_launch_empty,
            [BENCH_LAUNCH_STREAM] = measure_launch_stream,
            [BENCH_VADD] = measure_vadd,
            [BENCH_MATVEC] = measure_workload,
            [BENCH_STENCIL_2D] = measure_workload,
            [BENCH_CONV3D] = measure_workload,
            [BENCH_HISTOGRAM] = measure_workload,
            [BENCH_GEMM_TILED] = measure_workload,
            [BENCH_REDUCE_SHARED] = measure_workload,
            [BENCH_SCAN_BLOCK] = measure_workload,
            [BENCH_HECBENCH] = measure_hecbench,
            [BENCH_COPY_H2D] = measure_copy_h2d,
            [BENCH_COPY_D2H] = measure_copy_d2h,
            [BENCH_COPY_D2D] = measure_copy_d2d,
            [BENCH_FILL] = measure_fill,
            [BENCH_ALLOC_FREE] = measure_alloc_free,
            [BENCH_COMPILE] = measure_compile,
        },
};
