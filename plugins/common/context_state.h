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
    pthread_mutex_t lock; /* guards everything below */
    uint32_t epoch;       /* bumped by every reset */
    uint32_t opens;       /* opens that hold the context now */
    bool lost;            /* a sticky error was seen since the last reset */
    char reason[192];     /* the first sticky error: the call and the code */
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
void accel__context_state_open(struct accel__context_state *state, uint32_t *out_epoch);
/* An open lets go of the context. */
void accel__context_state_close(struct accel__context_state *state);

/* Mark the context poisoned by `call` failing with `native_name`. The first reason stays. */
void accel__context_state_mark_lost(struct accel__context_state *state, const char *call,
                                    const char *native_name);

/*
 * ACCEL_OK while the context is live and still in `seen_epoch`; else
 * ACCEL_ERR_DEVICE_LOST with the reason recorded through services->set_error
 * (`device_name` says which device, e.g. "cuda:0").
 */
accel_status accel__context_state_check(struct accel__context_state *state,
                                        uint32_t seen_epoch,
                                        const struct accel_host_services *services,
                                        const char *device_name);

/*
 * Whether an open's objects, made in `seen_epoch`, still exist in the
 * driver: false once a reset through any open has started a new epoch
 * (the driver destroyed them then), whether or not the context is lost.
 * Records nothing: for destroy paths, which must not hand the driver
 * handles it has already destroyed.
 */
bool accel__context_state_current(struct accel__context_state *state, uint32_t seen_epoch);

/*
 * For an entry that hands an object back (a free, a destroy): as
 * accel__context_state_current, and when the object is already gone, says
 * so in a debug log naming `device_name` (e.g. "cuda:0"). The driver
 * destroyed it at the other open's reset and must not be given its handle
 * again: with a new context its address or handle may name another open's
 * new object.
 */
bool accel__context_state_releasable(struct accel__context_state *state, uint32_t seen_epoch,
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
                                               accel__context_rebuild_fn rebuild, void *user,
                                               uint32_t *out_epoch);

/*
 * Reset the context for the open whose epoch is *seen_epoch: call `rebuild`
 * and, when it succeeds, start a new epoch (unless the context was already
 * fresh), clear the lost state, and move *seen_epoch to the current one.
 * Returns what `rebuild` returned.
 */
accel_status accel__context_state_reset(struct accel__context_state *state,
                                        uint32_t *seen_epoch,
                                        accel__context_rebuild_fn rebuild, void *user);

#endif /* ACCEL_PLUGIN_COMMON_CONTEXT_STATE_H */
