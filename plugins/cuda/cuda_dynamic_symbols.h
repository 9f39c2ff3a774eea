/*
 * The CUDA driver, opened with dlopen, and its entry points.
 *
 * The library is ACCEL_CUDA_LIBRARY when set (read through the host's
 * getenv), else libcuda.so.1, else libcuda.so. Entry points are asked of
 * the driver's cuGetProcAddress_v2 at the API version the table pins (CUDA
 * 12.0 and later drivers have it); where it is missing or does not give
 * one, by the versioned name with dlsym. Nothing here calls into the
 * driver beyond cuGetProcAddress: cuInit is the plugin's business.
 */
#ifndef ACCEL_CUDA_DYNAMIC_SYMBOLS_H
#define ACCEL_CUDA_DYNAMIC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <accel/driver.h>

#include "cuda_api.h"
#include "native_library.h"

/* The environment variable that names the driver library. */
#define ACCEL_CUDA_LIBRARY_ENV "ACCEL_CUDA_LIBRARY"

struct cuda_symbols {
    struct accel__native_library library;
    /* NULL where the driver predates CUDA 12.0; then every entry came by dlsym. */
    acu_pfn_cuGetProcAddress_v2 cuGetProcAddress_v2;
#define ACU_REQUIRED(symbol, base, version, params)                            \
    acu_CUresult(*symbol) params;
#define ACU_OPTIONAL(symbol, base, version, params)                            \
    acu_CUresult(*symbol) params;
#include "cuda_symbol_table.h"
};

/*
 * Open the driver and resolve every entry. False, with `reason` (of
 * `reason_size` bytes) saying what was tried, when no library opens or one
 * lacks a required entry; nothing stays open then.
 */
bool accel__cuda_symbols_load(struct cuda_symbols *symbols,
                              const struct accel_host_services *services,
                              char *reason, size_t reason_size);

/*
 * Forget the entries and close the library; `keep_loaded` leaves it mapped
 * (see accel__native_library_close: an initialised driver stays).
 */
void accel__cuda_symbols_unload(struct cuda_symbols *symbols, bool keep_loaded);

#endif /* ACCEL_CUDA_DYNAMIC_SYMBOLS_H */
