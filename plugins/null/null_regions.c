/*
 * Blocks of kernels that accel-cc's barrier pass split at their barriers
 * (<accel/kernel.h>, run_regions): each block runs whole, on the calling
 * thread's own stack, as loops over its threads from one barrier to the
 * next. What a thread carries across a barrier lives in scratch memory the
 * plugin gives: one buffer per host thread, grown to the largest block it
 * has run and kept for the next launch.
 *
 * run_regions checks at each barrier that every thread reached the same
 * one, or that all returned; when they did not, it says which thread did
 * what, and the launch fails with ACCEL_ERR_LAUNCH in the words the fiber
 * path uses (null_block.c), naming the kernel, the block and the thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "null_block.h"

#define NULL_SCRATCH_ALIGN 64u

struct null_scratch {
    void *bytes;
    size_t size;
};

static pthread_once_t null_scratch_once = PTHREAD_ONCE_INIT;
static pthread_key_t null_scratch_key;
static bool null_scratch_key_made;

/* At the host thread's exit. */
static void null_scratch_free(void *arg)
{
    struct null_scratch *scratch = arg;

    free(scratch->bytes);
    free(scratch);
}

static void null_scratch_key_make(void)
{
    null_scratch_key_made = pthread_key_create(&null_scratch_key,
                                               null_scratch_free) == 0;
}

/* At the plugin's unload: every thread that ran blocks was the plugin's and has exited. */
__attribute__((destructor)) static void null_scratch_key_drop(void)
{
    if (null_scratch_key_made)
        pthread_key_delete(null_scratch_key);
}

/* This host thread's scratch, at least `size` bytes; NULL when out of memory. */
static void *null_scratch_get(size_t size)
{
    struct null_scratch *scratch;
    void *bytes;

    pthread_once(&null_scratch_once, null_scratch_key_make);
    if (!null_scratch_key_made)
        return NULL;
    scratch = pthread_getspecific(null_scratch_key);
    if (scratch == NULL) {
        scratch = calloc(1, sizeof(*scratch));
        if (scratch == NULL)
            return NULL;
        if (pthread_setspecific(null_scratch_key, scratch) != 0) {
            free(scratch);
            return NULL;
        }
    }
    if (scratch->size >= size)
        return scratch->bytes;
    size = (size + NULL_SCRATCH_ALIGN - 1) & ~(size_t)(NULL_SCRATCH_ALIGN - 1);
    bytes = aligned_alloc(NULL_SCRATCH_ALIGN, size);
    if (bytes == NULL)
        return NULL;
    free(scratch->bytes);
    scratch->bytes = bytes;
    scratch->size = size;
    return bytes;
}

/* "thread (x,y,z)" of `block`, into buf. */
static const char *null_regions_thread(const struct accel_cpu_block *block,
                                       uint32_t rank, char *buf, size_t size)
{
    uint32_t bx = block->block_dim[0], by = block->block_dim[1];

    snprintf(buf, size, "thread (%u,%u,%u)", rank % bx, rank / bx % by,
             rank / bx / by);
    return buf;
}

/* "returned" or "waits at barrier k" (the pass numbers them from 1), into buf. */
static const char *null_regions_did(uint32_t did, char *buf, size_t size)
{
    if (did == ACCEL_CPU_REGIONS_RETURNED)
        snprintf(buf, size, "returned");
    else
        snprintf(buf, size, "waits at barrier %u", did);
    return buf;
}

/* Fail the launch for run_regions's `result`, as the fiber path words it. */
static void null_regions_fail(struct null_blocks *blocks,
                              const struct accel_cpu_block *block,
                              uint32_t threads, uint64_t result)
{
    uint32_t rank = ACCEL_CPU_REGIONS_THREAD(result);
    uint32_t did = ACCEL_CPU_REGIONS_DID(result),
             did0 = ACCEL_CPU_REGIONS_THREAD0_DID(result);
    char who[48], what[80];

    if (rank == 0 || rank >= threads || did == did0) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_LAUNCH,
            "launch: kernel '%s' block (%u,%u,%u): run_regions gave "
            "0x%llx, which names no thread of the block's %u",
            accel__null_kernel_name(blocks->kernel), block->block_idx[0],
            block->block_idx[1], block->block_idx[2],
            (unsigned long long)result, threads);
        return;
    }
    null_regions_thread(block, rank, who, sizeof(who));
    if (did0 == ACCEL_CPU_REGIONS_RETURNED) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_LAUNCH,
            "launch: kernel '%s' block (%u,%u,%u) %s: reached "
            "accel_sync_threads(), which thread (0,0,0) returned without "
            "reaching (a barrier in divergent code?)",
            accel__null_kernel_name(blocks->kernel), block->block_idx[0],
            block->block_idx[1], block->block_idx[2], who);
        return;
    }
    accel__null_blocks_fail(
        blocks, ACCEL_ERR_LAUNCH,
        "launch: kernel '%s' block (%u,%u,%u) thread (0,0,0): waits at "
        "accel_sync_threads() that %s never reaches (it %s): not every "
        "thread reaches the barrier",
        accel__null_kernel_name(blocks->kernel), block->block_idx[0],
        block->block_idx[1], block->block_idx[2], who,
        null_regions_did(did, what, sizeof(what)));
}

bool accel__null_blocks_run_regions(struct null_blocks *blocks,
                                    struct accel_cpu_block *block, uint64_t count)
{
    const struct accel_cpu_kernel *kernel = blocks->kernel;
    uint32_t threads = block->block_dim[0] * block->block_dim[1] *
                       block->block_dim[2];
    size_t bytes = (size_t)threads * kernel->region_thread_bytes +
                   NULL_SCRATCH_ALIGN;
    void *scratch = null_scratch_get(bytes);

    if (scratch == NULL) {
        accel__null_blocks_fail(
            blocks, ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "launch: kernel '%s': allocating %zu bytes for what %u "
            "threads keep across barriers failed",
            accel__null_kernel_name(kernel), bytes, threads);
        return false;
    }
    for (uint64_t n = 0; n < count; n++, accel__null_block_next(block)) {
        uint64_t result = kernel->run_regions(block, blocks->args, scratch);

        if (result != ACCEL_CPU_REGIONS_OK) {
            null_regions_fail(blocks, block, threads, result);
            return false;
        }
    }
    return true;
}
