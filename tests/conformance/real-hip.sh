#!/bin/sh
# The HIP plugin over the real runtime, through accel-conformance: without
# an AMD GPU, the plugin tests (opened, no device with the runtime's
# reason). Skipped (77) where libamdhip64 is not installed.
#
# usage: real-hip.sh TOOL HIP_PLUGIN
set -u
unset ACCEL_HIP_LIBRARY ACCEL_BACKEND ACCEL_PLUGIN_PATH
if ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libamdhip64\.so'; then
    echo "SKIP: libamdhip64 (the HIP runtime) is not installed"
    exit 77
fi
exec "$1" "$2"
