/*
 * accel_event_elapsed: the time between two completed events, from the
 * plugin's optional event_elapsed entry (the device's own timestamps).
 */
#include "device.h"
#include "host.h"
#include "loader.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/*
 * ACCEL_OK once the event has completed as accel_event_query says it: its
 * device work, and the callbacks enqueued before its record. Lock held.
 */
static accel_status event_completed(accel_device *device, accel_event *event)
{
    accel_status status = ACCEL__DRV_CALL(device, event_query, event->drv);
    if (status == ACCEL_NOT_READY)
        return status;
    if (status == ACCEL_OK && atomic_load(&event->callbacks_pending) &&
        !accel__cb_point_reached(&device->completion, &event->callbacks))
        status = ACCEL_NOT_READY;
    return status;
}

/* Both events usable for timing; lock held. */
static accel_status events_timable(accel_device *device, accel_event *start,
                                   accel_event *end)
{
    const char *what = "accel_event_elapsed";
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK && (start->drv == NULL || end->drv == NULL))
        status = accel__device_gone(device, what);
    if (status == ACCEL_OK && (!start->recorded || !end->recorded))
        status = accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "%s: the %s event was never recorded (since it was "
            "made or its device reset)",
            what, start->recorded ? "end" : "start");
    if (status == ACCEL_OK && !ACCEL__DRV_HAS(device, event_elapsed))
        status = accel__error(ACCEL_ERR_NOT_SUPPORTED,
                              "%s: the %s plugin cannot time events (no "
                              "event_elapsed entry)",
                              what, device->plugin->name);
    return status;
}

static accel_status event_elapsed_untraced(accel_event *start, accel_event *end,
                                           int64_t *out_ns)
{
    const char *what = "accel_event_elapsed";
    if (out_ns != NULL)
        *out_ns = 0;
    if (start == NULL || end == NULL || out_ns == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL argument",
                            what);
    if (start->device != end->device)
        return accel__error(ACCEL_ERR_DEVICE_MISMATCH,
                            "%s: the two events belong to different devices",
                            what);
    accel_device *device = start->device;
    if (accel__process_check(device->pid, what) != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&device->lock);
    accel_status status = events_timable(device, start, end);
    if (status == ACCEL_OK)
        status = event_completed(device, start);
    if (status == ACCEL_OK)
        status = event_completed(device, end);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_CALL(device, event_elapsed, start->drv, end->drv,
                                 out_ns);
    if (status != ACCEL_OK && status != ACCEL_NOT_READY) {
        *out_ns = 0;
        status = accel__device_check_loss(device, status);
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_event_elapsed(accel_event *start, accel_event *end,
                                 int64_t *out_ns)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = event_elapsed_untraced(start, end, out_ns);
    return accel__trace_end(traced, status, 0);
}
