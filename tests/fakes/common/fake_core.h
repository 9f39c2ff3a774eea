/*
 * What a fake GPU runtime needs whatever vendor API it wears: the knobs
 * that fail or lose a call, call counters, device memory that is host
 * memory with every range checked, in-order streams run by threads of
 * their own, strided copies, and kernels from CPU images of
 * <accel/kernel.h> kernels. A fake (tests/fakes/cuda, tests/fakes/hip)
 * puts its vendor's entry points, handles and error codes on top.
 *
 * Everything runs under one process-wide lock (fake_core.lock), held by
 * the vendor entry that calls in; one condition (fake_core.progress) is
 * broadcast whenever any stream moves. A fake is a test double: it favours
 * catching a caller's mistakes over speed. Objects are never freed while
 * the library is loaded (a destroyed one is retired and marked). Where a
 * real driver would, a fake hands a retired object's handle out again
 * (streams, events, device memory after a context's end), so that a stale
 * handle names another object, as it does on a GPU, rather than fail
 * cleanly; it stays memory-safe, since nothing is freed.
 */
#ifndef FAKE_CORE_H
#define FAKE_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/kernel.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

#define FAKE_FAILS_MAX 8
#define FAKE_ALLOC_ALIGN 256u

struct fake_core {
    pthread_mutex_t lock;
    pthread_cond_t progress; /* any stream moved, or got work, or a context was lost */
    uint64_t delay_us; /* sleep before each piece of stream work */
};

extern struct fake_core fake_core;

/* ---- knobs (fake_core.c) ---- */

/* A number from the environment; `fallback` when unset or not a number. */
uint64_t fake_env_number(const char *name, uint64_t fallback);

/* Sleep `us` microseconds (none for 0). */
void fake_sleep_us(uint64_t us);

/* A vendor's error code by name or number: false when `text` is neither. */
typedef bool (*fake_code_parse_fn)(const char *text, int *out_code);

/* "ENTRY:N:CODE[,...]": the Nth call (from 1) of ENTRY returns CODE. */
struct fake_fails {
    struct {
        char name[64];
        uint64_t nth;
        uint64_t seen;
        int code;
    } items[FAKE_FAILS_MAX];
    int count;
};

/* "N" or "ENTRY:N": the Nth call, of every entry or of ENTRY, loses the context. */
struct fake_lose {
    char name[64]; /* empty: count every entry */
    uint64_t nth;  /* 0: never */
    uint64_t seen;
};

void fake_fails_read(const char *env_name, fake_code_parse_fn parse,
                     struct fake_fails *out);

#define FAKE_KERNEL_LIMITS_MAX 8

/* "KERNEL:THREADS[:STATIC_SHARED],...": kernels' own limits, as launch bounds give them. */
struct fake_kernel_limits {
    struct {
        char name[64];
        int max_threads;
        int static_shared;
    } items[FAKE_KERNEL_LIMITS_MAX];
    int count;
};

void fake_kernel_limits_read(const char *env_name,
                             struct fake_kernel_limits *out);
/* Kernel `name`'s limits: the knob's, else 1024 threads and no static shared memory. */
void fake_kernel_limits_of(const struct fake_kernel_limits *limits,
                           const char *name, int *out_threads,
                           int *out_static_shared);
void fake_lose_read(const char *env_name, struct fake_lose *out);

/* Count a call of `name` and apply both knobs: a code to fail with (0 for none), *out_lose. */
int fake_knobs_apply(struct fake_fails *fails, struct fake_lose *lose,
                     const char *name, bool *out_lose);

/* ---- call counters (fake_core.c) ---- */

/* Count a call of `name` (a string that lives forever, such as __func__). Lock held. */
void fake_count(const char *name);
/* How many times `name` was called since the library was loaded. Takes the lock. */
uint64_t fake_calls(const char *name);

/* ---- contexts ---- */

/*
 * What work belongs to: a vendor's context (or device) object starts with
 * one. Once lost, streams drop their work and waits give up, as a GPU's
 * do after a fault.
 */
struct fake_owner {
    bool lost;
    int device;
};

/* Mark an owner lost and wake every waiter. Lock held. */
void fake_owner_lose(struct fake_owner *owner);

/* ---- memory (fake_core.c) ---- */

/*
 * A device allocation or a pinned host block; device -1 for pinned host
 * memory, which is either the runtime's own (cuMemHostAlloc, hipHostMalloc)
 * or the caller's, registered (cuMemHostRegister, hipHostRegister).
 */
struct fake_block {
    uintptr_t base;
    size_t bytes;
    int device;
    struct fake_owner *owner; /* what made it, whose end frees it; may be NULL */
    bool registered; /* the caller's memory: never filled nor freed here */
    struct fake_block *next;
};

/* A new block, filled with garbage as a GPU's memory starts; false when out of memory. */
bool fake_block_add(size_t bytes, int device, struct fake_owner *owner,
                    uintptr_t *out_base);
/* The block of that kind holding [address, address + bytes), or NULL. */
struct fake_block *fake_block_find(uintptr_t address, size_t bytes, bool device);
/* Take the block of that kind that starts at `base` off the list; NULL when none. Never a registration. */
struct fake_block *fake_block_take(uintptr_t base, bool device);
/* Free a block taken off the list; its bytes, for the vendor's accounting. */
size_t fake_block_free(struct fake_block *block);
/*
 * End every block of an owner, as a real runtime's context reset does:
 * device memory is freed, and its addresses are handed out again by later
 * allocations of the same size on the device (a stale address then names
 * new memory, as on a GPU); the runtime's own pinned host memory is freed
 * too, as far as the caller can tell (filled with 0xdd and, under
 * AddressSanitizer, poisoned, so that a use of it is reported, yet kept
 * mapped so that an unsanitised build fails a check rather than crash);
 * registrations are dropped, the caller's memory left as it is. Returns
 * the bytes of device memory freed.
 */
size_t fake_blocks_release(struct fake_owner *owner);

/* What fake_host_register did. */
enum fake_register_result {
    FAKE_REGISTER_DONE,
    FAKE_REGISTER_OVERLAPS, /* part of the range is pinned already */
    FAKE_REGISTER_NO_MEMORY
};

/* Register the caller's [base, base + bytes) as pinned host memory of `owner`. Lock held. */
enum fake_register_result fake_host_register(uintptr_t base, size_t bytes,
                                             struct fake_owner *owner);
/* Drop the registration that starts at `base`; false when there is none. Lock held. */
bool fake_host_unregister(uintptr_t base);
/* How many bytes are registered now, over every owner. Takes the lock. */
uint64_t fake_registered_bytes(void);

/* ---- streams (fake_queue.c) ---- */

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

struct fake_stream;

struct fake_op {
    enum fake_op_kind kind;
    uint64_t ticket;
    union {
        struct fake_copy copy;
        struct fake_launch launch;
        struct {
            void (*fn)(void *user);
            void *user;
            bool even_lost; /* runs on a lost context too (a callback told of the error) */
        } host;
        struct {
            struct fake_stream *stream;
            uint64_t value;
        } wait;
    } u;
    struct fake_op *next;
};

/* How many completion times a stream keeps (see fake_mark_time). */
#define FAKE_STAMPS 256u

struct fake_stream {
    struct fake_owner *owner;
    pthread_t thread;
    struct fake_op *head, *tail;
    uint64_t submitted;            /* tickets handed out */
    uint64_t completed;            /* the last ticket done */
    uint64_t done_ns[FAKE_STAMPS]; /* when ticket t completed, at t % FAKE_STAMPS */
    bool stopping;
    bool retired;
};

/* A point in a stream: done once the stream has completed `value`. */
struct fake_mark {
    struct fake_stream *stream; /* NULL: never set */
    uint64_t value;
    uint64_t record_ns; /* when it was set (CLOCK_MONOTONIC) */
};

/* Start a stream's thread; false when it cannot be made. Lock held. */
bool fake_stream_start(struct fake_stream *stream, struct fake_owner *owner);
/* Enqueue `op` (malloc'd; the stream owns it now); its ticket in op->ticket. Lock held. */
void fake_stream_push(struct fake_stream *stream, struct fake_op *op);
/* Wait, lock held, until the stream has done `ticket` or its owner is lost. */
void fake_stream_wait_ticket(struct fake_stream *stream, uint64_t ticket);
/* Let the queue run out, stop the thread and mark the stream retired. Lock held; dropped while joining. */
void fake_stream_retire(struct fake_stream *stream);

/*
 * Wait, lock held, until `done(arg)`, as a driver's wait without blocking
 * sync does: polling with the lock dropped between polls and a core kept
 * busy meanwhile, so that the process's CPU time shows the wait.
 */
void fake_spin_until(bool (*done)(const void *arg), const void *arg);

/*
 * A stream restarted for a handle handed out again: as fake_stream_start,
 * except that its tickets go on from where the retired stream stopped, so
 * that the marks taken on it before (all done) stay done. Lock held.
 */
bool fake_stream_restart(struct fake_stream *stream, struct fake_owner *owner);

/* The mark after everything enqueued on `stream` so far. */
struct fake_mark fake_mark_now(struct fake_stream *stream);
bool fake_mark_done(const struct fake_mark *mark);
/*
 * When a set, done mark completed, as a driver's event timestamp: the time
 * its last ticket completed, or when it was set if that was later (an idle
 * stream). Lock held. The last FAKE_STAMPS tickets of a stream are kept,
 * enough for the tests.
 */
uint64_t fake_mark_time(const struct fake_mark *mark);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fake_now_ns(void);
/* Wait, lock held, until the mark is done or `owner` is lost. */
void fake_mark_wait(const struct fake_mark *mark, const struct fake_owner *owner);

/* A calloc'd op of a kind, or NULL. */
struct fake_op *fake_op_new(enum fake_op_kind kind);
void fake_op_free(struct fake_op *op);

/*
 * Enqueue a checked copy with CUDA's and HIP's rules for host memory: a
 * pageable source is read now (the call returns once it has been), a
 * pageable destination is written before the call returns; pinned and
 * device memory are fully asynchronous. `src_host` and `dst_host` say
 * which sides are host memory; the caller has checked device ranges.
 * False when out of memory. Lock held.
 */
bool fake_copy_enqueue(struct fake_stream *stream, const struct fake_copy *copy,
                       bool src_host, bool dst_host);

/* ---- CPU images and launches (fake_image.c) ---- */

/* A CPU image opened with dlopen from memory. */
struct fake_image {
    void *handle;
    int fd;
};

/*
 * The bytes of a CPU image for this machine, from its ELF headers (the end
 * of the section headers or of the last segment); 0, with a sentence in
 * *out_why, for anything else. `image` may be shorter than the ELF says
 * only if `available` says so: reads stay below it.
 */
size_t fake_image_size(const void *image, size_t available, const char **out_why);
/* Write the image to a memory file and dlopen it; false with *out_why. */
bool fake_image_open(const void *image, size_t size,
                     struct fake_image *out_image, const char **out_why);
void fake_image_close(struct fake_image *image);
/* Kernel `name` of an open image, or NULL. */
const struct accel_cpu_kernel *fake_image_kernel(const struct fake_image *image,
                                                 const char *name);

/* Where parameter `index` of a kernel sits in its argument buffer (kernel.h's layout). */
size_t fake_param_offset(const struct accel_cpu_kernel *kernel, uint32_t index);
/* Copy the arguments `params[i]` into the launch, as a runtime does before returning. */
bool fake_launch_copy_args(struct fake_launch *launch, void *const *params);
/* Run a launch's grid on the calling thread, block by block. */
void fake_launch_run(const struct fake_launch *launch);

#endif /* FAKE_CORE_H */
