#!/bin/sh
# The installed layout, and the README's "Your own kernels" walk-through:
#
#   run.sh COMPILER [COMPILER_ARGS...]
#
# with, in the environment (tests/meson.build sets them): ACCEL_SOURCE_ROOT,
# ACCEL_BUILD_ROOT, MESON, ACCEL_PREFIX, ACCEL_LIBDIR, ACCEL_BINDIR,
# ACCEL_INCLUDEDIR (meson's options) and ACCEL_EXTRA_CFLAGS (the build's
# sanitizer flags, so that a program links with a sanitized libaccel).
#
# 1. `meson install --destdir` of this build into a temporary directory;
#    every header of include/accel/ must be there.
# 2. The README's installed walk-through, run verbatim in a scratch
#    directory with `cc` being the build's compiler and PATH, PKG_CONFIG_PATH
#    and LD_LIBRARY_PATH pointing into the installed tree: a kernel and a
#    program built with pkg-config only, a bundle packed with the installed
#    accel-pack, run on the installed plugins. Its ```text blocks are lines
#    the run must print.
# 3. The README's build-tree walk-through, with ACCEL_BUILD set to this
#    build, through the uninstalled pkg-config file, in the same directory
#    (it reuses scale.cu and scale.c) once the built files are removed.
set -eu

[ $# -gt 0 ] || { echo "usage: run.sh COMPILER [ARGS...]" >&2; exit 2; }
for name in ACCEL_SOURCE_ROOT ACCEL_BUILD_ROOT MESON ACCEL_PREFIX \
    ACCEL_LIBDIR ACCEL_BINDIR ACCEL_INCLUDEDIR; do
    eval "value=\${$name:-}"
    [ -n "$value" ] || { echo "run.sh: $name is not set" >&2; exit 2; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
destdir=$scratch/root

# A directory option as installed under destdir: meson's are relative to
# the prefix unless absolute.
installed() {
    case $1 in
    /*) echo "$destdir$1" ;;
    *) echo "$destdir$ACCEL_PREFIX/$1" ;;
    esac
}

echo "== meson install --destdir $destdir"
"$MESON" install -C "$ACCEL_BUILD_ROOT" --no-rebuild --quiet --destdir "$destdir"
libdir=$(installed "$ACCEL_LIBDIR")
bindir=$(installed "$ACCEL_BINDIR")
includedir=$(installed "$ACCEL_INCLUDEDIR")

missing=0
for header in "$ACCEL_SOURCE_ROOT"/include/accel/*.h; do
    if [ -f "$includedir/accel/${header##*/}" ]; then
        echo "installed: accel/${header##*/}"
    else
        echo "FAIL: accel/${header##*/} is not installed (include/meson.build)"
        missing=1
    fi
done
[ "$missing" -eq 0 ]

# The build's compiler as `cc`, with the sanitizer flags of this build.
compiler="$* ${ACCEL_EXTRA_CFLAGS:-}"

# Run README section $1 in directory $2; the rest of the environment is
# the caller's.
run_section() {
    section=$1 dir=$2
    mkdir -p "$dir"
    : > "$scratch/$section.expected"
    {
        echo "set -ex"
        echo "cc() { command $compiler \"\$@\"; }"
        awk -v name="$section" -v expected="$scratch/$section.expected" \
            -f "$ACCEL_SOURCE_ROOT/tests/install/walkthrough.awk" \
            "$ACCEL_SOURCE_ROOT/README.md"
    } > "$scratch/$section.sh"
    echo "== README walk-through '$section', in $dir"
    (cd "$dir" && sh "$scratch/$section.sh") > "$scratch/$section.log" 2>&1 || {
        cat "$scratch/$section.log"
        echo "FAIL: the walk-through '$section' failed"
        return 1
    }
    cat "$scratch/$section.log"
    while IFS= read -r line; do
        grep -qxF "$line" "$scratch/$section.log" || {
            echo "FAIL: the README says the walk-through prints: $line"
            return 1
        }
    done < "$scratch/$section.expected"
}

# Nothing from the caller's environment may steer the library.
unset ACCEL_PLUGIN_PATH ACCEL_BACKEND ACCEL_LOG ACCEL_ALLOW_INSECURE_PLUGINS \
    ACCEL_STAGING_CHUNK ACCEL_NULL_DEVICES ACCEL_NULL_THREADS \
    ACCEL_NULL_DELAY_US ACCEL_NULL_HOST_VISIBLE ACCEL_NULL_FAIL \
    ACCEL_NULL_LOSE_AT ACCEL_NULL_REPORT PKG_CONFIG_LIBDIR || true

# The installed tree, as the README's "Installing" says for a prefix the
# system does not search; PKG_CONFIG_SYSROOT_DIR maps the .pc file's
# prefix into destdir.
(
    PATH=$bindir:$PATH
    PKG_CONFIG_PATH=$libdir/pkgconfig
    PKG_CONFIG_SYSROOT_DIR=$destdir
    LD_LIBRARY_PATH=$libdir
    export PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
    run_section installed "$scratch/work"
    # The installed libaccel found the installed plugins, beside it.
    ACCEL_BACKEND=null accel-info > "$scratch/info.log" 2>&1 || {
        cat "$scratch/info.log"
        exit 1
    }
    grep -q "loaded .*$libdir/accel/plugins/accel-plugin-null.so" \
        "$scratch/info.log" || {
        cat "$scratch/info.log"
        echo "FAIL: the installed null plugin was not the one loaded"
        exit 1
    }
    echo "installed accel-info loads $libdir/accel/plugins/accel-plugin-null.so"
)

(
    ACCEL_BUILD=$ACCEL_BUILD_ROOT
    export ACCEL_BUILD
    # meson test's own LD_LIBRARY_PATH would hide a missing rpath.
    unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
    rm -f "$scratch/work/scale" "$scratch/work/scale-cpu.so" \
        "$scratch/work/scale.accelpack"
    run_section build-tree "$scratch/work"
)
echo "ok: installed layout and both walk-throughs"
