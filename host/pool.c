/*
 * The device memory pool (see pool.h).
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "pool.h"
#include "recovery.h"
#include "status.h"
#include "submit.h"

void accel__pool_init(struct accel__pool *pool)
{
    memset(pool, 0, sizeof *pool);
    pool->outdated_percent = 25;
    pool->automatic = true;
}

void accel__pool_set_device_memory(struct accel__pool *pool, uint64_t bytes)
{
    pool->device_memory = bytes;
}

void accel__pool_set_own_allocations(struct accel__pool *pool, bool own)
{
    pool->own_allocations = own;
}

/*
 * The bytes of a new page of slices of `slice` bytes: four slices, at least
 * ACCEL__POOL_MIN_PAGE, but at most a quarter of the device's memory
 * (rounded down to a power of two) and never less than one slice. driver.h
 * promises plugins these sizes.
 */
static uint64_t class_page_bytes(const struct accel__pool *pool, uint64_t slice)
{
    uint64_t bytes = slice * 4 > ACCEL__POOL_MIN_PAGE ? slice * 4
                                                      : ACCEL__POOL_MIN_PAGE;
    uint64_t quarter = pool->device_memory / 4;
    if (quarter != 0) {
        uint64_t cap = 1ull << (63 - __builtin_clzll(quarter));
        if (bytes > cap)
            bytes = cap;
    }
    return bytes < slice ? slice : bytes;
}

/* The class whose slices hold `bytes`; ACCEL__POOL_CLASSES if none does. */
static uint32_t class_of(uint64_t bytes)
{
    if (bytes <= ACCEL__POOL_MIN_SLICE)
        return 0;
    uint32_t bits = 64u - (uint32_t)__builtin_clzll(bytes - 1); /* ceil(log2) */
    uint32_t index = bits - 8u;                                 /* 2^8 = 256 */
    return index < ACCEL__POOL_CLASSES ? index : ACCEL__POOL_CLASSES;
}

static void list_push(struct accel__page **head, struct accel__page *page)
{
    page->prev = NULL;
    page->next = *head;
    if (*head != NULL)
        (*head)->prev = page;
    *head = page;
}

static void list_remove(struct accel__page **head, struct accel__page *page)
{
    if (page->prev != NULL)
        page->prev->next = page->next;
    else
        *head = page->next;
    if (page->next != NULL)
        page->next->prev = page->prev;
    page->prev = page->next = NULL;
}

static accel_status page_new(struct accel__pool *pool,
                             const struct accel_driver_v1 *drv,
                             accel_drv_device *device, uint32_t class_index,
                             uint64_t own_bytes, struct accel__page **out_page)
{
    *out_page = NULL;
    uint64_t slice = class_index < ACCEL__POOL_CLASSES
                         ? (uint64_t)ACCEL__POOL_MIN_SLICE << class_index
                         : own_bytes;
    uint64_t bytes = class_index < ACCEL__POOL_CLASSES
                         ? class_page_bytes(pool, slice)
                         : own_bytes;
    uint32_t capacity = (uint32_t)(bytes / slice);
    struct accel__page *page = calloc(1, sizeof *page);
    uint32_t *lists = calloc(2 * (size_t)capacity, sizeof *lists);
    if (page == NULL || lists == NULL) {
        free(page);
        free(lists);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "pool page");
    }
    accel_status status = ACCEL__TABLE_CALL(drv, device, mem_alloc, bytes,
                                            &page->mem, &page->address);
    if (status == ACCEL_OK && page->address % ACCEL_DRIVER_MEM_ALIGNMENT != 0) {
        /* Slices are cut at multiples of their size: a misaligned page
         * would misalign every one of them. */
        ACCEL__TABLE_VOID(drv, device, mem_free, page->mem);
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "mem_alloc returned address 0x%llx, not aligned "
                              "to %u bytes as driver.h asks",
                              (unsigned long long)page->address,
                              ACCEL_DRIVER_MEM_ALIGNMENT);
    }
    if (status != ACCEL_OK) {
        free(page);
        free(lists);
        return status;
    }
    page->bytes = bytes;
    page->class_index = class_index;
    page->slice_bytes = class_index < ACCEL__POOL_CLASSES ? (uint32_t)slice : 0;
    page->capacity = capacity;
    page->free_slices = lists;
    page->owners = lists + capacity;
    /* Pop order 0, 1, 2, ...: slices fill a page from its start. */
    for (uint32_t i = 0; i < capacity; i++) {
        page->free_slices[i] = capacity - 1 - i;
        page->owners[i] = ACCEL__NO_OWNER;
    }
    page->free_top = capacity;
    pool->reserved_bytes += bytes;
    pool->pages++;
    *out_page = page;
    return ACCEL_OK;
}

/* The fullest page of the class that still has room and is not retiring:
 * filling dense pages first lets sparse ones empty out. */
static struct accel__page *page_with_room(struct accel__pool_class *cls)
{
    struct accel__page *best = NULL;
    for (struct accel__page *p = cls->pages; p != NULL; p = p->next) {
        if (p->retiring || p->free_top == 0)
            continue;
        if (best == NULL || p->live > best->live)
            best = p;
        if (best->free_top == 1)
            break;
    }
    return best;
}

/*
 * The smallest spare page that holds `bytes` without wasting more than as
 * much again, taken off the spare list and made empty; NULL if none.
 */
static struct accel__page *spare_take(struct accel__pool *pool, uint64_t bytes)
{
    struct accel__page *best = NULL;
    for (struct accel__page *p = pool->spare_pages; p != NULL; p = p->next) {
        if (p->bytes >= bytes && p->bytes / 2 <= bytes &&
            (best == NULL || p->bytes < best->bytes))
            best = p;
    }
    if (best == NULL)
        return NULL;
    list_remove(&pool->spare_pages, best);
    pool->spare_count--;
    pool->spare_bytes -= best->bytes;
    best->spare = false;
    return best;
}

/* Keep a freed page of its own for reuse, if the spares have room. */
static bool spare_keep(struct accel__pool *pool, struct accel__page *page)
{
    if (pool->own_allocations || pool->spare_count == ACCEL__POOL_SPARE_MAX ||
        pool->spare_bytes + page->bytes > ACCEL__POOL_SPARE_BYTES)
        return false;
    list_remove(&pool->own_pages, page);
    list_push(&pool->spare_pages, page);
    page->spare = true;
    pool->spare_count++;
    pool->spare_bytes += page->bytes;
    return true;
}

accel_status accel__pool_take(struct accel__pool *pool,
                              const struct accel_driver_v1 *drv,
                              accel_drv_device *device, uint64_t bytes,
                              uint32_t owner, struct accel__slice *out_slice)
{
    memset(out_slice, 0, sizeof *out_slice);
    uint32_t class_index = pool->own_allocations ? ACCEL__POOL_CLASSES
                                                 : class_of(bytes);
    struct accel__page *page = NULL;
    accel_status status = ACCEL_OK;
    if (class_index == ACCEL__POOL_CLASSES) {
        /* Not rounded up for a checking plugin: one byte past the end must
         * be past the page. */
        uint64_t rounded = pool->own_allocations
                               ? bytes
                               : (bytes + ACCEL__POOL_MIN_SLICE - 1) &
                                     ~(uint64_t)(ACCEL__POOL_MIN_SLICE - 1);
        if (rounded < bytes)
            return accel__error(ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
                                "%llu bytes cannot be allocated",
                                (unsigned long long)bytes);
        page = spare_take(pool, rounded);
        if (page != NULL) {
            pool->pool_hits++;
        } else {
            status = page_new(pool, drv, device, class_index, rounded, &page);
            if (status != ACCEL_OK)
                return status;
            pool->pool_misses++;
        }
        list_push(&pool->own_pages, page);
    } else {
        struct accel__pool_class *cls = &pool->classes[class_index];
        page = page_with_room(cls);
        if (page == NULL) {
            status = page_new(pool, drv, device, class_index, 0, &page);
            if (status != ACCEL_OK)
                return status;
            list_push(&cls->pages, page);
            cls->page_count++;
            pool->pool_misses++;
        } else {
            pool->pool_hits++;
        }
    }
    uint32_t index = page->free_slices[--page->free_top];
    page->owners[index] = owner;
    page->live++;
    pool->used_bytes += bytes;
    pool->slices++;
    *out_slice = (struct accel__slice){
        .page = page,
        .index = index,
        .address = page->address + (uint64_t)index * page->slice_bytes,
    };
    return ACCEL_OK;
}

void accel__pool_page_free(struct accel__pool *pool,
                           const struct accel_driver_v1 *drv,
                           accel_drv_device *device, struct accel__page *page)
{
    (void)drv;
    (void)device;
    if (page->spare) {
        list_remove(&pool->spare_pages, page);
        pool->spare_count--;
        pool->spare_bytes -= page->bytes;
    } else if (page->class_index == ACCEL__POOL_CLASSES) {
        list_remove(&pool->own_pages, page);
    } else {
        struct accel__pool_class *cls = &pool->classes[page->class_index];
        list_remove(&cls->pages, page);
        cls->page_count--;
    }
    pool->reserved_bytes -= page->bytes;
    pool->pages--;
    page->next = pool->freeing;
    pool->freeing = page;
}

/* mem_free each page of a list taken off `freeing`, and the host side. */
static void pages_destroy(const struct accel_driver_v1 *drv,
                          accel_drv_device *device, struct accel__page *pages)
{
    while (pages != NULL) {
        struct accel__page *next = pages->next;
        ACCEL__TABLE_VOID(drv, device, mem_free, pages->mem);
        free(pages->free_slices);
        free(pages);
        pages = next;
    }
}

void accel__pool_free_pending(struct accel__pool *pool,
                              const struct accel_driver_v1 *drv,
                              accel_drv_device *device)
{
    struct accel__page *pages = pool->freeing;
    pool->freeing = NULL;
    pages_destroy(drv, device, pages);
}

/*
 * Let go of the device lock, then make the frees of the pages the calls
 * under it took out of the pool: a driver's free (cuMemFree) can wait for
 * the device, and every other thread of the device would wait with it.
 * The device is borrowed meanwhile, so that a reset (which frees the
 * context's memory itself) waits for these frees to finish.
 */
void accel__device_unlock(accel_device *device)
{
    struct accel__page *pages = device->pool.freeing;
    if (pages == NULL) {
        pthread_mutex_unlock(&device->lock);
        return;
    }
    device->pool.freeing = NULL;
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    pages_destroy(device->drv, device->drv_device, pages);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    pthread_mutex_unlock(&device->lock);
}

void accel__pool_detach(struct accel__pool *pool, struct accel__slice slice,
                        uint64_t bytes)
{
    struct accel__page *page = slice.page;
    if (page->owners[slice.index] == ACCEL__DROPPED)
        page->dropped--;
    page->owners[slice.index] = ACCEL__NO_OWNER;
    page->free_slices[page->free_top++] = slice.index;
    page->live--;
    pool->used_bytes -= bytes;
    pool->slices--;
}

void accel__pool_give(struct accel__pool *pool, const struct accel_driver_v1 *drv,
                      accel_drv_device *device, struct accel__slice slice,
                      uint64_t bytes)
{
    struct accel__page *page = slice.page;
    bool was_outdated = accel__pool_page_outdated(pool, page);
    accel__pool_detach(pool, slice, bytes);
    if (!was_outdated && accel__pool_page_outdated(pool, page))
        pool->outdated_hint++;
    if (page->live > 0 || page->retiring)
        return;
    /* An empty page goes back, except a class's last, and a few large ones
     * kept as spares, so that an allocation and free in a loop does not
     * reach the plugin each time. */
    if (page->class_index == ACCEL__POOL_CLASSES) {
        if (!spare_keep(pool, page))
            accel__pool_page_free(pool, drv, device, page);
    } else if (pool->classes[page->class_index].page_count > 1) {
        accel__pool_page_free(pool, drv, device, page);
    }
}

void accel__pool_mark_dropped(struct accel__slice slice)
{
    slice.page->owners[slice.index] = ACCEL__DROPPED;
    slice.page->dropped++;
}

void accel__pool_pin(struct accel__slice slice)
{
    slice.page->pinned++;
}

void accel__pool_unpin(struct accel__slice slice)
{
    slice.page->pinned--;
}

void accel__pool_release_all(struct accel__pool *pool,
                             const struct accel_driver_v1 *drv,
                             accel_drv_device *device)
{
    for (uint32_t i = 0; i < ACCEL__POOL_CLASSES; i++) {
        while (pool->classes[i].pages != NULL)
            accel__pool_page_free(pool, drv, device, pool->classes[i].pages);
    }
    while (pool->own_pages != NULL)
        accel__pool_page_free(pool, drv, device, pool->own_pages);
    accel__pool_trim(pool, drv, device);
    accel__pool_free_pending(pool, drv, device);
    pool->used_bytes = 0;
    pool->slices = 0;
}

bool accel__pool_page_outdated(const struct accel__pool *pool,
                               const struct accel__page *page)
{
    if (page->class_index == ACCEL__POOL_CLASSES || page->pinned > 0 ||
        page->dropped > 0 || page->retiring || page->live == 0)
        return false;
    return (uint64_t)page->live * 100 <
           (uint64_t)page->capacity * pool->outdated_percent;
}

uint64_t accel__pool_class_room(const struct accel__pool *pool,
                                uint32_t class_index)
{
    uint64_t room = 0;
    for (const struct accel__page *p = pool->classes[class_index].pages;
         p != NULL; p = p->next) {
        if (!p->retiring)
            room += p->free_top;
    }
    return room;
}

void accel__pool_trim(struct accel__pool *pool,
                      const struct accel_driver_v1 *drv, accel_drv_device *device)
{
    while (pool->spare_pages != NULL)
        accel__pool_page_free(pool, drv, device, pool->spare_pages);
}
