/*
 * This process's rank for accel_comm_create: what accel_rank_info_get
 * reads from the launcher's variables (rank.c), in the form the
 * communicators use. A local value no variable supplies (-1, "unknown")
 * stays -1: providers read only rank and size to build a communicator.
 */
#include "comm.h"
#include "os.h"
#include "rank.h"

accel_status accel__rank_current(struct accel__rank *out_rank)
{
    struct accel__ids ids;
    accel_rank_info info;

    accel__ids_current(&ids);
    accel_status status = accel__rank_info_as(&ids, &info);
    if (status != ACCEL_OK)
        return status;
    *out_rank = (struct accel__rank){
        .rank = info.rank,
        .size = info.size,
        .local_rank = info.local_rank,
        .local_size = info.local_size,
    };
    return ACCEL_OK;
}
