/*
 * Logging to stderr, off unless ACCEL_LOG asks for it. The level is the one
 * piece of process-wide state libaccel keeps: read once, on first use.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "os.h"
#include "status.h"

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static accel_log_level level = ACCEL_LOG_NONE;

static const char *const level_names[] = {
    [ACCEL_LOG_NONE] = "none",   [ACCEL_LOG_ERROR] = "error",
    [ACCEL_LOG_WARN] = "warn",   [ACCEL_LOG_INFO] = "info",
    [ACCEL_LOG_DEBUG] = "debug",
};

static void read_level(void)
{
    const char *text = accel__getenv("ACCEL_LOG");
    if (text == NULL || text[0] == '\0')
        return;
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcmp(text, level_names[i]) == 0) {
            level = (accel_log_level)i;
            return;
        }
    }
    /* A misspelt level is worth one line: the user asked for output. */
    fprintf(stderr,
            "accel: ACCEL_LOG='%s' is not one of none, error, warn, info, "
            "debug; logging stays off\n",
            text);
}

bool accel__log_enabled(accel_log_level wanted)
{
    pthread_once(&level_once, read_level);
    return wanted != ACCEL_LOG_NONE && wanted <= level;
}

void accel__log(accel_log_level wanted, const char *fmt, ...)
{
    if (!accel__log_enabled(wanted))
        return;
    char message[2048], escaped[4 * sizeof message];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    /* A line quotes file names and plugins' words: none of their bytes may
     * drive the terminal, or forge a line of its own. */
    accel__escape(escaped, sizeof escaped, message);
    fprintf(stderr, "accel: %s: %s\n", level_names[wanted], escaped);
}
