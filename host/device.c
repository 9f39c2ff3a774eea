/*
 * Devices: opening one from a plugin, its generation, loss and reset.
 *
 * The device lock guards the ref table, the lists of streams, events and
 * pinned blocks, and the lost flag. The generation only moves under the
 * lock, and ref checks read it under the lock too; it is atomic for the
 * readers without the lock: accel_device_info_get, and accel_device_reset's
 * log line. What follows a loss (counting it, rebuilding the device by
 * itself) is in recovery.c.
 */
#include <stdlib.h>
#include <string.h>

#include "completion.h"
#include "device.h"
#include "drop.h"
#include "host.h"
#include "loader.h"
#include "module.h"
#include "pool.h"
#include "recovery.h"
#include "refs.h"
#include "sized.h"
#include "staging.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

/* Device ids are unique in the process, so that a ref from one host's
 * device is never taken for another's. 0 is never an id. */
static _Atomic uint32_t next_device_id = 1;

static void host_link(accel_host *host, accel_device *device)
{
    pthread_mutex_lock(&host->lock);
    device->next = host->devices;
    host->devices = device;
    pthread_mutex_unlock(&host->lock);
}

static void host_unlink(accel_host *host, accel_device *device)
{
    pthread_mutex_lock(&host->lock);
    for (accel_device **p = &host->devices; *p != NULL; p = &(*p)->next) {
        if (*p == device) {
            *p = device->next;
            break;
        }
    }
    pthread_mutex_unlock(&host->lock);
}

/*
 * The plugin's description of device `index`, its strings terminated. The
 * fields of a minor newer than the plugin's are left zero: a 1.0 plugin
 * knows nothing of them, whatever it wrote there.
 */
accel_status accel__plugin_device_props(struct accel__plugin *plugin,
                                        uint32_t index,
                                        struct accel_device_props *out_props)
{
    memset(out_props, 0, sizeof *out_props);
    accel_status status = accel__from_plugin(
        plugin->drv.device_info(plugin->state, index, out_props),
        "device_info");
    if (plugin->drv.abi_minor < 1)
        memset((char *)out_props + ACCEL_DEVICE_PROPS_V1_0_SIZE, 0,
               sizeof *out_props - ACCEL_DEVICE_PROPS_V1_0_SIZE);
    out_props->name[sizeof out_props->name - 1] = '\0';
    out_props->arch[sizeof out_props->arch - 1] = '\0';
    out_props->uuid[sizeof out_props->uuid - 1] = '\0';
    out_props->pci_bus_id[sizeof out_props->pci_bus_id - 1] = '\0';
    return status;
}

/* The loaded plugin of that name with device `index`, or why not. */
static accel_status plugin_with_device(accel_host *host,
                                       const char *plugin_name, uint32_t index,
                                       struct accel__plugin **out_plugin)
{
    *out_plugin = NULL;
    struct accel__plugin *plugin = accel__catalog_find(&host->catalog,
                                                       plugin_name);
    for (size_t i = 0; plugin == NULL && i < host->catalog.count; i++) {
        /* Found but refused: say why, rather than "not found". */
        struct accel__plugin *refused = &host->catalog.plugins[i];
        if (refused->name != NULL && strcmp(refused->name, plugin_name) == 0)
            return accel__error(ACCEL_ERR_NO_DEVICE,
                                "plugin '%s' was rejected: %s", plugin_name,
                                refused->reason ? refused->reason : "");
    }
    if (plugin == NULL)
        return accel__error(ACCEL_ERR_NOT_FOUND,
                            "no plugin named '%s' was found", plugin_name);
    if (plugin->state_kind != ACCEL_PLUGIN_LOADED)
        return accel__error(ACCEL_ERR_NO_DEVICE, "plugin '%s' is %s: %s",
                            plugin_name,
                            accel_plugin_state_name(plugin->state_kind),
                            plugin->reason ? plugin->reason : "");
    if (index >= plugin->device_count)
        return accel__error(ACCEL_ERR_NO_DEVICE,
                            "plugin '%s': device index %u is out of range "
                            "(%u device(s))",
                            plugin_name, index, plugin->device_count);
    *out_plugin = plugin;
    return ACCEL_OK;
}

static accel_status
host_device_props_untraced(accel_host *host, const char *plugin_name,
                           uint32_t index, struct accel_device_props *out_props)
{
    if (out_props != NULL)
        memset(out_props, 0, sizeof *out_props);
    if (host == NULL || plugin_name == NULL || out_props == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_device_props: NULL argument");
    struct accel__plugin *plugin = NULL;
    accel_status status = accel__process_check(host->pid,
                                               "accel_host_device_props");
    if (status == ACCEL_OK)
        status = plugin_with_device(host, plugin_name, index, &plugin);
    if (status == ACCEL_OK)
        status = accel__plugin_device_props(plugin, index, out_props);
    return status;
}

accel_status accel_host_device_props(accel_host *host, const char *plugin_name,
                                     uint32_t index,
                                     struct accel_device_props *out_props)
{
    uint64_t traced = accel__trace_now();
    accel_status status = host_device_props_untraced(host, plugin_name, index,
                                                     out_props);
    return accel__trace_end("accel_host_device_props", traced, status, 0);
}

static accel_status device_open_untraced(accel_host *host,
                                         const char *plugin_name, uint32_t index,
                                         accel_device **out_device)
{
    if (out_device == NULL || host == NULL || plugin_name == NULL) {
        if (out_device != NULL)
            *out_device = NULL;
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_open: NULL argument");
    }
    *out_device = NULL;
    struct accel__plugin *plugin = NULL;
    accel_status status = accel__process_check(host->pid, "accel_device_open");
    if (status == ACCEL_OK)
        status = plugin_with_device(host, plugin_name, index, &plugin);
    if (status != ACCEL_OK)
        return status;

    accel_device *device = calloc(1, sizeof *device);
    if (device == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_device");
    device->host = host;
    device->pid = host->pid;
    device->plugin = plugin;
    device->drv = &plugin->drv;
    device->index = index;
    device->id = atomic_fetch_add(&next_device_id, 1);
    atomic_init(&device->generation, 1);
    atomic_init(&device->lost, false);
    atomic_init(&device->resetting, false);
    atomic_init(&device->lockless_calls, 0);
    atomic_init(&device->recovery.unrecoverable, false);
    accel__refs_init(&device->refs);
    accel__pool_init(&device->pool);
    device->staging.chunk = accel__staging_chunk_from_env();

    status = accel__plugin_device_props(plugin, index, &device->props);
    if (status != ACCEL_OK)
        goto fail_info;
    accel__pool_set_device_memory(&device->pool, device->props.total_memory);
    accel__pool_set_own_allocations(
        &device->pool,
        (device->props.caps & ACCEL_DEVICE_CAP_OWN_ALLOCATIONS) != 0);
    if (pthread_mutex_init(&device->lock, NULL) != 0) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "pthread_mutex_init");
        goto fail_info;
    }
    if (pthread_cond_init(&device->staging.returned, NULL) != 0) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "pthread_cond_init");
        goto fail_cond;
    }
    status = accel__completion_init(&device->completion);
    if (status != ACCEL_OK)
        goto fail_completion;
    status = accel__comm_device_init(device);
    if (status != ACCEL_OK)
        goto fail_comm;
    status = accel__from_plugin(
        device->drv->device_open(plugin->state, index, &device->drv_device),
        "device_open");
    if (status == ACCEL_OK && device->drv_device == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "device_open succeeded without a device");
    if (status != ACCEL_OK)
        goto fail_open;
    host_link(host, device);
    accel__log(ACCEL_LOG_INFO, "opened %s:%u (%s), device id %u", plugin_name,
               index, device->props.name, device->id);
    *out_device = device;
    return ACCEL_OK;

fail_open:
    accel__comm_device_deinit(device);
fail_comm:
    accel__completion_deinit(&device->completion);
fail_completion:
    pthread_cond_destroy(&device->staging.returned);
fail_cond:
    pthread_mutex_destroy(&device->lock);
fail_info:
    accel__refs_deinit(&device->refs);
    free(device);
    return status;
}

accel_status accel_device_open(accel_host *host, const char *plugin_name,
                               uint32_t index, accel_device **out_device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_open_untraced(host, plugin_name, index,
                                               out_device);
    return accel__trace_end("accel_device_open", traced, status, 0);
}

static void host_blocks_release(accel_device *device)
{
    for (size_t i = 0; i < device->host_memory.count; i++)
        device->drv->host_free(device->drv_device,
                               device->host_memory.list[i].ptr);
    free(device->host_memory.list);
    device->host_memory.list = NULL;
    device->host_memory.count = 0;
    device->host_memory.capacity = 0;
}

/*
 * Wait for every stream, then give back everything the plugin holds for the
 * device except the device itself: what a close and a reset both need.
 * Failures are ignored: on a lost device nothing completes, and the memory
 * goes back regardless. Lock held.
 */
static void device_empty(accel_device *device)
{
    accel__streams_wait_all(device);
    accel__trace_device_empty(device);
    if (device->own.stream != NULL) {
        device->drv->stream_sync(device->drv_device, device->own.stream);
        device->drv->stream_destroy(device->drv_device, device->own.stream);
        device->own.stream = NULL;
    }
    if (device->own.relocated != NULL) {
        device->drv->event_destroy(device->drv_device, device->own.relocated);
        device->own.relocated = NULL;
    }
    accel__staging_release(device);
    accel__modules_release(device);
    accel__streams_release(device);
    /* Callbacks on the streams just dropped will never be reached, nor
     * collectives' gates; their pins go before the memory does. */
    accel__completion_abandon(&device->completion);
    accel__comm_abandon(device);
    accel__comm_reap(device);
    accel__refs_release_all(device);
    accel__events_release(device);
}

static void device_close_untraced(accel_device *device)
{
    /* A fork's child leaves the parent's device alone (see the host's). */
    if (device == NULL || device->pid != accel__pid)
        return;
    host_unlink(device->host, device);
    /* Communicators still live are aborted and destroyed (logged). */
    accel__comm_device_close(device);
    accel__completion_quiesce(&device->completion);
    pthread_mutex_lock(&device->lock);
    device_empty(device);
    accel__trace_device_close(device);
    while (device->queues.list != NULL) {
        accel_stream *next = device->queues.list->next;
        free(device->queues.list);
        device->queues.list = next;
    }
    while (device->queues.events != NULL) {
        accel_event *next = device->queues.events->next;
        free(device->queues.events);
        device->queues.events = next;
    }
    host_blocks_release(device);
    accel__modules_free(device);
    device->drv->device_close(device->drv_device);
    pthread_mutex_unlock(&device->lock);
    /* Every stream is gone: callbacks not yet run are delivered now. */
    accel__completion_deinit(&device->completion);
    accel__comm_device_deinit(device);
    accel__refs_deinit(&device->refs);
    pthread_cond_destroy(&device->staging.returned);
    pthread_mutex_destroy(&device->lock);
    free(device);
}

void accel_device_close(accel_device *device)
{
    uint64_t traced = accel__trace_now();
    device_close_untraced(device);
    accel__trace_end("accel_device_close", traced, ACCEL_OK, 0);
}

#define INFO_MIN ACCEL__STRUCT_MIN(accel_device_info, plugin)

static accel_status device_info_get_untraced(const accel_device *device,
                                             accel_device_info *out_info,
                                             size_t info_size)
{
    if (out_info != NULL && info_size >= INFO_MIN)
        memset(out_info, 0, info_size);
    if (device == NULL || out_info == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_info_get: NULL argument");
    accel_device_info info = {
        .plugin = device->plugin->name,
        .index = device->index,
        .id = device->id,
        .generation = atomic_load(&device->generation),
        .props = device->props,
    };
    return accel__struct_out(out_info, info_size, &info, sizeof info, INFO_MIN,
                             "accel_device_info_get");
}

accel_status accel_device_info_get_sized(const accel_device *device,
                                         accel_device_info *out_info,
                                         size_t info_size)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_info_get_untraced(device, out_info, info_size);
    return accel__trace_end("accel_device_info_get", traced, status, 0);
}

/* True when the device was live until now. */
static bool mark_lost(accel_device *device)
{
    /* A loss met while a reset is under way is the reset's to mend: it is
     * neither counted nor recovered a second time. */
    if (atomic_load(&device->lost) || atomic_load(&device->resetting))
        return false;
    /* Bumping the generation makes every ref minted before stale at once. */
    atomic_store(&device->lost, true);
    atomic_fetch_add(&device->generation, 1);
    accel__log(ACCEL_LOG_WARN, "device %s:%u (id %u) is lost",
               device->plugin->name, device->index, device->id);
    accel__trace_device_mark(device, "lost", 0);
    return true;
}

accel_status accel__device_check_loss(accel_device *device, accel_status status)
{
    if (status == ACCEL_OK || status == ACCEL_NOT_READY)
        return status;
    if (status != ACCEL_ERR_DEVICE_LOST &&
        device->drv->device_status(device->drv_device) != ACCEL_ERR_DEVICE_LOST)
        return status;
    accel__error_keep(ACCEL_ERR_DEVICE_LOST, "device_status");
    if (mark_lost(device)) {
        accel__recovery_on_loss(device);
        /* The loss that spent the budget says so by its code, not only in
         * its detail: "rebuilt, retry" and "given up" differ. */
        if (atomic_load(&device->recovery.unrecoverable))
            return ACCEL_ERR_UNRECOVERABLE;
    } else if (atomic_load(&device->recovery.unrecoverable)) {
        return accel__device_gone(device, NULL);
    }
    return ACCEL_ERR_DEVICE_LOST;
}

accel_status accel__device_check_loss_unlocked(accel_device *device,
                                               accel_status status)
{
    if (status == ACCEL_OK || status == ACCEL_NOT_READY)
        return status;
    pthread_mutex_lock(&device->lock);
    status = accel__device_check_loss(device, status);
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel__device_gone(const accel_device *device, const char *what)
{
    if (atomic_load(&device->recovery.unrecoverable))
        return accel__error(ACCEL_ERR_UNRECOVERABLE,
                            "%s%sdevice %s:%u was lost more often than its "
                            "recovery policy allows; only accel_device_reset "
                            "rebuilds it",
                            what ? what : "", what ? ": " : "",
                            device->plugin->name, device->index);
    return accel__error(
        ACCEL_ERR_DEVICE_LOST,
        "%s%sdevice %s:%u was lost; accel_device_reset rebuilds it",
        what ? what : "", what ? ": " : "", device->plugin->name, device->index);
}

void accel__device_reset_wait(accel_device *device)
{
    /* Signalled with the staging set's condition, as borrowed objects are. */
    while (atomic_load(&device->resetting) &&
           !pthread_equal(device->resetter, pthread_self()) &&
           !accel__borrowing_here())
        pthread_cond_wait(&device->staging.returned, &device->lock);
}

accel_status accel__device_usable(accel_device *device)
{
    accel_status status = accel__process_check(device->pid, "device");
    if (status != ACCEL_OK)
        return status;
    accel__device_reset_wait(device);
    if (!atomic_load(&device->lost))
        return ACCEL_OK;
    return accel__device_gone(device, NULL);
}

static accel_status device_status_untraced(accel_device *device)
{
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_status: NULL device");
    if (accel__process_check(device->pid, "accel_device_status") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK) {
        status = device->drv->device_status(device->drv_device);
        if (status != ACCEL_OK)
            status = accel__device_check_loss(
                device, accel__from_plugin(status, "device_status"));
    }
    pthread_mutex_unlock(&device->lock);
    return status;
}

accel_status accel_device_status(accel_device *device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_status_untraced(device);
    return accel__trace_end("accel_device_status", traced, status, 0);
}

static accel_status device_sync_untraced(accel_device *device)
{
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_sync: NULL device");
    if (accel__process_check(device->pid, "accel_device_sync") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    /* Mark the end of every stream's work under the lock, then wait without
     * it, so that other threads can go on submitting meanwhile; the fence is
     * borrowed, so that a reset waits for it. */
    struct accel__fence fence = {0};
    struct accel__cb_point *callbacks = NULL;
    size_t callback_count = 0;
    pthread_mutex_lock(&device->lock);
    accel_status status = accel__device_usable(device);
    if (status == ACCEL_OK)
        status = accel__streams_cb_points(device, &callbacks, &callback_count);
    if (status == ACCEL_OK)
        status = accel__fence_lanes(device, ~0ull, &fence);
    if (status == ACCEL_OK && device->own.stream != NULL)
        status = accel__fence_add(device, &fence, device->own.stream);
    accel__borrow_begin(device);
    pthread_mutex_unlock(&device->lock);
    for (uint32_t i = 0; status == ACCEL_OK && i < fence.count; i++)
        status = ACCEL__DRV_CALL(device, event_sync, fence.events[i]);
    pthread_mutex_lock(&device->lock);
    accel__fence_release(device, &fence);
    accel__borrow_end(device);
    status = accel__device_check_loss(device, status);
    if (status == ACCEL_OK)
        accel__drop_collect(device, false);
    accel__device_unlock(device);
    /* Callbacks are work on the streams too. */
    return accel__cb_points_finish(device, status, callbacks, callback_count);
}

accel_status accel_device_sync(accel_device *device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_sync_untraced(device);
    return accel__trace_end("accel_device_sync", traced, status, 0);
}

accel_status accel__device_rebuild(accel_device *device)
{
    /* New calls wait from here on, and refs minted before are stale; then
     * the work other threads have in flight without the lock comes back.
     * A reset is not a loss: `lost` says only whether one was found. */
    atomic_store(&device->resetting, true);
    device->resetter = pthread_self();
    /* A collective in flight would hold the streams (and so this reset)
     * until it timed out: its communicators are aborted first. */
    accel__comm_device_abort(device, "its device was reset");
    atomic_fetch_add(&device->generation, 1);
    device->recovery.pending = false;
    accel__trace_device_mark(device, "reset", 0);
    accel__lockless_drain(device);
    accel__borrowed_wait(device);
    /* Finish what can finish, then drop everything the plugin holds for the
     * device: the plugin's reset contract is an empty device. */
    device_empty(device);
    accel_status status = ACCEL__DRV_CALL0(device, device_reset);
    if (status == ACCEL_OK)
        status = accel__streams_rebuild(device);
    if (status == ACCEL_OK)
        status = accel__modules_rebuild(device);
    /* A reset that failed part way leaves plugin objects missing: lost. */
    atomic_store(&device->lost, status != ACCEL_OK);
    atomic_store(&device->resetting, false);
    pthread_cond_broadcast(&device->staging.returned);
    return status;
}

static accel_status device_reset_untraced(accel_device *device)
{
    if (device == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_device_reset: NULL device");
    if (accel__process_check(device->pid, "accel_device_reset") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&device->lock);
    /* One reset at a time: another thread's finishes first. */
    accel__device_reset_wait(device);
    accel_status status = accel__device_rebuild(device);
    /* The application asked: the automatic budget starts again. */
    if (status == ACCEL_OK)
        accel__recovery_forgive(device);
    pthread_mutex_unlock(&device->lock);
    accel__log(ACCEL_LOG_INFO, "reset %s:%u: %s, generation %u",
               device->plugin->name, device->index, accel_status_name(status),
               atomic_load(&device->generation));
    return status;
}

accel_status accel_device_reset(accel_device *device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_reset_untraced(device);
    return accel__trace_end("accel_device_reset", traced, status, 0);
}
