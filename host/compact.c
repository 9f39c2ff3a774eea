/*
 * Relocation: moving the live slices of outdated pages, so that the pages
 * can go back to the plugin while every ref keeps working.
 *
 * The move is ordered with the streams rather than by waiting for them:
 * the device's internal stream waits for an event recorded on each user
 * stream (work already enqueued may still use the old addresses), copies
 * each slice with the plugin's device copy, and records an event that every
 * user stream then waits for (later work uses the new addresses). The
 * emptied pages go on the drop queue behind that event. Refs find the new
 * address at their next submission, which resolves them under the device
 * lock, as this does.
 *
 * Every function here runs with the device lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "compact.h"
#include "device.h"
#include "drop.h"
#include "layout.h"
#include "pool.h"
#include "refs.h"
#include "status.h"
#include "submit.h"
#include "trace.h"

/* Mark the pages to empty: outdated ones whose slices fit elsewhere. */
static uint32_t choose_victims(struct accel__pool *pool)
{
    uint32_t victims = 0;
    for (uint32_t c = 0; c < ACCEL__POOL_CLASSES; c++) {
        uint64_t demand = 0; /* slices the victims so far will need */
        for (struct accel__page *p = pool->classes[c].pages; p != NULL;
             p = p->next) {
            if (!accel__pool_page_outdated(pool, p))
                continue;
            /* Room on the pages that stay; a retiring page's own free
             * slices no longer count. */
            p->retiring = true;
            if (accel__pool_class_room(pool, c) >= demand + p->live) {
                demand += p->live;
                victims++;
            } else {
                p->retiring = false;
            }
        }
    }
    return victims;
}

accel_status accel__internal_stream(accel_device *device)
{
    if (device->own.stream != NULL)
        return ACCEL_OK;
    return ACCEL__DRV_CALL(device, stream_create, &device->own.stream);
}

/* The internal stream waits for the work enqueued on every user stream. */
static accel_status wait_for_users(accel_device *device)
{
    for (accel_stream *s = device->queues.list; s != NULL; s = s->next) {
        if (s->drv == NULL)
            continue;
        struct accel__fence fence;
        accel_status status = accel__fence_stream(device, s->drv, &fence);
        if (status != ACCEL_OK)
            return status;
        status = ACCEL__DRV_CALL(device, stream_wait_event, device->own.stream,
                                 fence.events[0]);
        /* A wait takes the event as recorded now; it can be reused. */
        accel__fence_release(device, &fence);
        if (status != ACCEL_OK)
            return status;
    }
    return ACCEL_OK;
}

/* Every user stream waits for the internal stream's work so far. */
static accel_status users_wait(accel_device *device)
{
    accel_status status = ACCEL_OK;
    if (device->own.relocated == NULL)
        status = accel__event_take(device, &device->own.relocated);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_CALL(device, event_record, device->own.relocated,
                                 device->own.stream);
    for (accel_stream *s = device->queues.list; status == ACCEL_OK && s != NULL;
         s = s->next) {
        if (s->drv != NULL)
            status = ACCEL__DRV_CALL(device, stream_wait_event, s->drv,
                                     device->own.relocated);
    }
    return status;
}

static accel_status move_slice(accel_device *device, struct accel__page *page,
                               uint32_t index)
{
    struct accel__slot *slot = &device->refs.slots[page->owners[index]];
    struct accel__slice target;
    accel_status status = accel__pool_take(&device->pool, device->drv,
                                           device->drv_device, slot->bytes,
                                           page->owners[index], &target);
    if (status != ACCEL_OK)
        return status;
    struct accel_copy_layout layout = accel__layout_linear(0, 0, slot->bytes);
    status = ACCEL__DRV_CALL(device, copy_on_device, device->own.stream,
                             target.address, slot->slice.address, &layout);
    if (status != ACCEL_OK) {
        accel__pool_give(&device->pool, device->drv, device->drv_device, target,
                         slot->bytes);
        return status;
    }
    accel__trace_device_mark(device, "relocate", slot->bytes);
    accel__pool_detach(&device->pool, slot->slice, slot->bytes);
    slot->slice = target;
    /* The new place is written by the internal stream; a free must wait for
     * every stream, all of which wait for that copy. */
    slot->lanes = ~0ull;
    device->pool.relocations++;
    return ACCEL_OK;
}

static accel_status empty_page(accel_device *device, struct accel__page *page)
{
    for (uint32_t i = 0; i < page->capacity && page->live > 0; i++) {
        if (page->owners[i] == ACCEL__NO_OWNER ||
            page->owners[i] == ACCEL__DROPPED)
            continue;
        accel_status status = move_slice(device, page, i);
        if (status != ACCEL_OK)
            return status;
    }
    return ACCEL_OK;
}

/* Queue each emptied page behind the relocation; give back the others. */
static void settle_victims(accel_device *device, bool moved)
{
    for (uint32_t c = 0; c < ACCEL__POOL_CLASSES; c++) {
        struct accel__page *next = NULL;
        for (struct accel__page *p = device->pool.classes[c].pages; p != NULL;
             p = next) {
            next = p->next;
            /* Pages emptied by an earlier compaction are already queued. */
            if (!p->retiring || p->queued)
                continue;
            struct accel__fence fence;
            if (!moved || p->live > 0 ||
                accel__fence_stream(device, device->own.stream, &fence) !=
                    ACCEL_OK) {
                p->retiring = false;
                continue;
            }
            p->queued = true;
            accel__drop_page(device, p, &fence);
        }
    }
}

accel_status accel__compact(accel_device *device, uint32_t *out_moved_pages)
{
    *out_moved_pages = 0;
    accel__drop_collect(device, false);
    uint32_t victims = choose_victims(&device->pool);
    if (victims == 0)
        return ACCEL_OK;
    uint64_t before = device->pool.relocations;
    accel_status status = accel__internal_stream(device);
    if (status == ACCEL_OK)
        status = wait_for_users(device);
    /* Collectives in flight hold their slices pinned (never moved); the
     * relocation still waits for them, as for the plugin's outside work. */
    if (status == ACCEL_OK)
        accel__comm_wait_inflight(device);
    if (status == ACCEL_OK && device->drv->wait_outside_streams != NULL)
        status = ACCEL__DRV_CALL0(device, wait_outside_streams);
    for (uint32_t c = 0; status == ACCEL_OK && c < ACCEL__POOL_CLASSES; c++) {
        for (struct accel__page *p = device->pool.classes[c].pages;
             status == ACCEL_OK && p != NULL; p = p->next) {
            if (p->retiring && !p->queued)
                status = empty_page(device, p);
        }
    }
    bool moved = device->pool.relocations != before;
    if (moved) {
        accel_status waited = users_wait(device);
        /* Refs already point at the new places: if the streams cannot be
         * made to wait for the copies, the copies must be done before any
         * later work is enqueued. */
        if (waited != ACCEL_OK)
            device->drv->stream_sync(device->drv_device, device->own.stream);
        if (status == ACCEL_OK)
            status = waited;
    }
    settle_victims(device, moved && status == ACCEL_OK);
    if (status == ACCEL_OK)
        *out_moved_pages = victims;
    accel__log(ACCEL_LOG_DEBUG,
               "compaction of %s:%u: %u page(s), %llu slice(s) moved: %s",
               device->plugin->name, device->index, victims,
               (unsigned long long)(device->pool.relocations - before),
               accel_status_name(status));
    return accel__device_check_loss(device, status);
}
