/*
 * Communication providers: accel-comm-NAME.so for each NAME of ACCEL_COMM,
 * found on the driver plugins' search path and checked as they are (the
 * file opened once and checked on its descriptor, then loaded through that
 * descriptor: plugin_file.c), then the table (symbol size, struct_size,
 * abi_major, name, required entries) and plugin_open.
 *
 * Nothing here runs at accel_host_create: a program without collectives
 * pays nothing. The first communicator loads the list, once per host, and
 * every provider that fails keeps its reason for the NOT_FOUND detail and
 * accel-info --comm.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "device.h"
#include "escape.h"
#include "host.h"
#include "loader.h"
#include "os.h"
#include "plugin_file.h"
#include "status.h"
#include "submit.h"
#include "trace.h"

#define COMM_DEFAULT "nccl,rccl,mpi,host"
#define COMM_PREFIX "accel-comm-"
#define COMM_PROVIDERS_MAX 16

static const struct accel_comm_services comm_services = {
    .struct_size = sizeof(struct accel_comm_services),
    .host_minor = ACCEL_COMM_ABI_MINOR,
    .log = accel__log,
    .set_error = accel__error,
    .getenv = accel__getenv,
};

static void set_reason(struct accel__comm_provider *provider, const char *fmt,
                       ...) __attribute__((format(printf, 2, 3)));

/* The provider's reason, escaped (it may quote the provider's words). */
static void set_reason(struct accel__comm_provider *provider, const char *fmt, ...)
{
    char raw[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(raw, sizeof raw, fmt, args);
    va_end(args);
    size_t length = accel__escape(NULL, 0, raw);
    free(provider->reason);
    provider->reason = malloc(length + 1);
    if (provider->reason != NULL)
        accel__escape(provider->reason, length + 1, raw);
    accel__log(ACCEL_LOG_INFO, "comm provider '%s': %s", provider->name, raw);
}

/* ---- the table ---- */

static bool symbol_in(const void *address, const void *base)
{
    Dl_info info;
    return dladdr(address, &info) != 0 && info.dli_fbase == base;
}

/* Why the table is refused, in `why`; NULL when it passes (then copied). */
static const char *table_refusal(const struct accel_comm_v1 *table,
                                 const char *name, struct accel_comm_v1 *out,
                                 char *why, size_t why_size)
{
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    if (table == NULL)
        return "no symbol " ACCEL_COMM_SYMBOL;
    if (dladdr1(table, &info, (void **)&entry, RTLD_DL_SYMENT) != 0 &&
        entry != NULL &&
        entry->st_size <
            offsetof(struct accel_comm_v1, name) + sizeof table->name) {
        snprintf(why, why_size, ACCEL_COMM_SYMBOL " is %zu bytes, too small",
                 (size_t)entry->st_size);
        return why;
    }
    if (table->abi_major != ACCEL_COMM_ABI_MAJOR) {
        snprintf(why, why_size, "ABI major %u, the host speaks %u",
                 (unsigned)table->abi_major, ACCEL_COMM_ABI_MAJOR);
        return why;
    }
    if (table->struct_size < ACCEL_COMM_V1_0_SIZE) {
        snprintf(why, why_size, "struct_size %u is less than the 1.0 table's %zu",
                 (unsigned)table->struct_size, (size_t)ACCEL_COMM_V1_0_SIZE);
        return why;
    }
    /* What is read must be what was checked: entries the table claims past
     * its symbol would be whatever the object file holds after it. */
    if (entry != NULL && (ELF64_ST_TYPE(entry->st_info) != STT_OBJECT ||
                          table->struct_size > entry->st_size)) {
        snprintf(why, why_size,
                 "struct_size %u does not fit the symbol " ACCEL_COMM_SYMBOL
                 " (%zu bytes, ELF type %u)",
                 (unsigned)table->struct_size, (size_t)entry->st_size,
                 (unsigned)ELF64_ST_TYPE(entry->st_info));
        return why;
    }
    if (table->name == NULL || !symbol_in(table->name, info.dli_fbase) ||
        strnlen(table->name, ACCEL_PLUGIN_NAME_MAX + 1) > ACCEL_PLUGIN_NAME_MAX ||
        strcmp(table->name, name) != 0) {
        snprintf(why, why_size, "the table's name is not '%s' (the file's)",
                 name);
        return why;
    }
    if (table->struct_size < sizeof *out &&
        (table->struct_size - ACCEL_COMM_V1_0_SIZE) % sizeof(void (*)(void)) !=
            0) {
        snprintf(why, why_size,
                 "struct_size %u cuts an entry: a table covers each entry "
                 "whole",
                 (unsigned)table->struct_size);
        return why;
    }
    memset(out, 0, sizeof *out);
    memcpy(out, table,
           table->struct_size < sizeof *out ? table->struct_size : sizeof *out);
#define REQUIRED(entry)                                                        \
    if (out->entry == NULL) {                                                  \
        snprintf(why, why_size, "required entry '%s' is NULL", #entry);        \
        return why;                                                            \
    }
    REQUIRED(plugin_open)
    REQUIRED(plugin_close)
    REQUIRED(accepts_memory)
    REQUIRED(comm_create)
    REQUIRED(comm_destroy)
    REQUIRED(comm_abort)
    REQUIRED(comm_error)
    REQUIRED(submit)
#undef REQUIRED
    return NULL;
}

static void provider_close(struct accel__comm_provider *provider)
{
    if (provider->state != NULL)
        provider->table.plugin_close(provider->state);
    provider->state = NULL;
    if (provider->dl != NULL)
        dlclose(provider->dl);
    provider->dl = NULL;
    if (provider->fd >= 0)
        close(provider->fd);
    provider->fd = -1;
    memset(&provider->table, 0, sizeof provider->table);
}

/* Load the checked file, check its table and open it. */
static void provider_start(struct accel__comm_provider *provider,
                           struct accel__plugin_file *file)
{
    char why[1024];
    const char *refusal = accel__plugin_file_load(
        &file->fd, &file->st, &provider->dl, why, sizeof why);
    if (refusal != NULL) {
        set_reason(provider, "%s", refusal);
        return;
    }
    provider->fd = file->fd;
    file->fd = -1;
    refusal = table_refusal(dlsym(provider->dl, ACCEL_COMM_SYMBOL),
                            provider->name, &provider->table, why, sizeof why);
    if (refusal != NULL) {
        set_reason(provider, "%s", refusal);
        provider_close(provider);
        return;
    }
    accel_comm_provider *state = NULL;
    /* No detail on record: a provider that fails without set_error must
     * not be given an older error's words as its reason. */
    accel__error(ACCEL_OK, "%s", "");
    accel_status status = accel__from_plugin(
        provider->table.plugin_open(&comm_services, &state), "plugin_open");
    if (status == ACCEL_OK && state == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "plugin_open succeeded without a provider");
    if (status != ACCEL_OK) {
        set_reason(provider, "plugin_open failed: %s: %s",
                   accel_status_name(status), accel_last_error());
        provider_close(provider);
        return;
    }
    provider->state = state;
    accel__log(ACCEL_LOG_INFO, "comm provider '%s' loaded from %s",
               provider->name, provider->path);
}

/* Look for the provider's file in each search entry, in order. */
static void provider_find(const struct accel__catalog *search,
                          const struct accel__trust *trust,
                          struct accel__comm_provider *provider)
{
    char file_name[64];
    snprintf(file_name, sizeof file_name, COMM_PREFIX "%s.so", provider->name);
    for (size_t i = 0; i < search->search_count; i++) {
        const char *entry = search->search[i];
        const char *slash = strrchr(entry, '/');
        char *dir_path = NULL;
        if (slash != NULL && strcmp(slash + 1, file_name) == 0)
            dir_path = strndup(entry,
                               slash == entry ? 1 : (size_t)(slash - entry));
        else
            dir_path = strdup(entry);
        struct accel__dir dir;
        if (dir_path == NULL ||
            accel__dir_open(trust, dir_path, "its directory", &dir) != ACCEL_OK) {
            free(dir_path);
            continue;
        }
        char *shown = accel__strdup_printf("%s/%s", dir_path, file_name);
        struct accel__plugin_file file;
        bool found = false;
        if (shown != NULL && dir.fd >= 0 &&
            accel__plugin_file_open(trust, &dir, file_name, shown, &file) ==
                ACCEL_OK) {
            found = !file.gone;
            if (found) {
                provider->path = shown;
                shown = NULL;
                if (file.refusal[0] != '\0')
                    set_reason(provider, "%s", file.refusal);
                else
                    provider_start(provider, &file);
            }
            accel__plugin_file_close(&file);
        }
        free(shown);
        accel__dir_close(&dir);
        free(dir_path);
        if (found)
            return;
    }
    set_reason(provider, "no file " COMM_PREFIX "%s.so on the plugin search path",
               provider->name);
}

/* ---- the list ---- */

static void trust_current(struct accel__trust *out)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    out->euid = ids.euid;
    const char *insecure = accel__getenv("ACCEL_ALLOW_INSECURE_PLUGINS");
    out->insecure = insecure != NULL && strcmp(insecure, "1") == 0;
}

/* Split ACCEL_COMM into provider entries. */
static accel_status names_parse(const char *text,
                                struct accel__comm_catalog *catalog)
{
    catalog->list = calloc(COMM_PROVIDERS_MAX, sizeof *catalog->list);
    if (catalog->list == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "comm providers");
    const char *p = text;
    while (*p != '\0') {
        size_t length = strcspn(p, ",");
        if (!accel__plugin_name_valid(p, length))
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "ACCEL_COMM: '%.*s' is not a provider name "
                                "(1 to %d characters of [a-z0-9_])",
                                (int)(length > 64 ? 64 : length), p,
                                ACCEL_PLUGIN_NAME_MAX);
        if (catalog->count == COMM_PROVIDERS_MAX)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "ACCEL_COMM names more than %d providers",
                                COMM_PROVIDERS_MAX);
        struct accel__comm_provider *provider = &catalog->list[catalog->count++];
        provider->fd = -1;
        provider->name = strndup(p, length);
        if (provider->name == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "comm provider");
        p += length;
        /* A trailing comma would end the loop with an empty name unread. */
        if (*p == ',' && *++p == '\0')
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "ACCEL_COMM ends with ',': a name is missing");
    }
    if (catalog->count == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM names no provider");
    return ACCEL_OK;
}

static accel_status infos_build(struct accel__comm_catalog *catalog)
{
    catalog->infos = calloc(catalog->count, sizeof *catalog->infos);
    if (catalog->infos == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "comm providers");
    for (size_t i = 0; i < catalog->count; i++) {
        const struct accel__comm_provider *provider = &catalog->list[i];
        catalog->infos[i] = (accel_comm_provider_info){
            .name = provider->name,
            .path = provider->path,
            .open = provider->state != NULL,
            .caps = provider->table.caps,
            .reason = provider->reason,
        };
    }
    return ACCEL_OK;
}

static void catalog_free(struct accel__comm_catalog *catalog)
{
    for (size_t i = 0; i < catalog->count; i++) {
        provider_close(&catalog->list[i]);
        free(catalog->list[i].name);
        free(catalog->list[i].path);
        free(catalog->list[i].reason);
    }
    free(catalog->list);
    free(catalog->infos);
    free(catalog);
}

static accel_status catalog_load(accel_host *host,
                                 struct accel__comm_catalog **out_catalog)
{
    struct accel__comm_catalog *catalog = calloc(1, sizeof *catalog);
    if (catalog == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "comm providers");
    const char *text = accel__getenv("ACCEL_COMM");
    accel_status status = names_parse(text && *text ? text : COMM_DEFAULT,
                                      catalog);
    struct accel__trust trust;
    trust_current(&trust);
    for (size_t i = 0; status == ACCEL_OK && i < catalog->count; i++) {
        /* A name listed twice is tried once. */
        bool again = false;
        for (size_t j = 0; j < i; j++)
            again |= strcmp(catalog->list[j].name, catalog->list[i].name) == 0;
        if (again)
            set_reason(&catalog->list[i], "listed twice in ACCEL_COMM");
        else
            provider_find(&host->catalog, &trust, &catalog->list[i]);
    }
    if (status == ACCEL_OK)
        status = infos_build(catalog);
    if (status != ACCEL_OK) {
        catalog_free(catalog);
        return status;
    }
    catalog->loaded = true;
    *out_catalog = catalog;
    return ACCEL_OK;
}

accel_status accel__comm_catalog_load(accel_host *host,
                                      struct accel__comm_catalog **out_catalog)
{
    pthread_mutex_lock(&host->lock);
    accel_status status = ACCEL_OK;
    if (host->comm == NULL)
        status = catalog_load(host, &host->comm);
    *out_catalog = host->comm;
    pthread_mutex_unlock(&host->lock);
    return status;
}

void accel__comm_catalog_unload(accel_host *host)
{
    if (host->comm != NULL)
        catalog_free(host->comm);
    host->comm = NULL;
}

/* ---- choosing one for a device ---- */

accel_status accel__comm_native(accel_device *device,
                                struct accel_native_handles *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (ACCEL__DRV_HAS(device, native_handles))
        return ACCEL__DRV_CALL(device, native_handles, NULL, out);
    if ((device->props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE) != 0) {
        out->kind = ACCEL_NATIVE_CPU;
        out->device_ordinal = (int32_t)device->index;
        return ACCEL_OK;
    }
    return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                        "plugin '%s' has no native_handles entry",
                        device->plugin->name);
}

/* Why `provider` cannot serve `device`, in `why`; NULL when it can. */
static const char *serve_refusal(struct accel__comm_provider *provider,
                                 accel_device *device, bool loopback,
                                 struct accel__comm_choice *choice, char *why,
                                 size_t why_size)
{
    const struct accel_comm_v1 *t = &provider->table;
    if (loopback && (t->caps & ACCEL_COMM_CAP_LOOPBACK) == 0)
        return "no loopback (ranks as threads of one process)";
    if (accel__comm_native(device, &choice->native) != ACCEL_OK) {
        snprintf(why, why_size, "%s", accel_last_error());
        return why;
    }
    bool accepts = t->accepts_memory(provider->state,
                                     (accel_native_kind)choice->native.kind) ==
                   ACCEL_OK;
    bool visible = (device->props.caps & ACCEL_DEVICE_CAP_HOST_VISIBLE) != 0;
    choice->host_run = (t->caps & ACCEL_COMM_CAP_STREAM) == 0;
    if (!choice->host_run) {
        if (!accepts) {
            snprintf(why, why_size, "does not take %s:%u's memory: %s",
                     device->plugin->name, device->index, accel_last_error());
            return why;
        }
        if (!ACCEL__DRV_HAS(device, native_handles))
            return "stream-ordered, and the device's plugin has no "
                   "native_handles entry";
        return NULL;
    }
    if (!ACCEL__DRV_HAS(device, host_func))
        return "host-run, and the device's plugin has no host_func entry";
    /* Host pointers: the device's own when they are host-visible, else
     * staged through pinned host memory (comm_stage.c) unless the provider
     * takes the device's memory (a GPU-aware MPI). */
    choice->host_memory = visible || !accepts;
    return NULL;
}

accel_status accel__comm_choose(struct accel__comm_catalog *catalog,
                                accel_device *const *devices, int count,
                                bool loopback,
                                struct accel__comm_choice *out_choice)
{
    char detail[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < catalog->count; i++) {
        struct accel__comm_provider *provider = &catalog->list[i];
        const char *refusal = provider->reason;
        char why[512];
        memset(out_choice, 0, sizeof *out_choice);
        for (int d = 0; refusal == NULL && d < count; d++)
            refusal = serve_refusal(provider, devices[d], loopback, out_choice,
                                    why, sizeof why);
        if (refusal == NULL) {
            out_choice->provider = provider;
            return ACCEL_OK;
        }
        int n = snprintf(detail + used, sizeof detail - used, "%s%s: %s",
                         used ? "; " : "", provider->name, refusal);
        if (n > 0 && (size_t)n < sizeof detail - used)
            used += (size_t)n;
    }
    memset(out_choice, 0, sizeof *out_choice);
    return accel__error(ACCEL_ERR_NOT_FOUND,
                        "no communication provider serves the device%s: %s",
                        count > 1 ? "s" : "", detail);
}

static accel_status comm_providers_untraced(accel_host *host,
                                            const accel_comm_provider_info **out,
                                            size_t *out_count)
{
    if (out != NULL)
        *out = NULL;
    if (out_count != NULL)
        *out_count = 0;
    if (host == NULL || out == NULL || out_count == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_comm_providers: NULL argument");
    if (accel__process_check(host->pid, "accel_host_comm_providers") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    struct accel__comm_catalog *catalog = NULL;
    accel_status status = accel__comm_catalog_load(host, &catalog);
    if (status != ACCEL_OK)
        return status;
    *out = catalog->infos;
    *out_count = catalog->count;
    return ACCEL_OK;
}

accel_status accel_host_comm_providers(accel_host *host,
                                       const accel_comm_provider_info **out,
                                       size_t *out_count)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = comm_providers_untraced(host, out, out_count);
    return accel__trace_end(traced, status, 0);
}
