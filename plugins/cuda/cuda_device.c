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

/* Make the open's context current on the calling thread unless it is already. */
static accel_status cuda_make_current(accel_drv_device *device,
                                      struct cuda_scope *scope)
{
    acu_CUcontext context = atomic_load_explicit(&device->context,
                                                 memory_order_acquire);
    accel_status status;

    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuCtxGetCurrent,
                       (&scope->previous));
    if (status != ACCEL_OK || scope->previous == context)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuCtxPushCurrent_v2, (context));
    scope->pushed = status == ACCEL_OK;
    return status;
}

accel_status accel__cuda_enter(accel_drv_device *device,
                               struct cuda_scope *out_scope)
{
    struct accel__context_state *state = device->physical->context;
    accel_status status;

    *out_scope = (struct cuda_scope){0};
    status = accel__context_state_enter(
        state, &device->epoch, device->plugin->base.services, device->name);
    if (status != ACCEL_OK)
        return status;
    out_scope->gated = true;
    status = cuda_make_current(device, out_scope);
    if (status != ACCEL_OK)
        accel__cuda_leave(device, out_scope);
    return status;
}

bool accel__cuda_enter_to_release(accel_drv_device *device,
                                  struct cuda_scope *out_scope)
{
    struct accel__context_state *state = device->physical->context;

    *out_scope = (struct cuda_scope){0};
    if (!accel__context_state_enter_to_release(
            state, &device->epoch, device->plugin->base.services, device->name))
        return false;
    out_scope->gated = true;
    if (cuda_make_current(device, out_scope) == ACCEL_OK)
        return true;
    accel__cuda_leave(device, out_scope);
    return false;
}

accel_status accel__cuda_enter_any_epoch(accel_drv_device *device,
                                         struct cuda_scope *out_scope)
{
    struct accel__context_state *state = device->physical->context;
    accel_status status;

    *out_scope = (struct cuda_scope){0};
    (void)accel__context_state_enter(state, NULL, device->plugin->base.services,
                                     device->name);
    out_scope->gated = true;
    status = cuda_make_current(device, out_scope);
    if (status != ACCEL_OK)
        accel__cuda_leave(device, out_scope);
    return status;
}

/*
 * Pop the context pushed at enter. A pop the driver refuses may leave it on
 * the application's thread, current for the application's own later calls:
 * then the caller's context is put back with cuCtxSetCurrent, which
 * replaces the top of the thread's stack.
 */
static void cuda_pop(accel_drv_device *device, const struct cuda_scope *scope)
{
    const struct cuda_symbols *symbols = cuda_symbols_of(device);
    acu_CUcontext context = atomic_load_explicit(&device->context,
                                                 memory_order_acquire);
    acu_CUcontext popped = NULL, current = NULL;
    acu_CUresult result = symbols->cuCtxPopCurrent_v2(&popped);

    if (result == ACU_CUDA_SUCCESS)
        return;
    accel__cuda_ignore(device, result, "cuCtxPopCurrent_v2");
    if (symbols->cuCtxGetCurrent(&current) == ACU_CUDA_SUCCESS &&
        current != context)
        return;
    accel__cuda_ignore(device, symbols->cuCtxSetCurrent(scope->previous),
                       "cuCtxSetCurrent");
}

void accel__cuda_leave(accel_drv_device *device, const struct cuda_scope *scope)
{
    if (scope->pushed)
        cuda_pop(device, scope);
    if (scope->gated)
        accel__context_state_leave(device->physical->context);
}

accel_status accel__cuda_device_open(accel_drv_plugin *plugin, uint32_t index,
                                     accel_drv_device **out_device)
{
    accel_drv_device *device;
    acu_CUcontext context = NULL;
    accel_status status;

    *out_device = NULL;
    if (index >= plugin->base.device_count)
        return plugin->base.services->set_error(
            ACCEL_ERR_NO_DEVICE, "device_open: no CUDA device %u; there are %u",
            index, plugin->base.device_count);
    device = calloc(1, sizeof(*device));
    if (device == NULL)
        return plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "calloc of a CUDA device failed");
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
                                      device->plugin->base.services,
                                      device->name);
}

/*
 * Unregister (`again` false) or register again every pinned block of the
 * device, with `context` current: cuMemHostRegister and its undoing need
 * one. Raw calls, under the context state's lock: nothing is marked.
 */
static void cuda_pinned_walk(accel_drv_device *device, acu_CUcontext context,
                             bool again)
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
 * another open just did. The reset keeps the context's handle and this
 * open's retain (cuda.h: "resetting the primary context does not release
 * it"), so there is nothing to take again. It frees everything made in the
 * context, and drops the registrations of the pinned blocks, which outlive
 * it (pinned_host.h): they are unregistered before and registered in the
 * reset context after. A reset the driver refuses is
 * ACCEL_ERR_UNRECOVERABLE with the driver's reason: cuda.h says a sticky
 * error may need a new process. Errors are recorded without marking the
 * state, whose lock is held.
 */
static accel_status cuda_device_rebuild(void *user, bool fresh)
{
    accel_drv_device *device = user;
    accel_drv_plugin *plugin = device->plugin;
    const struct cuda_symbols *symbols = &plugin->symbols;
    acu_CUcontext context = atomic_load_explicit(&device->context,
                                                 memory_order_acquire);
    acu_CUresult result;
    char described[256];

    if (fresh)
        return ACCEL_OK;
    cuda_pinned_walk(device, context, false);
    result = symbols->cuDevicePrimaryCtxReset_v2(device->physical->handle);
    if (result != ACU_CUDA_SUCCESS) {
        accel__cuda_describe(plugin, result, described, sizeof(described));
        return accel__context_state_refuse(
            device->physical->context, plugin->base.services, device->name,
            "cuDevicePrimaryCtxReset_v2 failed: %s; the driver "
            "may need a new process",
            described);
    }
    cuda_pinned_walk(device, context, true);
    return ACCEL_OK;
}

accel_status accel__cuda_device_reset(accel_drv_device *device)
{
    accel_status status = accel__context_state_reset(
        device->physical->context, &device->epoch, cuda_device_rebuild, device,
        device->plugin->base.services);

    device->plugin->base.services->log(ACCEL_LOG_DEBUG, "cuda: %s reset: %s",
                                       device->name,
                                       status == ACCEL_OK ? "done" : "failed");
    return status;
}

/*
 * The handles a vendor library (NCCL, cuBLAS) needs to work in order with
 * this device's streams: its ordinal, the primary context this open
 * retained (the context every stream of this open belongs to) and the
 * stream's CUstream, which is the plugin's stream handle itself.
 */
accel_status accel__cuda_native_handles(accel_drv_device *device,
                                        accel_drv_stream *stream,
                                        struct accel_native_handles *out)
{
    struct accel__native_plugin *native = &device->plugin->base;

    return accel__native_handles_fill(
        device->plugin, ACCEL_NATIVE_CUDA,
        (int)(device->physical - native->devices),
        (void *)atomic_load(&device->context),
        stream == NULL ? NULL : (void *)cuda_stream_handle(stream), out);
}
