#!/bin/sh
# The README's MPI example: `mpirun -np 4 accel-demo --allreduce` with
# ACCEL_BACKEND=null:%local% over two null devices and ACCEL_COMM=mpi must
# print one verified line per rank, each with its own rank and the mpi
# provider. Skips (77) without mpirun, or where the mpi provider cannot
# open its library. Usage: demo-allreduce.sh ACCEL_DEMO
set -u
demo=$1
mpirun=$(command -v mpirun) || { echo "SKIP: no mpirun on PATH (openmpi-bin)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/demo-allreduce.XXXXXX")
trap 'rm -rf "$work"' EXIT

# As root in CI, and in containers without cross-memory attach.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
unset ACCEL_RANK ACCEL_SIZE ACCEL_LOCAL_RANK ACCEL_LOCAL_SIZE ACCEL_LOG \
    ACCEL_PLUGIN_PATH ACCEL_MPI_LIBRARY
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

status=0
ACCEL_BACKEND='null:%local%' ACCEL_NULL_DEVICES=2 ACCEL_COMM=mpi \
    "$mpirun" --oversubscribe --bind-to none -np 4 "$demo" --allreduce \
    --count 5000 > "$work/out" 2>&1 || status=$?
cat "$work/out"
if [ "$status" -ne 0 ]; then
    if grep -q "no usable MPI library" "$work/out"; then
        echo "SKIP: the mpi provider found no MPI library"
        exit 77
    fi
    echo "FAIL: mpirun exited $status"
    exit 1
fi
for rank in 0 1 2 3; do
    grep -q "^rank $rank of 4: device null:$((rank % 2)), provider mpi: .* verified" \
        "$work/out" || { echo "FAIL: no verified line for rank $rank"; exit 1; }
done
[ "$(grep -c verified "$work/out")" -eq 4 ] || { echo "FAIL: not one line per rank"; exit 1; }
echo "PASS: four ranks verified"
