/*
 * The HIP runtime, opened with dlopen, and its entry points.
 */
#include "hip_dynamic_symbols.h"

#include <stdio.h>
#include <string.h>

/* Where each entry of hip_symbol_table.h lands in struct hip_symbols. */
struct hip_symbol_slot {
    const char *symbol;
    bool required;
    size_t offset;
};

static const struct hip_symbol_slot hip_symbol_slots[] = {
#define AHIP_REQUIRED(type, symbol, params)                                    \
    {#symbol, true, offsetof(struct hip_symbols, symbol)},
#define AHIP_OPTIONAL(type, symbol, params)                                    \
    {#symbol, false, offsetof(struct hip_symbols, symbol)},
#include "hip_symbol_table.h"
};

/* ROCm 6, then ROCm 5, then whatever the development package links to. */
static const char *const hip_library_defaults[] = {
    "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL};

/* Resolve every entry; false with the missing required ones named. */
static bool hip_symbols_resolve(struct hip_symbols *symbols, char *reason,
                                size_t reason_size)
{
    size_t count = sizeof(hip_symbol_slots) / sizeof(hip_symbol_slots[0]);
    struct accel__native_missing missing = {0};

    for (size_t i = 0; i < count; i++) {
        const struct hip_symbol_slot *slot = &hip_symbol_slots[i];
        void *entry = accel__native_library_symbol(&symbols->library,
                                                   slot->symbol);

        /* POSIX guarantees a function's address round-trips through void *. */
        memcpy((char *)symbols + slot->offset, &entry, sizeof(entry));
        if (entry == NULL && slot->required)
            accel__native_missing_add(&missing, slot->symbol);
    }
    if (missing.count == 0)
        return true;
    accel__native_missing_describe(&missing, &symbols->library, "HIP runtime",
                                   reason, reason_size);
    return false;
}

bool accel__hip_symbols_load(struct hip_symbols *symbols,
                             const struct accel_host_services *services,
                             char *reason, size_t reason_size)
{
    memset(symbols, 0, sizeof(*symbols));
    if (!accel__native_library_open(services, ACCEL_HIP_LIBRARY_ENV,
                                    hip_library_defaults, &symbols->library,
                                    reason, reason_size))
        return false;
    if (hip_symbols_resolve(symbols, reason, reason_size))
        return true;
    accel__hip_symbols_unload(symbols, false);
    return false;
}

void accel__hip_symbols_unload(struct hip_symbols *symbols, bool keep_loaded)
{
    accel__native_library_close(&symbols->library, keep_loaded);
    memset(symbols, 0, sizeof(*symbols));
}
