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
/* Wait for the calls made without the lock; `lost` is already set. */
void accel__lockless_drain(accel_device *device);

#endif /* ACCEL_HOST_RECOVERY_H */
