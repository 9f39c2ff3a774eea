/*
 * The fake driver's modules, kernels, launches and entry-point lookup.
 *
 * A module image is a CPU image built from <accel/kernel.h> kernels (an
 * ELF shared object for this machine), in place of PTX or a cubin, run by
 * the common fake core (tests/fakes/common/fake_image.c). Like
 * cuModuleLoadData, cuModuleLoadDataEx gets no size: the image's extent is
 * read from its ELF headers. cuLaunchKernel copies the arguments (as CUDA
 * does, before returning) and the grid's blocks run one by one on the
 * stream's thread. PTX, a cubin or anything else is refused with a
 * JIT-style error log.
 */
#include "fake_cuda.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- images ---- */

/* PTX is text that starts with a comment or a directive; strncmp stops at its NUL. */
static bool fake_looks_like_ptx(const void *image)
{
    return strncmp(image, "//", 2) == 0 || strncmp(image, ".version", 8) == 0;
}

/* Write the JIT's error log, where the caller asked for one. */
static void fake_jit_log(unsigned int count, const acu_CUjit_option *options,
                         void *const *values, const char *message)
{
    char *buffer = NULL;
    size_t size = 0;

    for (unsigned int i = 0; i < count; i++) {
        if (options[i] == ACU_CU_JIT_ERROR_LOG_BUFFER)
            buffer = values[i];
        else if (options[i] == ACU_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            size = (size_t)(uintptr_t)values[i];
    }
    if (buffer != NULL && size != 0)
        snprintf(buffer, size, "%s", message);
}

/*
 * The bytes of a CPU image for this machine (see fake_image_size); 0, and
 * a JIT-style message, for anything else: PTX and cubins by name.
 */
static size_t fake_cuda_image_size(const void *image, const char **out_why)
{
    /* e_machine, after the 16 bytes of e_ident and the 2 of e_type. */
    uint16_t machine;

    if (memcmp(image, ELFMAG, SELFMAG) != 0) {
        *out_why = fake_looks_like_ptx(image)
                       ? "ptxas fatal: the fake CUDA driver cannot compile "
                         "PTX; give it a "
                         "CPU image of <accel/kernel.h> kernels"
                       : "fake CUDA: the image is neither ELF nor PTX";
        return 0;
    }
    memcpy(&machine, (const char *)image + EI_NIDENT + 2, sizeof(machine));
    if (machine == EM_CUDA) {
        *out_why =
            "fake CUDA: a cubin for a real GPU; give the fake a CPU image";
        return 0;
    }
    /* The call has no size: the image is believed to hold what its headers say. */
    return fake_image_size(image, SIZE_MAX, out_why);
}

/* ---- modules ---- */

FAKE_EXPORT acu_CUresult cuModuleLoadDataEx(acu_CUmodule *out_module,
                                            const void *image,
                                            unsigned int option_count,
                                            acu_CUjit_option *options,
                                            void **option_values)
{
    const char *why = "fake CUDA: the image did not load";
    struct CUmod_st *module;
    struct CUctx_st *ctx;
    acu_CUresult result;
    size_t size;

    /* A JIT's time, spent before the fake's lock is taken, as the driver's compile runs. */
    fake_sleep_us(fake_env_number("FAKE_CUDA_JIT_DELAY_US", 0));

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (out_module == NULL || image == NULL ||
        (option_count != 0 && (options == NULL || option_values == NULL)))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    size = fake_cuda_image_size(image, &why);
    module = size != 0 ? calloc(1, sizeof(*module)) : NULL;
    result = size == 0
                 ? (fake_looks_like_ptx(image) ? ACU_CUDA_ERROR_INVALID_PTX
                                               : ACU_CUDA_ERROR_INVALID_IMAGE)
             : module == NULL ? ACU_CUDA_ERROR_OUT_OF_MEMORY
             : fake_image_open(image, size, &module->image, &why)
                 ? ACU_CUDA_SUCCESS
                 : ACU_CUDA_ERROR_INVALID_IMAGE;
    if (result != ACU_CUDA_SUCCESS) {
        free(module);
        fake_jit_log(option_count, options, option_values, why);
        FAKE_RETURN(result);
    }
    module->magic = FAKE_MAGIC_MODULE;
    module->ctx = ctx;
    module->next = fake.modules;
    fake.modules = module;
    *out_module = module;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

static void fake_module_retire(struct CUmod_st *module)
{
    for (struct CUmod_st **link = &fake.modules; *link != NULL;
         link = &(*link)->next) {
        if (*link == module) {
            *link = module->next;
            break;
        }
    }
    for (struct CUfunc_st *f = module->functions; f != NULL; f = f->next)
        f->magic = FAKE_MAGIC_RETIRED;
    fake_image_close(&module->image);
    module->magic = FAKE_MAGIC_RETIRED;
    module->next = fake.retired_modules;
    fake.retired_modules = module;
}

void fake_release_modules(struct CUctx_st *ctx)
{
    for (struct CUmod_st *module = fake.modules, *next; module != NULL;
         module = next) {
        next = module->next;
        if (module->ctx == ctx)
            fake_module_retire(module);
    }
}

FAKE_EXPORT acu_CUresult cuModuleUnload(acu_CUmodule module)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    if (!fake_current_to_release(&ctx, &result))
        FAKE_RETURN(result);
    if (module == NULL || module->magic != FAKE_MAGIC_MODULE || module->ctx != ctx)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    fake_module_retire(module);
    FAKE_RETURN(result);
}

/* A new function's own limits: FAKE_CUDA_KERNEL_LIMITS's, else the device's. */
static void fake_function_limits(struct CUfunc_st *function)
{
    fake_kernel_limits_of(&fake.kernel_limits, function->name,
                          &function->max_threads, &function->static_shared);
    function->max_dynamic_shared = (int)FAKE_MAX_SHARED_BYTES -
                                   function->static_shared;
}

FAKE_EXPORT acu_CUresult cuModuleGetFunction(acu_CUfunction *out_function,
                                             acu_CUmodule module,
                                             const char *name)
{
    const struct accel_cpu_kernel *kernel;
    struct CUfunc_st *function;
    struct CUctx_st *ctx;
    acu_CUresult result;

    fake_gate_pass("cuModuleGetFunction");
    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (out_function == NULL || name == NULL ||
        strlen(name) >= sizeof(function->name))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (module == NULL || module->magic != FAKE_MAGIC_MODULE || module->ctx != ctx)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    for (function = module->functions; function != NULL;
         function = function->next) {
        if (strcmp(function->name, name) == 0) {
            *out_function = function;
            FAKE_RETURN(ACU_CUDA_SUCCESS);
        }
    }
    kernel = fake_image_kernel(&module->image, name);
    if (kernel == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_NOT_FOUND);
    function = calloc(1, sizeof(*function));
    if (function == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    function->magic = FAKE_MAGIC_FUNCTION;
    function->module = module;
    function->kernel = kernel;
    snprintf(function->name, sizeof(function->name), "%s", name);
    fake_function_limits(function);
    function->next = module->functions;
    module->functions = function;
    *out_function = function;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

static bool fake_function_valid(const struct CUfunc_st *function,
                                const struct CUctx_st *ctx)
{
    return function != NULL && function->magic == FAKE_MAGIC_FUNCTION &&
           function->module->ctx == ctx;
}

/* A function's attribute, or why not; the current context's own. */
FAKE_EXPORT acu_CUresult cuFuncGetAttribute(int *value,
                                            acu_CUfunction_attribute attribute,
                                            acu_CUfunction function)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (!fake_function_valid(function, ctx))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    if (value == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    switch (attribute) {
    case ACU_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = function->max_threads;
        break;
    case ACU_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        *value = function->static_shared;
        break;
    case ACU_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = function->max_dynamic_shared;
        break;
    default:
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    }
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* Only the dynamic shared-memory opt-in is writable, up to the device's opt-in limit. */
FAKE_EXPORT acu_CUresult cuFuncSetAttribute(acu_CUfunction function,
                                            acu_CUfunction_attribute attribute,
                                            int value)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (!fake_function_valid(function, ctx))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    if (attribute != ACU_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
        value < 0 ||
        (int64_t)value + function->static_shared >
            (int64_t)FAKE_MAX_SHARED_OPTIN_BYTES)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    function->max_dynamic_shared = value;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuFuncGetParamInfo(acu_CUfunction function, size_t index,
                                            size_t *offset, size_t *size)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    if (fake.no_param_info)
        FAKE_RETURN(ACU_CUDA_ERROR_NOT_SUPPORTED);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (!fake_function_valid(function, ctx))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    if (offset == NULL || index >= function->kernel->param_count)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    *offset = fake_param_offset(function->kernel, (uint32_t)index);
    if (size != NULL)
        *size = function->kernel->param_sizes[index];
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* ---- launches ---- */

/*
 * The device's limits, and the function's own: its thread limit, and the
 * dynamic shared memory it opted in to (cuFuncSetAttribute).
 */
static bool fake_geometry_valid(const struct CUfunc_st *function,
                                const uint32_t grid[3], const uint32_t block[3],
                                uint32_t shared_bytes)
{
    static const uint32_t max_grid[3] = {2147483647u, 65535u, 65535u};
    static const uint32_t max_block[3] = {1024u, 1024u, 64u};

    for (int d = 0; d < 3; d++) {
        if (grid[d] == 0 || grid[d] > max_grid[d] || block[d] == 0 ||
            block[d] > max_block[d])
            return false;
    }
    return (uint64_t)block[0] * block[1] * block[2] <=
               (uint64_t)function->max_threads &&
           shared_bytes <= (uint64_t)function->max_dynamic_shared;
}

FAKE_EXPORT acu_CUresult cuLaunchKernel(
    acu_CUfunction function, unsigned int grid_x, unsigned int grid_y,
    unsigned int grid_z, unsigned int block_x, unsigned int block_y,
    unsigned int block_z, unsigned int shared_bytes, acu_CUstream stream,
    void **params, void **extra)
{
    struct fake_op *op;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_SUCCESS)
        result = fake_stream_check(stream, ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (!fake_function_valid(function, ctx))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_HANDLE);
    if (extra != NULL || (params == NULL && function->kernel->param_count != 0))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    op = fake_op_new(lose ? FAKE_OP_LOSE : FAKE_OP_LAUNCH);
    if (op == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    op->u.launch = (struct fake_launch){function->kernel,
                                        {grid_x, grid_y, grid_z},
                                        {block_x, block_y, block_z},
                                        shared_bytes,
                                        NULL,
                                        {NULL}};
    if (!fake_geometry_valid(function, op->u.launch.grid, op->u.launch.block,
                             shared_bytes)) {
        fake_op_free(op);
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    }
    if (op->kind == FAKE_OP_LAUNCH &&
        !fake_launch_copy_args(&op->u.launch, params)) {
        fake_op_free(op);
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    }
    fake_stream_push(&stream->queue, op);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* ---- entry points by name ---- */

struct fake_entry {
    const char *base;
    int version; /* the API version that introduced this variant */
    void *entry;
};

#define FAKE_ENTRY(base, symbol, version)                                      \
    {                                                                          \
        base, version, (void *)(uintptr_t)symbol                               \
    }

static const struct fake_entry fake_entries[] = {
    FAKE_ENTRY("cuInit", cuInit, 2000),
    FAKE_ENTRY("cuDriverGetVersion", cuDriverGetVersion, 2020),
    FAKE_ENTRY("cuDeviceGetCount", cuDeviceGetCount, 2000),
    FAKE_ENTRY("cuDeviceGet", cuDeviceGet, 2000),
    FAKE_ENTRY("cuDeviceGetName", cuDeviceGetName, 2000),
    FAKE_ENTRY("cuDeviceTotalMem", cuDeviceTotalMem_v2, 3020),
    FAKE_ENTRY("cuDeviceGetAttribute", cuDeviceGetAttribute, 2000),
    FAKE_ENTRY("cuDeviceGetUuid", cuDeviceGetUuid_v2, 11040),
    FAKE_ENTRY("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId, 4010),
    FAKE_ENTRY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 7000),
    FAKE_ENTRY("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 11000),
    FAKE_ENTRY("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset_v2, 11000),
    FAKE_ENTRY("cuCtxGetCurrent", cuCtxGetCurrent, 4000),
    FAKE_ENTRY("cuCtxPushCurrent", cuCtxPushCurrent_v2, 4000),
    FAKE_ENTRY("cuCtxPopCurrent", cuCtxPopCurrent_v2, 4000),
    FAKE_ENTRY("cuCtxSetCurrent", cuCtxSetCurrent, 4000),
    FAKE_ENTRY("cuMemAlloc", cuMemAlloc_v2, 3020),
    FAKE_ENTRY("cuMemFree", cuMemFree_v2, 3020),
    FAKE_ENTRY("cuMemHostAlloc", cuMemHostAlloc, 2020),
    FAKE_ENTRY("cuMemFreeHost", cuMemFreeHost, 2000),
    FAKE_ENTRY("cuMemHostRegister", cuMemHostRegister_v2, 6050),
    FAKE_ENTRY("cuMemHostUnregister", cuMemHostUnregister, 4000),
    FAKE_ENTRY("cuStreamCreate", cuStreamCreate, 2000),
    FAKE_ENTRY("cuStreamDestroy", cuStreamDestroy_v2, 4000),
    FAKE_ENTRY("cuStreamSynchronize", cuStreamSynchronize, 2000),
    FAKE_ENTRY("cuStreamWaitEvent", cuStreamWaitEvent, 3020),
    FAKE_ENTRY("cuEventCreate", cuEventCreate, 2000),
    FAKE_ENTRY("cuEventDestroy", cuEventDestroy_v2, 4000),
    FAKE_ENTRY("cuEventRecord", cuEventRecord, 2000),
    FAKE_ENTRY("cuEventQuery", cuEventQuery, 2000),
    FAKE_ENTRY("cuEventSynchronize", cuEventSynchronize, 2000),
    FAKE_ENTRY("cuEventElapsedTime", cuEventElapsedTime, 2000),
    FAKE_ENTRY("cuLaunchHostFunc", cuLaunchHostFunc, 10000),
    FAKE_ENTRY("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, 3020),
    FAKE_ENTRY("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, 3020),
    FAKE_ENTRY("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, 3020),
    FAKE_ENTRY("cuMemcpy2DAsync", cuMemcpy2DAsync_v2, 3020),
    FAKE_ENTRY("cuMemcpy3DAsync", cuMemcpy3DAsync_v2, 3020),
    FAKE_ENTRY("cuMemcpyPeerAsync", cuMemcpyPeerAsync, 4000),
    FAKE_ENTRY("cuMemcpy3DPeerAsync", cuMemcpy3DPeerAsync, 4000),
    FAKE_ENTRY("cuModuleLoadDataEx", cuModuleLoadDataEx, 2010),
    FAKE_ENTRY("cuModuleUnload", cuModuleUnload, 2000),
    FAKE_ENTRY("cuModuleGetFunction", cuModuleGetFunction, 2000),
    FAKE_ENTRY("cuFuncGetAttribute", cuFuncGetAttribute, 2020),
    FAKE_ENTRY("cuFuncSetAttribute", cuFuncSetAttribute, 9000),
    FAKE_ENTRY("cuLaunchKernel", cuLaunchKernel, 4000),
    FAKE_ENTRY("cuFuncGetParamInfo", cuFuncGetParamInfo, 12040),
    FAKE_ENTRY("cuGetErrorString", cuGetErrorString, 6000),
    FAKE_ENTRY("cuGetErrorName", cuGetErrorName, 6000),
    FAKE_ENTRY("cuGetProcAddress", cuGetProcAddress_v2, 12000),
};

/* As CUDA 12's: found, not found, or found but newer than the version asked for. */
FAKE_EXPORT acu_CUresult cuGetProcAddress_v2(
    const char *symbol, void **pfn, int cuda_version, acu_cuuint64_t flags,
    acu_CUdriverProcAddressQueryResult *status)
{
    acu_CUdriverProcAddressQueryResult found =
        ACU_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;

    /* Read here, not at cuInit: a loader asks for entries before it initialises. */
    const char *no_proc_address = getenv("FAKE_CUDA_NO_PROC_ADDRESS");

    pthread_mutex_lock(&fake_core.lock);
    fake_count(__func__);
    pthread_mutex_unlock(&fake_core.lock);
    if (no_proc_address != NULL && strcmp(no_proc_address, "1") == 0)
        return ACU_CUDA_ERROR_NOT_SUPPORTED;
    if (symbol == NULL || pfn == NULL || flags > 2 ||
        cuda_version > FAKE_DRIVER_VERSION)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    for (size_t i = 0; i < sizeof(fake_entries) / sizeof(fake_entries[0]); i++) {
        if (strcmp(fake_entries[i].base, symbol) != 0)
            continue;
        found = ACU_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        if (cuda_version >= fake_entries[i].version) {
            *pfn = fake_entries[i].entry;
            found = ACU_CU_GET_PROC_ADDRESS_SUCCESS;
        }
        break;
    }
    if (status != NULL)
        *status = found;
    return ACU_CUDA_SUCCESS;
}
