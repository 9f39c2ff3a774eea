/*
 * Loss bookkeeping and automatic recovery (recovery.c), and the objects
 * borrowed out from under the device lock that a reset waits for.
 */
#ifndef ACCEL_HOST_RECOVERY_H
#define ACCEL_HOST_RECOVERY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"

/* Loss bookkeeping and automatic recovery (recovery.c); device lock held. */
struct accel__recovery {
    accel_recovery_policy policy;
    uint64_t losses[ACCEL_RECOVERY_MAX_LOSSES + 1]; /* times, a ring */
    uint32_t first, count;
    /* Plugin objects in use outside the device lock: a reset waits for them. */
    uint32_t borrowed;
    bool pending; /* lost; rebuild once this thread may */
    _Atomic bool unrecoverable;
};

/*
 * A loss was just marked: count it and recover as the policy says. Lock
 * held; it may rebuild the device before returning.
 */
void accel__recovery_on_loss(accel_device *device);
/* Forget the loss history and the unrecoverable mark (a manual reset). */
void accel__recovery_forgive(accel_device *device);
/*
 * A plugin object taken out from under the lock for a call made without it
 * (a sync, a wait, staging buffers). Lock held for both; giving the last
 * one back is when a recovery put off by this thread runs.
 */
void accel__borrow_begin(accel_device *device);
void accel__borrow_end(accel_device *device);

/* Wait until no other thread holds a borrowed object; lock held. */
void accel__borrowed_wait(accel_device *device);
/* True while the calling thread holds a borrowed object of any device. */
bool accel__borrowing_here(void);
/*
 * Calls made without the device lock (event queries). Each thread has one
 * slot that names the device it is calling, if any: entering is one
 * sequentially consistent store and leaving a plain release store, where a
 * shared counter cost two locked read-modify-writes per query (12 ns of
 * dispatch on a busy machine). A rebuild sets `resetting` and then waits
 * until no slot names its device (accel__lockless_drain); a call reads
 * `resetting` after its store, so either it sees the reset or the rebuild
 * sees it.
 */
struct accel__lockless_slot {
    accel_device *_Atomic device;
    struct accel__lockless_slot *next;
};

extern _Thread_local struct accel__lockless_slot *accel__lockless_self
    __attribute__((tls_model("initial-exec")));
/* Make this thread's slot, kept until it exits; NULL when out of memory. */
struct accel__lockless_slot *accel__lockless_slot_make(void);

/* Enter a call on `device` without its lock: the slot to leave, or NULL
 * (out of memory): take the locked way then. */
static inline struct accel__lockless_slot *
accel__lockless_enter(accel_device *device)
{
    struct accel__lockless_slot *slot = accel__lockless_self;
    if (__builtin_expect(slot == NULL, 0))
        slot = accel__lockless_slot_make();
    if (slot != NULL)
        atomic_store(&slot->device, device);
    return slot;
}

static inline void accel__lockless_leave(struct accel__lockless_slot *slot)
{
    atomic_store_explicit(&slot->device, NULL, memory_order_release);
}

/* Wait for the calls made without the lock; `resetting` is already set. */
void accel__lockless_drain(accel_device *device);

#endif /* ACCEL_HOST_RECOVERY_H */
