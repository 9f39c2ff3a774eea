#include "null_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "null_block.h"
#include "null_os.h"
#include "null_plugin.h"
#include "null_sync.h"

/*
 * Inline or pool is decided by what a grid costs, not by its size alone
 * (null_grid_schedule). A grid of more than this many threads in all goes
 * to the pool at once: even at a nanosecond a thread it pays for the
 * hand-off. A smaller one starts on its stream worker alone, which times
 * the blocks it runs and hands the rest to the pool once the rest is
 * projected to take NULL_POOL_WORTH_NS or more: about what waking a
 * sleeping helper and joining it again cost, so a grid of light threads
 * never pays for the pool, and a small grid of heavy ones (a 4096-row
 * matrix-vector product) uses every core. A single block always runs on
 * the stream worker.
 */
#define NULL_INLINE_MAX_THREADS 4096u
#define NULL_POOL_WORTH_NS 20000u
/*
 * Grids found worth the pool, by kernel and thread count, so that the next
 * launch of the same shape goes there without being timed first (a
 * benchmark, a solver's iterations). A small table indexed by the
 * kernel descriptor's address and the thread count; a collision costs one timing.
 */
#define NULL_HEAVY_SLOTS 64u
/*
 * Blocks are claimed in chunks, so that short blocks do not all fight over
 * one counter: about this many claims per thread, at most
 * NULL_CHUNK_MAX blocks each.
 */
#define NULL_CLAIMS_PER_THREAD 8u
#define NULL_CHUNK_MAX 64u

/* One launch's blocks, owned by the thread that runs the launch. */
struct null_grid {
    struct null_blocks *blocks;
    struct accel_launch_config config;
    uint64_t total; /* blocks */
    uint64_t chunk; /* blocks per claim */
    /* The first block nobody has claimed; past `total` once all are. */
    _Atomic uint64_t next;
    /*
     * Helpers working on the grid. The owner may return only once it is
     * zero; helpers change it under the pool's lock.
     */
    _Atomic uint32_t users;
    /* Under the pool's lock. */
    struct null_list link; /* in the pool's open grids while `linked` */
    bool linked;
    bool owner_sleeps;
};

struct null_pool {
    const struct accel_host_services *services;
    /* `lock` guards everything below it that is not atomic. */
    pthread_mutex_t lock;
    pthread_cond_t work_posted; /* helpers sleep on it */
    pthread_cond_t grid_left;   /* owners sleep on it for their helpers */
    struct null_list grids;     /* grids that may have blocks left */
    uint32_t sleeping;          /* helpers asleep on work_posted */
    /* Bumped on every post, so that a spinning helper sees new work. */
    _Atomic uint64_t posted;
    _Atomic bool stopping;
    /* Grids worth the pool (null_heavy_slot); kernel 0 when the slot is free. */
    struct {
        _Atomic uintptr_t kernel;
        _Atomic uint64_t threads;
    } heavy[NULL_HEAVY_SLOTS];
    uint32_t helper_count;
    uint32_t started;
    pthread_t helpers[];
};

/* ---- running blocks ---- */

/*
 * Claim and run chunks until none is left. Every thread that runs blocks
 * comes through here, with its own dynamic shared memory on its stack.
 */
static void null_grid_work(struct null_grid *grid)
{
    _Alignas(64) unsigned char shared[NULL_MAX_SHARED_BYTES];
    void *block_shared = grid->config.shared_bytes != 0 ? shared : NULL;

    for (;;) {
        uint64_t first = atomic_fetch_add_explicit(&grid->next, grid->chunk,
                                                   memory_order_relaxed);

        if (first >= grid->total)
            return;
        /* A failed launch runs no more blocks (null_block.h). */
        if (!accel__null_blocks_run(grid->blocks, first,
                                    grid->total - first < grid->chunk
                                        ? grid->total - first
                                        : grid->chunk,
                                    block_shared))
            return;
    }
}

static bool null_grid_exhausted(struct null_grid *grid)
{
    return atomic_load_explicit(&grid->next, memory_order_relaxed) >= grid->total;
}

/* ---- the helper side ---- */

/* The first grid with blocks left, dropping exhausted ones; under the lock. */
static struct null_grid *null_pool_first_open_locked(struct null_pool *pool)
{
    struct null_list *link;

    while ((link = null_list_first(&pool->grids)) != NULL) {
        struct null_grid *grid = null_container_of(link, struct null_grid, link);

        if (!null_grid_exhausted(grid))
            return grid;
        null_list_remove(link);
        grid->linked = false;
    }
    return NULL;
}

/* Poll, without the lock, until a post after `seen`, a stop, or the budget. */
static void null_pool_spin_for_post(struct null_pool *pool, uint64_t seen)
{
    struct null_backoff backoff;

    accel__null_backoff_init(&backoff, NULL_WORKER_SPIN_NS);
    while (atomic_load_explicit(&pool->posted, memory_order_relaxed) == seen &&
           !atomic_load_explicit(&pool->stopping, memory_order_relaxed) &&
           accel__null_backoff_step(&backoff))
        ;
}

static void null_pool_sleep_for_post(struct null_pool *pool, uint64_t seen)
{
    pthread_mutex_lock(&pool->lock);
    while (atomic_load(&pool->posted) == seen && !atomic_load(&pool->stopping)) {
        pool->sleeping++;
        pthread_cond_wait(&pool->work_posted, &pool->lock);
        pool->sleeping--;
    }
    pthread_mutex_unlock(&pool->lock);
}

/*
 * Join a grid with blocks left: spin for one, then sleep. NULL once the
 * pool is stopping.
 */
static struct null_grid *null_pool_join(struct null_pool *pool)
{
    for (;;) {
        struct null_grid *grid;
        uint64_t seen;

        pthread_mutex_lock(&pool->lock);
        grid = null_pool_first_open_locked(pool);
        if (grid != NULL)
            atomic_fetch_add_explicit(&grid->users, 1, memory_order_relaxed);
        seen = atomic_load(&pool->posted);
        pthread_mutex_unlock(&pool->lock);
        if (grid != NULL)
            return grid;
        if (atomic_load(&pool->stopping))
            return NULL;
        null_pool_spin_for_post(pool, seen);
        null_pool_sleep_for_post(pool, seen);
    }
}

/*
 * Let go of a grid. After the decrement the owner may return and the grid
 * vanish, so whether to wake the owner is read before it.
 */
static void null_pool_leave(struct null_pool *pool, struct null_grid *grid)
{
    bool wake;

    pthread_mutex_lock(&pool->lock);
    wake = grid->owner_sleeps;
    if (atomic_fetch_sub_explicit(&grid->users, 1, memory_order_release) == 1 &&
        wake)
        pthread_cond_broadcast(&pool->grid_left);
    pthread_mutex_unlock(&pool->lock);
}

static void *null_pool_helper(void *arg)
{
    struct null_pool *pool = arg;
    struct null_grid *grid;

    while ((grid = null_pool_join(pool)) != NULL) {
        null_grid_work(grid);
        null_pool_leave(pool, grid);
    }
    return NULL;
}

/* ---- the owner side ---- */

/* Offer the grid to the helpers; wake as many sleepers as it has claims. */
static void null_pool_post(struct null_pool *pool, struct null_grid *grid)
{
    uint64_t claims = (grid->total + grid->chunk - 1) / grid->chunk;
    uint32_t wake;

    pthread_mutex_lock(&pool->lock);
    null_list_insert(pool->grids.prev, &grid->link);
    grid->linked = true;
    atomic_fetch_add(&pool->posted, 1);
    /* The owner takes one claim itself. */
    wake = claims - 1 < pool->sleeping ? (uint32_t)(claims - 1) : pool->sleeping;
    pthread_mutex_unlock(&pool->lock);
    while (wake-- > 0)
        pthread_cond_signal(&pool->work_posted);
}

/* Take the grid back from the pool once its blocks are all claimed. */
static void null_pool_retract(struct null_pool *pool, struct null_grid *grid)
{
    struct null_backoff backoff;

    pthread_mutex_lock(&pool->lock);
    if (grid->linked) {
        null_list_remove(&grid->link);
        grid->linked = false;
    }
    pthread_mutex_unlock(&pool->lock);

    /* acquire: the helpers' blocks happen before the launch completes. */
    accel__null_backoff_init(&backoff, NULL_WAITER_SPIN_NS);
    while (atomic_load_explicit(&grid->users, memory_order_acquire) != 0) {
        if (!accel__null_backoff_step(&backoff))
            break;
    }
    pthread_mutex_lock(&pool->lock);
    grid->owner_sleeps = true;
    while (atomic_load_explicit(&grid->users, memory_order_acquire) != 0)
        pthread_cond_wait(&pool->grid_left, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

static uint64_t null_grid_chunk(uint64_t blocks, uint32_t threads)
{
    uint64_t chunk = blocks / ((uint64_t)threads * NULL_CLAIMS_PER_THREAD);

    if (chunk < 1)
        return 1;
    return chunk > NULL_CHUNK_MAX ? NULL_CHUNK_MAX : chunk;
}

/* ---- inline or pool ---- */

static uint32_t null_heavy_slot(const struct null_grid *grid, uint64_t threads)
{
    uintptr_t key = (uintptr_t)grid->blocks->kernel;

    return (uint32_t)((key >> 4) ^ (key >> 12) ^ threads) % NULL_HEAVY_SLOTS;
}

/*
 * Whether a grid of this kernel and size was last found worth the pool.
 * The two words are read apart: a pair torn by another launch writing at
 * the same time gives one wrong guess, which that launch's timing mends.
 */
static bool null_heavy_recall(struct null_pool *pool,
                              const struct null_grid *grid, uint64_t threads)
{
    uint32_t slot = null_heavy_slot(grid, threads);

    return atomic_load_explicit(&pool->heavy[slot].kernel, memory_order_relaxed) ==
               (uintptr_t)grid->blocks->kernel &&
           atomic_load_explicit(&pool->heavy[slot].threads,
                                memory_order_relaxed) == threads;
}

static void null_heavy_note(struct null_pool *pool, const struct null_grid *grid,
                            uint64_t threads, bool heavy)
{
    uint32_t slot = null_heavy_slot(grid, threads);

    atomic_store_explicit(&pool->heavy[slot].threads, threads,
                          memory_order_relaxed);
    atomic_store_explicit(&pool->heavy[slot].kernel,
                          heavy ? (uintptr_t)grid->blocks->kernel : 0,
                          memory_order_relaxed);
}

/*
 * Run blocks [first, first + count) on this thread, as one claim of a grid
 * of their own whose claim counter starts at `first`.
 */
static void null_grid_run_span(const struct null_grid *grid, uint64_t first,
                               uint64_t count)
{
    struct null_grid span = {
        .blocks = grid->blocks,
        .config = grid->config,
        .total = first + count,
        .chunk = count,
    };

    atomic_init(&span.next, first);
    atomic_init(&span.users, 0);
    null_grid_work(&span);
}

/* Hand the blocks from grid->next on to the pool and help until all ran. */
static void null_grid_run_pooled(struct null_pool *pool, struct null_grid *grid)
{
    uint64_t left = grid->total -
                    atomic_load_explicit(&grid->next, memory_order_relaxed);

    grid->chunk = null_grid_chunk(left, pool->helper_count + 1);
    null_pool_post(pool, grid);
    null_grid_work(grid);
    null_pool_retract(pool, grid);
}

/*
 * Run a grid of at most NULL_INLINE_MAX_THREADS threads on this thread in
 * spans of 1, 1, 2, 4, ... blocks, reading the clock after each, until
 * what is left is projected to take NULL_POOL_WORTH_NS or more. Returns
 * whether it stopped early for that; grid->next then says where.
 */
static bool null_grid_probe(struct null_grid *grid)
{
    uint64_t done = 0, span = 1, start = null_now_ns(), elapsed;

    for (;;) {
        null_grid_run_span(grid, done, span);
        done += span;
        /* A failed launch runs no more blocks (null_block.h). */
        if (done == grid->total || atomic_load(&grid->blocks->failed))
            return false;
        elapsed = null_now_ns() - start;
        if (elapsed * (grid->total - done) >= (uint64_t)NULL_POOL_WORTH_NS * done)
            break;
        span = done < grid->total - done ? done : grid->total - done;
    }
    atomic_store_explicit(&grid->next, done, memory_order_relaxed);
    return true;
}

/*
 * The one place that decides where a grid's blocks run: on the stream
 * worker alone, or shared with the pool (see NULL_INLINE_MAX_THREADS).
 * The clock is read about log2(blocks) times for a small grid of a shape
 * not known to be heavy, twice for a known one, and never for a single
 * block or a large grid.
 */
static void null_grid_schedule(struct null_pool *pool, struct null_grid *grid,
                               uint64_t threads_per_block)
{
    uint64_t threads = grid->total * threads_per_block, start;

    if (pool == NULL || grid->total == 1) {
        grid->chunk = grid->total;
        null_grid_work(grid);
        return;
    }
    if (grid->total > NULL_INLINE_MAX_THREADS / threads_per_block) {
        null_grid_run_pooled(pool, grid);
        return;
    }
    if (!null_heavy_recall(pool, grid, threads)) {
        if (null_grid_probe(grid)) {
            null_heavy_note(pool, grid, threads, true);
            null_grid_run_pooled(pool, grid);
        }
        return;
    }
    /*
     * Known heavy: straight to the pool. If it turned out light this time
     * (the same shape, lighter arguments), the next launch is timed again.
     */
    start = null_now_ns();
    null_grid_run_pooled(pool, grid);
    if ((null_now_ns() - start) * (pool->helper_count + 1) <
        2ull * NULL_POOL_WORTH_NS)
        null_heavy_note(pool, grid, threads, false);
}

void accel__null_grid_run(struct null_pool *pool, struct null_blocks *blocks)
{
    const struct accel_launch_config *config = &blocks->config;
    uint64_t threads = (uint64_t)config->block[0] * config->block[1] *
                       config->block[2];
    struct null_grid grid = {
        .blocks = blocks,
        .config = *config,
        .total = (uint64_t)config->grid[0] * config->grid[1] * config->grid[2],
    };

    atomic_init(&grid.next, 0);
    atomic_init(&grid.users, 0);
    null_grid_schedule(pool, &grid, threads);
}

/* ---- life cycle ---- */

static accel_status null_pool_init_sync(struct null_pool *pool)
{
    const char *failed = "pthread_mutex_init";
    int rc = pthread_mutex_init(&pool->lock, NULL);

    if (rc != 0)
        goto fail;
    failed = "pthread_cond_init";
    rc = pthread_cond_init(&pool->work_posted, NULL);
    if (rc != 0)
        goto fail_lock;
    rc = pthread_cond_init(&pool->grid_left, NULL);
    if (rc != 0)
        goto fail_posted;
    return ACCEL_OK;

fail_posted:
    pthread_cond_destroy(&pool->work_posted);
fail_lock:
    pthread_mutex_destroy(&pool->lock);
fail:
    return pool->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                     "%s failed for the worker pool: %s",
                                     failed, null_errno_name(rc));
}

static void null_pool_stop(struct null_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stopping, true);
    pthread_cond_broadcast(&pool->work_posted);
    pthread_mutex_unlock(&pool->lock);
    for (uint32_t i = 0; i < pool->started; i++)
        pthread_join(pool->helpers[i], NULL);
    pool->started = 0;
}

static accel_status null_pool_start_helpers(struct null_pool *pool)
{
    int rc = 0;

    while (pool->started < pool->helper_count) {
        rc = null_thread_start(&pool->helpers[pool->started], null_pool_helper,
                               pool, "accel-null-pool");
        if (rc != 0)
            break;
        pool->started++;
    }
    if (rc == 0)
        return ACCEL_OK;
    null_pool_stop(pool);
    return pool->services->set_error(
        ACCEL_ERR_OUT_OF_HOST_MEMORY,
        "pthread_create failed for worker pool thread %u of "
        "%u: %s",
        pool->started + 1, pool->helper_count, null_errno_name(rc));
}

accel_status accel__null_pool_create(const struct accel_host_services *services,
                                     uint32_t helpers,
                                     struct null_pool **out_pool)
{
    struct null_pool *pool;
    accel_status status;

    *out_pool = NULL;
    pool = calloc(1, sizeof(*pool) + (size_t)helpers * sizeof(pthread_t));
    if (pool == NULL)
        return services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "calloc of a worker pool of %u threads failed", helpers);
    pool->services = services;
    pool->helper_count = helpers;
    null_list_init(&pool->grids);
    atomic_init(&pool->posted, 0);
    atomic_init(&pool->stopping, false);
    status = null_pool_init_sync(pool);
    if (status != ACCEL_OK)
        goto fail_free;
    status = null_pool_start_helpers(pool);
    if (status != ACCEL_OK)
        goto fail_sync;
    *out_pool = pool;
    return ACCEL_OK;

fail_sync:
    pthread_cond_destroy(&pool->grid_left);
    pthread_cond_destroy(&pool->work_posted);
    pthread_mutex_destroy(&pool->lock);
fail_free:
    free(pool);
    return status;
}

void accel__null_pool_destroy(struct null_pool *pool)
{
    if (pool == NULL)
        return;
    null_pool_stop(pool);
    pthread_cond_destroy(&pool->grid_left);
    pthread_cond_destroy(&pool->work_posted);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}
