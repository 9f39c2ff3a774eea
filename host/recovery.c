/*
 * Recovery from device loss: the loss history and its budget, automatic
 * rebuilds, and the borrowing that keeps a rebuild from taking plugin
 * objects away from a call that uses them without the device lock.
 *
 * A loss is found by accel__device_check_loss, under the device lock, deep
 * in whatever call met it. With automatic recovery the device is rebuilt
 * right there, before that call returns, unless the calling thread itself
 * holds borrowed objects (staging buffers, a fence it waits on): a rebuild
 * waits for every borrowed object to come back, so it is put off until the
 * thread gives back its last one, still inside the same call. The
 * application hears of the loss through its on_loss callback, queued where
 * completion callbacks run, so that no user code runs under an accel lock.
 *
 * Every function here but accel_device_set_recovery runs with the device
 * lock held.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "completion.h"
#include "device.h"
#include "host.h"
#include "os.h"
#include "recovery.h"
#include "sized.h"
#include "status.h"
#include "trace.h"

#define HISTORY (ACCEL_RECOVERY_MAX_LOSSES + 1u)

/* Objects this thread has borrowed, from any device. */
static _Thread_local uint32_t borrowed_here;

static accel_status
device_set_recovery_untraced(accel_device *device,
                             const accel_recovery_policy *caller_policy)
{
    if (device == NULL || caller_policy == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_set_recovery: NULL argument");
    if (accel__process_check(device->pid, "accel_device_set_recovery") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_recovery_policy policy;
    accel_status status = accel__struct_in(
        &policy, sizeof policy, caller_policy,
        ACCEL__STRUCT_MIN(accel_recovery_policy, automatic),
        "accel_device_set_recovery");
    if (status != ACCEL_OK)
        return status;
    if (policy.max_losses > ACCEL_RECOVERY_MAX_LOSSES)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_set_recovery: max_losses %u is more "
                            "than %u",
                            policy.max_losses, ACCEL_RECOVERY_MAX_LOSSES);
    pthread_mutex_lock(&device->lock);
    device->recovery.policy = policy;
    device->recovery.first = 0;
    device->recovery.count = 0;
    pthread_mutex_unlock(&device->lock);
    return ACCEL_OK;
}

accel_status accel_device_set_recovery(accel_device *device,
                                       const accel_recovery_policy *policy)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = device_set_recovery_untraced(device, policy);
    return accel__trace_end(traced, status, 0);
}

void accel__recovery_forgive(accel_device *device)
{
    device->recovery.first = 0;
    device->recovery.count = 0;
    atomic_store(&device->recovery.unrecoverable, false);
}

/* Count a loss at `now`; true when the window now holds more than allowed. */
static bool over_budget(struct accel__recovery *rec, uint64_t now)
{
    while (rec->count > 0 && rec->policy.window_ns != 0 &&
           now - rec->losses[rec->first] > rec->policy.window_ns) {
        rec->first = (rec->first + 1) % HISTORY;
        rec->count--;
    }
    /* Full means more than any budget already: the oldest can go. */
    if (rec->count == HISTORY) {
        rec->first = (rec->first + 1) % HISTORY;
        rec->count--;
    }
    rec->losses[(rec->first + rec->count) % HISTORY] = now;
    rec->count++;
    return rec->count > rec->policy.max_losses;
}

static void notify(accel_device *device, accel_status status)
{
    const accel_recovery_policy *policy = &device->recovery.policy;
    if (policy->on_loss != NULL)
        accel__completion_notify_loss(&device->completion, device,
                                      policy->on_loss, policy->user,
                                      atomic_load(&device->generation), status);
}

/* Rebuild a lost device; this thread holds nothing borrowed. */
static void recover(accel_device *device)
{
    /* The loss's own detail is what the failed call reports; the rebuild's
     * plugin calls may record others meanwhile. */
    char detail[512];
    snprintf(detail, sizeof detail, "%s", accel_last_error());
    accel_status status = accel__device_rebuild(device);
    uint32_t generation = atomic_load(&device->generation);
    if (status == ACCEL_OK) {
        accel__error(ACCEL_ERR_DEVICE_LOST,
                     "%s; the host rebuilt the device (generation %u): refs "
                     "minted before are stale",
                     detail, generation);
        accel__log(ACCEL_LOG_WARN, "recovered %s:%u (id %u): generation %u",
                   device->plugin->name, device->index, device->id, generation);
    } else {
        char why[512];
        snprintf(why, sizeof why, "%s", accel_last_error());
        accel__error(ACCEL_ERR_DEVICE_LOST,
                     "%s; the host's reset failed, the device stays lost: %s",
                     detail, why);
        accel__log(ACCEL_LOG_ERROR, "recovery of %s:%u (id %u) failed: %s",
                   device->plugin->name, device->index, device->id, why);
    }
    notify(device, status == ACCEL_OK ? ACCEL_OK : ACCEL_ERR_DEVICE_LOST);
}

void accel__recovery_on_loss(accel_device *device)
{
    struct accel__recovery *rec = &device->recovery;
    if (!rec->policy.automatic) {
        notify(device, ACCEL_ERR_DEVICE_LOST);
        return;
    }
    if (over_budget(rec, accel__now_ns())) {
        atomic_store(&rec->unrecoverable, true);
        accel__error(ACCEL_ERR_UNRECOVERABLE,
                     "%s; %u losses within %llu ns are more than the recovery "
                     "policy allows (%u): the device is unrecoverable",
                     accel_last_error(), rec->count,
                     (unsigned long long)rec->policy.window_ns,
                     rec->policy.max_losses);
        accel__log(ACCEL_LOG_ERROR, "%s:%u (id %u) is unrecoverable",
                   device->plugin->name, device->index, device->id);
        notify(device, ACCEL_ERR_UNRECOVERABLE);
        return;
    }
    rec->pending = true;
    if (borrowed_here == 0)
        recover(device);
}

void accel__borrow_begin(accel_device *device)
{
    device->recovery.borrowed++;
    borrowed_here++;
}

void accel__borrow_end(accel_device *device)
{
    device->recovery.borrowed--;
    borrowed_here--;
    pthread_cond_broadcast(&device->staging.returned);
    if (borrowed_here == 0 && device->recovery.pending)
        recover(device);
}

bool accel__borrowing_here(void)
{
    return borrowed_here > 0;
}

_Thread_local struct accel__lockless_slot *accel__lockless_self;

/* Every thread's slot; a thread's leaves the list when the thread exits. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct accel__lockless_slot *slots;
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static bool slot_key_once_failed;

static void slot_drop(void *value)
{
    struct accel__lockless_slot *slot = value;
    pthread_mutex_lock(&slots_lock);
    for (struct accel__lockless_slot **p = &slots; *p != NULL; p = &(*p)->next) {
        if (*p == slot) {
            *p = slot->next;
            break;
        }
    }
    pthread_mutex_unlock(&slots_lock);
    free(slot);
}

static void slot_key_make(void)
{
    if (pthread_key_create(&slot_key, slot_drop) != 0)
        slot_key_once_failed = true;
}

struct accel__lockless_slot *accel__lockless_slot_make(void)
{
    pthread_once(&slot_key_once, slot_key_make);
    if (slot_key_once_failed)
        return NULL;
    struct accel__lockless_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL)
        return NULL;
    atomic_init(&slot->device, NULL);
    if (pthread_setspecific(slot_key, slot) != 0) {
        free(slot);
        return NULL;
    }
    pthread_mutex_lock(&slots_lock);
    slot->next = slots;
    slots = slot;
    pthread_mutex_unlock(&slots_lock);
    accel__lockless_self = slot;
    return slot;
}

void accel__lockless_drain(accel_device *device)
{
    /* Such a call does not block (a query): the wait is a few hundred ns.
     * A thread that exits meanwhile waits for slots_lock to drop its slot;
     * none holds it while calling. */
    pthread_mutex_lock(&slots_lock);
    for (struct accel__lockless_slot *slot = slots; slot != NULL;
         slot = slot->next) {
        while (atomic_load(&slot->device) == device)
            sched_yield();
    }
    pthread_mutex_unlock(&slots_lock);
}

void accel__borrowed_wait(accel_device *device)
{
    /* The condition is the staging set's: it means "something came back"
     * (a buffer, a borrowed object, the device from its reset). */
    while (device->recovery.borrowed > 0)
        pthread_cond_wait(&device->staging.returned, &device->lock);
}
