#!/bin/sh
# Compile-time checks of the typed copy and value-argument macros
# (include/accel/accel.h):
#
#   run.sh SOURCE_DIR INCLUDE_DIR COMPILER [COMPILER_ARGS...]
#
# typed-pass.c must compile. typed-fail.c must compile without a case, and
# fail with each of its cases (-DCASE_name) with the macros' own error, the
# _Generic selection that matches no association, naming the case's host
# type. args-fail.c does the same for the ACCEL_ARG_<TYPE> value macros,
# each case with the extended regular expression its refusal must match.
# Every case is run and reported; the exit status is 1 when any check
# failed.
set -u

source_dir=$1
include_dir=$2
shift 2
[ $# -gt 0 ] || { echo "usage: run.sh SOURCE_DIR INCLUDE_DIR COMPILER..." >&2; exit 2; }

# Plain quotes in the compilers' messages.
LC_ALL=C
export LC_ALL
flags="-std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I$include_dir"
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
failed=0
checked=0

compiles() {
    # shellcheck disable=SC2086 # $flags is a list of words.
    "$@" $flags >"$log" 2>&1
}

for file in typed-pass.c typed-fail.c; do
    if compiles "$@" "$source_dir/$file"; then
        echo "ok   $file compiles"
    else
        echo "FAIL $file does not compile:"
        cat "$log"
        failed=1
    fi
done

# Each case: a line `#if defined(CASE_name) /* 'TYPE-ERE' */` or `#elif ...`.
cases=$(sed -n 's|^#\(el\)\{0,1\}if defined(CASE_\([A-Za-z0-9_]*\)) /\* \(.*\) \*/$|\2 \3|p' \
    "$source_dir/typed-fail.c")
# Read from a here-document, not a pipe, so that the loop's variables stay.
while read -r name type; do
    [ -n "$name" ] || continue
    checked=$((checked + 1))
    if compiles "$@" "-DCASE_$name" "$source_dir/typed-fail.c"; then
        echo "FAIL $name: compiled, but the macros must refuse it"
        failed=1
    elif ! grep -Eq "(_Generic' selector of type|controlling expression type) $type" "$log"; then
        echo "FAIL $name: refused, but not by the macros' type check on $type:"
        cat "$log"
        failed=1
    else
        echo "ok   $name: $(grep -m1 -E 'error' "$log" | sed 's/^.*error: //')"
    fi
done <<CASES
$cases
CASES

# The value macros: each case of args-fail.c must be refused with the
# message its expression names.
if compiles "$@" "$source_dir/args-fail.c"; then
    echo "ok   args-fail.c compiles"
else
    echo "FAIL args-fail.c does not compile:"
    cat "$log"
    failed=1
fi
arg_cases=$(sed -n "s|^#\(el\)\{0,1\}if defined(CASE_\([A-Za-z0-9_]*\)) /\* [\"']\(.*\)[\"'] \*/\$|\2 \3|p" \
    "$source_dir/args-fail.c")
arg_checked=0
while read -r name pattern; do
    [ -n "$name" ] || continue
    arg_checked=$((arg_checked + 1))
    if compiles "$@" "-DCASE_$name" "$source_dir/args-fail.c"; then
        echo "FAIL $name: compiled, but the value macros must refuse it"
        failed=1
    elif ! grep -Eq "$pattern" "$log"; then
        echo "FAIL $name: refused, but not with /$pattern/:"
        cat "$log"
        failed=1
    else
        echo "ok   $name: $(grep -m1 -E 'error' "$log" | sed 's/^.*error: //')"
    fi
done <<CASES
$arg_cases
CASES
if [ "$arg_checked" -lt 5 ]; then
    echo "FAIL only $arg_checked cases found in args-fail.c"
    failed=1
fi

if [ "$checked" -lt 10 ]; then
    echo "FAIL only $checked cases found in typed-fail.c"
    failed=1
fi
echo "$checked refusals checked"
exit "$failed"
