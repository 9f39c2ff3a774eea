/*
 * The plugin search path: ACCEL_PLUGIN_PATH or the program's own, each
 * entry once, relative entries made absolute; then the default directories.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os.h"
#include "status.h"
#include "discovery.h"

#ifndef ACCEL_PLUGINDIR
#error "the build defines ACCEL_PLUGINDIR"
#endif

static accel_status search_add(struct accel__catalog *catalog,
                               const char *entry, size_t length)
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

/*
 * A relative entry of the plugin path, made absolute against the working
 * directory once, here, and said so: what is opened later is this path, and
 * never a name the dynamic linker would look up on its own library path.
 */
static accel_status search_add_relative(struct accel__catalog *catalog,
                                        const char *entry, size_t length)
{
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL) {
        accel__log(ACCEL_LOG_WARN,
                   "plugin path entry '%.*s' is relative and the working "
                   "directory cannot be read (%s): the entry is skipped",
                   (int)length, entry, strerror(errno));
        return ACCEL_OK;
    }
    char *absolute = accel__strdup_printf("%s/%.*s", strcmp(cwd, "/") ? cwd : "",
                                          (int)length, entry);
    free(cwd);
    if (absolute == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "search path");
    accel__log(ACCEL_LOG_INFO,
               "plugin path entry '%.*s' is relative: resolved against the "
               "working directory as %s",
               (int)length, entry, absolute);
    accel_status status = search_add(catalog, absolute, strlen(absolute));
    free(absolute);
    return status;
}

accel_status accel__search_build(struct accel__catalog *catalog,
                                 const char *plugin_path)
{
    accel_status status = ACCEL_OK;
    if (plugin_path != NULL && plugin_path[0] != '\0') {
        const char *start = plugin_path;
        for (;;) {
            const char *colon = strchr(start, ':');
            size_t length = colon ? (size_t)(colon - start) : strlen(start);
            status = length == 0 || start[0] == '/'
                         ? search_add(catalog, start, length)
                         : search_add_relative(catalog, start, length);
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
