/*
 * The submit step (submit.c): what every command on a stream does before
 * and after it calls the plugin.
 */
#ifndef ACCEL_HOST_SUBMIT_H
#define ACCEL_HOST_SUBMIT_H

#include "accel/accel.h"

/*
 * Begin a submission on a stream: take the device lock and check that the
 * device and stream can take work. On failure the lock is not held.
 */
accel_status accel__submit_begin(accel_stream *stream, const char *what);
/* End it: check a failure for device loss, release the lock. */
accel_status accel__submit_end(accel_stream *stream, accel_status status);

#endif /* ACCEL_HOST_SUBMIT_H */
