/*
 * Modules, kernels and launches.
 *
 * The host keeps a copy of the image each module was loaded from, so that
 * a device reset can load it again behind the same handles, as it rebuilds
 * streams. A launch is checked whole (geometry against the device's limits,
 * arguments against the kernel's signature, every ref) before anything is
 * enqueued; refs become device addresses at submission, under the device
 * lock, so that the pool may move allocations between launches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "device.h"
#include "host.h"
#include "module.h"
#include "recovery.h"
#include "refs.h"
#include "signature.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

#define MODULE_FILE_MAX (1ull << 30)
#define LAUNCH_ARG_BYTES_MAX (32u * 1024u)

struct accel_kernel {
    accel_module *module;
    char *name;
    accel_drv_kernel *drv; /* NULL while the device is lost */
    /*
     * Immutable once accel_kernel_get has returned the kernel: launches read
     * it without the device lock, so a reset checks the signature the plugin
     * gives again against it instead of writing it.
     */
    struct accel_kernel_signature signature;
    struct accel_kernel *next;
};

struct accel_module {
    accel_device *device;
    accel_drv_module *drv; /* NULL while the device is lost */
    void *image;           /* the image loaded, for reloads */
    size_t size;
    /* The bundle's signatures entry (signature.h), or NULL. */
    char *signatures;
    size_t signatures_size;
    struct accel_kernel *kernels;
    /* Serialises accel_kernel_get's plugin calls on the module, which run
     * without the device lock (driver.h: one call at a time per object). */
    pthread_mutex_t get_lock;
    struct accel_module *next;
};

/* Where a bundle's pieces lie in it: the image and the signatures. */
struct image_pick {
    const void *image;
    size_t size;
    const char *signatures; /* NULL when the bundle has none */
    size_t signatures_size;
};

/* The signatures entry of a parsed bundle into `pick`, checked. */
static accel_status signatures_of(const void *data,
                                  const struct accel__bundle_entry *entries,
                                  uint32_t count, struct image_pick *pick)
{
    uint32_t index = 0;
    if (!accel__bundle_find_signatures(entries, count, &index))
        return ACCEL_OK;
    pick->signatures = (const char *)data + entries[index].offset;
    pick->signatures_size = (size_t)entries[index].size;
    return accel__signatures_check(pick->signatures, pick->signatures_size);
}

/*
 * The image in `data` for this device: `data` itself, or one of a bundle,
 * with the bundle's signatures.
 */
static accel_status image_for_device(const accel_device *device, const void *data,
                                     size_t size, struct image_pick *out_pick)
{
    *out_pick = (struct image_pick){.image = data, .size = size};
    if (!accel__bundle_is(data, size))
        return ACCEL_OK;
    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 0, index = 0;
    accel_status status = accel__bundle_parse(data, size, entries, &count);
    if (status == ACCEL_OK)
        status = accel__bundle_pick(entries, count, device->plugin->name,
                                    device->props.arch, &index);
    if (status == ACCEL_OK)
        status = signatures_of(data, entries, count, out_pick);
    if (status != ACCEL_OK)
        return status;
    out_pick->image = (const unsigned char *)data + entries[index].offset;
    out_pick->size = (size_t)entries[index].size;
    accel__log(ACCEL_LOG_DEBUG, "bundle: image %u (%s %s %s) for %s:%u", index,
               entries[index].backend, entries[index].target,
               entries[index].format, device->plugin->name, device->index);
    return ACCEL_OK;
}

/*
 * The plugin's module_load of `module`'s image, without the device lock: a
 * PTX JIT can take seconds, and every other thread of the device would wait
 * for it. The device is borrowed meanwhile, so that a reset waits for the
 * load; a reset that ran when the borrow ended (a recovery put off by this
 * thread) leaves the module in the old context: it is handed back and the
 * load is lost. Returns with the lock held.
 */
static accel_status module_load_unlocked(accel_device *device,
                                         accel_module *module)
{
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status != ACCEL_OK)
        return status;
    uint32_t generation = atomic_load(&device->generation);
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    status = ACCEL__DRV_WAIT(device, module_load, module->image, module->size,
                             &module->drv);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    status = accel__device_check_loss(device, status);
    if (status == ACCEL_OK && atomic_load(&device->generation) != generation) {
        ACCEL__DRV_VOID(device, module_unload, module->drv);
        status = accel__device_gone(device, "accel_module_load");
    }
    return status;
}

/*
 * A device without ACCEL_DEVICE_CAP_KERNELS runs no module, and its plugin
 * may have no kernel entries at all: answered here, before the plugin is
 * called. No module means no kernel and no launch on the device either.
 */
static accel_status kernels_refusal(const accel_device *device)
{
    if ((device->props.caps & ACCEL_DEVICE_CAP_KERNELS) != 0 &&
        ACCEL__DRV_HAS(device, module_load))
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                        "accel_module_load: device %s:%u (%s) runs no kernels "
                        "(%s)",
                        device->plugin->name, device->index, device->props.name,
                        !ACCEL__DRV_HAS(device, module_load)
                            ? "its plugin has no kernel entries"
                            : "it lacks ACCEL_DEVICE_CAP_KERNELS");
}

static accel_status module_load_untraced(accel_device *device, const void *data,
                                         size_t size, accel_module **out_module)
{
    if (out_module != NULL)
        *out_module = NULL;
    if (device == NULL || data == NULL || size == 0 || out_module == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_module_load: NULL argument or empty image");
    if (accel__process_check(device->pid, "accel_module_load") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_status refused = kernels_refusal(device);
    if (refused != ACCEL_OK)
        return refused;
    struct image_pick pick;
    accel_status status = image_for_device(device, data, size, &pick);
    if (status != ACCEL_OK)
        return status;
    accel_module *module = calloc(1, sizeof *module);
    void *copy = malloc(pick.size);
    char *signatures = pick.signatures != NULL ? malloc(pick.signatures_size)
                                               : NULL;
    if (module == NULL || copy == NULL ||
        (pick.signatures != NULL && signatures == NULL)) {
        free(module);
        free(copy);
        free(signatures);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "module");
    }
    memcpy(copy, pick.image, pick.size);
    if (signatures != NULL)
        memcpy(signatures, pick.signatures, pick.signatures_size);
    *module = (accel_module){.device = device,
                             .image = copy,
                             .size = pick.size,
                             .signatures = signatures,
                             .signatures_size = pick.signatures_size};
    pthread_mutex_init(&module->get_lock, NULL);
    status = module_load_unlocked(device, module);
    if (status == ACCEL_OK) {
        module->next = device->modules;
        device->modules = module;
        *out_module = module;
    }
    pthread_mutex_unlock(&device->lock);
    if (status != ACCEL_OK) {
        pthread_mutex_destroy(&module->get_lock);
        free(signatures);
        free(copy);
        free(module);
    }
    return status;
}

accel_status accel_module_load(accel_device *device, const void *data,
                               size_t size, accel_module **out_module)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = module_load_untraced(device, data, size, out_module);
    return accel__trace_end(traced, status, 0);
}

/* Read a whole file of at most MODULE_FILE_MAX bytes. */
static accel_status read_file(const char *path, void **out_data, size_t *out_size)
{
    *out_data = NULL;
    *out_size = 0;
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return accel__error(errno == ENOENT ? ACCEL_ERR_NOT_FOUND
                                            : ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: %s", path, strerror(errno));
    accel_status status = ACCEL_OK;
    long length = -1;
    if (fseek(file, 0, SEEK_END) == 0)
        length = ftell(file);
    if (length <= 0 || (unsigned long long)length > MODULE_FILE_MAX ||
        fseek(file, 0, SEEK_SET) != 0) {
        status = accel__error(ACCEL_ERR_MODULE,
                              "%s: not a readable file of 1 byte to 1 GiB", path);
        goto done;
    }
    void *data = malloc((size_t)length);
    if (data == NULL) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "%s", path);
        goto done;
    }
    if (fread(data, 1, (size_t)length, file) != (size_t)length) {
        free(data);
        status = accel__error(ACCEL_ERR_MODULE, "%s: short read", path);
        goto done;
    }
    *out_data = data;
    *out_size = (size_t)length;
done:
    fclose(file);
    return status;
}

static accel_status module_load_file_untraced(accel_device *device,
                                              const char *path,
                                              accel_module **out_module)
{
    if (out_module != NULL)
        *out_module = NULL;
    if (path == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_module_load_file: NULL path");
    void *data = NULL;
    size_t size = 0;
    accel_status status = read_file(path, &data, &size);
    if (status == ACCEL_OK)
        status = accel_module_load(device, data, size, out_module);
    free(data);
    return status;
}

accel_status accel_module_load_file(accel_device *device, const char *path,
                                    accel_module **out_module)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = module_load_file_untraced(device, path, out_module);
    return accel__trace_end(traced, status, 0);
}

/* Free a module's host handle: its kernels, its image, itself. */
static void module_free(accel_module *module)
{
    while (module->kernels != NULL) {
        struct accel_kernel *next = module->kernels->next;
        free(module->kernels->name);
        free(module->kernels);
        module->kernels = next;
    }
    pthread_mutex_destroy(&module->get_lock);
    free(module->signatures);
    free(module->image);
    free(module);
}

static void module_unload_untraced(accel_module *module)
{
    if (module == NULL || module->device->pid != accel__pid)
        return;
    accel_device *device = module->device;
    /* Launches of its kernels may still be queued: let them finish. */
    accel_status synced = accel_device_sync(device);
    pthread_mutex_lock(&device->lock);
    /* A lost device's sync fails at once, but a kernel may still be running
     * its code: each stream is waited for here, as a reset does. */
    if (synced != ACCEL_OK)
        accel__streams_wait_all(device);
    for (accel_module **p = &device->modules; *p != NULL; p = &(*p)->next) {
        if (*p == module) {
            *p = module->next;
            break;
        }
    }
    if (module->drv != NULL)
        ACCEL__DRV_VOID(device, module_unload, module->drv);
    pthread_mutex_unlock(&device->lock);
    module_free(module);
}

void accel_module_unload(accel_module *module)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    module_unload_untraced(module);
    accel__trace_end(traced, ACCEL_OK, 0);
}

/*
 * A signature as the plugin gave it, checked and completed from the
 * module's bundle signatures: the one launches are checked against.
 */
static accel_status signature_settle(const accel_module *module, const char *name,
                                     struct accel_kernel_signature *signature)
{
    if (signature->param_count > ACCEL_KERNEL_MAX_PARAMS &&
        signature->param_count != ACCEL_PARAM_COUNT_UNKNOWN)
        return accel__error(ACCEL_ERR_PLUGIN_ABI,
                            "kernel_get: '%s' has %u parameters, more than %d",
                            name, signature->param_count,
                            ACCEL_KERNEL_MAX_PARAMS);
    accel_status status = accel__signature_check(name, signature);
    if (status == ACCEL_OK)
        status = accel__signature_complete(
            module->signatures, module->signatures_size, name, signature);
    return status;
}

/*
 * The plugin's kernel_get, without the device lock: a lazy load (the
 * driver's first cuModuleGetFunction of a module may load its code) would
 * hold up every other thread of the device. Borrowed as module_load_unlocked
 * is; a reset meanwhile leaves the kernel in the old context, and the get is
 * lost. Called with the lock held and the module's get_lock; returns with
 * the lock held.
 */
static accel_status kernel_get_unlocked(accel_device *device,
                                        accel_module *module,
                                        struct accel_kernel *kernel)
{
    uint32_t generation = atomic_load(&device->generation);
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    accel_status status = ACCEL__DRV_WAIT(device, kernel_get, module->drv,
                                          kernel->name, &kernel->drv,
                                          &kernel->signature);
    pthread_mutex_lock(&device->lock);
    accel__borrow_end(device);
    status = accel__device_check_loss(device, status);
    if (status == ACCEL_OK && atomic_load(&device->generation) != generation)
        status = accel__device_gone(device, "accel_kernel_get");
    if (status == ACCEL_OK)
        status = signature_settle(module, kernel->name, &kernel->signature);
    return status;
}

static accel_status kernel_get_untraced(accel_module *module, const char *name,
                                        accel_kernel **out_kernel)
{
    if (out_kernel != NULL)
        *out_kernel = NULL;
    if (module == NULL || name == NULL || out_kernel == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_kernel_get: NULL argument");
    accel_device *device = module->device;
    if (accel__process_check(device->pid, "accel_kernel_get") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    /* Before the device lock: gets of one module wait for each other only. */
    pthread_mutex_lock(&module->get_lock);
    pthread_mutex_lock(&device->lock);
    accel_status status = ACCEL_OK;
    struct accel_kernel *kernel = module->kernels;
    while (kernel != NULL && strcmp(kernel->name, name) != 0)
        kernel = kernel->next;
    if (kernel != NULL)
        goto done;
    status = accel__device_usable(device);
    if (status == ACCEL_OK && module->drv == NULL)
        status = accel__device_gone(device, "accel_kernel_get");
    if (status != ACCEL_OK)
        goto done;
    kernel = calloc(1, sizeof *kernel);
    char *copy = strdup(name);
    if (kernel == NULL || copy == NULL) {
        free(kernel);
        free(copy);
        kernel = NULL;
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "kernel");
        goto done;
    }
    *kernel = (struct accel_kernel){.module = module, .name = copy};
    status = kernel_get_unlocked(device, module, kernel);
    if (status != ACCEL_OK) {
        free(copy);
        free(kernel);
        kernel = NULL;
        goto done;
    }
    kernel->next = module->kernels;
    module->kernels = kernel;
done:
    pthread_mutex_unlock(&device->lock);
    pthread_mutex_unlock(&module->get_lock);
    *out_kernel = kernel;
    return status;
}

accel_status accel_kernel_get(accel_module *module, const char *name,
                              accel_kernel **out_kernel)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = kernel_get_untraced(module, name, out_kernel);
    return accel__trace_end(traced, status, 0);
}

/* ---- launch ---- */

static accel_status check_geometry(const accel_device *device, accel_dim3 grid,
                                   accel_dim3 block, uint32_t shared_bytes)
{
    const struct accel_device_props *p = &device->props;
    const uint32_t g[3] = {grid.x, grid.y, grid.z},
                   b[3] = {block.x, block.y, block.z};
    for (int i = 0; i < 3; i++) {
        if (g[i] == 0 || b[i] == 0)
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_launch: grid %ux%ux%u, block %ux%ux%u: no "
                "dimension may be 0",
                g[0], g[1], g[2], b[0], b[1], b[2]);
        if (g[i] > p->max_grid_dim[i] || b[i] > p->max_block_dim[i])
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_launch: dimension %c of grid %u or block %u "
                "passes the device's %u or %u",
                "xyz"[i], g[i], b[i], p -> max_grid_dim[i],
                p -> max_block_dim[i]);
    }
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (threads > p->max_threads_per_block)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_launch: %llu threads per block, the device "
                            "allows %u",
                            (unsigned long long)threads,
                            p->max_threads_per_block);
    if (shared_bytes > p->max_shared_bytes)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "accel_launch: %u bytes of shared memory, the device "
            "allows %u",
            shared_bytes, p->max_shared_bytes);
    return ACCEL_OK;
}

static accel_status check_args(const struct accel_kernel *kernel,
                               const accel_arg *args, uint32_t nargs)
{
    const struct accel_kernel_signature *sig = &kernel->signature;
    if (nargs > ACCEL_KERNEL_MAX_PARAMS || (nargs > 0 && args == NULL))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_launch: %u arguments (at most %d, and args "
                            "may not be NULL)",
                            nargs, ACCEL_KERNEL_MAX_PARAMS);
    if (sig->param_count != ACCEL_PARAM_COUNT_UNKNOWN && nargs != sig->param_count)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "accel_launch: kernel '%s' takes %u arguments, not %u",
            kernel->name, sig->param_count, nargs);
    uint64_t total = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        const accel_arg *a = &args[i];
        uint64_t size = a->kind == ACCEL_ARG_KIND_REF ? sizeof(uint64_t)
                                                      : a->size;
        if (a->kind == ACCEL_ARG_KIND_VALUE &&
            (a->value == NULL || a->size == 0 || a->align == 0 ||
             (a->align & (a->align - 1)) != 0 || a->align > 4096))
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_launch: argument %u: a value needs bytes, "
                "a size and a power-of-two alignment up to 4096",
                i);
        if (a->kind == ACCEL_ARG_KIND_INLINE &&
            (a->size == 0 || a->size > ACCEL_ARG_INLINE_MAX || a->align == 0 ||
             (a->align & (a->align - 1)) != 0 || a->align > 8))
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_launch: argument %u: an inline value holds 1 to %d "
                "bytes with a power-of-two alignment up to 8",
                i, ACCEL_ARG_INLINE_MAX);
        if (a->kind != ACCEL_ARG_KIND_REF && a->kind != ACCEL_ARG_KIND_VALUE &&
            a->kind != ACCEL_ARG_KIND_INLINE)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "accel_launch: argument %u has kind %d", i,
                                (int)a->kind);
        accel_status typed = accel__signature_check_kind(kernel->name, sig, i, a);
        if (typed != ACCEL_OK)
            return typed;
        if (sig->param_count != ACCEL_PARAM_COUNT_UNKNOWN &&
            sig->param_sizes[i] != 0 && sig->param_sizes[i] != size)
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_launch: argument %u of '%s' is %llu bytes, "
                "the kernel takes %u",
                i, kernel->name, (unsigned long long)size, sig->param_sizes[i]);
        total += size;
    }
    if (total > LAUNCH_ARG_BYTES_MAX)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_launch: %llu bytes of arguments, at most %u",
                            (unsigned long long)total, LAUNCH_ARG_BYTES_MAX);
    return ACCEL_OK;
}

/*
 * Resolve the ref arguments, each checked against the element type of its
 * parameter once it is known to be live (a freed ref is a freed ref, whatever
 * its type); lock held.
 */
static accel_status resolve_args(accel_stream *stream,
                                 const struct accel_kernel *kernel,
                                 const accel_arg *args, uint32_t nargs,
                                 uint64_t *addresses, void **pointers,
                                 size_t *sizes)
{
    for (uint32_t i = 0; i < nargs; i++) {
        if (args[i].kind == ACCEL_ARG_KIND_VALUE) {
            pointers[i] = (void *)args[i].value;
            sizes[i] = (size_t)args[i].size;
            continue;
        }
        if (args[i].kind == ACCEL_ARG_KIND_INLINE) {
            pointers[i] = (void *)&args[i].ref;
            sizes[i] = (size_t)args[i].size;
            continue;
        }
        struct accel__slot *slot = NULL;
        accel_status status = accel__ref_resolve(stream->device, args[i].ref,
                                                 &slot);
        if (status != ACCEL_OK)
            return accel__error(status, "accel_launch: argument %u: %s", i,
                                accel_last_error());
        status = accel__signature_check_ref_type(
            kernel->name, &kernel->signature, i, slot->type);
        if (status != ACCEL_OK)
            return status;
        addresses[i] = slot->slice.address;
        pointers[i] = &addresses[i];
        sizes[i] = sizeof(uint64_t);
        /* Marked before the launch is known to succeed: a fence recorded
         * for nothing costs a little, one missing frees too early. */
        slot->lanes |= accel__lane_bit(stream);
    }
    return ACCEL_OK;
}

static accel_status launch_untraced(accel_stream *stream, accel_kernel *kernel,
                                    accel_dim3 grid, accel_dim3 block,
                                    uint32_t shared_bytes,
                                    const accel_arg *args, uint32_t nargs)
{
    if (stream == NULL || kernel == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_launch: NULL stream or kernel");
    accel_device *device = stream->device;
    if (kernel->module->device != device)
        return accel__error(
            ACCEL_ERR_DEVICE_MISMATCH,
            "accel_launch: the kernel was loaded on another device");
    accel_status status = check_geometry(device, grid, block, shared_bytes);
    if (status == ACCEL_OK)
        status = check_args(kernel, args, nargs);
    if (status != ACCEL_OK)
        return status;
    uint64_t addresses[ACCEL_KERNEL_MAX_PARAMS];
    void *pointers[ACCEL_KERNEL_MAX_PARAMS];
    size_t sizes[ACCEL_KERNEL_MAX_PARAMS];
    struct accel_launch_config config = {
        .grid = {grid.x, grid.y, grid.z},
        .block = {block.x, block.y, block.z},
        .shared_bytes = shared_bytes,
    };
    status = accel__submit_begin(stream, "accel_launch");
    if (status != ACCEL_OK)
        return status;
    if (kernel->drv == NULL)
        status = accel__device_gone(device, "accel_launch");
    if (status == ACCEL_OK)
        status = resolve_args(stream, kernel, args, nargs, addresses, pointers,
                              sizes);
    if (status == ACCEL_OK)
        status = ACCEL__DRV_COMMAND(
            stream,
            (&(struct accel__trace_command){.kind = ACCEL__TRACE_LAUNCH,
                                            .kernel = kernel->name,
                                            .grid = {grid.x, grid.y, grid.z},
                                            .block = {block.x, block.y, block.z}}),
            launch, kernel->drv, &config, pointers, sizes, nargs);
    return accel__submit_end(stream, status);
}

accel_status accel_launch(accel_stream *stream, accel_kernel *kernel,
                          accel_dim3 grid, accel_dim3 block,
                          uint32_t shared_bytes, const accel_arg *args,
                          uint32_t nargs)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = launch_untraced(stream, kernel, grid, block,
                                          shared_bytes, args, nargs);
    return accel__trace_end(traced, status, 0);
}

/* ---- reset ---- */

void accel__modules_release(accel_device *device)
{
    for (accel_module *m = device->modules; m != NULL; m = m->next) {
        if (m->drv != NULL)
            ACCEL__DRV_VOID(device, module_unload, m->drv);
        m->drv = NULL;
        for (struct accel_kernel *k = m->kernels; k != NULL; k = k->next)
            k->drv = NULL;
    }
}

/* Look a kernel up again in its reloaded module; lock held. */
static accel_status kernel_rebuild(accel_device *device,
                                   struct accel_kernel *kernel)
{
    /* The signature goes to a copy: launches read the kernel's own without
     * the lock, and it must not change under them. */
    struct accel_kernel_signature signature;
    memset(&signature, 0, sizeof signature);
    accel_status status = ACCEL__DRV_CALL(device, kernel_get,
                                          kernel->module->drv, kernel->name,
                                          &kernel->drv, &signature);
    if (status == ACCEL_OK)
        status = signature_settle(kernel->module, kernel->name, &signature);
    if (status == ACCEL_OK &&
        memcmp(&signature, &kernel->signature, sizeof signature) != 0)
        status = accel__error(
            ACCEL_ERR_PLUGIN_ABI,
            "kernel_get: '%s' has another signature after the "
            "reset than the same image gave before",
            kernel->name);
    return status;
}

accel_status accel__modules_rebuild(accel_device *device)
{
    for (accel_module *m = device->modules; m != NULL; m = m->next) {
        accel_status status = ACCEL__DRV_CALL(device, module_load, m->image,
                                              m->size, &m->drv);
        for (struct accel_kernel *k = m->kernels;
             status == ACCEL_OK && k != NULL; k = k->next)
            status = kernel_rebuild(device, k);
        if (status != ACCEL_OK)
            return status;
    }
    return ACCEL_OK;
}

void accel__modules_free(accel_device *device)
{
    while (device->modules != NULL) {
        accel_module *next = device->modules->next;
        /* The plugin's modules are gone; only the host's handles remain. */
        module_free(device->modules);
        device->modules = next;
    }
}
