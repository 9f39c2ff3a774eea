#!/bin/sh
# Format the C sources with clang-format and the repository's .clang-format.
#
#   tools/format.sh            rewrite every tracked .c and .h file in place
#   tools/format.sh --check    change nothing; list the files that differ from
#                              their formatted form, with the diff, and exit 1
#                              when any does
#
# FILES after the options limit it to those files. The formatter is
# $CLANG_FORMAT, else clang-format-14, else clang-format (the settings were
# measured with version 14). Without one it says so and exits 77, the
# status meson and CI read as "skipped".
set -u

check=false
if [ "${1:-}" = "--check" ]; then
    check=true
    shift
fi

# Files named on the command line, made absolute before the cd below.
named=""
for file in "$@"; do
    case $file in
    /*) named="$named $file" ;;
    *) named="$named $(pwd)/$file" ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

formatter=${CLANG_FORMAT:-}
if [ -z "$formatter" ]; then
    for candidate in clang-format-14 clang-format; do
        if command -v "$candidate" >/dev/null 2>&1; then
            formatter=$candidate
            break
        fi
    done
fi
if [ -z "$formatter" ] || ! command -v "$formatter" >/dev/null 2>&1; then
    echo "format.sh: skipped: no clang-format found (apt-get install clang-format-14)"
    exit 77
fi

if [ -n "$named" ]; then
    files=$named
elif [ -d .git ] || [ -f .git ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find . -path ./build -prune -o \( -name '*.c' -o -name '*.h' \) -print)
fi

differ=0
for file in $files; do
    if $check; then
        if ! "$formatter" --style=file "$file" | diff -u "$file" - \
            >"${TMPDIR:-/tmp}/format.$$" 2>&1; then
            echo "not formatted: $file"
            cat "${TMPDIR:-/tmp}/format.$$"
            differ=1
        fi
    else
        "$formatter" --style=file -i "$file" || differ=1
    fi
done
rm -f "${TMPDIR:-/tmp}/format.$$"
exit "$differ"
