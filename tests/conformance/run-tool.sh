#!/bin/sh
# accel-conformance's own behaviour: its reports (human, TAP 13, JUnit),
# its exit status, capability and optional-entry skips with their reasons,
# a plugin it must fail, and command lines it must refuse.
#
# usage: run-tool.sh TOOL NULL_PLUGIN NOKERNELS_PLUGIN IGNORESPITCH_FIXTURE NOHOSTFUNC_FIXTURE
set -u
tool=$1 null=$2 nokernels=$3 ignorespitch=$4 nohostfunc=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-conformance-tool.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
# The out-of-memory tests ask for more than there is: under ASan too, an
# error back, not an abort.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
export ASAN_OPTIONS

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run NAME EXPECTED_STATUS ARGS...: the tool's output in $work/NAME.out.
run() {
    name=$1 expected=$2
    shift 2
    "$tool" "$@" >"$work/$name.out" 2>"$work/$name.err"
    status=$?
    [ "$status" = "$expected" ] ||
        fail "$name: exit $status, expected $expected ($(tail -n 3 "$work/$name.err" "$work/$name.out"))"
}

has() { grep -q -- "$2" "$work/$1" || fail "$1 lacks \"$2\""; }
lacks() { ! grep -q -- "$2" "$work/$1" || fail "$1 has \"$2\""; }

# A conforming plugin: TAP 13 with a plan that matches the lines, no failure;
# JUnit with every test case.
unset ACCEL_BACKEND ACCEL_PLUGIN_PATH ACCEL_CONFORMANCE_MODULE
run tap 0 --tap --junit "$work/null.xml" "$null"
[ "$(head -n 1 "$work/tap.out")" = "TAP version 13" ] || fail "tap: no 'TAP version 13' first"
plan=$(sed -n '2s/^1\.\.\([0-9][0-9]*\)$/\1/p' "$work/tap.out")
lines=$(grep -c '^ok [0-9]' "$work/tap.out")
{ [ -n "$plan" ] && [ "$plan" = "$lines" ]; } || fail "tap: plan '$plan', $lines ok lines"
lacks tap.out '^not ok'
has tap.out '# SKIP no module image'
has null.xml '<testsuites name="accel-conformance">'
has null.xml '<testsuite name="accel-conformance null:0"'
cases=$(grep -c '<testcase ' "$work/null.xml")
[ "$cases" = "$plan" ] || fail "junit: $cases test cases, plan $plan"
lacks null.xml '<failure'

# The human summary, by selection, device 0 of two.
ACCEL_PLUGIN_PATH=$null ACCEL_BACKEND=null ACCEL_NULL_DEVICES=2 run human 0 --device 0
has human.out 'plugin null .*2 device(s)'
has human.out '^PASS  null:0 '
lacks human.out 'null:1'
has human.out ' 0 failed'

# No kernels: the kernel tests skipped with the capability's name.
run nokernels 0 --tap "$nokernels"
has nokernels.out 'saxpy_matches_the_c_reference # SKIP the device has no ACCEL_DEVICE_CAP_KERNELS'
has nokernels.out 'device_without_kernels_refuses_modules$'

# A 1.0-sized table without host_func: the callback test skipped, saying why.
mkdir "$work/nohostfunc"
cp "$nohostfunc" "$work/nohostfunc/accel-plugin-ends_after_launch.so"
run nohostfunc 0 --tap "$work/nohostfunc/accel-plugin-ends_after_launch.so"
has nohostfunc.out "callback_runs_once_after_the_work_before_it # SKIP the plugin's table has no host_func"

# Copies that ignore pitches: the layout tests fail, and so does the run.
mkdir "$work/broken"
cp "$ignorespitch" "$work/broken/accel-plugin-ignorespitch.so"
run broken 1 --tap --junit "$work/broken.xml" "$work/broken/accel-plugin-ignorespitch.so"
has broken.out '^not ok [0-9]* - ignorespitch:0 copy_2d_in_every_direction_with_pitches'
has broken.out '^  message: ".*byte'
has broken.out '^ok [0-9]* - ignorespitch:0 copy_1d_round_trip_with_offsets'
has broken.xml '<failure message='

# What it refuses: not a plugin file name, a device it lacks, a bad index.
run notplugin 2 "$work/broken.xml"
has notplugin.err 'accel-plugin-NAME.so'
run nodevice 2 --device 5 "$null"
has nodevice.err 'has 1 device'
run badindex 2 --device x "$null"
run noplugin 2 "$work/accel-plugin-absent.so"

[ "$failures" = 0 ] || exit 1
echo "accel-conformance: every check passed"
