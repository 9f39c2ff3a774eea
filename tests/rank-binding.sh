#!/bin/sh
# Each rank's device under a real launcher: `mpirun -np 2 accel-info
# --rank-binding` with ACCEL_BACKEND=null:%local and two null devices must
# print "rank 0: null:0 ..." and "rank 1: null:1 ...", one line per rank.
# Skips (77) without mpirun. Usage: rank-binding.sh ACCEL_INFO NULL_PLUGIN
set -u
info=$1
plugin=$2
mpirun=$(command -v mpirun) || { echo "SKIP: no mpirun on PATH (openmpi-bin)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rank-binding.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*"
    cat "$work/out"
    exit 1
}

# As root in CI, and in containers without cross-memory attach.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# A developer's own overrides must not steer the ranks.
unset ACCEL_RANK ACCEL_SIZE ACCEL_LOCAL_RANK ACCEL_LOCAL_SIZE ACCEL_LOG

run() { # backend
    ACCEL_PLUGIN_PATH=$plugin ACCEL_NULL_DEVICES=2 ACCEL_BACKEND=$1 \
        "$mpirun" --oversubscribe -np 2 "$info" --rank-binding > "$work/out" 2>&1
}

run 'null:%local' || fail "mpirun exited $?"
for r in 0 1; do
    grep -q "^rank $r: null:$r (rank $r of 2, local rank $r of 2, from OMPI_COMM_WORLD_LOCAL_RANK)\$" \
        "$work/out" || fail "no binding line for rank $r"
done
[ "$(grep -c '^rank ' "$work/out")" -eq 2 ] || fail "expected exactly two lines"

# One device for two local ranks: %local is an error in rank 1, %local% shares.
ACCEL_PLUGIN_PATH=$plugin ACCEL_NULL_DEVICES=1 ACCEL_BACKEND='null:%local' \
    "$mpirun" --oversubscribe -np 2 "$info" --rank-binding > "$work/out" 2>&1 &&
    fail "one device for two ranks should fail under null:%local"
grep -q '^rank 1: none: ACCEL_ERR_NOT_FOUND: .*more ranks than devices' "$work/out" ||
    fail "rank 1 should say there are more ranks than devices"
ACCEL_PLUGIN_PATH=$plugin ACCEL_NULL_DEVICES=1 ACCEL_BACKEND='null:%local%' \
    "$mpirun" --oversubscribe -np 2 "$info" --rank-binding > "$work/out" 2>&1 ||
    fail "null:%local% should bind both ranks to the one device"
grep -q '^rank 1: null:0 ' "$work/out" || fail "rank 1 should share null:0"
echo "ok: each rank printed its binding"
