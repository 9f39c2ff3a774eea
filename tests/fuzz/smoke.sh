#!/bin/sh
# A short libFuzzer run of one target from its committed corpus, for CI.
#
#   smoke.sh FUZZER SEEDS SCRATCH SECONDS MAX_LEN
#
# SEEDS is tests/fuzz/corpus/TARGET; tests/fuzz/TARGET.dict, if there is
# one, is the dictionary. New inputs go to SCRATCH/corpus and failing ones
# to SCRATCH/artifacts, never into the source tree. ACCEL_FUZZ_SECONDS
# overrides SECONDS. A crash, a leak, a timeout of one input or a failed
# check exits 1 (libFuzzer's own default, 77, would read as a skip); copy the artifact into tests/fuzz/corpus/TARGET/
# once the bug is fixed.
set -eu
fuzzer=$1
seeds=$2
scratch=$3
seconds=${ACCEL_FUZZ_SECONDS:-$4}
max_len=$5
dict="$(dirname "$(dirname "$seeds")")/$(basename "$seeds").dict"
set --
[ ! -f "$dict" ] || set -- -dict="$dict"
rm -rf "$scratch"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
exec "$fuzzer" "$@" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -error_exitcode=1 -timeout_exitcode=1 \
    -artifact_prefix="$scratch/artifacts/" "$scratch/corpus" "$seeds"
