/*
 * Modules, kernels and launches.
 *
 * A module image is an AMD code object as hipcc --genco writes it: a clang
 * offload bundle with one code object per GPU target, or a bare code
 * object (an ELF), taken by hipModuleLoadData. AMD's runtime has no JIT
 * and no error log, so a failed load's detail says what the image holds
 * instead: the targets it has code for, and the device's.
 *
 * Before the load the plugin reads the code object's metadata (see
 * hip_code_object.h) for each kernel's parameter sizes, which HIP has no
 * call to tell, so that the host can check a launch's arguments. The
 * plugin also keeps its own copy of the image while the module lives:
 * the ABI lets the host free the image once module_load returns, and not
 * every HIP version is documented to have copied it by then.
 *
 * hipModuleLoadData takes no size: the runtime finds it in the image's
 * headers. The copy ends in zeros, so that a truncated image's headers are
 * read as zeros rather than past the buffer, and an image that is no code
 * object at all is refused before the runtime sees it.
 *
 * The ABI's launch arguments (args[i] pointing at argument i's bytes) are
 * exactly hipModuleLaunchKernel's kernelParams, and the runtime copies them
 * into the kernel's argument buffer before it returns, as the ABI asks.
 *
 * A kernel has limits of its own, tighter than the device's the host
 * checks: the threads per block its registers and launch bounds allow, and
 * its static shared memory (hipFuncGetAttribute, where the runtime has
 * it). They are read at kernel_get, and a launch past them is refused
 * before anything is enqueued, with the reason. AMD GPUs have no opt-in
 * for more dynamic shared memory: the device's limit is the only one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_plugin.h"

/* Zero bytes after the plugin's copy of an image: more than any header the runtime reads first. */
#define HIP_IMAGE_PADDING 4096u

/*
 * What the image holds, for the detail of a load that failed. Targets are
 * shown with their features: an xnack or sramecc mismatch ("gfx90a:xnack-"
 * against a device running "gfx90a:xnack+") refuses a load as surely as
 * another processor does.
 */
static void hip_image_detail(const accel_drv_device *device,
                             const struct accel__hip_code_object *code,
                             char *out, size_t size)
{
    uint32_t index = (uint32_t)(device->physical - device->plugin->base.devices);
    const char *arch = device->physical->props.arch;

    if (index < ACCEL__NATIVE_DEVICES_MAX &&
        device->plugin->targets[index][0] != '\0')
        arch = device->plugin->targets[index];

    switch (code->kind) {
    case ACCEL__HIP_IMAGE_BUNDLE:
        if (code->targets[0] == '\0')
            snprintf(
                out, size,
                "the bundle holds no AMD GPU code object; the device is %s",
                arch);
        else
            snprintf(out, size, "the bundle holds code for %s; the device is %s",
                     code->targets, arch);
        return;
    case ACCEL__HIP_IMAGE_COMPRESSED:
        snprintf(out, size, "a compressed offload bundle; the device is %s",
                 arch);
        return;
    case ACCEL__HIP_IMAGE_ELF:
        snprintf(out, size, "a code object; the device is %s", arch);
        return;
    case ACCEL__HIP_IMAGE_UNKNOWN:
        break;
    }
    snprintf(
        out, size,
        "the image is neither an AMD code object nor a clang offload bundle "
        "(hipcc --genco writes one)");
}

/* Load the plugin's copy of the image; on failure, say what it holds. */
static accel_status hip_module_load_described(accel_drv_device *device,
                                              accel_drv_module *module,
                                              const void *image)
{
    ahip_hipError_t result;
    struct hip_scope scope;
    char detail[512];
    accel_status status = accel__hip_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    result = hip_symbols_of(device)->hipModuleLoadData(&module->handle, image);
    accel__hip_leave(device, &scope);
    if (result == AHIP_hipSuccess)
        return ACCEL_OK;
    hip_image_detail(device, &module->code, detail, sizeof(detail));
    return accel__hip_result_with(device, result, "hipModuleLoadData",
                                  ACCEL_ERR_MODULE, detail);
}

static void hip_module_free(accel_drv_module *module)
{
    while (module->kernels != NULL) {
        accel_drv_kernel *kernel = module->kernels;

        module->kernels = kernel->next;
        free(kernel);
    }
    if (module->locked)
        pthread_mutex_destroy(&module->lock);
    accel__hip_code_object_free(&module->code);
    free(module->image);
    free(module);
}

accel_status accel__hip_module_load(accel_drv_device *device, const void *image,
                                    size_t size, accel_drv_module **out_module)
{
    const struct accel_host_services *services = device->plugin->base.services;
    accel_drv_module *module;
    accel_status status;

    *out_module = NULL;
    if (image == NULL || size == 0)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "module_load: an empty image");
    module = calloc(1, sizeof(*module));
    if (module != NULL)
        module->locked = pthread_mutex_init(&module->lock, NULL) == 0;
    if (module != NULL && module->locked && size <= SIZE_MAX - HIP_IMAGE_PADDING)
        module->image = calloc(1, size + HIP_IMAGE_PADDING);
    if (module == NULL || module->image == NULL ||
        !accel__hip_code_object_read(image, size, device->physical->props.arch,
                                     &module->code)) {
        if (module != NULL)
            hip_module_free(module);
        return services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "module_load: out of host memory for a %zu-byte image", size);
    }
    /* Not handed to the runtime, whose readers do not expect it: it might take it apart. */
    if (module->code.kind == ACCEL__HIP_IMAGE_UNKNOWN) {
        hip_module_free(module);
        return services->set_error(
            ACCEL_ERR_MODULE,
            "module_load: the image (%zu bytes) is neither an AMD code "
            "object nor a clang offload bundle (hipcc --genco writes one)",
            size);
    }
    memcpy(module->image, image, size);
    status = hip_module_load_described(device, module, module->image);
    if (status != ACCEL_OK) {
        hip_module_free(module);
        return status;
    }
    *out_module = module;
    return ACCEL_OK;
}

/*
 * Unloaded even by an open another open's reset made stale: hipDeviceReset
 * leaves modules alone (ROCm keeps them process-wide, README.md), so the
 * handle is still this module's, and without the call it would leak.
 */
void accel__hip_module_unload(accel_drv_device *device, accel_drv_module *module)
{
    struct hip_scope scope;

    if (module == NULL)
        return;
    if (accel__hip_enter_any_epoch(device, &scope) == ACCEL_OK) {
        accel__hip_ignore(device,
                          hip_symbols_of(device)->hipModuleUnload(module->handle),
                          "hipModuleUnload");
        accel__hip_leave(device, &scope);
    }
    hip_module_free(module);
}

/*
 * A kernel's own limits, where the runtime says (hipFuncGetAttribute); the
 * device's where it does not, and the runtime then decides at the launch.
 */
static void hip_kernel_limits(accel_drv_device *device, accel_drv_kernel *kernel)
{
    const struct hip_symbols *symbols = hip_symbols_of(device);
    int threads = 0, shared = 0;

    kernel->max_threads = device->physical->props.max_threads_per_block;
    kernel->static_shared = 0;
    if (symbols->hipFuncGetAttribute == NULL)
        return;
    if (symbols->hipFuncGetAttribute(
            &threads, AHIP_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            kernel->function) == AHIP_hipSuccess &&
        threads > 0)
        kernel->max_threads = (uint32_t)threads;
    if (symbols->hipFuncGetAttribute(&shared,
                                     AHIP_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     kernel->function) == AHIP_hipSuccess &&
        shared > 0)
        kernel->static_shared = (uint32_t)shared;
}

/* The module's record of `function`, made with its limits at the first lookup. */
static accel_status hip_kernel_record(accel_drv_device *device,
                                      accel_drv_module *module,
                                      ahip_hipFunction_t function,
                                      accel_drv_kernel **out_kernel)
{
    accel_drv_kernel *kernel;

    pthread_mutex_lock(&module->lock);
    for (kernel = module->kernels; kernel != NULL; kernel = kernel->next) {
        if (kernel->function == function)
            break;
    }
    if (kernel == NULL && (kernel = calloc(1, sizeof(*kernel))) != NULL) {
        kernel->function = function;
        hip_kernel_limits(device, kernel);
        kernel->next = module->kernels;
        module->kernels = kernel;
    }
    pthread_mutex_unlock(&module->lock);
    *out_kernel = kernel;
    if (kernel == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "kernel_get: calloc failed");
    return ACCEL_OK;
}

accel_status accel__hip_kernel_get(accel_drv_device *device,
                                   accel_drv_module *module, const char *name,
                                   accel_drv_kernel **out_kernel,
                                   struct accel_kernel_signature *out_signature)
{
    const struct accel_kernel_signature *known;
    ahip_hipFunction_t function = NULL;
    struct hip_scope scope;
    accel_status status;

    *out_kernel = NULL;
    memset(out_signature, 0, ACCEL_KERNEL_SIGNATURE_V1_0_SIZE);
    out_signature->param_count = ACCEL_PARAM_COUNT_UNKNOWN;
    if (name == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "kernel_get: the name is NULL");
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    /* Versions answer an unknown name with different codes; all but a loss mean "absent". */
    status = accel__hip_result_as(device,
                                  hip_symbols_of(device)->hipModuleGetFunction(
                                      &function, module->handle, name),
                                  "hipModuleGetFunction", ACCEL_ERR_NOT_FOUND);
    if (status == ACCEL_OK)
        status = hip_kernel_record(device, module, function, out_kernel);
    accel__hip_leave(device, &scope);
    if (status != ACCEL_OK)
        return status;
    known = accel__hip_code_object_signature(&module->code, name);
    /* Sizes only: a code object knows no element types, and a host of minor
     * 0 passes no room for them. */
    if (known != NULL)
        memcpy(out_signature, known, ACCEL_KERNEL_SIGNATURE_V1_0_SIZE);
    return ACCEL_OK;
}

/* The launch against the kernel's own limits. Errors: ACCEL_ERR_LAUNCH with the limit. */
static accel_status hip_launch_fits(accel_drv_device *device,
                                    const accel_drv_kernel *kernel,
                                    const struct accel_launch_config *config)
{
    const struct accel_host_services *services = device->plugin->base.services;
    uint64_t threads = (uint64_t)config->block[0] * config->block[1] *
                       config->block[2];
    uint64_t shared = (uint64_t)kernel->static_shared + config->shared_bytes;
    uint32_t device_shared = device->physical->props.max_shared_bytes;

    if (threads > kernel->max_threads)
        return services->set_error(
            ACCEL_ERR_LAUNCH,
            "launch: %llu threads per block; this kernel takes at most "
            "%u (HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers "
            "or launch bounds)",
            (unsigned long long)threads, kernel->max_threads);
    if (shared > device_shared)
        return services->set_error(
            ACCEL_ERR_LAUNCH,
            "launch: %u bytes of dynamic shared memory and the kernel's "
            "%u static bytes are more than the %u a block of %s has",
            config->shared_bytes, kernel->static_shared, device_shared,
            device->name);
    return ACCEL_OK;
}

accel_status accel__hip_launch(accel_drv_device *device,
                               accel_drv_stream *stream, accel_drv_kernel *kernel,
                               const struct accel_launch_config *config,
                               void *const *args, const size_t *arg_sizes,
                               uint32_t nargs)
{
    struct hip_scope scope;
    accel_status status;

    /* The runtime knows each parameter's size from the code object itself. */
    (void)arg_sizes;
    (void)nargs;
    status = hip_launch_fits(device, kernel, config);
    if (status != ACCEL_OK)
        return status;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_LAUNCH, hipModuleLaunchKernel,
                      (kernel->function, config->grid[0], config->grid[1],
                       config->grid[2], config->block[0], config->block[1],
                       config->block[2], config->shared_bytes,
                       hip_stream_handle(stream), (void **)(uintptr_t)args, NULL));
    accel__hip_leave(device, &scope);
    return status;
}
