/*
 * Collectives (comm.c, comm_load.c, comm_ops.c, comm_gate.c, comm_boot.c,
 * comm_rank.c): communication providers (accel-comm-NAME.so, include/accel/
 * comm.h), the communicators made with them, and the device's share of
 * their state (the collectives in flight, which relocation waits for).
 */
#ifndef ACCEL_HOST_COMM_H
#define ACCEL_HOST_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/comm.h"
#include "pool.h"

struct accel__slot;       /* refs.h */
struct accel__comm_stage; /* comm_stage.c */

/* ---- providers (comm_load.c) ---- */

/* One provider named by ACCEL_COMM, as discovery left it. */
struct accel__comm_provider {
    char *name;
    char *path;   /* the file loaded, or NULL when none was found */
    char *reason; /* why it is not usable; NULL when open */
    void *dl;
    int fd;                     /* the file dl was loaded from; -1 */
    struct accel_comm_v1 table; /* the host's copy, zero past struct_size */
    accel_comm_provider *state; /* from plugin_open; NULL unless open */
};

/* The providers of one host, loaded at the first communicator. */
struct accel__comm_catalog {
    bool loaded;
    struct accel__comm_provider *list; /* in ACCEL_COMM order */
    size_t count;
    accel_comm_provider_info *infos; /* the public view of `list` */
};

/*
 * Load the providers ACCEL_COMM names (once per host; host lock taken
 * here). ACCEL_ERR_OUT_OF_HOST_MEMORY, or ACCEL_ERR_INVALID_ARGUMENT for a
 * malformed ACCEL_COMM; a provider that fails is kept with its reason.
 */
accel_status accel__comm_catalog_load(accel_host *host,
                                      struct accel__comm_catalog **out_catalog);
void accel__comm_catalog_unload(accel_host *host);

/* What a communicator of `device` needs of its provider. */
struct accel__comm_choice {
    struct accel__comm_provider *provider;
    struct accel_native_handles native; /* the device's, stream NULL */
    bool host_run;    /* not CAP_STREAM: the gate and progress thread */
    bool host_memory; /* host-run on host pointers: the device's, or staged */
};

/*
 * The first open provider (with CAP_LOOPBACK when `loopback`) that serves
 * every device of `devices`. ACCEL_ERR_NOT_FOUND with each provider's
 * reason in the detail when none does.
 */
accel_status accel__comm_choose(struct accel__comm_catalog *catalog,
                                accel_device *const *devices, int count,
                                bool loopback,
                                struct accel__comm_choice *out_choice);

/* The device's native handles (kind CPU for a host-visible device without
 * the entry). */
accel_status accel__comm_native(accel_device *device,
                                struct accel_native_handles *out);

/* ---- communicators (comm.c, comm_gate.c, comm_ops.c) ---- */

struct accel__slot;

/*
 * One collective enqueued on a stream. It lives on its device's list from
 * its submission until accel__comm_reap frees it, which is after it
 * finished: its pins are let go under the device lock there.
 */
struct accel__comm_op {
    struct accel_comm *comm; /* not to be read once finished */
    accel_device *device;
    accel_stream *stream;
    struct accel_comm_op desc;
    struct accel__slice pins[2];
    uint32_t pin_count;
    void *event; /* CAP_STREAM: accel_drv_event recorded behind it */
    /* comm->lock: */
    bool ran; /* the progress thread is done with it */
    accel_status status;
    char why[256];
    struct accel__comm_op *next_ready;
    /* the device's comm lock: */
    bool started;  /* the gate was reached, or it runs on its caller */
    bool finished; /* no longer in flight */
    /* Run on its caller (accel__comm_run_here): a hold on the stream keeps
     * later commands back until it finished, and the op until it ran. */
    bool held;
    bool hold_ran; /* the hold is over (or will never run): reapable */
    struct accel__comm_op *next;
};

struct accel_comm {
    accel_device *device;
    struct accel__comm_provider *provider;
    accel_comm_handle *handle;
    int rank;
    int size;
    bool host_run;
    bool host_memory;
    bool loopback;       /* ranks as threads of this process */
    bool run_here;       /* may run a collective on its caller (comm_gate.c) */
    uint32_t memory;     /* accel_native_kind of the buffers it is given */
    uint64_t timeout_ns; /* ACCEL_COMM_TIMEOUT_MS; 0 is forever */

    /* `lock` guards what follows; `changed` signals each change. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    _Atomic bool aborted;
    char why[256];    /* why it was aborted */
    uint32_t pending; /* operations enqueued and not finished */
    /* Held around every call into the provider on this communicator but
     * comm_abort and comm_error: the provider never sees two at once. */
    pthread_mutex_t calls;
    /* The progress thread waits on `work` alone (a gate reached, or
     * stopping): `changed` is broadcast at every operation's end, which
     * would wake it for nothing. */
    pthread_cond_t work;
    bool stopping; /* the progress thread is to end */
    bool thread_started;
    pthread_t thread; /* the progress thread (host-run providers) */
    struct accel__comm_op *ready, *ready_tail; /* gates reached */
    /* The pinned buffer of staged collectives (comm_stage.c); the device
     * lock guards it. */
    struct accel__comm_stage *stage;

    struct accel_comm *next; /* in the device's list */
};

/*
 * Abort `comm` for `why` (the first reason is kept): later operations
 * fail with ACCEL_ERR_COMM_ABORTED, and the provider's comm_abort makes
 * a running one return. Any thread; no device lock needed.
 */
void accel__comm_abort_for(struct accel_comm *comm, const char *why);
/* ACCEL_ERR_COMM_ABORTED with the reason, recorded as the thread's error. */
accel_status accel__comm_aborted_error(struct accel_comm *comm, const char *what);
/* Start and stop the progress thread of a host-run communicator. */
accel_status accel__comm_progress_start(struct accel_comm *comm);
void accel__comm_progress_stop(struct accel_comm *comm);

/* Host-run: the gate, counted on the communicator before it can run
 * (comm_ops.c). On failure the op is finished (its reap frees it). */
accel_status accel__comm_submit_gated(struct accel_comm *comm,
                                      accel_stream *stream,
                                      struct accel__comm_op *op,
                                      struct accel__slot *send,
                                      struct accel__slot *recv);

/* ---- staging through pinned host memory (comm_stage.c) ---- */

/* Host-run on a device whose memory the host cannot see, and which the
 * provider does not take: every collective is staged. */
bool accel__comm_staged(const struct accel_comm *comm);
/*
 * Enqueue `op` (described with device addresses) staged: copies into the
 * communicator's pinned buffer, a gate per chunk, copies back. Device lock
 * held; takes `op` in every case. A failure aborts the communicator.
 */
accel_status accel__comm_stage_submit(struct accel_comm *comm,
                                      accel_stream *stream,
                                      struct accel__comm_op *op,
                                      struct accel__slot *send,
                                      struct accel__slot *recv);
/* Free the pinned buffer: device lock held (a reset, a close), or not
 * (_free, at the communicator's destroy). */
void accel__comm_stage_drop(struct accel_comm *comm);
void accel__comm_stage_free(struct accel_comm *comm);

/* ---- the device's part (comm.c) ---- */

/*
 * The device's communicators and collectives in flight; its own lock.
 *
 * Relocation does not wait for the collectives on the host: the slices
 * they use are pinned (never moved) until they are reaped, and the
 * relocation's copies are ordered behind every stream's work, gates
 * included. Waiting there, with the device lock held, would hang a thread
 * that drives several ranks until the timeout: the other ranks'
 * collectives it has yet to enqueue are what the one in flight waits for.
 */
struct accel__comm_device {
    pthread_mutex_t lock;
    pthread_cond_t finished;    /* an operation finished */
    struct accel__comm_op *ops; /* every operation not yet reaped */
    struct accel_comm *comms;   /* live communicators */
};

accel_status accel__comm_device_init(accel_device *device);
void accel__comm_device_deinit(accel_device *device);
/* Unpin the slices of finished collectives and free them; device lock. */
void accel__comm_reap(accel_device *device);
/*
 * Abort every communicator of the device for `why` (a reset, a close).
 * No lock needed; none is waited for.
 */
void accel__comm_device_abort(accel_device *device, const char *why);
/*
 * After the device's streams were dropped (reset, close): operations
 * whose gate the stream will now never reach are finished as aborted.
 * Device lock held.
 */
void accel__comm_abandon(accel_device *device);
/*
 * The stream's collective failure since its last sync: ACCEL_OK, or
 * ACCEL_ERR_COMM_ABORTED with the reason (then cleared). `status` is the
 * sync's own: a failure there wins.
 */
accel_status accel__comm_stream_error(accel_stream *stream, accel_status status);
/* An operation is over: the gate's end, or abandoned at a reset. */
void accel__comm_op_finish(struct accel__comm_op *op);
/* The gate: the host function enqueued for a host-run collective. */
void accel__comm_gate(void *user);
/*
 * Whether a communicator may run its collectives on the caller's thread
 * (ACCEL_COMM_INLINE: by default for one rank per process, never for
 * ranks as threads of one process, since one thread may drive several).
 */
bool accel__comm_inline_wanted(bool host_memory, bool loopback);
/*
 * Device lock held: if `op` can run on the caller's thread now (stream
 * idle, nothing else pending on its communicator), take it (counted,
 * pinned, a hold enqueued on the stream, the provider's `calls` lock held)
 * and return true; false leaves everything as it was.
 */
bool accel__comm_take_here(struct accel__comm_op *op, struct accel__slot *send,
                           struct accel__slot *recv);
/* Run an op taken by accel__comm_take_here; no lock held. */
void accel__comm_run_here(struct accel__comm_op *op);
/* Put the op on the device's list, pinned and counted; device lock held. */
void accel__comm_op_track(struct accel__comm_op *op, struct accel__slot *send,
                          struct accel__slot *recv);
/* Destroy every communicator left on a device being closed (logged). */
void accel__comm_device_close(accel_device *device);

/* ---- rank and bootstrap (comm_rank.c, comm_boot.c) ---- */

struct accel__rank {
    int rank, size, local_rank, local_size;
};

/* This process's rank (the launcher's variables; ACCEL_RANK overrides). */
accel_status accel__rank_current(struct accel__rank *out_rank);

/* A bootstrap between the threads of one process (create_local). */
struct accel__local_boot;
accel_status accel__local_boot_create(int size, uint64_t timeout_ns,
                                      struct accel__local_boot **out_boot);
void accel__local_boot_destroy(struct accel__local_boot *boot);
/* Rank `rank`'s view of it; `storage` lives as long as its use. */
struct accel__local_rank_boot {
    struct accel__local_boot *shared;
    int rank;
};
void accel__local_boot_view(struct accel__local_boot *boot,
                            struct accel__local_rank_boot *storage, int rank,
                            struct accel_comm_bootstrap *out);

/*
 * The bootstrap between processes: ACCEL_COMM_RENDEZVOUS (file:/dir or
 * tcp:host:port). ACCEL_ERR_NOT_FOUND when the variable is unset.
 */
struct accel__rendezvous;
accel_status accel__rendezvous_open(const struct accel__rank *rank,
                                    uint64_t timeout_ns,
                                    struct accel__rendezvous **out_rdv,
                                    struct accel_comm_bootstrap *out);
void accel__rendezvous_close(struct accel__rendezvous *rdv);

/* ACCEL_COMM_TIMEOUT_MS in nanoseconds (default 5 minutes; 0 forever). */
uint64_t accel__comm_timeout_ns(void);

/*
 * Every rank's `count` values of `mine` into `all` (rank r's at r * count),
 * through a stream-ordered communicator itself: its collectives take the
 * device's memory on a stream, so they travel through buffers on its
 * device and a stream of the call's own (accel_comm_split). Collective;
 * the caller holds none of the communicator's locks.
 */
accel_status accel__comm_gather_on_device(accel_comm *comm, const int32_t *mine,
                                          int32_t *all, uint64_t count);

#endif /* ACCEL_HOST_COMM_H */
