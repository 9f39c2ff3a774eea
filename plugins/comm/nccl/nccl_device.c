/*
 * The GPU's own library, as the provider needs it (see nccl_provider.h):
 * whether the process has a GPU, the rank's device made current around a
 * call and put back after, and the barrier's device word. CUDA through the
 * Driver API (a rank's device is its primary context, which accel's CUDA
 * plugin hands over in accel_native_handles.context); HIP through the
 * runtime (the device is its ordinal). Only the few calls below are
 * declared, with the vendors' ABI: handles are pointers, CUdeviceptr is 64
 * bits, results are int.
 */
#include "nccl_provider.h"

#include <stdio.h>
#include <string.h>

/* A call of entry `index`, typed. */
#define ENTRY(runtime, index, type) ((type)(runtime)->entries[(index)])

/* ---- CUDA ---- */

enum {
    CU_INIT,
    CU_DEVICE_GET_COUNT,
    CU_CTX_GET_CURRENT,
    CU_CTX_SET_CURRENT,
    CU_MEM_ALLOC,
    CU_MEM_FREE,
    CU_GET_ERROR_NAME, /* optional */
    CU_ENTRIES
};

static const char *const cuda_entry_names[CU_ENTRIES] = {
    "cuInit",        "cuDeviceGetCount", "cuCtxGetCurrent", "cuCtxSetCurrent",
    "cuMemAlloc_v2", "cuMemFree_v2",     "cuGetErrorName"};

typedef int (*cu_init_fn)(unsigned int flags);
typedef int (*cu_count_fn)(int *count);
typedef int (*cu_get_current_fn)(void **context);
typedef int (*cu_set_current_fn)(void *context);
typedef int (*cu_alloc_fn)(unsigned long long *address, size_t bytes);
typedef int (*cu_free_fn)(unsigned long long address);
typedef int (*cu_error_name_fn)(int result, const char **name);

/* Resolve the entries of `names` (count of them, the last `optional` may be missing). */
static bool resolve_entries(struct nccl_device_runtime *runtime,
                            const char *const *names, int count, int optional)
{
    for (int i = 0; i < count; i++) {
        runtime->entries[i] = accel__native_library_symbol(&runtime->library,
                                                           names[i]);
        if (runtime->entries[i] == NULL && i < count - optional)
            return false;
    }
    return true;
}

static bool cuda_resolve(struct nccl_device_runtime *runtime)
{
    return resolve_entries(runtime, cuda_entry_names, CU_ENTRIES, 1);
}

static int cuda_device_count(struct nccl_device_runtime *runtime,
                             int *out_count, const char **out_call)
{
    int result;

    *out_call = "cuInit";
    result = ENTRY(runtime, CU_INIT, cu_init_fn)(0);
    if (result != 0)
        return result;
    *out_call = "cuDeviceGetCount";
    return ENTRY(runtime, CU_DEVICE_GET_COUNT, cu_count_fn)(out_count);
}

/* The rank's primary context, current on this thread until leave. */
static int cuda_enter(struct nccl_device_runtime *runtime,
                      const struct accel_native_handles *device,
                      struct nccl_device_scope *out_scope, const char **out_call)
{
    int result;

    out_scope->context = NULL;
    *out_call = "cuCtxGetCurrent";
    result = ENTRY(runtime, CU_CTX_GET_CURRENT,
                   cu_get_current_fn)(&out_scope->context);
    if (result != 0 || out_scope->context == device->context)
        return result;
    *out_call = "cuCtxSetCurrent";
    return ENTRY(runtime, CU_CTX_SET_CURRENT, cu_set_current_fn)(device->context);
}

static void cuda_leave(struct nccl_device_runtime *runtime,
                       const struct nccl_device_scope *scope)
{
    void *now = NULL;

    /* The caller's binding comes back: accel's threads stay as they were. */
    if (ENTRY(runtime, CU_CTX_GET_CURRENT, cu_get_current_fn)(&now) == 0 &&
        now != scope->context)
        (void)ENTRY(runtime, CU_CTX_SET_CURRENT,
                    cu_set_current_fn)(scope->context);
}

static int cuda_alloc(struct nccl_device_runtime *runtime, size_t bytes,
                      uint64_t *out_address, const char **out_call)
{
    unsigned long long address = 0;
    int result;

    *out_call = "cuMemAlloc_v2";
    result = ENTRY(runtime, CU_MEM_ALLOC, cu_alloc_fn)(&address, bytes);
    *out_address = result == 0 ? (uint64_t)address : 0;
    return result;
}

static void cuda_free(struct nccl_device_runtime *runtime, uint64_t address)
{
    (void)ENTRY(runtime, CU_MEM_FREE, cu_free_fn)((unsigned long long)address);
}

static const char *cuda_error_name(struct nccl_device_runtime *runtime, int code)
{
    const char *name = NULL;

    if (runtime->entries[CU_GET_ERROR_NAME] == NULL ||
        ENTRY(runtime, CU_GET_ERROR_NAME, cu_error_name_fn)(code, &name) != 0)
        return NULL;
    return name;
}

static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};

const struct nccl_device_ops accel__nccl_cuda_ops = {
    .title = "CUDA driver",
    .library_env = "ACCEL_CUDA_LIBRARY",
    .names = cuda_names,
    .resolve = cuda_resolve,
    .device_count = cuda_device_count,
    .enter = cuda_enter,
    .leave = cuda_leave,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .error_name = cuda_error_name,
};

/* ---- HIP ---- */

enum {
    HIP_INIT,
    HIP_GET_DEVICE_COUNT,
    HIP_GET_DEVICE,
    HIP_SET_DEVICE,
    HIP_MALLOC,
    HIP_FREE,
    HIP_GET_ERROR_NAME, /* optional */
    HIP_ENTRIES
};

static const char *const hip_entry_names[HIP_ENTRIES] = {
    "hipInit",   "hipGetDeviceCount", "hipGetDevice",   "hipSetDevice",
    "hipMalloc", "hipFree",           "hipGetErrorName"};

typedef int (*hip_init_fn)(unsigned int flags);
typedef int (*hip_count_fn)(int *count);
typedef int (*hip_get_device_fn)(int *ordinal);
typedef int (*hip_set_device_fn)(int ordinal);
typedef int (*hip_malloc_fn)(void **address, size_t bytes);
typedef int (*hip_free_fn)(void *address);
typedef const char *(*hip_error_name_fn)(int error);

static bool hip_resolve(struct nccl_device_runtime *runtime)
{
    return resolve_entries(runtime, hip_entry_names, HIP_ENTRIES, 1);
}

static int hip_device_count(struct nccl_device_runtime *runtime, int *out_count,
                            const char **out_call)
{
    int result;

    /* Harmless where the runtime initialises itself; some need it. */
    *out_call = "hipInit";
    result = ENTRY(runtime, HIP_INIT, hip_init_fn)(0);
    if (result != 0)
        return result;
    *out_call = "hipGetDeviceCount";
    return ENTRY(runtime, HIP_GET_DEVICE_COUNT, hip_count_fn)(out_count);
}

static int hip_enter(struct nccl_device_runtime *runtime,
                     const struct accel_native_handles *device,
                     struct nccl_device_scope *out_scope, const char **out_call)
{
    int result;

    out_scope->ordinal = -1;
    *out_call = "hipGetDevice";
    result = ENTRY(runtime, HIP_GET_DEVICE,
                   hip_get_device_fn)(&out_scope->ordinal);
    if (result != 0 || out_scope->ordinal == device->device_ordinal)
        return result;
    *out_call = "hipSetDevice";
    return ENTRY(runtime, HIP_SET_DEVICE,
                 hip_set_device_fn)(device->device_ordinal);
}

static void hip_leave(struct nccl_device_runtime *runtime,
                      const struct nccl_device_scope *scope)
{
    int now = -1;

    if (scope->ordinal >= 0 &&
        ENTRY(runtime, HIP_GET_DEVICE, hip_get_device_fn)(&now) == 0 &&
        now != scope->ordinal)
        (void)ENTRY(runtime, HIP_SET_DEVICE, hip_set_device_fn)(scope->ordinal);
}

static int hip_alloc(struct nccl_device_runtime *runtime, size_t bytes,
                     uint64_t *out_address, const char **out_call)
{
    void *address = NULL;
    int result;

    *out_call = "hipMalloc";
    result = ENTRY(runtime, HIP_MALLOC, hip_malloc_fn)(&address, bytes);
    *out_address = result == 0 ? (uint64_t)(uintptr_t)address : 0;
    return result;
}

static void hip_free(struct nccl_device_runtime *runtime, uint64_t address)
{
    (void)ENTRY(runtime, HIP_FREE, hip_free_fn)((void *)(uintptr_t)address);
}

static const char *hip_error_name(struct nccl_device_runtime *runtime, int code)
{
    if (runtime->entries[HIP_GET_ERROR_NAME] == NULL)
        return NULL;
    return ENTRY(runtime, HIP_GET_ERROR_NAME, hip_error_name_fn)(code);
}

static const char *const hip_names[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so", NULL};

const struct nccl_device_ops accel__nccl_hip_ops = {
    .title = "HIP runtime",
    .library_env = "ACCEL_HIP_LIBRARY",
    .names = hip_names,
    .resolve = hip_resolve,
    .device_count = hip_device_count,
    .enter = hip_enter,
    .leave = hip_leave,
    .alloc = hip_alloc,
    .free = hip_free,
    .error_name = hip_error_name,
};

/* ---- either ---- */

bool accel__nccl_device_open(struct nccl_device_runtime *runtime,
                             const struct nccl_device_ops *ops,
                             const struct accel_host_services *services,
                             char *reason, size_t reason_size)
{
    const char *call = NULL;
    const char *name;
    int count = 0, result;
    size_t used;

    memset(runtime, 0, sizeof(*runtime));
    runtime->ops = ops;
    used = (size_t)snprintf(reason, reason_size, "no GPU: no %s: ", ops->title);
    if (used >= reason_size)
        used = reason_size - 1;
    if (!accel__native_library_open(services, ops->library_env, ops->names,
                                    &runtime->library, reason + used,
                                    reason_size - used))
        return false;
    if (!ops->resolve(runtime)) {
        snprintf(reason, reason_size, "no GPU: %s is not a usable %s",
                 runtime->library.path, ops->title);
        goto fail;
    }
    result = ops->device_count(runtime, &count, &call);
    if (result != 0 || count <= 0) {
        name = result != 0 ? ops->error_name(runtime, result) : NULL;
        if (result != 0)
            snprintf(reason, reason_size, "no GPU: %s of %s failed: %s (%d)",
                     call, runtime->library.path, name != NULL ? name : "error",
                     result);
        else
            snprintf(reason, reason_size, "no GPU: %s has no device",
                     runtime->library.path);
        goto fail;
    }
    return true;

fail:
    /* An initialised driver stays mapped (native_library.h says why). */
    accel__native_library_close(&runtime->library, true);
    runtime->library.handle = NULL;
    return false;
}

void accel__nccl_device_close(struct nccl_device_runtime *runtime)
{
    if (runtime->library.handle != NULL)
        accel__native_library_close(&runtime->library, true);
    memset(runtime, 0, sizeof(*runtime));
}
