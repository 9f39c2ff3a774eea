/*
 * The scheduler of a block that runs as fibers (null_block.h): on the
 * host thread's own stack, it runs each runnable thread to its next wait,
 * then opens a barrier every thread waits at, answers a warp operation
 * every lane of its mask waits at, and fails the launch, naming a thread
 * that waits and one that keeps it waiting, when nothing can run.
 */
#include <stdarg.h>
#include <stdio.h>

#include "null_check.h"
#include "null_worker.h"

/* ---- failing a launch at a thread ---- */

/* "thread (x,y,z)" of the running block, into buf. */
const char *accel__null_thread_name(const struct null_worker *w, uint32_t rank,
                                    char *buf, size_t size)
{
    uint32_t bx = w->block.block_dim[0], by = w->block.block_dim[1];

    snprintf(buf, size, "thread (%u,%u,%u)", rank % bx, rank / bx % by,
             rank / bx / by);
    return buf;
}

/* Fail the launch at `rank` of the running block: "launch: kernel 'k' block (..) thread (..): why". */
void accel__null_block_fail_at(struct null_worker *w, uint32_t rank,
                               const char *format, ...)
{
    char why[160], who[48];
    va_list ap;

    va_start(ap, format);
    vsnprintf(why, sizeof(why), format, ap);
    va_end(ap);
    accel__null_blocks_fail(
        w->blocks, ACCEL_ERR_LAUNCH,
        "launch: kernel '%s' block (%u,%u,%u) %s: %s",
        accel__null_kernel_name(w->blocks->kernel), w->block.block_idx[0],
        w->block.block_idx[1], w->block.block_idx[2],
        accel__null_thread_name(w, rank, who, sizeof(who)), why);
}

/* ---- the scheduler ---- */

/* The lanes of warp `base` (its first thread) that the block has. */
static uint64_t null_warp_lanes(const struct null_worker *w, uint32_t base)
{
    uint32_t lanes = w->threads - base < NULL_WARP_LANES ? w->threads - base
                                                         : NULL_WARP_LANES;

    return lanes == 64 ? ~0ull : (1ull << lanes) - 1;
}

static uint64_t null_warp_result(const struct null_worker *w, uint32_t base,
                                 uint64_t group, uint32_t lane, uint64_t ballot,
                                 uint64_t all)
{
    const struct null_thread *t = &w->thread[base + lane];
    uint64_t src;

    switch (t->op) {
    case ACCEL_CPU_WARP_SHFL_IDX:
        src = t->arg % NULL_WARP_LANES;
        break;
    case ACCEL_CPU_WARP_SHFL_UP:
        src = t->arg <= lane ? lane - t->arg : 64;
        break;
    case ACCEL_CPU_WARP_SHFL_DOWN:
        src = (uint64_t)lane + t->arg;
        break;
    case ACCEL_CPU_WARP_SHFL_XOR:
        src = (lane ^ t->arg) % NULL_WARP_LANES;
        break;
    case ACCEL_CPU_WARP_BALLOT:
        return ballot;
    case ACCEL_CPU_WARP_ALL:
        return all;
    default:
        return 0; /* ACCEL_CPU_WARP_SYNC */
    }
    /* A lane out of range or not taking part: the caller's own value, as CUDA. */
    if (src >= NULL_WARP_LANES || ((group >> src) & 1u) == 0)
        return t->value;
    return w->thread[base + src].value;
}

/* Every lane of `group` in warp `base` waits at a warp operation: answer them. */
static void null_warp_answer(struct null_worker *w, uint32_t base, uint64_t group)
{
    uint64_t ballot = 0, all = 1;

    for (uint64_t g = group; g != 0; g &= g - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(g);

        if (w->thread[base + lane].value != 0)
            ballot |= 1ull << lane;
        else
            all = 0;
    }
    for (uint64_t g = group; g != 0; g &= g - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(g);

        w->thread[base + lane].result = null_warp_result(w, base, group, lane,
                                                         ballot, all);
    }
    for (uint64_t g = group; g != 0; g &= g - 1)
        w->thread[base + (uint32_t)__builtin_ctzll(g)].state = NULL_THREAD_RUNNABLE;
}

/* The lanes of warp `base` whose threads have returned. */
static uint64_t null_warp_returned(const struct null_worker *w, uint32_t base)
{
    uint64_t lanes = null_warp_lanes(w, base), returned = 0;

    for (uint64_t g = lanes; g != 0; g &= g - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(g);

        if (w->thread[base + lane].state == NULL_THREAD_DONE)
            returned |= 1ull << lane;
    }
    return returned;
}

/*
 * The lanes a warp operation of thread `rank` waits for: those of its mask
 * the block has, but for threads that returned. CUDA's _sync operations
 * take "all non-exited threads named in mask": a lane that returned
 * neither holds the others nor gives a value (a shuffle from it gives the
 * caller's own, its ballot bit is 0). The scheduler answers only once
 * every thread waits or has returned, so a lane that is still to return
 * is waited for, not taken for gone.
 */
static uint64_t null_warp_group(const struct null_worker *w, uint32_t rank)
{
    uint32_t base = rank - rank % NULL_WARP_LANES;

    return w->thread[rank].mask & null_warp_lanes(w, base) &
           ~null_warp_returned(w, base);
}

/* Answer every warp operation whose lanes all wait at one; whether any was. */
static bool null_warps_release(struct null_worker *w)
{
    bool released = false;

    for (uint32_t rank = 0; rank < w->threads; rank++) {
        uint32_t base = rank - rank % NULL_WARP_LANES;
        uint64_t group, g;

        if (w->thread[rank].state != NULL_THREAD_AT_WARP)
            continue;
        group = null_warp_group(w, rank);
        for (g = group; g != 0; g &= g - 1) {
            if (w->thread[base + (uint32_t)__builtin_ctzll(g)].state !=
                NULL_THREAD_AT_WARP)
                break;
        }
        if (g == 0) {
            null_warp_answer(w, base, group);
            released = true;
        }
    }
    return released;
}

static const char *null_thread_doing(const struct null_thread *t)
{
    switch (t->state) {
    case NULL_THREAD_AT_BARRIER:
        return "waits at accel_sync_threads()";
    case NULL_THREAD_AT_WARP:
        return "waits at a warp operation";
    case NULL_THREAD_DONE:
        return "returned";
    default:
        return "runs";
    }
}

/*
 * No thread can run and not all have returned: fail the launch, naming
 * the first thread that waits and one that keeps it waiting.
 */
static void null_block_stuck(struct null_worker *w)
{
    uint32_t waiter = 0, other = 0;
    char who[48];

    while (w->thread[waiter].state == NULL_THREAD_DONE)
        waiter++;
    if (w->thread[waiter].state == NULL_THREAD_AT_BARRIER) {
        while (other < w->threads &&
               w->thread[other].state == NULL_THREAD_AT_BARRIER)
            other++;
    } else {
        uint32_t base = waiter - waiter % NULL_WARP_LANES;
        uint64_t g = null_warp_group(w, waiter);

        for (; g != 0; g &= g - 1) {
            other = base + (uint32_t)__builtin_ctzll(g);
            if (w->thread[other].state != NULL_THREAD_AT_WARP)
                break;
        }
    }
    accel__null_block_fail_at(
        w, waiter,
        "%s that %s never reaches (it %s): not every thread "
        "reaches the barrier",
        null_thread_doing(&w->thread[waiter]),
        accel__null_thread_name(w, other, who, sizeof(who)),
        null_thread_doing(&w->thread[other]));
}

enum null_release { NULL_RELEASED, NULL_ALL_DONE, NULL_STUCK };

/* Every thread waits or has returned: open what can be opened. */
static enum null_release null_block_release(struct null_worker *w)
{
    uint32_t done = 0, at_barrier = 0;

    for (uint32_t i = 0; i < w->threads; i++) {
        done += w->thread[i].state == NULL_THREAD_DONE;
        at_barrier += w->thread[i].state == NULL_THREAD_AT_BARRIER;
    }
    if (done == w->threads)
        return NULL_ALL_DONE;
    if (at_barrier == w->threads) {
        for (uint32_t i = 0; i < w->threads; i++)
            w->thread[i].state = NULL_THREAD_RUNNABLE;
        return NULL_RELEASED;
    }
    if (null_warps_release(w))
        return NULL_RELEASED;
    null_block_stuck(w);
    return NULL_STUCK;
}

/*
 * Run the block as fibers until every thread has returned (true) or the
 * launch fails. Thread 0 waits at its first barrier or warp operation.
 */
bool accel__null_block_schedule(struct null_worker *w)
{
    for (;;) {
        uint32_t first = 0;

        /* A round: each runnable thread runs to its next wait (null_pass_on). */
        while (first < w->threads &&
               w->thread[first].state != NULL_THREAD_RUNNABLE)
            first++;
        if (first < w->threads) {
            accel__null_switch(&w->native, &w->fiber[first].ctx);
            if (w->event == NULL_EVENT_FAULT)
                return false;
        }
        switch (null_block_release(w)) {
        case NULL_RELEASED:
            break;
        case NULL_ALL_DONE:
            return true;
        case NULL_STUCK:
            return false;
        }
    }
}

/* Start over every fiber of the failed block: none is resumed. */
void accel__null_block_abandon(struct null_worker *w)
{
    for (uint32_t i = 0; i < (w->fibers_on ? w->threads : 1); i++) {
        if (i > 0 && w->thread[i].state == NULL_THREAD_DONE)
            continue;
        /* A checked kernel's abandoned frames leave red zones behind. */
        accel__null_check_unpoison(w->fiber[i].ctx.stack_lo,
                                   w->fiber[i].ctx.stack_bytes);
        accel__null_fiber_reset(&w->fiber[i]);
    }
}
