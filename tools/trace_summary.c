/*
 * accel-info --trace-summary FILE: per-kernel and per-copy totals from an
 * ACCEL_TRACE file. It reads the file as libaccel writes it (one event per
 * line) rather than as any JSON: a line it does not recognise is skipped,
 * and a file with no events at all is an error.
 */
#include "trace_summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_MAX 256
#define SUMMARY_NAME 64

struct total {
    char name[SUMMARY_NAME];
    bool kernel;
    uint64_t count;
    double us;
    uint64_t bytes;
};

/* The JSON string value after `key` in `line`, unescaped simply (a
 * backslash keeps the next byte); false when absent. */
static bool field_string(const char *line, const char *key, char *out, size_t size)
{
    const char *at = strstr(line, key);
    size_t n = 0;

    if (at == NULL)
        return false;
    at += strlen(key);
    while (*at != '\0' && *at != '"' && n + 1 < size) {
        if (*at == '\\' && at[1] != '\0')
            at++;
        out[n++] = *at++;
    }
    out[n] = '\0';
    return true;
}

static double field_number(const char *line, const char *key)
{
    const char *at = strstr(line, key);

    return at != NULL ? strtod(at + strlen(key), NULL) : 0.0;
}

static struct total *total_for(struct total *totals, size_t *count,
                               const char *name, bool kernel)
{
    for (size_t i = 0; i < *count; i++) {
        if (totals[i].kernel == kernel && strcmp(totals[i].name, name) == 0)
            return &totals[i];
    }
    if (*count == SUMMARY_MAX)
        return NULL;
    struct total *t = &totals[(*count)++];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->kernel = kernel;
    return t;
}

static void print_totals(const struct total *totals, size_t count, bool kernels)
{
    printf("%-32s %10s %14s %12s%s\n", kernels ? "kernel" : "copy / fill",
           "count", "total us", "mean us",
           kernels ? "" : "        bytes      GB/s");
    for (size_t i = 0; i < count; i++) {
        const struct total *t = &totals[i];
        if (t->kernel != kernels)
            continue;
        printf("%-32s %10llu %14.3f %12.3f", t->name,
               (unsigned long long)t->count, t->us, t->us / (double)t->count);
        if (!kernels)
            printf(" %12llu %9.3f", (unsigned long long)t->bytes,
                   t->us > 0 ? (double)t->bytes / (t->us * 1000.0) : 0.0);
        printf("\n");
    }
}

int accel_info_trace_summary(const char *path)
{
    static struct total totals[SUMMARY_MAX];
    size_t count = 0, events = 0, capacity = 0;
    char *line = NULL, name[SUMMARY_NAME];
    FILE *file = fopen(path, "r");

    if (file == NULL) {
        fprintf(stderr, "accel-info: %s: %s\n", path, strerror(errno));
        return 1;
    }
    while (getline(&line, &capacity, file) != -1) {
        if (strstr(line, "\"ph\":") == NULL)
            continue;
        events++;
        if (strstr(line, "\"cat\":\"command\"") == NULL ||
            !field_string(line, "{\"name\":\"", name, sizeof(name)))
            continue;
        struct total *t = total_for(totals, &count, name,
                                    strstr(line, "\"kernel\":") != NULL);
        if (t == NULL)
            continue;
        t->count++;
        t->us += field_number(line, "\"dur\":");
        t->bytes += (uint64_t)field_number(line, "\"bytes\":");
    }
    free(line);
    fclose(file);
    if (events == 0) {
        fprintf(stderr,
                "accel-info: %s: no trace events (not an ACCEL_TRACE file?)\n",
                path);
        return 1;
    }
    printf("%s: %zu events\n\n", path, events);
    print_totals(totals, count, true);
    printf("\n");
    print_totals(totals, count, false);
    return 0;
}
