/*
 * Proof, at build time, that the providers' own declarations of NCCL's API
 * (nccl_api.h) are nccl.h's: every type, code, layout and entry point's
 * signature, the config as a prefix of nccl.h's. Built only where nccl.h
 * is found; any difference fails the build with the name of what differs.
 * The program itself only says that it was built.
 */
#include <stddef.h>
#include <stdio.h>

#include <nccl.h>

#include "nccl_api.h"

#define SAME_ENUM(ours, theirs)                                                  \
    _Static_assert(sizeof(ours) == sizeof(theirs) &&                             \
                       ((long long)(ours)-1 < 0) == ((long long)(theirs)-1 < 0), \
                   #ours " is not laid out as nccl.h's " #theirs)
#define SAME_CONSTANT(name)                                                    \
    _Static_assert((long long)ANCL_##name == (long long)name,                  \
                   "ANCL_" #name " is not " #name)
#define SAME_FIELD(ours, theirs, field)                                        \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field) &&         \
                       sizeof(((ours *)0)->field) ==                           \
                           sizeof(((theirs *)0)->field),                       \
                   #ours "." #field " is not where nccl.h has it")

_Static_assert(sizeof(ancl_ncclComm_t) == sizeof(ncclComm_t),
               "a communicator is a pointer");
_Static_assert(sizeof(ancl_stream_t) == sizeof(cudaStream_t),
               "a stream is a pointer");
_Static_assert(sizeof(ancl_ncclUniqueId) == sizeof(ncclUniqueId) &&
                   ANCL_NCCL_UNIQUE_ID_BYTES == NCCL_UNIQUE_ID_BYTES,
               "ncclUniqueId is not 128 bytes");

SAME_ENUM(ancl_ncclResult_t, ncclResult_t);
SAME_CONSTANT(ncclSuccess);
SAME_CONSTANT(ncclUnhandledCudaError);
SAME_CONSTANT(ncclSystemError);
SAME_CONSTANT(ncclInternalError);
SAME_CONSTANT(ncclInvalidArgument);
SAME_CONSTANT(ncclInvalidUsage);
SAME_CONSTANT(ncclRemoteError);
SAME_CONSTANT(ncclInProgress);

SAME_ENUM(ancl_ncclDataType_t, ncclDataType_t);
SAME_CONSTANT(ncclInt8);
SAME_CONSTANT(ncclUint8);
SAME_CONSTANT(ncclInt32);
SAME_CONSTANT(ncclUint32);
SAME_CONSTANT(ncclInt64);
SAME_CONSTANT(ncclUint64);
SAME_CONSTANT(ncclFloat16);
SAME_CONSTANT(ncclFloat32);
SAME_CONSTANT(ncclFloat64);
SAME_CONSTANT(ncclBfloat16);

SAME_ENUM(ancl_ncclRedOp_t, ncclRedOp_t);
SAME_CONSTANT(ncclSum);
SAME_CONSTANT(ncclProd);
SAME_CONSTANT(ncclMax);
SAME_CONSTANT(ncclMin);

_Static_assert(ANCL_NCCL_CONFIG_UNDEF_INT == NCCL_CONFIG_UNDEF_INT,
               "NCCL_CONFIG_UNDEF_INT");
_Static_assert(ANCL_NCCL_SPLIT_NOCOLOR == NCCL_SPLIT_NOCOLOR,
               "NCCL_SPLIT_NOCOLOR");
_Static_assert(ANCL_NCCL_VERSION(2, 28, 9) == NCCL_VERSION(2, 28, 9) &&
                   ANCL_NCCL_VERSION(2, 8, 4) == NCCL_VERSION(2, 8, 4),
               "NCCL_VERSION");
_Static_assert(NCCL_VERSION_CODE >= ANCL_NCCL_CONFIG_SINCE,
               "nccl.h predates the config the providers declare");

/* The config: ours is the prefix of nccl.h's, field by field. */
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, size);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, magic);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, version);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, blocking);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, cgaClusterSize);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, minCTAs);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, maxCTAs);
SAME_FIELD(ancl_ncclConfig_t, ncclConfig_t, netName);
_Static_assert(sizeof(ancl_ncclConfig_t) <= sizeof(ncclConfig_t),
               "the config is longer than nccl.h's");

/* Every signature: our names mapped to nccl.h's, each entry compared. */
#define ancl_ncclComm_t ncclComm_t
#define ancl_ncclUniqueId ncclUniqueId
#define ancl_ncclResult_t ncclResult_t
#define ancl_ncclDataType_t ncclDataType_t
#define ancl_ncclRedOp_t ncclRedOp_t
#define ancl_ncclConfig_t ncclConfig_t
#define ancl_stream_t cudaStream_t
#define CHECK_SIGNATURE(name, params)                                          \
    _Static_assert(__builtin_types_compatible_p(ncclResult_t(*) params,        \
                                                __typeof__(&name)),            \
                   #name " is not declared as nccl.h declares it");
ANCL_SYMBOLS(CHECK_SIGNATURE, CHECK_SIGNATURE)
_Static_assert(__builtin_types_compatible_p(const char *(*)(ncclResult_t),
                                            __typeof__(&ncclGetErrorString)),
               "ncclGetErrorString");

int main(void)
{
    printf("nccl_api.h matches nccl.h %d.%d.%d\n", NCCL_MAJOR, NCCL_MINOR,
           NCCL_PATCH);
    return 0;
}
