/*
 * Modules, kernels and launches.
 *
 * A module image is PTX (text, JIT-compiled by the driver for the GPU at
 * hand), a cubin (an ELF object for one architecture) or a fatbin (several
 * of either), all taken by cuModuleLoadDataEx. PTX must end in a NUL the
 * driver can find, and an image read from a file has none: PTX is copied
 * with one added. The JIT's error log becomes the error's detail.
 *
 * The ABI's launch arguments (args[i] pointing at argument i's bytes) are
 * exactly cuLaunchKernel's kernelParams, and the driver copies them before
 * it returns, as the ABI asks.
 *
 * A kernel has limits of its own, tighter than the device's the host
 * checks: the threads per block its registers and launch bounds allow, and
 * its static shared memory. They are read at kernel_get, and a launch past
 * them is refused before anything is enqueued, with the reason (the driver
 * would only say CUDA_ERROR_INVALID_VALUE, or fail late). Dynamic shared
 * memory above 48 KiB needs the kernel's opt-in
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), which the first
 * launch that asks for it sets, up to the device's opt-in limit that the
 * props report as max_shared_bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plugin.h"

/* Room for the JIT's error log; the detail keeps what fits of it. */
#define CUDA_JIT_LOG_BYTES 4096u

/* The first word of a fatbin (fatbinary.h's FATBIN_MAGIC), little-endian. */
static const unsigned char cuda_fatbin_magic[4] = {0x50, 0xed, 0x55, 0xba};
static const unsigned char cuda_elf_magic[4] = {0x7f, 'E', 'L', 'F'};

/* Binary images go to the driver as they are; anything else is PTX text. */
static bool cuda_image_is_binary(const unsigned char *image, size_t size)
{
    return size >= 4 && (memcmp(image, cuda_elf_magic, 4) == 0 ||
                         memcmp(image, cuda_fatbin_magic, 4) == 0);
}

/*
 * The bytes to hand cuModuleLoadDataEx: the image itself, or a copy of PTX
 * with the NUL the driver looks for. *out_copy is what to free after.
 */
static accel_status cuda_image_for_driver(accel_drv_device *device,
                                          const void *image, size_t size,
                                          const void **out_image, void **out_copy)
{
    char *text;

    *out_image = image;
    *out_copy = NULL;
    if (cuda_image_is_binary(image, size) || memchr(image, '\0', size) != NULL)
        return ACCEL_OK;
    text = malloc(size + 1);
    if (text == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "module_load: malloc of %zu bytes of "
            "PTX failed",
            size + 1);
    memcpy(text, image, size);
    text[size] = '\0';
    *out_image = text;
    *out_copy = text;
    return ACCEL_OK;
}

/* Load, with the JIT's error log in the detail when it fails. */
static accel_status cuda_module_load_logged(accel_drv_device *device,
                                            const void *image,
                                            acu_CUmodule *out_module)
{
    char log[CUDA_JIT_LOG_BYTES] = "";
    acu_CUjit_option options[] = {ACU_CU_JIT_ERROR_LOG_BUFFER,
                                  ACU_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof(log)};
    acu_CUresult result;

    result = cuda_symbols_of(device)->cuModuleLoadDataEx(
        out_module, image, (unsigned int)(sizeof(options) / sizeof(options[0])),
        options, values);
    if (result == ACU_CUDA_SUCCESS)
        return ACCEL_OK;
    log[sizeof(log) - 1] = '\0';
    return accel__cuda_result_with(device, result, "cuModuleLoadDataEx",
                                   ACCEL_ERR_MODULE, log);
}

/* The plugin's record of a module just loaded; on failure the module is unloaded. */
static accel_status cuda_module_record(accel_drv_device *device,
                                       acu_CUmodule handle,
                                       accel_drv_module **out_module)
{
    accel_drv_module *module = calloc(1, sizeof(*module));

    if (module != NULL && pthread_mutex_init(&module->lock, NULL) == 0) {
        module->handle = handle;
        *out_module = module;
        return ACCEL_OK;
    }
    free(module);
    accel__cuda_ignore(device, cuda_symbols_of(device)->cuModuleUnload(handle),
                       "cuModuleUnload");
    return device->plugin->base.services->set_error(
        ACCEL_ERR_OUT_OF_HOST_MEMORY, "module_load: out of host memory for the "
                                      "module's record");
}

accel_status accel__cuda_module_load(accel_drv_device *device, const void *image,
                                     size_t size, accel_drv_module **out_module)
{
    acu_CUmodule module = NULL;
    const void *bytes;
    struct cuda_scope scope;
    accel_status status;
    void *copy;

    *out_module = NULL;
    if (image == NULL || size == 0)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "module_load: an empty image");
    status = cuda_image_for_driver(device, image, size, &bytes, &copy);
    if (status != ACCEL_OK)
        return status;
    status = accel__cuda_enter(device, &scope);
    if (status == ACCEL_OK) {
        status = cuda_module_load_logged(device, bytes, &module);
        if (status == ACCEL_OK)
            status = cuda_module_record(device, module, out_module);
        accel__cuda_leave(device, &scope);
    }
    free(copy);
    return status;
}

/* The records go whether or not the driver still has the module. */
static void cuda_module_free(accel_drv_module *module)
{
    while (module->kernels != NULL) {
        accel_drv_kernel *kernel = module->kernels;

        module->kernels = kernel->next;
        free(kernel);
    }
    pthread_mutex_destroy(&module->lock);
    free(module);
}

void accel__cuda_module_unload(accel_drv_device *device, accel_drv_module *module)
{
    struct cuda_scope scope;

    if (module == NULL)
        return;
    if (accel__cuda_enter_to_release(device, &scope)) {
        accel__cuda_ignore(
            device, cuda_symbols_of(device)->cuModuleUnload(module->handle),
            "cuModuleUnload");
        accel__cuda_leave(device, &scope);
    }
    cuda_module_free(module);
}

/*
 * What the driver says of a kernel's parameters: cuFuncGetParamInfo
 * answers for each index below the count and refuses the first past it.
 * Unknown without the entry (drivers before 12.4), on any other error, and
 * for a first refusal, which cannot tell "no parameters" from "no
 * information": the host then leaves the arguments unchecked.
 */
static void cuda_kernel_signature(accel_drv_device *device,
                                  acu_CUfunction function,
                                  struct accel_kernel_signature *out_signature)
{
    const struct cuda_symbols *symbols = cuda_symbols_of(device);
    uint32_t count = 0;

    out_signature->param_count = ACCEL_PARAM_COUNT_UNKNOWN;
    if (symbols->cuFuncGetParamInfo == NULL)
        return;
    for (;;) {
        size_t offset = 0, size = 0;
        acu_CUresult result = symbols->cuFuncGetParamInfo(function, count,
                                                          &offset, &size);

        if (result == ACU_CUDA_ERROR_INVALID_VALUE && count != 0)
            break;
        if (result != ACU_CUDA_SUCCESS || count == ACCEL_KERNEL_MAX_PARAMS ||
            size > UINT32_MAX)
            return;
        out_signature->param_sizes[count++] = (uint32_t)size;
    }
    out_signature->param_count = count;
}

/* One attribute of a kernel, as a non-negative number. */
static accel_status cuda_kernel_attribute(accel_drv_device *device,
                                          acu_CUfunction function,
                                          acu_CUfunction_attribute attribute,
                                          uint32_t *out_value)
{
    int value = 0;
    accel_status status = CUDA_CALL(device, ACCEL_ERR_MODULE, cuFuncGetAttribute,
                                    (&value, attribute, function));

    *out_value = value > 0 ? (uint32_t)value : 0;
    return status;
}

/* The module's record of `function`, made with its limits at the first lookup. Lock held. */
static accel_status cuda_kernel_record(accel_drv_device *device,
                                       accel_drv_module *module,
                                       acu_CUfunction function,
                                       accel_drv_kernel **out_kernel)
{
    accel_drv_kernel *kernel;
    uint32_t dynamic = 0;
    accel_status status;

    *out_kernel = NULL;
    for (kernel = module->kernels; kernel != NULL; kernel = kernel->next) {
        if (kernel->function == function) {
            *out_kernel = kernel;
            return ACCEL_OK;
        }
    }
    kernel = calloc(1, sizeof(*kernel));
    if (kernel == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "kernel_get: calloc failed");
    kernel->function = function;
    kernel->module = module;
    status = cuda_kernel_attribute(device, function,
                                   ACU_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                   &kernel->max_threads);
    if (status == ACCEL_OK)
        status = cuda_kernel_attribute(device, function,
                                       ACU_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       &kernel->static_shared);
    if (status == ACCEL_OK)
        status = cuda_kernel_attribute(
            device, function,
            ACU_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &dynamic);
    atomic_init(&kernel->dynamic_shared, dynamic);
    if (status != ACCEL_OK) {
        free(kernel);
        return status;
    }
    kernel->next = module->kernels;
    module->kernels = kernel;
    *out_kernel = kernel;
    return ACCEL_OK;
}

accel_status accel__cuda_kernel_get(accel_drv_device *device,
                                    accel_drv_module *module, const char *name,
                                    accel_drv_kernel **out_kernel,
                                    struct accel_kernel_signature *out_signature)
{
    acu_CUfunction function = NULL;
    struct cuda_scope scope;
    accel_status status;

    *out_kernel = NULL;
    memset(out_signature, 0, ACCEL_KERNEL_SIGNATURE_V1_0_SIZE);
    out_signature->param_count = ACCEL_PARAM_COUNT_UNKNOWN;
    if (name == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "kernel_get: the name is NULL");
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_MODULE, cuModuleGetFunction,
                       (&function, module->handle, name));
    if (status == ACCEL_OK) {
        pthread_mutex_lock(&module->lock);
        status = cuda_kernel_record(device, module, function, out_kernel);
        pthread_mutex_unlock(&module->lock);
    }
    if (status == ACCEL_OK)
        cuda_kernel_signature(device, function, out_signature);
    accel__cuda_leave(device, &scope);
    return status;
}

/*
 * The launch against the kernel's own limits, its dynamic shared-memory
 * opt-in raised when the launch asks for more; the context is current.
 * Errors: ACCEL_ERR_LAUNCH with the limit, the driver's.
 */
static accel_status cuda_launch_fits(accel_drv_device *device,
                                     accel_drv_module *module,
                                     accel_drv_kernel *kernel,
                                     const struct accel_launch_config *config)
{
    const struct accel_host_services *services = device->plugin->base.services;
    uint64_t threads = (uint64_t)config->block[0] * config->block[1] *
                       config->block[2];
    uint64_t shared = (uint64_t)kernel->static_shared + config->shared_bytes;
    uint32_t device_shared = device->physical->props.max_shared_bytes;
    accel_status status = ACCEL_OK;

    if (threads > kernel->max_threads)
        return services->set_error(
            ACCEL_ERR_LAUNCH,
            "launch: %llu threads per block; this kernel takes at most "
            "%u (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers "
            "or launch bounds)",
            (unsigned long long)threads, kernel->max_threads);
    if (shared > device_shared)
        return services->set_error(
            ACCEL_ERR_LAUNCH,
            "launch: %u bytes of dynamic shared memory and the kernel's "
            "%u static bytes are more than the %u a block of %s has",
            config->shared_bytes, kernel->static_shared, device_shared,
            device->name);
    if (config->shared_bytes <= atomic_load(&kernel->dynamic_shared))
        return ACCEL_OK;
    /* Under the lock: two launches opting in at once must not lower what the other set. */
    pthread_mutex_lock(&module->lock);
    if (config->shared_bytes > atomic_load(&kernel->dynamic_shared)) {
        status = CUDA_CALL(device, ACCEL_ERR_LAUNCH, cuFuncSetAttribute,
                           (kernel->function,
                            ACU_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            (int)config->shared_bytes));
        if (status == ACCEL_OK)
            atomic_store(&kernel->dynamic_shared, config->shared_bytes);
    }
    pthread_mutex_unlock(&module->lock);
    return status;
}

accel_status accel__cuda_launch(accel_drv_device *device,
                                accel_drv_stream *stream,
                                accel_drv_kernel *kernel,
                                const struct accel_launch_config *config,
                                void *const *args, const size_t *arg_sizes,
                                uint32_t nargs)
{
    struct cuda_scope scope;
    accel_status status;

    /* The driver knows each parameter's size from the kernel itself. */
    (void)arg_sizes;
    (void)nargs;
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = cuda_launch_fits(device, kernel->module, kernel, config);
    if (status == ACCEL_OK)
        status = CUDA_CALL(device, ACCEL_ERR_LAUNCH, cuLaunchKernel,
                           (kernel->function, config->grid[0], config->grid[1],
                            config->grid[2], config->block[0], config->block[1],
                            config->block[2], config->shared_bytes,
                            cuda_stream_handle(stream),
                            (void **)(uintptr_t)args, NULL));
    accel__cuda_leave(device, &scope);
    return status;
}
