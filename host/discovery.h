/*
 * Discovery's parts apart from the loader: the search path (search_path.c),
 * the catalog's index (catalog_index.c) and the table checks (driver_table.c).
 */
#ifndef ACCEL_HOST_DISCOVERY_H
#define ACCEL_HOST_DISCOVERY_H

#include <stddef.h>
#include <sys/stat.h>

#include "loader.h"

/*
 * The search path into catalog->search: the entries of `plugin_path`
 * (colon-separated; a relative one resolved against the working directory
 * now, and logged), each once, then the default directories.
 */
accel_status accel__search_build(struct accel__catalog *catalog,
                                 const char *plugin_path);

/*
 * Sets of catalog entries by inode and by name, for discovery's lookups in
 * constant time (catalog_index.c).
 */
#define ACCEL__SEEN_NONE SIZE_MAX
enum accel__seen_key { ACCEL__SEEN_INODE, ACCEL__SEEN_NAME };

struct accel__seen {
    size_t *slots;
    size_t capacity; /* a power of two, or 0 */
    size_t count;
};

/*
 * The entry with the inode of `st` (ACCEL__SEEN_INODE) or named `name`
 * (ACCEL__SEEN_NAME); ACCEL__SEEN_NONE if none.
 */
size_t accel__seen_find(const struct accel__seen *set,
                        const struct accel__catalog *catalog,
                        enum accel__seen_key key, const struct stat *st,
                        const char *name);
/* Add catalog->plugins[index] by its inode or its name. */
accel_status accel__seen_add(struct accel__seen *set,
                             const struct accel__catalog *catalog,
                             enum accel__seen_key key, size_t index);

/*
 * Why the table `table` (the plugin file's accel_driver_v1, or NULL when it
 * has none) is refused, in `why` or a constant string; NULL when every check
 * passes, and then *out_drv holds the host's copy of it, zero past the
 * plugin's struct_size (driver_table.c).
 */
const char *accel__driver_table_refusal(const struct accel_driver_v1 *table,
                                        const char *file_name,
                                        struct accel_driver_v1 *out_drv,
                                        char *why, size_t why_size);

/*
 * The optional entries a checked table has, by name in table order and
 * separated by ", " ("host_func, wait_outside_streams, copy_peer"); "" for
 * none. malloc'd; NULL when out of memory.
 */
char *accel__driver_optional_entries(const struct accel_driver_v1 *table);

#endif /* ACCEL_HOST_DISCOVERY_H */
