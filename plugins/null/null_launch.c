#include "null_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "null_block.h"
#include "null_check.h"
#include "null_pool.h"

/*
 * Where each argument lives in a launch's copy: aligned to its size
 * rounded up to a power of two, at most 16 (what <accel/kernel.h>
 * promises run_block). Both the enqueue and the run compute it from the
 * kernel's own parameter sizes, so the command stores no offsets.
 */
static uint32_t null_arg_align(uint32_t size)
{
    uint32_t align = 1;

    while (align < size && align < 16)
        align *= 2;
    return align;
}

/*
 * The bytes the kernel's arguments take; with `base`, also each one's
 * address in out_ptrs.
 */
static size_t null_args_layout(const struct accel_cpu_kernel *kernel,
                               unsigned char *base, void **out_ptrs)
{
    size_t end = 0;

    for (uint32_t i = 0; i < kernel->param_count; i++) {
        uint32_t align = null_arg_align(kernel->param_sizes[i]);

        end = (end + align - 1) & ~(size_t)(align - 1);
        if (base != NULL)
            out_ptrs[i] = base + end;
        end += kernel->param_sizes[i];
    }
    return end;
}

static accel_status
null_check_arguments(const struct accel_host_services *services,
                     const struct accel_cpu_kernel *kernel, void *const *args,
                     const size_t *arg_sizes, uint32_t nargs)
{
    if (nargs != kernel->param_count)
        return services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "launch: the kernel takes %u argument(s), %u given",
            kernel->param_count, nargs);
    if (nargs != 0 && (args == NULL || arg_sizes == NULL))
        return services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "launch: %u argument(s) but no argument array", nargs);
    for (uint32_t i = 0; i < nargs; i++) {
        if (args[i] == NULL)
            return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                       "launch: argument %u is NULL", i);
        if (arg_sizes[i] != kernel->param_sizes[i])
            return services->set_error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "launch: argument %u is %zu bytes; the kernel "
                "takes %u",
                i, arg_sizes[i], kernel->param_sizes[i]);
    }
    return ACCEL_OK;
}

/*
 * Check the geometry against every limit the device reports. The host has
 * checked the same before a launch reaches the plugin, but a plugin's table
 * can also be called directly (the tests do), and some of these limits
 * the plugin relies on itself: no zero dimension (block indices are found
 * by division), dynamic shared memory within the NULL_MAX_SHARED_BYTES
 * buffer each thread keeps, and a block count that fits in 64 bits.
 */
static accel_status null_check_geometry(const struct accel_host_services *services,
                                        const struct accel_device_props *props,
                                        const struct accel_launch_config *config)
{
    uint64_t threads = 1;

    for (int d = 0; d < 3; d++) {
        if (config->grid[d] == 0 || config->grid[d] > props->max_grid_dim[d] ||
            config->block[d] == 0 || config->block[d] > props->max_block_dim[d])
            return services->set_error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "launch: grid %ux%ux%u of blocks %ux%ux%u is out of "
                "range in dimension %d",
                config->grid[0], config->grid[1], config->grid[2],
                config->block[0], config->block[1], config->block[2], d);
        threads *= config->block[d];
    }
    if (threads > props->max_threads_per_block)
        return services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "launch: %llu threads per block; the device allows %u",
            (unsigned long long)threads, props->max_threads_per_block);
    if (config->shared_bytes > props->max_shared_bytes)
        return services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "launch: %u bytes of shared memory per block; the "
            "device allows %u",
            config->shared_bytes, props->max_shared_bytes);
    return ACCEL_OK;
}

accel_status
accel__null_launch_prepare(const struct accel_host_services *services,
                           const struct accel_device_props *props,
                           const struct accel_cpu_kernel *kernel,
                           struct null_pool *pool, size_t stack_bytes,
                           const struct accel_launch_config *config,
                           void *const *args, const size_t *arg_sizes,
                           uint32_t nargs, struct null_launch *out_launch)
{
    void *slots[ACCEL_KERNEL_MAX_PARAMS];
    unsigned char *base;
    accel_status status;
    size_t bytes;

    out_launch->heap_args = NULL;
    if (kernel == NULL || config == NULL)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "launch: the %s is NULL",
                                   kernel == NULL ? "kernel" : "configuration");
    status = null_check_geometry(services, props, config);
    if (status != ACCEL_OK)
        return status;
    status = null_check_arguments(services, kernel, args, arg_sizes, nargs);
    if (status != ACCEL_OK)
        return status;

    bytes = null_args_layout(kernel, NULL, NULL);
    base = out_launch->inline_args;
    if (bytes > sizeof(out_launch->inline_args)) {
        /* malloc aligns to 16 at least, as the layout needs. */
        base = malloc(bytes);
        if (base == NULL)
            return services->set_error(
                ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "launch: malloc of %zu bytes of arguments failed", bytes);
        out_launch->heap_args = base;
    }
    null_args_layout(kernel, base, slots);
    for (uint32_t i = 0; i < nargs; i++)
        memcpy(slots[i], args[i], arg_sizes[i]);
    out_launch->kernel = kernel;
    out_launch->pool = pool;
    out_launch->stack_bytes = stack_bytes;
    out_launch->check = NULL_CHECK_OFF;
    out_launch->config = *config;
    return ACCEL_OK;
}

accel_status accel__null_launch_run(struct null_launch *launch, char *detail,
                                    size_t detail_size)
{
    void *args[ACCEL_KERNEL_MAX_PARAMS];
    unsigned char *base = launch->heap_args != NULL ? launch->heap_args
                                                    : launch->inline_args;
    struct null_blocks blocks;

    null_args_layout(launch->kernel, base, args);
    accel__null_blocks_init(&blocks, launch->kernel, args, &launch->config,
                            launch->stack_bytes);
    blocks.check = launch->check;
    if (launch->check >= NULL_CHECK_RACE)
        blocks.launch_id = accel__null_race_next_launch();
    accel__null_grid_run(launch->pool, &blocks);
    if (launch->check >= NULL_CHECK_RACE)
        accel__null_race_launch_done();
    accel__null_launch_discard(launch);
    if (!atomic_load_explicit(&blocks.failed, memory_order_relaxed))
        return ACCEL_OK;
    snprintf(detail, detail_size, "%s", blocks.detail);
    return blocks.status;
}

void accel__null_launch_discard(struct null_launch *launch)
{
    free(launch->heap_args);
    launch->heap_args = NULL;
}
