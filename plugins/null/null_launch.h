/*
 * A kernel launch as a stream command: the kernel, its geometry and a copy
 * of its argument bytes, taken when the launch is enqueued so that the
 * caller's buffers may change at once.
 */
#ifndef ACCEL_NULL_LAUNCH_H
#define ACCEL_NULL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>
#include <accel/kernel.h>

struct null_pool;

/*
 * Arguments up to this many bytes in all (alignment padding included) are
 * kept in the command itself; larger sets take one malloc.
 */
#define NULL_LAUNCH_INLINE_BYTES 128u

struct null_launch {
    const struct accel_cpu_kernel *kernel;
    struct null_pool *pool; /* NULL: the stream worker runs every block */
    struct accel_launch_config config;
    size_t stack_bytes; /* of each fiber that runs a thread (null_block.h) */
    uint32_t check;     /* the plugin's checked mode (null_check.h) */
    unsigned char *heap_args; /* the arguments when they do not fit inline */
    _Alignas(16) unsigned char inline_args[NULL_LAUNCH_INLINE_BYTES];
};

/* A kernel handle is its descriptor in the loaded image. */
static inline accel_drv_kernel *
null_kernel_handle(const struct accel_cpu_kernel *kernel)
{
    return (accel_drv_kernel *)(uintptr_t)kernel;
}

static inline const struct accel_cpu_kernel *
null_kernel_descriptor(accel_drv_kernel *kernel)
{
    return (const struct accel_cpu_kernel *)(const void *)kernel;
}

/*
 * Check a launch against the kernel's signature and the device's limits
 * and fill *out_launch with a copy of the arguments. On failure nothing
 * needs releasing.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT, ACCEL_ERR_OUT_OF_HOST_MEMORY.
 */
accel_status
accel__null_launch_prepare(const struct accel_host_services *services,
                           const struct accel_device_props *props,
                           const struct accel_cpu_kernel *kernel,
                           struct null_pool *pool, size_t stack_bytes,
                           const struct accel_launch_config *config,
                           void *const *args, const size_t *arg_sizes,
                           uint32_t nargs, struct null_launch *out_launch);
/*
 * Run a prepared launch to completion, then release its arguments.
 * ACCEL_OK, or how the kernel failed (ACCEL_ERR_LAUNCH: a barrier not every
 * thread of a block reached; ACCEL_ERR_OUT_OF_HOST_MEMORY: no fiber stack)
 * with the detail in `detail`.
 */
accel_status accel__null_launch_run(struct null_launch *launch, char *detail,
                                    size_t detail_size);
/* Release a prepared launch that will not run. */
void accel__null_launch_discard(struct null_launch *launch);

#endif /* ACCEL_NULL_LAUNCH_H */
