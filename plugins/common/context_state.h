/*
 * What a device's context has been through: live, lost, reset.
 *
 * A GPU driver's context is poisoned by a sticky error (an illegal address,
 * a failed launch, an uncorrectable ECC error): every later call fails
 * until the context is reset. One context serves every open of a physical
 * device, so its state is kept once per physical device, and each open
 * remembers the epoch (how many resets) its objects were made in. An open
 * is lost when the context is poisoned, or when another open has reset it
 * since: that reset freed this open's objects too.
 *
 * Vendor-neutral: the plugin supplies the reset itself as a function.
 */
#ifndef ACCEL_PLUGIN_COMMON_CONTEXT_STATE_H
#define ACCEL_PLUGIN_COMMON_CONTEXT_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

#include "pinned_host.h"

struct accel__context_state {
    /*
     * Read-held by an entry while it hands the driver this device's objects
     * (accel__context_state_enter), write-held by a reset: so that no stale
     * handle reaches the driver while a reset through another open makes
     * its values name the new context's objects. Taken before `lock`.
     */
    pthread_rwlock_t gate;
    pthread_mutex_t lock; /* guards everything below */
    uint32_t epoch; /* bumped by every reset; written with the gate write-held too */
    uint32_t opens;   /* opens that hold the context now */
    bool lost;        /* a sticky error was seen since the last reset */
    char reason[192]; /* the first sticky error: the call and the code */
    /* The driver refused a reset: no open resets it again until every open has let go. */
    bool unrecoverable;
    char refusal[384]; /* the driver's reason, as accel__context_state_refuse recorded it */
    /*
     * The pinned host memory registered in the context, which a reset must
     * register again (pinned_host.h). Its own lock, taken inside this one.
     */
    struct accel__pinned_blocks pinned;
};

/* The most devices a GPU plugin serves; a library's devices past it are not offered. */
#define ACCEL__NATIVE_DEVICES_MAX 64u

/*
 * The state of device `ordinal`'s context (`ordinal` < ACCEL__NATIVE_DEVICES_MAX),
 * made at first use; NULL when the states cannot be made. It is the
 * process's, not a plugin instance's: two hosts in one process reach the
 * same driver context (CUDA's primary context, HIP's device context), and a
 * reset through one must make the other's objects lost too. Each plugin
 * links its own copy of this library, so each has its own states.
 */
struct accel__context_state *accel__context_state_of_device(uint32_t ordinal);

/*
 * An open takes the context: its epoch in *out_epoch. The first open after
 * every open has let go starts clean, since the driver destroys a context
 * nobody holds: one still poisoned (held by other code in the process)
 * shows its sticky error again at its first call.
 */
void accel__context_state_open(struct accel__context_state *state,
                               uint32_t *out_epoch);
/* An open lets go of the context. */
void accel__context_state_close(struct accel__context_state *state);

/* Mark the context poisoned by `call` failing with `native_name`. The first reason stays. */
void accel__context_state_mark_lost(struct accel__context_state *state,
                                    const char *call, const char *native_name);

/*
 * As accel__context_state_mark_lost, for a call made by an open whose
 * objects are from `seen_epoch`: ignored when a reset has started a newer
 * epoch since, so that a stale open's failure (its old objects, its
 * release) never poisons the context another open has just rebuilt.
 */
void accel__context_state_mark_lost_in(struct accel__context_state *state,
                                       uint32_t seen_epoch, const char *call,
                                       const char *native_name);

/*
 * Start an entry that hands the driver objects of the open whose epoch is
 * *seen_epoch (read once the gate is held): ACCEL_OK with the gate
 * read-held, to be let go with accel__context_state_leave; or, when a
 * reset through another open has started a newer epoch (the driver
 * destroyed this open's objects, and their handles and addresses may now
 * name another open's), ACCEL_ERR_DEVICE_LOST with the reason recorded
 * through services->set_error, and nothing held. `seen_epoch` NULL checks
 * nothing (for objects that outlive a reset, such as pinned blocks).
 * `device_name` says which device, e.g. "cuda:0".
 */
accel_status accel__context_state_enter(struct accel__context_state *state,
                                        const uint32_t *seen_epoch,
                                        const struct accel_host_services *services,
                                        const char *device_name);

/*
 * As accel__context_state_enter, for an entry that hands an object back
 * (a free, a destroy): true with the gate read-held, or false, holding
 * nothing and recording nothing (a debug log says so), when the object is
 * already gone with its epoch.
 */
bool accel__context_state_enter_to_release(
    struct accel__context_state *state, const uint32_t *seen_epoch,
    const struct accel_host_services *services, const char *device_name);

/* End what accel__context_state_enter or _enter_to_release started. */
void accel__context_state_leave(struct accel__context_state *state);

/*
 * ACCEL_OK while the context is live and still in `seen_epoch`; else
 * ACCEL_ERR_DEVICE_LOST with the reason recorded through services->set_error
 * (`device_name` says which device, e.g. "cuda:0"), or
 * ACCEL_ERR_UNRECOVERABLE with the driver's refusal once a reset failed.
 */
accel_status accel__context_state_check(struct accel__context_state *state,
                                        uint32_t seen_epoch,
                                        const struct accel_host_services *services,
                                        const char *device_name);

/*
 * How a plugin rebuilds one open's context. `fresh` is true when another
 * open has reset the context since this one's epoch and it is live: the
 * open need only take the new context, not reset it again (which would
 * throw away the other open's new objects). Runs under the state's lock,
 * so it must not mark the state itself: errors are recorded without it.
 */
typedef accel_status (*accel__context_rebuild_fn)(void *user, bool fresh);

/*
 * For a driver whose context outlives its opens (HIP's device context lives
 * until hipDeviceReset, whoever holds it): as accel__context_state_open,
 * except that the first open after every open has let go of a context
 * still marked lost first has it rebuilt, with `rebuild(user, false)`
 * under the lock, and starts a new epoch; without that, the poisoned
 * context would fail its first call again. Returns what `rebuild` returned;
 * on failure no open is taken and *out_epoch is not set.
 */
accel_status accel__context_state_open_rebuilt(struct accel__context_state *state,
                                               accel__context_rebuild_fn rebuild,
                                               void *user, uint32_t *out_epoch);

/*
 * Reset the context for the open whose epoch is *seen_epoch: call `rebuild`
 * and, when it succeeds, start a new epoch (unless the context was already
 * fresh), clear the lost state, and move *seen_epoch to the current one.
 * Returns what `rebuild` returned. Once a rebuild has refused
 * (accel__context_state_refuse), ACCEL_ERR_UNRECOVERABLE with the same
 * reason, recorded through `services`, and the driver is not asked again:
 * two opens never reset each other in a loop.
 */
accel_status
accel__context_state_reset(struct accel__context_state *state,
                           uint32_t *seen_epoch,
                           accel__context_rebuild_fn rebuild, void *user,
                           const struct accel_host_services *services);

/*
 * For a rebuild (the state's lock held): the driver refuses to recover.
 * Keeps "DEVICE cannot recover: " and the formatted reason in the state,
 * records it through services->set_error, and returns
 * ACCEL_ERR_UNRECOVERABLE. The first open after every open has let go
 * starts clean again.
 */
accel_status
accel__context_state_refuse(struct accel__context_state *state,
                            const struct accel_host_services *services,
                            const char *device_name, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* ACCEL_PLUGIN_COMMON_CONTEXT_STATE_H */
