/*
 * Proof, at build time, that the CUDA plugin's own declarations of the
 * Driver API (cuda_api.h, cuda_symbol_table.h) are cuda.h's: every type,
 * struct layout and constant, and every entry point's signature. Built only
 * where the toolkit's cuda.h is found; any difference fails the build with
 * the name of what differs. The program itself only says that it was built.
 *
 * How: cuda_api.h names CUDA's N as acu_N / ACU_N, so both headers can be
 * included together. Types and layouts are compared directly. Then each
 * acu_ type name is defined as a macro for cuda.h's, and the symbol table is
 * expanded once more into a comparison of each entry's pointer type with
 * that of cuda.h's declaration of the same versioned symbol.
 */
#include <stddef.h>
#include <stdio.h>

#include <cuda.h>

#include "cuda_api.h"

#define SAME_TYPE(ours, theirs)                                                \
    _Static_assert(__builtin_types_compatible_p(ours, theirs),                 \
                   #ours " is not cuda.h's " #theirs)
/* An enum: same size and signedness (two enum types are never the same type). */
#define SAME_ENUM(ours, theirs)                                                  \
    _Static_assert(sizeof(ours) == sizeof(theirs) &&                             \
                       ((long long)(ours)-1 < 0) == ((long long)(theirs)-1 < 0), \
                   #ours " is not laid out as cuda.h's " #theirs)
#define SAME_CONSTANT(name)                                                    \
    _Static_assert((long long)ACU_##name == (long long)name,                   \
                   "ACU_" #name " is not " #name)
#define SAME_STRUCT(ours, theirs)                                              \
    _Static_assert(sizeof(ours) == sizeof(theirs) &&                           \
                       _Alignof(ours) == _Alignof(theirs),                     \
                   #ours " is not the size of cuda.h's " #theirs)
#define SAME_FIELD(ours, theirs, field)                                        \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field) &&         \
                       sizeof(((ours *)0)->field) ==                           \
                           sizeof(((theirs *)0)->field),                       \
                   #ours "." #field " is not where cuda.h has it")

_Static_assert(CUDA_VERSION >= ACU_API_VERSION,
               "cuda.h is older than the API version the plugin pins");

/* ---- scalars and handles: the very same types ---- */

SAME_TYPE(acu_cuuint64_t, cuuint64_t);
SAME_TYPE(acu_CUdeviceptr, CUdeviceptr);
SAME_TYPE(acu_CUdevice, CUdevice);
SAME_TYPE(acu_CUcontext, CUcontext);
SAME_TYPE(acu_CUmodule, CUmodule);
SAME_TYPE(acu_CUfunction, CUfunction);
SAME_TYPE(acu_CUarray, CUarray);
SAME_TYPE(acu_CUevent, CUevent);
SAME_TYPE(acu_CUstream, CUstream);
SAME_TYPE(acu_CUhostFn, CUhostFn);

/* ---- enums and constants ---- */

SAME_ENUM(acu_CUresult, CUresult);
SAME_ENUM(acu_CUdevice_attribute, CUdevice_attribute);
SAME_ENUM(acu_CUjit_option, CUjit_option);
SAME_ENUM(acu_CUfunction_attribute, CUfunction_attribute);
SAME_ENUM(acu_CUmemorytype, CUmemorytype);
SAME_ENUM(acu_CUdriverProcAddressQueryResult, CUdriverProcAddressQueryResult);

#define SAME_RESULT(name, value)                                               \
    _Static_assert((long long)ACU_##name == (long long)name &&                 \
                       (value) == (long long)name,                             \
                   "ACU_" #name " is not " #name);
ACU_RESULT_LIST(SAME_RESULT)

SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_PITCH);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_CONSTANT(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME_CONSTANT(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME_CONSTANT(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
SAME_CONSTANT(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME_CONSTANT(CU_JIT_INFO_LOG_BUFFER);
SAME_CONSTANT(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME_CONSTANT(CU_JIT_ERROR_LOG_BUFFER);
SAME_CONSTANT(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME_CONSTANT(CU_JIT_LOG_VERBOSE);
SAME_CONSTANT(CU_MEMORYTYPE_HOST);
SAME_CONSTANT(CU_MEMORYTYPE_DEVICE);
SAME_CONSTANT(CU_MEMORYTYPE_ARRAY);
SAME_CONSTANT(CU_MEMORYTYPE_UNIFIED);
SAME_CONSTANT(CU_GET_PROC_ADDRESS_SUCCESS);
SAME_CONSTANT(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
SAME_CONSTANT(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
SAME_CONSTANT(CU_GET_PROC_ADDRESS_DEFAULT);
SAME_CONSTANT(CU_GET_PROC_ADDRESS_LEGACY_STREAM);
SAME_CONSTANT(CU_STREAM_NON_BLOCKING);
SAME_CONSTANT(CU_EVENT_BLOCKING_SYNC);
SAME_CONSTANT(CU_EVENT_DISABLE_TIMING);
SAME_CONSTANT(CU_MEMHOSTREGISTER_PORTABLE);

/* ---- the copy structs, field by field ---- */

#define SAME_MEMCPY_SIDE(ours, theirs, side)                                   \
    SAME_FIELD(ours, theirs, side##XInBytes);                                  \
    SAME_FIELD(ours, theirs, side##Y);                                         \
    SAME_FIELD(ours, theirs, side##MemoryType);                                \
    SAME_FIELD(ours, theirs, side##Host);                                      \
    SAME_FIELD(ours, theirs, side##Device);                                    \
    SAME_FIELD(ours, theirs, side##Array);                                     \
    SAME_FIELD(ours, theirs, side##Pitch)

SAME_STRUCT(acu_CUDA_MEMCPY2D, CUDA_MEMCPY2D);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY2D, CUDA_MEMCPY2D, src);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dst);
SAME_FIELD(acu_CUDA_MEMCPY2D, CUDA_MEMCPY2D, WidthInBytes);
SAME_FIELD(acu_CUDA_MEMCPY2D, CUDA_MEMCPY2D, Height);

SAME_STRUCT(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, src);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, dst);
SAME_FIELD(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, srcContext);
SAME_FIELD(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, dstContext);
SAME_FIELD(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, srcHeight);
SAME_FIELD(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, dstHeight);
SAME_FIELD(acu_CUDA_MEMCPY3D_PEER, CUDA_MEMCPY3D_PEER, Depth);
SAME_STRUCT(acu_CUuuid, CUuuid);
SAME_FIELD(acu_CUuuid, CUuuid, bytes);
SAME_STRUCT(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, src);
SAME_MEMCPY_SIDE(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dst);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcZ);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcLOD);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, reserved0);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcHeight);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstZ);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstLOD);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, reserved1);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstHeight);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, WidthInBytes);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, Height);
SAME_FIELD(acu_CUDA_MEMCPY3D, CUDA_MEMCPY3D, Depth);

/* ---- signatures: from here on, each acu_ type name means cuda.h's ---- */

#define acu_cuuint64_t cuuint64_t
#define acu_CUresult CUresult
#define acu_CUdeviceptr CUdeviceptr
#define acu_CUdevice CUdevice
#define acu_CUcontext CUcontext
#define acu_CUmodule CUmodule
#define acu_CUfunction CUfunction
#define acu_CUevent CUevent
#define acu_CUstream CUstream
#define acu_CUhostFn CUhostFn
#define acu_CUdevice_attribute CUdevice_attribute
#define acu_CUjit_option CUjit_option
#define acu_CUfunction_attribute CUfunction_attribute
#define acu_CUDA_MEMCPY2D CUDA_MEMCPY2D
#define acu_CUDA_MEMCPY3D CUDA_MEMCPY3D
#define acu_CUDA_MEMCPY3D_PEER CUDA_MEMCPY3D_PEER
#define acu_CUuuid CUuuid
#define acu_CUdriverProcAddressQueryResult CUdriverProcAddressQueryResult

#define ACU_REQUIRED(symbol, base, version, parameters)                        \
    SAME_TYPE(__typeof__(&symbol), CUresult(*) parameters);                    \
    _Static_assert((version) <= CUDA_VERSION,                                  \
                   #symbol ": asked for at a version newer than cuda.h");
#define ACU_OPTIONAL ACU_REQUIRED
#include "cuda_symbol_table.h"

SAME_TYPE(__typeof__(&cuGetProcAddress_v2),
          CUresult(*) ACU_CUGETPROCADDRESS_V2_PARAMETERS);

int main(void)
{
    printf("the CUDA plugin's declarations match cuda.h (CUDA_VERSION %d)\n",
           CUDA_VERSION);
    return 0;
}
