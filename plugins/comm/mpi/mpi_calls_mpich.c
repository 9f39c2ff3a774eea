/* The thunks of MPICH's ABI (Intel MPI, MVAPICH, Cray MPICH share it): every
 * handle is an int. */
#include "mpi_lib.h"

#define MPI_CALLS_H int
#define MPI_CALLS_TO(x) ((int)(x))
#define MPI_CALLS_NAME mpi__calls_mpich
#include "mpi_calls.inc"
