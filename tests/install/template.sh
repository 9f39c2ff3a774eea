#!/bin/sh
# The plugin template (examples/plugin-template) built as a vendor would:
# this build installed into a temporary directory, the template built
# against it with pkg-config alone, by meson or by cmake (the first
# argument), then the installed accel-conformance run on the plugin it
# made, which must pass, and export accel_driver_v1 alone.
#
# usage: template.sh meson|cmake   (environment as for run.sh)
set -eu
tool=$1
case $tool in
meson) builder=$MESON ;;
cmake) builder=$(command -v cmake || true) ;;
*) echo "usage: template.sh meson|cmake" >&2; exit 2 ;;
esac
if [ -z "$builder" ]; then
    echo "SKIP: cmake is not installed (the template's CMake build is not checked)"
    exit 77
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
destdir=$scratch/root
installed() {
    case $1 in
    /*) echo "$destdir$1" ;;
    *) echo "$destdir$ACCEL_PREFIX/$1" ;;
    esac
}
"$MESON" install -C "$ACCEL_BUILD_ROOT" --no-rebuild --quiet --destdir "$destdir"
libdir=$(installed "$ACCEL_LIBDIR")
bindir=$(installed "$ACCEL_BINDIR")
unset ACCEL_BACKEND ACCEL_PLUGIN_PATH ACCEL_CONFORMANCE_MODULE PKG_CONFIG_LIBDIR || true
PKG_CONFIG_PATH=$libdir/pkgconfig
PKG_CONFIG_SYSROOT_DIR=$destdir
LD_LIBRARY_PATH=$libdir
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
# The out-of-memory tests ask for more than there is: under ASan too, an
# error back, not an abort.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
export ASAN_OPTIONS

cp -R "$ACCEL_SOURCE_ROOT/examples/plugin-template" "$scratch/template"
cd "$scratch/template"
echo "== $tool build of the template"
if [ "$tool" = meson ]; then
    "$MESON" setup build >build.log 2>&1 || { cat build.log; exit 1; }
    "$MESON" compile -C build >>build.log 2>&1 || { cat build.log; exit 1; }
else
    "$builder" -S . -B build >build.log 2>&1 || { cat build.log; exit 1; }
    "$builder" --build build >>build.log 2>&1 || { cat build.log; exit 1; }
fi
plugin=$scratch/template/build/accel-plugin-template.so
[ -f "$plugin" ] || { echo "FAIL: no accel-plugin-template.so:"; ls build; exit 1; }

echo "== exported symbols"
exports=$(nm -D --defined-only "$plugin" | awk '$2 != "A" { print $3 }')
echo "$exports"
[ "$exports" = accel_driver_v1 ] || { echo "FAIL: exports more than accel_driver_v1"; exit 1; }

echo "== installed accel-conformance"
"$bindir/accel-conformance" "$plugin" >conformance.log 2>&1 || {
    cat conformance.log
    echo "FAIL: accel-conformance on the $tool build"
    exit 1
}
tail -n 1 conformance.log
! grep -q 'warning: exports' conformance.log || { echo "FAIL: a warning"; exit 1; }
echo "the template, built with $tool, passes"
