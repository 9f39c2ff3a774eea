#include "null_fault.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "null_os.h"
#include "null_plugin.h"

/* The largest call number the variables take. */
#define NULL_FAULT_CALL_MAX 1000000000000ull

static const char *const null_entry_names[NULL_ENTRY_COUNT] = {
#define NULL_ENTRY_NAME_(name) #name,
    NULL_ENTRY_LIST(NULL_ENTRY_NAME_)
#undef NULL_ENTRY_NAME_
};

static const char *null_entry_name(enum null_entry entry)
{
    return entry < NULL_ENTRY_COUNT ? null_entry_names[entry] : "any";
}

/* ---- reading the variables ---- */

static bool null_parse_entry(const char *text, size_t length,
                             enum null_entry *out_entry)
{
    if (length == 3 && strncmp(text, "any", 3) == 0) {
        *out_entry = NULL_ENTRY_ANY;
        return true;
    }
    for (unsigned i = 0; i < NULL_ENTRY_COUNT; i++) {
        if (strlen(null_entry_names[i]) == length &&
            strncmp(text, null_entry_names[i], length) == 0) {
            *out_entry = (enum null_entry)i;
            return true;
        }
    }
    return false;
}

/* An error code by its name, ACCEL_ERR_DRIVER and the like; not ACCEL_OK. */
static bool null_parse_status(const char *text, accel_status *out_status)
{
#define NULL_STATUS_MATCH_(name, value, description)                           \
    if ((value) < 0 && strcmp(text, #name) == 0) {                             \
        *out_status = name;                                                    \
        return true;                                                           \
    }
    ACCEL_STATUS_LIST(NULL_STATUS_MATCH_)
#undef NULL_STATUS_MATCH_
    return false;
}

static bool null_malformed(accel_drv_plugin *plugin, const char *name,
                           const char *text, const char *why, const char *form)
{
    accel__null_reason_bad_value(plugin, name, text, "%s; the form is %s", why,
                                 form);
    return false;
}

/*
 * "[<entry|any>:]<n>" up to `end` (or the string's end): which calls, and
 * the number of the one meant. Without an entry, `entry_needed` says
 * whether that is an error or means any.
 */
static const char *null_parse_call(const char *text, const char *end,
                                   bool entry_needed, enum null_entry *out_entry,
                                   uint64_t *out_number)
{
    const char *colon = memchr(text, ':', (size_t)(end - text));
    const char *number = text;

    *out_entry = NULL_ENTRY_ANY;
    if (colon == NULL && entry_needed)
        return "has no ':'";
    if (colon != NULL) {
        if (!null_parse_entry(text, (size_t)(colon - text), out_entry))
            return "names no entry of driver.h nor 'any'";
        number = colon + 1;
    }
    if (!accel__null_parse_whole(number, (size_t)(end - number),
                                 NULL_FAULT_CALL_MAX, out_number))
        return "has no call number from 0 to 10^12";
    return NULL;
}

/* ACCEL_NULL_FAIL=<entry|any>:<n>[:<STATUS_NAME>] */
static bool null_read_fail(accel_drv_plugin *plugin, const char *text)
{
    static const char form[] = "<entry|any>:<n>[:<ACCEL_ERR_...>]";
    struct null_faults *faults = &plugin->faults;
    const char *colon = strchr(text, ':');
    const char *status_name = colon != NULL ? strchr(colon + 1, ':') : NULL;
    const char *why = null_parse_call(
        text, status_name != NULL ? status_name : text + strlen(text), true,
        &faults->fail_entry, &faults->fail_at);

    if (why != NULL)
        return null_malformed(plugin, "ACCEL_NULL_FAIL", text, why, form);
    if (status_name != NULL &&
        !null_parse_status(status_name + 1, &faults->fail_status))
        return null_malformed(plugin, "ACCEL_NULL_FAIL", text,
                              "names no error status", form);
    return true;
}

bool accel__null_faults_read(accel_drv_plugin *plugin)
{
    const struct accel_host_services *services = plugin->services;
    struct null_faults *faults = &plugin->faults;
    const char *fail = services->getenv("ACCEL_NULL_FAIL");
    const char *lose = services->getenv("ACCEL_NULL_LOSE_AT");
    const char *report = services->getenv("ACCEL_NULL_REPORT");
    const char *why;

    faults->fail_entry = NULL_ENTRY_ANY;
    faults->fail_status = ACCEL_ERR_DRIVER;
    faults->lose_entry = NULL_ENTRY_ANY;
    if (fail != NULL && !null_read_fail(plugin, fail)) {
        faults->fail_at = 0; /* no device anyway, but plugin_open must not fail */
        return false;
    }
    why = lose == NULL ? NULL
                       : null_parse_call(lose, lose + strlen(lose), false,
                                         &faults->lose_entry, &faults->lose_at);
    if (why != NULL) {
        faults->lose_at = 0;
        return null_malformed(plugin, "ACCEL_NULL_LOSE_AT", lose, why,
                              "[<entry|any>:]<n>");
    }
    if (report != NULL &&
        (report[0] == '\0' || strlen(report) >= sizeof(faults->report_path))) {
        snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
                 "ACCEL_NULL_REPORT must name a file, in fewer than %u bytes",
                 NULL_REPORT_PATH_MAX);
        return false;
    }
    if (report != NULL)
        snprintf(faults->report_path, sizeof(faults->report_path), "%s", report);
    faults->active = faults->fail_at != 0 || faults->lose_at != 0 ||
                     report != NULL;
    return true;
}

/* ---- counting calls ---- */

static void null_lose(accel_drv_plugin *plugin, accel_drv_device *device)
{
    if (!atomic_exchange(&device->lost, true))
        atomic_fetch_add(&plugin->faults.losses, 1);
}

/*
 * Count the call; make the device lost if this is the call ACCEL_NULL_LOSE_AT
 * names (or the first with a device after it). True when the call is the
 * one ACCEL_NULL_FAIL names; *out_number is the call's number.
 */
static bool null_count(accel_drv_plugin *plugin, accel_drv_device *device,
                       enum null_entry entry, uint64_t *out_number)
{
    struct null_faults *faults = &plugin->faults;
    uint64_t number = atomic_fetch_add(&faults->calls, 1) + 1;
    uint64_t of_entry = atomic_fetch_add(&faults->entry_calls[entry], 1) + 1;

    *out_number = number;
    if (faults->lose_at != 0 &&
        (faults->lose_entry == NULL_ENTRY_ANY ? number : of_entry) ==
            faults->lose_at &&
        (faults->lose_entry == NULL_ENTRY_ANY || faults->lose_entry == entry)) {
        if (device != NULL)
            null_lose(plugin, device);
        else
            atomic_store(&faults->lose_pending, true);
    } else if (device != NULL && atomic_load(&faults->lose_pending) &&
               atomic_exchange(&faults->lose_pending, false)) {
        null_lose(plugin, device);
    }
    if (faults->fail_at == 0)
        return false;
    if (faults->fail_entry == NULL_ENTRY_ANY)
        return number == faults->fail_at;
    return faults->fail_entry == entry && of_entry == faults->fail_at;
}

accel_status accel__null_enter(accel_drv_plugin *plugin,
                               accel_drv_device *device, enum null_entry entry)
{
    const struct accel_host_services *services = plugin->services;
    uint64_t number;
    bool fail;

    if (!plugin->faults.active)
        return ACCEL_OK;
    fail = null_count(plugin, device, entry, &number);

    if (device != NULL && entry != NULL_ENTRY_device_reset &&
        atomic_load(&device->lost))
        return services->set_error(
            ACCEL_ERR_DEVICE_LOST,
            "%s: null device %u is lost (ACCEL_NULL_LOSE_AT); "
            "device_reset rebuilds it",
            null_entry_name(entry), device->index);
    if (!fail)
        return ACCEL_OK;
    atomic_fetch_add(&plugin->faults.fired, 1);
    return services->set_error(plugin->faults.fail_status,
                               "%s: injected failure at plugin call %" PRIu64
                               " (ACCEL_NULL_FAIL)",
                               null_entry_name(entry), number);
}

void accel__null_enter_void(accel_drv_plugin *plugin, accel_drv_device *device,
                            enum null_entry entry)
{
    uint64_t number;

    if (plugin->faults.active)
        (void)null_count(plugin, device, entry, &number);
}

void accel__null_faults_report(accel_drv_plugin *plugin)
{
    struct null_faults *faults = &plugin->faults;
    FILE *file;

    if (faults->report_path[0] == '\0')
        return;
    file = fopen(faults->report_path, "w");
    if (file == NULL) {
        plugin->services->log(ACCEL_LOG_WARN,
                              "null: ACCEL_NULL_REPORT: cannot write %s: %s",
                              faults->report_path, null_errno_name(errno));
        return;
    }
    fprintf(file,
            "calls=%" PRIu64 " faults=%" PRIu64 " losses=%" PRIu64
            " left_at_close=%" PRIu64 " left_at_reset=%" PRIu64 "\n",
            atomic_load(&faults->calls), atomic_load(&faults->fired),
            atomic_load(&faults->losses), atomic_load(&faults->left_at_close),
            atomic_load(&faults->left_at_reset));
    fclose(file);
}
