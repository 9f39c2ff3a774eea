/*
 * Running a grid: a kernel's blocks, executed by the stream worker that
 * reached the launch and, for a large grid, by the plugin's worker pool.
 *
 * The stream worker owns the grid: it posts a large grid to the pool and
 * then takes blocks itself, from the same atomic block counter as the
 * helpers, so that it never sits waiting for a helper to wake up. A small
 * grid starts on the worker alone and goes to the pool only once its
 * blocks, timed as they run, show that the rest is worth it
 * (null_grid_schedule in null_pool.c). The launch has completed when every
 * block has run and every helper has let go of the grid.
 *
 * Helpers spin briefly for the next grid before they sleep, as the stream
 * workers do (null_sync.h): a helper woken from sleep joins late, but the
 * owner has been running blocks all along.
 */
#ifndef ACCEL_NULL_POOL_H
#define ACCEL_NULL_POOL_H

#include <stdint.h>

#include <accel/driver.h>
#include <accel/kernel.h>

struct null_pool;

/*
 * Start `helpers` (>= 1) helper threads. `services` must outlive the pool.
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY (allocation, pthread_create).
 */
accel_status accel__null_pool_create(const struct accel_host_services *services,
                                     uint32_t helpers,
                                     struct null_pool **out_pool);
/* Stop and join the helpers; no grid may be running. NULL is allowed. */
void accel__null_pool_destroy(struct null_pool *pool);

struct null_blocks;

/*
 * Run every block of a launch (null_block.h) and return once all have run
 * or the launch has failed. `pool` may be NULL: then the caller runs every
 * block itself. The blocks' configuration was validated.
 */
void accel__null_grid_run(struct null_pool *pool, struct null_blocks *blocks);

#endif /* ACCEL_NULL_POOL_H */
