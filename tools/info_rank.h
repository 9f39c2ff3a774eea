/*
 * accel-info's rank section (info_rank.c): this process's rank, size,
 * local rank and local size as libaccel reads them from the launcher's
 * environment, the variable each came from, and the device the selection
 * binds; and --rank-binding, one line per rank for `mpirun accel-info`.
 */
#ifndef ACCEL_TOOLS_INFO_RANK_H
#define ACCEL_TOOLS_INFO_RANK_H

#include <accel/accel.h>

#include "json.h"

/* The rank as read, or why it could not be. */
struct info_rank {
    accel_status status;
    accel_rank_info info;
    char *detail; /* accel_last_error() when status is an error; malloc'd */
};

/* The device a selection binds: its status, and plugin:index when OK. */
struct info_binding {
    accel_status status;
    const char *plugin;
    uint32_t index;
    const char *detail; /* when status is an error; may be NULL */
};

void info_rank_gather(struct info_rank *rank);
void info_rank_release(struct info_rank *rank);
void info_rank_print_text(const struct info_rank *rank,
                          const struct info_binding *binding);
/* The "rank" member of the JSON document. */
void info_rank_json(struct json_writer *w, const struct info_rank *rank,
                    const struct info_binding *binding);
/*
 * --rank-binding: one line, "rank R: PLUGIN:INDEX (local rank L of N,
 * from VARIABLE)", or "rank R: none: STATUS: detail". Written whole with
 * one write, so that the lines of ranks sharing a terminal do not mix.
 * Returns the exit code: 0 bound, 2 not.
 */
int info_rank_binding_line(const struct info_rank *rank,
                           const struct info_binding *binding);

#endif /* ACCEL_TOOLS_INFO_RANK_H */
