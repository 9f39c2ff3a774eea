/*
 * The few operating-system calls libaccel makes outside the loader's
 * dlopen: the process's ids and the environment they allow, where libaccel
 * lives, the monotonic clock, formatted strings.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accel/accel.h"
#include "os.h"

void accel__ids_current(struct accel__ids *out_ids)
{
    out_ids->ruid = getuid();
    out_ids->euid = geteuid();
    out_ids->rgid = getgid();
    out_ids->egid = getegid();
}

bool accel__ids_elevated(const struct accel__ids *ids)
{
    return ids->ruid != ids->euid || ids->rgid != ids->egid;
}

const char *accel__getenv_as(const struct accel__ids *ids, const char *name)
{
    /* secure_getenv returns NULL when the kernel started the program in
     * secure mode (setuid, setgid, file capabilities), so that a caller's
     * environment cannot point a privileged program at its own plugins. A
     * process that changed its ids after it started (a root daemon that took
     * another effective user with seteuid) is not in secure mode: the ids
     * tell that case. */
    if (accel__ids_elevated(ids))
        return NULL;
    return secure_getenv(name);
}

const char *accel__getenv(const char *name)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    return accel__getenv_as(&ids, name);
}

char *accel__library_dir(void)
{
    Dl_info info;
    if (dladdr((void *)accel_host_create, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    /* The loader may report the path through an rpath such as
     * $ORIGIN/../host; the canonical form is what a person expects to see. */
    char *copy = realpath(info.dli_fname, NULL);
    if (copy == NULL)
        copy = strdup(info.dli_fname);
    if (copy == NULL)
        return NULL;
    char *dir = strdup(dirname(copy));
    free(copy);
    return dir;
}

uint64_t accel__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *accel__strdup_printf(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, args);
    va_end(args);
    return n < 0 ? NULL : text;
}
