/*
 * hipError_t to accel_status: the one mapping, with the native name in
 * every detail.
 *
 * Codes with a meaning of their own come first in the table (the first
 * match wins); every other code follows, for its name, and takes the
 * status of what the failed call was doing. Sticky codes are those after
 * which the HIP runtime, like CUDA's, fails every later call on the device
 * until hipDeviceReset: a faulting or failed kernel, an uncorrectable ECC
 * error, a device-side assert. They make the device lost until a reset.
 * Out of memory is not among them: the device stays usable.
 */
#include <stdio.h>
#include <string.h>

#include "hip_plugin.h"
#include "native_status.h"

#define HIP_MAPPED(name, status, hint)                                         \
    {AHIP_##name, #name, ACCEL__NATIVE_MAPPED, status, hint},
#define HIP_STICKY(name)                                                       \
    {AHIP_##name, #name, ACCEL__NATIVE_STICKY, ACCEL_ERR_DEVICE_LOST, NULL},
#define HIP_NAMED(name, value)                                                 \
    {value, #name, ACCEL__NATIVE_FALLBACK, ACCEL_OK, NULL},

static const struct accel__native_code hip_code_list[] = {
    /* No device, and why. */
    HIP_MAPPED(hipErrorNoDevice, ACCEL_ERR_NO_DEVICE,
               "the HIP runtime found no AMD GPU it can use")
        HIP_MAPPED(hipErrorInvalidDevice, ACCEL_ERR_NO_DEVICE, NULL) HIP_MAPPED(
            hipErrorInsufficientDriver, ACCEL_ERR_NO_DEVICE,
            "the amdgpu kernel driver is missing or older than the HIP runtime")
    /* Memory: never a loss. */
    HIP_MAPPED(hipErrorOutOfMemory, ACCEL_ERR_OUT_OF_DEVICE_MEMORY, NULL)
    /* Queries and lookups. */
    HIP_MAPPED(hipErrorNotReady, ACCEL_NOT_READY, NULL)
        HIP_MAPPED(hipErrorNotFound, ACCEL_ERR_NOT_FOUND, NULL)
            HIP_MAPPED(hipErrorNotSupported, ACCEL_ERR_NOT_SUPPORTED, NULL)
    /* Module images. */
    HIP_MAPPED(hipErrorInvalidImage, ACCEL_ERR_MODULE, NULL) HIP_MAPPED(
        hipErrorInvalidKernelFile, ACCEL_ERR_MODULE,
        NULL) HIP_MAPPED(hipErrorNoBinaryForGpu, ACCEL_ERR_MODULE,
                         "the image has no code for this GPU's target")
        HIP_MAPPED(hipErrorInvalidSource, ACCEL_ERR_MODULE, NULL) HIP_MAPPED(
            hipErrorSharedObjectSymbolNotFound, ACCEL_ERR_MODULE, NULL)
            HIP_MAPPED(hipErrorSharedObjectInitFailed, ACCEL_ERR_MODULE, NULL)
    /* Launches. */
    HIP_MAPPED(hipErrorLaunchOutOfResources, ACCEL_ERR_LAUNCH, NULL)
        HIP_MAPPED(hipErrorInvalidConfiguration, ACCEL_ERR_LAUNCH, NULL)
            HIP_MAPPED(hipErrorCooperativeLaunchTooLarge, ACCEL_ERR_LAUNCH, NULL)
                HIP_MAPPED(hipErrorInvalidDeviceFunction, ACCEL_ERR_LAUNCH, NULL)
    /* Sticky: the device is poisoned until a reset. */
    HIP_STICKY(hipErrorECCNotCorrectable) HIP_STICKY(hipErrorIllegalAddress)
        HIP_STICKY(hipErrorLaunchTimeOut) HIP_STICKY(hipErrorContextIsDestroyed)
            HIP_STICKY(hipErrorAssert) HIP_STICKY(hipErrorLaunchFailure)
                HIP_STICKY(hipErrorPriorLaunchFailure)
    /* Every code, for its name; the caller's status. */
    AHIP_ERROR_LIST(HIP_NAMED) AHIP_ERROR_LIST_LATER(HIP_NAMED)};

static const struct accel__native_codes hip_codes = {
    hip_code_list, sizeof(hip_code_list) / sizeof(hip_code_list[0])};

/*
 * The runtime's own sentence for a code, when it has one beyond the name:
 * ROCm 5's hipGetErrorString gives the name again, which says nothing new.
 */
static const char *hip_runtime_text(const struct hip_symbols *symbols,
                                    ahip_hipError_t result)
{
    const char *text;

    if (symbols->hipGetErrorString == NULL)
        return NULL;
    text = symbols->hipGetErrorString(result);
    if (text == NULL ||
        strcmp(text, accel__native_code_name(&hip_codes, (int)result)) == 0 ||
        strcmp(text, "hipErrorUnknown") == 0)
        return NULL;
    return text;
}

/*
 * A sticky code poisons the context, unless the open that called is from
 * an epoch a reset has since ended: its failure is its old objects', not
 * the new context's (context_state.h).
 */
static void hip_mark_if_sticky(accel_drv_device *device, ahip_hipError_t result,
                               const char *call)
{
    const struct accel__native_code *entry = accel__native_code_find(
        &hip_codes, (int)result);

    if (entry != NULL && entry->kind == ACCEL__NATIVE_STICKY)
        accel__context_state_mark_lost_in(device->physical->context,
                                          device->epoch, call, entry->name);
}

static accel_status hip_error(accel_drv_plugin *plugin, accel_drv_device *device,
                              ahip_hipError_t result, const char *call,
                              accel_status fallback, const char *extra)
{
    if (result == AHIP_hipSuccess)
        return ACCEL_OK;
    if (device != NULL)
        hip_mark_if_sticky(device, result, call);
    return accel__native_error(
        plugin->base.services, &hip_codes, (int)result, fallback, call,
        hip_runtime_text(&plugin->symbols, result), extra, NULL);
}

accel_status accel__hip_result(accel_drv_device *device, ahip_hipError_t result,
                               const char *call, accel_status fallback)
{
    return hip_error(device->plugin, device, result, call, fallback, NULL);
}

accel_status accel__hip_result_with(accel_drv_device *device,
                                    ahip_hipError_t result, const char *call,
                                    accel_status fallback, const char *extra)
{
    return hip_error(device->plugin, device, result, call, fallback, extra);
}

accel_status accel__hip_plugin_result(accel_drv_plugin *plugin,
                                      ahip_hipError_t result, const char *call,
                                      accel_status fallback)
{
    return hip_error(plugin, NULL, result, call, fallback, NULL);
}

accel_status accel__hip_result_as(accel_drv_device *device,
                                  ahip_hipError_t result, const char *call,
                                  accel_status status)
{
    const struct accel__native_code *code = accel__native_code_find(&hip_codes,
                                                                    (int)result);
    char what[ACCEL__NATIVE_DETAIL_MAX];

    if (result == AHIP_hipSuccess ||
        (code != NULL && code->kind == ACCEL__NATIVE_STICKY))
        return accel__hip_result(device, result, call, status);
    accel__hip_describe(device->plugin, result, what, sizeof(what));
    return device->plugin->base.services->set_error(status, "%s failed: %s",
                                                    call, what);
}

void accel__hip_ignore(accel_drv_device *device, ahip_hipError_t result,
                       const char *call)
{
    if (result == AHIP_hipSuccess)
        return;
    hip_mark_if_sticky(device, result, call);
    /* Not accel__native_ignore: that marks without asking which epoch the caller is from. */
    device->plugin->base.services->log(
        ACCEL_LOG_DEBUG, "%s: %s failed: %s (%d)", device->name, call,
        accel__native_code_name(&hip_codes, (int)result), (int)result);
}

void accel__hip_describe(accel_drv_plugin *plugin, ahip_hipError_t result,
                         char *out, size_t size)
{
    accel__native_describe(&hip_codes, (int)result,
                           hip_runtime_text(&plugin->symbols, result), NULL,
                           out, size);
}
