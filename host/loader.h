/*
 * Plugins (loader.c): the candidate files discovery found, and the ones
 * it opened.
 */
#ifndef ACCEL_HOST_LOADER_H
#define ACCEL_HOST_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"
#include "os.h"
#include "select.h"

/* One candidate plugin file and, when opened, its plugin. */
struct accel__plugin {
    char *path;
    char *name;
    char *reason;
    accel_plugin_state state_kind;
    char *version;                 /* a copy; NULL unless opened */
    uint16_t abi_major, abi_minor; /* the table's; 0 unless opened */
    char *optional_entries;        /* "host_func, ..."; NULL unless opened */
    int32_t priority;
    uint64_t dev, ino;          /* the file, to open it only once */
    void *dl;                   /* dlopen handle, NULL unless opened */
    int fd;                     /* the file dl was loaded from; -1 */
    struct accel_driver_v1 drv; /* the table, zero past struct_size */
    accel_drv_plugin *state;    /* from plugin_open */
    uint32_t device_count;
};

/* What discovery found: parallel arrays, the public view and ours. */
struct accel__catalog {
    const struct accel_host_services *services; /* what plugin_open gets */
    char **search;                              /* the search path, in order */
    size_t search_count;
    struct accel__plugin *plugins;
    accel_plugin_info *infos;
    size_t count;
};

/*
 * Find every candidate on the search path and open those `wanted` names
 * (all when wanted_count is zero and open_all is true; none when open_all is
 * false and wanted_count is zero). `ids` decide which owners a plugin file
 * may have and whether ACCEL_ALLOW_INSECURE_PLUGINS is read.
 */
accel_status accel__catalog_load(struct accel__catalog *catalog,
                                 const struct accel_host_services *services,
                                 const struct accel__ids *ids,
                                 const char *plugin_path,
                                 const struct accel__backend_item *wanted,
                                 size_t wanted_count, bool open_all);
void accel__catalog_unload(struct accel__catalog *catalog);
/*
 * The first candidate of that name not rejected (loaded, or skipped or
 * failed: see its state_kind), or NULL.
 */
struct accel__plugin *accel__catalog_find(struct accel__catalog *catalog,
                                          const char *name);
/* True for 1..31 characters of [a-z0-9_]. */
bool accel__plugin_name_valid(const char *name, size_t length);

#endif /* ACCEL_HOST_LOADER_H */
