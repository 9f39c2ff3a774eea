#!/bin/sh
# accel-info with the HIP plugin and no AMD GPU: without /dev/kfd (the
# runtime is not loaded: "no device node"), with the real HIP runtime,
# found by the plugin's default search (Debian's libamdhip64, which answers
# hipInit with hipErrorInvalidDevice without a GPU), or with no runtime at
# all (ACCEL_HIP_LIBRARY naming a file that is not there). The plugin is listed as having
# no device, with its reason; the other plugins beside it still work (the
# null plugin's device is selected); accel-info takes well under a second;
# and nothing at all is written to stderr.
#
# usage: accel-info-without-gpu.sh ACCEL_INFO LIBRARY PLUGIN_PATH
#   LIBRARY is no-node for the default run without /dev/kfd,
#   /nonexistent/... for the no-runtime run, else the installed
#   runtime's path (only checked for: the plugin searches by itself), or
#   empty when none is installed, which skips.
set -eu

accel_info=$1 library=$2 plugin_path=$3

if [ ! -x "$accel_info" ]; then
    echo "SKIP: $accel_info was not built (tools disabled?)"
    exit 77
fi
case $library in
no-node)
    # The default: no /dev/kfd, so the runtime is never loaded.
    if [ -e /dev/kfd ]; then
        echo "SKIP: /dev/kfd is here: this machine may have an AMD GPU"
        exit 77
    fi
    expected="no device node (/dev/kfd: none exists); the HIP runtime was not loaded"
    set -- -u ACCEL_HIP_LIBRARY -u ACCEL_HIP_DEVICE_NODES
    ;;
/nonexistent/*)
    expected="ACCEL_HIP_LIBRARY=$library: cannot open shared object file"
    set -- ACCEL_HIP_LIBRARY="$library"
    ;;
*)
    if [ -z "$library" ] || [ ! -r "$library" ]; then
        echo "SKIP: the HIP runtime (libamdhip64.so.5 or .6) is not installed"
        exit 77
    fi
    if [ -e /dev/kfd ]; then
        echo "SKIP: /dev/kfd is here: this machine may have an AMD GPU"
        exit 77
    fi
    expected="libamdhip64.so.* hipInit failed: hipError"
    # A node in place (/dev/null stands for /dev/kfd): the runtime is loaded.
    set -- -u ACCEL_HIP_LIBRARY ACCEL_HIP_DEVICE_NODES=/dev/null
    ;;
esac

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
started=$(date +%s%N)
output=$(env -u ACCEL_BACKEND -u ACCEL_LOG -u AMD_LOG_LEVEL "$@" \
    ACCEL_PLUGIN_PATH="$plugin_path" "$accel_info" 2>"$errors")
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
printf '%s\n' "$output"
echo "accel-info took $elapsed_ms ms"

fail=0
case $output in
*"hip        no device"*) ;;
*) echo "FAIL: the hip plugin is not listed as having no device"; fail=1 ;;
esac
case $output in
*$expected*) ;;
*) echo "FAIL: the reason does not say: $expected"; fail=1 ;;
esac
case $output in
*"Selection (automatic: ACCEL_BACKEND is unset): null:0"*) ;;
*) echo "FAIL: the null device was not selected"; fail=1 ;;
esac
if [ "$elapsed_ms" -ge 1000 ]; then
    echo "FAIL: accel-info took $elapsed_ms ms, not well under a second"
    fail=1
fi
if [ -s "$errors" ]; then
    echo "FAIL: something was written to stderr:"
    cat "$errors"
    fail=1
fi
exit $fail
