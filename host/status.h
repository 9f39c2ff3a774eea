/*
 * Errors and logging (status.c, log.c): the calling thread's last error,
 * statuses that plugins return, the log, and the services table every
 * plugin receives. Internal non-static names start with accel__.
 */
#ifndef ACCEL_HOST_STATUS_H
#define ACCEL_HOST_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

/*
 * Record `status` and a formatted detail as the calling thread's last error
 * and return `status`, so that a caller can `return accel__error(...)`.
 */
accel_status accel__error(accel_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * For a plugin call `what` that failed with `status`: keep the detail the
 * plugin recorded, or record a plain one if it recorded none.
 */
accel_status accel__error_keep(accel_status status, const char *what);
/*
 * The same, the plugin's detail named by its site and entry: "site: entry:
 * detail" ("site: detail" when the plugin's detail begins with the entry).
 */
accel_status accel__error_named(accel_status status, const char *site,
                                const char *entry);
/* True for a value that is one of the codes of ACCEL_STATUS_LIST. */
bool accel__status_is_known(int status);
accel_status accel__plugin_failed(accel_status status, const char *what);
/* As accel__plugin_failed, the detail named by accel__error_named. */
accel_status accel__plugin_failed_named(accel_status status, const char *site,
                                        const char *entry);

/*
 * Take a status a plugin entry `what` returned: ACCEL_OK passes; a known
 * code keeps the plugin's detail; a value outside the list is the plugin's
 * fault and becomes ACCEL_ERR_PLUGIN_ABI.
 */
static inline accel_status accel__from_plugin(accel_status status,
                                              const char *what)
{
    if (status == ACCEL_OK)
        return ACCEL_OK;
    return accel__plugin_failed(status, what);
}

void accel__log(accel_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool accel__log_enabled(accel_log_level level);

/*
 * The minor this host speaks and the services it hands plugins. A test
 * build (ACCEL_HOST_NEXT_MINOR_FIXTURE, tests/test-next-minor-host.c)
 * raises both by one, as the next minor's host would be, to show that an
 * older plugin still loads on it; the library itself never does.
 */
#ifdef ACCEL_HOST_NEXT_MINOR_FIXTURE
#define ACCEL__HOST_MINOR (ACCEL_DRIVER_ABI_MINOR + 1)
struct accel__host_services {
    struct accel_host_services v1;
    uint32_t next_minor_service;
};
#else
#define ACCEL__HOST_MINOR ACCEL_DRIVER_ABI_MINOR
struct accel__host_services {
    struct accel_host_services v1;
};
#endif

/* The services table every plugin receives. */
extern const struct accel_host_services accel__services;

#endif /* ACCEL_HOST_STATUS_H */
