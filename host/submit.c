/*
 * The submit step: every command on a stream takes the device lock, checks
 * that the device and stream can take work, calls the plugin, and ends with
 * the loss check. Every call into a plugin's table ends here too
 * (submit.h): its failure is named and mapped in one place.
 */
#include <pthread.h>

#include "device.h"
#include "host.h"
#include "status.h"
#include "submit.h"

accel_status accel__submit_begin(accel_stream *stream, const char *what)
{
    if (stream == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s: NULL stream", what);
    if (accel__process_check(stream->device->pid, what) != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&stream->device->lock);
    accel_status status = accel__device_usable(stream->device);
    if (status == ACCEL_OK && stream->drv == NULL)
        status = accel__device_gone(stream->device, what);
    if (status != ACCEL_OK)
        pthread_mutex_unlock(&stream->device->lock);
    return status;
}

accel_status accel__submit_end(accel_stream *stream, accel_status status)
{
    accel_device *device = stream->device;
    status = accel__device_check_loss(device, status);
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel__submit_hook_fn accel__submit_hook;

accel_status accel__submit_failed(accel_status status, const char *site,
                                  const char *entry)
{
    /* The public call the application made says more than the internal
     * function that happened to call the plugin. */
    const char *api = accel__api_call;
    return accel__plugin_failed_named(status, api != NULL ? api : site, entry);
}
