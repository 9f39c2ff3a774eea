#!/bin/sh
# The README's C++ kernel ("C++ kernels"), extracted as it is written:
# accel-cc builds it for the CPU, and for CUDA where nvcc is found
# (ACCEL_NVCC from the build); the bundle must hold the CPU image, and its
# typed signature must name the instance; -x c makes it C, which fails.
# Usage: readme-cxx-kernel.sh ACCEL_CC ACCEL_PACK SOURCE
set -eu
tool=$1 pack=$2 source=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/readme-cxx.XXXXXX")
trap 'rm -rf "$work"' EXIT
# accel-cc takes the language from the name: .cu is C++.
cp "$source" "$work/demo.cu"
targets=cpu
if [ -n "${ACCEL_NVCC:-}" ]; then targets=cpu,cuda; fi
"$tool" --target "$targets" -o "$work/demo.accelpack" "$work/demo.cu"
"$pack" list "$work/demo.accelpack" > "$work/list"
# accel-pack list: index, backend, target, format, size, offset.
awk -v m="$(uname -m)" '$2 == "null" && $3 == m && $4 == "elf" { found = 1 } END { exit !found }' "$work/list" ||
    { cat "$work/list"; echo "no CPU image" >&2; exit 1; }
if [ "$targets" = cpu,cuda ]; then
    awk '$2 == "cuda" && $4 == "ptx" { found = 1 } END { exit !found }' "$work/list" ||
        { cat "$work/list"; echo "no PTX" >&2; exit 1; }
fi
"$tool" --elf -o "$work/demo.so" "$work/demo.cu"
"$pack" signatures "$work/demo.so" > "$work/sig"
grep -q "block_map_sum_f32" "$work/sig" || { cat "$work/sig"; echo "no signature of block_map_sum_f32" >&2; exit 1; }
# -x c overrides the name: as C, the same source does not compile.
if "$tool" -x c -o "$work/c.accelpack" "$work/demo.cu" 2> "$work/c.log"; then
    echo "the C++ kernel compiled as C" >&2
    exit 1
fi
echo ok
