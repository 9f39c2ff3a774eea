/*
 * Plugin discovery: the search path, the candidate files, and the checks a
 * plugin passes before the host calls anything in it.
 *
 * A candidate that fails a check is kept in the catalog with its reason and
 * never opened again; discovery itself fails only when memory runs out.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#ifndef ACCEL_PLUGINDIR
#error "the build defines ACCEL_PLUGINDIR"
#endif

#define PREFIX "accel-plugin-"
#define SUFFIX ".so"

/* The entries every plugin must fill, in table order. */
#define ACCEL__REQUIRED_ENTRIES(X)                                             \
    X(plugin_open) X(plugin_close) X(device_count) X(device_info)              \
    X(device_open) X(device_close) X(device_status) X(device_reset)           \
    X(mem_alloc) X(mem_free) X(host_alloc) X(host_free) X(stream_create)      \
    X(stream_destroy) X(stream_sync) X(event_create) X(event_destroy)         \
    X(event_record) X(event_query) X(event_sync) X(stream_wait_event)         \
    X(copy_to_device) X(copy_to_host) X(copy_on_device) X(module_load)        \
    X(module_unload) X(kernel_get) X(launch)

/* The smallest table a 1.0 plugin can have: up to its last required entry. */
#define V1_0_MIN_SIZE                                                          \
    (offsetof(struct accel_driver_v1, launch) +                                \
     sizeof(((struct accel_driver_v1 *)0)->launch))

bool accel__plugin_name_valid(const char *name, size_t length)
{
    if (length == 0 || length > ACCEL_PLUGIN_NAME_MAX)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

/* NAME out of ".../accel-plugin-NAME.so", malloc'd; NULL if not that form. */
static char *name_from_file(const char *file)
{
    size_t length = strlen(file);
    size_t fixed = strlen(PREFIX) + strlen(SUFFIX);
    if (length <= fixed || strncmp(file, PREFIX, strlen(PREFIX)) != 0 ||
        strcmp(file + length - strlen(SUFFIX), SUFFIX) != 0)
        return NULL;
    return strndup(file + strlen(PREFIX), length - fixed);
}

/* ---- the search path ---- */

static accel_status search_add(struct accel__catalog *catalog, const char *entry,
                               size_t length)
{
    if (length == 0)
        return ACCEL_OK;
    for (size_t i = 0; i < catalog->search_count; i++) {
        if (strlen(catalog->search[i]) == length &&
            strncmp(catalog->search[i], entry, length) == 0)
            return ACCEL_OK;
    }
    char **grown = realloc(catalog->search,
                           (catalog->search_count + 1) * sizeof *grown);
    if (grown == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "search path");
    catalog->search = grown;
    char *copy = strndup(entry, length);
    if (copy == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "search path");
    catalog->search[catalog->search_count++] = copy;
    return ACCEL_OK;
}

static accel_status search_build(struct accel__catalog *catalog,
                                 const char *plugin_path)
{
    accel_status status = ACCEL_OK;
    if (plugin_path != NULL && plugin_path[0] != '\0') {
        const char *start = plugin_path;
        for (;;) {
            const char *colon = strchr(start, ':');
            size_t length = colon ? (size_t)(colon - start) : strlen(start);
            status = search_add(catalog, start, length);
            if (status != ACCEL_OK || colon == NULL)
                return status;
            start = colon + 1;
        }
    }
    /* The default: beside the running libaccel (a build tree stages its
     * plugins there too), then where the build installs them. */
    char *library_dir = accel__library_dir();
    if (library_dir != NULL) {
        char *beside = accel__strdup_printf("%s/accel/plugins", library_dir);
        free(library_dir);
        if (beside == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "search path");
        status = search_add(catalog, beside, strlen(beside));
        free(beside);
        if (status != ACCEL_OK)
            return status;
    }
    return search_add(catalog, ACCEL_PLUGINDIR, strlen(ACCEL_PLUGINDIR));
}

/* ---- candidates ---- */

static struct accel__plugin *candidate_add(struct accel__catalog *catalog,
                                           const char *path, char *name)
{
    struct accel__plugin *grown =
        realloc(catalog->plugins, (catalog->count + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    catalog->plugins = grown;
    struct accel__plugin *plugin = &catalog->plugins[catalog->count];
    memset(plugin, 0, sizeof *plugin);
    plugin->state_kind = ACCEL_PLUGIN_REJECTED;
    plugin->path = strdup(path);
    if (plugin->path == NULL)
        return NULL;
    plugin->name = name;
    catalog->count++;
    return plugin;
}

static accel_status set_reason(struct accel__plugin *plugin,
                               accel_plugin_state state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Settle a candidate's state with its reason, and log it. */
static accel_status set_reason(struct accel__plugin *plugin,
                               accel_plugin_state state, const char *fmt, ...)
{
    plugin->state_kind = state;
    free(plugin->reason);
    va_list args;
    va_start(args, fmt);
    if (vasprintf(&plugin->reason, fmt, args) < 0)
        plugin->reason = NULL;
    va_end(args);
    if (plugin->reason == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin reason");
    accel__log(ACCEL_LOG_INFO, "%s: %s: %s", plugin->path,
               accel_plugin_state_name(state), plugin->reason);
    return ACCEL_OK;
}

/* An earlier candidate with this name that was not rejected. */
static const struct accel__plugin *
same_name(const struct accel__catalog *catalog, const struct accel__plugin *plugin)
{
    for (const struct accel__plugin *p = catalog->plugins; p < plugin; p++) {
        if (p->name != NULL && strcmp(p->name, plugin->name) == 0 &&
            p->state_kind != ACCEL_PLUGIN_REJECTED)
            return p;
    }
    return NULL;
}

/* Reason a file may not be loaded for its kind or its permissions. */
static const char *file_refusal(const struct stat *file, const struct stat *dir)
{
    if (!S_ISREG(file->st_mode))
        return "not a regular file";
    if (file->st_mode & S_IWOTH)
        return "the file is writable by other users";
    if (dir != NULL && (dir->st_mode & S_IWOTH) && !(dir->st_mode & S_ISVTX))
        return "its directory is writable by other users";
    return NULL;
}

/* ---- checking and opening one plugin ---- */

static const char *table_refusal(const struct accel_driver_v1 *table,
                                 size_t symbol_size, char *why, size_t why_size)
{
    if (symbol_size != 0 && symbol_size < V1_0_MIN_SIZE) {
        snprintf(why, why_size,
                 "symbol accel_driver_v1 is %zu bytes, smaller than a 1.0 table "
                 "(%zu)",
                 symbol_size, (size_t)V1_0_MIN_SIZE);
        return why;
    }
    if (table->abi_major != ACCEL_DRIVER_ABI_MAJOR) {
        snprintf(why, why_size, "ABI major version %u, this host speaks %u",
                 (unsigned)table->abi_major, (unsigned)ACCEL_DRIVER_ABI_MAJOR);
        return why;
    }
    if (table->struct_size < V1_0_MIN_SIZE ||
        (symbol_size != 0 && table->struct_size > symbol_size)) {
        snprintf(why, why_size,
                 "table size %u does not fit a 1.0 table (at least %zu bytes, "
                 "at most the symbol's %zu)",
                 (unsigned)table->struct_size, (size_t)V1_0_MIN_SIZE,
                 symbol_size);
        return why;
    }
    return NULL;
}

static const char *entries_refusal(const struct accel_driver_v1 *drv,
                                   const char *file_name, char *why,
                                   size_t why_size)
{
    if (drv->name == NULL) {
        snprintf(why, why_size, "table name is NULL");
        return why;
    }
    size_t length = strnlen(drv->name, ACCEL_PLUGIN_NAME_MAX + 1);
    if (!accel__plugin_name_valid(drv->name, length) ||
        strcmp(drv->name, file_name) != 0) {
        snprintf(why, why_size,
                 "table name does not match the file name's '%s' (or is not "
                 "1 to %d characters of [a-z0-9_])",
                 file_name, ACCEL_PLUGIN_NAME_MAX);
        return why;
    }
#define ACCEL__CHECK_ENTRY(entry)                                              \
    if (drv->entry == NULL) {                                                  \
        snprintf(why, why_size, "required entry '%s' is NULL", #entry);        \
        return why;                                                            \
    }
    ACCEL__REQUIRED_ENTRIES(ACCEL__CHECK_ENTRY)
#undef ACCEL__CHECK_ENTRY
    return NULL;
}

/*
 * Copy the plugin's table into the host's own, zero past what the plugin's
 * struct_size covers: an entry a 1.0 plugin does not have reads as NULL.
 */
static void table_copy(struct accel_driver_v1 *dst,
                       const struct accel_driver_v1 *src)
{
    size_t size = src->struct_size < sizeof *dst ? src->struct_size : sizeof *dst;
    memset(dst, 0, sizeof *dst);
    memcpy(dst, src, size);
}

static size_t symbol_size_of(const void *symbol)
{
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    if (dladdr1(symbol, &info, (void **)&entry, RTLD_DL_SYMENT) == 0 ||
        entry == NULL)
        return 0;
    return entry->st_size;
}

/* dlopen, find and check the table. A refusal is a reason, not an error. */
static accel_status plugin_resolve(struct accel__plugin *plugin)
{
    char why[256];
    plugin->dl = dlopen(plugin->path, RTLD_NOW | RTLD_LOCAL);
    if (plugin->dl == NULL) {
        const char *message = dlerror();
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "dlopen failed: %s",
                          message ? message : "unknown error");
    }
    dlerror();
    const struct accel_driver_v1 *table = dlsym(plugin->dl, ACCEL_DRIVER_SYMBOL);
    const char *refusal = NULL;
    if (table == NULL) {
        refusal = "no symbol accel_driver_v1";
    } else {
        refusal = table_refusal(table, symbol_size_of(table), why, sizeof why);
        if (refusal == NULL) {
            table_copy(&plugin->drv, table);
            refusal = entries_refusal(&plugin->drv, plugin->name, why,
                                      sizeof why);
        }
    }
    if (refusal == NULL) {
        /* Kept apart from the table: the plugin may be closed while its
         * entry in the catalog is still listed. */
        plugin->version = strdup(plugin->drv.version ? plugin->drv.version : "");
        plugin->priority = plugin->drv.priority;
        if (plugin->version == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin version");
        return ACCEL_OK;
    }
    dlclose(plugin->dl);
    plugin->dl = NULL;
    memset(&plugin->drv, 0, sizeof plugin->drv);
    return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", refusal);
}

static void plugin_close(struct accel__plugin *plugin)
{
    if (plugin->state != NULL)
        plugin->drv.plugin_close(plugin->state);
    plugin->state = NULL;
    if (plugin->dl != NULL)
        dlclose(plugin->dl);
    plugin->dl = NULL;
    /* The table's entries and strings pointed into the closed object. */
    memset(&plugin->drv, 0, sizeof plugin->drv);
}

/* plugin_open and device_count; keeps the plugin open only with a device. */
static accel_status plugin_start(struct accel__plugin *plugin)
{
    accel_status status = plugin->drv.plugin_open(&accel__services, &plugin->state);
    if (status != ACCEL_OK || plugin->state == NULL) {
        status = accel__from_plugin(
            status == ACCEL_OK ? ACCEL_ERR_PLUGIN_ABI : status, "plugin_open");
        plugin->state = NULL;
        status = set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                            "plugin_open failed: %s: %s",
                            accel_status_name(status), accel_last_error());
        plugin_close(plugin);
        return status;
    }
    const char *why = NULL;
    uint32_t count = 0;
    status = plugin->drv.device_count(plugin->state, &count, &why);
    if (status != ACCEL_OK) {
        status = accel__from_plugin(status, "device_count");
        status = set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                            "device_count failed: %s: %s",
                            accel_status_name(status), accel_last_error());
        plugin_close(plugin);
        return status;
    }
    plugin->device_count = count;
    if (count > 0) {
        plugin->state_kind = ACCEL_PLUGIN_LOADED;
        accel__log(ACCEL_LOG_INFO, "%s: loaded plugin '%s' %s, %u device(s)",
                   plugin->path, plugin->name, plugin->version, count);
        return ACCEL_OK;
    }
    /* A plugin without a device is closed at once: a vendor runtime it
     * loaded should cost the program nothing more. */
    status = set_reason(plugin, ACCEL_PLUGIN_NO_DEVICE, "%s",
                        why ? why : "no device (the plugin gave no reason)");
    plugin_close(plugin);
    return status;
}

static bool is_wanted(const char *name, const struct accel__backend_item *wanted,
                      size_t wanted_count, bool open_all)
{
    if (wanted_count == 0)
        return open_all;
    for (size_t i = 0; i < wanted_count; i++) {
        if (strcmp(wanted[i].name, name) == 0)
            return true;
    }
    return false;
}

/* Consider one file: its name, kind, permissions, duplicates, then open. */
static accel_status consider(struct accel__catalog *catalog, const char *path,
                             const char *file_name, const struct stat *dir,
                             const struct accel__backend_item *wanted,
                             size_t wanted_count, bool open_all)
{
    struct stat file;
    if (stat(path, &file) != 0) {
        accel__log(ACCEL_LOG_INFO, "%s: skipped: %s", path, strerror(errno));
        return ACCEL_OK;
    }
    for (size_t i = 0; i < catalog->count; i++) {
        const struct accel__plugin *seen = &catalog->plugins[i];
        if (seen->dev == file.st_dev && seen->ino == file.st_ino) {
            accel__log(ACCEL_LOG_DEBUG, "%s: already considered as %s", path,
                       seen->path);
            return ACCEL_OK;
        }
    }
    char *name = name_from_file(file_name);
    struct accel__plugin *plugin = candidate_add(catalog, path, name);
    if (plugin == NULL) {
        free(name);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin candidate");
    }
    plugin->dev = file.st_dev;
    plugin->ino = file.st_ino;
    if (name == NULL || !accel__plugin_name_valid(name, strlen(name)))
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                          "the file name is not accel-plugin-NAME.so with NAME "
                          "1 to %d characters of [a-z0-9_]",
                          ACCEL_PLUGIN_NAME_MAX);
    const char *refusal = file_refusal(&file, dir);
    if (refusal != NULL)
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", refusal);
    const struct accel__plugin *earlier = same_name(catalog, plugin);
    if (earlier != NULL)
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                          "duplicate: a plugin named '%s' was found first at %s",
                          name, earlier->path);
    if (!is_wanted(name, wanted, wanted_count, open_all))
        return set_reason(plugin, ACCEL_PLUGIN_SKIPPED,
                          "not opened: the backend selection does not name it");
    accel_status status = plugin_resolve(plugin);
    if (status != ACCEL_OK || plugin->dl == NULL)
        return status;
    return plugin_start(plugin);
}

static int plugin_file_filter(const struct dirent *entry)
{
    char *name = name_from_file(entry->d_name);
    free(name);
    return name != NULL;
}

static accel_status scan_directory(struct accel__catalog *catalog,
                                   const char *dir_path, const struct stat *dir,
                                   const struct accel__backend_item *wanted,
                                   size_t wanted_count, bool open_all)
{
    struct dirent **entries = NULL;
    int n = scandir(dir_path, &entries, plugin_file_filter, alphasort);
    if (n < 0) {
        accel__log(ACCEL_LOG_INFO, "%s: cannot read: %s", dir_path,
                   strerror(errno));
        return ACCEL_OK;
    }
    accel_status status = ACCEL_OK;
    for (int i = 0; i < n; i++) {
        char *path = NULL;
        if (status == ACCEL_OK) {
            path = accel__strdup_printf("%s/%s", dir_path, entries[i]->d_name);
            status = path ? consider(catalog, path, entries[i]->d_name, dir,
                                     wanted, wanted_count, open_all)
                          : accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
        }
        free(path);
        free(entries[i]);
    }
    free(entries);
    return status;
}

static accel_status scan_entry(struct accel__catalog *catalog, const char *entry,
                               const struct accel__backend_item *wanted,
                               size_t wanted_count, bool open_all)
{
    struct stat st;
    if (stat(entry, &st) != 0) {
        accel__log(ACCEL_LOG_INFO, "search path entry %s: %s", entry,
                   strerror(errno));
        return ACCEL_OK;
    }
    accel__log(ACCEL_LOG_INFO, "searching %s", entry);
    if (S_ISDIR(st.st_mode))
        return scan_directory(catalog, entry, &st, wanted, wanted_count,
                              open_all);
    /* A file named on the path: its directory's permissions count too. */
    char *copy = strdup(entry);
    if (copy == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
    char *slash = strrchr(copy, '/');
    const char *file_name = slash ? entry + (slash - copy) + 1 : entry;
    if (slash != NULL)
        slash[slash == copy ? 1 : 0] = '\0';
    struct stat dir;
    bool have_dir = stat(slash ? copy : ".", &dir) == 0;
    accel_status status = consider(catalog, entry, file_name,
                                   have_dir ? &dir : NULL, wanted, wanted_count,
                                   open_all);
    free(copy);
    return status;
}

static accel_status infos_build(struct accel__catalog *catalog)
{
    catalog->infos = calloc(catalog->count ? catalog->count : 1,
                            sizeof *catalog->infos);
    if (catalog->infos == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin list");
    for (size_t i = 0; i < catalog->count; i++) {
        const struct accel__plugin *plugin = &catalog->plugins[i];
        accel_plugin_info *info = &catalog->infos[i];
        info->path = plugin->path;
        info->name = plugin->name ? plugin->name : "";
        info->reason = plugin->reason;
        info->device_count = plugin->device_count;
        info->state = plugin->state_kind;
        info->version = plugin->version;
        info->priority = plugin->priority;
    }
    return ACCEL_OK;
}

accel_status accel__catalog_load(struct accel__catalog *catalog,
                                 const char *plugin_path,
                                 const struct accel__backend_item *wanted,
                                 size_t wanted_count, bool open_all)
{
    memset(catalog, 0, sizeof *catalog);
    accel_status status = search_build(catalog, plugin_path);
    for (size_t i = 0; status == ACCEL_OK && i < catalog->search_count; i++)
        status = scan_entry(catalog, catalog->search[i], wanted, wanted_count,
                            open_all);
    if (status == ACCEL_OK)
        status = infos_build(catalog);
    if (status != ACCEL_OK)
        accel__catalog_unload(catalog);
    return status;
}

void accel__catalog_unload(struct accel__catalog *catalog)
{
    for (size_t i = 0; i < catalog->count; i++) {
        struct accel__plugin *plugin = &catalog->plugins[i];
        plugin_close(plugin);
        free(plugin->path);
        free(plugin->name);
        free(plugin->reason);
        free(plugin->version);
    }
    for (size_t i = 0; i < catalog->search_count; i++)
        free(catalog->search[i]);
    free(catalog->search);
    free(catalog->plugins);
    free(catalog->infos);
    memset(catalog, 0, sizeof *catalog);
}

struct accel__plugin *accel__catalog_find(struct accel__catalog *catalog,
                                          const char *name, size_t *out_index)
{
    for (size_t i = 0; i < catalog->count; i++) {
        struct accel__plugin *plugin = &catalog->plugins[i];
        if (plugin->name != NULL && strcmp(plugin->name, name) == 0 &&
            plugin->state_kind != ACCEL_PLUGIN_REJECTED) {
            if (out_index != NULL)
                *out_index = i;
            return plugin;
        }
    }
    return NULL;
}
