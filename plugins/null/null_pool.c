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
 * A grid of at most this many threads in all runs on its stream worker
 * alone: a wake-up would cost more than it saves, and the pool's helpers
 * stay asleep. A single block always runs there.
 */
#define NULL_INLINE_MAX_THREADS 4096u
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
                                    grid->total - first < grid->chunk ? grid->total - first
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
    if (atomic_fetch_sub_explicit(&grid->users, 1, memory_order_release) == 1 && wake)
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

void accel__null_grid_run(struct null_pool *pool, struct null_blocks *blocks)
{
    const struct accel_launch_config *config = &blocks->config;
    uint64_t threads = (uint64_t)config->block[0] * config->block[1] * config->block[2];
    struct null_grid grid = {
        .blocks = blocks,
        .config = *config,
        .total = (uint64_t)config->grid[0] * config->grid[1] * config->grid[2],
    };

    atomic_init(&grid.next, 0);
    atomic_init(&grid.users, 0);
    if (pool == NULL || grid.total == 1 ||
        grid.total <= NULL_INLINE_MAX_THREADS / threads) {
        grid.chunk = grid.total;
        null_grid_work(&grid);
        return;
    }
    grid.chunk = null_grid_chunk(grid.total, pool->helper_count + 1);
    null_pool_post(pool, &grid);
    null_grid_work(&grid);
    null_pool_retract(pool, &grid);
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
                                     "%s failed for the worker pool: %s", failed,
                                     null_errno_name(rc));
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
        rc = null_thread_start(&pool->helpers[pool->started], null_pool_helper, pool,
                               "accel-null-pool");
        if (rc != 0)
            break;
        pool->started++;
    }
    if (rc == 0)
        return ACCEL_OK;
    null_pool_stop(pool);
    return pool->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                     "pthread_create failed for worker pool thread %u of "
                                     "%u: %s", pool->started + 1, pool->helper_count,
                                     null_errno_name(rc));
}

accel_status accel__null_pool_create(const struct accel_host_services *services,
                                     uint32_t helpers, struct null_pool **out_pool)
{
    struct null_pool *pool;
    accel_status status;

    *out_pool = NULL;
    pool = calloc(1, sizeof(*pool) + (size_t)helpers * sizeof(pthread_t));
    if (pool == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of a worker pool of %u threads failed",
                                   helpers);
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
