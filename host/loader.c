/*
 * Plugin discovery: the candidate files on the search path, and the checks
 * a plugin passes before the host calls anything in it.
 *
 * A candidate is checked in this order, and the first failed check is its
 * reason: its file name; its file, opened once and checked on the
 * descriptor, with its directory and a link target's directory
 * (plugin_file.c: kind, size, owner, mode, ACLs, at most one link, the
 * link's owner); a duplicate name; the backend selection; the ELF headers
 * and dlopen of that descriptor (plugin_file.c); the table (symbol kind and
 * size, ABI major, struct_size, name, version, required entries); then
 * plugin_open and device_count. ACCEL_ALLOW_INSECURE_PLUGINS=1 lifts the
 * owner, mode and ACL checks; it is read, like every variable, only when
 * the process's ids are not elevated.
 *
 * A candidate that fails a check is kept in the catalog with its reason and
 * never opened again; discovery itself fails only when memory runs out.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discovery.h"
#include "escape.h"
#include "loader.h"
#include "os.h"
#include "plugin_file.h"
#include "select.h"
#include "status.h"
#include "submit.h"

#define PREFIX "accel-plugin-"
#define SUFFIX ".so"

/* More devices than any machine has: a count past it is garbage. */
#define DEVICES_MAX 1024u
/* A directory with more files named like plugins than this is refused
 * unread: no machine has so many plugins, and a shared directory stuffed
 * with names must not make every program's start slow. */
#define ACCEL__DIR_CANDIDATES_MAX 4096u

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

/*
 * "accel-plugin-NAME.so" for a file named as build systems name shared
 * modules by default (libaccel-plugin-NAME.so) or as a versioned library
 * (accel-plugin-NAME.so.1), malloc'd; NULL for any other name.
 */
static char *name_hint(const char *file)
{
    const char *start = strncmp(file, "lib" PREFIX, strlen("lib" PREFIX)) == 0
                            ? file + 3
                            : file;
    const char *suffix = strstr(start, SUFFIX);
    if (strncmp(start, PREFIX, strlen(PREFIX)) != 0 || suffix == NULL ||
        (start == file && suffix[strlen(SUFFIX)] != '.'))
        return NULL;
    /* Only ".so" and ".so.N[.N...]" are the mistakes meant here. */
    for (const char *p = suffix + strlen(SUFFIX); *p != '\0'; p++) {
        if (*p != '.' && (*p < '0' || *p > '9'))
            return NULL;
    }
    size_t length = (size_t)(suffix - start) - strlen(PREFIX);
    if (!accel__plugin_name_valid(start + strlen(PREFIX), length))
        return NULL;
    return accel__strdup_printf(PREFIX "%.*s" SUFFIX, (int)length,
                                start + strlen(PREFIX));
}

/* ---- candidates ---- */

/* What every candidate of one discovery is checked against. */
struct scan {
    struct accel__catalog *catalog;
    struct accel__trust trust; /* the effective user; insecure */
    const struct accel__backend_item *wanted;
    size_t wanted_count;
    bool open_all;
    struct accel__seen inodes; /* every candidate, by its file */
    struct accel__seen names;  /* those not rejected, by name */
};

/* Room for one more candidate: the array doubles, so adding n costs O(n). */
static bool candidates_grow(struct accel__catalog *catalog)
{
    size_t count = catalog->count;
    if (count != 0 && (count < 8 || (count & (count - 1)) != 0))
        return true; /* there is room: it was 8, then doubled at each power */
    size_t room = count ? count * 2 : 8;
    struct accel__plugin *grown = realloc(catalog->plugins, room * sizeof *grown);
    if (grown == NULL)
        return false;
    catalog->plugins = grown;
    return true;
}

static struct accel__plugin *candidate_add(struct accel__catalog *catalog,
                                           const char *path, char *name)
{
    if (!candidates_grow(catalog))
        return NULL;
    struct accel__plugin *plugin = &catalog->plugins[catalog->count];
    memset(plugin, 0, sizeof *plugin);
    plugin->state_kind = ACCEL_PLUGIN_REJECTED;
    plugin->fd = -1;
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

/*
 * Settle a candidate's state with its reason, and log it. A reason may quote
 * a plugin's own words or a file name; its control bytes are escaped
 * (accel__escape), so that printing a reason cannot drive the terminal that
 * shows it.
 */
static accel_status set_reason(struct accel__plugin *plugin,
                               accel_plugin_state state, const char *fmt, ...)
{
    plugin->state_kind = state;
    free(plugin->reason);
    plugin->reason = NULL;
    char *raw = NULL;
    va_list args;
    va_start(args, fmt);
    if (vasprintf(&raw, fmt, args) < 0)
        raw = NULL;
    va_end(args);
    size_t length = raw ? accel__escape(NULL, 0, raw) : 0;
    plugin->reason = raw ? malloc(length + 1) : NULL;
    if (plugin->reason != NULL)
        accel__escape(plugin->reason, length + 1, raw);
    free(raw);
    if (plugin->reason == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin reason");
    accel__log(ACCEL_LOG_INFO, "%s: %s: %s", plugin->path,
               accel_plugin_state_name(state), plugin->reason);
    return ACCEL_OK;
}

/* ---- opening one plugin ---- */

static void plugin_close(struct accel__plugin *plugin)
{
    if (plugin->state != NULL)
        ACCEL__TABLE_VOID0(&plugin->drv, plugin->state, plugin_close);
    plugin->state = NULL;
    if (plugin->dl != NULL)
        dlclose(plugin->dl);
    plugin->dl = NULL;
    /* Only now: while the handle lived, its name /proc/self/fd/N had to
     * keep meaning this file. */
    if (plugin->fd >= 0)
        close(plugin->fd);
    plugin->fd = -1;
    /* The table's entries and strings pointed into the closed object. */
    memset(&plugin->drv, 0, sizeof plugin->drv);
}

/*
 * Load the checked file through its descriptor, find and check the table.
 * The descriptor moves into the plugin, open for as long as the handle. A
 * refusal is a reason, not an error.
 */
static accel_status plugin_resolve(struct accel__plugin *plugin,
                                   struct accel__plugin_file *file)
{
    char why[1024];
    const char *refusal = accel__plugin_file_load(&file->fd, &file->st,
                                                  &plugin->dl, why, sizeof why);
    if (refusal != NULL)
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", refusal);
    plugin->fd = file->fd;
    file->fd = -1;
    dlerror();
    refusal = accel__driver_table_refusal(dlsym(plugin->dl, ACCEL_DRIVER_SYMBOL),
                                          plugin->name, &plugin->drv, why,
                                          sizeof why);
    if (refusal == NULL) {
        /* Kept apart from the table: the plugin may be closed while its
         * entry in the catalog is still listed. */
        plugin->version = strdup(plugin->drv.version ? plugin->drv.version : "");
        plugin->priority = plugin->drv.priority;
        plugin->abi_major = plugin->drv.abi_major;
        plugin->abi_minor = plugin->drv.abi_minor;
        plugin->optional_entries = accel__driver_optional_entries(&plugin->drv);
        if (plugin->version == NULL || plugin->optional_entries == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin version");
        return ACCEL_OK;
    }
    plugin_close(plugin);
    return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", refusal);
}

/* A status from plugin_open or device_count, which never report "not yet". */
static accel_status start_status(accel_status status, const char *what)
{
    if (status == ACCEL_NOT_READY)
        return accel__error(ACCEL_ERR_PLUGIN_ABI,
                            "%s returned ACCEL_NOT_READY, which it may not",
                            what);
    return accel__from_plugin(status, what);
}

/*
 * Reject a plugin whose start failed. Nothing more of it is called but
 * plugin_close, and that only once plugin_open has succeeded: an open that
 * fails cleans up after itself, and its outputs are not read.
 */
static accel_status start_failed(struct accel__plugin *plugin,
                                 accel_status status, const char *what)
{
    status = set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s failed: %s: %s",
                        what, accel_status_name(status), accel_last_error());
    plugin_close(plugin);
    return status;
}

/* plugin_open and device_count; keeps the plugin open only with a device. */
static accel_status plugin_start(const struct accel__catalog *catalog,
                                 struct accel__plugin *plugin)
{
    accel_drv_plugin *state = NULL;
    accel_status status = start_status(
        ACCEL__TABLE_TRY(&plugin->drv, catalog->services, plugin_open, &state),
        "plugin_open");
    if (status == ACCEL_OK && state == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "plugin_open succeeded without a plugin");
    if (status != ACCEL_OK)
        return start_failed(plugin, status, "plugin_open");
    plugin->state = state;
    const char *why = NULL;
    uint32_t count = 0;
    status = start_status(
        ACCEL__TABLE_TRY(&plugin->drv, state, device_count, &count, &why),
        "device_count");
    if (status == ACCEL_OK && count > DEVICES_MAX)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "device_count reported %u devices, more than a "
                              "plugin may have (%u)",
                              count, DEVICES_MAX);
    if (status != ACCEL_OK)
        return start_failed(plugin, status, "device_count");
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

/* ---- discovery ---- */

static bool is_wanted(const struct scan *scan, const char *name)
{
    if (scan->wanted_count == 0)
        return scan->open_all;
    return accel__backend_wants(scan->wanted, scan->wanted_count, name);
}

/* The same file (an inode) reached by another path: considered once. */
static bool already_considered(struct scan *scan, const struct stat *file,
                               const char *path)
{
    size_t found = accel__seen_find(&scan->inodes, scan->catalog,
                                    ACCEL__SEEN_INODE, file, NULL);
    if (found == ACCEL__SEEN_NONE)
        return false;
    accel__log(ACCEL_LOG_DEBUG, "%s: already considered as %s", path,
               scan->catalog->plugins[found].path);
    return true;
}

/*
 * A plugin that exports more than its table still loads, but its other
 * symbols can bind in place of another library's of the same name: say so
 * beside its state (after the no-device reason, when it has one).
 */
static accel_status warn_exports(struct accel__plugin *plugin, uint64_t exports)
{
    if (plugin->state_kind != ACCEL_PLUGIN_LOADED &&
        plugin->state_kind != ACCEL_PLUGIN_NO_DEVICE)
        return ACCEL_OK;
    char *warning = accel__strdup_printf(
        "%s%swarning: exports %llu symbols; only " ACCEL_DRIVER_SYMBOL
        " should be exported (-fvisibility=hidden and ACCEL_DRIVER_EXPORT, "
        "or a version script)",
        plugin->reason ? plugin->reason : "", plugin->reason ? "; " : "",
        (unsigned long long)exports);
    if (warning == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin warning");
    accel__log(ACCEL_LOG_WARN,
               "%s: exports %llu symbols; only " ACCEL_DRIVER_SYMBOL
               " should be exported",
               plugin->path, (unsigned long long)exports);
    free(plugin->reason);
    plugin->reason = warning;
    return ACCEL_OK;
}

/* The candidate's name, file and place are checked: open it if wanted. */
static accel_status candidate_open(struct scan *scan,
                                   struct accel__plugin *plugin,
                                   struct accel__plugin_file *file)
{
    if (file->refusal[0] != '\0')
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", file->refusal);
    size_t earlier = accel__seen_find(&scan->names, scan->catalog,
                                      ACCEL__SEEN_NAME, NULL, plugin->name);
    if (earlier != ACCEL__SEEN_NONE)
        return set_reason(
            plugin, ACCEL_PLUGIN_REJECTED,
            "duplicate: a plugin named '%s' was found first at %s",
            plugin->name, scan->catalog->plugins[earlier].path);
    if (!is_wanted(scan, plugin->name))
        return set_reason(plugin, ACCEL_PLUGIN_SKIPPED,
                          "not opened: the backend selection does not name it");
    if (accel__plugin_file_test_hook != NULL)
        accel__plugin_file_test_hook(plugin->path, file->fd);
    uint64_t exports = 0;
    bool counted = accel__plugin_file_exports(file, &exports);
    accel_status status = plugin_resolve(plugin, file);
    if (status != ACCEL_OK || plugin->dl == NULL)
        return status;
    status = plugin_start(scan->catalog, plugin);
    if (status == ACCEL_OK && counted && exports > 1)
        status = warn_exports(plugin, exports);
    return status;
}

/* List one candidate, check its name, then its file, place and table. */
static accel_status candidate_check(struct scan *scan, const char *path,
                                    const char *file_name,
                                    struct accel__plugin_file *file)
{
    char *name = name_from_file(file_name);
    struct accel__plugin *plugin = candidate_add(scan->catalog, path, name);
    if (plugin == NULL) {
        free(name);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin candidate");
    }
    plugin->dev = file->st.st_dev;
    plugin->ino = file->st.st_ino;
    accel_status status = ACCEL_OK;
    char *hint = name == NULL ? name_hint(file_name) : NULL;
    if (hint != NULL)
        status = set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                            "not a candidate: did you mean %s?", hint);
    else if (name == NULL || !accel__plugin_name_valid(name, strlen(name)))
        status = set_reason(
            plugin, ACCEL_PLUGIN_REJECTED,
            "the file name is not accel-plugin-NAME.so with NAME "
            "1 to %d characters of [a-z0-9_]",
            ACCEL_PLUGIN_NAME_MAX);
    else
        status = candidate_open(scan, plugin, file);
    free(hint);
    size_t index = (size_t)(plugin - scan->catalog->plugins);
    if (status == ACCEL_OK)
        status = accel__seen_add(&scan->inodes, scan->catalog,
                                 ACCEL__SEEN_INODE, index);
    if (status == ACCEL_OK && plugin->state_kind != ACCEL_PLUGIN_REJECTED)
        status = accel__seen_add(&scan->names, scan->catalog, ACCEL__SEEN_NAME,
                                 index);
    return status;
}

/* Consider the entry `file_name` of the opened directory `dir`. */
static accel_status consider(struct scan *scan, const struct accel__dir *dir,
                             const char *file_name)
{
    char *path = strcmp(dir->path, "/") == 0
                     ? accel__strdup_printf("/%s", file_name)
                     : accel__strdup_printf("%s/%s", dir->path, file_name);
    if (path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
    struct accel__plugin_file file;
    accel_status status = accel__plugin_file_open(&scan->trust, dir, file_name,
                                                  path, &file);
    if (status == ACCEL_OK && !file.gone &&
        !already_considered(scan, &file.st, path))
        status = candidate_check(scan, path, file_name, &file);
    accel__plugin_file_close(&file);
    free(path);
    return status;
}

static int name_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names read so far, and whether memory ran out. */
struct name_list {
    char **names;
    size_t count, room;
    bool out_of_memory;
};

static void name_list_free(struct name_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->names[i]);
    free(list->names);
    memset(list, 0, sizeof *list);
}

static void name_list_add(struct name_list *list, const char *name)
{
    if (list->count == list->room) {
        size_t room = list->room ? list->room * 2 : 16;
        char **grown = realloc(list->names, room * sizeof *grown);
        if (grown == NULL) {
            list->out_of_memory = true;
            return;
        }
        list->names = grown;
        list->room = room;
    }
    if ((list->names[list->count] = strdup(name)) == NULL)
        list->out_of_memory = true;
    else
        list->count++;
}

/*
 * The names in `dir` that look like plugins, read once and sorted. Past
 * ACCEL__DIR_CANDIDATES_MAX the reading stops and *out_too_many is set,
 * with no name kept. A directory that cannot be read gives none.
 */
static accel_status dir_names(const struct accel__dir *dir,
                              struct name_list *out_list,
                              struct name_list *out_misses, bool *out_too_many)
{
    memset(out_list, 0, sizeof *out_list);
    memset(out_misses, 0, sizeof *out_misses);
    *out_too_many = false;
    int fd = fcntl(dir->fd, F_DUPFD_CLOEXEC, 0);
    DIR *stream = fd >= 0 ? fdopendir(fd) : NULL;
    if (stream == NULL) {
        accel__log(ACCEL_LOG_INFO, "%s: cannot read: %s", dir->path,
                   strerror(errno));
        if (fd >= 0)
            close(fd);
        return ACCEL_OK;
    }
    struct dirent *entry;
    while (!out_list->out_of_memory && !*out_too_many &&
           (entry = readdir(stream)) != NULL) {
        char *name = name_from_file(entry->d_name);
        char *hint = name == NULL ? name_hint(entry->d_name) : NULL;
        free(name);
        free(hint);
        if (name != NULL && out_list->count == ACCEL__DIR_CANDIDATES_MAX)
            *out_too_many = true;
        else if (name != NULL)
            name_list_add(out_list, entry->d_name);
        else if (hint != NULL && out_misses->count < ACCEL__DIR_CANDIDATES_MAX)
            name_list_add(out_misses, entry->d_name);
    }
    closedir(stream);
    out_list->out_of_memory |= out_misses->out_of_memory;
    if (out_list->out_of_memory || *out_too_many)
        name_list_free(out_misses);
    else if (out_misses->count > 1)
        qsort(out_misses->names, out_misses->count, sizeof *out_misses->names,
              name_compare);
    if (out_list->out_of_memory || *out_too_many) {
        bool out_of_memory = out_list->out_of_memory;
        name_list_free(out_list);
        if (out_of_memory)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin names");
        return ACCEL_OK;
    }
    if (out_list->count > 1)
        qsort(out_list->names, out_list->count, sizeof *out_list->names,
              name_compare);
    return ACCEL_OK;
}

/* A directory with more candidates than the cap is listed, not scanned. */
static accel_status dir_too_full(struct scan *scan, const struct accel__dir *dir)
{
    struct accel__plugin *entry = candidate_add(scan->catalog, dir->path, NULL);
    if (entry == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin candidate");
    return set_reason(entry, ACCEL_PLUGIN_REJECTED,
                      "the directory holds more than %u files named "
                      "accel-plugin-*.so: none of them is considered",
                      (unsigned)ACCEL__DIR_CANDIDATES_MAX);
}

/*
 * A file named as a plugin almost is (libaccel-plugin-NAME.so,
 * accel-plugin-NAME.so.1): listed with the name it should have, never
 * opened.
 */
static accel_status near_miss(struct scan *scan, const struct accel__dir *dir,
                              const char *file_name)
{
    char *path = strcmp(dir->path, "/") == 0
                     ? accel__strdup_printf("/%s", file_name)
                     : accel__strdup_printf("%s/%s", dir->path, file_name);
    char *hint = name_hint(file_name);
    struct accel__plugin *entry = path && hint
                                      ? candidate_add(scan->catalog, path, NULL)
                                      : NULL;
    accel_status status = entry == NULL
                              ? accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                             "plugin candidate")
                              : set_reason(entry, ACCEL_PLUGIN_REJECTED,
                                           "not a candidate: did you mean %s?",
                                           hint);
    free(path);
    free(hint);
    return status;
}

static accel_status scan_directory(struct scan *scan, const char *dir_path)
{
    struct accel__dir dir;
    accel_status status = accel__dir_open(&scan->trust, dir_path,
                                          "its directory", &dir);
    struct name_list list = {0}, misses = {0};
    bool too_many = false;
    if (status == ACCEL_OK && dir.fd < 0)
        accel__log(ACCEL_LOG_INFO, "%s: cannot read: %s", dir_path, dir.refusal);
    else if (status == ACCEL_OK)
        status = dir_names(&dir, &list, &misses, &too_many);
    if (status == ACCEL_OK && too_many)
        status = dir_too_full(scan, &dir);
    for (size_t i = 0; status == ACCEL_OK && i < list.count; i++)
        status = consider(scan, &dir, list.names[i]);
    for (size_t i = 0; status == ACCEL_OK && i < misses.count; i++)
        status = near_miss(scan, &dir, misses.names[i]);
    name_list_free(&list);
    name_list_free(&misses);
    accel__dir_close(&dir);
    return status;
}

/* A file named on the path: its directory is opened and checked too. */
static accel_status scan_file_entry(struct scan *scan, const char *entry)
{
    const char *slash = strrchr(entry, '/');
    char *dir_path = slash == NULL
                         ? strdup(".")
                         : strndup(entry,
                                   slash == entry ? 1 : (size_t)(slash - entry));
    if (dir_path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
    struct accel__dir dir;
    accel_status status = accel__dir_open(&scan->trust, dir_path,
                                          "its directory", &dir);
    if (status == ACCEL_OK)
        status = consider(scan, &dir, slash ? slash + 1 : entry);
    accel__dir_close(&dir);
    free(dir_path);
    return status;
}

static accel_status scan_entry(struct scan *scan, const char *entry)
{
    accel__log(ACCEL_LOG_INFO, "searching %s", entry);
    struct stat st;
    bool is_dir = stat(entry, &st) == 0 && S_ISDIR(st.st_mode);
    /* lstat too, so that a broken link named on the path is listed. */
    if (!is_dir && lstat(entry, &st) != 0) {
        accel__log(ACCEL_LOG_INFO, "search path entry %s: %s", entry,
                   strerror(errno));
        return ACCEL_OK;
    }
    /* Which of the two it is decides only how it is read: the directory or
     * the file is opened and checked as it is found then. */
    return is_dir ? scan_directory(scan, entry) : scan_file_entry(scan, entry);
}

/* ACCEL_ALLOW_INSECURE_PLUGINS=1, read as the ids allow. */
static bool insecure_allowed(const struct accel__ids *ids)
{
    const char *text = accel__getenv_as(ids, "ACCEL_ALLOW_INSECURE_PLUGINS");
    if (text == NULL || text[0] == '\0' || strcmp(text, "0") == 0)
        return false;
    if (strcmp(text, "1") != 0) {
        accel__log(ACCEL_LOG_WARN,
                   "ACCEL_ALLOW_INSECURE_PLUGINS='%s' is not 1: plugin owners "
                   "and permissions are checked",
                   text);
        return false;
    }
    accel__log(ACCEL_LOG_WARN, "ACCEL_ALLOW_INSECURE_PLUGINS=1: plugin owners "
                               "and permissions are not checked");
    return true;
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
        info->abi_major = plugin->abi_major;
        info->abi_minor = plugin->abi_minor;
        info->optional_entries = plugin->optional_entries;
    }
    return ACCEL_OK;
}

accel_status accel__catalog_load(struct accel__catalog *catalog,
                                 const struct accel_host_services *services,
                                 const struct accel__ids *ids,
                                 const char *plugin_path,
                                 const struct accel__backend_item *wanted,
                                 size_t wanted_count, bool open_all)
{
    memset(catalog, 0, sizeof *catalog);
    catalog->services = services;
    struct scan scan = {
        .catalog = catalog,
        .trust = {.euid = ids->euid, .insecure = insecure_allowed(ids)},
        .wanted = wanted,
        .wanted_count = wanted_count,
        .open_all = open_all,
    };
    accel_status status = accel__search_build(catalog, plugin_path);
    for (size_t i = 0; status == ACCEL_OK && i < catalog->search_count; i++)
        status = scan_entry(&scan, catalog->search[i]);
    free(scan.inodes.slots);
    free(scan.names.slots);
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
        free(plugin->optional_entries);
    }
    for (size_t i = 0; i < catalog->search_count; i++)
        free(catalog->search[i]);
    free(catalog->search);
    free(catalog->plugins);
    free(catalog->infos);
    memset(catalog, 0, sizeof *catalog);
}

struct accel__plugin *accel__catalog_find(struct accel__catalog *catalog,
                                          const char *name)
{
    for (size_t i = 0; i < catalog->count; i++) {
        struct accel__plugin *plugin = &catalog->plugins[i];
        if (plugin->name != NULL && strcmp(plugin->name, name) == 0 &&
            plugin->state_kind != ACCEL_PLUGIN_REJECTED)
            return plugin;
    }
    return NULL;
}
