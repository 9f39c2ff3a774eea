/*
 * The real-code suite through accel: each program's CUDA kernels from
 * accel-bench-NAME.accelpack, found beside the example bundle, on the
 * run's device and stream.
 */
#include <stdlib.h>
#include <string.h>

#include "hecbench_case.h"

struct program_state {
    accel_module *module;
    accel_ref refs[HB_MAX_BUFFERS];
    const char *names[BENCH_HECBENCH_KERNELS];
    accel_kernel *kernels[BENCH_HECBENCH_KERNELS];
};

struct bench_accel_hecbench {
    struct program_state p[BENCH_HECBENCH_MAX];
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

/* dirname(examples bundle)/accel-bench-NAME.accelpack; NULL when out of memory. */
static char *bundle_path(const char *examples, const char *name)
{
    const char *slash = strrchr(examples, '/');
    int dir = slash != NULL ? (int)(slash - examples) + 1 : 0;
    size_t size = (size_t)dir + strlen(name) + sizeof("accel-bench-.accelpack");
    char *path = malloc(size);

    if (path != NULL)
        snprintf(path, size, "%.*saccel-bench-%s.accelpack", dir, examples, name);
    return path;
}

static bool open_program(struct program_state *s, accel_stream *stream,
                         struct bench_run *run, const struct hb_program *p,
                         const struct bench_hecbench_data *d)
{
    accel_device *device = run->env->device;
    accel_status status;
    char *path;

    if (s->module != NULL)
        return true;
    if (run->env->bundle_path == NULL)
        return bench_fail(
            run, "no example bundle found, so no %s bundle beside it", p->name);
    if ((path = bundle_path(run->env->bundle_path, p->name)) == NULL)
        return bench_fail(run, "out of host memory");
    status = accel_module_load_file(device, path, &s->module);
    if (status != ACCEL_OK)
        bench_fail(run, "loading %s: %s: %s", path, accel_status_name(status),
                   accel_last_error());
    free(path);
    if (status != ACCEL_OK)
        return false;
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        TRY(run,
            accel_alloc(device, ACCEL_BYTE, p->buffers[i].bytes, &s->refs[i]));
        TRY(run, accel_copy_to_device(stream, s->refs[i], 0, d->initial[i],
                                      p->buffers[i].bytes));
    }
    TRY(run, accel_stream_sync(stream));
    return true;
}

static accel_kernel *kernel_named(struct program_state *s,
                                  struct bench_run *run, const char *name)
{
    bool found;
    int i = bench_hecbench_kernel_slot(s->names, name, &found);
    accel_status status;

    if (i < 0) {
        bench_fail(run, "more than %d kernels", BENCH_HECBENCH_KERNELS);
        return NULL;
    }
    if (found)
        return s->kernels[i];
    status = accel_kernel_get(s->module, name, &s->kernels[i]);
    if (status != ACCEL_OK) {
        failed(run, name, status);
        return NULL;
    }
    s->names[i] = name;
    return s->kernels[i];
}

struct accel_step {
    struct bench_run *run;
    struct program_state *s;
    accel_stream *stream;
    const struct hb_program *p;
    const struct bench_hecbench_data *d;
};

static accel_arg arg_of(struct program_state *s, const struct hb_arg *a)
{
    switch (a->kind) {
    case HB_ARG_BUFFER:
        return ACCEL_ARG_REF(s->refs[a->v.buffer]);
    case HB_ARG_I32:
    case HB_ARG_U32:
    case HB_ARG_F32:
        return ACCEL_ARG_BYTES(&a->v, 4, 4);
    default:
        return ACCEL_ARG_BYTES(&a->v, 8, 8);
    }
}

static bool launch(void *context, const struct hb_launch *l)
{
    struct accel_step *st = context;
    accel_kernel *kernel = kernel_named(st->s, st->run, l->kernel);
    accel_arg args[HB_MAX_ARGS];

    if (kernel == NULL)
        return false;
    for (uint32_t i = 0; i < l->arg_count; i++)
        args[i] = arg_of(st->s, &l->args[i]);
    TRY(st->run, accel_launch(st->stream, kernel,
                              (accel_dim3){l->grid[0], l->grid[1], l->grid[2]},
                              (accel_dim3){l->block[0], l->block[1], l->block[2]},
                              l->shared_bytes, args, l->arg_count));
    return true;
}

/* Put back what a step changes and reads (outside the time). */
static bool restore(struct accel_step *st)
{
    for (uint32_t i = 0; i < st->p->buffer_count; i++)
        if (st->p->buffers[i].reset)
            TRY(st->run, accel_copy_to_device(st->stream, st->s->refs[i], 0,
                                              st->d->initial[i],
                                              st->p->buffers[i].bytes));
    TRY(st->run, accel_stream_sync(st->stream));
    return true;
}

static bool step_program(void *context, double *out_ns)
{
    struct accel_step *st = context;
    struct hb_launcher launcher = {st, launch};
    uint64_t start;

    if (!restore(st))
        return false;
    start = bench_now_ns();
    if (!st->p->step(&launcher))
        return false;
    TRY(st->run, accel_stream_sync(st->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool read_back(void *context, uint32_t buffer, void *out)
{
    struct accel_step *st = context;

    TRY(st->run, accel_copy_to_host(st->stream, out, st->s->refs[buffer], 0,
                                    st->p->buffers[buffer].bytes));
    TRY(st->run, accel_stream_sync(st->stream));
    return true;
}

bool bench_accel_hecbench_measure(struct bench_accel_hecbench **state,
                                  accel_stream *stream, struct bench_run *run)
{
    const struct hb_program *p = bench_hecbench_program(run->point);
    const struct bench_hecbench_data *d = bench_hecbench_data(run);
    struct accel_step st = {.run = run, .stream = stream, .p = p, .d = d};

    if (d == NULL)
        return false;
    if (*state == NULL && (*state = calloc(1, sizeof(**state))) == NULL)
        return bench_fail(run, "out of host memory");
    st.s = &(*state)->p[bench_hecbench_slot(run->point)];
    if (!open_program(st.s, stream, run, p, d))
        return false;
    /* The result of the timed steps is checked after them. */
    return bench_measure(run, step_program, &st, "accel_stream_sync", 0) &&
           bench_hecbench_check_outputs(run, p, d, read_back, &st);
}

void bench_accel_hecbench_free(struct bench_accel_hecbench *state,
                               accel_device *device)
{
    if (state == NULL)
        return;
    for (int i = 0; i < BENCH_HECBENCH_MAX; i++) {
        for (int b = 0; b < HB_MAX_BUFFERS; b++)
            if (state->p[i].refs[b].count != 0)
                accel_free(device, state->p[i].refs[b]);
        accel_module_unload(state->p[i].module);
    }
    free(state);
}
