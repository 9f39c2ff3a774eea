/*
 * Status codes and the per-thread error detail.
 *
 * Every code comes from the one ACCEL_STATUS_LIST in driver.h; names and
 * strings are generated from it. The detail lives in a thread-local buffer,
 * written where an error is made (by the host or, through the services
 * table, by a plugin) and read by accel_last_error() on the same thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "os.h"
#include "status.h"

#define ACCEL__DETAIL_MAX 1024

static _Thread_local char last_error[ACCEL__DETAIL_MAX];
static _Thread_local accel_status last_status;

const char *accel_status_name(accel_status status)
{
    switch (status) {
#define ACCEL__NAME_CASE(name, value, text)                                    \
    case name:                                                                 \
        return #name;
        ACCEL_STATUS_LIST(ACCEL__NAME_CASE)
#undef ACCEL__NAME_CASE
    }
    return "ACCEL_STATUS_UNKNOWN";
}

const char *accel_status_string(accel_status status)
{
    switch (status) {
#define ACCEL__TEXT_CASE(name, value, text)                                    \
    case name:                                                                 \
        return text;
        ACCEL_STATUS_LIST(ACCEL__TEXT_CASE)
#undef ACCEL__TEXT_CASE
    }
    return "unknown status code";
}

bool accel__status_is_known(int status)
{
    switch (status) {
#define ACCEL__KNOWN_CASE(name, value, text) case value:
        ACCEL_STATUS_LIST(ACCEL__KNOWN_CASE)
#undef ACCEL__KNOWN_CASE
        return true;
    }
    return false;
}

const char *accel_last_error(void)
{
    return last_error;
}

static void record(accel_status status, const char *fmt, va_list args)
{
    /* Format into a scratch buffer first: a plugin may pass
     * accel_last_error() itself as an argument. */
    char detail[ACCEL__DETAIL_MAX];
    vsnprintf(detail, sizeof detail, fmt, args);
    /* A detail may quote a path or a plugin's words: escaped, so that
     * printing it cannot drive a terminal. */
    accel__escape(last_error, sizeof last_error, detail);
    last_status = status;
    accel__log(ACCEL_LOG_DEBUG, "%s: %s", accel_status_name(status), last_error);
}

accel_status accel__error(accel_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    record(status, fmt, args);
    va_end(args);
    return status;
}

accel_status accel__error_keep(accel_status status, const char *what)
{
    /* A plugin that failed should have said why; if the detail on record is
     * not about this status, it is older, and a plain one replaces it. */
    if (last_status != status || last_error[0] == '\0')
        return accel__error(status, "%s: %s (the plugin gave no detail)", what,
                            accel_status_string(status));
    return status;
}

accel_status accel__error_named(accel_status status, const char *site,
                                const char *entry)
{
    if (last_status != status || last_error[0] == '\0')
        return accel__error(status, "%s: %s: %s (the plugin gave no detail)",
                            site, entry, accel_status_string(status));
    /* The plugin's detail, already escaped, after the site's name (the
     * host's own words), and the entry's unless the plugin named it first;
     * cut at the end of the buffer if it must be. */
    char prefix[160];
    size_t entry_length = strlen(entry);
    bool named = strncmp(last_error, entry, entry_length) == 0 &&
                 last_error[entry_length] == ':';
    int made = named ? snprintf(prefix, sizeof prefix, "%s: ", site)
                     : snprintf(prefix, sizeof prefix, "%s: %s: ", site, entry);
    size_t length = strlen(last_error);
    if (made < 0 || (size_t)made >= sizeof prefix)
        return status;
    if (length > sizeof last_error - 1 - (size_t)made)
        length = sizeof last_error - 1 - (size_t)made;
    memmove(last_error + made, last_error, length);
    last_error[(size_t)made + length] = '\0';
    memcpy(last_error, prefix, (size_t)made);
    return status;
}

static accel_status services_set_error(accel_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    record(status, fmt, args);
    va_end(args);
    return status;
}

static void services_log(accel_log_level level, const char *fmt, ...)
{
    if (!accel__log_enabled(level))
        return;
    char message[ACCEL__DETAIL_MAX];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    accel__log(level, "%s", message);
}

const struct accel_host_services accel__services = {
    .struct_size = sizeof(struct accel_host_services),
    .version = ACCEL_HOST_SERVICES_VERSION,
    .log = services_log,
    .set_error = services_set_error,
    .getenv = accel__getenv,
};

accel_status accel__plugin_failed(accel_status status, const char *what)
{
    if (!accel__status_is_known((int)status))
        return accel__error(ACCEL_ERR_PLUGIN_ABI,
                            "%s returned %d, which is not an accel_status",
                            what, (int)status);
    if (status == ACCEL_NOT_READY)
        return status;
    return accel__error_keep(status, what);
}

accel_status accel__plugin_failed_named(accel_status status, const char *site,
                                        const char *entry)
{
    if (!accel__status_is_known((int)status))
        return accel__error(ACCEL_ERR_PLUGIN_ABI,
                            "%s: %s returned %d, which is not an accel_status",
                            site, entry, (int)status);
    if (status == ACCEL_NOT_READY)
        return status;
    return accel__error_named(status, site, entry);
}
