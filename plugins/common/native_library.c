/*
 * Loading a vendor library with dlopen, keeping the reason when it fails.
 */
#include "native_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Append "path: why" to the reason, with "; " between attempts. */
static void native_reason_append(char *reason, size_t reason_size,
                                 const char *path, const char *why)
{
    size_t used = strnlen(reason, reason_size);

    if (used + 1 >= reason_size)
        return;
    snprintf(reason + used, reason_size - used, "%s%s: %s", used != 0 ? "; " : "",
             path, why != NULL ? why : "dlopen failed without a reason");
}

/*
 * dlerror() repeats the path at the front ("libx.so: cannot open ...");
 * the reason names the path itself, so the repetition is cut.
 */
static const char *native_dlerror_without_path(const char *path)
{
    const char *why = dlerror();
    size_t length = strlen(path);

    if (why != NULL && strncmp(why, path, length) == 0 && why[length] == ':' &&
        why[length + 1] == ' ')
        return why + length + 2;
    return why;
}

static bool native_try(const char *path,
                       struct accel__native_library *out_library, char *reason,
                       size_t reason_size)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);

    if (handle == NULL) {
        native_reason_append(reason, reason_size, path,
                             native_dlerror_without_path(path));
        return false;
    }
    out_library->handle = handle;
    snprintf(out_library->path, sizeof(out_library->path), "%s", path);
    return true;
}

bool accel__native_library_open(const struct accel_host_services *services,
                                const char *env_name, const char *const *defaults,
                                struct accel__native_library *out_library,
                                char *reason, size_t reason_size)
{
    const char *chosen = env_name != NULL ? services->getenv(env_name) : NULL;

    memset(out_library, 0, sizeof(*out_library));
    if (reason_size != 0)
        reason[0] = '\0';
    if (chosen != NULL && chosen[0] != '\0') {
        if (native_try(chosen, out_library, reason, reason_size))
            return true;
        /* Say where the path came from: the user set it, perhaps long ago. */
        char tried[ACCEL__NATIVE_REASON_MAX];

        snprintf(tried, sizeof(tried), "%s", reason);
        snprintf(reason, reason_size, "%s=%s", env_name, tried);
        return false;
    }
    for (const char *const *name = defaults; *name != NULL; name++) {
        if (native_try(*name, out_library, reason, reason_size))
            return true;
    }
    return false;
}

void *accel__native_library_symbol(const struct accel__native_library *library,
                                   const char *name)
{
    void *symbol;

    if (library->handle == NULL)
        return NULL;
    dlerror();
    symbol = dlsym(library->handle, name);
    dlerror();
    return symbol;
}

void accel__native_library_close(struct accel__native_library *library,
                                 bool keep_loaded)
{
    if (library->handle != NULL && !keep_loaded)
        dlclose(library->handle);
    memset(library, 0, sizeof(*library));
}

/* The most missing entries a reason names; the rest are counted. */
#define NATIVE_MISSING_NAMED 6

void accel__native_missing_add(struct accel__native_missing *missing,
                               const char *symbol)
{
    if (missing->count++ < NATIVE_MISSING_NAMED &&
        missing->used < sizeof(missing->named))
        missing->used += (size_t)snprintf(
            missing->named + missing->used,
            sizeof(missing->named) - missing->used, "%s%s",
            missing->count == 1 ? "" : ", ", symbol);
}

size_t accel__native_missing_describe(const struct accel__native_missing *missing,
                                      const struct accel__native_library *library,
                                      const char *what, char *reason,
                                      size_t reason_size)
{
    int written = snprintf(
        reason, reason_size,
        "%.300s is not a usable %s: it lacks %zu required entry point(s): "
        "%s%s",
        library->path, what, missing->count, missing->named,
        missing->count > NATIVE_MISSING_NAMED ? ", ..." : "");

    return written < 0 ? 0 : (size_t)written;
}
