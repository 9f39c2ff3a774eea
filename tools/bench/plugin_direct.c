/*
 * The dispatch baseline: the selected device's plugin called directly.
 *
 * The plugin file that libaccel loaded is opened again here with dlopen
 * (the dynamic loader hands back the same object), its accel_driver_v1
 * table looked up, and a plugin, a device, a stream and an event of our
 * own are made through the table with a minimal services table. The
 * measured call is the table's event_query on a completed event, made
 * through the function pointer as libaccel makes it: the difference to
 * accel_event_query is what libaccel adds to a call.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include "bench.h"
#include "accel/driver.h"

enum { DISPATCH_BATCH = 1000 };

struct plugin_state {
    void *dl;
    const struct accel_driver_v1 *drv;
    accel_drv_plugin *plugin;
    accel_drv_device *device;
    accel_drv_stream *stream;
    accel_drv_event *event;
};

static void services_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status services_set_error(accel_status status, const char *fmt, ...)
{
    (void)fmt;
    return status;
}

static const char *services_getenv(const char *name)
{
    return secure_getenv(name);
}

static const struct accel_host_services services = {
    .struct_size = sizeof(struct accel_host_services),
    .version = ACCEL_HOST_SERVICES_VERSION,
    .log = services_log,
    .set_error = services_set_error,
    .getenv = services_getenv,
};

static void plugin_close(void *state)
{
    struct plugin_state *s = state;

    if (s == NULL)
        return;
    if (s->event != NULL)
        s->drv->event_destroy(s->device, s->event);
    if (s->stream != NULL) {
        s->drv->stream_sync(s->device, s->stream);
        s->drv->stream_destroy(s->device, s->stream);
    }
    if (s->device != NULL)
        s->drv->device_close(s->device);
    if (s->plugin != NULL)
        s->drv->plugin_close(s->plugin);
    if (s->dl != NULL)
        dlclose(s->dl);
    free(s);
}

static bool plugin_open(struct bench_env *env, void **out_state)
{
    struct plugin_state *s = calloc(1, sizeof(*s));
    const struct accel_driver_v1 *drv;
    const char *what;

    *out_state = s;
    if (s == NULL)
        return false;
    s->dl = dlopen(env->plugin_path, RTLD_NOW | RTLD_LOCAL);
    drv = s->dl != NULL ? dlsym(s->dl, ACCEL_DRIVER_SYMBOL) : NULL;
    if (drv == NULL) {
        bench_report_note(env->report, "plugin: %s", dlerror());
        return false;
    }
    what = "the table is too old";
    if (drv->struct_size < offsetof(struct accel_driver_v1, event_sync))
        goto fail;
    s->drv = drv;
    what = "plugin_open";
    if (drv->plugin_open(&services, &s->plugin) != ACCEL_OK)
        goto fail;
    what = "device_open";
    if (drv->device_open(s->plugin, env->info.index, &s->device) != ACCEL_OK)
        goto fail;
    what = "stream_create";
    if (drv->stream_create(s->device, &s->stream) != ACCEL_OK)
        goto fail;
    what = "event_create";
    if (drv->event_create(s->device, &s->event) != ACCEL_OK)
        goto fail;
    what = "event_record";
    if (drv->event_record(s->device, s->event, s->stream) != ACCEL_OK ||
        drv->stream_sync(s->device, s->stream) != ACCEL_OK)
        goto fail;
    return true;

fail:
    bench_report_note(env->report, "plugin: %s: %s failed", env->plugin_path,
                      what);
    return false;
}

static bool step_query(void *context, double *out_ns)
{
    struct plugin_state *s = context;
    uint64_t start = bench_now_ns();
    bool ok = true;

    for (int i = 0; i < DISPATCH_BATCH; i++)
        ok &= s->drv->event_query(s->device, s->event) == ACCEL_OK;
    *out_ns = (double)(bench_now_ns() - start) / DISPATCH_BATCH;
    return ok;
}

static bool measure_dispatch(void *state, struct bench_run *run)
{
    return bench_measure(run, step_query, state,
                         "the plugin's event_query entry called directly", 0) ||
           bench_fail(run, "event_query failed");
}

const struct bench_impl bench_impl_plugin = {
    .name = "plugin",
    .open = plugin_open,
    .close = plugin_close,
    .measure =
        {
            [BENCH_DISPATCH] = measure_dispatch,
        },
};
