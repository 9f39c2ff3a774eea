#!/bin/sh
# accel-info with the CUDA plugin and no usable CUDA driver (the toolkit's
# stub library, or no library at all): the plugin is listed as having no
# device, with its reason; the null plugin's device is still selected; and
# nothing at all is written to stderr.
#
# usage: accel-info-without-driver.sh ACCEL_INFO LIBRARY PLUGIN_PATH
set -eu

accel_info=$1 library=$2 plugin_path=$3

if [ ! -x "$accel_info" ]; then
    echo "SKIP: $accel_info was not built (tools disabled?)"
    exit 77
fi
case $library in
/nonexistent/*) expected="ACCEL_CUDA_LIBRARY=$library: cannot open shared object file" ;;
*)
    if [ -z "$library" ] || [ ! -r "$library" ]; then
        echo "SKIP: no CUDA toolkit stub library (stubs/libcuda.so) is installed"
        exit 77
    fi
    expected="cuInit failed: CUDA_ERROR_STUB_LIBRARY (34): the CUDA stub library, not a driver"
    ;;
esac

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
output=$(env -u ACCEL_BACKEND -u ACCEL_LOG ACCEL_CUDA_LIBRARY="$library" \
    ACCEL_PLUGIN_PATH="$plugin_path" "$accel_info" 2>"$errors")
printf '%s\n' "$output"

fail=0
case $output in
*"cuda       no device"*) ;;
*) echo "FAIL: the cuda plugin is not listed as having no device"; fail=1 ;;
esac
case $output in
*"$expected"*) ;;
*) echo "FAIL: the reason does not say: $expected"; fail=1 ;;
esac
case $output in
*"Selection (automatic: ACCEL_BACKEND is unset): null:0"*) ;;
*) echo "FAIL: the null device was not selected"; fail=1 ;;
esac
if [ -s "$errors" ]; then
    echo "FAIL: something was written to stderr:"
    cat "$errors"
    fail=1
fi
exit $fail
