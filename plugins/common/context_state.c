/*
 * What a device's context has been through: live, lost, reset.
 */
#include "context_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY when a lock cannot be made. The
 * states last as long as the loaded plugin: nothing takes them apart.
 */
static accel_status context_state_init(struct accel__context_state *state)
{
    memset(state, 0, sizeof(*state));
    if (pthread_rwlock_init(&state->gate, NULL) != 0)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    if (pthread_mutex_init(&state->lock, NULL) != 0)
        goto fail_gate;
    if (accel__pinned_blocks_init(&state->pinned) != ACCEL_OK)
        goto fail_lock;
    return ACCEL_OK;
fail_lock:
    pthread_mutex_destroy(&state->lock);
fail_gate:
    pthread_rwlock_destroy(&state->gate);
    return ACCEL_ERR_OUT_OF_HOST_MEMORY;
}

/* Shared by every plugin_open (every host) while the plugin is loaded. */
static struct accel__context_state device_states[ACCEL__NATIVE_DEVICES_MAX];
static pthread_once_t device_states_once = PTHREAD_ONCE_INIT;
static bool device_states_ready;

static void device_states_init(void)
{
    for (uint32_t i = 0; i < ACCEL__NATIVE_DEVICES_MAX; i++) {
        if (context_state_init(&device_states[i]) != ACCEL_OK)
            return;
    }
    device_states_ready = true;
}

struct accel__context_state *accel__context_state_of_device(uint32_t ordinal)
{
    pthread_once(&device_states_once, device_states_init);
    return device_states_ready ? &device_states[ordinal] : NULL;
}

void accel__context_state_open(struct accel__context_state *state,
                               uint32_t *out_epoch)
{
    pthread_mutex_lock(&state->lock);
    if (state->opens++ == 0) {
        state->lost = false;
        state->reason[0] = '\0';
        state->unrecoverable = false;
    }
    *out_epoch = state->epoch;
    pthread_mutex_unlock(&state->lock);
}

accel_status accel__context_state_open_rebuilt(struct accel__context_state *state,
                                               accel__context_rebuild_fn rebuild,
                                               void *user, uint32_t *out_epoch)
{
    accel_status status = ACCEL_OK;

    pthread_rwlock_wrlock(&state->gate);
    pthread_mutex_lock(&state->lock);
    if (state->opens == 0 && (state->lost || state->unrecoverable)) {
        state->unrecoverable = false;
        status = rebuild(user, false);
        if (status == ACCEL_OK) {
            state->epoch++;
            state->lost = false;
            state->reason[0] = '\0';
        }
    }
    if (status == ACCEL_OK) {
        state->opens++;
        *out_epoch = state->epoch;
    }
    pthread_mutex_unlock(&state->lock);
    pthread_rwlock_unlock(&state->gate);
    return status;
}

void accel__context_state_close(struct accel__context_state *state)
{
    pthread_mutex_lock(&state->lock);
    if (state->opens > 0)
        state->opens--;
    pthread_mutex_unlock(&state->lock);
}

/* Lock held. */
static void context_state_poison(struct accel__context_state *state,
                                 const char *call, const char *native_name)
{
    if (!state->lost) {
        state->lost = true;
        snprintf(state->reason, sizeof(state->reason), "%s failed with %s",
                 call, native_name);
    }
}

void accel__context_state_mark_lost(struct accel__context_state *state,
                                    const char *call, const char *native_name)
{
    pthread_mutex_lock(&state->lock);
    context_state_poison(state, call, native_name);
    pthread_mutex_unlock(&state->lock);
}

void accel__context_state_mark_lost_in(struct accel__context_state *state,
                                       uint32_t seen_epoch, const char *call,
                                       const char *native_name)
{
    pthread_mutex_lock(&state->lock);
    if (state->epoch == seen_epoch)
        context_state_poison(state, call, native_name);
    pthread_mutex_unlock(&state->lock);
}

accel_status accel__context_state_check(struct accel__context_state *state,
                                        uint32_t seen_epoch,
                                        const struct accel_host_services *services,
                                        const char *device_name)
{
    accel_status status = ACCEL_OK;

    pthread_mutex_lock(&state->lock);
    if (state->unrecoverable)
        status = services->set_error(ACCEL_ERR_UNRECOVERABLE, "%s",
                                     state->refusal);
    else if (state->lost)
        status = services->set_error(
            ACCEL_ERR_DEVICE_LOST,
            "%s is lost: its context is poisoned (%s); a reset "
            "rebuilds it",
            device_name, state->reason);
    else if (state->epoch != seen_epoch)
        status = services->set_error(
            ACCEL_ERR_DEVICE_LOST,
            "%s is lost: another open of the device reset its "
            "context, freeing this open's objects",
            device_name);
    pthread_mutex_unlock(&state->lock);
    return status;
}

/* Whether an open's objects, made in *seen_epoch, still exist. Gate held. */
static bool context_state_current(struct accel__context_state *state,
                                  const uint32_t *seen_epoch)
{
    bool current;

    if (seen_epoch == NULL)
        return true;
    pthread_mutex_lock(&state->lock);
    current = state->epoch == *seen_epoch;
    pthread_mutex_unlock(&state->lock);
    return current;
}

accel_status accel__context_state_enter(struct accel__context_state *state,
                                        const uint32_t *seen_epoch,
                                        const struct accel_host_services *services,
                                        const char *device_name)
{
    pthread_rwlock_rdlock(&state->gate);
    if (context_state_current(state, seen_epoch))
        return ACCEL_OK;
    pthread_rwlock_unlock(&state->gate);
    return services->set_error(
        ACCEL_ERR_DEVICE_LOST,
        "%s is lost: another open of the device reset its context, "
        "freeing this open's objects; a reset takes the new context",
        device_name);
}

bool accel__context_state_enter_to_release(
    struct accel__context_state *state, const uint32_t *seen_epoch,
    const struct accel_host_services *services, const char *device_name)
{
    pthread_rwlock_rdlock(&state->gate);
    if (context_state_current(state, seen_epoch))
        return true;
    pthread_rwlock_unlock(&state->gate);
    services->log(ACCEL_LOG_DEBUG,
                  "%s: an object made before another open's reset is not "
                  "handed back",
                  device_name);
    return false;
}

void accel__context_state_leave(struct accel__context_state *state)
{
    pthread_rwlock_unlock(&state->gate);
}

accel_status
accel__context_state_refuse(struct accel__context_state *state,
                            const struct accel_host_services *services,
                            const char *device_name, const char *format, ...)
{
    int used = snprintf(state->refusal, sizeof(state->refusal),
                        "%s cannot recover: ", device_name);
    va_list args;

    va_start(args, format);
    if (used > 0 && (size_t)used < sizeof(state->refusal))
        vsnprintf(state->refusal + used, sizeof(state->refusal) - (size_t)used,
                  format, args);
    va_end(args);
    state->unrecoverable = true;
    return services->set_error(ACCEL_ERR_UNRECOVERABLE, "%s", state->refusal);
}

accel_status accel__context_state_reset(struct accel__context_state *state,
                                        uint32_t *seen_epoch,
                                        accel__context_rebuild_fn rebuild,
                                        void *user,
                                        const struct accel_host_services *services)
{
    accel_status status;
    bool fresh;

    /* No entry of any open is in the driver with this device's objects meanwhile. */
    pthread_rwlock_wrlock(&state->gate);
    pthread_mutex_lock(&state->lock);
    fresh = !state->lost && state->epoch != *seen_epoch;
    if (state->unrecoverable)
        status = services->set_error(ACCEL_ERR_UNRECOVERABLE, "%s",
                                     state->refusal);
    else
        status = rebuild(user, fresh);
    if (status == ACCEL_OK) {
        if (!fresh) {
            state->epoch++;
            state->lost = false;
            state->reason[0] = '\0';
        }
        *seen_epoch = state->epoch;
    }
    pthread_mutex_unlock(&state->lock);
    pthread_rwlock_unlock(&state->gate);
    return status;
}
