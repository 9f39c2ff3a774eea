/*
 * This process's rank for accel_comm_create, from the launcher's
 * variables. The `rank` branch's accel_rank_info_get reads the full set
 * (host/rank.c); this is the one place that will call it instead.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "os.h"
#include "status.h"

/* The first of `names` that is set, as an int; -1 when none is. */
static accel_status int_from(const char *const *names, int *out_value,
                             const char **out_name)
{
    *out_value = -1;
    *out_name = NULL;
    for (const char *const *name = names; *name != NULL; name++) {
        const char *text = accel__getenv(*name);
        if (text == NULL || *text == '\0')
            continue;
        char *end = NULL;
        long value = strtol(text, &end, 10);
        if (*end != '\0' || value < 0 || value > 1 << 24)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "%s='%s' is not a rank or a size", *name, text);
        *out_value = (int)value;
        *out_name = *name;
        return ACCEL_OK;
    }
    return ACCEL_OK;
}

accel_status accel__rank_current(struct accel__rank *out_rank)
{
    static const char *const rank_vars[] = {
        "ACCEL_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
        "SLURM_PROCID", NULL};
    static const char *const size_vars[] = {
        "ACCEL_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
    static const char *const local_rank_vars[] = {
        "ACCEL_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
        "SLURM_LOCALID", NULL};
    static const char *const local_size_vars[] = {
        "ACCEL_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
        NULL};
    int values[4];
    const char *names[4];
    const char *const *lists[4] = {rank_vars, size_vars, local_rank_vars,
                                   local_size_vars};
    for (int i = 0; i < 4; i++) {
        accel_status status = int_from(lists[i], &values[i], &names[i]);
        if (status != ACCEL_OK)
            return status;
    }
    struct accel__rank rank = {
        .rank = values[0] < 0 ? 0 : values[0],
        .size = values[1] < 0 ? 1 : values[1],
    };
    rank.local_rank = values[2] < 0 ? rank.rank : values[2];
    rank.local_size = values[3] < 0 ? rank.size : values[3];
    if (rank.size < 1 || rank.rank >= rank.size ||
        rank.local_rank >= rank.local_size || rank.local_size > rank.size)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "rank %d of %d (local %d of %d) is inconsistent "
                            "(from %s, %s, %s, %s)",
                            rank.rank, rank.size, rank.local_rank,
                            rank.local_size, names[0] ? names[0] : "default",
                            names[1] ? names[1] : "default",
                            names[2] ? names[2] : "default",
                            names[3] ? names[3] : "default");
    *out_rank = rank;
    return ACCEL_OK;
}
