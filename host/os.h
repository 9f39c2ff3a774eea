/*
 * The few OS calls (os.c): process ids and privilege, the environment,
 * the library's directory, the clock.
 */
#ifndef ACCEL_HOST_OS_H
#define ACCEL_HOST_OS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The process's real and effective ids. They decide whether the process runs
 * with elevated privileges, and which owners a plugin file may have. Passed
 * as a value, so that tests can present a privileged process's ids.
 */
struct accel__ids {
    uid_t ruid, euid;
    gid_t rgid, egid;
};

void accel__ids_current(struct accel__ids *out_ids);
/* Real and effective user or group ids differ (setuid, setgid, seteuid). */
bool accel__ids_elevated(const struct accel__ids *ids);
/*
 * The environment as a process with `ids` may read it: NULL when the ids are
 * elevated, else secure_getenv (NULL in a setuid, setgid or file-capability
 * program). Every variable libaccel and its plugins read goes through here.
 */
const char *accel__getenv_as(const struct accel__ids *ids, const char *name);
/* accel__getenv_as with the process's current ids. */
const char *accel__getenv(const char *name);
/* The directory holding libaccel itself, malloc'd; NULL if unknown. */
char *accel__library_dir(void);
/* The monotonic clock, in nanoseconds. */
uint64_t accel__now_ns(void);
/* malloc'd printf. NULL when out of memory. */
char *accel__strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#endif /* ACCEL_HOST_OS_H */
