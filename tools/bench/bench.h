/*
 * accel-bench's shared declarations: the cases, the implementations that
 * run them (accel and its baselines), and what a measurement is handed.
 *
 * The driver (main.c) walks the selected cases, and for each point of a
 * case (a variant and a size) asks every implementation in turn to measure
 * it, so that the figures of one group are taken back to back. An
 * implementation is a table of one measuring function per case, NULL where
 * it has nothing to compare; it is opened the first time it is needed.
 */
#ifndef ACCEL_BENCH_BENCH_H
#define ACCEL_BENCH_BENCH_H

#include <accel/accel.h>

#include <stdbool.h>
#include <stdint.h>

#include "report.h"
#include "stats.h"

/* The cases, in the order a full run measures them. */
enum bench_case_id {
    BENCH_DISCOVERY,
    BENCH_DISCOVERY_MANY,
    BENCH_DISPATCH,
    BENCH_LAUNCH_EMPTY,
    BENCH_LAUNCH_STREAM,
    BENCH_VADD,
    BENCH_COPY_H2D,
    BENCH_COPY_D2H,
    BENCH_COPY_D2D,
    BENCH_FILL,
    BENCH_ALLOC_FREE,
    /* The workload cases (workloads.h). */
    BENCH_MATVEC,
    BENCH_STENCIL_2D,
    BENCH_CONV3D,
    BENCH_HISTOGRAM,
    BENCH_GEMM_TILED,
    BENCH_REDUCE_SHARED,
    BENCH_SCAN_BLOCK,
    /* Programs of HeCBench, against their OpenMP and OpenCL forms (hecbench.h). */
    BENCH_HECBENCH,
    /* Kernels from source, cold and cached (compile_cases.h). */
    BENCH_COMPILE,
    /* Collectives under an MPI launcher (comm_cases.c); only when named. */
    BENCH_ALLREDUCE,
    BENCH_CASE_COUNT
};

/* The case's name in the output: "copy_h2d". */
const char *bench_case_name(enum bench_case_id id);
/* The case of that name (`length` bytes of it). False when there is none. */
bool bench_case_from_name(const char *name, size_t length,
                          enum bench_case_id *out_id);

/* Elements of the vadd case's vectors: 16M floats, 64 MiB each. */
#define BENCH_VADD_COUNT (16u * 1024u * 1024u)
/* Threads per block of the vadd launch, as a GPU program would choose. */
#define BENCH_VADD_BLOCK 256u

/* What the command line asked for. */
struct bench_options {
    bool quick;
    bool json;
    const char *svg_path;    /* NULL: no plot */
    const char *bundle_path; /* NULL: look beside the tool */
    bool cases[BENCH_CASE_COUNT];
    const char *impls;    /* comma-separated names; NULL: all */
    const char *programs; /* of the hecbench case, likewise */
};

/* What every implementation may look at: the selected device and the run. */
struct bench_env {
    const struct bench_options *options;
    struct bench_report *report;
    accel_host *host;        /* opened by the driver */
    accel_device *device;    /* the selected device */
    accel_device_info info;  /* its description */
    const char *plugin_path; /* the file of its plugin; owned by the host */
    const char *self_path;   /* this executable, for the child processes */
    const char *bundle_path; /* the example kernels; NULL when not found */
    /* The device's memory is the host's: the baselines pick a CPU peer. */
    bool device_is_cpu;
    uint32_t cpus;
    uint64_t max_copy_bytes;  /* the largest transfer of the copy cases */
    uint32_t stream_launches; /* launches per sync in launch_stream */
    bool progress_tty; /* stderr is a terminal: rewrite one progress line */
    /* The workload cases' host data, made on first use (workloads.h). */
    struct bench_workloads *workloads;
    /* The real-code suite's host data, likewise (hecbench_case.h). */
    struct bench_hecbench *hecbench;
};

/* One point of a case: what to measure. */
struct bench_point {
    enum bench_case_id case_id;
    const char *variant; /* "pageable", "pinned", or "" */
    uint64_t bytes;      /* transfer or allocation size; 0 for none */
};

struct bench_collector;

/*
 * One implementation's measurement of one point, or of one round of it:
 * the driver measures a point in rounds, the implementations taking turns,
 * so that a drift in the machine's state touches them alike; the samples
 * of the rounds are pooled.
 */
struct bench_run {
    struct bench_env *env;
    const struct bench_point *point;
    struct bench_budget budget;        /* this round's */
    const char *impl;                  /* the implementation's name */
    struct bench_collector *collector; /* where emitted samples go */
};

/*
 * Record samples of nanoseconds per operation, as one result of this
 * implementation at this point (pooled with other rounds' samples of the
 * same variant and detail). `variant` NULL means the point's. False when
 * out of memory.
 */
bool bench_emit_time(struct bench_run *run, const char *variant,
                     const char *detail, const struct bench_samples *ns);
/* The same, as bandwidth: `bytes` moved by each timed operation. */
bool bench_emit_bandwidth(struct bench_run *run, const char *detail,
                          const struct bench_samples *ns, uint64_t bytes);
/*
 * Warm up, sample `step` with `context` within the run's budget, and record
 * the samples: as times, or as bandwidth of `bytes` per step when `bytes`
 * is not 0. False when a step failed (it has said why) or memory ran out.
 */
bool bench_measure(struct bench_run *run, bench_step_fn step, void *context,
                   const char *detail, uint64_t bytes);
/*
 * Note why the run failed ("opencl copy_h2d 4 KiB: clFinish:
 * CL_OUT_OF_RESOURCES") and return false.
 */
bool bench_fail(struct bench_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Measure a point; false when it failed (after bench_fail). */
typedef bool (*bench_measure_fn)(void *state, struct bench_run *run);

struct bench_impl {
    const char *name;
    /*
     * Get ready for the run. False when this implementation cannot run
     * here; it has noted why (no OpenCL platform, another plugin, ...).
     */
    bool (*open)(struct bench_env *env, void **out_state);
    void (*close)(void *state);
    /*
     * In a child process of the discovery case: get a device and a queue
     * ready for work from nothing, with the `arg` that this implementation's
     * discovery measurement passed. False on failure.
     */
    bool (*discover)(const char *arg);
    bench_measure_fn measure[BENCH_CASE_COUNT];
};

extern const struct bench_impl bench_impl_accel;
extern const struct bench_impl bench_impl_plugin;
extern const struct bench_impl bench_impl_c;
extern const struct bench_impl bench_impl_opencl; /* measures nothing when not built */
extern const struct bench_impl bench_impl_cuda_raw;
extern const struct bench_impl bench_impl_comm; /* allreduce: accel_allreduce */
extern const struct bench_impl bench_impl_mpi;  /* allreduce: MPI directly */
extern const struct bench_impl bench_impl_openmp; /* hecbench: the programs' own */

/* ---- the driver (driver.c) ---- */

/*
 * Measure every selected case with every wanted implementation, point by
 * point, into env->report. False when one of accel's measurements failed
 * (the notes say why); a baseline that fails is only noted.
 */
bool bench_run_all(struct bench_env *env);
/* The largest transfer the copy cases make. */
uint64_t bench_max_copy_bytes(bool quick);
/* Whether `name` is in the comma-separated list (NULL: every name is). */
bool bench_list_has(const char *list, const char *name);
/*
 * True when every name of the comma-separated list is one of `names`
 * (NULL-ended); else the first that is not, and its length.
 */
bool bench_list_known(const char *list, const char *const *names,
                      const char **out_bad, size_t *out_length);
/* True when every name of the comma-separated list is an implementation's. */
bool bench_impl_names_valid(const char *list, const char **out_bad,
                            size_t *out_length);

/*
 * The discovery case for an implementation whose children run `child`
 * (an implementation's name) with `arg`: child processes started from
 * this executable, each alternating with an empty one, reported as
 * "gross" (start to ready) and "net" (minus the empty process beside it).
 * With `child` NULL only the empty process runs, reported as "gross".
 */
bool bench_discovery_measure(struct bench_run *run, const char *child,
                             const char *arg, const char *detail);
/* The same, reported as "gross-LABEL" and "net-LABEL" (LABEL NULL: as above). */
bool bench_discovery_measure_as(struct bench_run *run, const char *child,
                                const char *arg, const char *label,
                                const char *detail);
/* The child side: run `impl`'s discover, write the time it was ready to fd. */
int bench_discovery_child(const char *impl, const char *arg, int report_fd);

/*
 * Tell the CPU that this is a spin-wait loop, as the null plugin's own
 * waits do, so that the floor and the measured spin alike.
 */
static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Buffers that the copy cases move: zeroed and touched, page-aligned. */
void *bench_alloc_touched(uint64_t bytes);

#endif /* ACCEL_BENCH_BENCH_H */
