#include "null_block.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "null_check.h"
#include "null_fiber.h"
#include "null_os.h"
#include "null_worker.h"

static void null_rt_sync_threads(void *state, uint32_t thread);
static uint64_t null_rt_warp_op(void *state, uint32_t thread, uint32_t op,
                                uint64_t mask, uint64_t value, uint32_t arg);

static const struct accel_cpu_runtime null_runtime = {
    .sync_threads = null_rt_sync_threads,
    .warp_op = null_rt_warp_op,
};

static void null_race_sync_threads(void *state, uint32_t thread);
static uint64_t null_race_warp_op(void *state, uint32_t thread, uint32_t op,
                                  uint64_t mask, uint64_t value, uint32_t arg);

/* The race check's: the same, telling libaccel-race who runs on return. */
static const struct accel_cpu_runtime null_race_runtime = {
    .sync_threads = null_race_sync_threads,
    .warp_op = null_race_warp_op,
};

/* ---- failing a launch ---- */

/* The kernel's name, from its descriptor's symbol. */
const char *accel__null_kernel_name(const struct accel_cpu_kernel *kernel)
{
    Dl_info info;
    size_t prefix = sizeof(ACCEL_CPU_KERNEL_PREFIX) - 1;

    if (dladdr(kernel, &info) == 0 || info.dli_sname == NULL)
        return "?";
    if (strncmp(info.dli_sname, ACCEL_CPU_KERNEL_PREFIX, prefix) == 0)
        return info.dli_sname + prefix;
    return info.dli_sname;
}

static void null_blocks_fail_v(struct null_blocks *blocks, accel_status status,
                               const char *format, va_list ap)
{
    if (atomic_exchange(&blocks->failed, true))
        return; /* only the first failure is told */
    blocks->status = status;
    vsnprintf(blocks->detail, sizeof(blocks->detail), format, ap);
}

void accel__null_blocks_fail(struct null_blocks *blocks, accel_status status,
                             const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    null_blocks_fail_v(blocks, status, format, ap);
    va_end(ap);
}

/* Each host thread's worker (null_worker_get). */
static pthread_once_t null_worker_once = PTHREAD_ONCE_INIT;
static pthread_key_t null_worker_key;
static bool null_worker_key_made;

/* ---- stack overflow ---- */

/*
 * A thread that overflows its fiber stack faults on the guard page below
 * it. The plugin's SIGSEGV handler, run on an alternate signal stack,
 * recognises the guard page of one of the faulting host thread's fibers,
 * says which kernel, block and thread overflowed and how to give it more,
 * and aborts the process. It does not turn the fault into a launch error:
 * the kernel stopped at an arbitrary instruction, perhaps holding a lock
 * or halfway through a write, and nothing that follows could be trusted.
 * Any other fault goes to the handler installed before, as if the plugin's
 * were not there.
 */
#define NULL_ALTSTACK_BYTES (64u * 1024u)

static pthread_once_t null_segv_once = PTHREAD_ONCE_INIT;
static struct sigaction null_segv_previous;
static bool null_segv_installed;

static void null_worker_overflowed(struct null_worker *w, uint32_t fiber)
{
    char message[512], who[48];
    int length;

    if (fiber == 0 && w->straight)
        snprintf(who, sizeof(who), "a thread after (0,0,0)");
    else
        accel__null_thread_name(w, fiber, who, sizeof(who));
    length = snprintf(
        message, sizeof(message),
        "accel null plugin: kernel '%s' block (%u,%u,%u) %s overflowed its "
        "%zu-byte fiber stack (the guard page below it was hit); set "
        "ACCEL_NULL_STACK_KB to give each kernel thread more. Aborting.\n",
        accel__null_kernel_name(w->blocks->kernel), w->block.block_idx[0],
        w->block.block_idx[1], w->block.block_idx[2], who, w->stack_bytes);
    if (length > 0 &&
        write(2, message,
              (size_t)length < sizeof(message) ? (size_t)length
                                               : sizeof(message) - 1) < 0)
        length = 0; /* nothing more can be done to tell */
    abort();
}

static void null_segv_handler(int sig, siginfo_t *info, void *context)
{
    struct null_worker *w = pthread_getspecific(null_worker_key);

    for (uint32_t i = 0; w != NULL && i < NULL_BLOCK_THREADS_MAX; i++) {
        if (accel__null_fiber_guard_hit(&w->fiber[i], info->si_addr))
            null_worker_overflowed(w, i);
    }
    if (null_segv_previous.sa_flags & SA_SIGINFO) {
        null_segv_previous.sa_sigaction(sig, info, context);
    } else if (null_segv_previous.sa_handler != SIG_DFL &&
               null_segv_previous.sa_handler != SIG_IGN) {
        null_segv_previous.sa_handler(sig);
    } else {
        /* Returning repeats the fault, which now takes the default action. */
        signal(SIGSEGV, SIG_DFL);
    }
}

static void null_segv_install(void)
{
    struct sigaction action;

    memset(&action, 0, sizeof(action));
    action.sa_sigaction = null_segv_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    null_segv_installed = sigaction(SIGSEGV, &action, &null_segv_previous) == 0;
}

/* At unload: the handler's code is about to go. */
static void null_segv_uninstall(void)
{
    struct sigaction current;

    if (null_segv_installed && sigaction(SIGSEGV, NULL, &current) == 0 &&
        current.sa_sigaction == null_segv_handler)
        sigaction(SIGSEGV, &null_segv_previous, NULL);
}

/*
 * Let this host thread take the fault: the plugin's threads start with
 * every signal blocked, and a handler needs a stack other than the one
 * that overflowed.
 */
static void null_worker_catch_faults(struct null_worker *w)
{
    stack_t current, mine;
    sigset_t faults;

    pthread_once(&null_segv_once, null_segv_install);
    sigemptyset(&faults);
    sigaddset(&faults, SIGSEGV);
    pthread_sigmask(SIG_UNBLOCK, &faults, NULL);
    if (sigaltstack(NULL, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0)
        return; /* the thread has one already (the sanitizers give one) */
    w->altstack = mmap(NULL, NULL_ALTSTACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w->altstack == MAP_FAILED) {
        w->altstack = NULL;
        return;
    }
    mine = (stack_t){.ss_sp = w->altstack, .ss_size = NULL_ALTSTACK_BYTES};
    if (sigaltstack(&mine, NULL) != 0) {
        munmap(w->altstack, NULL_ALTSTACK_BYTES);
        w->altstack = NULL;
    }
}

static void null_worker_release_faults(struct null_worker *w)
{
    stack_t off = {.ss_flags = SS_DISABLE};

    if (w->altstack == NULL)
        return;
    sigaltstack(&off, NULL);
    munmap(w->altstack, NULL_ALTSTACK_BYTES);
}

/* ---- the worker of each host thread ---- */

static void null_worker_drop_fibers(struct null_worker *w)
{
    for (uint32_t i = 0; i < NULL_BLOCK_THREADS_MAX; i++) {
        if (w->fiber[i].map != NULL)
            accel__null_check_unpoison(w->fiber[i].ctx.stack_lo,
                                       w->fiber[i].ctx.stack_bytes);
        accel__null_fiber_destroy(&w->fiber[i]);
    }
}

/* At the host thread's exit. */
static void null_worker_free(void *arg)
{
    struct null_worker *w = arg;

    null_worker_drop_fibers(w);
    null_worker_release_faults(w);
    accel__null_ctx_fini_native(&w->native);
    free(w);
}

static void null_worker_key_make(void)
{
    null_worker_key_made = pthread_key_create(&null_worker_key,
                                              null_worker_free) == 0;
}

/*
 * At the plugin's unload. Every thread that ran blocks was the plugin's
 * and has exited by then, so no destructor is left to run.
 */
__attribute__((destructor)) static void null_worker_key_drop(void)
{
    null_segv_uninstall();
    if (null_worker_key_made)
        pthread_key_delete(null_worker_key);
}

/* This host thread's worker, made on first use; NULL when out of memory. */
static struct null_worker *null_worker_get(void)
{
    struct null_worker *w;

    pthread_once(&null_worker_once, null_worker_key_make);
    if (!null_worker_key_made)
        return NULL;
    w = pthread_getspecific(null_worker_key);
    if (w != NULL)
        return w;
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    accel__null_ctx_init_native(&w->native);
    if (pthread_setspecific(null_worker_key, w) != 0) {
        free(w);
        return NULL;
    }
    null_worker_catch_faults(w);
    return w;
}

static struct null_worker *null_worker_of(struct null_fiber *fiber)
{
    return (struct null_worker *)(void *)((char *)fiber->home -
                                          offsetof(struct null_worker, native));
}

/* ---- the fibers' side ---- */

static void null_rt_wait(struct null_worker *w, uint32_t thread,
                         const char *what);

/*
 * Leave fiber `i`, which now waits or has returned, for the next thread of
 * this round that can run, or for the scheduler when none is left: one
 * switch per thread per round rather than two.
 */
static void null_pass_on(struct null_worker *w, uint32_t i)
{
    uint32_t next = i + 1;

    while (next < w->threads && w->thread[next].state != NULL_THREAD_RUNNABLE)
        next++;
    accel__null_switch(&w->fiber[i].ctx,
                       next < w->threads ? &w->fiber[next].ctx : &w->native);
}

/* Advance (x, y, z) to the next block, x fastest. */
void accel__null_block_next(struct accel_cpu_block *block)
{
    if (++block->block_idx[0] < block->grid_dim[0])
        return;
    block->block_idx[0] = 0;
    if (++block->block_idx[1] < block->grid_dim[1])
        return;
    block->block_idx[1] = 0;
    block->block_idx[2]++;
}

/* The race check: thread `rank` of the worker's block runs from here on. */
static void null_race_now(const struct null_worker *w, uint32_t rank)
{
    const struct accel_cpu_block *b = &w->block;
    uint64_t block = ((uint64_t)b->block_idx[2] * b->grid_dim[1] +
                      b->block_idx[1]) *
                         b->grid_dim[0] +
                     b->block_idx[0];

    accel__null_race_enter(w->blocks->launch_id, block, rank,
                           w->thread[rank].epoch);
}

/*
 * Checked mode: the rest of a block whose thread 0 returned alone, one
 * run_thread call each, so that a report can say which thread it was.
 */
static void null_run_rest_checked(struct null_worker *w)
{
    for (uint32_t i = 1; i < w->threads; i++) {
        w->check_thread = i;
        if (w->blocks->check >= NULL_CHECK_RACE)
            null_race_now(w, i);
        w->blocks->kernel->run_thread(&w->block, w->blocks->args, i);
    }
}

/* On fiber 0: run the worker's blocks, thread 0 of each first. */
static void null_run_blocks(struct null_worker *w)
{
    const struct accel_cpu_kernel *kernel = w->blocks->kernel;
    void *const *args = w->blocks->args;

    for (uint64_t n = 0; n < w->count; n++, accel__null_block_next(&w->block)) {
        w->fibers_on = false;
        w->straight = false;
        if (w->blocks->check >= NULL_CHECK_RACE) {
            for (uint32_t i = 0; i < w->threads; i++)
                w->thread[i].epoch = 0;
            null_race_now(w, 0);
        }
        kernel->run_thread(&w->block, args, 0);
        if (w->fibers_on) {
            /* The other threads run on; this fiber resumes once all return. */
            w->thread[0].state = NULL_THREAD_DONE;
            w->event = NULL_EVENT_WAIT;
            null_pass_on(w, 0);
        } else if (w->threads > 1) {
            w->straight = true;
            if (w->blocks->check)
                null_run_rest_checked(w);
            else
                kernel->run_block(&w->block, args);
        }
    }
}

static void null_fiber0_main(struct null_fiber *fiber)
{
    struct null_worker *w = null_worker_of(fiber);

    for (;;) {
        null_run_blocks(w);
        w->event = NULL_EVENT_RUN_DONE;
        accel__null_switch(&fiber->ctx, &w->native);
    }
}

/* Fiber i > 0: thread i of each block that runs as fibers. */
static void null_thread_main(struct null_fiber *fiber)
{
    struct null_worker *w = null_worker_of(fiber);
    uint32_t i = (uint32_t)(fiber - w->fiber);

    for (;;) {
        if (w->blocks->check >= NULL_CHECK_RACE)
            null_race_now(w, i);
        w->blocks->kernel->run_thread(&w->block, w->blocks->args, i);
        w->thread[i].state = NULL_THREAD_DONE;
        w->event = NULL_EVENT_WAIT;
        null_pass_on(w, i);
    }
}

/* Fail the launch from a fiber and leave it for good. */
static void null_rt_fault(struct null_worker *w, struct null_fiber *self)
{
    w->event = NULL_EVENT_FAULT;
    accel__null_switch(&self->ctx, &w->native);
    abort(); /* an abandoned fiber is reset, never resumed */
}

/*
 * Wait, as `thread`, for the scheduler: the thread's state says at what.
 * Thread 0 reaching its first wait turns the block into fibers; any other
 * thread reaching one in a straight block is an error, since thread 0
 * returned without it.
 */
static void null_rt_wait(struct null_worker *w, uint32_t thread, const char *what)
{
    if (w->fibers_on) {
        w->event = NULL_EVENT_WAIT;
        null_pass_on(w, thread);
        return;
    }
    if (thread != 0 || w->straight) {
        accel__null_block_fail_at(
            w, thread,
            "reached %s, which thread (0,0,0) returned without "
            "reaching (a barrier in divergent code?)",
            what);
        null_rt_fault(w, &w->fiber[0]);
    }
    w->fibers_on = true;
    w->event = NULL_EVENT_FIBERS;
    accel__null_switch(&w->fiber[0].ctx, &w->native);
}

static void null_rt_sync_threads(void *state, uint32_t thread)
{
    struct null_worker *w = state;

    w->thread[thread].state = NULL_THREAD_AT_BARRIER;
    null_rt_wait(w, thread, "accel_sync_threads()");
}

static uint64_t null_rt_warp_op(void *state, uint32_t thread, uint32_t op,
                                uint64_t mask, uint64_t value, uint32_t arg)
{
    struct null_worker *w = state;
    struct null_thread *t = &w->thread[thread];
    uint32_t lane = thread % NULL_WARP_LANES;

    if (op > ACCEL_CPU_WARP_ALL) {
        accel__null_block_fail_at(
            w, thread, "called warp operation %u, which is not one", op);
        null_rt_fault(w, &w->fiber[w->fibers_on ? thread : 0]);
    }
    if (((mask >> lane) & 1u) == 0) {
        accel__null_block_fail_at(
            w, thread,
            "called a warp operation whose mask 0x%llx leaves out "
            "its own lane %u",
            (unsigned long long)mask, lane);
        null_rt_fault(w, &w->fiber[w->fibers_on ? thread : 0]);
    }
    t->op = (uint8_t)op;
    t->mask = mask;
    t->value = value;
    t->arg = arg;
    t->state = NULL_THREAD_AT_WARP;
    null_rt_wait(w, thread, "a warp operation");
    return t->result;
}

/* The race check: a barrier orders the block's accesses before it and after. */
static void null_race_sync_threads(void *state, uint32_t thread)
{
    struct null_worker *w = state;

    null_rt_sync_threads(state, thread);
    w->thread[thread].epoch++;
    null_race_now(w, thread);
}

static uint64_t null_race_warp_op(void *state, uint32_t thread, uint32_t op,
                                  uint64_t mask, uint64_t value, uint32_t arg)
{
    uint64_t result = null_rt_warp_op(state, thread, op, mask, value, arg);

    null_race_now(state, thread);
    return result;
}

/* Give threads 1.. their fibers, ready to start. */
static bool null_block_fibers_ready(struct null_worker *w)
{
    for (uint32_t i = 1; i < w->threads; i++) {
        if (w->fiber[i].map == NULL &&
            !accel__null_fiber_create(&w->fiber[i], w->stack_bytes, &w->native,
                                      null_thread_main)) {
            accel__null_blocks_fail(
                w->blocks, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "launch: kernel '%s': mmap of a %zu-byte fiber stack for "
                "thread %u of a block failed: %s",
                accel__null_kernel_name(w->blocks->kernel), w->stack_bytes, i,
                null_errno_name(errno));
            return false;
        }
        w->thread[i].state = NULL_THREAD_RUNNABLE;
    }
    return true;
}

/* ---- running blocks ---- */

void accel__null_blocks_init(struct null_blocks *blocks,
                             const struct accel_cpu_kernel *kernel,
                             void *const *args,
                             const struct accel_launch_config *config,
                             size_t stack_bytes)
{
    blocks->kernel = kernel;
    blocks->args = args;
    blocks->config = *config;
    blocks->stack_bytes = stack_bytes;
    blocks->check = NULL_CHECK_OFF;
    blocks->launch_id = 0;
    atomic_init(&blocks->failed, false);
    blocks->status = ACCEL_OK;
    blocks->detail[0] = '\0';
}

static void null_block_begin(struct accel_cpu_block *block,
                             const struct null_blocks *blocks, uint64_t first,
                             void *shared)
{
    const struct accel_launch_config *config = &blocks->config;
    uint64_t rest = first / config->grid[0];

    *block = (struct accel_cpu_block){
        .grid_dim = {config->grid[0], config->grid[1], config->grid[2]},
        .block_dim = {config->block[0], config->block[1], config->block[2]},
        .block_idx = {(uint32_t)(first % config->grid[0]),
                      (uint32_t)(rest % config->grid[1]),
                      (uint32_t)(rest / config->grid[1])},
        .shared_bytes = config->shared_bytes,
        .shared = shared,
        .first_thread = 1,
        .runtime = &null_runtime,
    };
}

/* ABI 1 images have no barriers: their run_block runs the whole block. */
static void null_blocks_run_straight(const struct null_blocks *blocks,
                                     uint64_t first, uint64_t count, void *shared)
{
    struct accel_cpu_block block;

    null_block_begin(&block, blocks, first, shared);
    block.first_thread = 0;
    for (uint64_t n = 0; n < count; n++, accel__null_block_next(&block))
        blocks->kernel->run_block(&block, blocks->args);
}

/*
 * Blocks of one thread need no fiber: a barrier has nobody to wait for and
 * a warp operation has one lane. They run on the host thread's own stack,
 * as ABI 1 blocks do, with a runtime that answers at once.
 */
struct null_solo {
    struct null_blocks *blocks;
    struct accel_cpu_block block;
};

static void null_solo_sync_threads(void *state, uint32_t thread)
{
    (void)state;
    (void)thread;
}

static uint64_t null_solo_warp_op(void *state, uint32_t thread, uint32_t op,
                                  uint64_t mask, uint64_t value, uint32_t arg)
{
    struct null_solo *solo = state;

    (void)thread;
    (void)arg;
    if ((mask & 1u) == 0 || op > ACCEL_CPU_WARP_ALL)
        accel__null_blocks_fail(
            solo->blocks, ACCEL_ERR_LAUNCH,
            "launch: kernel '%s' block (%u,%u,%u) thread (0,0,0): called a "
            "warp operation (%u) whose mask 0x%llx leaves out its own lane 0",
            accel__null_kernel_name(solo->blocks->kernel),
            solo->block.block_idx[0], solo->block.block_idx[1],
            solo->block.block_idx[2], op, (unsigned long long)mask);
    switch (op) {
    case ACCEL_CPU_WARP_SYNC:
        return 0;
    case ACCEL_CPU_WARP_BALLOT:
    case ACCEL_CPU_WARP_ALL:
        return value != 0;
    default:
        return value; /* a shuffle from itself or from no lane */
    }
}

static const struct accel_cpu_runtime null_solo_runtime = {
    .sync_threads = null_solo_sync_threads,
    .warp_op = null_solo_warp_op,
};

static void null_blocks_run_solo(struct null_blocks *blocks, uint64_t first,
                                 uint64_t count, void *shared)
{
    struct null_solo solo = {.blocks = blocks};

    null_block_begin(&solo.block, blocks, first, shared);
    solo.block.first_thread = 0;
    solo.block.runtime = &null_solo_runtime;
    solo.block.runtime_state = &solo;
    for (uint64_t n = 0; n < count; n++, accel__null_block_next(&solo.block))
        blocks->kernel->run_block(&solo.block, blocks->args);
}

/* The worker, with fiber 0 made for this launch's stack size. */
static struct null_worker *null_worker_ready(struct null_blocks *blocks)
{
    struct null_worker *w = null_worker_get();

    if (w == NULL) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "launch: allocating a host thread's block state failed");
        return NULL;
    }
    if (w->stack_bytes != blocks->stack_bytes) {
        null_worker_drop_fibers(w);
        w->stack_bytes = blocks->stack_bytes;
    }
    if (w->fiber[0].map == NULL &&
        !accel__null_fiber_create(&w->fiber[0], w->stack_bytes, &w->native,
                                  null_fiber0_main)) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "launch: mmap of a %zu-byte fiber stack failed: %s", w->stack_bytes,
            null_errno_name(errno));
        return NULL;
    }
    return w;
}

/* Run the blocks on this host thread's worker: fibers when they wait. */
static bool null_blocks_run_worker(struct null_blocks *blocks, uint64_t first,
                                   uint64_t count, void *shared)
{
    struct null_worker *w = null_worker_ready(blocks);
    bool done = false;

    if (w == NULL)
        return false;
    w->blocks = blocks;
    w->first = first;
    w->count = count;
    w->threads = blocks->config.block[0] * blocks->config.block[1] *
                 blocks->config.block[2];
    null_block_begin(&w->block, blocks, first, shared);
    w->block.runtime_state = w;
    if (blocks->check >= NULL_CHECK_RACE)
        w->block.runtime = &null_race_runtime;
    w->running = true;
    for (;;) {
        accel__null_switch(&w->native, &w->fiber[0].ctx);
        if (w->event == NULL_EVENT_RUN_DONE) {
            done = true;
            break;
        }
        if (w->event == NULL_EVENT_FAULT || !null_block_fibers_ready(w) ||
            !accel__null_block_schedule(w))
            break;
    }
    w->running = false;
    if (blocks->check >= NULL_CHECK_RACE)
        accel__null_race_leave();
    if (!done)
        accel__null_block_abandon(w);
    return done;
}

/*
 * Checked mode: every block on the worker, blocks of one thread too, so
 * that a report finds where it is; the dynamic shared memory a heap block
 * of exactly shared_bytes, so that ASan's red zones bound it.
 */
static bool null_blocks_run_checked(struct null_blocks *blocks, uint64_t first,
                                    uint64_t count)
{
    void *shared = NULL;
    bool done;

    if (blocks->config.shared_bytes != 0 &&
        posix_memalign(&shared, 64, blocks->config.shared_bytes) != 0) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "launch: allocating %u bytes of shared memory failed",
            blocks->config.shared_bytes);
        return false;
    }
    done = null_blocks_run_worker(blocks, first, count, shared);
    free(shared);
    return done;
}

bool accel__null_blocks_run(struct null_blocks *blocks, uint64_t first,
                            uint64_t count, void *shared)
{
    if (atomic_load_explicit(&blocks->failed, memory_order_relaxed))
        return false;
    if (blocks->kernel->abi < 2) {
        null_blocks_run_straight(blocks, first, count, shared);
        return true;
    }
    if (blocks->check)
        return null_blocks_run_checked(blocks, first, count);
    if ((uint64_t)blocks->config.block[0] * blocks->config.block[1] *
            blocks->config.block[2] ==
        1) {
        null_blocks_run_solo(blocks, first, count, shared);
        return !atomic_load_explicit(&blocks->failed, memory_order_relaxed);
    }
    if (blocks->kernel->abi >= 3 && blocks->kernel->run_regions != NULL) {
        struct accel_cpu_block block;

        null_block_begin(&block, blocks, first, shared);
        block.first_thread = 0;
        return accel__null_blocks_run_regions(blocks, &block, count);
    }
    return null_blocks_run_worker(blocks, first, count, shared);
}

bool accel__null_block_where(struct null_where *out_where)
{
    struct null_worker *w;
    uintptr_t here = (uintptr_t)&w;
    uint32_t bx, by, rank = 0;

    memset(out_where, 0, sizeof(*out_where));
    if (!null_worker_key_made)
        return false;
    w = pthread_getspecific(null_worker_key);
    if (w == NULL || !w->running)
        return false;
    *out_where = (struct null_where){
        .kernel = w->blocks->kernel,
        .grid_dim = {w->block.grid_dim[0], w->block.grid_dim[1],
                     w->block.grid_dim[2]},
        .block_dim = {w->block.block_dim[0], w->block.block_dim[1],
                      w->block.block_dim[2]},
        .kernel_name = accel__null_kernel_name(w->blocks->kernel),
        .block = {w->block.block_idx[0], w->block.block_idx[1],
                  w->block.block_idx[2]},
        .args = w->blocks->args,
        .shared = w->block.shared,
        .shared_bytes = w->block.shared_bytes,
    };
    /* The report runs on the stack of the thread that made the access. */
    for (uint32_t i = 0; i < w->threads; i++) {
        uintptr_t lo = (uintptr_t)w->fiber[i].map;

        if (lo != 0 && here >= lo && here < lo + w->fiber[i].map_bytes) {
            rank = i == 0 && w->straight ? w->check_thread : i;
            out_where->thread_known = true;
            break;
        }
    }
    bx = w->block.block_dim[0];
    by = w->block.block_dim[1];
    out_where->thread[0] = rank % bx;
    out_where->thread[1] = rank / bx % by;
    out_where->thread[2] = rank / bx / by;
    return true;
}

bool accel__null_block_on_stack(uintptr_t address)
{
    struct null_worker *w;

    if (!null_worker_key_made ||
        (w = pthread_getspecific(null_worker_key)) == NULL)
        return false;
    for (uint32_t i = 0; i < NULL_BLOCK_THREADS_MAX; i++) {
        uintptr_t lo = (uintptr_t)w->fiber[i].map;

        if (lo != 0 && address >= lo && address < lo + w->fiber[i].map_bytes)
            return true;
    }
    return false;
}
