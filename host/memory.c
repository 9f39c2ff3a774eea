/*
 * The public face of the memory pool: statistics, policy, compaction.
 */
#include <string.h>

#include "compact.h"
#include "device.h"
#include "pool.h"
#include "sized.h"
#include "status.h"
#include "trace.h"

#define STATS_MIN ACCEL__STRUCT_MIN(accel_memory_stats, reserved_bytes)
#define POLICY_MIN ACCEL__STRUCT_MIN(accel_pool_policy, automatic)

static accel_status device_memory_stats_untraced(accel_device *device,
                                                 accel_memory_stats *out_stats,
                                                 size_t stats_size)
{
    if (out_stats != NULL && stats_size >= STATS_MIN)
        memset(out_stats, 0, stats_size);
    if (device == NULL || out_stats == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_memory_stats: NULL argument");
    accel_memory_stats stats;
    pthread_mutex_lock(&device->lock);
    const struct accel__pool *pool = &device->pool;
    stats = (accel_memory_stats){
        .reserved_bytes = pool->reserved_bytes,
        .used_bytes = pool->used_bytes,
        .pages = pool->pages,
        .slices = pool->slices,
        .relocations = pool->relocations,
        .pool_hits = pool->pool_hits,
        .pool_misses = pool->pool_misses,
        .pending_frees = device->drop.count,
        .pending_free_bytes = device->drop.bytes,
        .staging_buffers = device->staging.total,
        .staging_chunk_bytes = device->staging.chunk,
    };
    pthread_mutex_unlock(&device->lock);
    return accel__struct_out(out_stats, stats_size, &stats, sizeof stats,
                             STATS_MIN, "accel_device_memory_stats");
}

accel_status accel_device_memory_stats_sized(accel_device *device,
                                             accel_memory_stats *out_stats,
                                             size_t stats_size)
{
    /* Named as the application writes it: the macro over this function. */
    struct accel__traced traced = accel__trace_begin(
        "accel_device_memory_stats");
    accel_status status = device_memory_stats_untraced(device, out_stats,
                                                       stats_size);
    return accel__trace_end(traced, status, 0);
}

static accel_status
device_set_pool_policy_untraced(accel_device *device,
                                const accel_pool_policy *caller_policy)
{
    if (device == NULL || caller_policy == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_set_pool_policy: NULL argument");
    accel_pool_policy policy;
    accel_status status = accel__struct_in(&policy, sizeof policy,
                                           caller_policy, POLICY_MIN,
                                           "accel_device_set_pool_policy");
    if (status != ACCEL_OK)
        return status;
    if (policy.outdated_percent < 1 || policy.outdated_percent > 100)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_set_pool_policy: outdated_percent %u "
                            "is not from 1 to 100",
                            policy.outdated_percent);
    pthread_mutex_lock(&device->lock);
    device->pool.automatic = policy.automatic;
    device->pool.outdated_percent = policy.outdated_percent;
    pthread_mutex_unlock(&device->lock);
    return ACCEL_OK;
}

accel_status accel_device_set_pool_policy(accel_device *device,
                                          const accel_pool_policy *policy)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = device_set_pool_policy_untraced(device, policy);
    return accel__trace_end(traced, status, 0);
}

static accel_status device_compact_untraced(accel_device *device,
                                            uint32_t *out_pages)
{
    if (out_pages != NULL)
        *out_pages = 0;
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_compact: NULL device");
    uint32_t pages = 0;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK) {
        device->pool.outdated_hint = 0;
        status = accel__compact(device, &pages);
        /* Compaction gives memory back: the spare large pages too. */
        accel__pool_trim(&device->pool, device->drv, device->drv_device);
    }
    accel__device_unlock(device);
    if (out_pages != NULL)
        *out_pages = pages;
    return status;
}

accel_status accel_device_compact(accel_device *device, uint32_t *out_pages)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = device_compact_untraced(device, out_pages);
    return accel__trace_end(traced, status, 0);
}
