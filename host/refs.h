/*
 * The ref table (refs.c): the allocation behind each ref, and its
 * validation.
 */
#ifndef ACCEL_HOST_REFS_H
#define ACCEL_HOST_REFS_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "pool.h"

/* One allocation behind a ref. */
struct accel__slot {
    uint32_t generation; /* bumped at each free; starts at 1 */
    bool live;
    bool pinned; /* its native address was handed out: never moved */
    uint32_t type;
    uint64_t count;
    uint64_t bytes;
    struct accel__slice slice; /* where it is now; the pool may move it */
    uint64_t lanes; /* streams that enqueued work on it (lane bits) */
};

struct accel__ref_table {
    struct accel__slot *slots;
    uint32_t capacity;
    uint32_t used;       /* slots ever handed out: [0, used) */
    uint32_t *free_list; /* indexes of dead slots to reuse */
    uint32_t free_count;
};

/* Ref table; every call with the device lock held. */
void accel__refs_init(struct accel__ref_table *table);
/* Free every live allocation through the plugin, then the table. */
void accel__refs_release_all(accel_device *device);
void accel__refs_deinit(struct accel__ref_table *table);
/* Validate `ref` against the device; on success the slot. */
accel_status accel__ref_resolve(accel_device *device, accel_ref ref,
                                struct accel__slot **out_slot);
/* ACCEL_ERR_FREED_REF for a ref no device ever minted (a zeroed one). */
accel_status accel__ref_unminted(accel_ref ref);

#endif /* ACCEL_HOST_REFS_H */
