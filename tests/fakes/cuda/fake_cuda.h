/*
 * libfakecuda.so's internals: one process-wide state under one lock, the
 * objects behind the driver's handles, and what the files share.
 *
 * The fake is a test double, so it favours catching a caller's mistakes
 * over speed: every handle is checked (type, context, liveness), every
 * device range is checked against a live allocation, work on a stream runs
 * later on the stream's own thread as on a GPU, and handles are never
 * reused (a destroyed object is retired, kept and marked, so that a stale
 * handle is an error rather than another object).
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/kernel.h>

#include "cuda_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

#define FAKE_DEVICES_MAX 8
#define FAKE_FAILS_MAX 8
#define FAKE_DRIVER_VERSION 13000
#define FAKE_MAX_SHARED_BYTES (48u * 1024u)
#define FAKE_ALLOC_ALIGN 256u

/*
 * Every entry the fake exports, declared from the plugin's own table: a
 * definition here that differs from the table's signature does not compile.
 */
#define ACU_REQUIRED(symbol, base, version, parameters) FAKE_EXPORT acu_CUresult symbol parameters;
#define ACU_OPTIONAL(symbol, base, version, parameters) FAKE_EXPORT acu_CUresult symbol parameters;
#include "cuda_symbol_table.h"
FAKE_EXPORT acu_CUresult cuGetProcAddress_v2 ACU_CUGETPROCADDRESS_V2_PARAMETERS;
FAKE_EXPORT acu_CUresult cuGetErrorName(acu_CUresult error, const char **text);

/*
 * Not CUDA: for tests, how many times entry `name` (its exported name) was
 * called since the library was loaded.
 */
FAKE_EXPORT uint64_t fake_cuda_calls(const char *name);

/* Count a call of `name` (a string that lives forever, such as __func__). Lock held. */
void fake_count(const char *name);

/* Magic numbers: which kind of object a handle points to, while it lives. */
enum fake_magic {
    FAKE_MAGIC_CONTEXT = 0x43545831u,
    FAKE_MAGIC_STREAM = 0x53545231u,
    FAKE_MAGIC_EVENT = 0x45564e31u,
    FAKE_MAGIC_MODULE = 0x4d4f4431u,
    FAKE_MAGIC_FUNCTION = 0x46554e31u,
    FAKE_MAGIC_RETIRED = 0xdeadbeefu
};

struct fake_op;

struct CUctx_st {
    uint32_t magic;
    int device;
    bool lost;        /* sticky CUDA_ERROR_ILLEGAL_ADDRESS until reset */
    struct CUctx_st *next_retired;
};

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    pthread_t thread;
    struct fake_op *head, *tail;
    uint64_t submitted; /* tickets handed out */
    uint64_t completed; /* the last ticket done */
    bool stopping;
    struct CUstream_st *next; /* in the live list, then the retired one */
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    struct CUstream_st *stream; /* NULL: never recorded, or its stream is gone */
    uint64_t value;
    struct CUevent_st *next;
};

struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *module;
    const struct accel_cpu_kernel *kernel;
    char name[128];
    struct CUfunc_st *next;
};

struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    void *handle; /* dlopen of the memfd */
    int fd;
    struct CUfunc_st *functions;
    struct CUmod_st *next;
};

/* A device allocation or a pinned host block. */
struct fake_block {
    uintptr_t base;
    size_t bytes;
    int device;           /* -1 for pinned host memory */
    struct CUctx_st *ctx; /* NULL for pinned host memory */
    struct fake_block *next;
};

struct fake_device {
    struct CUctx_st *primary; /* NULL while inactive */
    unsigned retains;
    uint64_t used_bytes;
};

/* FAKE_CUDA_FAIL: the nth call of `name` returns `result`. */
struct fake_fail {
    char name[64];
    uint64_t nth;
    uint64_t seen;
    acu_CUresult result;
};

struct fake_state {
    pthread_mutex_t lock;
    pthread_cond_t progress; /* any stream moved, or got work */
    bool initialised;
    /* Knobs, read at each cuInit. */
    int device_count;
    uint64_t memory_bytes;
    uint64_t max_pitch;
    uint64_t delay_us;
    bool no_param_info;
    struct fake_fail fails[FAKE_FAILS_MAX];
    int fail_count;
    char lose_name[64]; /* empty: count every call */
    uint64_t lose_nth;  /* 0: never */
    uint64_t lose_seen;
    /* State. */
    struct fake_device devices[FAKE_DEVICES_MAX];
    struct fake_block *blocks;
    struct CUstream_st *streams;
    struct CUevent_st *events;
    struct CUmod_st *modules;
    struct CUctx_st *retired_contexts;
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

/*
 * The calling thread's current context, ready for work: ILLEGAL_ADDRESS
 * once lost, INVALID_CONTEXT without one. Lock held.
 */
acu_CUresult fake_current(struct CUctx_st **out_ctx);

/*
 * FAKE_ENTER(lose_now) starts an entry: it takes the lock and applies
 * fake_enter, returning its result when the call is not to go on. A call
 * chosen to lose the context fails here with ILLEGAL_ADDRESS, except
 * cuLaunchKernel, which finds lose_now true and loses it later, when its
 * kernel "runs". FAKE_RETURN(result) drops the lock and returns.
 */
#define FAKE_ENTER(lose_now)                                                           \
    bool lose_now = false;                                                             \
    acu_CUresult entered_;                                                             \
    pthread_mutex_lock(&fake.lock);                                                    \
    entered_ = fake_enter(__func__, &lose_now);                                        \
    if (entered_ == ACU_CUDA_SUCCESS && lose_now && !fake_loses_later(__func__)) {     \
        fake_lose_current();                                                           \
        entered_ = ACU_CUDA_ERROR_ILLEGAL_ADDRESS;                                     \
    }                                                                                  \
    if (entered_ != ACU_CUDA_SUCCESS) {                                                \
        pthread_mutex_unlock(&fake.lock);                                              \
        return entered_;                                                               \
    }

#define FAKE_RETURN(result)                                                            \
    do {                                                                               \
        acu_CUresult returned_ = (result);                                             \
        pthread_mutex_unlock(&fake.lock);                                              \
        return returned_;                                                              \
    } while (0)

/* Whether entry `name` loses its context when its work runs, not at the call. */
static inline bool fake_loses_later(const char *name)
{
    return name[0] == 'c' && __builtin_strcmp(name, "cuLaunchKernel") == 0;
}

/* Lose the calling thread's current context (device 0's when none). Lock held. */
void fake_lose_current(void);

/* Mark a context lost (the current one, or device 0's when none). Lock held. */
void fake_lose(struct CUctx_st *ctx);

/* The device block holding [address, address + bytes), or NULL. Lock held. */
struct fake_block *fake_block_find(uintptr_t address, size_t bytes, bool device);

/* Destroy every stream, event, module and allocation of a context. Lock held. */
void fake_context_release_objects(struct CUctx_st *ctx);

/* A stream of the current context, or why not. Lock held. */
acu_CUresult fake_stream_check(struct CUstream_st *stream, struct CUctx_st *ctx);

/* ---- work on streams (fake_stream.c) ---- */

enum fake_op_kind {
    FAKE_OP_COPY,
    FAKE_OP_LAUNCH,
    FAKE_OP_HOST_FUNC,
    FAKE_OP_WAIT,
    FAKE_OP_LOSE
};

/* A strided copy between absolute addresses: depth slices of height rows. */
struct fake_copy {
    unsigned char *dst;
    const unsigned char *src;
    size_t width, height, depth;
    size_t src_pitch, dst_pitch;
    size_t src_slice, dst_slice;
    void *snapshot; /* owned copy of a pageable source, or NULL */
};

struct fake_launch {
    const struct accel_cpu_kernel *kernel;
    uint32_t grid[3], block[3], shared_bytes;
    unsigned char *arg_bytes;
    void *args[ACCEL_CPU_KERNEL_MAX_PARAMS];
};

struct fake_op {
    enum fake_op_kind kind;
    uint64_t ticket;
    union {
        struct fake_copy copy;
        struct fake_launch launch;
        struct {
            acu_CUhostFn fn;
            void *user;
        } host;
        struct {
            struct CUstream_st *stream;
            uint64_t value;
        } wait;
    } u;
    struct fake_op *next;
};

/* Enqueue `op` (malloc'd; the stream owns it now); its ticket in op->ticket. Lock held. */
void fake_stream_push(struct CUstream_st *stream, struct fake_op *op);

/* Wait, lock held, until the stream has done `ticket` or its context is lost. */
void fake_stream_wait_ticket(struct CUstream_st *stream, uint64_t ticket);

/* Stop a stream's thread once its queue is done, and retire it. Lock held; drops it while joining. */
void fake_stream_retire(struct CUstream_st *stream);

/* Release what an op owns. */
void fake_op_free(struct fake_op *op);

/* Run a launch's grid on the calling thread. */
void fake_launch_run(const struct fake_launch *launch);

/* ---- modules (fake_module.c) ---- */

/* Unload a module and retire it and its functions. Lock held. */
void fake_module_retire(struct CUmod_st *module);

#endif /* FAKE_CUDA_H */
