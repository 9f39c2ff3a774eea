/*
 * Plugin discovery: the search path, the candidate files, and the checks a
 * plugin passes before the host calls anything in it.
 *
 * A candidate is checked in this order, and the first failed check is its
 * reason: its file name; its file (at most one symbolic link followed: a
 * regular, non-empty file, owned by root or the effective user, writable by
 * neither its group nor others); the directory it was found in and a link
 * target's directory (owned by root or the effective user, not writable by
 * others unless sticky); a duplicate name; the backend selection; then
 * dlopen and the table (symbol kind and size, ABI major, struct_size, name,
 * version, required entries); then plugin_open and device_count.
 * ACCEL_ALLOW_INSECURE_PLUGINS=1 lifts the owner and permission checks; it
 * is read, like every variable, only when the process's ids are not
 * elevated.
 *
 * A candidate that fails a check is kept in the catalog with its reason and
 * never opened again; discovery itself fails only when memory runs out.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef ACCEL_PLUGINDIR
#error "the build defines ACCEL_PLUGINDIR"
#endif

#define PREFIX "accel-plugin-"
#define SUFFIX ".so"

/* The smallest table a plugin can have: up to its last required entry. */
#define V1_0_MIN_SIZE ACCEL_DRIVER_V1_MIN_SIZE

/* More devices than any machine has: a count past it is garbage. */
#define DEVICES_MAX 1024u
/* The longest version text a table may give. */
#define VERSION_MAX 127

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

/* What every candidate of one discovery is checked against. */
struct scan {
    struct accel__catalog *catalog;
    const struct accel__ids *ids;
    bool insecure;                      /* ACCEL_ALLOW_INSECURE_PLUGINS=1 */
    const struct accel__backend_item *wanted;
    size_t wanted_count;
    bool open_all;
};

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

/*
 * Settle a candidate's state with its reason, and log it. A reason may quote
 * a plugin's own words or a file name; control bytes become '?', so that
 * printing a reason cannot drive the terminal that shows it.
 */
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
    for (char *c = plugin->reason; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    }
    accel__log(ACCEL_LOG_INFO, "%s: %s: %s", plugin->path,
               accel_plugin_state_name(state), plugin->reason);
    return ACCEL_OK;
}

/* ---- the file: kind, owner, permissions, one link ---- */

/* Where a candidate's path leads, after at most one symbolic link. */
struct located {
    char *load_path;      /* what dlopen gets: the path, or the link's target */
    struct stat file;     /* of load_path; of the link itself if it leads nowhere */
    bool linked;
    char *target_dir_path; /* a link's target's directory, and its stat */
    struct stat target_dir;
    char refusal[512];    /* why the link is not followed; "" when it is */
};

static void located_free(struct located *found)
{
    free(found->load_path);
    free(found->target_dir_path);
}

/* The directory part of a path, malloc'd: "." when it has none. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* A link's target as a path: a relative one is relative to the link. */
static char *link_target_path(const char *link, const char *target)
{
    if (target[0] == '/')
        return strdup(target);
    char *dir = dir_of(link);
    char *path = dir ? accel__strdup_printf("%s/%s", dir, target) : NULL;
    free(dir);
    return path;
}

/*
 * Follow the link at `path` once. A link that cannot be read, a broken link
 * and a link to another link are refused: one link is followed, so that the
 * file checked is the file loaded, and its directory is checked too.
 */
static accel_status follow_link(const char *path, struct located *found)
{
    char target[PATH_MAX];
    ssize_t length = readlink(path, target, sizeof target);
    if (length < 0 || (size_t)length >= sizeof target) {
        snprintf(found->refusal, sizeof found->refusal,
                 "a symbolic link that cannot be read: %s",
                 length < 0 ? strerror(errno) : "its target is too long");
        return ACCEL_OK;
    }
    target[length] = '\0';
    found->load_path = link_target_path(path, target);
    if (found->load_path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin path");
    struct stat file;
    if (lstat(found->load_path, &file) != 0) {
        snprintf(found->refusal, sizeof found->refusal,
                 "a broken symbolic link to %.300s: %s", target, strerror(errno));
        return ACCEL_OK;
    }
    if (S_ISLNK(file.st_mode)) {
        snprintf(found->refusal, sizeof found->refusal,
                 "a symbolic link to %.300s, itself a symbolic link: only one "
                 "link is followed",
                 target);
        return ACCEL_OK;
    }
    found->file = file;
    found->target_dir_path = dir_of(found->load_path);
    if (found->target_dir_path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin path");
    if (stat(found->target_dir_path, &found->target_dir) != 0)
        snprintf(found->refusal, sizeof found->refusal,
                 "the directory of its link's target, %.300s, cannot be examined: "
                 "%s",
                 found->target_dir_path, strerror(errno));
    return ACCEL_OK;
}

/* Find what `path` leads to; *out_gone when there is nothing there. */
static accel_status locate(const char *path, struct located *out_found,
                           bool *out_gone)
{
    memset(out_found, 0, sizeof *out_found);
    *out_gone = false;
    if (lstat(path, &out_found->file) != 0) {
        accel__log(ACCEL_LOG_INFO, "%s: skipped: %s", path, strerror(errno));
        *out_gone = true;
        return ACCEL_OK;
    }
    if (S_ISLNK(out_found->file.st_mode)) {
        out_found->linked = true;
        return follow_link(path, out_found);
    }
    out_found->load_path = strdup(path);
    if (out_found->load_path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin path");
    return ACCEL_OK;
}

static const char *kind_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "of an unknown kind";
}

/* Root and the effective user are the owners a process already trusts. */
static bool owner_trusted(const struct scan *scan, uid_t owner)
{
    return owner == 0 || owner == scan->ids->euid;
}

/* Why the file itself may not be loaded; false when it may. */
static bool file_refused(const struct scan *scan, const struct stat *file,
                         char *why, size_t size)
{
    unsigned mode = (unsigned)(file->st_mode & 07777);
    if (!S_ISREG(file->st_mode))
        snprintf(why, size, "not a regular file: %s", kind_name(file->st_mode));
    else if (file->st_size == 0)
        snprintf(why, size, "the file is empty");
    else if (scan->insecure)
        return false;
    else if (!owner_trusted(scan, file->st_uid))
        snprintf(why, size,
                 "the file is owned by uid %u, neither root nor the effective "
                 "user (uid %u)",
                 (unsigned)file->st_uid, (unsigned)scan->ids->euid);
    else if (file->st_mode & S_IWOTH)
        snprintf(why, size, "the file is writable by other users (mode %04o)",
                 mode);
    else if (file->st_mode & S_IWGRP)
        snprintf(why, size, "the file is writable by its group (mode %04o)",
                 mode);
    else
        return false;
    return true;
}

/*
 * Why a directory makes the file in it unsafe: whoever may rename entries
 * there can swap the file after it was checked. False when it is safe.
 */
static bool dir_refused(const struct scan *scan, const char *role,
                        const char *dir_path, const struct stat *dir,
                        char *why, size_t size)
{
    unsigned mode = (unsigned)(dir->st_mode & 07777);
    if (scan->insecure)
        return false;
    if (!owner_trusted(scan, dir->st_uid))
        snprintf(why, size,
                 "%s %s is owned by uid %u, neither root nor the effective "
                 "user (uid %u)",
                 role, dir_path, (unsigned)dir->st_uid,
                 (unsigned)scan->ids->euid);
    else if ((dir->st_mode & S_IWOTH) && !(dir->st_mode & S_ISVTX))
        snprintf(why, size,
                 "%s %s is writable by other users and not sticky (mode %04o)",
                 role, dir_path, mode);
    else
        return false;
    return true;
}

/* The file, the directory it was found in, and a link target's directory. */
static bool location_refused(const struct scan *scan,
                             const struct located *found, const char *dir_path,
                             const struct stat *dir, char *why, size_t size)
{
    if (found->refusal[0] != '\0') {
        snprintf(why, size, "%s", found->refusal);
        return true;
    }
    if (file_refused(scan, &found->file, why, size))
        return true;
    if (dir == NULL && !scan->insecure) {
        snprintf(why, size, "its directory %s cannot be examined", dir_path);
        return true;
    }
    if (dir != NULL &&
        dir_refused(scan, "its directory", dir_path, dir, why, size))
        return true;
    return found->linked &&
           dir_refused(scan, "the directory of its link's target,",
                       found->target_dir_path, &found->target_dir, why, size);
}

/* ---- the table ---- */

/* What the dynamic linker says of the table's symbol. */
struct symbol_facts {
    bool known;
    size_t size;
    unsigned type;        /* STT_OBJECT for a table */
    const void *base;     /* the plugin's load address */
};

static void symbol_facts_of(const void *symbol, struct symbol_facts *out)
{
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    memset(out, 0, sizeof *out);
    if (dladdr1(symbol, &info, (void **)&entry, RTLD_DL_SYMENT) == 0 ||
        entry == NULL)
        return;
    out->known = true;
    out->size = entry->st_size;
    out->type = ELF64_ST_TYPE(entry->st_info);
    out->base = info.dli_fbase;
}

/*
 * Whether a string the table names lies in the plugin's own image, as a
 * constant does: a pointer anywhere else, or nowhere, is refused before it
 * is read.
 */
static bool in_image(const void *text, const struct symbol_facts *facts)
{
    Dl_info info;
    if (!facts->known)
        return true;
    return dladdr(text, &info) != 0 && info.dli_fbase == facts->base;
}

/* The entry of the host's table that `size` ends inside of; NULL if none. */
static const char *entry_cut_by(size_t size, size_t *out_start)
{
    *out_start = 0;
#define ACCEL__ENTRY_CUT(entry, need, since, slot)                             \
    if (size > ACCEL_DRIVER_V1_ENTRY_OFFSET(slot) &&                           \
        size < ACCEL_DRIVER_V1_ENTRY_OFFSET((slot) + 1)) {                     \
        *out_start = ACCEL_DRIVER_V1_ENTRY_OFFSET(slot);                       \
        return #entry;                                                         \
    }
    ACCEL_DRIVER_V1_ENTRIES(ACCEL__ENTRY_CUT)
#undef ACCEL__ENTRY_CUT
    return NULL;
}

static const char *header_refusal(const struct accel_driver_v1 *table,
                                  const struct symbol_facts *facts, char *why,
                                  size_t why_size)
{
    size_t cut_start = 0;
    const char *cut = entry_cut_by(table->struct_size, &cut_start);
    if (facts->known && facts->type != STT_OBJECT)
        snprintf(why, why_size,
                 "symbol accel_driver_v1 is not a data object (ELF symbol "
                 "type %u)",
                 facts->type);
    else if (facts->known && facts->size < V1_0_MIN_SIZE)
        snprintf(why, why_size,
                 "symbol accel_driver_v1 is %zu bytes, smaller than a 1.0 "
                 "table (%zu)",
                 facts->size, (size_t)V1_0_MIN_SIZE);
    else if (table->abi_major != ACCEL_DRIVER_ABI_MAJOR)
        snprintf(why, why_size, "ABI major version %u, this host speaks %u",
                 (unsigned)table->abi_major, (unsigned)ACCEL_DRIVER_ABI_MAJOR);
    else if (table->struct_size < V1_0_MIN_SIZE ||
             (facts->known && table->struct_size > facts->size))
        snprintf(why, why_size,
                 "table size %u does not fit a 1.0 table (at least %zu bytes, "
                 "at most the symbol's %zu)",
                 (unsigned)table->struct_size, (size_t)V1_0_MIN_SIZE,
                 facts->size);
    else if (cut != NULL)
        /* Half a function pointer is no entry: the table is read entry by
         * entry or not at all. */
        snprintf(why, why_size,
                 "table size %u ends %zu bytes into entry '%s' (bytes %zu to "
                 "%zu): a table must cover each entry whole",
                 (unsigned)table->struct_size,
                 (size_t)table->struct_size - cut_start, cut, cut_start,
                 cut_start + sizeof(void (*)(void)));
    else
        return NULL;
    return why;
}

/* Where a name of `length` bytes first leaves [a-z0-9_]. */
static size_t name_bad_char(const char *name, size_t length)
{
    size_t i = 0;
    while (i < length && accel__plugin_name_valid(name + i, 1))
        i++;
    return i;
}

static const char *name_refusal(const char *name, const char *file_name,
                                const struct symbol_facts *facts, char *why,
                                size_t why_size)
{
    size_t length = 0;
    if (name == NULL)
        snprintf(why, why_size, "the table's name is NULL");
    else if (!in_image(name, facts))
        snprintf(why, why_size, "the table's name points outside the plugin");
    else if ((length = strnlen(name, ACCEL_PLUGIN_NAME_MAX + 1)) == 0)
        snprintf(why, why_size, "the table's name is empty");
    else if (length > ACCEL_PLUGIN_NAME_MAX)
        snprintf(why, why_size,
                 "the table's name is longer than %d characters",
                 ACCEL_PLUGIN_NAME_MAX);
    else if (!accel__plugin_name_valid(name, length))
        snprintf(why, why_size,
                 "the table's name has byte 0x%02x at %zu, outside [a-z0-9_]",
                 (unsigned char)name[name_bad_char(name, length)],
                 name_bad_char(name, length));
    else if (strcmp(name, file_name) != 0)
        snprintf(why, why_size,
                 "the table's name '%s' does not match the file name's '%s'",
                 name, file_name);
    else
        return NULL;
    return why;
}

/* The version is free text: NULL, or printable, of bounded length. */
static const char *version_refusal(const char *version,
                                   const struct symbol_facts *facts, char *why,
                                   size_t why_size)
{
    if (version == NULL)
        return NULL;
    if (!in_image(version, facts)) {
        snprintf(why, why_size, "the table's version points outside the plugin");
        return why;
    }
    size_t length = strnlen(version, VERSION_MAX + 1);
    if (length > VERSION_MAX) {
        snprintf(why, why_size, "the table's version is longer than %d bytes",
                 VERSION_MAX);
        return why;
    }
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)version[i];
        if (c < 0x20 || c == 0x7f) {
            snprintf(why, why_size,
                     "the table's version has control byte 0x%02x at %zu", c, i);
            return why;
        }
    }
    return NULL;
}

/*
 * Every required entry is set, and the kernel entries are all set or all
 * NULL (a plugin whose devices run no kernels; the host then answers
 * module loads itself, see ACCEL_DEVICE_CAP_KERNELS).
 */
static const char *entries_refusal(const struct accel_driver_v1 *drv, char *why,
                                   size_t why_size)
{
    const char *kernel_set = NULL, *kernel_null = NULL;
#define ACCEL__CHECK_ENTRY(entry, need, since, slot)                           \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_REQUIRED && drv->entry == NULL) {    \
        snprintf(why, why_size, "required entry '%s' is NULL", #entry);        \
        return why;                                                            \
    }                                                                          \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_KERNELS) {                           \
        if (drv->entry != NULL && kernel_set == NULL)                          \
            kernel_set = #entry;                                               \
        if (drv->entry == NULL && kernel_null == NULL)                         \
            kernel_null = #entry;                                              \
    }
    ACCEL_DRIVER_V1_ENTRIES(ACCEL__CHECK_ENTRY)
#undef ACCEL__CHECK_ENTRY
    if (kernel_set != NULL && kernel_null != NULL) {
        snprintf(why, why_size,
                 "kernel entry '%s' is NULL but '%s' is set: the kernel "
                 "entries are all set or all NULL",
                 kernel_null, kernel_set);
        return why;
    }
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

/* Check the whole table, header first; on success plugin->drv holds it. */
static const char *table_refusal(struct accel__plugin *plugin,
                                 const struct accel_driver_v1 *table, char *why,
                                 size_t why_size)
{
    if (table == NULL)
        return "no symbol accel_driver_v1";
    struct symbol_facts facts;
    symbol_facts_of(table, &facts);
    const char *refusal = header_refusal(table, &facts, why, why_size);
    if (refusal != NULL)
        return refusal;
    table_copy(&plugin->drv, table);
    refusal = name_refusal(plugin->drv.name, plugin->name, &facts, why, why_size);
    if (refusal == NULL)
        refusal = version_refusal(plugin->drv.version, &facts, why, why_size);
    if (refusal == NULL)
        refusal = entries_refusal(&plugin->drv, why, why_size);
    return refusal;
}

/* ---- opening one plugin ---- */

/* dlopen, find and check the table. A refusal is a reason, not an error. */
static accel_status plugin_resolve(struct accel__plugin *plugin,
                                   const char *load_path)
{
    char why[512];
    plugin->dl = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
    if (plugin->dl == NULL) {
        const char *message = dlerror();
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "dlopen failed: %s",
                          message ? message : "unknown error");
    }
    dlerror();
    const char *refusal = table_refusal(
        plugin, dlsym(plugin->dl, ACCEL_DRIVER_SYMBOL), why, sizeof why);
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
    accel_status status =
        start_status(plugin->drv.plugin_open(catalog->services, &state),
                     "plugin_open");
    if (status == ACCEL_OK && state == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "plugin_open succeeded without a plugin");
    if (status != ACCEL_OK)
        return start_failed(plugin, status, "plugin_open");
    plugin->state = state;
    const char *why = NULL;
    uint32_t count = 0;
    status = start_status(plugin->drv.device_count(state, &count, &why),
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
    for (size_t i = 0; i < scan->wanted_count; i++) {
        if (strcmp(scan->wanted[i].name, name) == 0)
            return true;
    }
    return false;
}

/* The same file (an inode) reached by another path: considered once. */
static bool already_considered(const struct accel__catalog *catalog,
                               const struct stat *file, const char *path)
{
    for (size_t i = 0; i < catalog->count; i++) {
        const struct accel__plugin *seen = &catalog->plugins[i];
        if (seen->dev == file->st_dev && seen->ino == file->st_ino) {
            accel__log(ACCEL_LOG_DEBUG, "%s: already considered as %s", path,
                       seen->path);
            return true;
        }
    }
    return false;
}

/* List one candidate, check its name, file and place, then open it. */
static accel_status candidate_check(const struct scan *scan, const char *path,
                                    const char *file_name, const char *dir_path,
                                    const struct stat *dir,
                                    const struct located *found)
{
    char *name = name_from_file(file_name);
    struct accel__plugin *plugin = candidate_add(scan->catalog, path, name);
    if (plugin == NULL) {
        free(name);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin candidate");
    }
    plugin->dev = found->file.st_dev;
    plugin->ino = found->file.st_ino;
    if (name == NULL || !accel__plugin_name_valid(name, strlen(name)))
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                          "the file name is not accel-plugin-NAME.so with NAME "
                          "1 to %d characters of [a-z0-9_]",
                          ACCEL_PLUGIN_NAME_MAX);
    char why[1024];
    if (location_refused(scan, found, dir_path, dir, why, sizeof why))
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED, "%s", why);
    /* `plugin` is still marked rejected, so this finds an earlier one. */
    const struct accel__plugin *earlier = accel__catalog_find(scan->catalog, name);
    if (earlier != NULL)
        return set_reason(plugin, ACCEL_PLUGIN_REJECTED,
                          "duplicate: a plugin named '%s' was found first at %s",
                          name, earlier->path);
    if (!is_wanted(scan, name))
        return set_reason(plugin, ACCEL_PLUGIN_SKIPPED,
                          "not opened: the backend selection does not name it");
    accel_status status = plugin_resolve(plugin, found->load_path);
    if (status != ACCEL_OK || plugin->dl == NULL)
        return status;
    return plugin_start(scan->catalog, plugin);
}

/* Consider the file at `path`, found in the directory `dir_path`. */
static accel_status consider(const struct scan *scan, const char *path,
                             const char *file_name, const char *dir_path,
                             const struct stat *dir)
{
    struct located found;
    bool gone = false;
    accel_status status = locate(path, &found, &gone);
    if (status == ACCEL_OK && !gone &&
        !already_considered(scan->catalog, &found.file, path))
        status = candidate_check(scan, path, file_name, dir_path, dir, &found);
    located_free(&found);
    return status;
}

static int plugin_file_filter(const struct dirent *entry)
{
    char *name = name_from_file(entry->d_name);
    free(name);
    return name != NULL;
}

static accel_status scan_directory(const struct scan *scan, const char *dir_path,
                                   const struct stat *dir)
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
            status = path ? consider(scan, path, entries[i]->d_name, dir_path,
                                     dir)
                          : accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
        }
        free(path);
        free(entries[i]);
    }
    free(entries);
    return status;
}

/* A file named on the path: its directory's owner and mode count too. */
static accel_status scan_file_entry(const struct scan *scan, const char *entry)
{
    char *dir_path = dir_of(entry);
    if (dir_path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "path");
    const char *slash = strrchr(entry, '/');
    struct stat dir;
    bool have_dir = stat(dir_path, &dir) == 0;
    accel_status status = consider(scan, entry, slash ? slash + 1 : entry,
                                   dir_path, have_dir ? &dir : NULL);
    free(dir_path);
    return status;
}

static accel_status scan_entry(const struct scan *scan, const char *entry)
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
    return is_dir ? scan_directory(scan, entry, &st)
                  : scan_file_entry(scan, entry);
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
    const struct scan scan = {
        .catalog = catalog,
        .ids = ids,
        .insecure = insecure_allowed(ids),
        .wanted = wanted,
        .wanted_count = wanted_count,
        .open_all = open_all,
    };
    accel_status status = search_build(catalog, plugin_path);
    for (size_t i = 0; status == ACCEL_OK && i < catalog->search_count; i++)
        status = scan_entry(&scan, catalog->search[i]);
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
