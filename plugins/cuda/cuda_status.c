/*
 * CUresult to accel_status: the one mapping, with the native name in every
 * detail.
 *
 * Codes with a meaning of their own come first in the table (the first
 * match wins); every other code follows, for its name, and takes the
 * status of what the failed call was doing. Sticky codes are those that
 * cuda.h documents as leaving the context unusable ("any further CUDA work
 * will return the same error"): they make the device lost until a reset.
 * Out of memory is not among them: the device stays usable.
 */
#include <stdio.h>

#include "cuda_plugin.h"
#include "native_status.h"

#define CUDA_MAPPED(name, status, hint)                                        \
    {ACU_##name, #name, ACCEL__NATIVE_MAPPED, status, hint},
#define CUDA_STICKY(name)                                                      \
    {ACU_##name, #name, ACCEL__NATIVE_STICKY, ACCEL_ERR_DEVICE_LOST, NULL},
#define CUDA_NAMED(name, value)                                                \
    {value, #name, ACCEL__NATIVE_FALLBACK, ACCEL_OK, NULL},

static const struct accel__native_code cuda_code_list[] = {
    /* No device, and why. */
    CUDA_MAPPED(
        CUDA_ERROR_STUB_LIBRARY, ACCEL_ERR_NO_DEVICE,
        "the CUDA stub library, not a driver (the toolkit's stubs/libcuda.so "
        "is "
        "for linking only)") CUDA_MAPPED(CUDA_ERROR_NO_DEVICE, ACCEL_ERR_NO_DEVICE,
                                         "no CUDA-capable device is detected")
        CUDA_MAPPED(CUDA_ERROR_INVALID_DEVICE, ACCEL_ERR_NO_DEVICE, NULL) CUDA_MAPPED(
            CUDA_ERROR_DEVICE_UNAVAILABLE,
            ACCEL_ERR_NO_DEVICE, "the device is unavailable (exclusive-process or prohibited compute mode?)")
            CUDA_MAPPED(CUDA_ERROR_DEVICE_NOT_LICENSED, ACCEL_ERR_NO_DEVICE, NULL)
                CUDA_MAPPED(
                    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
                    ACCEL_ERR_NO_DEVICE, "the driver library and the kernel module are different versions")
                    CUDA_MAPPED(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
                                ACCEL_ERR_NO_DEVICE, NULL)
                        CUDA_MAPPED(CUDA_ERROR_SYSTEM_NOT_READY,
                                    ACCEL_ERR_NO_DEVICE, NULL)
    /* Memory: never a loss. */
    CUDA_MAPPED(CUDA_ERROR_OUT_OF_MEMORY, ACCEL_ERR_OUT_OF_DEVICE_MEMORY, NULL)
    /* Queries and lookups. */
    CUDA_MAPPED(CUDA_ERROR_NOT_READY, ACCEL_NOT_READY, NULL) CUDA_MAPPED(
        CUDA_ERROR_NOT_FOUND, ACCEL_ERR_NOT_FOUND, NULL)
        CUDA_MAPPED(CUDA_ERROR_NOT_SUPPORTED, ACCEL_ERR_NOT_SUPPORTED, NULL)
            CUDA_MAPPED(CUDA_ERROR_NOT_PERMITTED, ACCEL_ERR_NOT_SUPPORTED, NULL)
                CUDA_MAPPED(CUDA_ERROR_TIMEOUT, ACCEL_ERR_TIMEOUT, NULL)
    /* Module images. */
    CUDA_MAPPED(CUDA_ERROR_INVALID_IMAGE, ACCEL_ERR_MODULE, NULL) CUDA_MAPPED(
        CUDA_ERROR_INVALID_PTX, ACCEL_ERR_MODULE,
        NULL) CUDA_MAPPED(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, ACCEL_ERR_MODULE,
                          "the PTX is newer than this driver's JIT compiler")
        CUDA_MAPPED(CUDA_ERROR_NO_BINARY_FOR_GPU, ACCEL_ERR_MODULE,
                    "the image has no code for this GPU's architecture")
            CUDA_MAPPED(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, ACCEL_ERR_MODULE,
                        NULL) CUDA_MAPPED(CUDA_ERROR_JIT_COMPILATION_DISABLED,
                                          ACCEL_ERR_MODULE, NULL)
                CUDA_MAPPED(CUDA_ERROR_INVALID_SOURCE, ACCEL_ERR_MODULE, NULL)
                    CUDA_MAPPED(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND,
                                ACCEL_ERR_MODULE, NULL)
                        CUDA_MAPPED(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                                    ACCEL_ERR_MODULE, NULL)
    /* Launches. */
    CUDA_MAPPED(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, ACCEL_ERR_LAUNCH, NULL)
        CUDA_MAPPED(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, ACCEL_ERR_LAUNCH,
                    NULL) CUDA_MAPPED(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                                      ACCEL_ERR_LAUNCH, NULL)
            CUDA_MAPPED(CUDA_ERROR_INVALID_CLUSTER_SIZE, ACCEL_ERR_LAUNCH, NULL)
    /* Sticky: the context is poisoned until a reset. */
    CUDA_STICKY(CUDA_ERROR_ECC_UNCORRECTABLE) CUDA_STICKY(
        CUDA_ERROR_NVLINK_UNCORRECTABLE) CUDA_STICKY(CUDA_ERROR_CONTAINED)
        CUDA_STICKY(CUDA_ERROR_ILLEGAL_ADDRESS)
            CUDA_STICKY(CUDA_ERROR_LAUNCH_TIMEOUT) CUDA_STICKY(
                CUDA_ERROR_CONTEXT_IS_DESTROYED) CUDA_STICKY(CUDA_ERROR_ASSERT)
                CUDA_STICKY(CUDA_ERROR_HARDWARE_STACK_ERROR)
                    CUDA_STICKY(CUDA_ERROR_ILLEGAL_INSTRUCTION)
                        CUDA_STICKY(CUDA_ERROR_MISALIGNED_ADDRESS) CUDA_STICKY(
                            CUDA_ERROR_INVALID_ADDRESS_SPACE)
                            CUDA_STICKY(CUDA_ERROR_INVALID_PC) CUDA_STICKY(
                                CUDA_ERROR_LAUNCH_FAILED)
                                CUDA_STICKY(CUDA_ERROR_TENSOR_MEMORY_LEAK)
                                    CUDA_STICKY(CUDA_ERROR_MPS_CLIENT_TERMINATED)
                                        CUDA_STICKY(CUDA_ERROR_EXTERNAL_DEVICE)
    /* Every code, for its name; the caller's status. */
    ACU_RESULT_LIST(CUDA_NAMED)};

static const struct accel__native_codes cuda_codes = {
    cuda_code_list, sizeof(cuda_code_list) / sizeof(cuda_code_list[0])};

/* The driver's own sentence for a code, when it has one to give. */
static const char *cuda_driver_text(const struct cuda_symbols *symbols,
                                    acu_CUresult result)
{
    const char *text = NULL;

    if (symbols->cuGetErrorString == NULL ||
        symbols->cuGetErrorString(result, &text) != ACU_CUDA_SUCCESS)
        return NULL;
    return text;
}

/*
 * A sticky code poisons the context, unless the open that called is from
 * an epoch a reset has since ended: its failure is its old objects', not
 * the new context's (context_state.h).
 */
static void cuda_mark_if_sticky(accel_drv_device *device, acu_CUresult result,
                                const char *call)
{
    const struct accel__native_code *entry = accel__native_code_find(
        &cuda_codes, (int)result);

    if (entry != NULL && entry->kind == ACCEL__NATIVE_STICKY)
        accel__context_state_mark_lost_in(device->physical->context,
                                          device->epoch, call, entry->name);
}

static accel_status cuda_error(accel_drv_plugin *plugin, accel_drv_device *device,
                               acu_CUresult result, const char *call,
                               accel_status fallback, const char *extra)
{
    if (result == ACU_CUDA_SUCCESS)
        return ACCEL_OK;
    if (device != NULL)
        cuda_mark_if_sticky(device, result, call);
    return accel__native_error(
        plugin->base.services, &cuda_codes, (int)result, fallback, call,
        cuda_driver_text(&plugin->symbols, result), extra, NULL);
}

accel_status accel__cuda_result(accel_drv_device *device, acu_CUresult result,
                                const char *call, accel_status fallback)
{
    return cuda_error(device->plugin, device, result, call, fallback, NULL);
}

accel_status accel__cuda_result_with(accel_drv_device *device,
                                     acu_CUresult result, const char *call,
                                     accel_status fallback, const char *extra)
{
    return cuda_error(device->plugin, device, result, call, fallback, extra);
}

accel_status accel__cuda_plugin_result(accel_drv_plugin *plugin,
                                       acu_CUresult result, const char *call,
                                       accel_status fallback)
{
    return cuda_error(plugin, NULL, result, call, fallback, NULL);
}

void accel__cuda_ignore(accel_drv_device *device, acu_CUresult result,
                        const char *call)
{
    if (result == ACU_CUDA_SUCCESS)
        return;
    cuda_mark_if_sticky(device, result, call);
    /* Not accel__native_ignore: that marks without asking which epoch the caller is from. */
    device->plugin->base.services->log(
        ACCEL_LOG_DEBUG, "%s: %s failed: %s (%d)", device->name, call,
        accel__native_code_name(&cuda_codes, (int)result), (int)result);
}

void accel__cuda_describe(accel_drv_plugin *plugin, acu_CUresult result,
                          char *out, size_t size)
{
    accel__native_describe(&cuda_codes, (int)result,
                           cuda_driver_text(&plugin->symbols, result), NULL,
                           out, size);
}
