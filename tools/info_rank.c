/*
 * accel-info's rank section: what accel_rank_info_get reads, where each
 * value came from, and the device the selection binds.
 */
#include "info_rank.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

enum { EXIT_NO_BINDING = 2 };

void info_rank_gather(struct info_rank *rank)
{
    memset(rank, 0, sizeof(*rank));
    rank->status = accel_rank_info_get(&rank->info);
    if (rank->status != ACCEL_OK)
        rank->detail = strdup(accel_last_error());
}

void info_rank_release(struct info_rank *rank)
{
    free(rank->detail);
    rank->detail = NULL;
}

/* "1 of 2" or "unknown": a local value no variable gave is -1. */
static void format_of(char *buf, size_t size, int32_t value, int32_t count)
{
    if (value < 0)
        snprintf(buf, size, "unknown");
    else if (count < 0)
        snprintf(buf, size, "%" PRId32 " of unknown", value);
    else
        snprintf(buf, size, "%" PRId32 " of %" PRId32, value, count);
}

/* Error details come from the environment: escaped, as accel-info prints all. */
static void format_clean(char *buf, size_t size, const char *text)
{
    accel__escape(buf, size, text != NULL ? text : "");
}

static void format_binding(char *buf, size_t size,
                           const struct info_binding *binding)
{
    char detail[1024];

    if (binding->status == ACCEL_OK) {
        snprintf(buf, size, "%s:%" PRIu32, binding->plugin, binding->index);
        return;
    }
    format_clean(detail, sizeof(detail), binding->detail);
    snprintf(buf, size, "none: %s: %s", accel_status_name(binding->status),
             detail);
}

void info_rank_print_text(const struct info_rank *rank,
                          const struct info_binding *binding)
{
    const accel_rank_info *info = &rank->info;
    char of[64], line[1200];

    printf("\nRank (from the launcher's environment):\n");
    if (rank->status != ACCEL_OK) {
        format_clean(line, sizeof(line), rank->detail);
        printf("  %s: %s\n", accel_status_name(rank->status), line);
    } else {
        format_of(of, sizeof(of), info->rank, info->size);
        printf("  rank        %-16s %s, %s\n", of, info->rank_source,
               info->size_source);
        format_of(of, sizeof(of), info->local_rank, info->local_size);
        printf("  local rank  %-16s %s, %s\n", of, info->local_rank_source,
               info->local_size_source);
    }
    format_binding(line, sizeof(line), binding);
    printf("  binds       %s\n", line);
}

void info_rank_json(struct json_writer *w, const struct info_rank *rank,
                    const struct info_binding *binding)
{
    const accel_rank_info *info = &rank->info;

    json_begin_object(w, "rank");
    json_bool(w, "ok", rank->status == ACCEL_OK);
    if (rank->status == ACCEL_OK) {
        json_int(w, "rank", info->rank);
        json_int(w, "size", info->size);
        json_int(w, "local_rank", info->local_rank);
        json_int(w, "local_size", info->local_size);
        json_string(w, "rank_source", info->rank_source);
        json_string(w, "size_source", info->size_source);
        json_string(w, "local_rank_source", info->local_rank_source);
        json_string(w, "local_size_source", info->local_size_source);
    } else {
        json_string(w, "error", accel_status_name(rank->status));
        json_string(w, "detail", rank->detail != NULL ? rank->detail : "");
    }
    json_begin_object(w, "binds");
    json_bool(w, "ok", binding->status == ACCEL_OK);
    if (binding->status == ACCEL_OK) {
        json_string(w, "plugin", binding->plugin);
        json_uint(w, "index", binding->index);
    } else {
        json_string(w, "error", accel_status_name(binding->status));
        json_string(w, "detail", binding->detail != NULL ? binding->detail : "");
    }
    json_end_object(w);
    json_end_object(w);
}

int info_rank_binding_line(const struct info_rank *rank,
                           const struct info_binding *binding)
{
    const accel_rank_info *info = &rank->info;
    char bound[1200], of[64], line[1400];

    if (rank->status != ACCEL_OK) {
        format_clean(bound, sizeof(bound), rank->detail);
        snprintf(line, sizeof(line), "rank ?: none: %s: %s\n",
                 accel_status_name(rank->status), bound);
    } else {
        format_binding(bound, sizeof(bound), binding);
        format_of(of, sizeof(of), info->local_rank, info->local_size);
        snprintf(line, sizeof(line),
                 "rank %" PRId32 ": %s (rank %" PRId32 " of %" PRId32
                 ", local rank %s, from %s)\n",
                 info->rank, bound, info->rank, info->size, of,
                 info->local_rank_source);
    }
    /* One write per rank: the ranks' lines share one terminal or pipe. */
    fputs(line, stdout);
    fflush(stdout);
    return rank->status == ACCEL_OK && binding->status == ACCEL_OK
               ? 0
               : EXIT_NO_BINDING;
}
