/*
 * Pinned host memory that outlives a device reset.
 *
 * The ABI promises that host_alloc memory stays valid, at the same address
 * and with its contents, across device_reset: the application still holds
 * the pointers. A driver's own pinned allocation (cuMemHostAlloc,
 * hipHostMalloc) belongs to the context it was made in, and the context's
 * reset (cuDevicePrimaryCtxReset, hipDeviceReset) frees it. So a GPU
 * plugin maps the pages itself and page-locks them with the driver's
 * registration call: a reset then only drops the registrations, and the
 * plugin registers every block again after it.
 *
 * The blocks are kept once per physical device in the process, in its
 * context state (context_state.h), because a reset through any open of the
 * device, from any host, drops the registrations made by every open.
 *
 * Vendor-neutral: a plugin describes its registration calls once in a
 * struct accel__pinned_vendor.
 */
#ifndef ACCEL_PLUGIN_COMMON_PINNED_HOST_H
#define ACCEL_PLUGIN_COMMON_PINNED_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <accel/driver.h>

struct accel__pinned_block;

/*
 * One device's blocks. Its lock is taken inside a context state's lock
 * (during a reset), never the other way round: nothing that may mark the
 * context lost runs while it is held.
 */
struct accel__pinned_blocks {
    pthread_mutex_t lock;
    struct accel__pinned_block *head;
};

/*
 * A vendor's registration calls. The steps return the vendor's own codes,
 * as int (0 is success), and make the raw call only: they mark nothing, so
 * that a reset may call them under the context state's lock.
 */
struct accel__pinned_vendor {
    const char *register_call;   /* "cuMemHostRegister_v2": for messages */
    const char *unregister_call; /* "cuMemHostUnregister" */
    /* The register call's code for host memory that is out: the host's memory, not the device's. */
    int out_of_memory;
    /* Its code for a range that is registered already: success, for a block registered again. */
    int already_registered;

    /*
     * Page-lock [ptr, ptr + bytes) for every device of the process
     * (portable), with the device current on the calling thread.
     */
    int (*register_range)(accel_drv_device *device, void *ptr, size_t bytes);
    /* Undo register_range for the range that starts at ptr. */
    int (*unregister_range)(accel_drv_device *device, void *ptr);
    /* "NAME (CODE): text" for `result`, for messages. */
    void (*describe)(accel_drv_device *device, int result, char *out,
                     size_t size);
    /* Record `call` failing with `result` as an entry's error, and return its status. */
    accel_status (*error)(accel_drv_device *device, int result, const char *call);
    /* A failure an entry cannot return: logged, and a sticky code marks the context lost. */
    void (*ignore)(accel_drv_device *device, int result, const char *call);
};

/* What the calls below need of the open they are made through. */
struct accel__pinned_device {
    struct accel__pinned_blocks *blocks; /* the physical device's */
    const struct accel__pinned_vendor *vendor;
    accel_drv_device *device; /* handed back to the vendor's steps */
    const struct accel_host_services *services;
    const char *name; /* "cuda:0", for messages */
};

/* Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY when the lock cannot be made. */
accel_status accel__pinned_blocks_init(struct accel__pinned_blocks *blocks);

/*
 * host_alloc: `bytes` of fresh pages, registered and listed, in *out_ptr.
 * The device must be current. Errors: ACCEL_ERR_INVALID_ARGUMENT for zero
 * bytes; ACCEL_ERR_OUT_OF_HOST_MEMORY when the pages cannot be mapped or
 * the driver is out of memory to lock them; else what the vendor's error
 * step makes of the register call's code. On failure nothing stays mapped.
 */
accel_status accel__pinned_alloc(const struct accel__pinned_device *pinned,
                                 size_t bytes, void **out_ptr);

/*
 * host_free: unregister the block at `ptr` (when it is registered) and
 * unmap its pages. The device should be current; the pages go back
 * whatever the driver says. A pointer that is not a block of the device is
 * left alone.
 */
void accel__pinned_free(const struct accel__pinned_device *pinned, void *ptr);

/*
 * Before a context reset, with the old context current: unregister every
 * block. The driver's refusals are only logged (a poisoned context may
 * refuse, and a reset that succeeds drops the registrations anyway), and a
 * block it refused stays marked registered: should the reset fail, the
 * block is still pinned, and host_free unregisters it.
 */
void accel__pinned_unregister_all(const struct accel__pinned_device *pinned);

/*
 * After a context reset, with the new context current: register every
 * block again. A block the driver will not lock stays valid as ordinary
 * (pageable) memory, with a warning; copies from it still work, staged by
 * the driver.
 */
void accel__pinned_register_all(const struct accel__pinned_device *pinned);

#endif /* ACCEL_PLUGIN_COMMON_PINNED_HOST_H */
