/*
 * The fake HIP runtime's modules, kernels and launches.
 *
 * hipModuleLoadData takes an image without a size, as hipcc --genco writes
 * it: a clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", an entry count,
 * then each entry's offset, size and target ID). The fake wants what a GPU
 * runtime wants, an entry for its device's target ("hipv4-amdgcn-amd-
 * amdhsa--gfx90a..."), else hipErrorNoBinaryForGpu; and it runs the host
 * entry ("host-x86_64-...") as the code, a CPU image of <accel/kernel.h>
 * kernels, since it has no GPU. make_fake_code_object.c writes such
 * bundles; a real hipcc bundle, whose host entry is empty, is refused with
 * hipErrorNoBinaryForGpu, and anything else with hipErrorInvalidImage.
 */
#include "fake_hip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bundles ---- */

static const char fake_hip_bundle_magic[24] = "__CLANG_OFFLOAD_BUNDLE__";

/* Entries past this many, or a bundle past this size, are not believed. */
#define FAKE_HIP_BUNDLE_ENTRIES_MAX 64u
#define FAKE_HIP_BUNDLE_BYTES_MAX (256u << 20)

static uint64_t fake_hip_u64(const unsigned char *bytes)
{
    uint64_t value = 0;

    for (int i = 7; i >= 0; i--)
        value = value << 8 | bytes[i];
    return value;
}

/* "gfx90a" from "...amdgcn-amd-amdhsa--gfx90a:xnack-" or "gfx90a:sramecc+". */
static void fake_hip_processor(const char *target, size_t length, char *out,
                               size_t size)
{
    const char *amdhsa = "amdgcn-amd-amdhsa-";
    const char *end = target + length;
    size_t n = 0;

    for (const char *p = target; p + strlen(amdhsa) <= end; p++) {
        if (memcmp(p, amdhsa, strlen(amdhsa)) == 0) {
            target = p + strlen(amdhsa);
            if (target < end && *target == '-')
                target++;
            break;
        }
    }
    while (target + n < end && target[n] != ':' && n + 1 < size)
        n++;
    memcpy(out, target, n);
    out[n] = '\0';
}

/*
 * Whether an entry's target features ("...gfx90a:sramecc+:xnack-") suit the
 * device's (fake_hip.arch): a feature the entry sets one way and the device
 * runs the other way refuses it, as the runtime does; a feature the entry
 * leaves unsaid suits either.
 */
static bool fake_hip_features_fit(const char *id, size_t length)
{
    const char *end = id + length;

    for (const char *colon = memchr(id, ':', length);
         colon != NULL && colon + 2 < end;
         colon = memchr(colon + 1, ':', (size_t)(end - colon - 1))) {
        const char *next = memchr(colon + 1, ':', (size_t)(end - colon - 1));
        const char *sign = (next != NULL ? next : end) - 1;
        size_t name = (size_t)(sign - colon);
        char opposite[40];

        if ((*sign != '+' && *sign != '-') || name + 2 > sizeof(opposite))
            continue;
        /* ":xnack" and the other sign: what the device's target must not say. */
        memcpy(opposite, colon, name);
        opposite[name] = *sign == '+' ? '-' : '+';
        opposite[name + 1] = '\0';
        if (strstr(fake_hip.arch, opposite) != NULL)
            return false;
    }
    return true;
}

/* What a bundle holds for the fake: the host code, and whether the device's target is there. */
struct fake_hip_bundle {
    const unsigned char *host;
    size_t host_size;
    bool has_device_target;
};

static ahip_hipError_t fake_hip_read_bundle(const unsigned char *image,
                                            struct fake_hip_bundle *out)
{
    char device[64], processor[64];
    uint64_t count;
    size_t at = 32;

    memset(out, 0, sizeof(*out));
    if (memcmp(image, fake_hip_bundle_magic, sizeof(fake_hip_bundle_magic)) != 0)
        return AHIP_hipErrorInvalidImage;
    count = fake_hip_u64(image + 24);
    if (count == 0 || count > FAKE_HIP_BUNDLE_ENTRIES_MAX)
        return AHIP_hipErrorInvalidImage;
    fake_hip_processor(fake_hip.arch, strlen(fake_hip.arch), device,
                       sizeof(device));
    for (uint64_t i = 0; i < count; i++) {
        uint64_t offset = fake_hip_u64(image + at),
                 size = fake_hip_u64(image + at + 8);
        uint64_t id_length = fake_hip_u64(image + at + 16);
        const char *id = (const char *)image + at + 24;

        if (id_length > 256 || offset > FAKE_HIP_BUNDLE_BYTES_MAX ||
            size > FAKE_HIP_BUNDLE_BYTES_MAX)
            return AHIP_hipErrorInvalidImage;
        at += 24 + (size_t)id_length;
        if (id_length >= 5 && memcmp(id, "host-", 5) == 0) {
            out->host = image + offset;
            out->host_size = (size_t)size;
            continue;
        }
        fake_hip_processor(id, (size_t)id_length, processor, sizeof(processor));
        if (size != 0 && strcmp(processor, device) == 0 &&
            fake_hip_features_fit(id, (size_t)id_length))
            out->has_device_target = true;
    }
    return out->has_device_target && out->host_size != 0
               ? AHIP_hipSuccess
               : AHIP_hipErrorNoBinaryForGpu;
}

/* ---- modules ---- */

FAKE_EXPORT ahip_hipError_t hipModuleLoadData(ahip_hipModule_t *out_module,
                                              const void *image)
{
    struct fake_hip_bundle bundle;
    struct fake_hip_context *ctx;
    struct ihipModule_t *module;
    ahip_hipError_t result;
    const char *why;
    size_t size;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (out_module == NULL || image == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    result = fake_hip_read_bundle(image, &bundle);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    size = fake_image_size(bundle.host, bundle.host_size, &why);
    if (size == 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidImage);
    module = calloc(1, sizeof(*module));
    if (module == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    if (!fake_image_open(bundle.host, size, &module->image, &why)) {
        free(module);
        FAKE_HIP_RETURN(AHIP_hipErrorSharedObjectInitFailed);
    }
    module->magic = FAKE_HIP_MAGIC_MODULE;
    module->ctx = ctx;
    module->next = fake_hip.modules;
    fake_hip.modules = module;
    *out_module = module;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

static void fake_hip_module_retire(struct ihipModule_t *module)
{
    for (struct ihipModule_t **link = &fake_hip.modules; *link != NULL;
         link = &(*link)->next) {
        if (*link == module) {
            *link = module->next;
            break;
        }
    }
    for (struct ihipModuleSymbol_t *f = module->functions; f != NULL; f = f->next)
        f->magic = FAKE_HIP_MAGIC_RETIRED;
    fake_image_close(&module->image);
    module->magic = FAKE_HIP_MAGIC_RETIRED;
    module->next = fake_hip.retired_modules;
    fake_hip.retired_modules = module;
}

/*
 * Live modules, every context's: hipDeviceReset does not unload them (in
 * ROCm's runtime a module is the process's, not the device's), so a module
 * nobody unloads stays here until the process ends.
 */
FAKE_EXPORT uint64_t fake_hip_live_modules(void)
{
    uint64_t count = 0;

    pthread_mutex_lock(&fake_core.lock);
    for (const struct ihipModule_t *m = fake_hip.modules; m != NULL; m = m->next)
        count++;
    pthread_mutex_unlock(&fake_core.lock);
    return count;
}

FAKE_EXPORT ahip_hipError_t hipModuleUnload(ahip_hipModule_t module)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (ctx == NULL)
        FAKE_HIP_RETURN(result);
    if (module == NULL || module->magic != FAKE_HIP_MAGIC_MODULE ||
        module->ctx != ctx)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    fake_hip_module_retire(module);
    FAKE_HIP_RETURN(result);
}

FAKE_EXPORT ahip_hipError_t hipModuleGetFunction(ahip_hipFunction_t *out_function,
                                                 ahip_hipModule_t module,
                                                 const char *name)
{
    const struct accel_cpu_kernel *kernel;
    struct ihipModuleSymbol_t *function;
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (out_function == NULL || name == NULL ||
        strlen(name) >= sizeof(function->name))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (module == NULL || module->magic != FAKE_HIP_MAGIC_MODULE ||
        module->ctx != ctx)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    for (function = module->functions; function != NULL;
         function = function->next) {
        if (strcmp(function->name, name) == 0) {
            *out_function = function;
            FAKE_HIP_RETURN(AHIP_hipSuccess);
        }
    }
    kernel = fake_image_kernel(&module->image, name);
    if (kernel == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorNotFound);
    function = calloc(1, sizeof(*function));
    if (function == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    function->magic = FAKE_HIP_MAGIC_FUNCTION;
    function->module = module;
    function->kernel = kernel;
    snprintf(function->name, sizeof(function->name), "%s", name);
    fake_kernel_limits_of(&fake_hip.kernel_limits, function->name,
                          &function->max_threads, &function->static_shared);
    function->next = module->functions;
    module->functions = function;
    *out_function = function;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* ---- launches ---- */

/* The device's limits, and the function's own. */
static bool fake_hip_geometry_valid(const struct ihipModuleSymbol_t *function,
                                    const uint32_t grid[3],
                                    const uint32_t block[3],
                                    uint32_t shared_bytes)
{
    static const uint32_t max_grid[3] = {2147483647u, 65536u, 65536u};

    for (int d = 0; d < 3; d++) {
        if (grid[d] == 0 || grid[d] > max_grid[d] || block[d] == 0 ||
            block[d] > 1024u)
            return false;
    }
    return (uint64_t)block[0] * block[1] * block[2] <=
               (uint64_t)function->max_threads &&
           (uint64_t)shared_bytes + (uint64_t)function->static_shared <=
               FAKE_HIP_MAX_SHARED_BYTES;
}

/* As ROCm's: a kernel's own thread limit and static shared memory. */
FAKE_EXPORT ahip_hipError_t hipFuncGetAttribute(
    int *value, ahip_hipFunction_attribute attribute, ahip_hipFunction_t function)
{
    FAKE_HIP_ENTER(lose);
    if (value == NULL || function == NULL ||
        function->magic != FAKE_HIP_MAGIC_FUNCTION)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    switch (attribute) {
    case AHIP_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = function->max_threads;
        break;
    case AHIP_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        *value = function->static_shared;
        break;
    default:
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    }
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipModuleLaunchKernel(
    ahip_hipFunction_t function, unsigned int grid_x, unsigned int grid_y,
    unsigned int grid_z, unsigned int block_x, unsigned int block_y,
    unsigned int block_z, unsigned int shared_bytes, ahip_hipStream_t stream,
    void **params, void **extra)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;
    struct fake_op *op;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result == AHIP_hipSuccess)
        result = fake_hip_stream_check(stream, ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (function == NULL || function->magic != FAKE_HIP_MAGIC_FUNCTION ||
        function->module->ctx != ctx)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidHandle);
    if (extra != NULL || (params == NULL && function->kernel->param_count != 0))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    op = fake_op_new(lose ? FAKE_OP_LOSE : FAKE_OP_LAUNCH);
    if (op == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    op->u.launch = (struct fake_launch){function->kernel,
                                        {grid_x, grid_y, grid_z},
                                        {block_x, block_y, block_z},
                                        shared_bytes,
                                        NULL,
                                        {NULL}};
    if (!fake_hip_geometry_valid(function, op->u.launch.grid,
                                 op->u.launch.block, shared_bytes)) {
        fake_op_free(op);
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidConfiguration);
    }
    if (op->kind == FAKE_OP_LAUNCH &&
        !fake_launch_copy_args(&op->u.launch, params)) {
        fake_op_free(op);
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    }
    fake_stream_push(&stream->queue, op);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}
