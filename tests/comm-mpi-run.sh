#!/bin/sh
# Run a program under `mpirun --oversubscribe -np NP`, as CI runs it: as
# root in a container. Skips (77) where there is no mpirun.
#   comm-mpi-run.sh NP PROGRAM [ARGS...]
np=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no mpirun (Debian: openmpi-bin libopenmpi-dev)"
    exit 77
fi
# Open MPI refuses root without these; in a container its shared-memory
# transport cannot use cross-memory attach (CMA).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Open MPI keeps some memory to the end by design: only accel's leaks count
# (ASan builds; harmless otherwise).
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan-mpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
exec mpirun --oversubscribe --bind-to none -np "$np" "$@"
