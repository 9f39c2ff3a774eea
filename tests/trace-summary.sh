#!/bin/sh
# accel-info --trace-summary: totals from accel-demo's trace name its
# kernel and its copies; a file that is no trace is refused with exit 1.
# Usage: trace-summary.sh ACCEL_INFO ACCEL_DEMO
set -eu
info=$1
demo=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ACCEL_TRACE="$dir/trace.json" "$demo" >/dev/null
"$info" --trace-summary "$dir/trace.json" >"$dir/summary.txt"
for want in saxpy 'copy h2d' 'copy d2h' 'copy d2d'; do
    if ! grep -q "^$want " "$dir/summary.txt"; then
        echo "trace-summary: no '$want' row:" >&2
        cat "$dir/summary.txt" >&2
        exit 1
    fi
done
echo 'not a trace' >"$dir/other.txt"
if "$info" --trace-summary "$dir/other.txt" 2>"$dir/err.txt"; then
    echo "trace-summary: a file that is no trace was accepted" >&2
    exit 1
fi
grep -q 'no trace events' "$dir/err.txt"
if "$info" --trace-summary "$dir/missing.json" 2>/dev/null; then
    echo "trace-summary: a missing file was accepted" >&2
    exit 1
fi
echo "trace-summary: ok"
