/*
 * The HIP runtime API, as much of it as the HIP plugin uses, declared here
 * so that the plugin builds without ROCm and never links libamdhip64: the
 * plugin opens the runtime with dlopen at run time.
 *
 * Naming: HIP's name N is declared here as ahip_N (types) or AHIP_N
 * (constants): ahip_hipError_t, ahip_hipMemcpy3DParms, AHIP_hipErrorOutOfMemory,
 * AHIP_hipStreamNonBlocking. The prefix keeps these apart from HIP's own
 * names, so that hip_api_check.c can include both and prove, with
 * _Static_assert, that every type, layout, constant and entry point
 * signature here matches hip_runtime_api.h where the HIP headers are
 * installed. Opaque handles use HIP's own struct tags, so they are the very
 * same types.
 *
 * Everything is the 64-bit Linux ABI of the AMD runtime (libamdhip64) of
 * ROCm 5 and 6, whose sonames the plugin opens. The entry points themselves
 * are listed in hip_symbol_table.h.
 */
#ifndef ACCEL_HIP_API_H
#define ACCEL_HIP_API_H

#include <stddef.h>
#include <stdint.h>

/* ---- handle types ---- */

typedef int ahip_hipDevice_t;
typedef void *ahip_hipDeviceptr_t;
typedef struct ihipStream_t *ahip_hipStream_t;
typedef struct ihipEvent_t *ahip_hipEvent_t;
typedef struct ihipModule_t *ahip_hipModule_t;
typedef struct ihipModuleSymbol_t *ahip_hipFunction_t;
typedef struct hipArray *ahip_hipArray_t;
typedef void (*ahip_hipHostFn_t)(void *user_data);

/* A device's uuid: 16 bytes (ROCm: 16 characters of its unique id). */
typedef struct ahip_hipUUID_t {
    char bytes[16];
} ahip_hipUUID;

/*
 * ---- hipError_t: every code of HIP 5.2, X(name, value) ----
 *
 * Deprecated aliases (hipErrorMemoryAllocation = 2, ...) are left out: a
 * code has one name in messages. hip_api_check.c proves each against the
 * installed header.
 */
#define AHIP_ERROR_LIST(X)                                                     \
    X(hipSuccess, 0)                                                           \
    X(hipErrorInvalidValue, 1)                                                 \
    X(hipErrorOutOfMemory, 2)                                                  \
    X(hipErrorNotInitialized, 3)                                               \
    X(hipErrorDeinitialized, 4)                                                \
    X(hipErrorProfilerDisabled, 5)                                             \
    X(hipErrorProfilerNotInitialized, 6)                                       \
    X(hipErrorProfilerAlreadyStarted, 7)                                       \
    X(hipErrorProfilerAlreadyStopped, 8)                                       \
    X(hipErrorInvalidConfiguration, 9)                                         \
    X(hipErrorInvalidPitchValue, 12)                                           \
    X(hipErrorInvalidSymbol, 13)                                               \
    X(hipErrorInvalidDevicePointer, 17)                                        \
    X(hipErrorInvalidMemcpyDirection, 21)                                      \
    X(hipErrorInsufficientDriver, 35)                                          \
    X(hipErrorMissingConfiguration, 52)                                        \
    X(hipErrorPriorLaunchFailure, 53)                                          \
    X(hipErrorInvalidDeviceFunction, 98)                                       \
    X(hipErrorNoDevice, 100)                                                   \
    X(hipErrorInvalidDevice, 101)                                              \
    X(hipErrorInvalidImage, 200)                                               \
    X(hipErrorInvalidContext, 201)                                             \
    X(hipErrorContextAlreadyCurrent, 202)                                      \
    X(hipErrorMapFailed, 205)                                                  \
    X(hipErrorUnmapFailed, 206)                                                \
    X(hipErrorArrayIsMapped, 207)                                              \
    X(hipErrorAlreadyMapped, 208)                                              \
    X(hipErrorNoBinaryForGpu, 209)                                             \
    X(hipErrorAlreadyAcquired, 210)                                            \
    X(hipErrorNotMapped, 211)                                                  \
    X(hipErrorNotMappedAsArray, 212)                                           \
    X(hipErrorNotMappedAsPointer, 213)                                         \
    X(hipErrorECCNotCorrectable, 214)                                          \
    X(hipErrorUnsupportedLimit, 215)                                           \
    X(hipErrorContextAlreadyInUse, 216)                                        \
    X(hipErrorPeerAccessUnsupported, 217)                                      \
    X(hipErrorInvalidKernelFile, 218)                                          \
    X(hipErrorInvalidGraphicsContext, 219)                                     \
    X(hipErrorInvalidSource, 300)                                              \
    X(hipErrorFileNotFound, 301)                                               \
    X(hipErrorSharedObjectSymbolNotFound, 302)                                 \
    X(hipErrorSharedObjectInitFailed, 303)                                     \
    X(hipErrorOperatingSystem, 304)                                            \
    X(hipErrorInvalidHandle, 400)                                              \
    X(hipErrorIllegalState, 401)                                               \
    X(hipErrorNotFound, 500)                                                   \
    X(hipErrorNotReady, 600)                                                   \
    X(hipErrorIllegalAddress, 700)                                             \
    X(hipErrorLaunchOutOfResources, 701)                                       \
    X(hipErrorLaunchTimeOut, 702)                                              \
    X(hipErrorPeerAccessAlreadyEnabled, 704)                                   \
    X(hipErrorPeerAccessNotEnabled, 705)                                       \
    X(hipErrorSetOnActiveProcess, 708)                                         \
    X(hipErrorContextIsDestroyed, 709)                                         \
    X(hipErrorAssert, 710)                                                     \
    X(hipErrorHostMemoryAlreadyRegistered, 712)                                \
    X(hipErrorHostMemoryNotRegistered, 713)                                    \
    X(hipErrorLaunchFailure, 719)                                              \
    X(hipErrorCooperativeLaunchTooLarge, 720)                                  \
    X(hipErrorNotSupported, 801)                                               \
    X(hipErrorStreamCaptureUnsupported, 900)                                   \
    X(hipErrorStreamCaptureInvalidated, 901)                                   \
    X(hipErrorStreamCaptureMerge, 902)                                         \
    X(hipErrorStreamCaptureUnmatched, 903)                                     \
    X(hipErrorStreamCaptureUnjoined, 904)                                      \
    X(hipErrorStreamCaptureIsolation, 905)                                     \
    X(hipErrorStreamCaptureImplicit, 906)                                      \
    X(hipErrorCapturedEvent, 907)                                              \
    X(hipErrorStreamCaptureWrongThread, 908)                                   \
    X(hipErrorGraphExecUpdateFailure, 910)                                     \
    X(hipErrorUnknown, 999)                                                    \
    X(hipErrorRuntimeMemory, 1052)                                             \
    X(hipErrorRuntimeOther, 1053)

/*
 * Codes that later runtimes (ROCm 6 and 7) return and HIP 5.2's header
 * lacks: named for messages only, so not proven against a header here.
 * 1054 was hipErrorTbd, an end marker, before it got this name.
 */
#define AHIP_ERROR_LIST_LATER(X)                                               \
    X(hipErrorInvalidChannelDescriptor, 911)                                   \
    X(hipErrorInvalidTexture, 912)                                             \
    X(hipErrorInvalidResourceType, 914)                                        \
    X(hipErrorInvalidResourceConfiguration, 915)                               \
    X(hipErrorStreamDetached, 916)                                             \
    X(hipErrorInvalidClusterSize, 1054)

typedef enum ahip_hipError_t {
#define AHIP_ERROR_ENUM_(name, value) AHIP_##name = value,
    AHIP_ERROR_LIST(AHIP_ERROR_ENUM_) AHIP_ERROR_LIST_LATER(AHIP_ERROR_ENUM_)
#undef AHIP_ERROR_ENUM_
} ahip_hipError_t;

typedef void (*ahip_hipStreamCallback_t)(ahip_hipStream_t stream,
                                         ahip_hipError_t status, void *user_data);

/*
 * ---- device attributes the plugin reads ----
 *
 * Their values have not moved from ROCm 5 to ROCm 7 (later entries were
 * renamed in place or appended): proven against the installed header at
 * build time, and read against ROCm 7's hip_runtime_api.h when written.
 */
typedef enum ahip_hipDeviceAttribute_t {
    AHIP_hipDeviceAttributeMaxBlockDimX = 26,
    AHIP_hipDeviceAttributeMaxBlockDimY = 27,
    AHIP_hipDeviceAttributeMaxBlockDimZ = 28,
    AHIP_hipDeviceAttributeMaxGridDimX = 29,
    AHIP_hipDeviceAttributeMaxGridDimY = 30,
    AHIP_hipDeviceAttributeMaxGridDimZ = 31,
    AHIP_hipDeviceAttributeMaxThreadsPerBlock = 56,
    AHIP_hipDeviceAttributeMaxPitch = 58,
    AHIP_hipDeviceAttributeMultiprocessorCount = 63,
    AHIP_hipDeviceAttributeMaxSharedMemoryPerBlock = 74
} ahip_hipDeviceAttribute_t;

/* ---- kernel attributes the plugin reads (hipFuncGetAttribute, CUDA's numbering) ---- */

typedef enum ahip_hipFunction_attribute {
    AHIP_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    AHIP_HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
} ahip_hipFunction_attribute;

/*
 * ---- hipDeviceProp_t: only where gcnArchName is ----
 *
 * The device's target name ("gfx90a:sramecc+:xnack-") is only given in
 * hipDeviceProp_t, a struct of a hundred fields whose layout ROCm 6
 * changed. The runtime keeps both: hipGetDeviceProperties (and
 * hipGetDevicePropertiesR0000) fill the ROCm 5 layout, R0000, and ROCm 6's
 * hipGetDevicePropertiesR0600 the new one. Rather than copy either struct,
 * the plugin hands the runtime a zeroed buffer larger than both and reads
 * the one field at its offset. hip_api_check.c proves the offsets and that
 * the buffer is large enough against whichever layouts the installed
 * header has (R0000 in HIP 5's, both in HIP 6's).
 */
typedef struct ahip_hipDeviceProp_tR0000 ahip_hipDeviceProp_tR0000; /* never complete */
typedef struct ahip_hipDeviceProp_tR0600 ahip_hipDeviceProp_tR0600; /* never complete */

#define AHIP_PROPS_BUFFER_BYTES 4096
#define AHIP_PROPS_R0000_GCN_ARCH_NAME_OFFSET 396
#define AHIP_PROPS_R0600_GCN_ARCH_NAME_OFFSET 1160
#define AHIP_PROPS_GCN_ARCH_NAME_BYTES 256

/* ---- copies ---- */

typedef enum ahip_hipMemcpyKind {
    AHIP_hipMemcpyHostToHost = 0,
    AHIP_hipMemcpyHostToDevice = 1,
    AHIP_hipMemcpyDeviceToHost = 2,
    AHIP_hipMemcpyDeviceToDevice = 3,
    AHIP_hipMemcpyDefault = 4
} ahip_hipMemcpyKind;

typedef struct ahip_hipPitchedPtr {
    void *ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
} ahip_hipPitchedPtr;

typedef struct ahip_hipExtent {
    size_t width; /* bytes, for linear memory */
    size_t height;
    size_t depth;
} ahip_hipExtent;

typedef struct ahip_hipPos {
    size_t x;
    size_t y;
    size_t z;
} ahip_hipPos;

typedef struct ahip_hipMemcpy3DParms {
    ahip_hipArray_t srcArray;
    ahip_hipPos srcPos;
    ahip_hipPitchedPtr srcPtr;
    ahip_hipArray_t dstArray;
    ahip_hipPos dstPos;
    ahip_hipPitchedPtr dstPtr;
    ahip_hipExtent extent;
    ahip_hipMemcpyKind kind;
} ahip_hipMemcpy3DParms;

/* ---- flags ---- */

#define AHIP_hipStreamNonBlocking 0x01
#define AHIP_hipEventBlockingSync 0x1
#define AHIP_hipEventDisableTiming 0x2
#define AHIP_hipHostRegisterPortable 0x1

#endif /* ACCEL_HIP_API_H */
