/*
 * The submit step (submit.c): every call into a plugin's table, and what
 * every command on a stream does before and after it.
 *
 * No other file calls a table entry: each goes through one of the macros
 * below (tests/submit-check.sh fails the build's tests otherwise), so that
 * status mapping, error-site naming and the hooks are the same for all.
 * Which macro says how the call is made:
 *
 *  ACCEL__DRV_CALL     a fallible entry, the device lock held by the caller
 *                      (or the device not yet, or no longer, shared: open,
 *                      close, reset). The loss check is the caller's, made
 *                      under that lock: accel__submit_end for a command.
 *  ACCEL__DRV_WAIT     a wait made without the device lock, the device
 *                      borrowed (README "Threads"): the same mapping; the
 *                      caller checks for a loss once it holds the lock again.
 *  ACCEL__DRV_COMMAND  a command on a stream (copy, fill, launch), lock
 *                      held: as ACCEL__DRV_CALL, then the trace hook.
 *  ACCEL__DRV_VOID     an entry that returns nothing (frees, destroys).
 *  ACCEL__DRV_TRY      the hook only: the status comes back as the plugin
 *                      gave it and no detail is recorded, for a caller that
 *                      maps it itself (the loader's start, a fill the plugin
 *                      may decline) or whose failure is the host's own
 *                      business (cleanup, the trace's own events), so that
 *                      the thread's last error is left alone.
 *  ACCEL__TABLE_CALL   (and _TRY, _VOID) the same for a call whose first
 *                      argument is not a device's plugin object: the
 *                      loader's plugin_open, device_count and plugin_close,
 *                      device_info and device_open, the pool's pages.
 *  ACCEL__DRV_HAS      whether an optional entry is there.
 *
 * An error is named by the public call the thread is in (set by its traced
 * wrapper, trace.h) and the entry: "accel_copy_to_device: copy_to_device:
 * ...", or by the calling function where no public call is under way.
 */
#ifndef ACCEL_HOST_SUBMIT_H
#define ACCEL_HOST_SUBMIT_H

#include "accel/accel.h"
#include "accel/driver.h"
#include "status.h"
#include "trace.h"

/*
 * Begin a submission on a stream: take the device lock and check that the
 * device and stream can take work. On failure the lock is not held.
 */
accel_status accel__submit_begin(accel_stream *stream, const char *what);
/* End it: check a failure for device loss, release the lock. */
accel_status accel__submit_end(accel_stream *stream, accel_status status);

/*
 * A hook on every call into a plugin's table: called with the calling
 * function, the entry and its status when set. NULL (off) costs one
 * predictable branch per call.
 */
typedef void (*accel__submit_hook_fn)(const char *site, const char *entry,
                                      accel_status status);
extern accel__submit_hook_fn accel__submit_hook;

/*
 * A failed plugin call, named by the public call under way (else `site`)
 * and the entry: the plugin's own detail kept after that name, or a plain
 * one recorded (accel__plugin_failed).
 */
accel_status accel__submit_failed(accel_status status, const char *site,
                                  const char *entry);

/* What every fallible plugin call ends with: the hook, then the status. */
static inline accel_status accel__submit_done(accel_status status,
                                              const char *site, const char *entry)
{
    if (__builtin_expect(accel__submit_hook != NULL, 0))
        accel__submit_hook(site, entry, status);
    /* A polling loop's NOT_READY is no failure: no detail is recorded. */
    if (__builtin_expect(status == ACCEL_OK || status == ACCEL_NOT_READY, 1))
        return status;
    return accel__submit_failed(status, site, entry);
}

static inline accel_status
accel__submit_quiet(accel_status status, const char *site, const char *entry)
{
    if (__builtin_expect(accel__submit_hook != NULL, 0))
        accel__submit_hook(site, entry, status);
    return status;
}

static inline void accel__submit_void(const char *site, const char *entry)
{
    if (__builtin_expect(accel__submit_hook != NULL, 0))
        accel__submit_hook(site, entry, ACCEL_OK);
}

/*
 * A command the plugin took on `stream`: its trace record, the one place
 * ACCEL_TRACE sees commands. `command` is built only when tracing.
 */
static inline accel_status
accel__submit_command(accel_stream *stream,
                      const struct accel__trace_command *command,
                      accel_status status)
{
    if (accel__tracing() && status == ACCEL_OK)
        accel__trace_command(stream, command);
    return status;
}

/* Call `entry` of table `drv` with first argument `object`. */
#define ACCEL__TABLE_CALL(drv, object, entry, ...)                             \
    accel__submit_done((drv)->entry((object), __VA_ARGS__), __func__, #entry)
#define ACCEL__TABLE_TRY(drv, object, entry, ...)                              \
    accel__submit_quiet((drv)->entry((object), __VA_ARGS__), __func__, #entry)
#define ACCEL__TABLE_VOID(drv, object, entry, ...)                             \
    ((drv)->entry((object), __VA_ARGS__), accel__submit_void(__func__, #entry))
#define ACCEL__TABLE_VOID0(drv, object, entry)                                 \
    ((drv)->entry((object)), accel__submit_void(__func__, #entry))

/* Call `entry` of `device`'s plugin with the device's plugin object and
 * the arguments after it. */
#define ACCEL__DRV_CALL(device, entry, ...)                                    \
    ACCEL__TABLE_CALL((device)->drv, (device)->drv_device, entry, __VA_ARGS__)
/* The same for an entry that takes the device's plugin object alone. */
#define ACCEL__DRV_CALL0(device, entry)                                        \
    accel__submit_done((device)->drv->entry((device)->drv_device), __func__,   \
                       #entry)
#define ACCEL__DRV_WAIT(device, entry, ...)                                    \
    ACCEL__DRV_CALL(device, entry, __VA_ARGS__)
#define ACCEL__DRV_TRY(device, entry, ...)                                     \
    ACCEL__TABLE_TRY((device)->drv, (device)->drv_device, entry, __VA_ARGS__)
#define ACCEL__DRV_TRY0(device, entry)                                         \
    accel__submit_quiet((device)->drv->entry((device)->drv_device), __func__,  \
                        #entry)
#define ACCEL__DRV_VOID(device, entry, ...)                                    \
    ACCEL__TABLE_VOID((device)->drv, (device)->drv_device, entry, __VA_ARGS__)
#define ACCEL__DRV_VOID0(device, entry)                                        \
    ACCEL__TABLE_VOID0((device)->drv, (device)->drv_device, entry)
/* A command on `stream` (its device's lock held); `command` is a pointer
 * to its trace description, e.g. a compound literal. */
#define ACCEL__DRV_COMMAND(stream, command, entry, ...)                        \
    accel__submit_command(                                                     \
        (stream), (command),                                                   \
        ACCEL__DRV_CALL((stream)->device, entry, (stream)->drv, __VA_ARGS__))

/* Whether `device`'s plugin has the optional entry `entry`. */
#define ACCEL__DRV_HAS(device, entry) ((device)->drv->entry != NULL)

#endif /* ACCEL_HOST_SUBMIT_H */
