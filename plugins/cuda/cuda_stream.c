/*
 * Streams, events and host functions: each entry is one driver call in
 * the device's context.
 *
 * Streams are CU_STREAM_NON_BLOCKING, so that they never wait for the
 * legacy default stream that other code in the process may use. The
 * events event_create makes keep timestamps, for event_elapsed
 * (cuEventElapsedTime) and the host's trace; the one stream_sync makes for
 * itself is made with CU_EVENT_DISABLE_TIMING, which is cheaper to record
 * and to wait for. All are CU_EVENT_BLOCKING_SYNC: event_sync is the host's blocking wait, which
 * accel.h promises uses no core, and without the flag cuEventSynchronize
 * spins (or yields) under the primary context's default scheduling; the
 * flag changes nothing for cuEventQuery, which spin and yield waits poll.
 * For the same reason stream_sync does not call cuStreamSynchronize (it
 * spins too): it records a blocking event and waits for that. The driver's
 * semantics are the ABI's: cuStreamWaitEvent waits for the event as last
 * recorded when it is called, and a never-recorded event is complete.
 */
#include "cuda_plugin.h"

/* ---- streams ---- */

accel_status accel__cuda_stream_create(accel_drv_device *device,
                                       accel_drv_stream **out_stream)
{
    acu_CUstream stream = NULL;
    struct cuda_scope scope;
    accel_status status;

    *out_stream = NULL;
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuStreamCreate,
                       (&stream, ACU_CU_STREAM_NON_BLOCKING));
    accel__cuda_leave(device, &scope);
    if (status == ACCEL_OK)
        *out_stream = (accel_drv_stream *)(void *)stream;
    return status;
}

void accel__cuda_stream_destroy(accel_drv_device *device, accel_drv_stream *stream)
{
    struct cuda_scope scope;

    if (stream == NULL || !accel__cuda_enter_to_release(device, &scope))
        return;
    accel__cuda_ignore(
        device,
        cuda_symbols_of(device)->cuStreamDestroy_v2(cuda_stream_handle(stream)),
        "cuStreamDestroy_v2");
    accel__cuda_leave(device, &scope);
}

/* The flags of the events: see the top of the file. */
#define CUDA_EVENT_FLAGS ACU_CU_EVENT_BLOCKING_SYNC
#define CUDA_SYNC_EVENT_FLAGS                                                  \
    (ACU_CU_EVENT_DISABLE_TIMING | ACU_CU_EVENT_BLOCKING_SYNC)

/* Wait without a core for everything enqueued on `stream`; the context is current. */
static accel_status cuda_stream_sync_blocking(accel_drv_device *device,
                                              acu_CUstream stream)
{
    acu_CUevent event = NULL;
    accel_status status;

    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventCreate,
                       (&event, CUDA_SYNC_EVENT_FLAGS));
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventRecord, (event, stream));
    if (status == ACCEL_OK)
        status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventSynchronize, (event));
    accel__cuda_ignore(device, cuda_symbols_of(device)->cuEventDestroy_v2(event),
                       "cuEventDestroy_v2");
    return status;
}

accel_status accel__cuda_stream_sync(accel_drv_device *device,
                                     accel_drv_stream *stream)
{
    struct cuda_scope scope;
    accel_status status = accel__cuda_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = cuda_stream_sync_blocking(device, cuda_stream_handle(stream));
    accel__cuda_leave(device, &scope);
    return status;
}

/* ---- events ---- */

accel_status accel__cuda_event_create(accel_drv_device *device,
                                      accel_drv_event **out_event)
{
    acu_CUevent event = NULL;
    struct cuda_scope scope;
    accel_status status;

    *out_event = NULL;
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventCreate,
                       (&event, CUDA_EVENT_FLAGS));
    accel__cuda_leave(device, &scope);
    if (status == ACCEL_OK)
        *out_event = (accel_drv_event *)(void *)event;
    return status;
}

void accel__cuda_event_destroy(accel_drv_device *device, accel_drv_event *event)
{
    struct cuda_scope scope;

    if (event == NULL || !accel__cuda_enter_to_release(device, &scope))
        return;
    accel__cuda_ignore(
        device,
        cuda_symbols_of(device)->cuEventDestroy_v2(cuda_event_handle(event)),
        "cuEventDestroy_v2");
    accel__cuda_leave(device, &scope);
}

accel_status accel__cuda_event_record(accel_drv_device *device,
                                      accel_drv_event *event,
                                      accel_drv_stream *stream)
{
    struct cuda_scope scope;
    accel_status status = accel__cuda_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventRecord,
                       (cuda_event_handle(event), cuda_stream_handle(stream)));
    accel__cuda_leave(device, &scope);
    return status;
}

accel_status accel__cuda_event_query(accel_drv_device *device,
                                     accel_drv_event *event)
{
    struct cuda_scope scope;
    accel_status status = accel__cuda_enter(device, &scope);
    acu_CUresult result;

    if (status != ACCEL_OK)
        return status;
    result = cuda_symbols_of(device)->cuEventQuery(cuda_event_handle(event));
    accel__cuda_leave(device, &scope);
    /* Not ready is an answer, not an error: no detail to record. */
    if (result == ACU_CUDA_ERROR_NOT_READY)
        return ACCEL_NOT_READY;
    return accel__cuda_result(device, result, "cuEventQuery", ACCEL_ERR_DRIVER);
}

accel_status accel__cuda_event_sync(accel_drv_device *device,
                                    accel_drv_event *event)
{
    struct cuda_scope scope;
    accel_status status = accel__cuda_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuEventSynchronize,
                       (cuda_event_handle(event)));
    accel__cuda_leave(device, &scope);
    return status;
}

/* cuEventElapsedTime's milliseconds (resolution about 0.5 us) as nanoseconds. */
accel_status accel__cuda_event_elapsed(accel_drv_device *device,
                                       accel_drv_event *start,
                                       accel_drv_event *end, int64_t *out_ns)
{
    struct cuda_scope scope;
    accel_status status;
    acu_CUresult result;
    float ms = 0.0f;

    *out_ns = 0;
    if (cuda_symbols_of(device)->cuEventElapsedTime == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "event_elapsed: the driver has no cuEventElapsedTime");
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    result = cuda_symbols_of(device)->cuEventElapsedTime(
        &ms, cuda_event_handle(start), cuda_event_handle(end));
    accel__cuda_leave(device, &scope);
    if (result == ACU_CUDA_ERROR_NOT_READY)
        return ACCEL_NOT_READY;
    status = accel__cuda_result(device, result, "cuEventElapsedTime",
                                ACCEL_ERR_DRIVER);
    if (status == ACCEL_OK)
        *out_ns = (int64_t)((double)ms * 1e6);
    return status;
}

accel_status accel__cuda_stream_wait_event(accel_drv_device *device,
                                           accel_drv_stream *stream,
                                           accel_drv_event *event)
{
    struct cuda_scope scope;
    accel_status status = accel__cuda_enter(device, &scope);

    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuStreamWaitEvent,
                       (cuda_stream_handle(stream), cuda_event_handle(event), 0));
    accel__cuda_leave(device, &scope);
    return status;
}

/* ---- host functions ---- */

accel_status accel__cuda_host_func(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   void (*fn)(void *user), void *user)
{
    struct cuda_scope scope;
    accel_status status;

    /* Caught here: on the driver's thread, a NULL call would crash far from its cause. */
    if (fn == NULL)
        return device->plugin->base.services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT, "host_func: the function is NULL");
    status = accel__cuda_enter(device, &scope);
    if (status != ACCEL_OK)
        return status;
    status = CUDA_CALL(device, ACCEL_ERR_DRIVER, cuLaunchHostFunc,
                       (cuda_stream_handle(stream), fn, user));
    accel__cuda_leave(device, &scope);
    return status;
}
