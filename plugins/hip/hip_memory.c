/*
 * Device memory and pinned host memory.
 *
 * An allocation's handle is its device address: the runtime frees by
 * address, so the plugin keeps nothing of its own.
 *
 * Pinned host memory is the plugin's own pages, registered with
 * hipHostRegister portable, so that every device of the process copies
 * from it at full speed, not only the one it was asked of. Not
 * hipHostMalloc: hipDeviceReset frees what that made, while the ABI keeps
 * pinned memory valid across a reset; a reset only drops registrations,
 * which the device's reset makes again (hip_device.c,
 * plugins/common/pinned_host.h).
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
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "mem_alloc: %llu bytes",
            (unsigned long long)bytes);
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipMalloc,
                      (&address, (size_t)bytes));
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
    accel__hip_ignore(device, hip_symbols_of(device)->hipFree((void *)mem),
                      "hipFree");
    accel__hip_leave(device, &scope);
}

/* ---- pinned host memory: the plugin's pages, registered (see pinned_host.h) ---- */

static int hip_register_range(accel_drv_device *device, void *ptr, size_t bytes)
{
    return hip_symbols_of(device)->hipHostRegister(ptr, bytes,
                                                   AHIP_hipHostRegisterPortable);
}

static int hip_unregister_range(accel_drv_device *device, void *ptr)
{
    return hip_symbols_of(device)->hipHostUnregister(ptr);
}

static void hip_describe_result(accel_drv_device *device, int result, char *out,
                                size_t size)
{
    accel__hip_describe(device->plugin, (ahip_hipError_t)result, out, size);
}

static accel_status hip_error_result(accel_drv_device *device, int result,
                                     const char *call)
{
    return accel__hip_result(device, (ahip_hipError_t)result, call,
                             ACCEL_ERR_DRIVER);
}

static void hip_ignore_result(accel_drv_device *device, int result,
                              const char *call)
{
    accel__hip_ignore(device, (ahip_hipError_t)result, call);
}

static const struct accel__pinned_vendor hip_pinned_vendor = {
    .register_call = "hipHostRegister",
    .unregister_call = "hipHostUnregister",
    .out_of_memory = AHIP_hipErrorOutOfMemory,
    .already_registered = AHIP_hipErrorHostMemoryAlreadyRegistered,
    .register_range = hip_register_range,
    .unregister_range = hip_unregister_range,
    .describe = hip_describe_result,
    .error = hip_error_result,
    .ignore = hip_ignore_result,
};

struct accel__pinned_device accel__hip_pinned(accel_drv_device *device)
{
    return (struct accel__pinned_device){
        .blocks = &device->physical->context->pinned,
        .vendor = &hip_pinned_vendor,
        .device = device,
        .services = device->plugin->base.services,
        .name = device->name,
    };
}

accel_status accel__hip_host_alloc(accel_drv_device *device, size_t bytes,
                                   void **out_ptr)
{
    struct accel__pinned_device pinned = accel__hip_pinned(device);
    struct hip_scope scope;
    accel_status status;

    *out_ptr = NULL;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = accel__pinned_alloc(&pinned, bytes, out_ptr);
    accel__hip_leave(device, &scope);
    return status;
}

/*
 * Unlike the device's other objects, a pinned block outlives a reset
 * through another open (it is registered again), so it is always handed
 * back: accel__hip_enter, not accel__hip_enter_to_release.
 */
void accel__hip_host_free(accel_drv_device *device, void *ptr)
{
    struct accel__pinned_device pinned = accel__hip_pinned(device);
    struct hip_scope scope;
    bool entered;

    if (ptr == NULL)
        return;
    /* The pages go back even when the device cannot be made current: the block is the plugin's. */
    entered = accel__hip_enter_any_epoch(device, &scope) == ACCEL_OK;
    accel__pinned_free(&pinned, ptr);
    if (entered)
        accel__hip_leave(device, &scope);
}
