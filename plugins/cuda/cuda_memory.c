/*
 * Device memory and pinned host memory.
 *
 * An allocation's handle is its device address: the driver frees by
 * address, so the plugin keeps nothing of its own.
 *
 * Pinned host memory is the plugin's own pages, registered with
 * cuMemHostRegister portable, so that every device of the process copies
 * from it at full speed, not only the one it was asked of. Not
 * cuMemHostAlloc: cuDevicePrimaryCtxReset frees what that made, while the
 * ABI keeps pinned memory valid across a reset; a reset only drops
 * registrations, which the device's reset makes again (cuda_device.c,
 * plugins/common/pinned_host.h).
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
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "mem_alloc: %llu bytes",
            (unsigned long long)bytes);
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuMemAlloc_v2,
                       (&address, (size_t)bytes));
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

    if (mem == NULL || !accel__cuda_enter_to_release(device, &scope))
        return;
    accel__cuda_ignore(
        device,
        cuda_symbols_of(device)->cuMemFree_v2((acu_CUdeviceptr)(uintptr_t)mem),
        "cuMemFree_v2");
    accel__cuda_leave(device, &scope);
}

/* ---- pinned host memory: the plugin's pages, registered (see pinned_host.h) ---- */

static int cuda_register_range(accel_drv_device *device, void *ptr, size_t bytes)
{
    return cuda_symbols_of(device)->cuMemHostRegister_v2(
        ptr, bytes, ACU_CU_MEMHOSTREGISTER_PORTABLE);
}

static int cuda_unregister_range(accel_drv_device *device, void *ptr)
{
    return cuda_symbols_of(device)->cuMemHostUnregister(ptr);
}

static void cuda_describe_result(accel_drv_device *device, int result,
                                 char *out, size_t size)
{
    accel__cuda_describe(device->plugin, (acu_CUresult)result, out, size);
}

static accel_status cuda_error_result(accel_drv_device *device, int result,
                                      const char *call)
{
    return accel__cuda_result(device, (acu_CUresult)result, call,
                              ACCEL_ERR_DRIVER);
}

static void cuda_ignore_result(accel_drv_device *device, int result,
                               const char *call)
{
    accel__cuda_ignore(device, (acu_CUresult)result, call);
}

static const struct accel__pinned_vendor cuda_pinned_vendor = {
    .register_call = "cuMemHostRegister_v2",
    .unregister_call = "cuMemHostUnregister",
    .out_of_memory = ACU_CUDA_ERROR_OUT_OF_MEMORY,
    .already_registered = ACU_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
    .register_range = cuda_register_range,
    .unregister_range = cuda_unregister_range,
    .describe = cuda_describe_result,
    .error = cuda_error_result,
    .ignore = cuda_ignore_result,
};

struct accel__pinned_device accel__cuda_pinned(accel_drv_device *device)
{
    return (struct accel__pinned_device){
        .blocks = &device->physical->context->pinned,
        .vendor = &cuda_pinned_vendor,
        .device = device,
        .services = device->plugin->base.services,
        .name = device->name,
    };
}

accel_status accel__cuda_host_alloc(accel_drv_device *device, size_t bytes,
                                    void **out_ptr)
{
    struct accel__pinned_device pinned = accel__cuda_pinned(device);
    struct cuda_scope scope;
    accel_status status;

    *out_ptr = NULL;
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = accel__pinned_alloc(&pinned, bytes, out_ptr);
    accel__cuda_leave(device, &scope);
    return status;
}

/*
 * Unlike the device's other objects, a pinned block outlives a reset
 * through another open (it is registered again), so it is always handed
 * back, whatever the open's epoch: accel__cuda_enter_any_epoch.
 */
void accel__cuda_host_free(accel_drv_device *device, void *ptr)
{
    struct accel__pinned_device pinned = accel__cuda_pinned(device);
    struct cuda_scope scope;
    bool entered;

    if (ptr == NULL)
        return;
    /* The pages go back even without the context: the block is the plugin's. */
    entered = accel__cuda_enter_any_epoch(device, &scope) == ACCEL_OK;
    accel__pinned_free(&pinned, ptr);
    if (entered)
        accel__cuda_leave(device, &scope);
}
