/*
 * libfakehip.so's internals: the HIP objects behind the runtime's handles,
 * the process-wide state, and what the files share. The vendor-neutral
 * machinery (streams, copies, CPU kernels, knobs, memory) is
 * tests/fakes/common/fake_core.h; this is HIP's face on it.
 */
#ifndef FAKE_HIP_H
#define FAKE_HIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_core.h"
#include "hip_api.h"

#define FAKE_HIP_DEVICES_MAX 8
#define FAKE_HIP_MAX_SHARED_BYTES (64u * 1024u)
#define FAKE_HIP_DEFAULT_ARCH "gfx90a:sramecc+:xnack-"

/*
 * Every entry the fake exports, declared from the plugin's own table: a
 * definition here that differs from the table's signature does not
 * compile. Built with FAKE_HIP_ROCM5, the fake is a ROCm 5.2 runtime: it
 * does not define (so does not export) the optional entries ROCm 5.2's
 * library lacks, hipGetDevicePropertiesR0600 and hipLaunchHostFunc.
 */
#define AHIP_REQUIRED(type, symbol, parameters)                                \
    FAKE_EXPORT type symbol parameters;
#define AHIP_OPTIONAL(type, symbol, parameters)                                \
    FAKE_EXPORT type symbol parameters;
#include "hip_symbol_table.h"

/* Not HIP: for tests, how many times entry `name` was called since the library was loaded. */
FAKE_EXPORT uint64_t fake_hip_calls(const char *name);
/* Not HIP: how many bytes of host memory are registered (hipHostRegister) now. */
FAKE_EXPORT uint64_t fake_hip_registered_bytes(void);
/*
 * The runtime's own pinned allocation, which the plugin no longer calls:
 * kept so that a plugin that does shows what a reset does to it.
 */
#define FAKE_HIP_HOST_MALLOC_PORTABLE 0x1u
FAKE_EXPORT ahip_hipError_t hipHostMalloc(void **pointer, size_t bytes,
                                          unsigned int flags);
FAKE_EXPORT ahip_hipError_t hipHostFree(void *pointer);

/* Magic numbers: which kind of object a handle points to, while it lives. */
enum fake_hip_magic {
    FAKE_HIP_MAGIC_CONTEXT = 0x48435458u,
    FAKE_HIP_MAGIC_STREAM = 0x48535452u,
    FAKE_HIP_MAGIC_EVENT = 0x48455654u,
    FAKE_HIP_MAGIC_MODULE = 0x484d4f44u,
    FAKE_HIP_MAGIC_FUNCTION = 0x4846554eu,
    FAKE_HIP_MAGIC_RETIRED = 0xdeadbeefu
};

/* A device's context: made at first use, emptied (not ended) by hipDeviceReset. */
struct fake_hip_context {
    struct fake_owner owner; /* first: the core's view of it */
    uint32_t magic;
};

struct ihipStream_t {
    uint32_t magic;
    struct fake_hip_context *ctx;
    struct fake_stream queue;
    struct ihipStream_t *next; /* in the live list, then the retired one */
};

struct ihipEvent_t {
    uint32_t magic;
    struct fake_hip_context *ctx;
    bool blocking; /* hipEventBlockingSync: hipEventSynchronize sleeps instead of polling */
    bool timing; /* made without hipEventDisableTiming */
    struct fake_mark mark;
    struct ihipEvent_t *next;
};

struct ihipModuleSymbol_t {
    uint32_t magic;
    struct ihipModule_t *module;
    const struct accel_cpu_kernel *kernel;
    char name[128];
    int max_threads; /* its own: FAKE_HIP_KERNEL_LIMITS, else the device's */
    int static_shared;
    struct ihipModuleSymbol_t *next;
};

struct ihipModule_t {
    uint32_t magic;
    struct fake_hip_context *ctx;
    struct fake_image image;
    struct ihipModuleSymbol_t *functions;
    struct ihipModule_t *next;
};

struct fake_hip_device {
    struct fake_hip_context *context; /* NULL until first use after a reset */
    uint64_t used_bytes;
};

struct fake_hip_state {
    bool initialised;
    ahip_hipError_t init_result;
    /* Knobs, read at each hipInit. */
    int device_count;
    uint64_t memory_bytes;
    uint64_t max_pitch;
    char arch[64];
    struct fake_kernel_limits kernel_limits;
    struct fake_fails fails;
    struct fake_lose lose;
    /* State. */
    struct fake_hip_device devices[FAKE_HIP_DEVICES_MAX];
    struct ihipStream_t *streams;
    struct ihipEvent_t *events;
    struct ihipModule_t *modules;
    struct ihipStream_t *retired_streams;
    struct ihipEvent_t *retired_events;
    struct ihipModule_t *retired_modules;
};

extern struct fake_hip_state fake_hip;

/*
 * The start of every entry, under the lock: count the call, refuse before
 * a hipInit that succeeded, apply FAKE_HIP_FAIL and FAKE_HIP_LOSE_AT.
 * *out_lose says that this call is where the context is lost.
 */
ahip_hipError_t fake_hip_enter(const char *name, bool *out_lose);

/* The calling thread's device's context, made if need be; IllegalAddress once lost. Lock held. */
ahip_hipError_t fake_hip_current(struct fake_hip_context **out_ctx);
/* Lose the calling thread's device's context. Lock held. */
void fake_hip_lose_current(void);

/*
 * FAKE_HIP_ENTER(lose_now) starts an entry: it takes the lock and applies
 * fake_hip_enter, returning its result when the call is not to go on. A
 * call chosen to lose the context fails here with hipErrorIllegalAddress,
 * except hipModuleLaunchKernel, which finds lose_now true and loses it
 * later, when its kernel "runs". FAKE_HIP_RETURN(result) drops the lock
 * and returns.
 */
#define FAKE_HIP_ENTER(lose_now)                                               \
    bool lose_now = false;                                                     \
    ahip_hipError_t entered_;                                                  \
    pthread_mutex_lock(&fake_core.lock);                                       \
    entered_ = fake_hip_enter(__func__, &lose_now);                            \
    if (entered_ == AHIP_hipSuccess && lose_now &&                             \
        !fake_hip_loses_later(__func__)) {                                     \
        fake_hip_lose_current();                                               \
        entered_ = AHIP_hipErrorIllegalAddress;                                \
    }                                                                          \
    if (entered_ != AHIP_hipSuccess) {                                         \
        pthread_mutex_unlock(&fake_core.lock);                                 \
        return entered_;                                                       \
    }

#define FAKE_HIP_RETURN(result)                                                \
    do {                                                                       \
        ahip_hipError_t returned_ = (result);                                  \
        pthread_mutex_unlock(&fake_core.lock);                                 \
        return returned_;                                                      \
    } while (0)

/* Whether entry `name` loses its context when its work runs, not at the call. */
static inline bool fake_hip_loses_later(const char *name)
{
    return __builtin_strcmp(name, "hipModuleLaunchKernel") == 0;
}

/* A live stream of `ctx`, or why not. Lock held. */
ahip_hipError_t fake_hip_stream_check(struct ihipStream_t *stream,
                                      struct fake_hip_context *ctx);

/* ---- streams (fake_hip_stream.c) ---- */

/*
 * Stop and retire every stream of a context; its events stay, read as
 * never recorded. Lock held; dropped while joining.
 */
void fake_hip_release_streams(struct fake_hip_context *ctx);

/* How many events, and modules, live now: what was made and not yet destroyed. */
FAKE_EXPORT uint64_t fake_hip_live_events(void);
FAKE_EXPORT uint64_t fake_hip_live_modules(void);

#endif /* FAKE_HIP_H */
