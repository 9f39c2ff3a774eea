/*
 * The host: one discovery of the plugins and the devices opened from them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>

#include "comm.h"
#include "host.h"
#include "loader.h"
#include "os.h"
#include "select.h"
#include "sized.h"
#include "status.h"
#include "trace.h"

/* ---- the process, for use after fork() ---- */

pid_t accel__pid;
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

/* Runs in the child of a fork, while it has only the one thread. */
static void pid_in_child(void)
{
    accel__pid = getpid();
}

static void pid_init(void)
{
    accel__pid = getpid();
    pthread_atfork(NULL, NULL, pid_in_child);
}

accel_status accel__forked(const char *what)
{
    return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                        "%s: used after fork: create a new host in the child",
                        what);
}

static accel_status take_selection(accel_host *host, const char *text)
{
    host->parse_status = accel__backend_parse(text, host->items,
                                              &host->item_count);
    if (host->parse_status != ACCEL_OK) {
        /* Kept for accel_device_open_selected: the candidates can still be
         * listed, and nothing is opened on a selection that cannot be read. */
        host->parse_error = strdup(accel_last_error());
        if (host->parse_error == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "backend");
        host->item_count = 0;
    }
    return ACCEL_OK;
}

/*
 * The services this host's plugins receive: the shared ones, with the
 * host's ABI minor, and whether the process is elevated (by the ids the
 * host was created for, or the kernel's secure mode: file capabilities)
 * and the program allows vendor runtimes then.
 */
static void services_for(const accel_host_options *options,
                         const struct accel__ids *ids,
                         struct accel__host_services *out_all)
{
    struct accel_host_services *out_services = &out_all->v1;
    memset(out_all, 0, sizeof *out_all);
    *out_services = accel__services;
    out_services->struct_size = sizeof *out_all;
    out_services->host_minor = ACCEL__HOST_MINOR;
    out_services->privilege = 0;
    if (accel__ids_elevated(ids) || getauxval(AT_SECURE) != 0) {
        out_services->privilege |= ACCEL_HOST_PRIVILEGE_ELEVATED;
        if (options != NULL && options->vendor_runtimes_when_elevated)
            out_services->privilege |= ACCEL_HOST_PRIVILEGE_VENDOR_RUNTIMES_ALLOWED;
    }
}

static accel_status host_create_untraced(const accel_host_options *options,
                                         accel_host **out_host)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    return accel__host_create_as(options, &ids, out_host);
}

accel_status accel_host_create(const accel_host_options *options,
                               accel_host **out_host)
{
    uint64_t traced = accel__trace_now();
    accel_status status = host_create_untraced(options, out_host);
    return accel__trace_end("accel_host_create", traced, status, 0);
}

/* The caller's options in this library's layout, or NULL for none. */
static accel_status take_options(const accel_host_options *caller_options,
                                 accel_host_options *local,
                                 const accel_host_options **out_options)
{
    *out_options = NULL;
    if (caller_options == NULL)
        return ACCEL_OK;
    accel_status status = accel__struct_in(
        local, sizeof *local, caller_options,
        ACCEL__STRUCT_MIN(accel_host_options, plugin_path), "accel_host_create");
    if (status == ACCEL_OK)
        *out_options = local;
    return status;
}

accel_status accel__host_create_as(const accel_host_options *caller_options,
                                   const struct accel__ids *ids,
                                   accel_host **out_host)
{
    if (out_host == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_create: out_host is NULL");
    *out_host = NULL;
    accel_host_options local;
    const accel_host_options *options;
    accel_status options_status = take_options(caller_options, &local, &options);
    if (options_status != ACCEL_OK)
        return options_status;
    accel_host *host = calloc(1, sizeof *host);
    if (host == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_host");
    pthread_once(&pid_once, pid_init);
    host->pid = accel__pid;
    host->ids = *ids;
    const char *plugin_path = options ? options->plugin_path : NULL;
    if (plugin_path == NULL)
        plugin_path = accel__getenv_as(ids, "ACCEL_PLUGIN_PATH");
    const char *backend = options ? options->backend : NULL;
    if (backend == NULL)
        backend = accel__getenv_as(ids, "ACCEL_BACKEND");

    accel_status status = take_selection(host, backend);
    if (status != ACCEL_OK)
        goto fail_selection;
    if (pthread_mutex_init(&host->lock, NULL) != 0) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "pthread_mutex_init");
        goto fail_selection;
    }
    bool open_all = host->parse_status == ACCEL_OK;
    services_for(options, ids, &host->services);
    status = accel__catalog_load(&host->catalog, &host->services.v1, ids,
                                 plugin_path, host->items, host->item_count,
                                 open_all);
    if (status != ACCEL_OK)
        goto fail_catalog;
    accel__trace_host_begin(ids);
    *out_host = host;
    return ACCEL_OK;

fail_catalog:
    pthread_mutex_destroy(&host->lock);
fail_selection:
    free(host->parse_error);
    free(host);
    return status;
}

static void host_destroy_untraced(accel_host *host)
{
    /* A fork's child leaves the parent's host alone: closing its devices
     * would wait for threads that exist only in the parent. */
    if (host == NULL || host->pid != accel__pid)
        return;
    while (host->devices != NULL)
        accel_device_close(host->devices);
    accel__trace_host_end();
    accel__comm_catalog_unload(host);
    accel__catalog_unload(&host->catalog);
    pthread_mutex_destroy(&host->lock);
    free(host->parse_error);
    free(host);
}

void accel_host_destroy(accel_host *host)
{
    uint64_t traced = accel__trace_now();
    host_destroy_untraced(host);
    accel__trace_end("accel_host_destroy", traced, ACCEL_OK, 0);
}

static void host_plugins_untraced(const accel_host *host,
                                  const accel_plugin_info **out_plugins,
                                  size_t *out_count)
{
    if (out_plugins != NULL)
        *out_plugins = host ? host->catalog.infos : NULL;
    if (out_count != NULL)
        *out_count = host ? host->catalog.count : 0;
}

void accel_host_plugins(const accel_host *host,
                        const accel_plugin_info **out_plugins, size_t *out_count)
{
    uint64_t traced = accel__trace_now();
    host_plugins_untraced(host, out_plugins, out_count);
    accel__trace_end("accel_host_plugins", traced, ACCEL_OK, 0);
}

static void host_search_path_untraced(const accel_host *host,
                                      const char *const **out_entries,
                                      size_t *out_count)
{
    if (out_entries != NULL)
        *out_entries = host ? (const char *const *)host->catalog.search : NULL;
    if (out_count != NULL)
        *out_count = host ? host->catalog.search_count : 0;
}

void accel_host_search_path(const accel_host *host,
                            const char *const **out_entries, size_t *out_count)
{
    uint64_t traced = accel__trace_now();
    host_search_path_untraced(host, out_entries, out_count);
    accel__trace_end("accel_host_search_path", traced, ACCEL_OK, 0);
}

const char *accel_plugin_state_name(accel_plugin_state state)
{
    switch (state) {
    case ACCEL_PLUGIN_LOADED:
        return "loaded";
    case ACCEL_PLUGIN_NO_DEVICE:
        return "no device";
    case ACCEL_PLUGIN_REJECTED:
        return "rejected";
    case ACCEL_PLUGIN_SKIPPED:
        return "skipped";
    }
    return "unknown";
}

static const struct {
    const char *name;
    size_t size;
} elem_types[ACCEL_ELEM_TYPE_COUNT] = {
    [ACCEL_BYTE] = {"byte", 1}, [ACCEL_F16] = {"f16", 2},
    [ACCEL_BF16] = {"bf16", 2}, [ACCEL_F32] = {"f32", 4},
    [ACCEL_F64] = {"f64", 8},   [ACCEL_I8] = {"i8", 1},
    [ACCEL_I16] = {"i16", 2},   [ACCEL_I32] = {"i32", 4},
    [ACCEL_I64] = {"i64", 8},   [ACCEL_U8] = {"u8", 1},
    [ACCEL_U16] = {"u16", 2},   [ACCEL_U32] = {"u32", 4},
    [ACCEL_U64] = {"u64", 8},
};

size_t accel_elem_size(accel_elem_type type)
{
    if ((unsigned)type >= ACCEL_ELEM_TYPE_COUNT)
        return 0;
    return elem_types[type].size;
}

const char *accel_elem_type_name(accel_elem_type type)
{
    if ((unsigned)type >= ACCEL_ELEM_TYPE_COUNT)
        return "?";
    return elem_types[type].name;
}
