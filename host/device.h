/*
 * Devices (device.c): struct accel_device, composed of the parts each
 * module owns, and the loss checks every call into a plugin ends with.
 */
#ifndef ACCEL_HOST_DEVICE_H
#define ACCEL_HOST_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "accel/accel.h"
#include "accel/driver.h"
#include "compact.h"
#include "comm.h"
#include "completion.h"
#include "drop.h"
#include "pool.h"
#include "recovery.h"
#include "refs.h"
#include "staging.h"
#include "stream.h"

/* Memory from accel_host_alloc (stream.c); device lock. */
struct accel__host_block {
    void *ptr;
    size_t bytes;
};

struct accel__host_blocks {
    struct accel__host_block *list;
    size_t count;
    size_t capacity;
};

/*
 * An open device: its identity and lock here, every other part owned by
 * the module that declares it.
 */
struct accel__plugin;       /* loader.h */
struct accel__trace_device; /* trace.h */

struct accel_device {
    accel_host *host;
    pid_t pid; /* the host's, here for one load */
    struct accel__plugin *plugin;
    const struct accel_driver_v1 *drv;
    accel_drv_device *drv_device;
    uint32_t index;
    uint32_t id;
    struct accel_device_props props;

    /* The device lock: the ref table, the object lists, the state. */
    pthread_mutex_t lock;
    _Atomic uint32_t generation;
    _Atomic bool lost;
    /*
     * A reset is under way, the application's or the host's after a loss,
     * made by `resetter`. It is not a loss: calls that begin meanwhile wait
     * for it (accel__device_reset_wait), and the lockless query treats it
     * as it treats `lost`. Written under the lock.
     */
    _Atomic bool resetting;
    pthread_t resetter;
    /*
     * Calls into the plugin made without the lock (event queries): a
     * rebuild marks the device lost, then waits until none is left before
     * it changes a plugin object (accel__lockless_drain).
     */
    _Atomic uint32_t lockless_calls;

    struct accel__ref_table refs;          /* refs.h */
    struct accel__pool pool;               /* pool.h */
    struct accel__queues queues;           /* stream.h */
    struct accel_module *modules;          /* module.c's list */
    struct accel__own_work own;            /* compact.h */
    struct accel__drop_queue drop;         /* drop.h */
    struct accel__staging staging;         /* staging.h */
    struct accel__completion completion;   /* completion.h */
    struct accel__host_blocks host_memory; /* above */
    struct accel__recovery recovery;       /* recovery.h */
    struct accel__comm_device comm;        /* comm.h */
    struct accel__trace_device *trace; /* trace.h; NULL when ACCEL_TRACE is off */

    struct accel_device *next; /* in host->devices */
};

accel_status accel__device_check_loss(accel_device *device, accel_status status);
/*
 * The same for a call made without the device lock: the lock is taken for
 * the check only when `status` is a failure. Call with no device lock held,
 * since a recovery may wait for other threads.
 */
accel_status accel__device_check_loss_unlocked(accel_device *device,
                                               accel_status status);
/*
 * Wait while another thread resets the device, unless this thread holds
 * borrowed objects (the reset waits for those: it goes on, and its refs are
 * stale already). Lock held; it is let go while waiting.
 */
void accel__device_reset_wait(accel_device *device);
/*
 * After accel__device_reset_wait: ACCEL_ERR_DEVICE_LOST (or UNRECOVERABLE)
 * with its detail, else ACCEL_OK. Lock held.
 */
accel_status accel__device_usable(accel_device *device);
/* The error for a handle whose plugin object is gone with the device. */
accel_status accel__device_gone(const accel_device *device, const char *what);
/*
 * The heart of a reset: wait for other threads' borrowed objects (the lock
 * is let go meanwhile), empty the device, reset it through the plugin, and
 * rebuild streams, events and modules. Lock held.
 */
accel_status accel__device_rebuild(accel_device *device);

/* The plugin's description of device `index`: zeroed first, strings ended. */
accel_status accel__plugin_device_props(struct accel__plugin *plugin,
                                        uint32_t index,
                                        struct accel_device_props *out_props);

/* Let go of the device lock, then make the mem_free of the pages taken out
 * of the pool under it, the device borrowed meanwhile (pool.c). */
void accel__device_unlock(accel_device *device);

#endif /* ACCEL_HOST_DEVICE_H */
