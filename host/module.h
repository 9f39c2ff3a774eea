/*
 * Modules and kernels (module.c), as a device reset and close see them.
 * Device lock held.
 */
#ifndef ACCEL_HOST_MODULE_H
#define ACCEL_HOST_MODULE_H

#include "accel/accel.h"

/* Unload the plugin's modules (reset, close); the handles stay. */
void accel__modules_release(accel_device *device);
/* Load them again after a reset. */
accel_status accel__modules_rebuild(accel_device *device);
/* Free the handles (close). */
void accel__modules_free(accel_device *device);

#endif /* ACCEL_HOST_MODULE_H */
