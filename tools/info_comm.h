/*
 * accel-info --comm: the communication providers of ACCEL_COMM, each with
 * its state, file, capabilities and reason (info_comm.c).
 */
#ifndef ACCEL_TOOLS_INFO_COMM_H
#define ACCEL_TOOLS_INFO_COMM_H

#include <stdbool.h>

#include <accel/accel.h>

/* Print them (text, or JSON with `json`); the exit status: 0 when one is
 * open, 2 when none is, 1 on an error. */
int accel_info_comm(accel_host *host, bool json);

#endif /* ACCEL_TOOLS_INFO_COMM_H */
