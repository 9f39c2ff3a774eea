/*
 * The state the ranks of one `host` communicator share, and the few
 * primitives every operation is built from: a generation-counted barrier,
 * waits that end at a deadline or an abort, and the group's first error.
 *
 * The same layout serves both modes. In loopback (every rank a thread of
 * this process) it lives in ordinary memory and ranks read each other's
 * buffers through the addresses they publish. Between processes it lives
 * in a POSIX shared-memory segment (host_shm.c), the mutex and condition
 * are process-shared, and data moves through one bounded staging buffer
 * per rank, chunk by chunk.
 */
#ifndef ACCEL_COMM_HOST_GROUP_H
#define ACCEL_COMM_HOST_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/comm.h>

/* The most ranks one host communicator has (its mailboxes grow as the
 * square of it). */
#define HOST_MAX_RANKS 256
/* Bytes of a published exchange word (comm_split, creation statuses). */
#define HOST_WORD_BYTES 32
/* A pseudo-kind that comm_split publishes, so that a split met by a
 * collective on another rank is a mismatch, not a hang. */
#define HOST_KIND_SPLIT 100u
/* The group error, when an abort came from a dead process. */
#define HOST_REASON_BYTES 160

/* What each rank says it runs, compared across ranks. */
struct host_desc {
    uint32_t kind;
    uint32_t type;
    uint32_t reduce_op;
    int32_t root;
    uint64_t count;
};

/* One rank's published state for one operation. Two per rank, used by
 * alternate operations, so that a rank that runs ahead never overwrites
 * what a slower rank is still reading (see host_ops.c). */
struct host_slot {
    struct host_desc desc;
    uint64_t in;  /* loopback: this rank's input, as an address */
    uint64_t out; /* loopback: where this rank's results go */
    int32_t status; /* this rank's own preparation (ACCEL_OK or why not) */
    uint32_t reserved;
    uint8_t word[HOST_WORD_BYTES];
};

/* Point to point, from one rank to another: one per ordered pair. */
struct host_mailbox {
    uint64_t posted; /* chunks the sender has posted */
    uint64_t taken;  /* chunks the receiver has consumed */
    uint64_t count;  /* the sender's message: elements and type */
    uint32_t type;
    int32_t verdict;     /* 0, or the receiver's refusal of the message */
    uint64_t addr;       /* loopback: the sender's buffer */
    uint64_t bytes;      /* bytes in the posted chunk */
    uint64_t recv_count; /* on a refusal: what the receiver expected */
    uint32_t recv_type;
    uint32_t reserved;
};

struct host_shared {
    uint64_t magic;
    uint32_t size;
    uint32_t refs;        /* loopback: handles alive */
    uint64_t chunk_bytes; /* each rank's staging buffer (0 in loopback) */
    uint64_t total_bytes; /* the whole region */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    uint32_t arrived;    /* ranks at the current barrier */
    uint32_t generation; /* barriers completed */
    int32_t error;       /* the first error that broke the group, or 0 */
    int32_t reserved;
    char reason[HOST_REASON_BYTES];
    /* Then slots[size][2], arrivals[size], mailboxes[size * size], and in
     * shared memory staging[size][chunk_bytes], each 64-byte aligned. */
};

/* This rank's view of the group. */
struct accel_comm_handle {
    const struct accel_comm_services *services;
    struct host_shared *shared;
    bool shm;            /* shared memory between processes */
    size_t mapped_bytes; /* shm: the mapping's length */
    int rank;
    int size;
    uint64_t op_seq;    /* group operations run, for the slot parity */
    uint64_t timeout_ns;
    uint32_t split_seq; /* comm_split calls, to name their segments */
    char name[64];      /* shm: the segment's name, for splits */
};

/* Bytes of the shared region for `size` ranks with `chunk_bytes` staging
 * each, and where its parts start. */
size_t accel__host_region_bytes(uint32_t size, uint64_t chunk_bytes);
struct host_slot *accel__host_slot(struct host_shared *shared, int rank,
                                   uint64_t seq);
uint32_t *accel__host_arrival(struct host_shared *shared, int rank);
struct host_mailbox *accel__host_mailbox(struct host_shared *shared, int from,
                                         int to);
uint8_t *accel__host_staging(struct host_shared *shared, int rank);

/* Initialise a zeroed region: mutex and condition (process-shared when
 * `shared_between_processes`, robust so that a dead process is noticed). */
accel_status accel__host_shared_init(struct host_shared *shared, uint32_t size,
                                     uint64_t chunk_bytes,
                                     bool shared_between_processes);
void accel__host_shared_fini(struct host_shared *shared);

/* The group's mutex; a lock taken over from a dead process breaks the
 * group. */
void accel__host_lock(struct host_shared *shared);
void accel__host_unlock(struct host_shared *shared);

/* With the lock held: break the group with `error` (first error wins) and
 * wake every waiter. */
void accel__host_break(struct host_shared *shared, accel_status error,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* What a rank waits for: ready(arg) with the lock held, and a few words
 * that name the wait for an error's detail. */
struct host_waiting {
    bool (*ready)(void *arg);
    void (*describe)(void *arg, char *out, size_t capacity);
    void *arg;
};

/*
 * With the lock held: wait until the condition holds. Returns ACCEL_OK, or
 * the group's error (ACCEL_ERR_COMM_ABORTED, or ACCEL_ERR_TIMEOUT when
 * another rank's deadline broke it while this one waited), or, past
 * `deadline_ns` (CLOCK_MONOTONIC; 0 = none), breaks the group and returns
 * ACCEL_ERR_TIMEOUT.
 */
accel_status accel__host_wait(accel_comm_handle *comm,
                              const struct host_waiting *waiting,
                              uint64_t deadline_ns);

/* Every rank of the group meets here (or fails as accel__host_wait). */
accel_status accel__host_barrier(accel_comm_handle *comm, uint64_t deadline_ns);

/* ACCEL_ERR_COMM_ABORTED with the group's reason when it is broken. */
accel_status accel__host_check_broken(accel_comm_handle *comm);

/* Report an error through the host's set_error (never prints). */
accel_status accel__host_error(accel_comm_handle *comm, accel_status status,
                               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
accel_status accel__host_service_error(const struct accel_comm_services *services,
                                       accel_status status, const char *fmt,
                                       ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "ACCEL_ERR_TIMEOUT" and so on (a plugin has no libaccel to ask). */
const char *accel__host_status_name(accel_status status);

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t accel__host_now_ns(void);

#endif /* ACCEL_COMM_HOST_GROUP_H */
