/*
 * Every HIP runtime entry point the plugin calls, once. No include guard:
 * this file is included where a list is wanted, with the two macros
 * defined to make what that place needs (hip_dynamic_symbols.h declares the
 * function pointers, hip_dynamic_symbols.c resolves them, hip_api_check.c
 * proves each signature against hip_runtime_api.h, the fake runtime in
 * tests/fakes/hip declares its exports from it), and it undefines them
 * after.
 *
 *   AHIP_REQUIRED(return_type, symbol, (parameters))
 *   AHIP_OPTIONAL(return_type, symbol, (parameters))
 *
 * `symbol` is the name libamdhip64 exports, found with dlsym. Without a
 * REQUIRED entry the plugin has no device; an OPTIONAL one may be NULL and
 * every use checks.
 */

#if !defined(AHIP_REQUIRED) || !defined(AHIP_OPTIONAL)
#error "define AHIP_REQUIRED and AHIP_OPTIONAL before including hip_symbol_table.h"
#endif

/* ---- initialisation and devices ---- */
AHIP_REQUIRED(ahip_hipError_t, hipInit, (unsigned int flags))
AHIP_REQUIRED(ahip_hipError_t, hipDriverGetVersion, (int *version))
AHIP_REQUIRED(ahip_hipError_t, hipGetDeviceCount, (int *count))
AHIP_REQUIRED(ahip_hipError_t, hipDeviceGetName,
              (char *name, int length, ahip_hipDevice_t device))
AHIP_REQUIRED(ahip_hipError_t, hipDeviceTotalMem,
              (size_t * bytes, ahip_hipDevice_t device))
AHIP_REQUIRED(ahip_hipError_t, hipDeviceGetAttribute,
              (int *value, ahip_hipDeviceAttribute_t attribute, int device))
/* The ROCm 5 layout (R0000) of hipDeviceProp_t; ROCm 6 keeps it under this name. */
AHIP_REQUIRED(ahip_hipError_t, hipGetDeviceProperties,
              (ahip_hipDeviceProp_tR0000 * properties, int device))

/* ---- the calling thread's device, and its reset ---- */
AHIP_REQUIRED(ahip_hipError_t, hipGetDevice, (int *device))
AHIP_REQUIRED(ahip_hipError_t, hipSetDevice, (int device))
AHIP_REQUIRED(ahip_hipError_t, hipDeviceReset, (void))

/* ---- memory ---- */
AHIP_REQUIRED(ahip_hipError_t, hipMalloc, (void **pointer, size_t bytes))
AHIP_REQUIRED(ahip_hipError_t, hipFree, (void *pointer))
/* Pinned host memory is the plugin's own pages, registered (see pinned_host.h). */
AHIP_REQUIRED(ahip_hipError_t, hipHostRegister,
              (void *pointer, size_t bytes, unsigned int flags))
AHIP_REQUIRED(ahip_hipError_t, hipHostUnregister, (void *pointer))

/* ---- streams and events ---- */
AHIP_REQUIRED(ahip_hipError_t, hipStreamCreateWithFlags,
              (ahip_hipStream_t * stream, unsigned int flags))
AHIP_REQUIRED(ahip_hipError_t, hipStreamDestroy, (ahip_hipStream_t stream))
AHIP_REQUIRED(ahip_hipError_t, hipStreamSynchronize, (ahip_hipStream_t stream))
AHIP_REQUIRED(ahip_hipError_t, hipStreamWaitEvent,
              (ahip_hipStream_t stream, ahip_hipEvent_t event, unsigned int flags))
AHIP_REQUIRED(ahip_hipError_t, hipEventCreateWithFlags,
              (ahip_hipEvent_t * event, unsigned int flags))
AHIP_REQUIRED(ahip_hipError_t, hipEventDestroy, (ahip_hipEvent_t event))
AHIP_REQUIRED(ahip_hipError_t, hipEventRecord,
              (ahip_hipEvent_t event, ahip_hipStream_t stream))
AHIP_REQUIRED(ahip_hipError_t, hipEventQuery, (ahip_hipEvent_t event))
AHIP_REQUIRED(ahip_hipError_t, hipEventSynchronize, (ahip_hipEvent_t event))
/* Host functions: hipLaunchHostFunc where the runtime has it (not ROCm 5.2's), else this. */
AHIP_REQUIRED(ahip_hipError_t, hipStreamAddCallback,
              (ahip_hipStream_t stream, ahip_hipStreamCallback_t callback,
               void *user_data, unsigned int flags))

/* ---- copies ---- */
AHIP_REQUIRED(ahip_hipError_t, hipMemcpyAsync,
              (void *dst, const void *src, size_t bytes,
               ahip_hipMemcpyKind kind, ahip_hipStream_t stream))
AHIP_REQUIRED(ahip_hipError_t, hipMemcpy2DAsync,
              (void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
               size_t width, size_t height, ahip_hipMemcpyKind kind,
               ahip_hipStream_t stream))
AHIP_REQUIRED(ahip_hipError_t, hipMemcpy3DAsync,
              (const ahip_hipMemcpy3DParms *copy, ahip_hipStream_t stream))

/* ---- modules and launches ---- */
AHIP_REQUIRED(ahip_hipError_t, hipModuleLoadData,
              (ahip_hipModule_t * module, const void *image))
AHIP_REQUIRED(ahip_hipError_t, hipModuleUnload, (ahip_hipModule_t module))
AHIP_REQUIRED(ahip_hipError_t, hipModuleGetFunction,
              (ahip_hipFunction_t * function, ahip_hipModule_t module,
               const char *name))
AHIP_REQUIRED(ahip_hipError_t, hipModuleLaunchKernel,
              (ahip_hipFunction_t function, unsigned int grid_x,
               unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
               unsigned int block_y, unsigned int block_z,
               unsigned int shared_bytes, ahip_hipStream_t stream,
               void **params, void **extra))

/* ---- optional ---- */
/* Exported from ROCm 5.3 or so on; Debian's 5.2 declares it in the header only. */
AHIP_OPTIONAL(ahip_hipError_t, hipLaunchHostFunc,
              (ahip_hipStream_t stream, ahip_hipHostFn_t fn, void *user_data))
/* The ROCm 6 layout of hipDeviceProp_t; absent before ROCm 6. */
AHIP_OPTIONAL(ahip_hipError_t, hipGetDevicePropertiesR0600,
              (ahip_hipDeviceProp_tR0600 * properties, int device))
/* A kernel's own limits; where a runtime lacks it, the device's are all the plugin knows. */
AHIP_OPTIONAL(ahip_hipError_t, hipFuncGetAttribute,
              (int *value, ahip_hipFunction_attribute attribute,
               ahip_hipFunction_t function))
/* Copies between two devices (copy_peer); without it, copy_peer declines. */
AHIP_OPTIONAL(ahip_hipError_t, hipMemcpyPeerAsync,
              (void *dst, int dst_device, const void *src, int src_device,
               size_t bytes, ahip_hipStream_t stream))
/* What selection names a device by (accel_device_props.uuid, .pci_bus_id). */
AHIP_OPTIONAL(ahip_hipError_t, hipDeviceGetUuid,
              (ahip_hipUUID * uuid, ahip_hipDevice_t device))
AHIP_OPTIONAL(ahip_hipError_t, hipDeviceGetPCIBusId,
              (char *bus_id, int length, int device))
/* Event timestamps (event_elapsed); without it, event_elapsed says not supported. */
AHIP_OPTIONAL(ahip_hipError_t, hipEventElapsedTime,
              (float *milliseconds, ahip_hipEvent_t start, ahip_hipEvent_t end))
/* The runtime's sentence for a code (ROCm 5's is the code's name again). */
AHIP_OPTIONAL(const char *, hipGetErrorString, (ahip_hipError_t error))

#undef AHIP_REQUIRED
#undef AHIP_OPTIONAL
