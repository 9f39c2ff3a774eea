/*
 * The HIP runtime, opened with dlopen, and its entry points.
 *
 * The library is ACCEL_HIP_LIBRARY when set (read through the host's
 * getenv; only it is tried, so that a typo shows), else libamdhip64.so.6,
 * libamdhip64.so.5, libamdhip64.so, the first that opens. Entry points come
 * by name with dlsym: HIP has no versioned lookup before ROCm 6.2, and the
 * one entry whose ABI changed under the same name (hipGetDeviceProperties)
 * is asked for by both its names (see hip_api.h). Nothing here calls into
 * the runtime: hipInit is the plugin's business.
 */
#ifndef ACCEL_HIP_DYNAMIC_SYMBOLS_H
#define ACCEL_HIP_DYNAMIC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <accel/driver.h>

#include "hip_api.h"
#include "native_library.h"

/* The environment variable that names the runtime library. */
#define ACCEL_HIP_LIBRARY_ENV "ACCEL_HIP_LIBRARY"

struct hip_symbols {
    struct accel__native_library library;
#define AHIP_REQUIRED(type, symbol, params) type(*symbol) params;
#define AHIP_OPTIONAL(type, symbol, params) type(*symbol) params;
#include "hip_symbol_table.h"
};

/*
 * Open the runtime and resolve every entry. False, with `reason` (of
 * `reason_size` bytes) saying what was tried, when no library opens or one
 * lacks a required entry; nothing stays open then.
 */
bool accel__hip_symbols_load(struct hip_symbols *symbols,
                             const struct accel_host_services *services,
                             char *reason, size_t reason_size);

/*
 * Forget the entries and close the library; `keep_loaded` leaves it mapped
 * (see accel__native_library_close: a runtime that was initialised stays).
 */
void accel__hip_symbols_unload(struct hip_symbols *symbols, bool keep_loaded);

#endif /* ACCEL_HIP_DYNAMIC_SYMBOLS_H */
