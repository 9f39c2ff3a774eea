/*
 * The CUDA driver, opened with dlopen, and its entry points.
 */
#include "cuda_dynamic_symbols.h"

#include <stdio.h>
#include <string.h>

/* Where each entry of cuda_symbol_table.h lands in struct cuda_symbols. */
struct cuda_symbol_slot {
    const char *symbol;
    const char *base;
    int version;
    bool required;
    size_t offset;
};

static const struct cuda_symbol_slot cuda_symbol_slots[] = {
#define ACU_REQUIRED(symbol, base, version, params)                            \
    {#symbol, base, version, true, offsetof(struct cuda_symbols, symbol)},
#define ACU_OPTIONAL(symbol, base, version, params)                            \
    {#symbol, base, version, false, offsetof(struct cuda_symbols, symbol)},
#include "cuda_symbol_table.h"
};

static const char *const cuda_library_defaults[] = {"libcuda.so.1",
                                                    "libcuda.so", NULL};

/*
 * One entry: from cuGetProcAddress at the pinned version when the driver
 * has it and gives one, else by its versioned name. A cuGetProcAddress
 * that fails for a reason other than this entry's version (the stub
 * library's CUDA_ERROR_STUB_LIBRARY, say) is not asked again.
 */
static void *cuda_symbol_find(struct cuda_symbols *symbols,
                              const struct cuda_symbol_slot *slot)
{
    if (symbols->cuGetProcAddress_v2 != NULL) {
        acu_CUdriverProcAddressQueryResult found =
            ACU_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void *entry = NULL;
        acu_CUresult result = symbols->cuGetProcAddress_v2(
            slot->base, &entry, slot->version,
            ACU_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);

        if (result == ACU_CUDA_SUCCESS &&
            found == ACU_CU_GET_PROC_ADDRESS_SUCCESS && entry != NULL)
            return entry;
        /* INVALID_VALUE: a version newer than the driver; only this entry is missing. */
        if (result != ACU_CUDA_SUCCESS && result != ACU_CUDA_ERROR_INVALID_VALUE)
            symbols->cuGetProcAddress_v2 = NULL;
    }
    return accel__native_library_symbol(&symbols->library, slot->symbol);
}

/* Resolve every entry; false with the missing required ones named. */
static bool cuda_symbols_resolve(struct cuda_symbols *symbols, char *reason,
                                 size_t reason_size)
{
    size_t count = sizeof(cuda_symbol_slots) / sizeof(cuda_symbol_slots[0]);
    struct accel__native_missing missing = {0};
    size_t used;

    /* The one entry that only dlsym can find: it finds the others. */
    void *get_proc_address = accel__native_library_symbol(
        &symbols->library, "cuGetProcAddress_v2");

    memcpy(&symbols->cuGetProcAddress_v2, &get_proc_address,
           sizeof(get_proc_address));
    for (size_t i = 0; i < count; i++) {
        const struct cuda_symbol_slot *slot = &cuda_symbol_slots[i];
        void *entry = cuda_symbol_find(symbols, slot);

        /* POSIX guarantees a function's address round-trips through void *. */
        memcpy((char *)symbols + slot->offset, &entry, sizeof(entry));
        if (entry == NULL && slot->required)
            accel__native_missing_add(&missing, slot->symbol);
    }
    if (missing.count == 0)
        return true;
    used = accel__native_missing_describe(&missing, &symbols->library,
                                          "CUDA driver", reason, reason_size);
    if (used < reason_size)
        snprintf(reason + used, reason_size - used,
                 " (looked up %s at API version %d, then by name)",
                 symbols->cuGetProcAddress_v2 != NULL
                     ? "with cuGetProcAddress"
                     : "without cuGetProcAddress",
                 ACU_API_VERSION);
    return false;
}

bool accel__cuda_symbols_load(struct cuda_symbols *symbols,
                              const struct accel_host_services *services,
                              char *reason, size_t reason_size)
{
    memset(symbols, 0, sizeof(*symbols));
    if (!accel__native_library_open(services, ACCEL_CUDA_LIBRARY_ENV,
                                    cuda_library_defaults, &symbols->library,
                                    reason, reason_size))
        return false;
    if (cuda_symbols_resolve(symbols, reason, reason_size))
        return true;
    accel__cuda_symbols_unload(symbols, false);
    return false;
}

void accel__cuda_symbols_unload(struct cuda_symbols *symbols, bool keep_loaded)
{
    accel__native_library_close(&symbols->library, keep_loaded);
    memset(symbols, 0, sizeof(*symbols));
}
