/*
 * Every CUDA Driver API entry point the plugin calls, once. No include
 * guard: this file is included where a list is wanted, with the two macros
 * defined to make what that place needs (cuda_dynamic_symbols.h declares
 * the function pointers, cuda_dynamic_symbols.c resolves them,
 * cuda_api_check.c proves each signature against cuda.h), and it undefines
 * them after.
 *
 *   ACU_REQUIRED(symbol, base, version, (parameters))
 *   ACU_OPTIONAL(symbol, base, version, (parameters))
 *
 * `symbol` is the versioned name the driver exports (cuMemAlloc_v2), found
 * by dlsym; `base` is the name cuGetProcAddress takes ("cuMemAlloc"), asked
 * for at API `version`, which pins the variant whose signature is listed
 * here. Every entry returns acu_CUresult. Without a REQUIRED entry the
 * plugin has no device; an OPTIONAL one may be NULL and every use checks.
 */

#if !defined(ACU_REQUIRED) || !defined(ACU_OPTIONAL)
#error "define ACU_REQUIRED and ACU_OPTIONAL before including cuda_symbol_table.h"
#endif

/* ---- initialisation and devices ---- */
ACU_REQUIRED(cuInit, "cuInit", ACU_API_VERSION, (unsigned int flags))
ACU_REQUIRED(cuDriverGetVersion, "cuDriverGetVersion", ACU_API_VERSION,
             (int *version))
ACU_REQUIRED(cuDeviceGetCount, "cuDeviceGetCount", ACU_API_VERSION, (int *count))
ACU_REQUIRED(cuDeviceGet, "cuDeviceGet", ACU_API_VERSION,
             (acu_CUdevice * device, int ordinal))
ACU_REQUIRED(cuDeviceGetName, "cuDeviceGetName", ACU_API_VERSION,
             (char *name, int length, acu_CUdevice device))
ACU_REQUIRED(cuDeviceTotalMem_v2, "cuDeviceTotalMem", ACU_API_VERSION,
             (size_t * bytes, acu_CUdevice device))
ACU_REQUIRED(cuDeviceGetAttribute, "cuDeviceGetAttribute", ACU_API_VERSION,
             (int *value, acu_CUdevice_attribute attribute, acu_CUdevice device))

/* ---- the primary context ---- */
ACU_REQUIRED(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
             ACU_API_VERSION, (acu_CUcontext * context, acu_CUdevice device))
ACU_REQUIRED(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease",
             ACU_API_VERSION, (acu_CUdevice device))
ACU_REQUIRED(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset",
             ACU_API_VERSION, (acu_CUdevice device))
ACU_REQUIRED(cuCtxGetCurrent, "cuCtxGetCurrent", ACU_API_VERSION,
             (acu_CUcontext * context))
ACU_REQUIRED(cuCtxPushCurrent_v2, "cuCtxPushCurrent", ACU_API_VERSION,
             (acu_CUcontext context))
ACU_REQUIRED(cuCtxPopCurrent_v2, "cuCtxPopCurrent", ACU_API_VERSION,
             (acu_CUcontext * context))
ACU_REQUIRED(cuCtxSetCurrent, "cuCtxSetCurrent", ACU_API_VERSION,
             (acu_CUcontext context))

/* ---- memory ---- */
ACU_REQUIRED(cuMemAlloc_v2, "cuMemAlloc", ACU_API_VERSION,
             (acu_CUdeviceptr * address, size_t bytes))
ACU_REQUIRED(cuMemFree_v2, "cuMemFree", ACU_API_VERSION,
             (acu_CUdeviceptr address))
/* Pinned host memory is the plugin's own pages, registered (see pinned_host.h). */
ACU_REQUIRED(cuMemHostRegister_v2, "cuMemHostRegister", ACU_API_VERSION,
             (void *pointer, size_t bytes, unsigned int flags))
ACU_REQUIRED(cuMemHostUnregister, "cuMemHostUnregister", ACU_API_VERSION,
             (void *pointer))

/* ---- streams and events ---- */
ACU_REQUIRED(cuStreamCreate, "cuStreamCreate", ACU_API_VERSION,
             (acu_CUstream * stream, unsigned int flags))
ACU_REQUIRED(cuStreamDestroy_v2, "cuStreamDestroy", ACU_API_VERSION,
             (acu_CUstream stream))
ACU_REQUIRED(cuStreamWaitEvent, "cuStreamWaitEvent", ACU_API_VERSION,
             (acu_CUstream stream, acu_CUevent event, unsigned int flags))
ACU_REQUIRED(cuEventCreate, "cuEventCreate", ACU_API_VERSION,
             (acu_CUevent * event, unsigned int flags))
ACU_REQUIRED(cuEventDestroy_v2, "cuEventDestroy", ACU_API_VERSION,
             (acu_CUevent event))
ACU_REQUIRED(cuEventRecord, "cuEventRecord", ACU_API_VERSION,
             (acu_CUevent event, acu_CUstream stream))
ACU_REQUIRED(cuEventQuery, "cuEventQuery", ACU_API_VERSION, (acu_CUevent event))
ACU_REQUIRED(cuEventSynchronize, "cuEventSynchronize", ACU_API_VERSION,
             (acu_CUevent event))
ACU_REQUIRED(cuLaunchHostFunc, "cuLaunchHostFunc", ACU_API_VERSION,
             (acu_CUstream stream, acu_CUhostFn fn, void *user_data))

/* ---- copies ---- */
ACU_REQUIRED(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", ACU_API_VERSION,
             (acu_CUdeviceptr dst, const void *src, size_t bytes,
              acu_CUstream stream))
ACU_REQUIRED(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", ACU_API_VERSION,
             (void *dst, acu_CUdeviceptr src, size_t bytes, acu_CUstream stream))
ACU_REQUIRED(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", ACU_API_VERSION,
             (acu_CUdeviceptr dst, acu_CUdeviceptr src, size_t bytes,
              acu_CUstream stream))
ACU_REQUIRED(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", ACU_API_VERSION,
             (const acu_CUDA_MEMCPY2D *copy, acu_CUstream stream))
ACU_REQUIRED(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", ACU_API_VERSION,
             (const acu_CUDA_MEMCPY3D *copy, acu_CUstream stream))

/* ---- modules and launches ---- */
ACU_REQUIRED(cuModuleLoadDataEx, "cuModuleLoadDataEx", ACU_API_VERSION,
             (acu_CUmodule * module, const void *image, unsigned int option_count,
              acu_CUjit_option *options, void **option_values))
ACU_REQUIRED(cuModuleUnload, "cuModuleUnload", ACU_API_VERSION,
             (acu_CUmodule module))
ACU_REQUIRED(cuModuleGetFunction, "cuModuleGetFunction", ACU_API_VERSION,
             (acu_CUfunction * function, acu_CUmodule module, const char *name))
ACU_REQUIRED(cuFuncGetAttribute, "cuFuncGetAttribute", ACU_API_VERSION,
             (int *value, acu_CUfunction_attribute attribute,
              acu_CUfunction function))
ACU_REQUIRED(cuFuncSetAttribute, "cuFuncSetAttribute", ACU_API_VERSION,
             (acu_CUfunction function, acu_CUfunction_attribute attribute,
              int value))
ACU_REQUIRED(cuLaunchKernel, "cuLaunchKernel", ACU_API_VERSION,
             (acu_CUfunction function, unsigned int grid_x, unsigned int grid_y,
              unsigned int grid_z, unsigned int block_x, unsigned int block_y,
              unsigned int block_z, unsigned int shared_bytes,
              acu_CUstream stream, void **params, void **extra))

/* ---- optional ---- */
/* The driver's sentence for a code; the stub library has none to give. */
ACU_OPTIONAL(cuGetErrorString, "cuGetErrorString", ACU_API_VERSION,
             (acu_CUresult error, const char **text))
/* A kernel's parameter sizes, for the host's launch checks; CUDA 12.4 on. */
ACU_OPTIONAL(cuFuncGetParamInfo, "cuFuncGetParamInfo", 12040,
             (acu_CUfunction function, size_t index, size_t *offset, size_t *size))
/* Copies between two devices' contexts (copy_peer); without them, copy_peer is NULL. */
ACU_OPTIONAL(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", ACU_API_VERSION,
             (acu_CUdeviceptr dst, acu_CUcontext dst_context, acu_CUdeviceptr src,
              acu_CUcontext src_context, size_t bytes, acu_CUstream stream))
ACU_OPTIONAL(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync", ACU_API_VERSION,
             (const acu_CUDA_MEMCPY3D_PEER *copy, acu_CUstream stream))
/* What selection names a device by (accel_device_props.uuid, .pci_bus_id);
 * without them the device has none. _v2 is CUDA 11.4's, nvidia-smi's uuid. */
ACU_OPTIONAL(cuDeviceGetUuid_v2, "cuDeviceGetUuid", 11040,
             (acu_CUuuid * uuid, acu_CUdevice device))
ACU_OPTIONAL(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", ACU_API_VERSION,
             (char *bus_id, int length, acu_CUdevice device))
/* Event timestamps (event_elapsed); without it, event_elapsed says not supported. */
ACU_OPTIONAL(cuEventElapsedTime, "cuEventElapsedTime", ACU_API_VERSION,
             (float *milliseconds, acu_CUevent start, acu_CUevent end))

#undef ACU_REQUIRED
#undef ACU_OPTIONAL
