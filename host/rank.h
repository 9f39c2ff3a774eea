/*
 * This process's place in a job (rank.c), read from the launcher's
 * environment at each call: tests and programs may set the variables
 * in-process, and reading a handful of them costs nothing next to what a
 * rank does with the answer.
 */
#ifndef ACCEL_HOST_RANK_H
#define ACCEL_HOST_RANK_H

#include "accel/accel.h"
#include "os.h"

/* The source of a value no variable supplies and that cannot be defaulted. */
#define ACCEL__RANK_UNKNOWN "unknown"

/*
 * accel_rank_info_get as a process with `ids` reads it: elevated ids read
 * no variable at all, so that the answer is rank 0 of 1. Fills the whole
 * library-side struct (struct_size set to its sizeof).
 */
accel_status accel__rank_info_as(const struct accel__ids *ids,
                                 accel_rank_info *out_info);

#endif /* ACCEL_HOST_RANK_H */
