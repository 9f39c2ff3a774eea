/*
 * The nccl and rccl communication providers' shared internals. One source
 * builds both (meson compiles it twice, with -DACCEL_NCCL_FLAVOUR_RCCL for
 * rccl): what differs is described once, in the flavour (nccl_provider.c),
 * and read everywhere else.
 *
 * The provider loads two libraries with dlopen: the collective library
 * (libnccl.so.2, librccl.so.1), and the GPU's own driver or runtime
 * (libcuda.so.1, libamdhip64.so), for three things NCCL's API leaves to
 * its caller: making the rank's device current on the calling thread
 * around each call (ncclCommInitRank binds the communicator to the
 * current device, and NCCL's entries enqueue on the current one), telling
 * whether this process has a GPU at all, and the one small device buffer
 * a barrier reduces. It opens the library the GPU plugin opened (the same
 * variable, ACCEL_CUDA_LIBRARY or ACCEL_HIP_LIBRARY, else the same default
 * names), so that in a process the dynamic loader hands back the very same
 * object and its contexts and streams are the ones accel made.
 */
#ifndef ACCEL_NCCL_PROVIDER_H
#define ACCEL_NCCL_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/comm.h>
#include <accel/driver.h>

#include "native_library.h"
#include "nccl_api.h"

/* ---- the GPU runtime (nccl_device.c) ---- */

/* What a device call needs to undo on leaving: the caller's binding. */
struct nccl_device_scope {
    void *context; /* CUDA: the caller's current context */
    int ordinal;   /* HIP: the caller's current device */
};

struct nccl_device_runtime;

/* The calls, the same shape for CUDA and HIP; each returns the vendor's code (0 is success). */
struct nccl_device_ops {
    const char *title;        /* "CUDA driver", "HIP runtime" */
    const char *library_env;  /* "ACCEL_CUDA_LIBRARY" */
    const char *const *names; /* default library names, NULL-terminated */
    bool (*resolve)(struct nccl_device_runtime *runtime);
    int (*device_count)(struct nccl_device_runtime *runtime, int *out_count,
                        const char **out_call);
    int (*enter)(struct nccl_device_runtime *runtime,
                 const struct accel_native_handles *device,
                 struct nccl_device_scope *out_scope, const char **out_call);
    void (*leave)(struct nccl_device_runtime *runtime,
                  const struct nccl_device_scope *scope);
    int (*alloc)(struct nccl_device_runtime *runtime, size_t bytes,
                 uint64_t *out_address, const char **out_call);
    void (*free)(struct nccl_device_runtime *runtime, uint64_t address);
    const char *(*error_name)(struct nccl_device_runtime *runtime, int code);
};

struct nccl_device_runtime {
    const struct nccl_device_ops *ops;
    struct accel__native_library library;
    void *entries[8]; /* the resolved calls, in the order ops->resolve reads them */
};

/* The ops of the GPU the flavour serves. */
extern const struct nccl_device_ops accel__nccl_cuda_ops;
extern const struct nccl_device_ops accel__nccl_hip_ops;

/*
 * Open the runtime and check that this process has a GPU. False with the
 * reason in `reason` otherwise ("no GPU: cuInit failed: ...").
 */
bool accel__nccl_device_open(struct nccl_device_runtime *runtime,
                             const struct nccl_device_ops *ops,
                             const struct accel_host_services *services,
                             char *reason, size_t reason_size);
void accel__nccl_device_close(struct nccl_device_runtime *runtime);

/* ---- the provider (nccl_provider.c) ---- */

/* What tells nccl and rccl apart. */
struct nccl_flavour {
    const char *name;             /* "nccl": the table's name */
    const char *title;            /* "NCCL": how messages name the library */
    const char *library_env;      /* "ACCEL_NCCL_LIBRARY" */
    const char *const *libraries; /* default names, NULL-terminated */
    accel_native_kind memory;     /* the device memory it works on */
    const struct nccl_device_ops *device;
};

extern const struct nccl_flavour accel__nccl_flavour;

struct nccl_symbols {
#define ANCL_POINTER(name, params) ancl_ncclResult_t(*name) params;
    ANCL_SYMBOLS(ANCL_POINTER, ANCL_POINTER)
#undef ANCL_POINTER
    ancl_pfn_ncclGetErrorString ncclGetErrorString;
};

struct accel_comm_provider {
    const struct accel_comm_services *services;
    const struct nccl_flavour *flavour;
    struct accel__native_library library;
    struct nccl_symbols nccl;
    int version; /* ncclGetVersion's code */
    struct nccl_device_runtime device;
};

/* The library's words for `result`, or its number when it has none. */
const char *accel__nccl_result_text(accel_comm_provider *provider,
                                    ancl_ncclResult_t result, char *buffer,
                                    size_t size);
/*
 * Record that `call` returned `result` (a failure), as the accel status
 * it maps to, through services->set_error; returns that status.
 */
accel_status accel__nccl_fail(accel_comm_provider *provider, const char *call,
                              ancl_ncclResult_t result);

/* ---- communicators (nccl_comm.c) ---- */

struct accel_comm_handle {
    accel_comm_provider *provider;
    ancl_ncclComm_t comm;
    struct accel_native_handles device; /* the rank's device, from accel_comm_init */
    int rank, size;
    bool nonblocking; /* made with config.blocking = 0: calls may say InProgress */
    uint64_t timeout_ns; /* how long a call may stay in progress; 0: forever */
    atomic_bool aborted; /* comm_abort ran: calls fail with COMM_ABORTED */
    uint64_t scratch; /* the barrier's device word, made at the first barrier */
    /* Serialises comm_abort with the calls that read the communicator's
     * state (comm_error, the in-progress polls): abort frees it. */
    pthread_mutex_t lock;
};

accel_status accel__nccl_comm_create(accel_comm_provider *provider,
                                     const struct accel_comm_init *init,
                                     accel_comm_handle **out_comm);
accel_status accel__nccl_comm_split(accel_comm_handle *comm, int color, int key,
                                    accel_comm_handle **out_comm);
void accel__nccl_comm_destroy(accel_comm_handle *comm);
/* Make the rank's device current (the error said on failure), and undo it. */
accel_status accel__nccl_enter(accel_comm_handle *comm,
                               struct nccl_device_scope *out_scope);
void accel__nccl_leave(accel_comm_handle *comm,
                       const struct nccl_device_scope *scope);
void accel__nccl_comm_abort(accel_comm_handle *comm);
accel_status accel__nccl_comm_error(accel_comm_handle *comm);

/* ---- operations (nccl_ops.c) ---- */

accel_status accel__nccl_submit(accel_comm_handle *comm,
                                const struct accel_comm_op *op);

/*
 * When a call returned `result` ncclInProgress (a non-blocking
 * communicator), wait while the communicator says so, until `deadline_ns`
 * (CLOCK_MONOTONIC; 0: none); any other result is final as it is.
 * The final result: ncclSuccess, the error, or ncclInProgress at the
 * deadline.
 */
ancl_ncclResult_t accel__nccl_settle(accel_comm_handle *comm,
                                     ancl_ncclResult_t result,
                                     uint64_t deadline_ns);
/* CLOCK_MONOTONIC in ns. */
uint64_t accel__nccl_now_ns(void);

#endif /* ACCEL_NCCL_PROVIDER_H */
