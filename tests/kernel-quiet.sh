#!/bin/sh
# No warning from <accel/kernel.h>'s own macros on correct kernels: each
# kernel source of the project compiled for the CPU with -O2 -Wall -Wextra
# -Werror by every compiler found of gcc, clang (as C11) and g++, clang++
# (as C++17; cxx.cu only as C++). A compiler that is not installed is
# skipped, said on stdout; none at all is a failure.
# Usage: kernel-quiet.sh INCLUDE_DIR SOURCE...
set -eu
include=$1
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/kernel-quiet.XXXXXX")
trap 'rm -rf "$work"' EXIT
ran=0 failed=0
for compiler in gcc clang g++ clang++; do
    if ! command -v "$compiler" >/dev/null 2>&1; then
        echo "skipped: $compiler not found"
        continue
    fi
    case $compiler in
    *++) language="-x c++ -std=gnu++17" ;;
    *) language="-x c -std=gnu11" ;;
    esac
    for source in "$@"; do
        case $compiler:$source in
        gcc:*.cpp|clang:*.cpp|gcc:*cxx.cu|clang:*cxx.cu) continue ;;
        esac
        ran=$((ran + 1))
        # shellcheck disable=SC2086
        if ! "$compiler" $language -O2 -Wall -Wextra -Werror -fPIC -c \
            -I"$include" -o "$work/kernel.o" "$source" 2> "$work/log"; then
            echo "FAILED: $compiler $language: $source"
            head -20 "$work/log"
            failed=$((failed + 1))
        fi
    done
done
[ "$ran" -gt 0 ] || { echo "no compiler found" >&2; exit 1; }
echo "$ran compiles, $failed with warnings"
[ "$failed" -eq 0 ]
