#!/bin/sh
# accel-cc's command line: its exit codes (2 for bad usage, 1 for a
# compiler that fails), the ISA levels it packs, and --elf's plain image.
# Usage: accel-cc.sh ACCEL_CC ACCEL_PACK KERNEL_SOURCE
set -u
tool=$1
pack=$2
source=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-cc-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*"
    exit 1
}

expect() { # status command...
    want=$1
    shift
    "$@" > "$work/out" 2>&1
    got=$?
    [ "$got" -eq "$want" ] || { cat "$work/out"; fail "$* exited $got, expected $want"; }
}

expect 2 "$tool" --target nosuch -o "$work/a.accelpack" "$source"
expect 2 "$tool" --levels v9 -o "$work/a.accelpack" "$source"
expect 2 "$tool" -o "$work/a.accelpack"
expect 2 "$tool" --elf --target cpu,cuda -o "$work/a.so" "$source"
expect 2 "$tool" --bogus -o "$work/a.accelpack" "$source"
expect 2 "$tool" -x fortran -o "$work/a.accelpack" "$source"
# A compiler without a C++ front end (gcc without g++): a .cu source is
# compiled as C, with a note; -x c++ is an error.
{
    echo '#!/bin/sh'
    echo 'for arg in "$@"; do [ "$arg" = c++ ] && { echo "c-only-cc: no C++ here" >&2; exit 1; }; done'
    echo 'exec cc "$@"'
} > "$work/c-only-cc"
chmod +x "$work/c-only-cc"
expect 0 "$tool" --no-cbs --levels baseline --cc "$work/c-only-cc" -o "$work/c.accelpack" "$source"
grep -q "cannot compile C++ (for gcc, install g++): .* is compiled as C11" "$work/out" ||
    { cat "$work/out"; fail "no note that the source was compiled as C"; }
expect 2 "$tool" --no-cbs --levels baseline --cc "$work/c-only-cc" -x c++ -o "$work/c.accelpack" "$source"
grep -q "x c++: .*c-only-cc cannot compile C++" "$work/out" ||
    { cat "$work/out"; fail "no reason for refusing -x c++"; }
printf '#include <accel/kernel.h>\nACCEL_KERNEL(broken, (int, n)) { not C }\n' > "$work/bad.cu"
expect 1 "$tool" -o "$work/bad.accelpack" "$work/bad.cu"
if [ -e "$work/a.accelpack" ] || [ -e "$work/bad.accelpack" ]; then
    fail "a failed run left an output"
fi

expect 0 "$tool" --levels baseline -o "$work/one.accelpack" "$source"
machine=$(uname -m)
"$pack" list "$work/one.accelpack" | grep -q " null  *$machine  *elf " ||
    fail "no null:$machine:elf image in $("$pack" list "$work/one.accelpack")"
# The kernels' typed signatures ride along, for the GPU images' launches.
"$pack" list "$work/one.accelpack" | grep -q " accel  *any  *sig " ||
    fail "no accel:any:sig entry in $("$pack" list "$work/one.accelpack")"
"$pack" extract "$work/one.accelpack" --backend accel --target any - 2>/dev/null |
    grep -q '^accel-signatures 1$' && fail "the signatures were picked as an image"
if [ "$machine" = x86_64 ]; then
    expect 0 "$tool" --levels baseline,v2,v3 -o "$work/three.accelpack" "$source"
    for target in x86_64 x86_64-v2 x86_64-v3; do
        "$pack" list "$work/three.accelpack" | grep -q " null  *$target  *elf " ||
            fail "no null:$target:elf image"
    done
fi

expect 0 "$tool" --elf -o "$work/plain.so" "$source"
[ "$(head -c 4 "$work/plain.so" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    fail "--elf did not write an ELF image"
# The barrier pass, where it is built (else --cbs says why, and the
# default falls back to fibers): by default a barrier kernel comes from
# clang through the pass and a barrier-free one from the C compiler; the
# pass keeps a loop counter the same in every thread once per block and
# reports the regions every thread leaves at the same barrier (each region
# still checks that its threads agree).
cat > "$work/mixed.cu" <<'EOF'
#include <accel/kernel.h>
ACCEL_KERNEL(uniform_loop, (uint32_t, n), (float *, x))
{
    for (uint32_t stride = n; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            x[threadIdx.x] += 1.0f;
        accel_sync_threads();
    }
}
ACCEL_KERNEL(divergent_loop, (float *, x))
{
    for (uint32_t i = 0; i < threadIdx.x; i++)
        accel_sync_threads();
    x[threadIdx.x] = 1.0f;
}
ACCEL_KERNEL(plain, (float *, x)) { x[threadIdx.x] = 2.0f; }
EOF
if "$tool" --cbs --elf -o "$work/probe.so" "$work/mixed.cu" > "$work/out" 2>&1; then
    ACCEL_CBS_VERBOSE=1 "$tool" --elf -o "$work/mixed.so" "$work/mixed.cu" > "$work/out" 2>&1 ||
        { cat "$work/out"; fail "the default build failed"; }
    grep -q 'uniform_loop: 1 barriers, .* 2 of 2 regions with a uniform reach' "$work/out" ||
        { cat "$work/out"; fail "the pass did not find uniform_loop's loop uniform"; }
    grep -q 'divergent_loop: 1 barriers, .* 0 of 2 regions with a uniform reach' "$work/out" ||
        { cat "$work/out"; fail "the pass found divergent_loop's reach uniform"; }
    grep -q 'plain: fibers (no barrier)' "$work/out" || fail "plain was split"
    expect 0 "$tool" --no-cbs --elf -o "$work/fibers.so" "$work/mixed.cu"
    if command -v readelf > /dev/null 2>&1; then
        readelf -p .comment "$work/mixed.so" | grep -q 'clang version' ||
            fail "the default image has no clang code"
        readelf -p .comment "$work/fibers.so" | grep -q 'clang version' &&
            fail "--no-cbs built with clang"
    fi
else
    grep -q -e 'barrier pass is not built' -e 'objcopy or nm' "$work/out" ||
        { cat "$work/out"; fail "--cbs failed without saying the pass is missing"; }
    expect 0 "$tool" --elf -o "$work/fallback.so" "$work/mixed.cu"
fi
echo "ok"
