/*
 * accel-info --comm: which communication provider a communicator would
 * get, and why each other one would not.
 */
#include <stdio.h>
#include <stdlib.h>

#include <accel/comm.h>

#include "escape.h"
#include "info_comm.h"
#include "json.h"

#define EXIT_NONE_OPEN 2

static const struct {
    uint32_t bit;
    const char *name;
} comm_caps[] = {
    {ACCEL_COMM_CAP_STREAM, "stream"},
    {ACCEL_COMM_CAP_LOOPBACK, "loopback"},
    {ACCEL_COMM_CAP_BOOTSTRAP, "bootstrap"},
};

#define COMM_CAP_COUNT (sizeof comm_caps / sizeof comm_caps[0])

/* A provider's words may hold control bytes: escaped before printing. */
static void print_escaped(const char *text)
{
    size_t length = accel__escape(NULL, 0, text);
    char *escaped = malloc(length + 1);
    if (escaped == NULL)
        return;
    accel__escape(escaped, length + 1, text);
    fputs(escaped, stdout);
    free(escaped);
}

static void print_text(const accel_comm_provider_info *list, size_t count)
{
    const char *order = secure_getenv("ACCEL_COMM");
    printf("Communication providers, in order (ACCEL_COMM=%s):\n",
           order && *order ? order : "nccl,rccl,mpi,host (default)");
    for (size_t i = 0; i < count; i++) {
        printf("  %-8s %s", list[i].name, list[i].open ? "open" : "not usable");
        if (list[i].path != NULL) {
            fputs("  ", stdout);
            print_escaped(list[i].path);
        }
        if (list[i].open) {
            fputs("  caps:", stdout);
            for (size_t c = 0; c < COMM_CAP_COUNT; c++) {
                if (list[i].caps & comm_caps[c].bit)
                    printf(" %s", comm_caps[c].name);
            }
        }
        if (list[i].reason != NULL) {
            fputs("\n           ", stdout);
            print_escaped(list[i].reason);
        }
        putchar('\n');
    }
}

static void print_json(const accel_comm_provider_info *list, size_t count)
{
    struct json_writer w;
    json_writer_init(&w, stdout);
    json_begin_object(&w, NULL);
    json_begin_array(&w, "comm_providers");
    for (size_t i = 0; i < count; i++) {
        json_begin_object(&w, NULL);
        json_string(&w, "name", list[i].name);
        if (list[i].path != NULL)
            json_string(&w, "path", list[i].path);
        else
            json_null(&w, "path");
        json_bool(&w, "open", list[i].open != 0);
        json_begin_array(&w, "caps");
        for (size_t c = 0; c < COMM_CAP_COUNT; c++) {
            if (list[i].caps & comm_caps[c].bit)
                json_string(&w, NULL, comm_caps[c].name);
        }
        json_end_array(&w);
        if (list[i].reason != NULL)
            json_string(&w, "reason", list[i].reason);
        else
            json_null(&w, "reason");
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_writer_finish(&w);
}

int accel_info_comm(accel_host *host, bool json)
{
    const accel_comm_provider_info *list = NULL;
    size_t count = 0;
    accel_status status = accel_host_comm_providers(host, &list, &count);
    if (status != ACCEL_OK) {
        fprintf(stderr, "accel-info: accel_host_comm_providers: %s: %s\n",
                accel_status_name(status), accel_last_error());
        return EXIT_FAILURE;
    }
    if (json)
        print_json(list, count);
    else
        print_text(list, count);
    for (size_t i = 0; i < count; i++) {
        if (list[i].open)
            return EXIT_SUCCESS;
    }
    return EXIT_NONE_OPEN;
}
