/*
 * Turning a vendor's error code into an accel_status and an error detail.
 *
 * Each GPU plugin lists its vendor's codes once, in a table of
 * struct accel__native_code built from an X-macro, and says for each
 * whether it maps to a fixed accel_status (out of memory, not found, ...),
 * poisons the context (a sticky error: the device is lost until reset), or
 * takes the status of what the failed call was doing (a copy, a launch, a
 * module load). accel__native_error then records the one detail every
 * failure gets, "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): ...",
 * where the error is made, and marks the context lost for a sticky code.
 */
#ifndef ACCEL_PLUGIN_COMMON_NATIVE_STATUS_H
#define ACCEL_PLUGIN_COMMON_NATIVE_STATUS_H

#include <stddef.h>

#include <accel/driver.h>

struct accel__context_state;

/* The longest detail accel__native_error records, in bytes with the NUL. */
#define ACCEL__NATIVE_DETAIL_MAX 1024

enum accel__native_kind {
    /* The caller's fallback status: what the failed call was doing. */
    ACCEL__NATIVE_FALLBACK = 0,
    /* The status in the table entry, whatever the call. */
    ACCEL__NATIVE_MAPPED,
    /* The context is poisoned: ACCEL_ERR_DEVICE_LOST until a reset. */
    ACCEL__NATIVE_STICKY
};

/* One vendor code. */
struct accel__native_code {
    int code;
    const char *name; /* "CUDA_ERROR_ILLEGAL_ADDRESS" */
    enum accel__native_kind kind;
    accel_status status; /* for ACCEL__NATIVE_MAPPED */
    const char *hint; /* a sentence for codes whose name is not enough; or NULL */
};

/* A vendor's whole list, in any order. */
struct accel__native_codes {
    const struct accel__native_code *codes;
    size_t count;
};

/* The entry for `code`, or NULL for a code the table does not know. */
const struct accel__native_code *
accel__native_code_find(const struct accel__native_codes *table, int code);

/* The code's name, or "unknown error" for a code the table does not know. */
const char *accel__native_code_name(const struct accel__native_codes *table,
                                    int code);

/*
 * Write "NAME (CODE)" to `out` (`size` bytes, NUL-terminated), then ": " and
 * the entry's hint or else `description` (the driver's own text for the
 * code; may be NULL), then "; " and `extra` (what else the caller knows,
 * such as a JIT log; may be NULL): what a reason or a detail says of a code.
 */
void accel__native_describe(const struct accel__native_codes *table, int code,
                            const char *description, const char *extra,
                            char *out, size_t size);

/*
 * Record the failure of native call `call` with `code` through
 * services->set_error and return its accel_status: the table's mapping,
 * ACCEL_ERR_DEVICE_LOST for a sticky code, else `fallback`. The detail is
 * "CALL failed: " and what accel__native_describe writes. For a sticky
 * code, `context` (may be NULL) is marked lost with the same call and name.
 */
accel_status accel__native_error(const struct accel_host_services *services,
                                 const struct accel__native_codes *table,
                                 int code, accel_status fallback,
                                 const char *call, const char *description,
                                 const char *extra,
                                 struct accel__context_state *context);

/*
 * For a failure an entry cannot return (a free, a destroy): log the
 * failure of `call` with `code` at debug level, naming `device_name` (e.g.
 * "cuda:0"), and for a sticky code mark `context` lost. The thread's error
 * detail is left alone.
 */
void accel__native_ignore(const struct accel_host_services *services,
                          const struct accel__native_codes *table, int code,
                          const char *call, const char *device_name,
                          struct accel__context_state *context);

#endif /* ACCEL_PLUGIN_COMMON_NATIVE_STATUS_H */
