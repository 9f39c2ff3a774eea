/*
 * ACCEL_TRACE: a Chrome trace-event (Perfetto) JSON file of what the
 * process asked of accel and what its devices ran (trace.c).
 *
 * Off, every hook costs one load and one predictable branch. On, public
 * calls are timed on the calling thread and kept in that thread's buffer;
 * each command a plugin takes on a stream is followed by an event of the
 * trace's own, and once that event has completed the command is placed on
 * its stream's track by the device's clock (event_elapsed against an
 * anchor event whose host time is known). Records are written, sorted by
 * time, at accel_trace_flush and when a host is destroyed.
 */
#ifndef ACCEL_HOST_TRACE_H
#define ACCEL_HOST_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"

struct accel__ids;

/* Set while a trace file is open. */
extern _Atomic bool accel__trace_on;

static inline bool accel__tracing(void)
{
    return __builtin_expect(
        atomic_load_explicit(&accel__trace_on, memory_order_relaxed), 0);
}

/* A host is being made: open ACCEL_TRACE's file if `ids` may read it. */
void accel__trace_host_begin(const struct accel__ids *ids);
/* A host is gone: write what is buffered; the last host closes the file. */
void accel__trace_host_end(void);

/* ---- public calls, on the calling thread ---- */

/*
 * The public call this thread is in, innermost first: set by the traced
 * wrapper of every public function (ACCEL__TRACE_BEGIN), read by the
 * submit step to name an error's site (submit.h) and by the trace to name
 * the call. NULL outside any. Initial-exec: one %fs-relative store, no
 * __tls_get_addr call, on the dispatch path.
 */
extern _Thread_local const char *accel__api_call
    __attribute__((tls_model("initial-exec")));

/* A traced call under way: when it began (0: not timed) and the call it
 * is nested in. */
struct accel__traced {
    uint64_t begin;
    const char *outer;
};

/* The time of a traced call's start; tracing on. */
uint64_t accel__trace_now(void);
/* Record a call that began at `begin` (non-zero) with its status and a
 * byte count (0: none). */
void accel__trace_api(const char *name, uint64_t begin, accel_status status,
                      uint64_t bytes);

static inline struct accel__traced accel__trace_begin(const char *name)
{
    struct accel__traced traced = {0, accel__api_call};
    accel__api_call = name;
    /* Only the outermost call is recorded: a public function used inside
     * another would end, and could be flushed, before its caller's record,
     * which then goes back in time on the thread's track. */
    if (accel__tracing() && traced.outer == NULL)
        traced.begin = accel__trace_now();
    return traced;
}

/* Begin the traced call of the public function it is written in: its name
 * is the function's own, never typed. */
#define ACCEL__TRACE_BEGIN() accel__trace_begin(__func__)

/* End a traced call: record it when it was timed; returns `status`. */
static inline accel_status accel__trace_end(struct accel__traced traced,
                                            accel_status status, uint64_t bytes)
{
    const char *name = accel__api_call;
    accel__api_call = traced.outer;
    if (__builtin_expect(traced.begin != 0, 0))
        accel__trace_api(name, traced.begin, status, bytes);
    return status;
}

/* ---- commands on a stream, device lock held ---- */

enum accel__trace_kind {
    ACCEL__TRACE_COPY_H2D,
    ACCEL__TRACE_COPY_D2H,
    ACCEL__TRACE_COPY_D2D,
    ACCEL__TRACE_COPY_PEER,
    ACCEL__TRACE_FILL,
    ACCEL__TRACE_LAUNCH
};

struct accel__trace_command {
    enum accel__trace_kind kind;
    uint64_t bytes;     /* copies and fills */
    const char *kernel; /* launches: the kernel's name, copied */
    uint32_t grid[3], block[3];
};

/*
 * A command was just enqueued on `stream` (the plugin said ACCEL_OK): mark
 * its end with a trace event. Call only while accel__tracing(); the submit
 * step (accel__submit_command, submit.h) is the one caller.
 */
void accel__trace_command(accel_stream *stream,
                          const struct accel__trace_command *command);

/* Something that happened to a device: a relocation (bytes), a reset, a
 * loss. Any lock may be held. */
void accel__trace_device_mark(accel_device *device, const char *what,
                              uint64_t bytes);

/* Place what the device's streams have finished, and drop the trace's
 * plugin events: the device is being emptied (close, reset). Lock held. */
void accel__trace_device_empty(accel_device *device);
/* The device is closing: forget it. Lock held, after the above. */
void accel__trace_device_close(accel_device *device);

/* A completion callback ran on this thread from `begin` until now. */
void accel__trace_callback(uint64_t begin);

#endif /* ACCEL_HOST_TRACE_H */
