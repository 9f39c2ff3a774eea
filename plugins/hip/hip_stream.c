/*
 * Streams, events and host functions: each entry is one runtime call with
 * the device current.
 *
 * Streams are hipStreamNonBlocking, so that they never wait for the null
 * stream that other code in the process may use. The events event_create
 * makes keep timestamps, for event_elapsed (hipEventElapsedTime) and the
 * host's trace; the one stream_sync makes for itself is made with
 * hipEventDisableTiming, cheaper to record and to wait for. All are
 * hipEventBlockingSync: event_sync is the host's blocking wait, which
 * accel.h promises uses no core, and without the flag hipEventSynchronize
 * polls actively; the flag changes nothing for hipEventQuery, which spin
 * and yield waits poll. For the same reason stream_sync records such an
 * event and waits for it rather than call hipStreamSynchronize. hipStreamWaitEvent waits for
 * the event as last recorded when it is called, as the ABI asks. What HIP
 * versions have answered differently over time, for an event never
 * recorded, the plugin answers itself: such an event is complete, and a
 * wait for it is no wait. Host functions go through hipLaunchHostFunc,
 * or, in a runtime that lacks it (ROCm 5.2 declares it but does not
 * export it), through hipStreamAddCallback.
 */
#include <stdlib.h>

#include "hip_plugin.h"

/* ---- streams ---- */

accel_status accel__hip_stream_create(accel_drv_device *device,
                                      accel_drv_stream **out_stream)
{
    ahip_hipStream_t stream = NULL;
    struct hip_scope scope;
    accel_status status;

    *out_stream = NULL;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipStreamCreateWithFlags,
                      (&stream, AHIP_hipStreamNonBlocking));
    accel__hip_leave(device, &scope);
    if (status == ACCEL_OK)
        *out_stream = (accel_drv_stream *)(void *)stream;
    return status;
}

void accel__hip_stream_destroy(accel_drv_device *device, accel_drv_stream *stream)
{
    struct hip_scope scope;

    if (stream == NULL || !accel__hip_enter_to_release(device, &scope))
        return;
    accel__hip_ignore(
        device,
        hip_symbols_of(device)->hipStreamDestroy(hip_stream_handle(stream)),
        "hipStreamDestroy");
    accel__hip_leave(device, &scope);
}

/* The flags of the events: see the top of the file. */
#define HIP_EVENT_FLAGS AHIP_hipEventBlockingSync
#define HIP_SYNC_EVENT_FLAGS                                                   \
    (AHIP_hipEventDisableTiming | AHIP_hipEventBlockingSync)

/* Wait without a core for everything enqueued on `stream`; the device is current. */
static accel_status hip_stream_sync_blocking(accel_drv_device *device,
                                             ahip_hipStream_t stream)
{
    ahip_hipEvent_t event = NULL;
    accel_status status;

    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventCreateWithFlags,
                      (&event, HIP_SYNC_EVENT_FLAGS));
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventRecord, (event, stream));
    if (status == ACCEL_OK)
        status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventSynchronize, (event));
    accel__hip_ignore(device, hip_symbols_of(device)->hipEventDestroy(event),
                      "hipEventDestroy");
    return status;
}

accel_status accel__hip_stream_sync(accel_drv_device *device,
                                    accel_drv_stream *stream)
{
    struct hip_scope scope;
    accel_status status = accel__hip_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = hip_stream_sync_blocking(device, hip_stream_handle(stream));
    accel__hip_leave(device, &scope);
    return status;
}

/* ---- events ---- */

accel_status accel__hip_event_create(accel_drv_device *device,
                                     accel_drv_event **out_event)
{
    accel_drv_event *event;
    struct hip_scope scope;
    accel_status status;

    *out_event = NULL;
    event = calloc(1, sizeof(*event));
    if (event == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "calloc of a HIP event failed");
    atomic_init(&event->recorded, false);
    status = accel__hip_enter(device, &scope);
    if (status == ACCEL_OK) {
        status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventCreateWithFlags,
                          (&event->handle, HIP_EVENT_FLAGS));
        accel__hip_leave(device, &scope);
    }
    if (status != ACCEL_OK) {
        free(event);
        return status;
    }
    *out_event = event;
    return ACCEL_OK;
}

/* Destroyed even by a stale open, as a module is unloaded: hipDeviceReset leaves events alone. */
void accel__hip_event_destroy(accel_drv_device *device, accel_drv_event *event)
{
    struct hip_scope scope;

    if (event == NULL)
        return;
    if (accel__hip_enter_any_epoch(device, &scope) == ACCEL_OK) {
        accel__hip_ignore(device,
                          hip_symbols_of(device)->hipEventDestroy(event->handle),
                          "hipEventDestroy");
        accel__hip_leave(device, &scope);
    }
    free(event);
}

accel_status accel__hip_event_record(accel_drv_device *device,
                                     accel_drv_event *event,
                                     accel_drv_stream *stream)
{
    struct hip_scope scope;
    accel_status status = accel__hip_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventRecord,
                      (event->handle, hip_stream_handle(stream)));
    accel__hip_leave(device, &scope);
    if (status == ACCEL_OK)
        atomic_store_explicit(&event->recorded, true, memory_order_release);
    return status;
}

static bool hip_event_recorded(accel_drv_event *event)
{
    return atomic_load_explicit(&event->recorded, memory_order_acquire);
}

accel_status accel__hip_event_query(accel_drv_device *device,
                                    accel_drv_event *event)
{
    struct hip_scope scope;
    ahip_hipError_t result;
    accel_status status;

    if (!hip_event_recorded(event))
        return ACCEL_OK;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    result = hip_symbols_of(device)->hipEventQuery(event->handle);
    accel__hip_leave(device, &scope);
    /* Not ready is an answer, not an error: no detail to record. */
    if (result == AHIP_hipErrorNotReady)
        return ACCEL_NOT_READY;
    return accel__hip_result(device, result, "hipEventQuery", ACCEL_ERR_DRIVER);
}

accel_status accel__hip_event_sync(accel_drv_device *device,
                                   accel_drv_event *event)
{
    struct hip_scope scope;
    accel_status status;

    if (!hip_event_recorded(event))
        return ACCEL_OK;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipEventSynchronize,
                      (event->handle));
    accel__hip_leave(device, &scope);
    return status;
}

/* hipEventElapsedTime's milliseconds as nanoseconds. */
accel_status accel__hip_event_elapsed(accel_drv_device *device,
                                      accel_drv_event *start,
                                      accel_drv_event *end, int64_t *out_ns)
{
    struct hip_scope scope;
    ahip_hipError_t result;
    accel_status status;
    float ms = 0.0f;

    *out_ns = 0;
    if (hip_symbols_of(device)->hipEventElapsedTime == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "event_elapsed: the runtime has no hipEventElapsedTime");
    if (!hip_event_recorded(start) || !hip_event_recorded(end))
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "event_elapsed: an event was never recorded");
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    result = hip_symbols_of(device)->hipEventElapsedTime(&ms, start->handle,
                                                         end->handle);
    accel__hip_leave(device, &scope);
    if (result == AHIP_hipErrorNotReady)
        return ACCEL_NOT_READY;
    status = accel__hip_result(device, result, "hipEventElapsedTime",
                               ACCEL_ERR_DRIVER);
    if (status == ACCEL_OK)
        *out_ns = (int64_t)((double)ms * 1e6);
    return status;
}

accel_status accel__hip_stream_wait_event(accel_drv_device *device,
                                          accel_drv_stream *stream,
                                          accel_drv_event *event)
{
    struct hip_scope scope;
    accel_status status;

    if (!hip_event_recorded(event))
        return ACCEL_OK;
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipStreamWaitEvent,
                      (hip_stream_handle(stream), event->handle, 0));
    accel__hip_leave(device, &scope);
    return status;
}

/* ---- host functions ---- */

/* A host function on its way through hipStreamAddCallback. */
struct hip_host_call {
    void (*fn)(void *user);
    void *user;
};

/*
 * hipStreamAddCallback runs a callback exactly once, after the work before
 * it, with the stream's status, and after a fault it still runs, with the
 * error, possibly late. The host function must not then run: the work
 * before it did not complete, so it would report success for failed work,
 * and the host may already have abandoned and freed what `user` points to
 * (a reset or a close delivers every pending callback as lost itself,
 * driver.h's host_func). As through hipLaunchHostFunc, which runs nothing
 * after a fault, only the plugin's own record is freed.
 */
static void hip_host_call_run(ahip_hipStream_t stream, ahip_hipError_t status,
                              void *user)
{
    struct hip_host_call call = *(struct hip_host_call *)user;

    (void)stream;
    free(user);
    if (status == AHIP_hipSuccess)
        call.fn(call.user);
}

static accel_status hip_add_callback(accel_drv_device *device,
                                     accel_drv_stream *stream,
                                     void (*fn)(void *user), void *user)
{
    struct hip_host_call *call = malloc(sizeof(*call));
    accel_status status;

    if (call == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY, "host_func: malloc failed");
    *call = (struct hip_host_call){fn, user};
    status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipStreamAddCallback,
                      (hip_stream_handle(stream), hip_host_call_run, call, 0));
    if (status != ACCEL_OK)
        free(call);
    return status;
}

accel_status accel__hip_host_func(accel_drv_device *device,
                                  accel_drv_stream *stream,
                                  void (*fn)(void *user), void *user)
{
    struct hip_scope scope;
    accel_status status;

    /* Caught here: on the runtime's thread, a NULL call would crash far from its cause. */
    if (fn == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "host_func: the function is NULL");
    status = accel__hip_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    if (hip_symbols_of(device)->hipLaunchHostFunc != NULL)
        status = HIP_CALL(device, ACCEL_ERR_DRIVER, hipLaunchHostFunc,
                          (hip_stream_handle(stream), fn, user));
    else
        status = hip_add_callback(device, stream, fn, user);
    accel__hip_leave(device, &scope);
    return status;
}
