/*
 * The device memory pool: pages taken from the plugin, cut into slices.
 *
 * Small allocations share pages of one size class each (a slab: every slice
 * of a page has the class's size, so taking and giving back a slice is a
 * push or pop). An allocation above the largest class gets a page of its
 * own. A page whose live share falls under the policy's threshold is
 * outdated: its live slices are moved onto other pages of the class with
 * the plugin's device copy, and the empty page goes back to the plugin.
 *
 * Every function here runs with the device lock held.
 */
#ifndef ACCEL_HOST_POOL_H
#define ACCEL_HOST_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/driver.h"

#define ACCEL__POOL_MIN_SLICE 256u      /* the smallest class */
#define ACCEL__POOL_CLASSES 13          /* 256 B .. 1 MiB */
#define ACCEL__POOL_MIN_PAGE (2u << 20) /* a class page is at least 2 MiB */
#define ACCEL__NO_OWNER UINT32_MAX      /* owners[] of a free slice */
#define ACCEL__DROPPED (UINT32_MAX - 1) /* freed, waiting on the drop queue */
/* Freed pages of their own kept for the next large allocation: at most
 * this many, of at most this many bytes together. */
#define ACCEL__POOL_SPARE_MAX 4u
#define ACCEL__POOL_SPARE_BYTES (256ull << 20)

struct accel__page {
    accel_drv_mem *mem;
    uint64_t address;
    uint64_t bytes;
    uint32_t class_index; /* ACCEL__POOL_CLASSES for a page of its own */
    uint32_t slice_bytes;
    uint32_t capacity; /* slices */
    uint32_t live;
    uint32_t pinned;  /* live slices that must never move */
    uint32_t dropped; /* slices freed but still in use by streams */
    bool retiring;    /* being emptied: takes no new slice */
    bool queued;      /* emptied, on the drop queue to go back */
    bool spare;       /* a free page of its own, kept for reuse */
    uint32_t free_top;
    uint32_t *free_slices; /* a stack of free slice indexes */
    uint32_t *owners;      /* the ref slot of each slice, or ACCEL__NO_OWNER */
    struct accel__page *prev, *next;
};

struct accel__pool_class {
    struct accel__page *pages; /* every page of the class */
    uint32_t page_count;
};

struct accel__pool {
    struct accel__pool_class classes[ACCEL__POOL_CLASSES];
    struct accel__page *own_pages;   /* pages of one large allocation each */
    struct accel__page *spare_pages; /* freed ones of those, for reuse */
    /* Pages taken out of the pool whose mem_free is still to come: a
     * driver's free can synchronise with the device, so it is made after
     * the device lock is let go (accel__device_unlock). */
    struct accel__page *freeing;
    uint32_t spare_count;
    uint64_t spare_bytes;
    uint64_t reserved_bytes;
    uint64_t used_bytes;
    uint64_t pages;
    uint64_t slices;
    uint64_t relocations;
    uint64_t pool_hits;
    uint64_t pool_misses;
    /* Pages that fell under the threshold since the last compaction. */
    uint32_t outdated_hint;
    /* Policy: a page whose live share is under this percentage is outdated. */
    uint32_t outdated_percent;
    bool automatic;
    /* The device's total_memory (0: unknown), which caps class pages. */
    uint64_t device_memory;
    /* The device has ACCEL_DEVICE_CAP_OWN_ALLOCATIONS: every allocation is
     * a page of its own of exactly its size, never kept as a spare. */
    bool own_allocations;
};

/* Where one allocation lives. */
struct accel__slice {
    struct accel__page *page;
    uint32_t index;
    uint64_t address;
};

void accel__pool_init(struct accel__pool *pool);
/*
 * Tell the pool how much memory the device has: a class page is at most a
 * quarter of it (a power of two, at least one slice), so that a small
 * device still serves small allocations. 0 means unknown: no cap.
 */
void accel__pool_set_device_memory(struct accel__pool *pool, uint64_t bytes);

/*
 * Give every allocation a page of its own, of exactly its size, and hand
 * each back to the plugin when it is freed (ACCEL_DEVICE_CAP_OWN_ALLOCATIONS):
 * a checking plugin then sees each allocation's bounds and its free.
 */
void accel__pool_set_own_allocations(struct accel__pool *pool, bool own);

/*
 * Take a slice of at least `bytes` for ref slot `owner`, from a page with
 * room or from a new page. ACCEL_ERR_OUT_OF_DEVICE_MEMORY when the plugin
 * has no more.
 */
accel_status accel__pool_take(struct accel__pool *pool,
                              const struct accel_driver_v1 *drv,
                              accel_drv_device *device, uint64_t bytes,
                              uint32_t owner, struct accel__slice *out_slice);

/*
 * Give a slice back. No enqueued work uses it any more. An empty page goes
 * back to the plugin unless it is its class's last.
 */
void accel__pool_give(struct accel__pool *pool, const struct accel_driver_v1 *drv,
                      accel_drv_device *device, struct accel__slice slice,
                      uint64_t bytes);

/*
 * Take a slice off its page without giving the page back, however empty:
 * a relocation has moved its contents and frees the page itself later.
 */
void accel__pool_detach(struct accel__pool *pool, struct accel__slice slice,
                        uint64_t bytes);

/*
 * A freed slice waits on the drop queue: it belongs to no ref any more and
 * must not be moved, but it is not free yet. Its page is not outdated
 * while it has such slices.
 */
void accel__pool_mark_dropped(struct accel__slice slice);

/* Mark a slice as never to be moved (its native address was handed out),
 * and undo that when it is freed. */
void accel__pool_pin(struct accel__slice slice);
void accel__pool_unpin(struct accel__slice slice);

/* Return the spare pages to the plugin (out of memory, compaction). */
void accel__pool_trim(struct accel__pool *pool, const struct accel_driver_v1 *drv,
                      accel_drv_device *device);

/* Return every page to the plugin (close, reset). */
void accel__pool_release_all(struct accel__pool *pool,
                             const struct accel_driver_v1 *drv,
                             accel_drv_device *device);

/*
 * Take one empty page out of the pool; its mem_free waits on the pool's
 * `freeing` list until accel__device_unlock (or a release, or
 * accel__pool_free_pending) makes it.
 */
void accel__pool_page_free(struct accel__pool *pool,
                           const struct accel_driver_v1 *drv,
                           accel_drv_device *device, struct accel__page *page);

/* Make the mem_free of every page on the `freeing` list now, lock held
 * (out of memory: the allocation that follows needs the room). */
void accel__pool_free_pending(struct accel__pool *pool,
                              const struct accel_driver_v1 *drv,
                              accel_drv_device *device);

/* True when the page is outdated under the pool's policy and could move. */
bool accel__pool_page_outdated(const struct accel__pool *pool,
                               const struct accel__page *page);

/* Free slices in the class's pages other than retiring ones. */
uint64_t accel__pool_class_room(const struct accel__pool *pool,
                                uint32_t class_index);

#endif /* ACCEL_HOST_POOL_H */
