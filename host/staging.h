/*
 * Staging (staging.c): pinned buffers that copies from pageable host
 * memory go through, and copies between plugins through host memory.
 */
#ifndef ACCEL_HOST_STAGING_H
#define ACCEL_HOST_STAGING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

#define ACCEL__STAGING_MAX_BUFFERS 8

struct accel__staging_buffer {
    void *ptr;              /* pinned, `chunk` bytes */
    accel_drv_event *event; /* recorded behind its last transfer */
};

struct accel__staging {
    struct accel__staging_buffer idle[ACCEL__STAGING_MAX_BUFFERS];
    uint32_t idle_count;
    uint32_t total; /* idle and checked out */
    uint64_t chunk;
    pthread_cond_t returned; /* with the device lock */
};

uint64_t accel__staging_chunk_from_env(void);
/* Copy between pageable host memory and a ref through pinned chunks. The
 * layout is normalized. Called without the device lock. */
accel_status accel__staged_copy(accel_stream *stream, accel_ref ref, void *host,
                                const struct accel_copy_layout *layout,
                                bool host_is_source);
/*
 * Copy between a ref of the stream's device and one of `there`, a device of
 * another plugin, through host memory; synchronous. `dst_here` says which
 * ref is the stream's. The layout is normalized and must be contiguous.
 */
accel_status accel__copy_through_host(accel_stream *stream, accel_device *there,
                                      accel_ref dst, accel_ref src,
                                      const struct accel_copy_layout *layout,
                                      bool dst_here);
/* Free the idle staging buffers (reset, close); device lock held. */
void accel__staging_release(accel_device *device);

#endif /* ACCEL_HOST_STAGING_H */
