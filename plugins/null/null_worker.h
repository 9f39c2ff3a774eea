/*
 * What null_block.c (running blocks, the fibers' side) and null_sched.c
 * (the scheduler that releases barriers and warp operations, on the host
 * thread's own stack) share: a host thread's worker and its block's
 * threads. Private to the null plugin.
 */
#ifndef ACCEL_NULL_WORKER_H
#define ACCEL_NULL_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/kernel.h>

#include "null_block.h"
#include "null_fiber.h"

/* The most threads a block has (the device's max_threads_per_block). */
#define NULL_BLOCK_THREADS_MAX 1024u
#define NULL_WARP_LANES 32u

/* Where a thread of a block that runs as fibers stands. */
enum null_thread_state {
    NULL_THREAD_RUNNABLE,
    NULL_THREAD_AT_BARRIER,
    NULL_THREAD_AT_WARP,
    NULL_THREAD_DONE
};

/* Why a fiber switched back to the host thread's own stack. */
enum null_event {
    NULL_EVENT_RUN_DONE, /* the run of blocks has finished */
    NULL_EVENT_FIBERS,   /* thread 0 waits: run the block as fibers */
    NULL_EVENT_WAIT, /* a thread waits at a barrier or warp operation, or returned */
    NULL_EVENT_FAULT /* the launch failed; abandon the block */
};

struct null_thread {
    uint8_t state; /* enum null_thread_state */
    uint8_t op;    /* enum accel_cpu_warp_op, while AT_WARP */
    uint32_t arg;
    uint64_t mask;
    uint64_t value;
    uint64_t result;
    uint32_t epoch; /* the race check: barriers passed in this block */
};

/*
 * What one host thread keeps for running blocks, made at its first run
 * and freed when it exits: fibers, whose stacks are kept for the next
 * block, and the state of the block it runs.
 */
struct null_worker {
    struct null_ctx native;
    void *altstack; /* this thread's signal stack, when it had none */
    size_t stack_bytes;
    /* The run of blocks in progress. */
    struct null_blocks *blocks;
    uint64_t first;
    uint64_t count;
    struct accel_cpu_block block;
    uint32_t threads; /* in the block */
    bool fibers_on;   /* the block runs as fibers */
    bool straight;    /* thread 0 returned alone; run_block runs the rest */
    bool running;     /* between the start and end of a run of blocks */
    uint32_t check_thread; /* the thread a checked straight block runs */
    enum null_event event;
    struct null_thread thread[NULL_BLOCK_THREADS_MAX];
    /* fiber[0] runs the blocks and is thread 0 of each; fiber[i] thread i. */
    struct null_fiber fiber[NULL_BLOCK_THREADS_MAX];
};

/* "thread (x,y,z)" of the running block, into buf. */
const char *accel__null_thread_name(const struct null_worker *w, uint32_t rank,
                                    char *buf, size_t size);

/* Fail the launch at `rank` of the running block. */
void accel__null_block_fail_at(struct null_worker *w, uint32_t rank,
                               const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Run the block as fibers (threads 1.. ready to start) until every thread
 * has returned (true) or the launch fails.
 */
bool accel__null_block_schedule(struct null_worker *w);

/* Start over every fiber of the failed block: none is resumed. */
void accel__null_block_abandon(struct null_worker *w);

#endif /* ACCEL_NULL_WORKER_H */
