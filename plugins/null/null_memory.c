/*
 * Device memory and pinned host memory. The CPU device's memory is host
 * memory, so both are aligned heap blocks: a device address is the block's
 * host address, which is what lets the host copy with memcpy
 * (ACCEL_DEVICE_CAP_HOST_VISIBLE).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "null_check.h"
#include "null_os.h"
#include "null_plugin.h"

/*
 * Blocks start on a page. A GPU allocator guarantees 256 bytes; a page
 * also keeps two blocks at the same offset within their pages, which
 * glibc's memcpy needs for full speed on large copies (measured: 3.4
 * against 11.8 GB/s at 256 MiB when the offsets differ). The header takes
 * a page in front of the data, a small cost beside the host pool's pages
 * of 2 MiB and more.
 */
#define NULL_MEM_ALIGN 4096u

/*
 * The header in front of every block. It is padded to NULL_MEM_ALIGN so
 * that the bytes handed out stay aligned, and it links the block into its
 * device's list, so that device_close can free what the host left.
 */
struct accel_drv_mem {
    struct null_list link;
    uint64_t bytes;
    /* In checked mode (null_check.h) the data is a heap block of its own,
     * with ASan's red zones on both sides, and the header a block apart. */
    void *checked;
};

_Static_assert(sizeof(struct accel_drv_mem) <= NULL_MEM_ALIGN,
               "the block header must fit in the alignment padding");

static void *null_block_data(accel_drv_mem *block)
{
    return block->checked != NULL ? block->checked
                                  : (char *)block + NULL_MEM_ALIGN;
}

static accel_drv_mem *null_block_of_data(void *data)
{
    return (accel_drv_mem *)(void *)((char *)data - NULL_MEM_ALIGN);
}

/*
 * Allocate a tracked block of `bytes`. `oom` is the status for "does not
 * fit", which differs between device and host memory; `what` names the
 * entry in error details.
 */
static accel_status null_block_alloc(accel_drv_device *device,
                                     struct null_list *list, uint64_t bytes,
                                     accel_status oom, const char *what,
                                     accel_drv_mem **out_block)
{
    const struct accel_host_services *services = null_services(device);
    uint64_t total = device->plugin->props.total_memory;
    void *base;
    int rc;

    *out_block = NULL;
    if (bytes == 0)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "%s: a size of zero bytes", what);
    /*
     * Refused before malloc is asked: an absurd size is a plain "out of
     * memory" here, but under AddressSanitizer malloc itself would abort.
     */
    if (bytes > total || bytes > SIZE_MAX - NULL_MEM_ALIGN)
        return services->set_error(oom,
                                   "%s: %" PRIu64
                                   " bytes is more than the device's "
                                   "%" PRIu64 " bytes of memory",
                                   what, bytes, total);
    rc = posix_memalign(&base, NULL_MEM_ALIGN, NULL_MEM_ALIGN + (size_t)bytes);
    if (rc != 0)
        return services->set_error(
            oom, "%s: posix_memalign of %" PRIu64 " bytes failed: %s", what,
            bytes, null_errno_name(rc));
    *out_block = base;
    (*out_block)->bytes = bytes;
    (*out_block)->checked = NULL;
    accel__null_device_track(device, list, &(*out_block)->link);
    return ACCEL_OK;
}

/*
 * A checked device allocation: exactly `bytes` from ASan's allocator, which
 * puts red zones on both sides and quarantines it when freed. Aligned as
 * driver.h promises, not to a page: a page would leave slack past the end.
 */
static accel_status null_block_alloc_checked(accel_drv_device *device,
                                             uint64_t bytes,
                                             accel_drv_mem **out_block)
{
    const struct accel_host_services *services = null_services(device);
    accel_drv_mem *block;
    void *data;
    int rc;

    *out_block = NULL;
    if (bytes == 0 || bytes > device->plugin->props.total_memory)
        return services->set_error(bytes == 0 ? ACCEL_ERR_INVALID_ARGUMENT
                                              : ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
                                   "mem_alloc: %" PRIu64
                                   " bytes: zero, or more than the "
                                   "device's memory",
                                   bytes);
    block = calloc(1, sizeof(*block));
    if (block == NULL)
        return services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "mem_alloc: calloc of a block header failed");
    rc = posix_memalign(&data, ACCEL_DRIVER_MEM_ALIGNMENT, (size_t)bytes);
    if (rc != 0) {
        free(block);
        return services->set_error(ACCEL_ERR_OUT_OF_DEVICE_MEMORY,
                                   "mem_alloc: posix_memalign of %" PRIu64
                                   " bytes failed: %s",
                                   bytes, null_errno_name(rc));
    }
    block->bytes = bytes;
    block->checked = data;
    accel__null_check_track(data, bytes,
                            device->plugin->check == NULL_CHECK_INIT);
    accel__null_device_track(device, &device->mems, &block->link);
    *out_block = block;
    return ACCEL_OK;
}

/* Free a block that is off its device's list. */
static void null_block_release(accel_drv_mem *block)
{
    if (block->checked != NULL) {
        accel__null_check_forget(block->checked);
        free(block->checked);
    }
    free(block);
}

static void null_block_free(accel_drv_device *device, accel_drv_mem *block)
{
    accel__null_device_untrack(device, &block->link);
    null_block_release(block);
}

accel_status accel__null_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                   accel_drv_mem **out_mem, uint64_t *out_address)
{
    accel_drv_mem *block;
    accel_status status;

    *out_mem = NULL;
    *out_address = 0;
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_mem_alloc);
    if (status != ACCEL_OK)
        return status;
    if (device->plugin->check != NULL_CHECK_OFF)
        status = null_block_alloc_checked(device, bytes, &block);
    else
        status = null_block_alloc(device, &device->mems, bytes,
                                  ACCEL_ERR_OUT_OF_DEVICE_MEMORY, "mem_alloc",
                                  &block);
    if (status != ACCEL_OK)
        return status;
    *out_mem = block;
    *out_address = (uint64_t)(uintptr_t)null_block_data(block);
    return ACCEL_OK;
}

void accel__null_mem_free(accel_drv_device *device, accel_drv_mem *mem)
{
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_mem_free);
    if (mem != NULL)
        null_block_free(device, mem);
}

accel_status accel__null_host_alloc(accel_drv_device *device, size_t bytes,
                                    void **out_ptr)
{
    accel_drv_mem *block;
    accel_status status;

    *out_ptr = NULL;
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_host_alloc);
    if (status != ACCEL_OK)
        return status;
    status = null_block_alloc(device, &device->host_blocks, bytes,
                              ACCEL_ERR_OUT_OF_HOST_MEMORY, "host_alloc", &block);
    if (status != ACCEL_OK)
        return status;
    *out_ptr = null_block_data(block);
    return ACCEL_OK;
}

void accel__null_host_free(accel_drv_device *device, void *ptr)
{
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_host_free);
    if (ptr != NULL)
        null_block_free(device, null_block_of_data(ptr));
}

/* The block is off its list already: only the memory is left to free. */
static void null_block_free_link(struct null_list *link)
{
    null_block_release(null_container_of(link, accel_drv_mem, link));
}

uint32_t accel__null_memory_release_all(accel_drv_device *device)
{
    return null_list_drain(&device->mems, null_block_free_link) +
           null_list_drain(&device->host_blocks, null_block_free_link);
}
