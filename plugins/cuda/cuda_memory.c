/*
 * Device memory and pinned host memory.
 *
 * An allocation's handle is its device address: the driver frees by
 * address, so the plugin keeps nothing of its own. Pinned host memory is
 * cuMemHostAlloc'd portable, so that every device of the process copies
 * from it at full speed, not only the one it was asked of.
 */
#include <stdint.h>

#include "cuda_plugin.h"

accel_status accel__cuda_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                   accel_drv_mem **out_mem, uint64_t *out_address)
{
    acu_CUdeviceptr address = 0;
    struct cuda_scope scope;
    accel_status status;

    *out_mem = NULL;
    *out_address = 0;
    if (bytes == 0 || bytes > SIZE_MAX)
        return device->plugin->base.services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                                        "mem_alloc: %llu bytes",
                                                        (unsigned long long)bytes);
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuMemAlloc_v2, (&address, (size_t)bytes));
    accel__cuda_leave(device, &scope);
    if (status != ACCEL_OK)
        return status;
    /* The driver never hands out address 0, so the handle is never NULL. */
    *out_mem = (accel_drv_mem *)(uintptr_t)address;
    *out_address = address;
    return ACCEL_OK;
}

void accel__cuda_mem_free(accel_drv_device *device, accel_drv_mem *mem)
{
    struct cuda_scope scope;

    if (mem == NULL || accel__cuda_enter(device, &scope) != ACCEL_OK)
        return;
    accel__cuda_ignore(device,
                       cuda_symbols_of(device)->cuMemFree_v2((acu_CUdeviceptr)(uintptr_t)mem),
                       "cuMemFree_v2");
    accel__cuda_leave(device, &scope);
}

accel_status accel__cuda_host_alloc(accel_drv_device *device, size_t bytes, void **out_ptr)
{
    const struct accel_host_services *services = device->plugin->base.services;
    struct cuda_scope scope;
    accel_status status;
    acu_CUresult result;

    *out_ptr = NULL;
    if (bytes == 0)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "host_alloc: a size of zero bytes");
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    result = cuda_symbols_of(device)->cuMemHostAlloc(out_ptr, bytes,
                                                     ACU_CU_MEMHOSTALLOC_PORTABLE);
    accel__cuda_leave(device, &scope);
    if (result == ACU_CUDA_SUCCESS)
        return ACCEL_OK;
    *out_ptr = NULL;
    /* The driver's "out of memory" here is the host's memory, not the device's. */
    if (result == ACU_CUDA_ERROR_OUT_OF_MEMORY)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "cuMemHostAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (%d): "
                                   "%zu bytes of pinned host memory",
                                   (int)result, bytes);
    return accel__cuda_result(device, result, "cuMemHostAlloc", ACCEL_ERR_DRIVER);
}

void accel__cuda_host_free(accel_drv_device *device, void *ptr)
{
    struct cuda_scope scope;

    if (ptr == NULL || accel__cuda_enter(device, &scope) != ACCEL_OK)
        return;
    accel__cuda_ignore(device, cuda_symbols_of(device)->cuMemFreeHost(ptr), "cuMemFreeHost");
    accel__cuda_leave(device, &scope);
}
