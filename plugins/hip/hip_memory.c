/*
 * Device memory and pinned host memory.
 *
 * An allocation's handle is its device address: the runtime frees by
 * address, so the plugin keeps nothing of its own. Pinned host memory is
 * hipHostMalloc'd portable, so that every device of the process copies
 * from it at full speed, not only the one it was asked of.
 */
#include <stdint.h>

#include "hip_plugin.h"

accel_status accel__hip_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                  accel_drv_mem **out_mem, uint64_t *out_address)
{
    void *address = NULL;
    struct hip_scope scope;
    accel_status status;

    *out_mem = NULL;
    *out_address = 0;
    if (bytes == 0 || bytes > SIZE_MAX)
        return device->plugin->base.services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                                        "mem_alloc: %llu bytes",
                                                        (unsigned long long)bytes);
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipMalloc, (&address, (size_t)bytes));
    accel__hip_leave(device, &scope);
    if (status != ACCEL_OK)
        return status;
    /* The runtime never hands out address 0 for a non-empty allocation. */
    *out_mem = (accel_drv_mem *)address;
    *out_address = (uint64_t)(uintptr_t)address;
    return ACCEL_OK;
}

void accel__hip_mem_free(accel_drv_device *device, accel_drv_mem *mem)
{
    struct hip_scope scope;

    if (mem == NULL || !accel__hip_enter_to_release(device, &scope))
        return;
    accel__hip_ignore(device, hip_symbols_of(device)->hipFree((void *)mem), "hipFree");
    accel__hip_leave(device, &scope);
}

accel_status accel__hip_host_alloc(accel_drv_device *device, size_t bytes, void **out_ptr)
{
    const struct accel_host_services *services = device->plugin->base.services;
    struct hip_scope scope;
    ahip_hipError_t result;
    accel_status status;

    *out_ptr = NULL;
    if (bytes == 0)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "host_alloc: a size of zero bytes");
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    result = hip_symbols_of(device)->hipHostMalloc(out_ptr, bytes, AHIP_hipHostMallocPortable);
    accel__hip_leave(device, &scope);
    if (result == AHIP_hipSuccess)
        return ACCEL_OK;
    *out_ptr = NULL;
    /* The runtime's "out of memory" here is the host's memory, not the device's. */
    if (result == AHIP_hipErrorOutOfMemory)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "hipHostMalloc failed: hipErrorOutOfMemory (%d): %zu bytes "
                                   "of pinned host memory",
                                   (int)result, bytes);
    return accel__hip_result(device, result, "hipHostMalloc", ACCEL_ERR_DRIVER);
}

void accel__hip_host_free(accel_drv_device *device, void *ptr)
{
    struct hip_scope scope;

    if (ptr == NULL || !accel__hip_enter_to_release(device, &scope))
        return;
    accel__hip_ignore(device, hip_symbols_of(device)->hipHostFree(ptr), "hipHostFree");
    accel__hip_leave(device, &scope);
}
