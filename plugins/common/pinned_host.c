/*
 * Pinned host memory that outlives a device reset: pages the plugin maps
 * itself, registered with the driver, listed per device.
 */
#include "pinned_host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct accel__pinned_block {
    void *ptr;
    size_t bytes;
    /* The driver holds it page-locked now; false after a re-registration it refused. */
    bool registered;
    struct accel__pinned_block *next;
};

accel_status accel__pinned_blocks_init(struct accel__pinned_blocks *blocks)
{
    blocks->head = NULL;
    return pthread_mutex_init(&blocks->lock, NULL) == 0
               ? ACCEL_OK
               : ACCEL_ERR_OUT_OF_HOST_MEMORY;
}

/* Why the register call failed at host_alloc, recorded; its status. */
static accel_status pinned_register_failed(const struct accel__pinned_device *pinned,
                                           int result, size_t bytes)
{
    const struct accel__pinned_vendor *vendor = pinned->vendor;
    char described[256];

    if (result != vendor->out_of_memory)
        return vendor->error(pinned->device, result, vendor->register_call);
    vendor->describe(pinned->device, result, described, sizeof(described));
    return pinned->services->set_error(
        ACCEL_ERR_OUT_OF_HOST_MEMORY,
        "%s failed: %s: %zu bytes of pinned host memory", vendor->register_call,
        described, bytes);
}

accel_status accel__pinned_alloc(const struct accel__pinned_device *pinned,
                                 size_t bytes, void **out_ptr)
{
    const struct accel_host_services *services = pinned->services;
    struct accel__pinned_block *block;
    int result;

    *out_ptr = NULL;
    if (bytes == 0)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "host_alloc: a size of zero bytes");
    block = calloc(1, sizeof(*block));
    if (block == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of a pinned block's record failed");
    block->ptr = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block->ptr == MAP_FAILED) {
        int error = errno;

        free(block);
        return services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "mmap of %zu bytes for pinned host memory failed: %s", bytes,
            strerror(error));
    }
    block->bytes = bytes;
    /* Registered and listed under one lock: a reset sees the block either way, never half. */
    pthread_mutex_lock(&pinned->blocks->lock);
    result = pinned->vendor->register_range(pinned->device, block->ptr, bytes);
    if (result == 0) {
        block->registered = true;
        block->next = pinned->blocks->head;
        pinned->blocks->head = block;
    }
    pthread_mutex_unlock(&pinned->blocks->lock);
    if (result != 0) {
        munmap(block->ptr, bytes);
        free(block);
        return pinned_register_failed(pinned, result, bytes);
    }
    *out_ptr = block->ptr;
    return ACCEL_OK;
}

/* Take the block at `ptr` off the list; NULL when it is not one. Lock held. */
static struct accel__pinned_block *
pinned_take(struct accel__pinned_blocks *blocks, void *ptr)
{
    for (struct accel__pinned_block **link = &blocks->head; *link != NULL;
         link = &(*link)->next) {
        struct accel__pinned_block *block = *link;

        if (block->ptr == ptr) {
            *link = block->next;
            return block;
        }
    }
    return NULL;
}

void accel__pinned_free(const struct accel__pinned_device *pinned, void *ptr)
{
    const struct accel__pinned_vendor *vendor = pinned->vendor;
    struct accel__pinned_block *block;
    int result = 0;

    if (ptr == NULL)
        return;
    pthread_mutex_lock(&pinned->blocks->lock);
    block = pinned_take(pinned->blocks, ptr);
    if (block != NULL && block->registered)
        result = vendor->unregister_range(pinned->device, ptr);
    pthread_mutex_unlock(&pinned->blocks->lock);
    if (block == NULL) {
        pinned->services->log(ACCEL_LOG_DEBUG,
                              "%s: host_free of %p, which is not a pinned "
                              "block of the device: left alone",
                              pinned->name, ptr);
        return;
    }
    /* After the unlock: a sticky code marks the context lost, which takes its lock. */
    vendor->ignore(pinned->device, result, vendor->unregister_call);
    munmap(block->ptr, block->bytes);
    free(block);
}

void accel__pinned_unregister_all(const struct accel__pinned_device *pinned)
{
    const struct accel__pinned_vendor *vendor = pinned->vendor;
    char described[256];

    pthread_mutex_lock(&pinned->blocks->lock);
    for (struct accel__pinned_block *block = pinned->blocks->head;
         block != NULL; block = block->next) {
        int result;

        if (!block->registered)
            continue;
        result = vendor->unregister_range(pinned->device, block->ptr);
        /* Refused, the block is still pinned: host_free must still unregister it if the reset fails. */
        if (result == 0) {
            block->registered = false;
            continue;
        }
        vendor->describe(pinned->device, result, described, sizeof(described));
        pinned->services->log(
            ACCEL_LOG_DEBUG, "%s: before the reset, %s of %p failed: %s",
            pinned->name, vendor->unregister_call, block->ptr, described);
    }
    pthread_mutex_unlock(&pinned->blocks->lock);
}

void accel__pinned_register_all(const struct accel__pinned_device *pinned)
{
    const struct accel__pinned_vendor *vendor = pinned->vendor;
    char described[256];

    pthread_mutex_lock(&pinned->blocks->lock);
    for (struct accel__pinned_block *block = pinned->blocks->head;
         block != NULL; block = block->next) {
        int result = vendor->register_range(pinned->device, block->ptr,
                                            block->bytes);

        block->registered = result == 0 || result == vendor->already_registered;
        if (block->registered)
            continue;
        vendor->describe(pinned->device, result, described, sizeof(described));
        pinned->services->log(
            ACCEL_LOG_WARN,
            "%s: after the reset, %s of the %zu-byte pinned "
            "block at %p failed: %s; the block stays valid as pageable "
            "memory, and copies from it are slower",
            pinned->name, vendor->register_call, block->bytes, block->ptr,
            described);
    }
    pthread_mutex_unlock(&pinned->blocks->lock);
}
