#!/bin/sh
# The public headers compile alone:
#
#   headers.sh INCLUDE_DIR CXX_OR_EMPTY COMPILER [COMPILER_ARGS...]
#
# Each of accel.h, driver.h and types.h is compiled as the only include of a
# file, as C11 with the C compiler and, when a C++ compiler is given (the
# second argument, "" for none), as C++11. accel.h must not bring in the
# plugin ABI: a file that includes it alone and names driver.h's table must
# fail. kernel.h is C11 only for its CPU form (it says so with #error) and
# is checked as C. Exit 0 when all pass, 1 when one failed.
set -u

include_dir=$1
cxx=$2
shift 2
[ $# -gt 0 ] || { echo "usage: headers.sh INCLUDE_DIR CXX COMPILER..." >&2; exit 2; }

LC_ALL=C
export LC_ALL
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0

check() {
    # check LABEL SOURCE COMPILER... : the source must compile.
    label=$1 source=$2
    shift 2
    if "$@" -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$include_dir" \
        "$source" >"$dir/log" 2>&1; then
        echo "ok   $label"
    else
        echo "FAIL $label:"
        cat "$dir/log"
        failed=1
    fi
}

for header in accel driver types kernel; do
    printf '#include <accel/%s.h>\n' "$header" >"$dir/$header.c"
    check "accel/$header.h alone, C11" "$dir/$header.c" "$@" -std=c11
done
if [ -n "$cxx" ]; then
    for header in accel driver types; do
        check "accel/$header.h alone, C++11" "$dir/$header.c" \
            "$cxx" -x c++ -std=c++11
    done
else
    echo "skip C++: no C++ compiler found"
fi

# The application API does not expose the plugin ABI.
printf '#include <accel/accel.h>\nstruct accel_driver_v1 *table;\nint n = ACCEL_DRIVER_ABI_MAJOR;\n' \
    >"$dir/no-driver.c"
if "$@" -std=c11 -fsyntax-only -I"$include_dir" "$dir/no-driver.c" \
    >"$dir/log" 2>&1; then
    echo "FAIL accel/accel.h exposes the plugin ABI (ACCEL_DRIVER_ABI_MAJOR)"
    failed=1
else
    echo "ok   accel/accel.h does not expose the plugin ABI"
fi
exit "$failed"
