#!/bin/sh
# accel-info --select over the fake CUDA driver and the null plugin: the
# pick and how it was chosen, in text and JSON; the devices' uuids and bus
# ids, each plugin's ABI and optional entries in JSON; only the plugins the
# expression names are opened; an expression that matches nothing exits 2
# naming the devices there are.
#
# usage: accel-info-select.sh ACCEL_INFO FAKE_CUDA PLUGIN_PATH
set -eu

accel_info=$1 fake=$2 plugin_path=$3
fail=0

run() {
    env -u ACCEL_BACKEND -u ACCEL_LOG ACCEL_CUDA_LIBRARY="$fake" \
        ACCEL_PLUGIN_PATH="$plugin_path" "$accel_info" "$@"
}

expect() { # what, text, fragment
    case $2 in
    *"$3"*) ;;
    *) echo "FAIL: $1 does not say: $3"; fail=1 ;;
    esac
}

text=$(run --select 'cuda:pci=00000000:41:00.0')
printf '%s\n' "$text"
expect "text" "$text" "Selection (--select cuda:pci=00000000:41:00.0): cuda:0"
expect "text" "$text" "How it was chosen:"
expect "text" "$text" "picks cuda:0 'Fake CUDA Device 0' GPU-5b1c2f3a-0000-4c1e-8a6b-000000000000 pci=0000:41:00.0"
expect "text" "$text" "not opened: the backend selection does not name it"

json=$(run --json --select '!cuda')
printf '%s\n' "$json"
expect "json" "$json" '"expression": "!cuda"'
expect "json" "$json" '"uuid": "CPU-'
expect "json" "$json" '"pci_bus_id": ""'
expect "json" "$json" '"abi": "1.1"'
expect "json" "$json" '"optional_entries": ['
expect "json" "$json" '"plugin": "null"'

json=$(run --json --select 'cuda')
expect "json" "$json" '"uuid": "GPU-5b1c2f3a-0000-4c1e-8a6b-000000000000"'
expect "json" "$json" '"pci_bus_id": "0000:41:00.0"'
expect "json" "$json" '"copy_peer"'

status=0
text=$(run --select 'cuda:GPU-ffff') || status=$?
printf '%s\n' "$text"
[ "$status" -eq 2 ] || { echo "FAIL: a term matching nothing exited $status, not 2"; fail=1; }
expect "error" "$text" "backend item 'cuda:GPU-ffff' matches no device; the devices there are: cuda:0 GPU-5b1c2f3a"
exit $fail
