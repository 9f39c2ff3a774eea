/*
 * The part of a GPU plugin that is the same for every vendor: opening,
 * closing, and finding and describing the devices.
 */
#include "native_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define NATIVE_ELEVATED_REASON "elevated privileges: vendor runtime not opened"

void accel__native_no_device(accel_drv_plugin *plugin, const char *call,
                             const char *described, const char *more)
{
    struct accel__native_plugin *native = accel__native_plugin_of(plugin);

    snprintf(native->no_device_reason, sizeof(native->no_device_reason),
             "%.300s: %s failed: %s%s%s", native->library->path, call,
             described, more != NULL ? "; " : "", more != NULL ? more : "");
}

/* How many devices to offer: the library's count, at most ACCEL__NATIVE_DEVICES_MAX. */
static int native_offered_count(struct accel__native_plugin *native, int count)
{
    const struct accel__native_vendor *vendor = native->vendor;

    if (count > (int)ACCEL__NATIVE_DEVICES_MAX) {
        native->services->log(ACCEL_LOG_WARN,
                              "%s: the %s has %d devices; the plugin "
                              "offers the first %u",
                              vendor->name, vendor->library_noun, count,
                              ACCEL__NATIVE_DEVICES_MAX);
        count = (int)ACCEL__NATIVE_DEVICES_MAX;
    }
    return count;
}

/* Find the devices and describe each; zero devices with the reason otherwise. */
static accel_status native_find_devices(accel_drv_plugin *plugin)
{
    struct accel__native_plugin *native = accel__native_plugin_of(plugin);
    const struct accel__native_vendor *vendor = native->vendor;
    const char *call = NULL;
    int count = 0;
    int result;
    int i;

    result = vendor->count_devices(plugin, &count, &call);
    if (result != 0) {
        vendor->no_device(plugin, call, result);
        return ACCEL_OK;
    }
    count = native_offered_count(native, count);
    if (count <= 0) {
        snprintf(native->no_device_reason, sizeof(native->no_device_reason),
                 "%.300s: the %s %s (version %d) reports no device",
                 native->library->path, vendor->title, vendor->library_noun,
                 native->driver_version);
        return ACCEL_OK;
    }
    native->devices = calloc((size_t)count, sizeof(native->devices[0]));
    if (native->devices == NULL)
        return native->services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                           "calloc of %d %s devices failed",
                                           count, vendor->title);
    for (i = 0; i < count; i++) {
        struct accel__native_device *device = &native->devices[i];

        result = vendor->describe_device(plugin, i, device, &call);
        if (result != 0)
            break;
        device->context = accel__context_state_of_device((uint32_t)i);
        if (device->context == NULL)
            return native->services->set_error(
                ACCEL_ERR_OUT_OF_HOST_MEMORY,
                "pthread_mutex_init failed for the %s "
                "devices' context states",
                vendor->title);
    }
    if (result != 0) {
        /* A device the library cannot describe is one it cannot run either. */
        vendor->no_device(plugin, call, result);
        return ACCEL_OK;
    }
    native->device_count = (uint32_t)count;
    return ACCEL_OK;
}

/*
 * Whether the process runs with elevated privileges, and whether the
 * program allows vendor runtimes then. The host says both from 1.1 on; the
 * process's own ids and secure mode count too, so that a 1.0 host (which
 * cannot pass an opt-in) never makes the plugin open a runtime elevated.
 */
static bool native_elevated(const struct accel_host_services *services,
                            bool *out_allowed)
{
    uint32_t privilege = 0;

    if (ACCEL_HOST_SERVICES_HAS(services, privilege))
        privilege = services->privilege;
    *out_allowed = (privilege & ACCEL_HOST_PRIVILEGE_VENDOR_RUNTIMES_ALLOWED) !=
                   0;
    return (privilege & ACCEL_HOST_PRIVILEGE_ELEVATED) != 0 ||
           getauxval(AT_SECURE) != 0 || getuid() != geteuid() ||
           getgid() != getegid();
}

/*
 * Remove the vendor's variables that name files or libraries, which its
 * runtime would otherwise open with the process's privileges. The real
 * environment is read (services->getenv hides it when elevated) only to
 * say what was removed.
 */
static void native_remove_file_variables(struct accel__native_plugin *native)
{
    const struct accel__native_vendor *vendor = native->vendor;

    for (const char *const *name = vendor->file_variables;
         name != NULL && *name != NULL; name++) {
        if (getenv(*name) == NULL)
            continue;
        unsetenv(*name);
        native->services->log(ACCEL_LOG_INFO,
                              "%s: elevated privileges: removed %s from the "
                              "environment before opening the %s",
                              vendor->name, *name, vendor->library_noun);
    }
}

/* Whether `path` exists: F_OK alone, so a node the user may not open still counts. */
static bool native_node_exists(const char *path, size_t length)
{
    char copy[256];

    if (length == 0 || length >= sizeof(copy))
        return false;
    memcpy(copy, path, length);
    copy[length] = '\0';
    return access(copy, F_OK) == 0;
}

/* Append "a, b" of the colon-separated `list` (or the NULL-terminated `nodes`) to `out`. */
static bool native_any_node(const char *list, const char *const *nodes,
                            char *out, size_t size)
{
    size_t used = 0;
    bool found = false;

    out[0] = '\0';
    for (size_t i = 0; list != NULL ? *list != '\0' : nodes[i] != NULL; i++) {
        const char *path = list != NULL ? list : nodes[i];
        size_t length = list != NULL ? strcspn(list, ":") : strlen(path);

        found = found || native_node_exists(path, length);
        if (used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%.*s",
                                     used ? ", " : "", (int)length, path);
        if (list != NULL)
            list += length + (list[length] == ':');
    }
    return found;
}

/*
 * Whether the vendor's library is worth loading: its library variable is
 * set (a fake, or a driver the user points at, goes the full way), or a
 * device node exists. When not, the reason is said.
 */
static bool native_has_device_node(struct accel__native_plugin *native)
{
    const struct accel__native_vendor *vendor = native->vendor;
    const char *library = NULL, *list = NULL;
    char nodes[512];

    if (vendor->device_nodes == NULL)
        return true;
    if (vendor->library_variable != NULL)
        library = native->services->getenv(vendor->library_variable);
    if (library != NULL && library[0] != '\0')
        return true;
    if (vendor->device_nodes_variable != NULL)
        list = native->services->getenv(vendor->device_nodes_variable);
    if (native_any_node(list, vendor->device_nodes, nodes, sizeof(nodes)))
        return true;
    snprintf(native->no_device_reason, sizeof(native->no_device_reason),
             "no device node (%.400s: none exists); the %s %s was not loaded "
             "(%s set loads it "
             "regardless)",
             nodes, vendor->title, vendor->library_noun,
             vendor->library_variable != NULL ? vendor->library_variable
                                              : "a library");
    return false;
}

/* Whether the vendor may be started; when not, the reason is said. */
static bool native_may_start(struct accel__native_plugin *native)
{
    bool allowed = false;

    if (!native_elevated(native->services, &allowed))
        return true;
    if (!allowed) {
        snprintf(native->no_device_reason, sizeof(native->no_device_reason),
                 NATIVE_ELEVATED_REASON
                 " (the %s reads environment variables that name files "
                 "and libraries; a program opts in with accel_host_options."
                 "vendor_runtimes_when_elevated)",
                 native->vendor->library_noun);
        return false;
    }
    native_remove_file_variables(native);
    return true;
}

void accel__native_plugin_close(accel_drv_plugin *plugin)
{
    struct accel__native_plugin *native;

    if (plugin == NULL)
        return;
    native = accel__native_plugin_of(plugin);
    free(native->devices);
    native->vendor->stop(plugin);
    free(plugin);
}

accel_status accel__native_plugin_open(const struct accel_host_services *services,
                                       const struct accel__native_vendor *vendor,
                                       accel_drv_plugin **out_plugin)
{
    struct accel__native_plugin *native;
    accel_drv_plugin *plugin;
    accel_status status = ACCEL_OK;

    *out_plugin = NULL;
    /* Without the 1.0 services there is no way even to say why. A larger
     * struct is a newer host; a smaller one than this header's, an older
     * host, whose newer fields are read only where struct_size covers them. */
    if (services == NULL || services->struct_size < ACCEL_HOST_SERVICES_V1_0_SIZE)
        return ACCEL_ERR_INVALID_ARGUMENT;
    plugin = calloc(1, vendor->plugin_size);
    if (plugin == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "calloc of the %s plugin failed",
                                   vendor->title);
    native = accel__native_plugin_of(plugin);
    native->services = services;
    native->vendor = vendor;
    if (native_has_device_node(native) && native_may_start(native) &&
        vendor->start(plugin))
        status = native_find_devices(plugin);
    if (status != ACCEL_OK) {
        accel__native_plugin_close(plugin);
        return status;
    }
    if (native->device_count != 0)
        services->log(ACCEL_LOG_DEBUG, "%s: %s, %s version %d, %u device(s)",
                      vendor->name, native->library->path, vendor->library_noun,
                      native->driver_version, native->device_count);
    else
        services->log(ACCEL_LOG_DEBUG, "%s: no device: %s", vendor->name,
                      native->no_device_reason);
    *out_plugin = plugin;
    return ACCEL_OK;
}

accel_status accel__native_device_count(accel_drv_plugin *plugin,
                                        uint32_t *out_count,
                                        const char **out_reason)
{
    struct accel__native_plugin *native = accel__native_plugin_of(plugin);

    *out_count = native->device_count;
    *out_reason = native->device_count == 0 ? native->no_device_reason : NULL;
    return ACCEL_OK;
}

accel_status accel__native_device_info(accel_drv_plugin *plugin, uint32_t index,
                                       struct accel_device_props *out_props)
{
    struct accel__native_plugin *native = accel__native_plugin_of(plugin);

    if (index >= native->device_count)
        return native->services->set_error(
            ACCEL_ERR_NO_DEVICE, "device_info: no %s device %u; there are %u",
            native->vendor->title, index, native->device_count);
    /* No more than the host's struct holds (driver.h). */
    memcpy(out_props, &native->devices[index].props,
           accel_device_props_size(native->services));
    return ACCEL_OK;
}

accel_status accel__native_handles_fill(accel_drv_plugin *plugin, uint32_t kind,
                                        int ordinal, void *context, void *stream,
                                        struct accel_native_handles *out)
{
    struct accel__native_plugin *native = accel__native_plugin_of(plugin);
    struct accel_native_handles handles;
    size_t size;

    if (out == NULL ||
        out->struct_size < offsetof(struct accel_native_handles, device_ordinal))
        return native->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "native_handles: struct_size %u does not reach the kind",
            out == NULL ? 0u : out->struct_size);
    memset(&handles, 0, sizeof(handles));
    handles.struct_size = out->struct_size;
    handles.kind = kind;
    handles.device_ordinal = ordinal;
    handles.context = context;
    handles.stream = stream;
    /* Filled whole here, copied only as far as the caller's struct goes. */
    size = out->struct_size < sizeof(handles) ? out->struct_size
                                              : sizeof(handles);
    memcpy(out, &handles, size);
    return ACCEL_OK;
}
