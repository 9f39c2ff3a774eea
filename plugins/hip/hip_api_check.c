/*
 * Proof, at build time, that the HIP plugin's own declarations of the HIP
 * runtime API (hip_api.h, hip_symbol_table.h) are hip_runtime_api.h's:
 * every type, struct layout and constant, the offset of gcnArchName in
 * each hipDeviceProp_t layout the header has, and every entry point's
 * signature. Built only where the HIP headers are found (Debian's
 * libamdhip64-dev puts them in /usr/include/hip; they need
 * -D__HIP_PLATFORM_AMD__); any difference fails the build with the name of
 * what differs. The program itself only says that it was built.
 *
 * How: hip_api.h names HIP's N as ahip_N / AHIP_N, so both headers can be
 * included together. Types and layouts are compared directly. Then each
 * ahip_ type name is defined as a macro for HIP's, and the symbol table is
 * expanded once more into a comparison of each entry's pointer type with
 * that of the header's declaration of the same symbol.
 */
#include <stddef.h>
#include <stdio.h>

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#if HIP_VERSION_MAJOR >= 6
/* The ROCm 5 layout and its entry point, which ROCm 6 headers keep here. */
#include <hip/hip_deprecated.h>
#endif

#include "hip_api.h"

#define SAME_TYPE(ours, theirs)                                                \
    _Static_assert(__builtin_types_compatible_p(ours, theirs),                 \
                   #ours " is not the HIP header's " #theirs)
/* An enum: same size and signedness (two enum types are never the same type). */
#define SAME_ENUM(ours, theirs)                                                  \
    _Static_assert(sizeof(ours) == sizeof(theirs) &&                             \
                       ((long long)(ours)-1 < 0) == ((long long)(theirs)-1 < 0), \
                   #ours " is not laid out as the HIP header's " #theirs)
#define SAME_CONSTANT(name)                                                    \
    _Static_assert((long long)AHIP_##name == (long long)name,                  \
                   "AHIP_" #name " is not " #name)
#define SAME_STRUCT(ours, theirs)                                              \
    _Static_assert(sizeof(ours) == sizeof(theirs) &&                           \
                       _Alignof(ours) == _Alignof(theirs),                     \
                   #ours " is not the size of the HIP header's " #theirs)
#define SAME_FIELD(ours, theirs, field)                                        \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field) &&         \
                       sizeof(((ours *)0)->field) ==                           \
                           sizeof(((theirs *)0)->field),                       \
                   #ours "." #field " is not where the HIP header has it")
/* gcnArchName in one hipDeviceProp_t layout, and room for all of it. */
#define SAME_ARCH_NAME(offset, props)                                          \
    _Static_assert((offset) == offsetof(props, gcnArchName) &&                 \
                       AHIP_PROPS_GCN_ARCH_NAME_BYTES ==                       \
                           sizeof(((props *)0)->gcnArchName) &&                \
                       AHIP_PROPS_BUFFER_BYTES >= sizeof(props),               \
                   #offset " is not where " #props " has gcnArchName")

_Static_assert(HIP_VERSION_MAJOR >= 5,
               "the plugin declares the ROCm 5 and later API");

/* ---- handles: the very same types ---- */

SAME_TYPE(ahip_hipDevice_t, hipDevice_t);
SAME_TYPE(ahip_hipDeviceptr_t, hipDeviceptr_t);
SAME_TYPE(ahip_hipStream_t, hipStream_t);
SAME_TYPE(ahip_hipEvent_t, hipEvent_t);
SAME_TYPE(ahip_hipModule_t, hipModule_t);
SAME_TYPE(ahip_hipFunction_t, hipFunction_t);
SAME_TYPE(ahip_hipArray_t, hipArray_t);
SAME_TYPE(ahip_hipHostFn_t, hipHostFn_t);

/* ---- enums and constants ---- */

SAME_ENUM(ahip_hipError_t, hipError_t);
SAME_ENUM(ahip_hipDeviceAttribute_t, hipDeviceAttribute_t);
SAME_ENUM(ahip_hipMemcpyKind, hipMemcpyKind);
SAME_ENUM(ahip_hipFunction_attribute, hipFunction_attribute);

#define SAME_ERROR(name, value)                                                \
    _Static_assert((long long)AHIP_##name == (long long)name &&                \
                       (value) == (long long)name,                             \
                   "AHIP_" #name " is not " #name);
AHIP_ERROR_LIST(SAME_ERROR)

SAME_CONSTANT(hipDeviceAttributeMaxBlockDimX);
SAME_CONSTANT(hipDeviceAttributeMaxBlockDimY);
SAME_CONSTANT(hipDeviceAttributeMaxBlockDimZ);
SAME_CONSTANT(hipDeviceAttributeMaxGridDimX);
SAME_CONSTANT(hipDeviceAttributeMaxGridDimY);
SAME_CONSTANT(hipDeviceAttributeMaxGridDimZ);
SAME_CONSTANT(hipDeviceAttributeMaxThreadsPerBlock);
SAME_CONSTANT(hipDeviceAttributeMaxPitch);
SAME_CONSTANT(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME_CONSTANT(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
SAME_CONSTANT(hipDeviceAttributeMultiprocessorCount);
SAME_CONSTANT(hipDeviceAttributeMaxSharedMemoryPerBlock);
SAME_CONSTANT(hipMemcpyHostToHost);
SAME_CONSTANT(hipMemcpyHostToDevice);
SAME_CONSTANT(hipMemcpyDeviceToHost);
SAME_CONSTANT(hipMemcpyDeviceToDevice);
SAME_CONSTANT(hipMemcpyDefault);
SAME_CONSTANT(hipStreamNonBlocking);
SAME_CONSTANT(hipEventBlockingSync);
SAME_CONSTANT(hipEventDisableTiming);
SAME_CONSTANT(hipHostRegisterPortable);

/* ---- hipDeviceProp_t: where gcnArchName is, in each layout ---- */

#if HIP_VERSION_MAJOR >= 6
SAME_ARCH_NAME(AHIP_PROPS_R0000_GCN_ARCH_NAME_OFFSET, hipDeviceProp_tR0000);
SAME_ARCH_NAME(AHIP_PROPS_R0600_GCN_ARCH_NAME_OFFSET, hipDeviceProp_tR0600);
#else
SAME_ARCH_NAME(AHIP_PROPS_R0000_GCN_ARCH_NAME_OFFSET, hipDeviceProp_t);
#endif

/* ---- the copy structs, field by field ---- */

SAME_STRUCT(ahip_hipPitchedPtr, hipPitchedPtr);
SAME_FIELD(ahip_hipPitchedPtr, hipPitchedPtr, ptr);
SAME_FIELD(ahip_hipPitchedPtr, hipPitchedPtr, pitch);
SAME_FIELD(ahip_hipPitchedPtr, hipPitchedPtr, xsize);
SAME_FIELD(ahip_hipPitchedPtr, hipPitchedPtr, ysize);

SAME_STRUCT(ahip_hipExtent, hipExtent);
SAME_FIELD(ahip_hipExtent, hipExtent, width);
SAME_FIELD(ahip_hipExtent, hipExtent, height);
SAME_FIELD(ahip_hipExtent, hipExtent, depth);

SAME_STRUCT(ahip_hipPos, hipPos);
SAME_FIELD(ahip_hipPos, hipPos, x);
SAME_FIELD(ahip_hipPos, hipPos, y);
SAME_FIELD(ahip_hipPos, hipPos, z);

SAME_STRUCT(ahip_hipUUID, hipUUID);
SAME_FIELD(ahip_hipUUID, hipUUID, bytes);

SAME_STRUCT(ahip_hipMemcpy3DParms, hipMemcpy3DParms);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, srcArray);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, srcPos);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, srcPtr);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, dstArray);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, dstPos);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, dstPtr);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, extent);
SAME_FIELD(ahip_hipMemcpy3DParms, hipMemcpy3DParms, kind);

/* ---- signatures: from here on, each ahip_ type name means HIP's ---- */

#define ahip_hipError_t hipError_t
#define ahip_hipDevice_t hipDevice_t
#define ahip_hipStream_t hipStream_t
#define ahip_hipEvent_t hipEvent_t
#define ahip_hipModule_t hipModule_t
#define ahip_hipFunction_t hipFunction_t
#define ahip_hipHostFn_t hipHostFn_t
#define ahip_hipStreamCallback_t hipStreamCallback_t
#define ahip_hipDeviceAttribute_t hipDeviceAttribute_t
#define ahip_hipMemcpyKind hipMemcpyKind
#define ahip_hipFunction_attribute hipFunction_attribute
#define ahip_hipMemcpy3DParms hipMemcpy3DParms
#define ahip_hipUUID hipUUID

/*
 * The properties entry points. A HIP 6 header turns the name
 * hipGetDeviceProperties into hipGetDevicePropertiesR0600 with a macro,
 * while the library's symbol of that name stays the ROCm 5 layout's, which
 * the header declares as hipGetDevicePropertiesR0000: that is the
 * declaration to compare with. A HIP 5 header has only the one call, so
 * there the R0600 entry is compared with it for its shape alone.
 */
#if HIP_VERSION_MAJOR >= 6
#define ahip_hipDeviceProp_tR0000 hipDeviceProp_tR0000
#define ahip_hipDeviceProp_tR0600 hipDeviceProp_tR0600
#undef hipGetDeviceProperties
#define hipGetDeviceProperties hipGetDevicePropertiesR0000
#else
#define ahip_hipDeviceProp_tR0000 hipDeviceProp_t
#define ahip_hipDeviceProp_tR0600 hipDeviceProp_t
#define hipGetDevicePropertiesR0600 hipGetDeviceProperties
#endif

/* The callback's type, now that ahip_hipError_t means hipError_t. */
SAME_TYPE(void (*)(ahip_hipStream_t, ahip_hipError_t, void *),
          hipStreamCallback_t);

#define AHIP_REQUIRED(type, symbol, parameters)                                \
    SAME_TYPE(__typeof__(&symbol), type(*) parameters);
#define AHIP_OPTIONAL AHIP_REQUIRED
#include "hip_symbol_table.h"

int main(void)
{
    printf("the HIP plugin's declarations match hip_runtime_api.h (HIP_VERSION "
           "%d)\n",
           HIP_VERSION);
    return 0;
}
