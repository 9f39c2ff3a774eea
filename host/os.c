/*
 * The few operating-system calls libaccel makes outside the loader's
 * dlopen: environment, where libaccel lives, formatted strings.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *accel__getenv(const char *name)
{
    /* secure_getenv returns NULL in setuid and setgid processes, so that a
     * caller's environment cannot point a privileged program at its own
     * plugins. */
    return secure_getenv(name);
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

char *accel__strdup_printf(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, args);
    va_end(args);
    return n < 0 ? NULL : text;
}
