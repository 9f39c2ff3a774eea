/*
 * Plain C on the CPU: the floor each accel figure is set against. memcpy
 * for the copies, a loop on one thread and on every CPU for vadd (scalar,
 * and vectorised by the compiler), a call
 * through a function pointer for dispatch, malloc and free for alloc_free,
 * and a handoff to a spinning thread for the launches (the least a launch
 * on another thread can cost).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "c_vadd.h"
#include "workloads.h"

enum { DISPATCH_BATCH = 1000, ALLOC_BATCH = 100 };

struct c_state {
    struct bench_env *env;
    void *src, *dst;  /* max_copy_bytes each, made when first needed */
    float *a, *b, *c; /* vadd's vectors, made when first needed */
};

struct step {
    struct c_state *s;
    struct bench_run *run;
    uint64_t bytes;
    uint32_t threads;
    bench_vadd_fn vadd;
};

static bool c_open(struct bench_env *env, void **out_state)
{
    struct c_state *s = calloc(1, sizeof(*s));

    *out_state = s;
    if (s == NULL)
        return false;
    s->env = env;
    return true;
}

static void c_close(void *state)
{
    struct c_state *s = state;

    if (s == NULL)
        return;
    free(s->src);
    free(s->dst);
    free(s->a);
    free(s->b);
    free(s->c);
    free(s);
}

static bool measure_discovery(void *state, struct bench_run *run)
{
    (void)state;
    return bench_discovery_measure(
        run, NULL, NULL,
        "an empty process: posix_spawn, exec, dynamic "
        "linking");
}

/* ---- dispatch ---- */

__attribute__((noinline)) static int empty_function(void *arg)
{
    __asm__ __volatile__("" ::"r"(arg) : "memory");
    return 0;
}

/* volatile: the compiler must load and call it every time, as libaccel does. */
static int (*volatile empty_pointer)(void *) = empty_function;

static bool step_call(void *context, double *out_ns)
{
    uint64_t start = bench_now_ns();
    int sum = 0;

    for (int i = 0; i < DISPATCH_BATCH; i++)
        sum += empty_pointer(context);
    *out_ns = (double)(bench_now_ns() - start) / DISPATCH_BATCH;
    return sum == 0;
}

static bool measure_dispatch(void *state, struct bench_run *run)
{
    return bench_measure(run, step_call, state,
                         "an empty function called through a pointer", 0);
}

/* ---- launches: a handoff to a thread that spins ---- */

struct handoff {
    _Atomic uint64_t posted; /* items given to the worker */
    _Atomic uint64_t done;   /* items it has run */
    _Atomic bool stop;
    pthread_t thread;
    struct step *step;
    uint32_t batch; /* items per timed step */
};

/*
 * Spin, but give the CPU away now and then: on a machine with more runnable
 * threads than CPUs, a spinner that never yields can hold up the very
 * thread it waits for for a whole time slice.
 */
static void spin_once(uint32_t *spins)
{
    if (++*spins % 1024 == 0)
        sched_yield();
    else
        bench_cpu_relax();
}

static void *handoff_worker(void *arg)
{
    struct handoff *h = arg;
    uint64_t done = 0;
    uint32_t spins = 0;

    while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
        uint64_t posted = atomic_load_explicit(&h->posted, memory_order_acquire);

        if (posted == done) {
            spin_once(&spins);
            continue;
        }
        /* Each item "runs" the empty kernel, as a launch would. */
        for (; done < posted; done++)
            empty_pointer(NULL);
        atomic_store_explicit(&h->done, done, memory_order_release);
    }
    return NULL;
}

static bool step_handoff(void *context, double *out_ns)
{
    struct handoff *h = context;
    uint64_t start = bench_now_ns();
    uint64_t target = atomic_load_explicit(&h->posted, memory_order_relaxed) +
                      h->batch;
    uint32_t spins = 0;

    for (uint32_t i = 0; i < h->batch; i++)
        atomic_fetch_add_explicit(&h->posted, 1, memory_order_release);
    while (atomic_load_explicit(&h->done, memory_order_acquire) < target)
        spin_once(&spins);
    *out_ns = (double)(bench_now_ns() - start) / h->batch;
    return true;
}

/* The worker spins only while this measurement runs. */
static bool measure_handoff(struct bench_run *run, uint32_t batch,
                            const char *detail)
{
    struct handoff h = {.batch = batch};
    struct bench_samples ns = {0};
    bool ok;

    if (pthread_create(&h.thread, NULL, handoff_worker, &h) != 0)
        return bench_fail(run, "pthread_create failed");
    ok = bench_sample(&run->budget, step_handoff, &h, &ns);
    atomic_store(&h.stop, true);
    pthread_join(h.thread, NULL);
    ok = ok && bench_emit_time(run, NULL, detail, &ns);
    bench_samples_deinit(&ns);
    return ok;
}

static bool measure_launch_empty(void *state, struct bench_run *run)
{
    (void)state;
    return measure_handoff(run, 1,
                           "a call handed to a spinning thread and waited for "
                           "(the floor)");
}

static bool measure_launch_stream(void *state, struct bench_run *run)
{
    char detail[96];

    (void)state;
    snprintf(detail, sizeof(detail),
             "%u calls posted to a spinning thread, then waited for",
             run->env->stream_launches);
    return measure_handoff(run, run->env->stream_launches, detail);
}

/* ---- vadd ---- */

struct vadd_slice {
    bench_vadd_fn loop;
    const float *restrict a;
    const float *restrict b;
    float *restrict c;
    size_t from, to;
    pthread_t thread;
};

static void *vadd_thread(void *arg)
{
    struct vadd_slice *slice = arg;

    slice->loop(slice->a, slice->b, slice->c, slice->from, slice->to);
    return NULL;
}

/*
 * The vector cut into one slice per thread; the calling thread runs the
 * first. The other threads are started and joined inside each timed run,
 * as the labels say.
 */
static bool step_vadd(void *context, double *out_ns)
{
    struct step *st = context;
    struct c_state *s = st->s;
    struct vadd_slice slices[256];
    uint32_t threads = st->threads < 256 ? st->threads : 256;
    size_t per = (BENCH_VADD_COUNT + threads - 1) / threads;
    uint64_t start = bench_now_ns();
    uint32_t started = 1;
    bool ok = true;

    for (uint32_t t = 0; t < threads; t++) {
        size_t from = (size_t)t * per, to = from + per;

        slices[t] = (struct vadd_slice){
            .loop = st->vadd,
            .a = s->a,
            .b = s->b,
            .c = s->c,
            .from = from,
            .to = to < BENCH_VADD_COUNT ? to : BENCH_VADD_COUNT};
    }
    for (; started < threads; started++)
        if (pthread_create(&slices[started].thread, NULL, vadd_thread,
                           &slices[started]) != 0) {
            ok = bench_fail(st->run, "pthread_create failed");
            break;
        }
    vadd_thread(&slices[0]);
    for (uint32_t t = 1; t < started; t++)
        pthread_join(slices[t].thread, NULL);
    *out_ns = (double)(bench_now_ns() - start);
    return ok;
}

static bool vadd_prepare(struct c_state *s, struct bench_run *run)
{
    if (s->c != NULL)
        return true;
    s->a = bench_alloc_touched(BENCH_VADD_COUNT * sizeof(float));
    s->b = bench_alloc_touched(BENCH_VADD_COUNT * sizeof(float));
    /*
     * Page-aligned like the others (and like device memory): a malloc'd
     * vector sits 16 bytes into its page, so that its stores alias the
     * loads of a and b a few elements on (4K aliasing), which made this
     * loop 20 to 25 % slower than it can be.
     */
    s->c = bench_alloc_touched(BENCH_VADD_COUNT * sizeof(float));
    if (s->a == NULL || s->b == NULL || s->c == NULL)
        return bench_fail(run, "out of host memory");
    for (uint32_t i = 0; i < BENCH_VADD_COUNT; i++)
        s->a[i] = s->b[i] = (float)(i % 1024);
    return true;
}

static bool measure_vadd_threads(struct c_state *s, struct bench_run *run,
                                 bench_vadd_fn loop, uint32_t threads,
                                 const char *detail)
{
    struct step st = {.s = s, .run = run, .threads = threads, .vadd = loop};

    return bench_measure(run, step_vadd, &st, detail,
                         3ull * BENCH_VADD_COUNT * sizeof(float));
}

static bool measure_vadd(void *state, struct bench_run *run)
{
    uint32_t cpus = run->env->cpus;
    char detail[96], vector_detail[96];

    if (!vadd_prepare(state, run))
        return false;
    snprintf(detail, sizeof(detail),
             "a loop on %u threads started per run (pthreads, one slice each)",
             cpus);
    snprintf(vector_detail, sizeof(vector_detail),
             "the loop vectorised (gcc -O3) on %u threads started per run", cpus);
    return measure_vadd_threads(state, run, bench_vadd_scalar, 1,
                                "a loop on one thread") &&
           (cpus == 1 ||
            measure_vadd_threads(state, run, bench_vadd_scalar, cpus, detail)) &&
           measure_vadd_threads(state, run, bench_vadd_vector, cpus,
                                vector_detail);
}

/* ---- copies ---- */

static bool step_memcpy(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    memcpy(st->s->dst, st->s->src, st->bytes);
    *out_ns = (double)(bench_now_ns() - start);
    /* The copy must not be dropped as dead: its destination is read. */
    __asm__ __volatile__("" ::"r"(st->s->dst) : "memory");
    return true;
}

static bool measure_copy(void *state, struct bench_run *run)
{
    struct c_state *s = state;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};

    if (s->src == NULL) {
        s->src = bench_alloc_touched(run->env->max_copy_bytes);
        s->dst = bench_alloc_touched(run->env->max_copy_bytes);
        if (s->src == NULL || s->dst == NULL)
            return bench_fail(run, "out of host memory");
    }
    return bench_measure(run, step_memcpy, &st, "memcpy between malloc buffers",
                         st.bytes);
}

static bool step_memset(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    memset(st->s->dst, 1, st->bytes);
    /* Keep the stores: a buffer written and never read may be left alone. */
    __asm__ __volatile__("" : : "r"(st->s->dst) : "memory");
    *out_ns = (double)(bench_now_ns() - start);
    return true;
}

static bool measure_fill(void *state, struct bench_run *run)
{
    struct c_state *s = state;
    struct step st = {.s = s, .run = run, .bytes = run->point->bytes};

    if (s->dst == NULL) {
        s->src = bench_alloc_touched(run->env->max_copy_bytes);
        s->dst = bench_alloc_touched(run->env->max_copy_bytes);
        if (s->src == NULL || s->dst == NULL)
            return bench_fail(run, "out of host memory");
    }
    return bench_measure(run, step_memset, &st, "memset of a malloc buffer",
                         st.bytes);
}

/* ---- alloc_free ---- */

static bool step_malloc_free(void *context, double *out_ns)
{
    struct step *st = context;
    uint64_t start = bench_now_ns();

    for (int i = 0; i < ALLOC_BATCH; i++) {
        /* volatile: a malloc whose result is unused may be left out. */
        void *volatile p = malloc(st->bytes);

        if (p == NULL)
            return bench_fail(st->run, "malloc(%llu) failed",
                              (unsigned long long)st->bytes);
        free(p);
    }
    *out_ns = (double)(bench_now_ns() - start) / ALLOC_BATCH;
    return true;
}

static bool measure_alloc_free(void *state, struct bench_run *run)
{
    struct step st = {.s = state, .run = run, .bytes = run->point->bytes};

    return bench_measure(run, step_malloc_free, &st, "malloc, free", 0);
}

static bool measure_workload(void *state, struct bench_run *run)
{
    (void)state;
    return bench_c_workload_measure(run);
}

const struct bench_impl bench_impl_c = {
    .name = "c",
    .open = c_open,
    .close = c_close,
    .measure =
        {
            [BENCH_DISCOVERY] = measure_discovery,
            [BENCH_DISPATCH] = measure_dispatch,
            [BENCH_LAUNCH_EMPTY] = measure_launch_empty,
            [BENCH_LAUNCH_STREAM] = measure_launch_stream,
            [BENCH_VADD] = measure_vadd,
            [BENCH_COPY_H2D] = measure_copy,
            [BENCH_COPY_D2H] = measure_copy,
            [BENCH_COPY_D2D] = measure_copy,
            [BENCH_FILL] = measure_fill,
            [BENCH_ALLOC_FREE] = measure_alloc_free,
            [BENCH_MATVEC] = measure_workload,
            [BENCH_STENCIL_2D] = measure_workload,
            [BENCH_CONV3D] = measure_workload,
            [BENCH_HISTOGRAM] = measure_workload,
            [BENCH_GEMM_TILED] = measure_workload,
            [BENCH_REDUCE_SHARED] = measure_workload,
            [BENCH_SCAN_BLOCK] = measure_workload,
        },
};
