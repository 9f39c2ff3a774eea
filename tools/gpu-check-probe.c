/*
 * gpu-check-probe: the checks of tools/gpu-check.sh that need a program of
 * their own, each a subcommand over the public API. The script builds it
 * with the compiler it builds everything else with, and runs it on the
 * real device, or, in a rehearsal, on the fake driver with the knobs that
 * stand in for what only a GPU does (a kernel that faults, slow work, a
 * kernel's launch bounds).
 *
 * usage: gpu-check-probe PLUGIN CHECK ARGS...
 *
 *   fault-recovery TESTING_MODULE   a kernel faults (add_u32 through a bad
 *                                   address; GPU_CHECK_SIMULATED_FAULT=1: a
 *                                   good one, and the fake faults it): the
 *                                   device is lost, the reset either
 *                                   rebuilds it (a second workload is then
 *                                   verified) or is ACCEL_ERR_UNRECOVERABLE
 *                                   with the driver's reason
 *   wait-cpu TESTING_MODULE N       about 200 ms of add_u32 launches over N
 *                                   words: blocking stream and event waits
 *                                   take under 10 % of a core
 *   two-hosts                       two hosts on device 0: one resets, the
 *                                   other's next call is DEVICE_LOST and
 *                                   the first's data is intact; the
 *                                   second's reset recovers it
 *   contention TESTING_MODULE JIT_MODULE
 *                                   three threads allocate, copy, free and
 *                                   launch for 3 s while a fourth loads
 *                                   JIT_MODULE (PTX) again and again: no
 *                                   call of the three takes over 250 ms
 *                                   (GPU_CHECK_STALL_BOUND_MS: another bound)
 *   testing-kernels TESTING_MODULE  kernels/testing.cu's kernels compute
 *                                   what their comments say, dynamic
 *                                   shared memory above 48 KiB included
 *   launch-bounds MODULE KERNEL BOUND
 *                                   KERNEL (saxpy's parameters) is bounded
 *                                   to BOUND threads, below the device's
 *                                   limit: 2 x BOUND is ACCEL_ERR_LAUNCH
 *                                   with the reason, BOUND computes
 *
 * Each prints what it saw and exits 0 when the check passed.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

static const char *plugin_name;

#define CHECK(call)                                                            \
    do {                                                                       \
        accel_status check_status_ = (call);                                   \
        if (check_status_ != ACCEL_OK) {                                       \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
                    accel_status_name(check_status_), accel_last_error());     \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define EXPECT(condition)                                                      \
    do {                                                                       \
        if (!(condition)) {                                                    \
            fprintf(stderr, "%s:%d: expected %s; last error: %s\n", __FILE__,  \
                    __LINE__, #condition, accel_last_error());                 \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static uint64_t now_ns(clockid_t clock)
{
    struct timespec now;

    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A host, device 0 of the plugin and a stream. */
struct probe {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
};

static void probe_open(struct probe *p)
{
    CHECK(accel_host_create(NULL, &p->host));
    CHECK(accel_device_open(p->host, plugin_name, 0, &p->device));
    CHECK(accel_stream_create(p->device, &p->stream));
}

static void probe_close(struct probe *p)
{
    accel_stream_destroy(p->stream);
    accel_device_close(p->device);
    accel_host_destroy(p->host);
}

static accel_kernel *kernel_of(accel_module *module, const char *name)
{
    accel_kernel *kernel = NULL;

    CHECK(accel_kernel_get(module, name, &kernel));
    return kernel;
}

/* data[i] += value over n words, in blocks of 256. */
static accel_status launch_add(accel_stream *stream, accel_kernel *add,
                               uint32_t n, accel_ref data, uint32_t value)
{
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                        ACCEL_ARG_VALUE(value)};

    return accel_launch(stream, add, (accel_dim3){(n + 255) / 256, 1, 1},
                        (accel_dim3){256, 1, 1}, 0, args, 3);
}

/* n words of `value`, on the device. */
static accel_ref filled(struct probe *p, uint32_t n, uint32_t value)
{
    uint32_t *words = malloc(n * sizeof(uint32_t));
    accel_ref ref;

    EXPECT(words != NULL);
    for (uint32_t i = 0; i < n; i++)
        words[i] = value;
    CHECK(accel_alloc(p->device, ACCEL_U32, n, &ref));
    CHECK(accel_copy_in(p->stream, ref, words, n));
    CHECK(accel_stream_sync(p->stream));
    free(words);
    return ref;
}

/* Every one of the n words of `ref` is `value`. */
static void expect_words(struct probe *p, accel_ref ref, uint32_t n,
                         uint32_t value)
{
    uint32_t *words = malloc(n * sizeof(uint32_t));

    EXPECT(words != NULL);
    CHECK(accel_copy_out(p->stream, words, ref, n));
    CHECK(accel_stream_sync(p->stream));
    for (uint32_t i = 0; i < n; i++) {
        if (words[i] != value) {
            fprintf(stderr, "word %u is %u, not %u\n", i, words[i], value);
            exit(1);
        }
    }
    free(words);
}

/* ---- fault-recovery ---- */

static int check_fault_recovery(int argc, char **argv)
{
    bool simulated = getenv("GPU_CHECK_SIMULATED_FAULT") != NULL;
    struct probe p = {0};
    accel_module *module = NULL;
    accel_kernel *add;
    accel_status status;
    accel_ref ref;

    if (argc != 1)
        return 2;
    probe_open(&p);
    CHECK(accel_module_load_file(p.device, argv[0], &module));
    add = kernel_of(module, "add_u32");
    ref = filled(&p, 1024, 1);
    {
        /* A pointer the device never mapped: the driver only knows the parameter's size. */
        uint64_t bad = 0x10;
        uint32_t n = 1024, value = 1;
        accel_arg bad_args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(bad),
                                ACCEL_ARG_VALUE(value)};

        if (simulated)
            status = launch_add(p.stream, add, n, ref, value);
        else
            status = accel_launch(p.stream, add, (accel_dim3){4, 1, 1},
                                  (accel_dim3){256, 1, 1}, 0, bad_args, 3);
    }
    printf("faulting launch: %s\n", accel_status_name(status));
    status = accel_stream_sync(p.stream);
    printf("sync after the fault: %s (%s)\n", accel_status_name(status),
           accel_last_error());
    EXPECT(status == ACCEL_ERR_DEVICE_LOST);
    EXPECT(accel_device_status(p.device) == ACCEL_ERR_DEVICE_LOST);
    status = accel_device_reset(p.device);
    printf("reset: %s (%s)\n", accel_status_name(status),
           status == ACCEL_OK ? "" : accel_last_error());
    if (status == ACCEL_ERR_UNRECOVERABLE) {
        /* Documented: the driver refused, and says why; the next step's process starts clean. */
        EXPECT(strstr(accel_last_error(), "cannot recover") != NULL);
        probe_close(&p);
        return 0;
    }
    EXPECT(status == ACCEL_OK);
    EXPECT(accel_device_status(p.device) == ACCEL_OK);
    ref = filled(&p, 1 << 16, 40);
    CHECK(launch_add(p.stream, add, 1 << 16, ref, 2));
    expect_words(&p, ref, 1 << 16, 42);
    printf("second workload after the reset: verified\n");
    accel_module_unload(module);
    probe_close(&p);
    return 0;
}

/* ---- wait-cpu ---- */

/* Enqueue `count` launches adding 1 over n words. */
static void enqueue_adds(struct probe *p, accel_kernel *add, uint32_t n,
                         accel_ref ref, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        CHECK(launch_add(p->stream, add, n, ref, 1));
}

/* How many launches take about 200 ms, from the time of a few. */
static uint32_t launches_for_200ms(struct probe *p, accel_kernel *add,
                                   uint32_t n, accel_ref ref)
{
    uint64_t began = now_ns(CLOCK_MONOTONIC), each;

    enqueue_adds(p, add, n, ref, 4);
    CHECK(accel_stream_wait(p->stream, ACCEL_WAIT_BLOCK, ACCEL_WAIT_FOREVER));
    each = (now_ns(CLOCK_MONOTONIC) - began) / 4 + 1;
    return (uint32_t)(200000000u / each < 4        ? 4
                      : 200000000u / each > 200000 ? 200000
                                                   : 200000000u / each);
}

/* One blocking wait's share of a core, in percent; `wait` is 0 for the stream, 1 for an event. */
static uint64_t blocking_wait_share(struct probe *p, accel_event *event, int wait)
{
    uint64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID),
             wall = now_ns(CLOCK_MONOTONIC);

    if (wait == 0) {
        CHECK(accel_stream_wait(p->stream, ACCEL_WAIT_BLOCK, ACCEL_WAIT_FOREVER));
    } else {
        CHECK(accel_event_record(event, p->stream));
        CHECK(accel_event_wait(event, ACCEL_WAIT_BLOCK, ACCEL_WAIT_FOREVER));
    }
    cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    wall = now_ns(CLOCK_MONOTONIC) - wall;
    printf("%s wait: %.1f ms of wall time, %.1f ms of CPU time\n",
           wait == 0 ? "stream" : "event", (double)wall / 1e6, (double)cpu / 1e6);
    return cpu * 100u / (wall + 1);
}

static int check_wait_cpu(int argc, char **argv)
{
    struct probe p = {0};
    accel_module *module = NULL;
    accel_event *event = NULL;
    uint32_t n, count;
    accel_kernel *add;
    accel_ref ref;

    if (argc != 2)
        return 2;
    n = (uint32_t)strtoul(argv[1], NULL, 10);
    probe_open(&p);
    CHECK(accel_module_load_file(p.device, argv[0], &module));
    CHECK(accel_event_create(p.device, &event));
    add = kernel_of(module, "add_u32");
    ref = filled(&p, n, 0);
    count = launches_for_200ms(&p, add, n, ref);
    printf("%u launches over %u words make about 200 ms\n", count, n);
    for (int wait = 0; wait < 2; wait++) {
        uint64_t share;

        enqueue_adds(&p, add, n, ref, count);
        share = blocking_wait_share(&p, event, wait);
        printf("  %" PRIu64 " %% of a core (bound: 10 %%)\n", share);
        EXPECT(share < 10);
    }
    accel_event_destroy(event);
    accel_module_unload(module);
    probe_close(&p);
    return 0;
}

/* ---- two-hosts ---- */

static int check_two_hosts(int argc, char **argv)
{
    struct probe first = {0}, second = {0};
    accel_ref mine, theirs;
    accel_status status;
    uint32_t words[256];

    (void)argv;
    if (argc != 0)
        return 2;
    probe_open(&first);
    probe_open(&second);
    theirs = filled(&second, 256, 7);
    CHECK(accel_device_reset(first.device));
    mine = filled(&first, 256, 9);
    for (int i = 0; i < 256; i++)
        words[i] = 0xdeadu;
    status = accel_copy_in(second.stream, theirs, words, 256);
    printf("the other host's copy after the reset: %s (%s)\n",
           accel_status_name(status), accel_last_error());
    EXPECT(status == ACCEL_ERR_DEVICE_LOST);
    EXPECT(accel_device_status(second.device) == ACCEL_ERR_DEVICE_LOST);
    expect_words(&first, mine, 256, 9);
    printf("the resetting host's data: intact\n");
    CHECK(accel_device_reset(second.device));
    theirs = filled(&second, 256, 5);
    expect_words(&second, theirs, 256, 5);
    expect_words(&first, mine, 256, 9);
    printf("after the other host's own reset: both work\n");
    probe_close(&second);
    probe_close(&first);
    return 0;
}

/* ---- contention ---- */

#define CONTENTION_NS 3000000000ull
/* The stated bound: 250 ms, or GPU_CHECK_STALL_BOUND_MS (a rehearsal on a loaded machine). */
#define STALL_BOUND_MS 250u

static uint64_t stall_bound_ns(void)
{
    const char *text = getenv("GPU_CHECK_STALL_BOUND_MS");
    unsigned long ms = text != NULL ? strtoul(text, NULL, 10) : 0;

    return (uint64_t)(ms != 0 ? ms : STALL_BOUND_MS) * 1000000u;
}

struct worker {
    accel_device *device;
    accel_kernel *add;
    const char *jit_path;
    uint64_t until;
    uint64_t worst_ns;
    uint64_t rounds;
    accel_status failed;
};

/* Time one call into *worst. */
#define TIMED(worker, call)                                                    \
    do {                                                                       \
        uint64_t began_ = now_ns(CLOCK_MONOTONIC);                             \
        accel_status timed_ = (call);                                          \
        uint64_t took_ = now_ns(CLOCK_MONOTONIC) - began_;                     \
        if (took_ > (worker)->worst_ns)                                        \
            (worker)->worst_ns = took_;                                        \
        if (timed_ != ACCEL_OK && (worker)->failed == ACCEL_OK)                \
            (worker)->failed = timed_;                                         \
    } while (0)

static void *contention_worker(void *arg)
{
    struct worker *w = arg;
    uint32_t words[1024] = {0};
    accel_stream *stream = NULL;

    if (accel_stream_create(w->device, &stream) != ACCEL_OK) {
        w->failed = ACCEL_ERR_DRIVER;
        return NULL;
    }
    while (now_ns(CLOCK_MONOTONIC) < w->until && w->failed == ACCEL_OK) {
        accel_ref ref = {0};

        TIMED(w, accel_alloc(w->device, ACCEL_U32, 1024, &ref));
        if (w->failed != ACCEL_OK)
            break;
        TIMED(w, accel_copy_in(stream, ref, words, 1024));
        TIMED(w, launch_add(stream, w->add, 1024, ref, 1));
        TIMED(w, accel_free(w->device, ref));
        w->rounds++;
    }
    TIMED(w, accel_stream_sync(stream));
    accel_stream_destroy(stream);
    return NULL;
}

static void *contention_compiler(void *arg)
{
    struct worker *w = arg;

    while (now_ns(CLOCK_MONOTONIC) < w->until && w->failed == ACCEL_OK) {
        accel_module *module = NULL;

        w->failed = accel_module_load_file(w->device, w->jit_path, &module);
        accel_module_unload(module);
        w->rounds++;
    }
    return NULL;
}

static int check_contention(int argc, char **argv)
{
    struct worker workers[4];
    pthread_t threads[4];
    struct probe p = {0};
    accel_module *module = NULL;
    uint64_t worst = 0;

    if (argc != 2)
        return 2;
    probe_open(&p);
    CHECK(accel_module_load_file(p.device, argv[0], &module));
    for (int i = 0; i < 4; i++) {
        workers[i] = (struct worker){
            p.device, kernel_of(module, "add_u32"),
            argv[1],  now_ns(CLOCK_MONOTONIC) + CONTENTION_NS,
            0,        0,
            ACCEL_OK};
        EXPECT(pthread_create(&threads[i], NULL,
                              i == 3 ? contention_compiler : contention_worker,
                              &workers[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        EXPECT(pthread_join(threads[i], NULL) == 0);
        printf("%s %d: %" PRIu64 " rounds, longest call %.1f ms, %s\n",
               i == 3 ? "compiler" : "worker", i, workers[i].rounds,
               (double)workers[i].worst_ns / 1e6,
               accel_status_name(workers[i].failed));
        EXPECT(workers[i].failed == ACCEL_OK);
        if (i != 3 && workers[i].worst_ns > worst)
            worst = workers[i].worst_ns;
    }
    printf("longest stall of a worker: %.1f ms (bound: %.0f ms)\n",
           (double)worst / 1e6, (double)stall_bound_ns() / 1e6);
    EXPECT(worst <= stall_bound_ns());
    accel_module_unload(module);
    probe_close(&p);
    return 0;
}

/* ---- testing-kernels ---- */

static void check_mark_index(struct probe *p, accel_module *module)
{
    uint32_t nx = 100, ny = 30, nz = 1, n = 3000;
    accel_ref index = filled(p, n, 0), hits = filled(p, n, 0);
    accel_arg args[] = {ACCEL_ARG_REF(index), ACCEL_ARG_REF(hits),
                        ACCEL_ARG_VALUE(nx), ACCEL_ARG_VALUE(ny),
                        ACCEL_ARG_VALUE(nz)};
    uint32_t *out = malloc(n * sizeof(uint32_t));

    EXPECT(out != NULL);
    CHECK(accel_launch(p->stream, kernel_of(module, "mark_index"),
                       (accel_dim3){7, 2, 1}, (accel_dim3){16, 16, 1}, 0, args,
                       5));
    CHECK(accel_copy_out(p->stream, out, index, n));
    CHECK(accel_stream_sync(p->stream));
    for (uint32_t i = 0; i < n; i++)
        EXPECT(out[i] == i + 1);
    expect_words(p, hits, n, 1);
    free(out);
    printf("mark_index over a 2D grid: every index once\n");
}

static void check_sixteen_args(struct probe *p, accel_module *module)
{
    uint32_t v[15];
    uint64_t expected = 0, got = 0;
    accel_ref out;
    accel_arg args[16];

    CHECK(accel_alloc(p->device, ACCEL_U64, 1, &out));
    args[0] = ACCEL_ARG_REF(out);
    for (int i = 0; i < 15; i++) {
        v[i] = (uint32_t)(1000 + i * 7);
        expected += (uint64_t)v[i] * (uint64_t)(i + 1);
        args[i + 1] = ACCEL_ARG_VALUE(v[i]);
    }
    CHECK(accel_launch(p->stream, kernel_of(module, "sixteen_args"),
                       (accel_dim3){1, 1, 1}, (accel_dim3){1, 1, 1}, 0, args, 16));
    CHECK(accel_copy_out(p->stream, &got, out, 1));
    CHECK(accel_stream_sync(p->stream));
    EXPECT(got == expected);
    printf("sixteen_args: every argument arrived\n");
}

/* shared_scratch with `words` per thread in blocks of 256: 1 KiB of shared memory per word. */
static void check_shared_scratch(struct probe *p, accel_module *module,
                                 uint32_t words)
{
    uint32_t n = 1024, threads = 256, shared = threads * words * 4;
    accel_ref out = filled(p, n, 0);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(words),
                        ACCEL_ARG_REF(out)};
    uint32_t *got = malloc(n * sizeof(uint32_t));

    EXPECT(got != NULL);
    CHECK(accel_launch(p->stream, kernel_of(module, "shared_scratch"),
                       (accel_dim3){n / threads, 1, 1},
                       (accel_dim3){threads, 1, 1}, shared, args, 3));
    CHECK(accel_copy_out(p->stream, got, out, n));
    CHECK(accel_stream_sync(p->stream));
    for (uint32_t i = 0; i < n; i++)
        EXPECT(got[i] == i * words + words * (words - 1) / 2);
    free(got);
    printf("shared_scratch with %u KiB of dynamic shared memory per block: "
           "right\n",
           shared / 1024);
}

static int check_testing_kernels(int argc, char **argv)
{
    accel_module *module = NULL;
    struct probe p = {0};
    accel_ref data;

    if (argc != 1)
        return 2;
    probe_open(&p);
    CHECK(accel_module_load_file(p.device, argv[0], &module));
    data = filled(&p, 1 << 16, 0);
    for (uint32_t value = 1; value <= 3; value++)
        CHECK(launch_add(p.stream, kernel_of(module, "add_u32"), 1 << 16, data,
                         value));
    expect_words(&p, data, 1 << 16, 6);
    printf("add_u32 three times in order: right\n");
    check_mark_index(&p, module);
    check_sixteen_args(&p, module);
    check_shared_scratch(&p, module, 32); /* 32 KiB: no opt-in */
    check_shared_scratch(&p, module, 64); /* 64 KiB: opted in */
    accel_module_unload(module);
    probe_close(&p);
    return 0;
}

/* ---- launch-bounds ---- */

/* saxpy's parameters over n elements in blocks of `threads`. */
static accel_status launch_saxpy(struct probe *p, accel_kernel *kernel,
                                 uint32_t threads, uint32_t n, accel_ref x,
                                 accel_ref y)
{
    float a = 2.0f;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};

    return accel_launch(p->stream, kernel, (accel_dim3){n / threads, 1, 1},
                        (accel_dim3){threads, 1, 1}, 0, args, 4);
}

static int check_launch_bounds(int argc, char **argv)
{
    accel_module *module = NULL;
    accel_device_info info;
    struct probe p = {0};
    uint32_t bound, n = 4096;
    float xs[4096], ys[4096];
    accel_kernel *kernel;
    accel_status status;
    accel_ref x, y;

    if (argc != 3)
        return 2;
    bound = (uint32_t)strtoul(argv[2], NULL, 10);
    probe_open(&p);
    CHECK(accel_device_info_get(p.device, &info));
    EXPECT(bound * 2 <= info.props.max_threads_per_block);
    CHECK(accel_module_load_file(p.device, argv[0], &module));
    kernel = kernel_of(module, argv[1]);
    for (uint32_t i = 0; i < n; i++) {
        xs[i] = (float)i;
        ys[i] = 1.0f;
    }
    CHECK(accel_alloc(p.device, ACCEL_F32, n, &x));
    CHECK(accel_alloc(p.device, ACCEL_F32, n, &y));
    CHECK(accel_copy_in(p.stream, x, xs, n));
    CHECK(accel_copy_in(p.stream, y, ys, n));
    status = launch_saxpy(&p, kernel, bound * 2, n, x, y);
    printf("%u threads, past the kernel's bound of %u (the device takes %u): "
           "%s (%s)\n",
           bound * 2, bound, info.props.max_threads_per_block,
           accel_status_name(status), accel_last_error());
    EXPECT(status == ACCEL_ERR_LAUNCH &&
           strstr(accel_last_error(), "at most") != NULL);
    EXPECT(accel_device_status(p.device) == ACCEL_OK);
    CHECK(launch_saxpy(&p, kernel, bound, n, x, y));
    CHECK(accel_copy_out(p.stream, ys, y, n));
    CHECK(accel_stream_sync(p.stream));
    for (uint32_t i = 0; i < n; i++)
        EXPECT(ys[i] == 2.0f * (float)i + 1.0f);
    printf("%u threads: computed\n", bound);
    accel_module_unload(module);
    probe_close(&p);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } checks[] = {
        {"fault-recovery", check_fault_recovery},
        {"wait-cpu", check_wait_cpu},
        {"two-hosts", check_two_hosts},
        {"contention", check_contention},
        {"testing-kernels", check_testing_kernels},
        {"launch-bounds", check_launch_bounds},
    };

    if (argc >= 3) {
        plugin_name = argv[1];
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
            if (strcmp(argv[2], checks[i].name) == 0) {
                int result = checks[i].run(argc - 3, argv + 3);

                if (result == 2)
                    fprintf(stderr, "gpu-check-probe: wrong arguments for %s\n",
                            argv[2]);
                return result;
            }
        }
    }
    fprintf(stderr,
            "usage: gpu-check-probe PLUGIN CHECK ARGS... (see its source)\n");
    return 2;
}
