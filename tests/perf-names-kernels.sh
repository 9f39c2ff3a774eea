#!/bin/sh
# perf names CPU kernels (README, "Profiling"): accel-bench's vadd on the
# null plugin under `perf record` with ACCEL_PERF_MAP=1, then `perf
# report`, must attribute samples to accel__run_vadd in the module's named
# file, not to an unnamed memfd. Skips (77) where perf is not installed or
# may not sample here (perf_event_paranoid, a container).
# Usage: perf-names-kernels.sh ACCEL_BENCH BUNDLE
set -eu
bench=$1 bundle=$2
perf=$(command -v perf) || { echo "skipped: perf is not installed (linux-perf)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/perf-kernels.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$perf" record -N -q -e cpu-clock -o "$work/probe.data" -- true >/dev/null 2>&1; then
    echo "skipped: perf may not sample here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
    exit 77
fi
ACCEL_PERF_MAP=1 ACCEL_BACKEND=null "$perf" record -N -q -e cpu-clock -o "$work/perf.data" -- \
    "$bench" --quick --case vadd --impl accel --bundle "$bundle" > "$work/bench.txt" 2>&1 ||
    { cat "$work/bench.txt"; echo "accel-bench failed under perf" >&2; exit 1; }
"$perf" report -i "$work/perf.data" --stdio --sort dso,sym > "$work/report.txt" 2>/dev/null
if ! grep -E "module-[0-9a-f]+-[0-9]+\.so +\[\.\] accel__run_vadd" "$work/report.txt" >/dev/null; then
    grep -v '^#' "$work/report.txt" | head -20
    echo "perf report does not name accel__run_vadd in the module's file" >&2
    exit 1
fi
echo ok
