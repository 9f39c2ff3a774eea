/*
 * Loading a vendor library with dlopen, keeping the reason when it fails.
 *
 * A GPU plugin never links its vendor's library: it opens it at plugin_open,
 * and a machine without it must get "no device" with a sentence that says
 * what was tried. This is that step, the same for every vendor: a path from
 * an environment variable when one is set (and only it: a typo must show,
 * not be covered by a fallback), else each default name in turn, the first
 * that opens winning; a failure lists every path with the loader's reason.
 */
#ifndef ACCEL_PLUGIN_COMMON_NATIVE_LIBRARY_H
#define ACCEL_PLUGIN_COMMON_NATIVE_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>

#include <accel/driver.h>

/* The longest reason kept, in bytes with the NUL. */
#define ACCEL__NATIVE_REASON_MAX 1024

/* An open vendor library and what was tried to open it. */
struct accel__native_library {
    void *handle;   /* from dlopen; NULL when nothing opened */
    char path[512]; /* the name or path that opened */
};

/*
 * Open the library named by `env_name` (read through services->getenv)
 * when it is set and not empty, else the first of `defaults` (NULL
 * terminated) that opens. dlopen flags are RTLD_NOW | RTLD_LOCAL.
 *
 * Returns true with *out_library filled when one opened. Returns false
 * with a reason in `reason` (`reason_size` bytes, always NUL-terminated)
 * naming every path tried and the loader's message for each, e.g.
 * "libcuda.so.1: cannot open shared object file: ...; libcuda.so: ...".
 */
bool accel__native_library_open(const struct accel_host_services *services,
                                const char *env_name, const char *const *defaults,
                                struct accel__native_library *out_library,
                                char *reason, size_t reason_size);

/*
 * A symbol of the library by its exact name; NULL when it has none. Clears
 * dlerror so that a later failure's message is its own.
 */
void *accel__native_library_symbol(const struct accel__native_library *library,
                                   const char *name);

/*
 * Close the library. `keep_loaded` leaves it mapped: a vendor driver that
 * has been initialised runs threads and exit handlers of its own, and
 * unmapping it under them would crash the process later, far from here.
 */
void accel__native_library_close(struct accel__native_library *library,
                                 bool keep_loaded);

/*
 * The required entry points a library lacks, gathered while its table is
 * resolved, for the reason it is refused: the first few by name, the rest
 * counted. Start from {0}.
 */
struct accel__native_missing {
    size_t count;
    size_t used;     /* bytes of `named` written */
    char named[256]; /* "cuInit, cuDriverGetVersion" */
};

/* Note required entry point `symbol` as missing. */
void accel__native_missing_add(struct accel__native_missing *missing,
                               const char *symbol);

/*
 * Write "PATH is not a usable WHAT: it lacks N required entry point(s):
 * a, b, ..." to `reason` (`reason_size` bytes, NUL-terminated); `what` is
 * "CUDA driver", say. Returns the length snprintf reports, so that a
 * caller may append.
 */
size_t accel__native_missing_describe(const struct accel__native_missing *missing,
                                      const struct accel__native_library *library,
                                      const char *what, char *reason,
                                      size_t reason_size);

#endif /* ACCEL_PLUGIN_COMMON_NATIVE_LIBRARY_H */
