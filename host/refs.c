/*
 * Refs: typed device allocations named by value.
 *
 * A ref carries a slot index and the slot's generation, the device id and
 * the device generation it was minted against. Freeing bumps the slot's
 * generation; a reset or a loss bumps the device's. So every way a ref can
 * go bad is a comparison, and each has its own code.
 *
 * The memory behind a slot comes from the pool (pool.c) and goes back
 * through the drop queue (drop.c).
 */
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "device.h"
#include "drop.h"
#include "host.h"
#include "pool.h"
#include "refs.h"
#include "status.h"
#include "stream.h"
#include "trace.h"

void accel__refs_init(struct accel__ref_table *table)
{
    memset(table, 0, sizeof *table);
}

void accel__refs_deinit(struct accel__ref_table *table)
{
    free(table->slots);
    free(table->free_list);
    memset(table, 0, sizeof *table);
}

/* A dead slot to use, growing the table when none is free. */
static accel_status slot_take(struct accel__ref_table *table, uint32_t *out_index)
{
    if (table->free_count > 0) {
        *out_index = table->free_list[--table->free_count];
        return ACCEL_OK;
    }
    if (table->used == table->capacity) {
        if (table->capacity >= UINT32_MAX / 4)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                "the ref table is full");
        uint32_t capacity = table->capacity ? table->capacity * 2 : 64;
        struct accel__slot *slots = realloc(table->slots,
                                            capacity * sizeof *slots);
        if (slots == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "ref table");
        table->slots = slots;
        uint32_t *free_list = realloc(table->free_list,
                                      capacity * sizeof *free_list);
        if (free_list == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "ref table");
        table->free_list = free_list;
        memset(slots + table->capacity, 0,
               (capacity - table->capacity) * sizeof *slots);
        table->capacity = capacity;
    }
    uint32_t index = table->used++;
    table->slots[index].generation = 1;
    *out_index = index;
    return ACCEL_OK;
}

static void slot_give_back(struct accel__ref_table *table, uint32_t index)
{
    struct accel__slot *slot = &table->slots[index];
    uint32_t generation = slot->generation + 1;
    memset(slot, 0, sizeof *slot);
    /* Generation 0 is never valid, so a zeroed ref never matches. */
    slot->generation = generation ? generation : 1;
    table->free_list[table->free_count++] = index;
}

/*
 * Device ids and slot generations start at 1, so no ref with either at 0
 * (a zero-initialised one) was ever minted, on any device: it is a freed
 * ref, the code for "never valid", whichever device it is shown to.
 */
accel_status accel__ref_unminted(accel_ref ref)
{
    if (ref.device_id != 0 && ref.slot_generation != 0)
        return ACCEL_OK;
    return accel__error(
        ACCEL_ERR_FREED_REF,
        "the ref (device id %u, slot %u, generation %u) was "
        "never allocated: a zero-initialised ref is never valid",
        ref.device_id, ref.slot, ref.slot_generation);
}

/* A ref of this device whose slot never reached its generation was never
 * allocated, whatever device generation it claims. Lock held. */
static bool slot_never_minted(const struct accel__ref_table *table, accel_ref ref)
{
    if (ref.slot >= table->used)
        return true;
    const struct accel__slot *slot = &table->slots[ref.slot];
    /* A dead slot's generation is the next it will mint. */
    return ref.slot_generation > slot->generation ||
           (ref.slot_generation == slot->generation && !slot->live);
}

accel_status accel__ref_resolve(accel_device *device, accel_ref ref,
                                struct accel__slot **out_slot)
{
    *out_slot = NULL;
    accel_status status = accel__ref_unminted(ref);
    if (status != ACCEL_OK)
        return status;
    if (ref.device_id == device->id && slot_never_minted(&device->refs, ref))
        return accel__error(ACCEL_ERR_FREED_REF,
                            "the ref (slot %u, generation %u) was never "
                            "allocated on %s:%u",
                            ref.slot, ref.slot_generation, device->plugin->name,
                            device->index);
    if (ref.device_id != device->id)
        return accel__error(
            ACCEL_ERR_DEVICE_MISMATCH,
            "the ref belongs to device id %u, not %s:%u (id %u)", ref.device_id,
            device->plugin->name, device->index, device->id);
    uint32_t generation = atomic_load(&device->generation);
    if (ref.device_generation != generation)
        return accel__error(ACCEL_ERR_STALE_REF,
                            "the ref was minted at device generation %u; the "
                            "device is at %u since a reset or loss",
                            ref.device_generation, generation);
    struct accel__ref_table *table = &device->refs;
    if (ref.slot >= table->used || !table->slots[ref.slot].live ||
        table->slots[ref.slot].generation != ref.slot_generation)
        return accel__error(
            ACCEL_ERR_FREED_REF,
            "the ref (slot %u, generation %u) has been freed or "
            "was never allocated",
            ref.slot, ref.slot_generation);
    struct accel__slot *slot = &table->slots[ref.slot];
    if (slot->type != ref.type || slot->count != ref.count)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "the ref's type or length was changed after "
                            "accel_alloc (%s x %llu, allocated %s x %llu)",
                            accel_elem_type_name((accel_elem_type)ref.type),
                            (unsigned long long)ref.count,
                            accel_elem_type_name((accel_elem_type)slot->type),
                            (unsigned long long)slot->count);
    *out_slot = slot;
    return ACCEL_OK;
}

static accel_status alloc_untraced(accel_device *device, accel_elem_type type,
                                   uint64_t count, accel_ref *out_ref)
{
    if (out_ref != NULL)
        memset(out_ref, 0, sizeof *out_ref);
    if (device == NULL || out_ref == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_alloc: NULL argument");
    size_t element = accel_elem_size(type);
    if (element == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_alloc: %d is not an element type", (int)type);
    if (count == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_alloc: zero elements");
    if (count > UINT64_MAX / element)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_alloc: %llu elements of %zu bytes overflow",
                            (unsigned long long)count, element);
    uint64_t bytes = count * element;

    pthread_mutex_lock(&device->lock);
    uint32_t index = 0;
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK)
        status = slot_take(&device->refs, &index);
    if (status != ACCEL_OK)
        goto done;
    struct accel__slot *slot = &device->refs.slots[index];
    status = accel__pool_take(&device->pool, device->drv, device->drv_device,
                              bytes, index, &slot->slice);
    if (status == ACCEL_ERR_OUT_OF_DEVICE_MEMORY &&
        (device->drop.list != NULL || device->pool.spare_pages != NULL ||
         device->pool.freeing != NULL)) {
        /* Memory still on the drop queue, or kept as spare pages, may be
         * what is missing. */
        accel__drop_collect(device, true);
        accel__pool_trim(&device->pool, device->drv, device->drv_device);
        /* Freed under the lock here: the retry needs their room now. */
        accel__pool_free_pending(&device->pool, device->drv, device->drv_device);
        status = accel__pool_take(&device->pool, device->drv, device->drv_device,
                                  bytes, index, &slot->slice);
    }
    if (status != ACCEL_OK) {
        slot_give_back(&device->refs, index);
        status = accel__device_check_loss(device, status);
        goto done;
    }
    slot->live = true;
    slot->type = (uint32_t)type;
    slot->count = count;
    slot->bytes = bytes;
    *out_ref = (accel_ref){
        .slot = index,
        .slot_generation = slot->generation,
        .device_id = device->id,
        .device_generation = atomic_load(&device->generation),
        .type = (uint32_t)type,
        .count = count,
    };
done:
    accel__device_unlock(device);
    return status;
}

accel_status accel_alloc(accel_device *device, accel_elem_type type,
                         uint64_t count, accel_ref *out_ref)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = alloc_untraced(device, type, count, out_ref);
    /* The bytes are worked out only when the call is traced. */
    uint64_t bytes = traced.begin != 0 && status == ACCEL_OK
                         ? accel_ref_bytes(*out_ref)
                         : 0;
    return accel__trace_end(traced, status, bytes);
}

/* Free a live slot: its memory waits on the drop queue for the streams that
 * used it, and the slot can be taken again at once. */
static void slot_free(accel_device *device, uint32_t index)
{
    struct accel__slot *slot = &device->refs.slots[index];
    if (slot->pinned)
        accel__pool_unpin(slot->slice);
    accel_status status = accel__drop_slice(device, slot->slice, slot->bytes,
                                            slot->lanes);
    if (status != ACCEL_OK) {
        /* No fence could be made: wait for the device instead. */
        accel__streams_wait_all(device);
        accel__pool_give(&device->pool, device->drv, device->drv_device,
                         slot->slice, slot->bytes);
    }
    slot_give_back(&device->refs, index);
}

static accel_status free_untraced(accel_device *device, accel_ref ref)
{
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_free: NULL device");
    if (accel__process_check(device->pid, "accel_free") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&device->lock);
    struct accel__slot *slot = NULL;
    accel_status status = accel__ref_resolve(device, ref, &slot);
    if (status == ACCEL_OK)
        slot_free(device, ref.slot);
    if (status == ACCEL_OK && device->pool.automatic &&
        device->pool.outdated_hint) {
        device->pool.outdated_hint = 0;
        uint32_t pages = 0;
        /* The free itself succeeded; a failed compaction is only logged. */
        if (accel__compact(device, &pages) != ACCEL_OK)
            accel__log(ACCEL_LOG_WARN, "automatic compaction failed: %s",
                       accel_last_error());
    }
    accel__device_unlock(device);
    return status;
}

accel_status accel_free(accel_device *device, accel_ref ref)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = free_untraced(device, ref);
    uint64_t bytes = traced.begin != 0 && status == ACCEL_OK
                         ? accel_ref_bytes(ref)
                         : 0;
    return accel__trace_end(traced, status, bytes);
}

void accel__refs_release_all(accel_device *device)
{
    /* Everything goes back to the plugin by pages; the slots just die. */
    accel__drop_release_all(device);
    struct accel__ref_table *table = &device->refs;
    for (uint32_t i = 0; i < table->used; i++) {
        if (table->slots[i].live)
            slot_give_back(table, i);
    }
    accel__pool_release_all(&device->pool, device->drv, device->drv_device);
}

static accel_status ref_check_untraced(accel_device *device, accel_ref ref)
{
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_ref_check: NULL device");
    if (accel__process_check(device->pid, "accel_ref_check") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__slot *slot = NULL;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__ref_resolve(device, ref, &slot);
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_ref_check(accel_device *device, accel_ref ref)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = ref_check_untraced(device, ref);
    return accel__trace_end(traced, status, 0);
}

uint64_t accel_ref_bytes(accel_ref ref)
{
    size_t element = accel_elem_size((accel_elem_type)ref.type);
    if (element == 0 || ref.count > UINT64_MAX / element)
        return 0;
    return ref.count * element;
}

static accel_status ref_native_untraced(accel_device *device, accel_ref ref,
                                        uint64_t *out_address)
{
    if (out_address != NULL)
        *out_address = 0;
    if (device == NULL || out_address == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_ref_native: NULL argument");
    if (accel__process_check(device->pid, "accel_ref_native") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__slot *slot = NULL;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__ref_resolve(device, ref, &slot);
    if (status == ACCEL_OK) {
        /* Whoever holds the address may use it outside accel: the
         * allocation must never move again. */
        if (!slot->pinned)
            accel__pool_pin(slot->slice);
        slot->pinned = true;
        *out_address = slot->slice.address;
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_ref_native(accel_device *device, accel_ref ref,
                              uint64_t *out_address)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = ref_native_untraced(device, ref, out_address);
    return accel__trace_end(traced, status, 0);
}
