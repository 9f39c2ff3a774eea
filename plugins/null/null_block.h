/*
 * Running blocks with the GPU's block semantics (<accel/kernel.h>):
 * barriers, warp operations, and shared memory that a block's threads
 * share across them.
 *
 * A host thread runs one block at a time. A block of one thread runs on
 * the host thread's own stack, its barriers and warp operations answered
 * at once. Otherwise thread 0 runs first, alone; if
 * it returns without a barrier or a warp operation, the rest of the block
 * runs as the image's straight loop (run_block), as fast as a plain C loop.
 * If thread 0 reaches one, the block becomes a set of fibers
 * (null_fiber.h), one per thread, that a small scheduler on the host
 * thread's own stack runs in turn: each runs until it waits at a barrier
 * or a warp operation, or returns; a barrier opens once every thread of
 * the block waits at it, a warp operation once every lane its mask names
 * does. Thread 0 runs on a fiber too, from the start (the whole run of
 * blocks does, switched to once), so that the scheduler can leave it
 * waiting, and abandon it.
 *
 * A barrier not every thread reaches is an error, found when no fiber can
 * run and not every one has returned (a thread returned while others
 * wait, a barrier in divergent code, a warp operation whose lanes wait
 * elsewhere), or when a thread after thread 0 reaches a barrier that
 * thread 0 returned without. The block is abandoned (its fibers reset,
 * never resumed) and the launch fails with ACCEL_ERR_LAUNCH naming the
 * kernel, the block and the thread; the blocks not yet started do not run.
 *
 * A kernel that accel-cc's barrier pass split at its barriers (its
 * descriptor's run_regions) runs none of this: run_regions runs each block
 * whole, as loops over its threads between barriers, and says when the
 * threads did not all reach the same barrier (null_regions.c).
 */
#ifndef ACCEL_NULL_BLOCK_H
#define ACCEL_NULL_BLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>
#include <accel/kernel.h>

/* The stack of each fiber when ACCEL_NULL_STACK_KB is unset. */
#define NULL_STACK_KB_DEFAULT 64u
#define NULL_STACK_KB_MIN 16u
#define NULL_STACK_KB_MAX (64u * 1024u)

/* One launch's blocks, shared by every host thread that runs them. */
struct null_blocks {
    const struct accel_cpu_kernel *kernel;
    void *const *args;
    struct accel_launch_config config;
    size_t stack_bytes; /* of each fiber */
    /* The checked mode: every thread on its own run_thread call, and the
     * dynamic shared memory a heap block of its exact size (null_check.h). */
    uint32_t check;     /* enum null_check_mode */
    uint64_t launch_id; /* the race check's number for the launch */
    /* Set once, by the first thread that fails the launch. */
    _Atomic bool failed;
    /* Written by that thread before it lets go of the grid. */
    accel_status status;
    char detail[256];
};

void accel__null_blocks_init(struct null_blocks *blocks,
                             const struct accel_cpu_kernel *kernel,
                             void *const *args,
                             const struct accel_launch_config *config,
                             size_t stack_bytes);

/*
 * Run `count` blocks from linear block number `first`, x fastest, on the
 * calling thread, with `shared` as their dynamic shared memory. false once
 * the launch has failed, here or on another thread (then nothing more is
 * run).
 */
bool accel__null_blocks_run(struct null_blocks *blocks, uint64_t first,
                            uint64_t count, void *shared);

/* Fail the launch with this status and detail; only the first failure is kept. */
void accel__null_blocks_fail(struct null_blocks *blocks, accel_status status,
                             const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Advance block->block_idx to the next block of the grid, x fastest. */
void accel__null_block_next(struct accel_cpu_block *block);

/* The kernel's name, from its descriptor's symbol ("?" when it has none). */
const char *accel__null_kernel_name(const struct accel_cpu_kernel *kernel);

/*
 * Run `count` blocks from `block` (its first_thread 0), x fastest, through
 * the kernel's run_regions (null_regions.c): every thread of each block on
 * the calling thread's own stack, no fiber. false once the launch failed.
 */
bool accel__null_blocks_run_regions(struct null_blocks *blocks,
                                    struct accel_cpu_block *block,
                                    uint64_t count);

#endif /* ACCEL_NULL_BLOCK_H */
