/*
 * libfakecuda.so's internals: the CUDA objects behind the driver's
 * handles, the process-wide state, and what the files share. The
 * vendor-neutral machinery (streams, copies, CPU kernels, knobs, memory,
 * the one lock) is tests/fakes/common/fake_core.h; this is CUDA's face on
 * it.
 *
 * The fake is a test double, so it favours catching a caller's mistakes
 * over speed: every handle is checked (type, context, liveness), every
 * device range is checked against a live allocation, and work on a stream
 * runs later on the stream's own thread as on a GPU. Where the real driver
 * is less kind, so is the fake: a primary context keeps its handle across
 * a reset, and a destroyed stream's or event's handle is handed out again
 * by the next create (objects are kept, never freed, so that this is
 * memory-safe): a stale handle then names another object, as on a GPU.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"
#include "fake_core.h"

#define FAKE_DEVICES_MAX 8
#define FAKE_DRIVER_VERSION 13000
#define FAKE_MAX_SHARED_BYTES (48u * 1024u)
/* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, as sm_90's. */
#define FAKE_MAX_SHARED_OPTIN_BYTES (227u * 1024u)

/*
 * Every entry the fake exports, declared from the plugin's own table: a
 * definition here that differs from the table's signature does not compile.
 */
#define ACU_REQUIRED(symbol, base, version, parameters)                        \
    FAKE_EXPORT acu_CUresult symbol parameters;
#define ACU_OPTIONAL(symbol, base, version, parameters)                        \
    FAKE_EXPORT acu_CUresult symbol parameters;
#include "cuda_symbol_table.h"
FAKE_EXPORT acu_CUresult cuGetProcAddress_v2 ACU_CUGETPROCADDRESS_V2_PARAMETERS;
FAKE_EXPORT acu_CUresult cuGetErrorName(acu_CUresult error, const char **text);
/*
 * The driver's own pinned allocation, which the plugin no longer calls:
 * kept so that a plugin that does shows what a reset does to it.
 */
FAKE_EXPORT acu_CUresult cuMemHostAlloc(void **pointer, size_t bytes,
                                        unsigned int flags);
FAKE_EXPORT acu_CUresult cuMemFreeHost(void *pointer);
/* The driver's stream wait, which spins; kept so that a plugin that calls it shows that. */
FAKE_EXPORT acu_CUresult cuStreamSynchronize(acu_CUstream stream);

/*
 * Not CUDA: for tests, how many times entry `name` (its exported name) was
 * called since the library was loaded.
 */
FAKE_EXPORT uint64_t fake_cuda_calls(const char *name);
/* Not CUDA: how many bytes of host memory are registered (cuMemHostRegister) now. */
FAKE_EXPORT uint64_t fake_cuda_registered_bytes(void);

/* Magic numbers: which kind of object a handle points to, while it lives. */
enum fake_magic {
    FAKE_MAGIC_CONTEXT = 0x43545831u,
    FAKE_MAGIC_STREAM = 0x53545231u,
    FAKE_MAGIC_EVENT = 0x45564e31u,
    FAKE_MAGIC_MODULE = 0x4d4f4431u,
    FAKE_MAGIC_FUNCTION = 0x46554e31u,
    FAKE_MAGIC_RETIRED = 0xdeadbeefu
};

/*
 * A primary context; once lost, it fails with CUDA_ERROR_ILLEGAL_ADDRESS
 * until reset. One per device for the life of the library, as the
 * driver's handle is: inactive while nobody retains it.
 */
struct CUctx_st {
    struct fake_owner owner; /* first: the core's view of it */
    uint32_t magic;
    bool active;
};

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    struct fake_stream queue;
    struct CUstream_st *next; /* in the live list, then the retired one */
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    bool blocking; /* CU_EVENT_BLOCKING_SYNC: cuEventSynchronize sleeps instead of spinning */
    bool timing;           /* made without CU_EVENT_DISABLE_TIMING */
    struct fake_mark mark; /* never set: never recorded */
    struct CUevent_st *next;
};

struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *module;
    const struct accel_cpu_kernel *kernel;
    char name[128];
    /* Its own limits: FAKE_CUDA_KERNEL_LIMITS, else the device's. */
    int max_threads;
    int static_shared;
    int max_dynamic_shared; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    struct CUfunc_st *next;
};

struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    struct fake_image image;
    struct CUfunc_st *functions;
    struct CUmod_st *next;
};

struct fake_device {
    struct CUctx_st *primary; /* made at the first retain, kept for the library's life */
    unsigned retains;
    uint64_t used_bytes;
};

struct fake_state {
    bool initialised;
    /* Knobs, read at each cuInit. */
    int device_count;
    uint64_t memory_bytes;
    uint64_t max_pitch;
    bool no_param_info;
    struct fake_kernel_limits kernel_limits;
    struct fake_fails fails;
    struct fake_lose lose;
    /* State. */
    struct fake_device devices[FAKE_DEVICES_MAX];
    struct CUstream_st *streams;
    struct CUevent_st *events;
    struct CUmod_st *modules;
    struct CUstream_st *retired_streams;
    struct CUevent_st *retired_events;
    struct CUmod_st *retired_modules;
};

extern struct fake_state fake;

/*
 * The start of every entry, under the lock: refuse before cuInit, count the
 * call, and apply FAKE_CUDA_FAIL and FAKE_CUDA_LOSE_AT. *out_lose says that
 * this call is where the context is lost; an entry that runs work (a
 * launch) loses it when the work runs, any other fails now.
 */
acu_CUresult fake_enter(const char *name, bool *out_lose);
/* Wait, before any lock, while FAKE_CUDA_GATE names `entry` and the gate is shut. */
void fake_gate_pass(const char *entry);

/*
 * The calling thread's current context, ready for work: ILLEGAL_ADDRESS
 * once lost, INVALID_CONTEXT without one. Lock held.
 */
acu_CUresult fake_current(struct CUctx_st **out_ctx);

/*
 * fake_current for an entry that hands an object back (a free, a destroy):
 * true when it is to go on, also on a lost context, whose loss it reports
 * in *out_result once done; false without a context, *out_result saying so.
 */
bool fake_current_to_release(struct CUctx_st **out_ctx, acu_CUresult *out_result);

/*
 * FAKE_ENTER(lose_now) starts an entry: it takes the lock and applies
 * fake_enter, returning its result when the call is not to go on. A call
 * chosen to lose the context fails here with ILLEGAL_ADDRESS, except
 * cuLaunchKernel, which finds lose_now true and loses it later, when its
 * kernel "runs". FAKE_RETURN(result) drops the lock and returns.
 */
#define FAKE_ENTER(lose_now)                                                   \
    bool lose_now = false;                                                     \
    acu_CUresult entered_;                                                     \
    pthread_mutex_lock(&fake_core.lock);                                       \
    entered_ = fake_enter(__func__, &lose_now);                                \
    if (entered_ == ACU_CUDA_SUCCESS && lose_now &&                            \
        !fake_loses_later(__func__)) {                                         \
        fake_lose_current();                                                   \
        entered_ = ACU_CUDA_ERROR_ILLEGAL_ADDRESS;                             \
    }                                                                          \
    if (entered_ != ACU_CUDA_SUCCESS) {                                        \
        pthread_mutex_unlock(&fake_core.lock);                                 \
        return entered_;                                                       \
    }

#define FAKE_RETURN(result)                                                    \
    do {                                                                       \
        acu_CUresult returned_ = (result);                                     \
        pthread_mutex_unlock(&fake_core.lock);                                 \
        return returned_;                                                      \
    } while (0)

/* Whether entry `name` loses its context when its work runs, not at the call. */
static inline bool fake_loses_later(const char *name)
{
    return name[0] == 'c' && __builtin_strcmp(name, "cuLaunchKernel") == 0;
}

/* Lose the calling thread's current context (device 0's when none). Lock held. */
void fake_lose_current(void);

/* A stream of the current context, or why not. Lock held. */
acu_CUresult fake_stream_check(struct CUstream_st *stream, struct CUctx_st *ctx);

/* ---- streams (fake_stream.c) ---- */

/* Stop and retire every stream and event of a context. Lock held; dropped while joining. */
void fake_release_streams(struct CUctx_st *ctx);

/* ---- modules (fake_module.c) ---- */

/* Unload and retire every module of a context. Lock held. */
void fake_release_modules(struct CUctx_st *ctx);

#endif /* FAKE_CUDA_H */
