/*
 * The part of NCCL's API (nccl.h) the nccl and rccl providers use,
 * declared here so that they build without NCCL or RCCL installed, as the
 * CUDA plugin declares the Driver API itself. RCCL's nccl.h is NCCL's,
 * with the same codes and layouts. NCCL's N is named ancl_N / ANCL_N, so
 * that nccl_api_check.c can include both headers and prove, at build time
 * where nccl.h is found, that every type, constant, layout and signature
 * here is nccl.h's.
 */
#ifndef ACCEL_NCCL_API_H
#define ACCEL_NCCL_API_H

#include <limits.h>
#include <stddef.h>

typedef struct ancl_ncclComm *ancl_ncclComm_t;
/* cudaStream_t for NCCL, hipStream_t for RCCL: a pointer either way. */
typedef void *ancl_stream_t;

#define ANCL_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[ANCL_NCCL_UNIQUE_ID_BYTES];
} ancl_ncclUniqueId;

typedef enum {
    ANCL_ncclSuccess = 0,
    ANCL_ncclUnhandledCudaError = 1,
    ANCL_ncclSystemError = 2,
    ANCL_ncclInternalError = 3,
    ANCL_ncclInvalidArgument = 4,
    ANCL_ncclInvalidUsage = 5,
    ANCL_ncclRemoteError = 6,
    /* Only from non-blocking communicators (2.14+): the call goes on. */
    ANCL_ncclInProgress = 7
} ancl_ncclResult_t;

/* Element types; bfloat16 since 2.10. NCCL has no 16-bit integers. */
typedef enum {
    ANCL_ncclInt8 = 0,
    ANCL_ncclUint8 = 1,
    ANCL_ncclInt32 = 2,
    ANCL_ncclUint32 = 3,
    ANCL_ncclInt64 = 4,
    ANCL_ncclUint64 = 5,
    ANCL_ncclFloat16 = 6,
    ANCL_ncclFloat32 = 7,
    ANCL_ncclFloat64 = 8,
    ANCL_ncclBfloat16 = 9
} ancl_ncclDataType_t;

typedef enum {
    ANCL_ncclSum = 0,
    ANCL_ncclProd = 1,
    ANCL_ncclMax = 2,
    ANCL_ncclMin = 3
} ancl_ncclRedOp_t;

/* NCCL_VERSION of nccl.h: the code ncclGetVersion gives for X.Y.Z. */
#define ANCL_NCCL_VERSION(x, y, z)                                             \
    (((x) <= 2 && (y) <= 8) ? (x)*1000 + (y)*100 + (z)                         \
                            : (x)*10000 + (y)*100 + (z))

/*
 * ncclConfig_t as NCCL 2.14 laid it out, the first version to take one.
 * Later versions append fields and read only as many bytes as `size`
 * says, taking their defaults for the rest, so this prefix is what every
 * version from 2.14 accepts (nccl_api_check.c proves it is nccl.h's
 * prefix). Fields left alone are ANCL_NCCL_CONFIG_UNDEF_*.
 */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
} ancl_ncclConfig_t;

#define ANCL_NCCL_CONFIG_MAGIC 0xcafebeefu
#define ANCL_NCCL_CONFIG_UNDEF_INT INT_MIN
#define ANCL_NCCL_SPLIT_NOCOLOR (-1)

/* The version that added the config, non-blocking init and abort's promptness. */
#define ANCL_NCCL_CONFIG_SINCE ANCL_NCCL_VERSION(2, 14, 0)
/* The version that added bfloat16. */
#define ANCL_NCCL_BF16_SINCE ANCL_NCCL_VERSION(2, 10, 0)

/*
 * Every entry point, once: ANCL_REQUIRED(name, (parameters)) and
 * ANCL_OPTIONAL(name, (parameters)); each returns ancl_ncclResult_t except
 * ncclGetErrorString, listed apart. Without a required one the library is
 * refused; an optional one may be NULL and every use checks.
 */
#define ANCL_SYMBOLS(ANCL_REQUIRED, ANCL_OPTIONAL)                                \
    ANCL_REQUIRED(ncclGetVersion, (int *version))                                 \
    ANCL_REQUIRED(ncclGetUniqueId, (ancl_ncclUniqueId * unique_id))               \
    ANCL_REQUIRED(ncclCommInitRank, (ancl_ncclComm_t * comm, int nranks,          \
                                     ancl_ncclUniqueId comm_id, int rank))        \
    ANCL_OPTIONAL(ncclCommInitRankConfig, (ancl_ncclComm_t * comm, int nranks,    \
                                           ancl_ncclUniqueId comm_id, int rank,   \
                                           ancl_ncclConfig_t *config))            \
    ANCL_OPTIONAL(ncclCommSplit,                                                  \
                  (ancl_ncclComm_t comm, int color, int key,                      \
                   ancl_ncclComm_t *newcomm, ancl_ncclConfig_t *config))          \
    ANCL_REQUIRED(ncclCommDestroy, (ancl_ncclComm_t comm))                        \
    ANCL_REQUIRED(ncclCommAbort, (ancl_ncclComm_t comm))                          \
    ANCL_REQUIRED(ncclCommCount, (const ancl_ncclComm_t comm, int *count))        \
    ANCL_REQUIRED(ncclCommUserRank, (const ancl_ncclComm_t comm, int *rank))      \
    ANCL_REQUIRED(ncclCommGetAsyncError,                                          \
                  (ancl_ncclComm_t comm, ancl_ncclResult_t * async_error))        \
    ANCL_REQUIRED(ncclAllReduce,                                                  \
                  (const void *sendbuff, void *recvbuff, size_t count,            \
                   ancl_ncclDataType_t datatype, ancl_ncclRedOp_t op,             \
                   ancl_ncclComm_t comm, ancl_stream_t stream))                   \
    ANCL_REQUIRED(ncclBroadcast,                                                  \
                  (const void *sendbuff, void *recvbuff, size_t count,            \
                   ancl_ncclDataType_t datatype, int root,                        \
                   ancl_ncclComm_t comm, ancl_stream_t stream))                   \
    ANCL_REQUIRED(ncclReduce,                                                     \
                  (const void *sendbuff, void *recvbuff, size_t count,            \
                   ancl_ncclDataType_t datatype, ancl_ncclRedOp_t op,             \
                   int root, ancl_ncclComm_t comm, ancl_stream_t stream))         \
    ANCL_REQUIRED(ncclAllGather, (const void *sendbuff, void *recvbuff,           \
                                  size_t sendcount, ancl_ncclDataType_t datatype, \
                                  ancl_ncclComm_t comm, ancl_stream_t stream))    \
    ANCL_REQUIRED(ncclReduceScatter,                                              \
                  (const void *sendbuff, void *recvbuff, size_t recvcount,        \
                   ancl_ncclDataType_t datatype, ancl_ncclRedOp_t op,             \
                   ancl_ncclComm_t comm, ancl_stream_t stream))                   \
    ANCL_REQUIRED(ncclSend, (const void *sendbuff, size_t count,                  \
                             ancl_ncclDataType_t datatype, int peer,              \
                             ancl_ncclComm_t comm, ancl_stream_t stream))         \
    ANCL_REQUIRED(ncclRecv,                                                       \
                  (void *recvbuff, size_t count, ancl_ncclDataType_t datatype,    \
                   int peer, ancl_ncclComm_t comm, ancl_stream_t stream))         \
    ANCL_REQUIRED(ncclGroupStart, (void))                                         \
    ANCL_REQUIRED(ncclGroupEnd, (void))

/* ncclGetErrorString: the one entry that does not return a result. */
typedef const char *(*ancl_pfn_ncclGetErrorString)(ancl_ncclResult_t result);

#endif /* ACCEL_NCCL_API_H */
