/*
 * native_handles (driver.h, since 1.1) through a GPU plugin's table,
 * called directly over its fake: what the vendor tests check of it.
 */
#include "plugin_case.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <accel/driver.h>

static void native_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status native_set_error(accel_status status, const char *fmt, ...)
{
    (void)fmt;
    return status;
}

static const char *native_getenv(const char *name)
{
    return getenv(name);
}

void plugin_case_native_handles(struct plugin_case *c, const char *devices_env,
                                uint32_t index, struct plugin_case_native *out)
{
    const struct accel_host_services services = {
        .struct_size = (uint32_t)ACCEL_HOST_SERVICES_V1_1_SIZE,
        .version = ACCEL_HOST_SERVICES_VERSION,
        .log = native_log,
        .set_error = native_set_error,
        .getenv = native_getenv,
        .host_minor = ACCEL_DRIVER_ABI_MINOR,
    };
    const struct accel_driver_v1 *table;
    accel_drv_plugin *plugin = NULL;
    accel_drv_device *device = NULL;
    accel_drv_stream *stream = NULL;
    void *dl;

    memset(out, 0, sizeof(*out));
    setenv(devices_env, "2", 1);
    dl = dlopen(c->kind->plugin_path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    table = dlsym(dl, ACCEL_DRIVER_SYMBOL);
    assert_non_null(table);
    assert_true(ACCEL_DRIVER_HAS_ENTRY(table, native_handles));
    assert_non_null(table->native_handles);
    assert_status(table->plugin_open(&services, &plugin), ACCEL_OK);
    assert_status(table->device_open(plugin, index, &device), ACCEL_OK);
    assert_status(table->stream_create(device, &stream), ACCEL_OK);
    out->stream = stream;

    out->whole.struct_size = sizeof(out->whole);
    assert_status(table->native_handles(device, stream, &out->whole), ACCEL_OK);
    out->no_stream.struct_size = sizeof(out->no_stream);
    out->no_stream.stream = (void *)&out->no_stream;
    assert_status(table->native_handles(device, NULL, &out->no_stream), ACCEL_OK);
    /* An older host's shorter struct: nothing past it is written. */
    memset(&out->cut, 0xa5, sizeof(out->cut));
    out->cut.struct_size = offsetof(struct accel_native_handles, context);
    assert_status(table->native_handles(device, stream, &out->cut), ACCEL_OK);
    /* Too short to hold even the kind. */
    out->too_short.struct_size = 4;
    assert_status(table->native_handles(device, stream, &out->too_short),
                  ACCEL_ERR_INVALID_ARGUMENT);

    assert_status(table->stream_sync(device, stream), ACCEL_OK);
    table->stream_destroy(device, stream);
    table->device_close(device);
    table->plugin_close(plugin);
    dlclose(dl);
}
