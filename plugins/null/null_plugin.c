/*
 * accel-plugin-null: the CPU backend. Its devices are the machine itself:
 * device memory is host memory, streams are in-order queues run by worker
 * threads, events mark points in those queues, and kernels are CPU
 * functions from ELF shared objects (<accel/kernel.h>) whose blocks run on
 * the stream's worker and a pool of helper threads. It needs no hardware
 * and no vendor library, so every program and test can run anywhere.
 *
 * Environment (read through the host's services->getenv, so ignored in
 * setuid programs). Every value is checked: anything but what is listed
 * reports no device, with the reason, so that a typo is seen rather than
 * silently replaced by a default.
 *
 *   ACCEL_NULL_DEVICES       How many devices to report: a whole number
 *                            from 0 to 64; 1 when unset.
 *   ACCEL_NULL_THREADS       How many host threads run the blocks of one
 *                            grid, the stream's worker included: 1 to
 *                            1024; when unset, the CPUs the process may
 *                            run on. 1 runs every grid on its stream's
 *                            worker and starts no pool.
 *   ACCEL_NULL_STACK_KB      The stack of each kernel thread that runs on a
 *                            fiber (every thread of a block whose thread 0
 *                            reaches a barrier or warp operation, and
 *                            thread 0 of every block), in KiB: 16 to 65536,
 *                            rounded up to whole pages; 64 when unset.
 *                            A thread that overflows it faults on a guard
 *                            page (see null_block.h).
 *   ACCEL_NULL_CHECK         memory, race, or off (as unset): the checked
 *                            modes (null_check.h): AddressSanitizer finds
 *                            kernels' out-of-bounds accesses and uses of
 *                            freed memory, or libaccel-race their data
 *                            races, reported by kernel, block, thread and
 *                            argument. Each needs its runtime in the
 *                            process (accel-check) and kernels built by
 *                            accel-cc --check; without it, no device.
 *
 * Test knobs, for the host's tests:
 *
 *   ACCEL_NULL_DELAY_US      Sleep this many microseconds (0 to 10000000)
 *                            on the stream worker before every command it
 *                            runs, so that work stays in flight and a host
 *                            that frees or reuses memory too early is
 *                            caught (by the sanitizers, or by wrong data).
 *                            0 when unset.
 *   ACCEL_NULL_HOST_VISIBLE  0 or 1; 1 when unset. 0 makes the devices not
 *                            report ACCEL_DEVICE_CAP_HOST_VISIBLE, so that
 *                            the host stages copies through pinned buffers
 *                            as it does for a GPU. Memory is still host
 *                            memory either way.
 *
 * Fault injection, for the host's tests of its failure paths. While any of
 * these is set, every call of an entry is counted, atomically, per plugin
 * instance (plugin_open is call 1, and entries that return nothing count
 * too):
 *
 *   ACCEL_NULL_FAIL          <entry|any>:<n>[:<STATUS>]. The n-th call
 *                            (from 1) of that entry, named as in driver.h
 *                            (mem_alloc, copy_to_device, ...), or of any
 *                            entry, fails with STATUS, having done nothing.
 *                            STATUS is an error code's name, such as
 *                            ACCEL_ERR_OUT_OF_DEVICE_MEMORY; ACCEL_ERR_DRIVER
 *                            when omitted. An entry that returns nothing
 *                            (mem_free, stream_destroy, ...) is counted but
 *                            never fails. n = 0 only counts. A failing
 *                            stream_sync or event_sync still waits for the
 *                            work first: a CPU cannot abandon a command it
 *                            is running, and a host may free what the work
 *                            uses once a sync has returned.
 *   ACCEL_NULL_LOSE_AT       [<entry|any>:]<n>. At the n-th call (of that
 *                            entry, or of any when none is named) the
 *                            device it is made on becomes lost; a call
 *                            without a device (plugin_open, device_count,
 *                            device_info, device_open) hands the loss to
 *                            the next call that has one. That call and
 *                            every later one on the device fail with
 *                            ACCEL_ERR_DEVICE_LOST and device_status says
 *                            so, until device_reset. The stream workers
 *                            finish the command they are running and drop
 *                            the rest, host functions included (a host
 *                            learns of those at its reset); a stream that
 *                            dropped work reports it as failed. stream_sync
 *                            and event_sync on a lost device still wait for
 *                            the queue to drain, and entries that return
 *                            nothing still do their work, so that memory
 *                            can be freed safely. 0, or unset: never.
 *   ACCEL_NULL_REPORT        A file to which plugin_close (or a failing
 *                            plugin_open) writes one line,
 *                            "calls=N faults=N losses=N left_at_close=N
 *                            left_at_reset=N": the entry calls counted, the
 *                            injected failures returned, the devices lost,
 *                            and the objects (memory, streams, events,
 *                            modules) the host had not destroyed when it
 *                            closed a device or when it reset one (pinned
 *                            host memory aside, which a reset keeps). A
 *                            correct host leaves the last two at 0.
 *
 * Malformed values of these, too, leave the plugin without devices.
 *
 * This file holds the table, the plugin and the devices; memory, streams,
 * the queue, modules and the worker pool live in their own files.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "null_block.h"
#include "null_check.h"
#include "null_fault.h"
#include "null_os.h"
#include "null_plugin.h"
#include "null_pool.h"

/* How much of a bad variable's value a reason quotes. */
#define NULL_REASON_QUOTE_MAX 40

/* ---- the machine, as a device ---- */

/* Limits a CUDA programmer expects, so that kernels port unchanged. */
static void null_props_set_limits(struct accel_device_props *props)
{
    props->max_threads_per_block = 1024;
    props->max_block_dim[0] = 1024;
    props->max_block_dim[1] = 1024;
    props->max_block_dim[2] = 64;
    props->max_grid_dim[0] = 2147483647u;
    props->max_grid_dim[1] = 65535;
    props->max_grid_dim[2] = 65535;
    props->max_shared_bytes = NULL_MAX_SHARED_BYTES;
}

/*
 * Fill the props every device shares from the machine: its architecture,
 * memory and cores. False, with the reason set, when the system will not
 * say how much memory there is: such a device could not answer mem_alloc.
 */
static bool null_describe_machine(accel_drv_plugin *plugin)
{
    struct accel_device_props *props = &plugin->props;
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    struct utsname machine;

    if (pages <= 0 || page_size <= 0) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "sysconf(_SC_PHYS_PAGES) does not give the machine's memory");
        return false;
    }
    props->total_memory = (uint64_t)pages * (uint64_t)page_size;
    if (uname(&machine) == 0)
        snprintf(props->arch, sizeof(props->arch), "%.*s",
                 (int)sizeof(props->arch) - 1, machine.machine);
    else
        snprintf(props->arch, sizeof(props->arch), "cpu");
    props->caps = ACCEL_DEVICE_CAP_HOST_VISIBLE | ACCEL_DEVICE_CAP_KERNELS |
                  ACCEL_DEVICE_CAP_COPY_3D;
    null_props_set_limits(props);
    return true;
}

/* ---- a stable uuid for each device ---- */

/* FNV-1a over `length` bytes, continuing from `hash`. */
static uint64_t null_fnv1a(uint64_t hash, const void *bytes, size_t length)
{
    const unsigned char *p = bytes;

    for (size_t i = 0; i < length; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

/*
 * Hash what names this machine: systemd's machine-id (the same across
 * boots, different on each installation), else D-Bus's copy of it, else
 * the host name. The uuid is an identity, not a secret: a hash will do.
 */
static uint64_t null_machine_hash(void)
{
    static const char *const files[] = {"/etc/machine-id",
                                        "/var/lib/dbus/machine-id"};
    uint64_t hash = 0xcbf29ce484222325ull;
    char text[256];

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        FILE *file = fopen(files[i], "re");
        size_t length = 0;

        if (file == NULL)
            continue;
        length = fread(text, 1, sizeof(text), file);
        fclose(file);
        while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' '))
            length--;
        if (length > 0)
            return null_fnv1a(hash, text, length);
    }
    if (gethostname(text, sizeof(text)) == 0) {
        text[sizeof(text) - 1] = '\0';
        return null_fnv1a(hash, text, strlen(text));
    }
    return hash;
}

/* "CPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for device `index` of this machine. */
static void null_device_uuid(const accel_drv_plugin *plugin, uint32_t index,
                             char *out, size_t size)
{
    uint64_t high = null_fnv1a(plugin->machine_hash, &index, sizeof(index));
    uint64_t low = null_fnv1a(high ^ 0x9e3779b97f4a7c15ull, &index,
                              sizeof(index));

    snprintf(out, size, "CPU-%08x-%04x-%04x-%04x-%012llx",
             (unsigned)(high >> 32), (unsigned)(high >> 16) & 0xffffu,
             (unsigned)high & 0xffffu, (unsigned)(low >> 48),
             (unsigned long long)(low & 0xffffffffffffull));
}

/* ---- reading the environment ---- */

bool accel__null_parse_whole(const char *text, size_t length, uint64_t max,
                             uint64_t *out_value)
{
    uint64_t value = 0;

    *out_value = 0;
    if (length == 0)
        return false;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        value = value * 10 + (uint64_t)(text[i] - '0');
        /* Stopping here also keeps a long string of digits from overflowing. */
        if (value > max)
            return false;
    }
    *out_value = value;
    return true;
}

void accel__null_reason_bad_value(accel_drv_plugin *plugin, const char *name,
                                  const char *text, const char *format, ...)
{
    char *reason = plugin->no_device_reason;
    size_t size = sizeof(plugin->no_device_reason);
    va_list rest;
    int used;

    used = snprintf(reason, size, "%s='%.*s%s' ", name, NULL_REASON_QUOTE_MAX,
                    text, strlen(text) > NULL_REASON_QUOTE_MAX ? "..." : "");
    if (used < 0 || (size_t)used >= size)
        return;
    va_start(rest, format);
    vsnprintf(reason + used, size - (size_t)used, format, rest);
    va_end(rest);
}

/*
 * Read a whole-number variable from `min` to `max`; `fallback` when unset.
 * False, with the reason kept, when it is set to anything else.
 */
static bool null_read_knob(accel_drv_plugin *plugin, const char *name,
                           uint32_t min, uint32_t max, uint32_t fallback,
                           uint32_t *out_value)
{
    const char *text = plugin->services->getenv(name);
    uint64_t value;

    *out_value = fallback;
    if (text == NULL)
        return true;
    if (accel__null_parse_whole(text, strlen(text), max, &value) && value >= min) {
        *out_value = (uint32_t)value;
        return true;
    }
    accel__null_reason_bad_value(
        plugin, name, text, "is not a whole number from %u to %u", min, max);
    return false;
}

/* Fiber stacks are whole pages: the guard below each is one. */
static size_t null_round_to_pages(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t unit = page > 0 ? (size_t)page : 4096u;

    return (bytes + unit - 1) / unit * unit;
}

/*
 * A checked device: allocations of their own for the host (red zones about
 * each), the "-asan" images of a bundle, and fiber stacks with room for
 * ASan's frames and reports.
 */
static void null_check_props(accel_drv_plugin *plugin)
{
    char arch[sizeof(plugin->props.arch)];

    plugin->props.caps |= ACCEL_DEVICE_CAP_OWN_ALLOCATIONS;
    snprintf(arch, sizeof(arch), "%.*s-%s", (int)sizeof(arch) - 6,
             plugin->props.arch,
             plugin->check >= NULL_CHECK_RACE ? "race" : "asan");
    memcpy(plugin->props.arch, arch, sizeof(arch));
    if (plugin->stack_bytes < NULL_CHECK_STACK_BYTES)
        plugin->stack_bytes = NULL_CHECK_STACK_BYTES;
}

/* Read every variable; the first bad one leaves the plugin without devices. */
static void null_read_environment(accel_drv_plugin *plugin)
{
    uint32_t devices, threads, delay_us, host_visible, stack_kb;

    if (!null_read_knob(plugin, "ACCEL_NULL_DEVICES", 0, NULL_DEVICES_MAX, 1,
                        &devices) ||
        !null_read_knob(plugin, "ACCEL_NULL_THREADS", 1, NULL_THREADS_MAX,
                        null_cpu_count(), &threads) ||
        !null_read_knob(plugin, "ACCEL_NULL_DELAY_US", 0, NULL_DELAY_US_MAX, 0,
                        &delay_us) ||
        !null_read_knob(plugin, "ACCEL_NULL_HOST_VISIBLE", 0, 1, 1,
                        &host_visible) ||
        !null_read_knob(plugin, "ACCEL_NULL_STACK_KB", NULL_STACK_KB_MIN,
                        NULL_STACK_KB_MAX, NULL_STACK_KB_DEFAULT, &stack_kb) ||
        !accel__null_faults_read(plugin) ||
        !accel__null_check_read(plugin, &plugin->check))
        return;
    if (devices == 0)
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "ACCEL_NULL_DEVICES=0");
    if (host_visible == 0)
        plugin->props.caps &= ~(uint32_t)ACCEL_DEVICE_CAP_HOST_VISIBLE;
    plugin->threads = threads;
    plugin->props.compute_units = threads;
    plugin->delay_ns = (uint64_t)delay_us * 1000u;
    plugin->stack_bytes = null_round_to_pages((size_t)stack_kb * 1024u);
    if (plugin->check != NULL_CHECK_OFF)
        null_check_props(plugin);
    plugin->device_count = devices;
}

/* ---- plugin ---- */

static accel_status null_plugin_open(const struct accel_host_services *services,
                                     accel_drv_plugin **out_plugin)
{
    accel_drv_plugin *plugin;
    accel_status status;
    int rc;

    *out_plugin = NULL;
    /* Without the 1.0 services there is no way even to say why. Any larger
     * struct will do: the plugin reads host_minor (device_info) only where
     * struct_size has it. */
    if (services == NULL || services->struct_size < ACCEL_HOST_SERVICES_V1_0_SIZE)
        return ACCEL_ERR_INVALID_ARGUMENT;
    plugin = calloc(1, sizeof(*plugin));
    if (plugin == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of the null plugin failed");
    plugin->services = services;
    rc = pthread_mutex_init(&plugin->lock, NULL);
    if (rc != 0) {
        free(plugin);
        return services->set_error(
            ACCEL_ERR_OUT_OF_HOST_MEMORY,
            "pthread_mutex_init failed for the null plugin: %s",
            null_errno_name(rc));
    }
    atomic_init(&plugin->pool, NULL);
    plugin->machine_hash = null_machine_hash();
    if (null_describe_machine(plugin))
        null_read_environment(plugin);
    status = accel__null_enter(plugin, NULL, NULL_ENTRY_plugin_open);
    if (status != ACCEL_OK) {
        accel__null_faults_report(plugin);
        pthread_mutex_destroy(&plugin->lock);
        free(plugin);
        return status;
    }
    services->log(ACCEL_LOG_DEBUG, "%u CPU device(s)%s%s", plugin->device_count,
                  plugin->device_count == 0 ? ": " : "",
                  plugin->no_device_reason);
    *out_plugin = plugin;
    return ACCEL_OK;
}

static void null_plugin_close(accel_drv_plugin *plugin)
{
    if (plugin == NULL)
        return;
    accel__null_enter_void(plugin, NULL, NULL_ENTRY_plugin_close);
    accel__null_faults_report(plugin);
    accel__null_pool_destroy(atomic_load(&plugin->pool));
    pthread_mutex_destroy(&plugin->lock);
    free(plugin);
}

accel_status accel__null_plugin_pool(accel_drv_plugin *plugin,
                                     struct null_pool **out_pool)
{
    struct null_pool *pool;
    accel_status status = ACCEL_OK;

    *out_pool = atomic_load_explicit(&plugin->pool, memory_order_acquire);
    if (*out_pool != NULL || plugin->threads <= 1)
        return ACCEL_OK;
    pthread_mutex_lock(&plugin->lock);
    pool = atomic_load_explicit(&plugin->pool, memory_order_relaxed);
    if (pool == NULL) {
        /* Helpers: the stream worker that owns a grid runs blocks too. */
        status = accel__null_pool_create(plugin->services, plugin->threads - 1,
                                         &pool);
        if (status == ACCEL_OK)
            atomic_store_explicit(&plugin->pool, pool, memory_order_release);
    }
    pthread_mutex_unlock(&plugin->lock);
    *out_pool = pool;
    return status;
}

/* ---- devices ---- */

static accel_status null_device_count(accel_drv_plugin *plugin,
                                      uint32_t *out_count,
                                      const char **out_reason)
{
    accel_status status;

    *out_count = 0;
    *out_reason = NULL;
    status = accel__null_enter(plugin, NULL, NULL_ENTRY_device_count);
    if (status != ACCEL_OK)
        return status;
    *out_count = plugin->device_count;
    *out_reason = plugin->device_count == 0 ? plugin->no_device_reason : NULL;
    return ACCEL_OK;
}

static accel_status null_check_index(accel_drv_plugin *plugin,
                                     const char *entry, uint32_t index)
{
    if (index < plugin->device_count)
        return ACCEL_OK;
    return plugin->services->set_error(
        ACCEL_ERR_NO_DEVICE, "%s: no device %u; the null plugin has %u", entry,
        index, plugin->device_count);
}

static accel_status null_device_info(accel_drv_plugin *plugin, uint32_t index,
                                     struct accel_device_props *out_props)
{
    struct accel_device_props props = plugin->props;
    accel_status status;

    status = accel__null_enter(plugin, NULL, NULL_ENTRY_device_info);
    if (status == ACCEL_OK)
        status = null_check_index(plugin, "device_info", index);
    if (status != ACCEL_OK)
        return status;
    snprintf(props.name, sizeof(props.name), "accel CPU device %u", index);
    /* The CPU is not a PCI device: pci_bus_id stays "". */
    null_device_uuid(plugin, index, props.uuid, sizeof(props.uuid));
    memcpy(out_props, &props, accel_device_props_size(plugin->services));
    return ACCEL_OK;
}

static accel_status null_device_open(accel_drv_plugin *plugin, uint32_t index,
                                     accel_drv_device **out_device)
{
    accel_drv_device *device;
    accel_status status;
    int rc;

    *out_device = NULL;
    status = accel__null_enter(plugin, NULL, NULL_ENTRY_device_open);
    if (status == ACCEL_OK)
        status = null_check_index(plugin, "device_open", index);
    if (status != ACCEL_OK)
        return status;
    device = calloc(1, sizeof(*device));
    if (device == NULL)
        return plugin->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                           "calloc of a device failed");
    rc = pthread_mutex_init(&device->lock, NULL);
    if (rc != 0)
        goto fail_free;
    device->plugin = plugin;
    device->index = index;
    atomic_init(&device->lost, false);
    null_list_init(&device->mems);
    null_list_init(&device->host_blocks);
    null_list_init(&device->streams);
    null_list_init(&device->events);
    null_list_init(&device->modules);
    *out_device = device;
    return ACCEL_OK;

fail_free:
    free(device);
    return plugin->services->set_error(
        ACCEL_ERR_OUT_OF_HOST_MEMORY,
        "pthread_mutex_init failed for a device: %s", null_errno_name(rc));
}

static void null_device_close(accel_drv_device *device)
{
    uint32_t left;

    if (device == NULL)
        return;
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_device_close);
    /* Streams first: their workers may still be touching memory. */
    left = accel__null_streams_release_all(device);
    left += accel__null_events_release_all(device);
    left += accel__null_modules_release_all(device);
    left += accel__null_memory_release_all(device);
    if (left != 0) {
        atomic_fetch_add(&device->plugin->faults.left_at_close, left);
        null_services(device)->log(
            ACCEL_LOG_DEBUG,
            "device_close: freed %u object(s) the host left on "
            "device %u",
            left, device->index);
    }
    pthread_mutex_destroy(&device->lock);
    free(device);
}

/* Lost only when ACCEL_NULL_LOSE_AT made it so: the machine itself is not. */
static accel_status null_device_status(accel_drv_device *device)
{
    return accel__null_enter(device->plugin, device, NULL_ENTRY_device_status);
}

static uint32_t null_list_length(struct null_list *head)
{
    uint32_t count = 0;

    for (struct null_list *link = head->next; link != head; link = link->next)
        count++;
    return count;
}

/*
 * Nothing of the machine needs rebuilding: a reset ends a simulated loss.
 * What the host should have destroyed first is counted for the report;
 * pinned host memory is the application's and survives a reset.
 */
static accel_status null_device_reset(accel_drv_device *device)
{
    accel_status status = accel__null_enter(device->plugin, device,
                                            NULL_ENTRY_device_reset);
    uint32_t left;

    if (status != ACCEL_OK)
        return status;
    pthread_mutex_lock(&device->lock);
    left = null_list_length(&device->mems) + null_list_length(&device->streams) +
           null_list_length(&device->events) + null_list_length(&device->modules);
    pthread_mutex_unlock(&device->lock);
    if (left != 0) {
        atomic_fetch_add(&device->plugin->faults.left_at_reset, left);
        null_services(device)->log(
            ACCEL_LOG_WARN,
            "device_reset: %u object(s) of device %u were not "
            "destroyed first",
            left, device->index);
    }
    atomic_store(&device->lost, false);
    return ACCEL_OK;
}

void accel__null_device_track(accel_drv_device *device, struct null_list *list,
                              struct null_list *link)
{
    pthread_mutex_lock(&device->lock);
    null_list_insert(list, link);
    pthread_mutex_unlock(&device->lock);
}

void accel__null_device_untrack(accel_drv_device *device, struct null_list *link)
{
    pthread_mutex_lock(&device->lock);
    null_list_remove(link);
    pthread_mutex_unlock(&device->lock);
}

/* ---- the table ---- */

extern NULL_EXPORT const struct accel_driver_v1 accel_driver_v1;

const struct accel_driver_v1 accel_driver_v1 = {
    .struct_size = sizeof(struct accel_driver_v1),
    .abi_major = ACCEL_DRIVER_ABI_MAJOR,
    .abi_minor = ACCEL_DRIVER_ABI_MINOR,
    .name = "null",
    .version = "0.1.0",
    .priority = 0,

    .plugin_open = null_plugin_open,
    .plugin_close = null_plugin_close,

    .device_count = null_device_count,
    .device_info = null_device_info,
    .device_open = null_device_open,
    .device_close = null_device_close,
    .device_status = null_device_status,
    .device_reset = null_device_reset,

    .mem_alloc = accel__null_mem_alloc,
    .mem_free = accel__null_mem_free,
    .host_alloc = accel__null_host_alloc,
    .host_free = accel__null_host_free,

    .stream_create = accel__null_stream_create,
    .stream_destroy = accel__null_stream_destroy,
    .stream_sync = accel__null_stream_sync,

    .event_create = accel__null_event_create,
    .event_destroy = accel__null_event_destroy,
    .event_record = accel__null_event_record,
    .event_query = accel__null_event_query,
    .event_sync = accel__null_event_sync,
    .stream_wait_event = accel__null_stream_wait_event,

    .copy_to_device = accel__null_copy_to_device,
    .copy_to_host = accel__null_copy_to_host,
    .copy_on_device = accel__null_copy_on_device,

    .module_load = accel__null_module_load,
    .module_unload = accel__null_module_unload,
    .kernel_get = accel__null_kernel_get,
    .launch = accel__null_launch,

    .host_func = accel__null_host_func,
    .wait_outside_streams = NULL,
    .copy_peer = NULL,
    .fill = accel__null_fill,
    .event_elapsed = accel__null_event_elapsed,
    .module_compile = accel__null_module_compile,
    .compiler_identity = accel__null_compiler_identity,
    .native_handles = accel__null_native_handles,
};
