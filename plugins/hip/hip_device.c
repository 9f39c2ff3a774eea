/*
 * Devices: made current on whichever thread calls, lost, and reset.
 *
 * HIP keeps a current device per thread (hipSetDevice) and creates each
 * device's context at first use; it lives until hipDeviceReset, whoever
 * holds it. An open holds nothing in the runtime: every entry that needs
 * the device goes through accel__hip_enter, which switches the calling
 * thread to the device only when it is not already current and switches
 * back on leave, so that a thread's own current device (the
 * application's) is left as it was found.
 *
 * Loss is the device context's, shared by every open of the device (see
 * context_state.h). A reset is hipDeviceReset with the device current:
 * the runtime frees the streams and memory made on the device in the
 * process, not its events or modules (README.md: what hipDeviceReset
 * frees); pinned host memory survives it, registered again. Since nothing else ends a HIP
 * context, a context left lost when every open has closed is reset at the
 * next first open (accel__context_state_open_rebuilt), which a CUDA
 * driver does by itself when the last open releases its primary context.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hip_plugin.h"

/* Make the open's device current on the calling thread unless it is already. */
static accel_status hip_make_current(accel_drv_device *device,
                                     struct hip_scope *scope)
{
    int ordinal = device->physical->handle;
    accel_status status;

    scope->previous = ordinal;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipGetDevice, (&scope->previous));
    if (status != ACCEL_OK || scope->previous == ordinal)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipSetDevice, (ordinal));
    scope->switched = status == ACCEL_OK;
    return status;
}

accel_status accel__hip_enter(accel_drv_device *device,
                              struct hip_scope *out_scope)
{
    accel_status status;

    *out_scope = (struct hip_scope){0};
    status = accel__context_state_enter(device->physical->context, &device->epoch,
                                        device->plugin->base.services,
                                        device->name);
    if (status != ACCEL_OK)
        return status;
    out_scope->gated = true;
    status = hip_make_current(device, out_scope);
    if (status != ACCEL_OK)
        accel__hip_leave(device, out_scope);
    return status;
}

bool accel__hip_enter_to_release(accel_drv_device *device,
                                 struct hip_scope *out_scope)
{
    *out_scope = (struct hip_scope){0};
    if (!accel__context_state_enter_to_release(
            device->physical->context, &device->epoch,
            device->plugin->base.services, device->name))
        return false;
    out_scope->gated = true;
    if (hip_make_current(device, out_scope) == ACCEL_OK)
        return true;
    accel__hip_leave(device, out_scope);
    return false;
}

accel_status accel__hip_enter_any_epoch(accel_drv_device *device,
                                        struct hip_scope *out_scope)
{
    accel_status status;

    *out_scope = (struct hip_scope){0};
    (void)accel__context_state_enter(device->physical->context, NULL,
                                     device->plugin->base.services, device->name);
    out_scope->gated = true;
    status = hip_make_current(device, out_scope);
    if (status != ACCEL_OK)
        accel__hip_leave(device, out_scope);
    return status;
}

void accel__hip_leave(accel_drv_device *device, const struct hip_scope *scope)
{
    if (scope->switched)
        accel__hip_ignore(device,
                          hip_symbols_of(device)->hipSetDevice(scope->previous),
                          "hipSetDevice");
    if (scope->gated)
        accel__context_state_leave(device->physical->context);
}

/*
 * Reset the device's context, under the context state's lock: so errors
 * are recorded without marking the state. Unless another open just did
 * (`fresh`): the new context is already there, and a second reset would
 * throw away that open's new objects. The pinned blocks outlive the reset
 * (pinned_host.h): unregistered before it, with the device current, and
 * registered again after, in the new context.
 */
static accel_status hip_device_rebuild(void *user, bool fresh)
{
    accel_drv_device *device = user;
    accel_drv_plugin *plugin = device->plugin;
    const struct hip_symbols *symbols = &plugin->symbols;
    int previous = device->physical->handle;
    struct accel__pinned_device pinned;
    char described[256];
    ahip_hipError_t result;
    accel_status status;

    if (fresh)
        return ACCEL_OK;
    status = accel__hip_plugin_result(plugin, symbols->hipGetDevice(&previous),
                                      "hipGetDevice", ACCEL_ERR_DEVICE_LOST);
    if (status != ACCEL_OK)
        return status;
    status = accel__hip_plugin_result(
        plugin, symbols->hipSetDevice(device->physical->handle), "hipSetDevice",
        ACCEL_ERR_DEVICE_LOST);
    if (status != ACCEL_OK)
        return status;
    pinned = accel__hip_pinned(device);
    accel__pinned_unregister_all(&pinned);
    result = symbols->hipDeviceReset();
    if (result == AHIP_hipSuccess) {
        accel__pinned_register_all(&pinned);
    } else {
        accel__hip_describe(plugin, result, described, sizeof(described));
        status = accel__context_state_refuse(
            device->physical->context, plugin->base.services, device->name,
            "hipDeviceReset failed: %s", described);
    }
    if (previous != device->physical->handle)
        (void)symbols->hipSetDevice(previous);
    return status;
}

accel_status accel__hip_device_open(accel_drv_plugin *plugin, uint32_t index,
                                    accel_drv_device **out_device)
{
    accel_drv_device *device;
    accel_status status;

    *out_device = NULL;
    if (index >= plugin->base.device_count)
        return plugin->base.services->set_error(
            ACCEL_ERR_NO_DEVICE, "device_open: no HIP device %u; there are %u",
            index, plugin->base.device_count);
    device = calloc(1, sizeof(*device));
    if (device == NULL)
        return plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "calloc of a HIP device failed");
    device->plugin = plugin;
    device->physical = &plugin->base.devices[index];
    snprintf(device->name, sizeof(device->name), "hip:%u", index);
    status = accel__context_state_open_rebuilt(
        device->physical->context, hip_device_rebuild, device, &device->epoch);
    if (status != ACCEL_OK) {
        free(device);
        return status;
    }
    *out_device = device;
    return ACCEL_OK;
}

void accel__hip_device_close(accel_drv_device *device)
{
    if (device == NULL)
        return;
    accel__context_state_close(device->physical->context);
    free(device);
}

accel_status accel__hip_device_status(accel_drv_device *device)
{
    return accel__context_state_check(device->physical->context, device->epoch,
                                      device->plugin->base.services,
                                      device->name);
}

accel_status accel__hip_device_reset(accel_drv_device *device)
{
    accel_status status = accel__context_state_reset(
        device->physical->context, &device->epoch, hip_device_rebuild, device,
        device->plugin->base.services);

    device->plugin->base.services->log(ACCEL_LOG_DEBUG, "hip: %s reset: %s",
                                       device->name,
                                       status == ACCEL_OK ? "done" : "failed");
    return status;
}

/*
 * The handles a vendor library (RCCL, rocBLAS) needs to work in order with
 * this device's streams: its ordinal (HIP has no context to hand over: the
 * library makes the device current with hipSetDevice) and the stream's
 * hipStream_t, which is the plugin's stream handle itself.
 */
accel_status accel__hip_native_handles(accel_drv_device *device,
                                       accel_drv_stream *stream,
                                       struct accel_native_handles *out)
{
    struct accel__native_plugin *native = &device->plugin->base;

    return accel__native_handles_fill(
        device->plugin, ACCEL_NATIVE_HIP,
        (int)(device->physical - native->devices), NULL,
        stream == NULL ? NULL : (void *)hip_stream_handle(stream), out);
}
