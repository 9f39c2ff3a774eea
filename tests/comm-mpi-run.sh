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
# Open MPI's components stay mapped at MPI_Finalize, so that what they
# keep is named by library (lsan-mpi.supp), not "unknown module".
export OMPI_MCA_mca_base_component_disable_dlclose=1
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$(dirname "$0")/tsan-mpi.supp"
# One machine: shared memory and self only (no TCP transport threads).
export OMPI_MCA_btl=self,vader
# Full unwinding, so that a leak's stack reaches those libraries' frames
# (the fast unwinder stops in them, built without frame pointers).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan-mpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
exec mpirun --oversubscribe --bind-to none -np "$np" "$@"
