/* The thunks of Open MPI's ABI: every handle is a pointer. */
#include "mpi_lib.h"

#define MPI_CALLS_H void *
#define MPI_CALLS_TO(x) ((void *)(x))
#define MPI_CALLS_NAME mpi__calls_open_mpi
#include "mpi_calls.inc"
