/*
 * Turning a vendor's error code into an accel_status and an error detail.
 */
#include "native_status.h"

#include <stdbool.h>
#include <stdio.h>

#include "context_state.h"

const struct accel__native_code *
accel__native_code_find(const struct accel__native_codes *table, int code)
{
    /* Errors are rare and the tables short: a scan is all it takes. */
    for (size_t i = 0; i < table->count; i++) {
        if (table->codes[i].code == code)
            return &table->codes[i];
    }
    return NULL;
}

const char *accel__native_code_name(const struct accel__native_codes *table,
                                    int code)
{
    const struct accel__native_code *entry = accel__native_code_find(table, code);

    return entry != NULL ? entry->name : "unknown error";
}

/*
 * The accel_status for `code`: the table's mapping, ACCEL_ERR_DEVICE_LOST
 * for a sticky code, else `fallback`.
 */
static accel_status native_code_status(const struct accel__native_codes *table,
                                       int code, accel_status fallback)
{
    const struct accel__native_code *entry = accel__native_code_find(table, code);

    if (entry == NULL)
        return fallback;
    switch (entry->kind) {
    case ACCEL__NATIVE_MAPPED:
        return entry->status;
    case ACCEL__NATIVE_STICKY:
        return ACCEL_ERR_DEVICE_LOST;
    case ACCEL__NATIVE_FALLBACK:
        break;
    }
    return fallback;
}

void accel__native_describe(const struct accel__native_codes *table, int code,
                            const char *description, const char *extra,
                            char *out, size_t size)
{
    const struct accel__native_code *entry = accel__native_code_find(table, code);
    const char *text = entry != NULL && entry->hint != NULL ? entry->hint
                                                            : description;
    bool has_text = text != NULL && text[0] != '\0';
    bool has_extra = extra != NULL && extra[0] != '\0';

    snprintf(out, size, "%s (%d)%s%s%s%s",
             entry != NULL ? entry->name : "unknown error", code,
             has_text ? ": " : "", has_text ? text : "", has_extra ? "; " : "",
             has_extra ? extra : "");
}

accel_status accel__native_error(const struct accel_host_services *services,
                                 const struct accel__native_codes *table,
                                 int code, accel_status fallback,
                                 const char *call, const char *description,
                                 const char *extra,
                                 struct accel__context_state *context)
{
    const struct accel__native_code *entry = accel__native_code_find(table, code);
    char what[ACCEL__NATIVE_DETAIL_MAX];

    if (entry != NULL && entry->kind == ACCEL__NATIVE_STICKY && context != NULL)
        accel__context_state_mark_lost(context, call, entry->name);
    accel__native_describe(table, code, description, extra, what, sizeof(what));
    return services->set_error(native_code_status(table, code, fallback),
                               "%s failed: %s", call, what);
}

void accel__native_ignore(const struct accel_host_services *services,
                          const struct accel__native_codes *table, int code,
                          const char *call, const char *device_name,
                          struct accel__context_state *context)
{
    const struct accel__native_code *entry = accel__native_code_find(table, code);

    if (entry != NULL && entry->kind == ACCEL__NATIVE_STICKY)
        accel__context_state_mark_lost(context, call, entry->name);
    services->log(ACCEL_LOG_DEBUG, "%s: %s failed: %s (%d)", device_name, call,
                  entry != NULL ? entry->name : "unknown error", code);
}
