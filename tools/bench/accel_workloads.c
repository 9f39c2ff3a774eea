/*
 * The workload cases through accel: the kernels of kernels/workloads.cu,
 * built by accel-cc into accel-kernels-workloads.accelpack, which is found
 * beside the example bundle.
 */
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

struct bench_accel_workloads {
    accel_module *module;
    /* Per workload (bench_workload_slot): its kernels (by bench_workload_form), its buffers. */
    struct {
        accel_kernel *kernels[2];
        accel_ref inputs[2];
        accel_ref output;
        void *zeros; /* the zeroed output, copied in before each run */
    } w[BENCH_WORKLOAD_COUNT];
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

/* dirname(examples bundle)/accel-kernels-workloads.accelpack; NULL when none. */
static char *workloads_bundle_path(const char *examples)
{
    static const char name[] = "accel-kernels-workloads.accelpack";
    const char *slash = examples != NULL ? strrchr(examples, '/') : NULL;
    size_t dir = slash != NULL ? (size_t)(slash - examples) + 1 : 0;
    char *path = malloc(dir + sizeof(name));

    if (path != NULL) {
        memcpy(path, examples, dir);
        memcpy(path + dir, name, sizeof(name));
    }
    return path;
}

static bool open_module(struct bench_accel_workloads *s, struct bench_run *run)
{
    char *path;
    accel_status status;

    if (s->module != NULL)
        return true;
    if (run->env->bundle_path == NULL)
        return bench_fail(
            run, "no example bundle found, so no workload bundle beside it");
    path = workloads_bundle_path(run->env->bundle_path);
    if (path == NULL)
        return bench_fail(run, "out of host memory");
    status = accel_module_load_file(run->env->device, path, &s->module);
    if (status != ACCEL_OK)
        bench_fail(run, "loading %s: %s: %s", path, accel_status_name(status),
                   accel_last_error());
    free(path);
    return status == ACCEL_OK;
}

/* The workload's buffers, once for both its forms. */
static bool prepare_buffers(struct bench_accel_workloads *s,
                            accel_stream *stream, struct bench_run *run,
                            const struct bench_workload_data *d)
{
    int slot = bench_workload_slot(d->case_id);
    accel_device *device = run->env->device;

    if (s->w[slot].output.count != 0)
        return true;
    for (uint32_t i = 0; i < d->input_count; i++) {
        TRY(run, accel_alloc(device, ACCEL_BYTE, d->input_bytes[i],
                             &s->w[slot].inputs[i]));
        TRY(run, accel_copy_to_device(stream, s->w[slot].inputs[i], 0,
                                      d->inputs[i], d->input_bytes[i]));
    }
    TRY(run,
        accel_alloc(device, ACCEL_BYTE, d->output_bytes, &s->w[slot].output));
    if (d->zero_output && (s->w[slot].zeros = calloc(1, d->output_bytes)) == NULL)
        return bench_fail(run, "out of host memory");
    TRY(run, accel_stream_sync(stream));
    return true;
}

static bool prepare(struct bench_accel_workloads *s, accel_stream *stream,
                    struct bench_run *run, const struct bench_workload_data *d)
{
    int slot = bench_workload_slot(d->case_id),
        form = bench_workload_form(run->point);

    if (s->w[slot].kernels[form] != NULL)
        return true;
    if (!prepare_buffers(s, stream, run, d))
        return false;
    TRY(run, accel_kernel_get(s->module, bench_workload_kernel(run->point),
                              &s->w[slot].kernels[form]));
    return true;
}

struct accel_step {
    struct bench_run *run;
    struct bench_accel_workloads *s;
    accel_stream *stream;
    const struct bench_workload_data *d;
    struct bench_geometry g;
};

static bool step_workload(void *context, double *out_ns)
{
    struct accel_step *st = context;
    int slot = bench_workload_slot(st->d->case_id);
    uint32_t n = st->d->n;
    accel_arg args[4];
    uint32_t nargs = 0;
    uint64_t start = bench_now_ns();

    args[nargs++] = ACCEL_ARG_VALUE(n);
    for (uint32_t i = 0; i < st->d->input_count; i++)
        args[nargs++] = ACCEL_ARG_REF(st->s->w[slot].inputs[i]);
    args[nargs++] = ACCEL_ARG_REF(st->s->w[slot].output);
    if (st->d->zero_output)
        TRY(st->run,
            accel_copy_to_device(st->stream, st->s->w[slot].output, 0,
                                 st->s->w[slot].zeros, st->d->output_bytes));
    TRY(st->run,
        accel_launch(st->stream,
                     st->s->w[slot].kernels[bench_workload_form(st->run->point)],
                     (accel_dim3){st->g.grid[0], st->g.grid[1], st->g.grid[2]},
                     (accel_dim3){st->g.block[0], st->g.block[1], st->g.block[2]},
                     0, args, nargs));
    TRY(st->run, accel_stream_sync(st->stream));
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool check(struct accel_step *st)
{
    void *output = malloc(st->d->output_bytes);
    accel_status status;
    bool ok;

    if (output == NULL)
        return bench_fail(st->run, "out of host memory");
    status = accel_copy_to_host(
        st->stream, output, st->s->w[bench_workload_slot(st->d->case_id)].output,
        0, st->d->output_bytes);
    if (status == ACCEL_OK)
        status = accel_stream_sync(st->stream);
    ok = status == ACCEL_OK ? bench_workload_check(st->run, st->d, output)
                            : failed(st->run, "accel_copy_to_host", status);
    free(output);
    return ok;
}

bool bench_accel_workload_measure(struct bench_accel_workloads **state,
                                  accel_stream *stream, struct bench_run *run)
{
    const struct bench_workload_data *d = bench_workload_data(run);
    struct accel_step st = {.run = run, .stream = stream, .d = d};
    struct bench_samples ns;
    char detail[128], shape[64];
    bool ok;

    if (d == NULL)
        return false;
    if (*state == NULL && (*state = calloc(1, sizeof(**state))) == NULL)
        return bench_fail(run, "out of host memory");
    st.s = *state;
    if (!open_module(st.s, run) || !prepare(st.s, stream, run, d))
        return false;
    st.g = bench_workload_geometry(run->point);
    bench_geometry_text(&st.g, shape, sizeof(shape));
    snprintf(detail, sizeof(detail), "%s%s, accel_stream_sync",
             bench_workload_kernel(run->point), shape);
    ok = bench_sample(&run->budget, step_workload, &st, &ns) && check(&st) &&
         bench_emit_bandwidth(run, detail, &ns, d->counted_bytes);
    bench_samples_deinit(&ns);
    return ok;
}

static void free_ref(accel_device *device, accel_ref *ref)
{
    if (ref->count != 0)
        accel_free(device, *ref);
    ref->count = 0;
}

void bench_accel_workloads_free(struct bench_accel_workloads *s,
                                accel_device *device)
{
    if (s == NULL)
        return;
    for (int i = 0; i < BENCH_WORKLOAD_COUNT; i++) {
        free_ref(device, &s->w[i].inputs[0]);
        free_ref(device, &s->w[i].inputs[1]);
        free_ref(device, &s->w[i].output);
        free(s->w[i].zeros);
    }
    accel_module_unload(s->module);
    free(s);
}
