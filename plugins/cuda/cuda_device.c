/*
 * Devices: the primary context, made current on whichever thread calls,
 * and its loss and reset.
 *
 * An open retains the device's primary context and releases it at close.
 * Every entry that needs a context goes through accel__cuda_enter, which
 * pushes the context onto the calling thread only when it is not already
 * current, and pops it on leave: the host may call from any thread, and a
 * thread's own current context (the application's, or another device's) is
 * left as it was found.
 *
 * Loss is the context's, shared by every open of the device (see
 * context_state.h). A reset is cuDevicePrimaryCtxReset, then retaining the
 * context again: the driver makes a new one. Pinned host memory survives
 * it, registered again in the new context.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_plugin.h"

accel_status accel__cuda_enter(accel_drv_device *device, struct cuda_scope *out_scope)
{
    acu_CUcontext context = atomic_load_explicit(&device->context, memory_order_acquire);
    acu_CUcontext current = NULL;
    accel_status status;

    out_scope->pushed = false;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuCtxGetCurrent, (&current));
    if (status != ACCEL_OK || current == context)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuCtxPushCurrent_v2, (context));
    out_scope->pushed = status == ACCEL_OK;
    return status;
}

bool accel__cuda_enter_to_release(accel_drv_device *device, struct cuda_scope *out_scope)
{
    out_scope->pushed = false;
    if (!accel__context_state_releasable(device->physical->context, device->epoch,
                                         device->plugin->base.services, device->name))
        return false;
    return accel__cuda_enter(device, out_scope) == ACCEL_OK;
}

void accel__cuda_leave(accel_drv_device *device, const struct cuda_scope *scope)
{
    acu_CUcontext popped = NULL;

    if (scope->pushed)
        accel__cuda_ignore(device, cuda_symbols_of(device)->cuCtxPopCurrent_v2(&popped),
                           "cuCtxPopCurrent_v2");
}

accel_status accel__cuda_device_open(accel_drv_plugin *plugin, uint32_t index,
                                     accel_drv_device **out_device)
{
    accel_drv_device *device;
    acu_CUcontext context = NULL;
    accel_status status;

    *out_device = NULL;
    if (index >= plugin->base.device_count)
        return plugin->base.services->set_error(ACCEL_ERR_NO_DEVICE,
                                                "device_open: no CUDA device %u; there are %u",
                                                index, plugin->base.device_count);
    device = calloc(1, sizeof(*device));
    if (device == NULL)
        return plugin->base.services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                                "calloc of a CUDA device failed");
    device->plugin = plugin;
    device->physical = &plugin->base.devices[index];
    snprintf(device->name, sizeof(device->name), "cuda:%u", index);
    /* The epoch first: a reset racing this open makes it lost, not stale-but-live. */
    accel__context_state_open(device->physical->context, &device->epoch);
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuDevicePrimaryCtxRetain,
                       (&context, device->physical->handle));
    if (status != ACCEL_OK) {
        accel__context_state_close(device->physical->context);
        free(device);
        return status;
    }
    atomic_init(&device->context, context);
    *out_device = device;
    return ACCEL_OK;
}

void accel__cuda_device_close(accel_drv_device *device)
{
    if (device == NULL)
        return;
    /* The last release destroys the context and whatever the host left in it. */
    accel__cuda_ignore(device,
                       cuda_symbols_of(device)->cuDevicePrimaryCtxRelease_v2(
                           device->physical->handle),
                       "cuDevicePrimaryCtxRelease_v2");
    accel__context_state_close(device->physical->context);
    free(device);
}

accel_status accel__cuda_device_status(accel_drv_device *device)
{
    return accel__context_state_check(device->physical->context, device->epoch,
                                      device->plugin->base.services, device->name);
}

/*
 * Unregister (`again` false) or register again every pinned block of the
 * device, with `context` current: cuMemHostRegister and its undoing need
 * one. Raw calls, under the context state's lock: nothing is marked.
 */
static void cuda_pinned_walk(accel_drv_device *device, acu_CUcontext context, bool again)
{
    const struct cuda_symbols *symbols = cuda_symbols_of(device);
    struct accel__pinned_device pinned = accel__cuda_pinned(device);
    acu_CUcontext popped = NULL;
    bool pushed = symbols->cuCtxPushCurrent_v2(context) == ACU_CUDA_SUCCESS;

    if (again)
        accel__pinned_register_all(&pinned);
    else
        accel__pinned_unregister_all(&pinned);
    if (pushed)
        (void)symbols->cuCtxPopCurrent_v2(&popped);
}

/*
 * Rebuild under the context state's lock: reset the primary context unless
 * another open just did, then take the (new) context with a retain, and
 * give back the retain this open held, so that the count stays one per
 * open. The reset frees everything made in the context, and drops the
 * registrations of the pinned blocks, which outlive it (pinned_host.h):
 * they are unregistered before and registered in the new context after.
 * Errors are recorded without marking the state, whose lock is held.
 */
static accel_status cuda_device_rebuild(void *user, bool fresh)
{
    accel_drv_device *device = user;
    accel_drv_plugin *plugin = device->plugin;
    const struct cuda_symbols *symbols = &plugin->symbols;
    acu_CUdevice handle = device->physical->handle;
    acu_CUcontext context = NULL;
    accel_status status;

    if (!fresh) {
        cuda_pinned_walk(device, atomic_load_explicit(&device->context, memory_order_acquire),
                         false);
        status = accel__cuda_plugin_result(plugin, symbols->cuDevicePrimaryCtxReset_v2(handle),
                                           "cuDevicePrimaryCtxReset_v2", ACCEL_ERR_DEVICE_LOST);
        if (status != ACCEL_OK)
            return status;
    }
    status = accel__cuda_plugin_result(plugin,
                                       symbols->cuDevicePrimaryCtxRetain(&context, handle),
                                       "cuDevicePrimaryCtxRetain", ACCEL_ERR_DEVICE_LOST);
    if (status != ACCEL_OK)
        return status;
    /* The retain just taken keeps the count above zero: no context is destroyed here. */
    status = accel__cuda_plugin_result(plugin, symbols->cuDevicePrimaryCtxRelease_v2(handle),
                                       "cuDevicePrimaryCtxRelease_v2", ACCEL_ERR_DEVICE_LOST);
    atomic_store_explicit(&device->context, context, memory_order_release);
    if (!fresh)
        cuda_pinned_walk(device, context, true);
    return status;
}

accel_status accel__cuda_device_reset(accel_drv_device *device)
{
    accel_status status = accel__context_state_reset(device->physical->context,
                                                     &device->epoch, cuda_device_rebuild,
                                                     device);

    device->plugin->base.services->log(ACCEL_LOG_DEBUG, "cuda: %s reset: %s", device->name,
                                  status == ACCEL_OK ? "done" : "failed");
    return status;
}
