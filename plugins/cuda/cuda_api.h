/*
 * The CUDA Driver API, as much of it as the CUDA plugin uses, declared here
 * so that the plugin builds without the CUDA toolkit and never links
 * libcuda: the plugin opens the driver with dlopen at run time.
 *
 * Naming: CUDA's name N is declared here as acu_N (types) or ACU_N
 * (constants): acu_CUresult, acu_CUDA_MEMCPY3D, ACU_CUDA_ERROR_OUT_OF_MEMORY,
 * ACU_CU_STREAM_NON_BLOCKING. The prefix keeps these apart from cuda.h's own
 * names, so that cuda_api_check.c can include both and prove, with
 * _Static_assert, that every type, layout, constant and entry point
 * signature here matches cuda.h where the toolkit is installed. Opaque
 * handles use cuda.h's own struct tags, so they are the very same types.
 *
 * Everything is the 64-bit Linux ABI of the Driver API since CUDA 12.0;
 * the entry points themselves are listed in cuda_symbol_table.h.
 */
#ifndef ACCEL_CUDA_API_H
#define ACCEL_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/*
 * The API version the plugin asks cuGetProcAddress for: the version whose
 * signatures these declarations are. A newer driver keeps handing out these
 * versions of each entry, whatever it adds later.
 */
#define ACU_API_VERSION 12000

/* ---- scalar and handle types ---- */

typedef uint64_t acu_cuuint64_t;
typedef unsigned long long acu_CUdeviceptr;
typedef int acu_CUdevice;
typedef struct CUctx_st *acu_CUcontext;
typedef struct CUmod_st *acu_CUmodule;
typedef struct CUfunc_st *acu_CUfunction;
typedef struct CUarray_st *acu_CUarray;
typedef struct CUevent_st *acu_CUevent;
typedef struct CUstream_st *acu_CUstream;
typedef void (*acu_CUhostFn)(void *user_data);

/* ---- CUresult: every code of CUDA 13.0, X(name, value) ---- */

#define ACU_RESULT_LIST(X)                                                     \
    X(CUDA_SUCCESS, 0)                                                         \
    X(CUDA_ERROR_INVALID_VALUE, 1)                                             \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                             \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)                                           \
    X(CUDA_ERROR_DEINITIALIZED, 4)                                             \
    X(CUDA_ERROR_PROFILER_DISABLED, 5)                                         \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, 6)                                  \
    X(CUDA_ERROR_PROFILER_ALREADY_STARTED, 7)                                  \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, 8)                                  \
    X(CUDA_ERROR_STUB_LIBRARY, 34)                                             \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36)                               \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                                       \
    X(CUDA_ERROR_NO_DEVICE, 100)                                               \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                                          \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)                                     \
    X(CUDA_ERROR_INVALID_IMAGE, 200)                                           \
    X(CUDA_ERROR_INVALID_CONTEXT, 201)                                         \
    X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202)                                 \
    X(CUDA_ERROR_MAP_FAILED, 205)                                              \
    X(CUDA_ERROR_UNMAP_FAILED, 206)                                            \
    X(CUDA_ERROR_ARRAY_IS_MAPPED, 207)                                         \
    X(CUDA_ERROR_ALREADY_MAPPED, 208)                                          \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                                       \
    X(CUDA_ERROR_ALREADY_ACQUIRED, 210)                                        \
    X(CUDA_ERROR_NOT_MAPPED, 211)                                              \
    X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, 212)                                     \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, 213)                                   \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)                                       \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT, 215)                                       \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, 216)                                  \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217)                                 \
    X(CUDA_ERROR_INVALID_PTX, 218)                                             \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, 219)                                \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220)                                    \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)                                  \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                                 \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)                                \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, 224)                               \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, 225)                                \
    X(CUDA_ERROR_CONTAINED, 226)                                               \
    X(CUDA_ERROR_INVALID_SOURCE, 300)                                          \
    X(CUDA_ERROR_FILE_NOT_FOUND, 301)                                          \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302)                          \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)                               \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304)                                        \
    X(CUDA_ERROR_INVALID_HANDLE, 400)                                          \
    X(CUDA_ERROR_ILLEGAL_STATE, 401)                                           \
    X(CUDA_ERROR_LOSSY_QUERY, 402)                                             \
    X(CUDA_ERROR_NOT_FOUND, 500)                                               \
    X(CUDA_ERROR_NOT_READY, 600)                                               \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                         \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                                 \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                          \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703)                           \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)                             \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705)                                 \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708)                                  \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                    \
    X(CUDA_ERROR_ASSERT, 710)                                                  \
    X(CUDA_ERROR_TOO_MANY_PEERS, 711)                                          \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712)                          \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713)                              \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                    \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                     \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                      \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                   \
    X(CUDA_ERROR_INVALID_PC, 718)                                              \
    X(CUDA_ERROR_LAUNCH_FAILED, 719)                                           \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720)                            \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721)                                      \
    X(CUDA_ERROR_NOT_PERMITTED, 800)                                           \
    X(CUDA_ERROR_NOT_SUPPORTED, 801)                                           \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802)                                        \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                                  \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)                          \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED, 805)                                   \
    X(CUDA_ERROR_MPS_RPC_FAILURE, 806)                                         \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY, 807)                                    \
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, 808)                                 \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, 809)                             \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810)                                   \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED, 811)                                       \
    X(CUDA_ERROR_CDP_VERSION_MISMATCH, 812)                                    \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900)                              \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901)                              \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902)                                    \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903)                                \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904)                                 \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905)                                \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906)                                 \
    X(CUDA_ERROR_CAPTURED_EVENT, 907)                                          \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908)                             \
    X(CUDA_ERROR_TIMEOUT, 909)                                                 \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 910)                               \
    X(CUDA_ERROR_EXTERNAL_DEVICE, 911)                                         \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912)                                    \
    X(CUDA_ERROR_FUNCTION_NOT_LOADED, 913)                                     \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE, 914)                                   \
    X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, 915)                          \
    X(CUDA_ERROR_KEY_ROTATION, 916)                                            \
    X(CUDA_ERROR_UNKNOWN, 999)

typedef enum acu_cudaError_enum {
#define ACU_RESULT_ENUM_(name, value) ACU_##name = value,
    ACU_RESULT_LIST(ACU_RESULT_ENUM_)
#undef ACU_RESULT_ENUM_
} acu_CUresult;

/* ---- device attributes the plugin reads ---- */

typedef enum acu_CUdevice_attribute_enum {
    ACU_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
    ACU_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    ACU_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
} acu_CUdevice_attribute;

/* ---- kernel attributes the plugin reads and sets ---- */

typedef enum acu_CUfunction_attribute_enum {
    ACU_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    ACU_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    ACU_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
} acu_CUfunction_attribute;

/* ---- JIT options the plugin passes to cuModuleLoadDataEx ---- */

typedef enum acu_CUjit_option_enum {
    ACU_CU_JIT_INFO_LOG_BUFFER = 3,
    ACU_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    ACU_CU_JIT_ERROR_LOG_BUFFER = 5,
    ACU_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    ACU_CU_JIT_LOG_VERBOSE = 12
} acu_CUjit_option;

/* ---- copies ---- */

typedef enum acu_CUmemorytype_enum {
    ACU_CU_MEMORYTYPE_HOST = 1,
    ACU_CU_MEMORYTYPE_DEVICE = 2,
    ACU_CU_MEMORYTYPE_ARRAY = 3,
    ACU_CU_MEMORYTYPE_UNIFIED = 4
} acu_CUmemorytype;

typedef struct acu_CUDA_MEMCPY2D_st {
    size_t srcXInBytes;
    size_t srcY;
    acu_CUmemorytype srcMemoryType;
    const void *srcHost;
    acu_CUdeviceptr srcDevice;
    acu_CUarray srcArray;
    size_t srcPitch;

    size_t dstXInBytes;
    size_t dstY;
    acu_CUmemorytype dstMemoryType;
    void *dstHost;
    acu_CUdeviceptr dstDevice;
    acu_CUarray dstArray;
    size_t dstPitch;

    size_t WidthInBytes;
    size_t Height;
} acu_CUDA_MEMCPY2D;

typedef struct acu_CUDA_MEMCPY3D_st {
    size_t srcXInBytes;
    size_t srcY;
    size_t srcZ;
    size_t srcLOD;
    acu_CUmemorytype srcMemoryType;
    const void *srcHost;
    acu_CUdeviceptr srcDevice;
    acu_CUarray srcArray;
    void *reserved0;
    size_t srcPitch;
    size_t srcHeight;

    size_t dstXInBytes;
    size_t dstY;
    size_t dstZ;
    size_t dstLOD;
    acu_CUmemorytype dstMemoryType;
    void *dstHost;
    acu_CUdeviceptr dstDevice;
    acu_CUarray dstArray;
    void *reserved1;
    size_t dstPitch;
    size_t dstHeight;

    size_t WidthInBytes;
    size_t Height;
    size_t Depth;
} acu_CUDA_MEMCPY3D;

/* CUDA_MEMCPY3D with each side's context where CUDA_MEMCPY3D has reserved fields. */
typedef struct acu_CUDA_MEMCPY3D_PEER_st {
    size_t srcXInBytes;
    size_t srcY;
    size_t srcZ;
    size_t srcLOD;
    acu_CUmemorytype srcMemoryType;
    const void *srcHost;
    acu_CUdeviceptr srcDevice;
    acu_CUarray srcArray;
    acu_CUcontext srcContext;
    size_t srcPitch;
    size_t srcHeight;

    size_t dstXInBytes;
    size_t dstY;
    size_t dstZ;
    size_t dstLOD;
    acu_CUmemorytype dstMemoryType;
    void *dstHost;
    acu_CUdeviceptr dstDevice;
    acu_CUarray dstArray;
    acu_CUcontext dstContext;
    size_t dstPitch;
    size_t dstHeight;

    size_t WidthInBytes;
    size_t Height;
    size_t Depth;
} acu_CUDA_MEMCPY3D_PEER;

/* A device's uuid: 16 bytes. */
typedef struct acu_CUuuid_st {
    char bytes[16];
} acu_CUuuid;

/* ---- cuGetProcAddress ---- */

typedef enum acu_CUdriverProcAddressQueryResult_enum {
    ACU_CU_GET_PROC_ADDRESS_SUCCESS = 0,
    ACU_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    ACU_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} acu_CUdriverProcAddressQueryResult;

/* cuGetProcAddress's flags. */
#define ACU_CU_GET_PROC_ADDRESS_DEFAULT 0
#define ACU_CU_GET_PROC_ADDRESS_LEGACY_STREAM 1

/*
 * cuGetProcAddress_v2 (CUDA 12.0 on), the one entry found by dlsym alone:
 * it finds the others.
 */
#define ACU_CUGETPROCADDRESS_V2_PARAMETERS                                     \
    (const char *symbol, void **pfn, int cuda_version, acu_cuuint64_t flags,   \
     acu_CUdriverProcAddressQueryResult *status)
typedef acu_CUresult(*acu_pfn_cuGetProcAddress_v2) ACU_CUGETPROCADDRESS_V2_PARAMETERS;

/* ---- flags ---- */

#define ACU_CU_STREAM_NON_BLOCKING 0x1
#define ACU_CU_EVENT_BLOCKING_SYNC 0x1
#define ACU_CU_EVENT_DISABLE_TIMING 0x2
#define ACU_CU_MEMHOSTREGISTER_PORTABLE 0x01

#endif /* ACCEL_CUDA_API_H */
