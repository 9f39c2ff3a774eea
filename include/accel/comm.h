/*
 * accel communication plugin ABI, version 1.
 *
 * A communication plugin is a shared object named accel-comm-NAME.so that
 * exports one symbol, `accel_comm_v1`, of type `const struct accel_comm_v1`.
 * libaccel discovers it with the same search path and the same checks as
 * driver plugins (ACCEL_PLUGIN_PATH, owner, mode, ELF extents: what is
 * checked is what is loaded), resolves the table, checks it whole, and then
 * calls only through it. It provides collectives (all-reduce, broadcast,
 * reduce, all-gather, reduce-scatter, send/recv, barrier) between the ranks
 * of a job, each rank one process (or, in loopback, one thread) bound to
 * one accel device. This header, with types.h, is the whole contract: a
 * provider needs nothing else from accel, and loads its own library (MPI,
 * NCCL, RCCL) with dlopen at run time.
 *
 * The rules of driver.h hold here too: zero is success; outputs are the
 * last parameters (out_*), read only on success; a provider never prints
 * and reports the detail of an error through services->set_error on the
 * calling thread; the table only grows at its end (struct_size is
 * honoured entry by entry); abi_major is a hard line, abi_minor is not.
 *
 * Two ways to run an operation, told by the provider's caps:
 *  - ACCEL_COMM_CAP_STREAM: the provider enqueues the operation itself on
 *    the native stream of the accel stream (NCCL, RCCL) and returns; the
 *    stream orders it with every other command. The buffers are device
 *    addresses of the rank's device.
 *  - otherwise (MPI, host): the host runs the operation from a progress
 *    thread of its own, once every command enqueued before it on the
 *    stream has completed, and holds back later commands of the stream
 *    until `run` returns. `run` blocks until the operation is complete on
 *    this rank, or until op->deadline_ns passes (then ACCEL_ERR_TIMEOUT,
 *    and the host aborts the communicator). The buffers are host pointers
 *    (the device's memory is host-visible, or the host staged it through
 *    pinned memory), or device addresses when the provider said it takes
 *    that backend's device memory (GPU-aware MPI: accepts_device_memory).
 *
 * Threads: the host never overlaps two calls on one communicator, except
 * comm_abort and comm_error, which may run at any time (from another
 * thread, while run blocks). Calls on different communicators may overlap.
 */
#ifndef ACCEL_COMM_H
#define ACCEL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_COMM_ABI_MAJOR 1
#define ACCEL_COMM_ABI_MINOR 1
#define ACCEL_COMM_SYMBOL "accel_comm_v1"

/* The largest unique id a provider makes (ncclUniqueId is 128 bytes). */
#define ACCEL_COMM_UNIQUE_ID_MAX 256u

/* Opaque provider objects: each provider defines these for itself. */
typedef struct accel_comm_provider accel_comm_provider;
typedef struct accel_comm_handle accel_comm_handle;

/* Collective operations. Values are frozen; new ones are appended. */
typedef enum accel_comm_op_kind {
    ACCEL_COMM_ALLREDUCE = 0,
    ACCEL_COMM_BROADCAST = 1,
    ACCEL_COMM_REDUCE = 2,
    ACCEL_COMM_ALLGATHER = 3,
    ACCEL_COMM_REDUCE_SCATTER = 4,
    ACCEL_COMM_SEND = 5,
    ACCEL_COMM_RECV = 6,
    ACCEL_COMM_BARRIER = 7,
    ACCEL_COMM_OP_KIND_COUNT
} accel_comm_op_kind;

/* Provider capability bits (accel_comm_v1.caps). */
enum {
    /* Operations are enqueued on the native stream (see above). */
    ACCEL_COMM_CAP_STREAM = 1u << 0,
    /* Ranks may live in one process, one thread each (loopback). */
    ACCEL_COMM_CAP_LOOPBACK = 1u << 1,
    /* The provider can exchange a unique id for other providers (it is a
     * bootstrap: MPI). */
    ACCEL_COMM_CAP_BOOTSTRAP = 1u << 2
};

/*
 * What the host offers a provider; valid until plugin_close returns. A
 * provider reads a field only if struct_size covers it.
 */
struct accel_comm_services {
    uint32_t struct_size;
    uint32_t host_minor; /* ACCEL_COMM_ABI_MINOR of the host */
    /* As accel_host_services' log, set_error and getenv in driver.h. */
    void (*log)(accel_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    accel_status (*set_error)(accel_status status, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    const char *(*getenv)(const char *name);
};

/*
 * How the host bootstraps a communicator: it hands the provider a way to
 * exchange bytes with the other ranks before the communicator exists (the
 * mpi provider, or the file or TCP rendezvous named by
 * ACCEL_COMM_RENDEZVOUS, or in loopback a barrier between threads). Both
 * calls are collective over the `size` ranks of accel_comm_init and
 * block until every rank has called.
 */
struct accel_comm_bootstrap {
    void *ctx;
    /* Copy root's `bytes` at data into every rank's data. */
    accel_status (*broadcast)(void *ctx, void *data, size_t bytes, int root);
    /* Rank r's `bytes` at send land at out + r * bytes on every rank. */
    accel_status (*allgather)(void *ctx, const void *send, void *out,
                              size_t bytes);
};

/* What a new communicator is made of. */
struct accel_comm_init {
    uint32_t struct_size;
    int32_t rank; /* 0 <= rank < size */
    int32_t size;
    int32_t local_rank; /* among the ranks of this machine */
    int32_t local_size;
    uint32_t reserved;
    /* The rank's device: its kind, ordinal and context (for NCCL: the
     * CUDA device to bind); kind ACCEL_NATIVE_CPU for the null plugin. */
    struct accel_native_handles device;
    /* Unique id made by rank 0's unique_id, already copied to every rank;
     * id_bytes is 0 for a provider without unique_id. */
    const void *id;
    size_t id_bytes;
    /* Always set; providers that need no exchange ignore it. */
    const struct accel_comm_bootstrap *bootstrap;
    /* Nanoseconds a rank waits for the others before it gives up
     * (ACCEL_COMM_TIMEOUT_MS); 0 means forever. */
    uint64_t timeout_ns;
};

/* One operation. count is in elements of `type`; for ALLGATHER and
 * REDUCE_SCATTER it is the count of one rank's share (recv holds
 * size * count for ALLGATHER, send holds size * count for
 * REDUCE_SCATTER). send == recv means in place. */
struct accel_comm_op {
    uint32_t struct_size;
    uint32_t kind;      /* accel_comm_op_kind */
    uint32_t type;      /* accel_elem_type */
    uint32_t reduce_op; /* accel_reduce_op, for the reducing kinds */
    uint64_t count;
    int32_t root;    /* BROADCAST, REDUCE: the root rank; SEND/RECV: the peer */
    uint32_t memory; /* accel_native_kind of send/recv: ACCEL_NATIVE_CPU when
                        they are host pointers */
    /* Buffers: host pointers or device addresses (see memory). Unused
     * ones are 0. */
    uint64_t send;
    uint64_t recv;
    /* CAP_STREAM providers: the native stream to enqueue on. */
    void *stream;
    /* Host-run providers: the CLOCK_MONOTONIC time (ns) past which run
     * returns ACCEL_ERR_TIMEOUT; 0 means none. */
    uint64_t deadline_ns;
};

/*
 * The table a communication plugin exports. Required entries are marked;
 * the rest may be NULL.
 */
struct accel_comm_v1 {
    uint32_t struct_size; /* sizeof(struct accel_comm_v1) as built */
    uint16_t abi_major;   /* ACCEL_COMM_ABI_MAJOR */
    uint16_t abi_minor;   /* ACCEL_COMM_ABI_MINOR */
    const char *name;     /* "mpi", "nccl", "rccl", "host": matches the file */
    uint32_t caps;        /* ACCEL_COMM_CAP_* */
    uint32_t reserved;

    /*
     * Required. Load the provider's library and initialise. A provider
     * whose library is absent, or that cannot serve this process (MPI not
     * launched, no GPU for NCCL), returns ACCEL_ERR_NOT_SUPPORTED with the
     * reason in set_error; the host then tries the next provider of
     * ACCEL_COMM and keeps the reason.
     */
    accel_status (*plugin_open)(const struct accel_comm_services *services,
                                accel_comm_provider **out_provider);
    /* Required. Release everything; the host destroyed every comm first. */
    void (*plugin_close)(accel_comm_provider *provider);
    /*
     * Required. Whether the provider can operate on the memory of devices
     * of `kind` directly: ACCEL_OK when it can (ACCEL_NATIVE_CPU always for
     * host-run providers; CUDA for a CUDA-aware MPI or NCCL), else
     * ACCEL_ERR_NOT_SUPPORTED with the reason (the host then stages through
     * pinned host memory, or refuses a CAP_STREAM provider).
     */
    accel_status (*accepts_memory)(accel_comm_provider *provider,
                                   accel_native_kind kind);
    /* Optional. Write a unique id for a new communicator (rank 0 only);
     * the host broadcasts it to the other ranks through the bootstrap. */
    accel_status (*unique_id)(accel_comm_provider *provider, void *out_id,
                              size_t capacity, size_t *out_bytes);
    /* Required. Create this rank's communicator; collective over all
     * ranks (blocks until every rank joined or init->timeout_ns passed). */
    accel_status (*comm_create)(accel_comm_provider *provider,
                                const struct accel_comm_init *init,
                                accel_comm_handle **out_comm);
    /* Optional. As MPI_Comm_split: collective over comm; color < 0 gives
     * *out_comm == NULL for this rank. */
    accel_status (*comm_split)(accel_comm_handle *comm, int color, int key,
                               accel_comm_handle **out_comm);
    /* Required. Destroy after every operation finished (or after abort). */
    void (*comm_destroy)(accel_comm_handle *comm);
    /* Required. Make every pending and later operation of this rank fail
     * promptly (ncclCommAbort, MPI_Abort is not used: the job lives on);
     * any thread, any time, idempotent. */
    void (*comm_abort)(accel_comm_handle *comm);
    /* Required. ACCEL_OK, or the asynchronous error the communicator met
     * (ncclCommGetAsyncError): a failed peer, a timeout, an abort. */
    accel_status (*comm_error)(accel_comm_handle *comm);
    /*
     * Required. Do one operation: enqueue it on op->stream (CAP_STREAM) or
     * run it to completion on this rank (host-run). Arguments were checked
     * by the host: kind, type and reduce_op in range, root and peer in
     * range, buffers of the right length.
     */
    accel_status (*submit)(accel_comm_handle *comm,
                           const struct accel_comm_op *op);

    /* Since 1.1. */

    /*
     * Optional; CAP_BOOTSTRAP providers have it. Fill *out_bootstrap with
     * calls that exchange bytes between every rank of the job (for MPI:
     * the ranks of MPI_COMM_WORLD, ctx the provider's own communicator),
     * valid until plugin_close. The host uses it to broadcast another
     * provider's unique id and passes it as accel_comm_init.bootstrap.
     * Both calls are collective and block until every rank has called,
     * or until ACCEL_COMM_TIMEOUT_MS passed (ACCEL_ERR_TIMEOUT; the
     * bootstrap is then unusable). The host serialises calls on it.
     */
    accel_status (*bootstrap)(accel_comm_provider *provider,
                              struct accel_comm_bootstrap *out_bootstrap);
};

/* Where entry `slot` of the table starts. */
#define ACCEL_COMM_V1_ENTRY_OFFSET(slot)                                       \
    (offsetof(struct accel_comm_v1, plugin_open) +                             \
     (size_t)(slot) * sizeof(void (*)(void)))
/* The whole 1.0 table: ten entries; 1.1 adds bootstrap (slot 10). */
#define ACCEL_COMM_V1_0_SIZE ACCEL_COMM_V1_ENTRY_OFFSET(10)
#define ACCEL_COMM_V1_1_SIZE ACCEL_COMM_V1_ENTRY_OFFSET(11)

/* Whether `table` has `entry`, by its struct_size. */
#define ACCEL_COMM_HAS_ENTRY(table, entry)                                     \
    ((table)->struct_size >=                                                   \
     offsetof(struct accel_comm_v1, entry) + sizeof((table)->entry))

#if defined(__GNUC__)
#define ACCEL_COMM_EXPORT __attribute__((visibility("default")))
#else
#define ACCEL_COMM_EXPORT
#endif

#if defined(__cplusplus)
#define ACCEL_COMM_STATIC_ASSERT_(cond, text) static_assert(cond, text)
#else
#define ACCEL_COMM_STATIC_ASSERT_(cond, text) _Static_assert(cond, text)
#endif
ACCEL_COMM_STATIC_ASSERT_(
    offsetof(struct accel_comm_v1, name) == 8 &&
        offsetof(struct accel_comm_v1, plugin_open) == 16 + sizeof(void *) &&
        offsetof(struct accel_comm_v1, submit) == ACCEL_COMM_V1_ENTRY_OFFSET(9) &&
        offsetof(struct accel_comm_v1, bootstrap) ==
            ACCEL_COMM_V1_ENTRY_OFFSET(10) &&
        sizeof(struct accel_comm_v1) == ACCEL_COMM_V1_1_SIZE,
    "accel_comm_v1 layout");

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_COMM_H */
