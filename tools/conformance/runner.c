/*
 * Running one conformance test: a fresh host (and for a device test the
 * device open with one stream), the test, whatever it left cleaned up, and
 * the outcome with its message and time.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* The test under way on this thread: where a check jumps back to. */
struct conf_run {
    jmp_buf jump;
    struct conf_result *result;
};

static _Thread_local struct conf_run *current;

static void record(enum conf_outcome outcome, const char *prefix,
                   const char *fmt, va_list args)
{
    struct conf_result *r = current->result;
    int used = snprintf(r->message, sizeof(r->message), "%s", prefix);

    if (used < 0 || (size_t)used >= sizeof(r->message))
        used = 0;
    vsnprintf(r->message + used, sizeof(r->message) - (size_t)used, fmt, args);
    r->outcome = outcome;
}

/* A check made off the test's thread cannot leave the test: say so and stop. */
static void require_test_thread(const char *what)
{
    if (current != NULL)
        return;
    fprintf(stderr, "accel-conformance: %s outside a test's own thread\n", what);
    abort();
}

void conf__fail(const char *file, int line, const char *fmt, ...)
{
    char where[256];
    const char *base = strrchr(file, '/');
    va_list args;

    require_test_thread("a check failed");
    snprintf(where, sizeof(where), "%s:%d: ", base != NULL ? base + 1 : file,
             line);
    va_start(args, fmt);
    record(CONF_FAIL, where, fmt, args);
    va_end(args);
    longjmp(current->jump, 1);
}

void conf__skip(const char *fmt, ...)
{
    va_list args;

    require_test_thread("a skip");
    va_start(args, fmt);
    record(CONF_SKIP, "", fmt, args);
    va_end(args);
    longjmp(current->jump, 1);
}

void conf__check_status(accel_status actual, accel_status expected,
                        const char *expr, const char *file, int line)
{
    char detail[512];

    if (actual == expected)
        return;
    /* Copied first: a later accel call may replace it. */
    snprintf(detail, sizeof(detail), "%s", accel_last_error());
    conf__fail(file, line,
               "%s returned %s (%d), expected %s (%d); last error: \"%s\"",
               expr, accel_status_name(actual), (int)actual,
               accel_status_name(expected), (int)expected, detail);
}

void conf__check_memory(const void *actual, const void *expected, size_t bytes,
                        const char *expr, const char *file, int line)
{
    const unsigned char *a = actual, *e = expected;

    for (size_t i = 0; i < bytes; i++) {
        if (a[i] != e[i])
            conf__fail(file, line, "%s: byte %zu of %zu is 0x%02x, not 0x%02x",
                       expr, i, bytes, a[i], e[i]);
    }
}

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void begin(struct conf_result *out, const struct conf_test *test,
                  const char *group)
{
    memset(out, 0, sizeof(*out));
    out->group = group;
    out->name = test->name;
    out->outcome = CONF_PASS;
}

/* Fail the test before it ran: its setup could not be made. */
static void setup_failed(struct conf_result *out, const char *call,
                         accel_status status)
{
    out->outcome = CONF_FAIL;
    snprintf(out->message, sizeof(out->message), "setup: %s returned %s: %s",
             call, accel_status_name(status), accel_last_error());
}

/*
 * The test itself, under a jump point. `c` is volatile-free: the runner
 * reads only what setup wrote before the jump point was set.
 */
static void run_guarded(const struct conf_test *test, struct conformance *c,
                        struct conf_result *out)
{
    struct conf_run run = {.result = out};
    double start = now_seconds();

    current = &run;
    if (setjmp(run.jump) == 0)
        test->run(c);
    current = NULL;
    out->seconds = now_seconds() - start;
}

void conf_run_plugin_test(const struct conf_test *test,
                          const accel_host_options *options,
                          const struct conf_plugin *plugin,
                          const char *module_path, const char *group,
                          struct conf_result *out)
{
    struct conformance c = {.plugin = plugin, .module_path = module_path};
    accel_status status;

    begin(out, test, group);
    if ((status = accel_host_create(options, &c.host)) != ACCEL_OK) {
        setup_failed(out, "accel_host_create", status);
        return;
    }
    run_guarded(test, &c, out);
    accel_host_destroy(c.host);
}

void conf_run_device_test(const struct conf_test *test,
                          const accel_host_options *options,
                          const struct conf_plugin *plugin,
                          const char *module_path, uint32_t index,
                          const char *group, struct conf_result *out)
{
    struct conformance c = {
        .plugin = plugin, .module_path = module_path, .index = index};
    accel_status status;

    begin(out, test, group);
    if ((status = accel_host_create(options, &c.host)) != ACCEL_OK) {
        setup_failed(out, "accel_host_create", status);
        return;
    }
    if ((status = accel_device_open(c.host, plugin->name, index, &c.device)) !=
        ACCEL_OK)
        setup_failed(out, "accel_device_open", status);
    else if ((status = accel_device_info_get(c.device, &c.info)) != ACCEL_OK)
        setup_failed(out, "accel_device_info_get", status);
    else if ((status = accel_stream_create(c.device, &c.stream)) != ACCEL_OK)
        setup_failed(out, "accel_stream_create", status);
    else
        run_guarded(test, &c, out);
    accel_stream_destroy(c.stream);
    accel_device_close(c.device);
    accel_host_destroy(c.host);
}

bool conf_plugin_has_entry(const struct conf_plugin *plugin, unsigned slot)
{
    return plugin->table_read && slot < 64 && (plugin->entries >> slot & 1u) != 0;
}

/*
 * The table as the plugin built it. The host has loaded and checked it, so
 * RTLD_NOLOAD finds the same object (nothing runs again). A plugin without
 * a device the host has already closed: it is opened again to read its
 * table, which the host checked, and nothing in it is called. A plugin the
 * host refused is never opened here.
 */
static void read_table(struct conf_plugin *plugin)
{
    void *library = dlopen(plugin->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    const struct accel_driver_v1 *table;

    if (library == NULL && plugin->state == ACCEL_PLUGIN_NO_DEVICE)
        library = dlopen(plugin->path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL)
        return;
    table = dlsym(library, ACCEL_DRIVER_SYMBOL);
    if (table != NULL) {
        plugin->table_read = true;
        plugin->struct_size = table->struct_size;
        plugin->abi_major = table->abi_major;
        plugin->abi_minor = table->abi_minor;
        for (unsigned slot = 0; slot < 64; slot++) {
            size_t offset = ACCEL_DRIVER_V1_ENTRY_OFFSET(slot);
            void (*entry)(void);

            if (table->struct_size < offset + sizeof(entry))
                break;
            memcpy(&entry, (const char *)table + offset, sizeof(entry));
            if (entry != NULL)
                plugin->entries |= 1ull << slot;
        }
    }
    dlclose(library);
}

bool conf_plugin_describe(accel_host *host, const char *name,
                          struct conf_plugin *plugin, char *error,
                          size_t error_size)
{
    const accel_plugin_info *plugins = NULL;
    size_t count = 0;

    memset(plugin, 0, sizeof(*plugin));
    accel_host_plugins(host, &plugins, &count);
    for (size_t i = 0; i < count; i++) {
        const accel_plugin_info *p = &plugins[i];

        if (p->name == NULL || strcmp(p->name, name) != 0)
            continue;
        snprintf(plugin->path, sizeof(plugin->path), "%s", p->path);
        snprintf(plugin->name, sizeof(plugin->name), "%s", p->name);
        snprintf(plugin->reason, sizeof(plugin->reason), "%s",
                 p->reason ? p->reason : "");
        plugin->state = p->state;
        plugin->device_count = p->device_count;
        if (p->state == ACCEL_PLUGIN_LOADED || p->state == ACCEL_PLUGIN_NO_DEVICE)
            read_table(plugin);
        return true;
    }
    snprintf(error, error_size,
             "no plugin named \"%s\" among the %zu candidates found", name,
             count);
    return false;
}
