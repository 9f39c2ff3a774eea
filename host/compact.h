/*
 * Relocation (compact.c) and the device's own stream, on which the host
 * runs its own work. Device lock held.
 */
#ifndef ACCEL_HOST_COMPACT_H
#define ACCEL_HOST_COMPACT_H

#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

/* The host's own work: relocations, and the synchronous transfers of
 * copies between plugins. Made when first needed; device lock. */
struct accel__own_work {
    accel_drv_stream *stream;
    accel_drv_event *relocated; /* recorded behind the last relocation */
};

accel_status accel__compact(accel_device *device, uint32_t *out_moved_pages);
/* Make the device's internal stream unless it exists. */
accel_status accel__internal_stream(accel_device *device);

#endif /* ACCEL_HOST_COMPACT_H */
