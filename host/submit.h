/*
 * The submit step (submit.c): what every command on a stream does before
 * and after it calls the plugin.
 */
#ifndef ACCEL_HOST_SUBMIT_H
#define ACCEL_HOST_SUBMIT_H

#include "accel/accel.h"
#include "status.h"

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
 * predictable branch per call. ACCEL_TRACE does not use it: a command's
 * trace record needs its stream and shape (bytes, kernel, geometry) and an
 * event recorded after it, so accel__trace_copy and accel__trace_launch sit
 * beside the ACCEL__DRV_CALL of each command instead (trace.h).
 */
typedef void (*accel__submit_hook_fn)(const char *site, const char *entry,
                                      accel_status status);
extern accel__submit_hook_fn accel__submit_hook;

/*
 * A failed plugin call, named by its site and entry: the plugin's own
 * detail kept, or a plain one recorded (accel__plugin_failed).
 */
accel_status accel__submit_failed(accel_status status, const char *site,
                                  const char *entry);

/* What every plugin call ends with: the hook, then the status taken in. */
static inline accel_status accel__submit_done(accel_status status,
                                              const char *site, const char *entry)
{
    if (__builtin_expect(accel__submit_hook != NULL, 0))
        accel__submit_hook(site, entry, status);
    if (__builtin_expect(status == ACCEL_OK, 1))
        return ACCEL_OK;
    return accel__submit_failed(status, site, entry);
}

/*
 * Call entry `entry` of `device`'s plugin with the device's plugin object
 * and the arguments after it, and take its status in: the error names the
 * calling function and the entry without either being typed at the call.
 */
#define ACCEL__DRV_CALL(device, entry, ...)                                     \
    accel__submit_done((device)->drv->entry((device)->drv_device, __VA_ARGS__), \
                       __func__, #entry)
/* The same for an entry that takes the device's plugin object alone. */
#define ACCEL__DRV_CALL0(device, entry)                                        \
    accel__submit_done((device)->drv->entry((device)->drv_device), __func__,   \
                       #entry)

#endif /* ACCEL_HOST_SUBMIT_H */
