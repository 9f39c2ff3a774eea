/*
 * The allreduce case: run under an MPI launcher (mpirun -np 2 accel-bench
 * --case allreduce), one process per rank, every rank walking the same
 * points. Two implementations:
 *  - "comm": accel_allreduce of an f32 ref, in place, through the provider
 *    ACCEL_COMM picks (mpi, host), each call waited for on the stream;
 *  - "mpi": MPI_Allreduce called directly on a host buffer of the same
 *    size (the MPI the mpi provider would open: ACCEL_MPI_LIBRARY,
 *    libmpi.so.40, libmpi.so.12), the baseline.
 * With ACCEL_COMM=host the ranks meet through ACCEL_COMM_RENDEZVOUS
 * (file:DIR, set before mpirun: BENCHMARKS.md), and "mpi" still runs.
 * Up to 64 KiB the figure is the time per call (the overhead of ordering a
 * collective with the stream shows against MPI's own latency); from
 * 1 MiB it is bus bandwidth, 2 (n - 1) / n * bytes per call, as NCCL's
 * tests report it. Every rank makes the same fixed number of calls per
 * point (a time budget would let the ranks' counts differ, and a
 * collective wait for a call that never comes).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_lib.h"

/* Calls per round of a point: the same on every rank. A 256 MiB call
 * takes tens of milliseconds on two shared cores: a few are enough. */
static uint32_t calls_for(uint64_t bytes)
{
    return bytes <= 64 * 1024          ? 300
           : bytes <= 4 * 1024 * 1024  ? 30
           : bytes <= 16 * 1024 * 1024 ? 6
                                       : 3;
}

static void fix_budget(struct bench_run *run)
{
    uint32_t calls = calls_for(run->point->bytes);
    run->budget = (struct bench_budget){.warmup = calls > 3 ? 2 : 1,
                                        .min_runs = calls,
                                        .max_runs = calls,
                                        .max_ns = UINT64_MAX};
}

/* What bench_measure records: time per call, or bus bandwidth. */
static uint64_t bus_bytes(uint64_t bytes, int size)
{
    if (bytes <= 64 * 1024 || size < 2)
        return 0;
    return 2 * (uint64_t)(size - 1) * bytes / (uint64_t)size;
}

/* ---- comm: accel_allreduce ---- */

struct comm_state {
    accel_device *device;
    accel_comm *comm;
    accel_stream *stream;
    accel_ref ref;
    char detail[64];
};

static void comm_close(void *p)
{
    struct comm_state *s = p;
    if (s == NULL)
        return;
    if (s->ref.count != 0)
        accel_free(s->device, s->ref);
    accel_stream_destroy(s->stream);
    accel_comm_destroy(s->comm);
    free(s);
}

static bool comm_open(struct bench_env *env, void **out_state)
{
    struct comm_state *s = calloc(1, sizeof *s);
    *out_state = s;
    if (s == NULL)
        return false;
    s->device = env->device;
    accel_status status = accel_comm_create(env->device, &s->comm);
    if (status == ACCEL_OK)
        status = accel_stream_create(env->device, &s->stream);
    if (status != ACCEL_OK) {
        bench_report_note(env->report, "comm: no communicator: %s: %s",
                          accel_status_name(status), accel_last_error());
        return false;
    }
    snprintf(s->detail, sizeof s->detail, "%s provider, %d ranks",
             accel_comm_provider_name(s->comm), accel_comm_size(s->comm));
    return true;
}

static bool comm_step(void *p, double *out_ns)
{
    struct comm_state *s = p;
    uint64_t start = bench_now_ns();
    if (accel_allreduce(s->comm, s->stream, s->ref, s->ref, s->ref.count,
                        ACCEL_REDUCE_SUM) != ACCEL_OK ||
        accel_stream_sync(s->stream) != ACCEL_OK)
        return false;
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool comm_measure(void *p, struct bench_run *run)
{
    struct comm_state *s = p;
    uint64_t count = run->point->bytes / sizeof(float);
    if (s->ref.count != count) {
        if (s->ref.count != 0)
            accel_free(s->device, s->ref);
        s->ref = (accel_ref){0};
        if (accel_alloc(s->device, ACCEL_F32, count, &s->ref) != ACCEL_OK)
            return bench_fail(run, "accel_alloc: %s", accel_last_error());
        static const float zero = 0.0f;
        if (accel_fill(s->stream, s->ref, 0, run->point->bytes, &zero,
                       sizeof zero) != ACCEL_OK ||
            accel_stream_sync(s->stream) != ACCEL_OK)
            return bench_fail(run, "accel_fill: %s", accel_last_error());
    }
    fix_budget(run);
    double ns;
    if (!comm_step(s, &ns))
        return bench_fail(run, "accel_allreduce: %s", accel_last_error());
    return bench_measure(run, comm_step, s, s->detail,
                         bus_bytes(run->point->bytes, accel_comm_size(s->comm)));
}

const struct bench_impl bench_impl_comm = {
    .name = "comm",
    .open = comm_open,
    .close = comm_close,
    .measure = {[BENCH_ALLREDUCE] = comm_measure},
};

/* ---- mpi: MPI_Allreduce directly ---- */

struct mpi_state {
    struct mpi_lib lib;
    bool initialised_here;
    int size;
    float *buffer;
    uint64_t bytes;
    char detail[64];
};

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

static accel_status plain_set_error(accel_status status, const char *fmt, ...)
{
    (void)fmt;
    return status;
}

static void plain_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static const struct accel_comm_services plain_services = {
    .struct_size = sizeof(struct accel_comm_services),
    .log = plain_log,
    .set_error = plain_set_error,
    .getenv = plain_getenv,
};

static void mpi_close(void *p)
{
    struct mpi_state *s = p;
    if (s == NULL)
        return;
    free(s->buffer);
    if (s->initialised_here)
        ((int (*)(void))s->lib.fn.MPI_Finalize)();
    free(s);
}

static bool mpi_open(struct bench_env *env, void **out_state)
{
    char reason[1024];
    struct mpi_state *s = calloc(1, sizeof *s);
    *out_state = s;
    if (s == NULL)
        return false;
    if (mpi__lib_open(&plain_services, &s->lib, reason, sizeof reason) !=
        ACCEL_OK) {
        bench_report_note(env->report, "mpi: %s", reason);
        return false;
    }
    int initialised = 0, level = 0;
    ((int (*)(int *))s->lib.fn.MPI_Initialized)(&initialised);
    if (!initialised) {
        /* The comm implementation did not open MPI (ACCEL_COMM=host). */
        if (((int (*)(int *, char ***, int, int *))s->lib.fn.MPI_Init_thread)(
                NULL, NULL, MPI_LEVEL_MULTIPLE, &level) != 0) {
            bench_report_note(env->report, "mpi: MPI_Init_thread failed");
            return false;
        }
        s->initialised_here = true;
    }
    s->lib.call->comm_size(&s->lib, s->lib.h.comm_world, &s->size);
    snprintf(s->detail, sizeof s->detail, "MPI_Allreduce, %d ranks", s->size);
    return true;
}

static bool mpi_step(void *p, double *out_ns)
{
    struct mpi_state *s = p;
    uint64_t start = bench_now_ns();
    if (s->lib.call->allreduce(&s->lib, s->lib.h.in_place, s->buffer,
                               (int)(s->bytes / sizeof(float)), s->lib.h.f32,
                               s->lib.h.sum, s->lib.h.comm_world) != 0)
        return false;
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool mpi_measure(void *p, struct bench_run *run)
{
    struct mpi_state *s = p;
    if (s->bytes != run->point->bytes) {
        free(s->buffer);
        s->buffer = bench_alloc_touched(run->point->bytes);
        s->bytes = run->point->bytes;
        if (s->buffer == NULL)
            return bench_fail(run, "out of host memory");
    }
    fix_budget(run);
    double ns;
    if (!mpi_step(s, &ns))
        return bench_fail(run, "MPI_Allreduce failed");
    return bench_measure(run, mpi_step, s, s->detail,
                         bus_bytes(run->point->bytes, s->size));
}

const struct bench_impl bench_impl_mpi = {
    .name = "mpi",
    .open = mpi_open,
    .close = mpi_close,
    .measure = {[BENCH_ALLREDUCE] = mpi_measure},
};
