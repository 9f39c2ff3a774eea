#!/usr/bin/env bash
# gpu-check.sh: the CUDA plugin on a real NVIDIA GPU, in one prepared run.
#
# usage: tools/gpu-check.sh [--rehearse] [--cc-build] OUT_DIR
#
# On a machine with an NVIDIA GPU, its driver and the CUDA toolkit (no
# network needed, nothing installed), from a checkout of accel:
#
#   1. builds the project (meson and ninja; without them, or with
#      --cc-build, a plain cc command line builds what the checks need);
#   2. compiles kernels/examples.cu with nvcc to PTX and to a cubin for the
#      GPU found (nvidia-smi --query-gpu=compute_cap), and packs both into a
#      bundle with accel-pack;
#   3. runs accel-info on the cuda backend;
#   4. runs accel-conformance (the conformance suite, tools/conformance) on
#      every CUDA device, once with the PTX, once with the cubin, once with
#      the bundle (JUnit reports in OUT_DIR/conformance-*.xml);
#   5. runs what only a real driver shows, each a check of
#      tools/gpu-check-probe.c (built with the rest):
#      fault-recovery   a kernel that faults (a bad address): the device
#                       is lost, then reset (and a second workload is
#                       verified) or ACCEL_ERR_UNRECOVERABLE with the
#                       driver's reason, as documented;
#      wait-cpu         about 200 ms of work waited for with blocking
#                       stream and event waits: under 10 % of a core;
#      two-hosts        two hosts on one GPU, one resets: the other gets
#                       ACCEL_ERR_DEVICE_LOST, never another's objects, and
#                       the first's data is intact;
#      contention       three threads allocating, copying, freeing and
#                       launching while a fourth loads PTX (JIT, cache
#                       off): no call stalls past 250 ms;
#      testing-kernels  kernels/testing.cu compiled by nvcc and run (2D
#                       grids, sixteen arguments, 64 KiB of dynamic shared
#                       memory through the opt-in);
#      launch-bounds    a kernel with __launch_bounds__(128), below the
#                       device's limit: 256 threads are refused with the
#                       reason before anything is enqueued, 128 compute;
#      nccl             collectives through the nccl provider, one rank per
#                       GPU (tools/gpu-check-nccl.c, built with the rest:
#                       accel_comm_create_local over every CUDA device):
#                       all-reduce, barrier and all-gather of 1 Mi + 3
#                       floats on every device's stream, verified; SKIP
#                       with the reason where libnccl.so.2 is absent (the
#                       rehearsal runs it over the fake NCCL, two devices);
#   6. runs accel-bench's cases (the cost of a call through accel against
#      the plugin's own entry, empty launch latency, launches back to back,
#      copy bandwidth pageable and pinned in each direction, device to
#      device, alloc+free) through accel, the plugin called directly and
#      raw Driver API calls in the same run;
#   7. runs the project's unit tests, with what time is left (meson builds
#      only; they need no GPU, but the staged CUDA plugin now finds a real
#      driver);
#
# and writes everything under OUT_DIR: summary.txt (one table: each step's
# result and time, then the benchmark's accel-against-raw table), logs/,
# kernels/, bench.txt, bench-copy.svg, system.txt. It finishes in under 8
# minutes (each step has a budget; a step past it is stopped and reported)
# and exits 0 only when every step passed.
#
# --rehearse   run the same steps without a GPU, to check the script
#              itself: the architecture is GPU_CHECK_ARCH (default sm_90),
#              and the device is the fake CUDA driver the tests build
#              (tests/fakes/cuda), which runs the CPU image in place of
#              PTX, with its knobs standing in for what only a GPU does
#              (FAKE_CUDA_LOSE_AT for the fault, FAKE_CUDA_DELAY_US for
#              slow work, FAKE_CUDA_KERNEL_LIMITS for launch bounds; the
#              stall bound is 1 s, for a loaded machine without a GPU).
#              A meson build is needed for the fake.
# --cc-build   build with plain cc even when meson and ninja are present.
#
# Environment: CC (default cc), NVCC (default: nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), GPU_CHECK_ARCH (e.g. sm_90: skip detection),
# GPU_CHECK_BUILD (the build directory; default OUT_DIR/build).
#
# The step functions run through `bash -c` (after export -f), which the
# linter cannot follow; and a -Wl,a,b flag is one word.
# shellcheck disable=SC2317,SC2054
set -euo pipefail

readonly TOTAL_BUDGET_S=470 # under 8 minutes, with room to write the summary
START_S=$SECONDS

rehearse=0
cc_build=0
while [ $# -gt 0 ]; do
    case $1 in
    --rehearse) rehearse=1 ;;
    --cc-build) cc_build=1 ;;
    -h | --help)
        sed -n '2,/^# The step functions/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "gpu-check: unknown option $1 (--help lists them)" >&2
        exit 2
        ;;
    *) break ;;
    esac
    shift
done
if [ $# -ne 1 ]; then
    echo "usage: $0 [--rehearse] [--cc-build] OUT_DIR" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
BUILD=${GPU_CHECK_BUILD:-$OUT/build}
LOGS=$OUT/logs
KERNELS=$OUT/kernels
mkdir -p "$LOGS" "$KERNELS"
CC=${CC:-cc}
if [ -z "${NVCC:-}" ]; then
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
fi
export ROOT OUT BUILD LOGS KERNELS CC NVCC
export rehearse cc_build

# ---- steps: each runs in its own bash with -euo pipefail, under a budget ----

# The architecture to compile for: sm_XY from the first GPU's compute capability.
detect_arch() {
    if [ -n "${GPU_CHECK_ARCH:-}" ]; then
        echo "$GPU_CHECK_ARCH"
        return
    fi
    if [ "$rehearse" = 1 ]; then
        echo sm_90
        return
    fi
    local cap
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' ')
    case $cap in
    [0-9]*.[0-9]*) echo "sm_${cap%%.*}${cap#*.}" ;;
    *)
        echo "nvidia-smi gave no compute capability: '$cap'" >&2
        return 1
        ;;
    esac
}

step_system() {
    {
        echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
        echo "checkout: $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"
        echo "uname: $(uname -a)"
        echo "cc: $("$CC" --version | head -n 1)"
        echo "nvcc: $("$NVCC" --version 2>/dev/null | tail -n 1 || echo 'not found')"
        echo "meson: $(meson --version 2>/dev/null || echo 'not found')"
        echo "ninja: $(ninja --version 2>/dev/null || echo 'not found')"
        echo "arch: $ARCH"
        if [ "$rehearse" = 1 ]; then
            echo "mode: rehearsal (fake CUDA driver, no GPU)"
        else
            nvidia-smi || echo "nvidia-smi failed"
            nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv ||
                true
        fi
    } >"$OUT/system.txt" 2>&1
    cat "$OUT/system.txt"
}

# The source files a meson.build lists between two patterns.
meson_sources() {
    local file=$1 from=$2 to=$3
    sed -n "/$from/,/$to/p" "$file" | grep -o "'[A-Za-z0-9_./-]*\.c'" | tr -d "'"
}

build_with_meson() {
    if [ ! -f "$BUILD/build.ninja" ]; then
        meson setup "$BUILD" "$ROOT" -Dbuildtype=release -Dcuda=enabled -Dtools=enabled
    fi
    ninja -C "$BUILD"
    ln -sfn "$BUILD/tools/bench/accel-bench" "$BUILD/accel-bench"
}

# What the checks need, with cc alone: libaccel, the null and cuda plugins,
# accel-info, accel-pack, accel-bench and accel-conformance. Source lists
# come from the meson.build files.
build_with_cc() {
    local flags=(-std=c11 -O2 -g -D_GNU_SOURCE -pthread -I"$ROOT/include")
    local plugin_flags=(-fPIC -shared -fvisibility=hidden
        -Wl,--version-script="$ROOT/plugins/plugin.map")
    local link=(-L"$BUILD/host" -Wl,-rpath,"$BUILD/host" -laccel -ldl -lm)
    local host common null cuda nccl bench conformance
    mkdir -p "$BUILD"/{host,plugins/null,plugins/cuda,plugins/comm/nccl,tools/bench}
    mapfile -t host < <(meson_sources "$ROOT/host/meson.build" "library('accel'" \
        "include_directories" | sed "s|^|$ROOT/host/|")
    mapfile -t null < <(meson_sources "$ROOT/plugins/null/meson.build" "shared_module" \
        "name_prefix" | sed "s|^|$ROOT/plugins/null/|")
    mapfile -t cuda < <(meson_sources "$ROOT/plugins/cuda/meson.build" "shared_module" \
        "name_prefix" | sed "s|^|$ROOT/plugins/cuda/|")
    mapfile -t nccl < <(meson_sources "$ROOT/plugins/comm/nccl/meson.build" \
        "nccl_provider_sources = files(" "^)" | sed "s|^|$ROOT/plugins/comm/nccl/|")
    mapfile -t common < <(meson_sources "$ROOT/plugins/common/meson.build" "static_library" \
        "include_directories" | sed "s|^|$ROOT/plugins/common/|")
    mapfile -t bench < <(sed -n "/accel-bench-report'/,/dependencies/p;/accel_bench_sources = \[/,/\]/p" \
        "$ROOT/tools/bench/meson.build" | grep -o "'[A-Za-z0-9_./-]*\.c'" | tr -d "'" |
        grep -v '^opencl_cases\.c$' | sort -u | sed "s|^|$ROOT/tools/bench/|")
    mapfile -t conformance < <(sed -n "/static_library('accel-conformance'/,/dependencies/p" \
        "$ROOT/tools/meson.build" | grep -o "'conformance/[a-z_]*\.c'" | tr -d "'" |
        sed "s|^|$ROOT/tools/|")
    # The vadd baseline's C loops, each at the level its meson target sets.
    local loops=(-falign-loops=64 -c -std=c11 -I"$ROOT/include")
    "$CC" -O2 "${loops[@]}" "$ROOT/tools/bench/c_vadd_scalar.c" -o "$BUILD/tools/bench/scalar.o"
    "$CC" -O3 "${loops[@]}" "$ROOT/tools/bench/c_vadd_vector.c" -o "$BUILD/tools/bench/vector.o"
    "$CC" -O3 "${loops[@]}" -DBENCH_LOOP_LEVEL=baseline "$ROOT/tools/bench/c_workload_loops.c" \
        -o "$BUILD/tools/bench/workload-loops.o"
    bench+=("$BUILD/tools/bench/scalar.o" "$BUILD/tools/bench/vector.o"
        "$BUILD/tools/bench/workload-loops.o")

    "$CC" "${flags[@]}" -fPIC -shared -fvisibility=hidden \
        -DACCEL_PLUGINDIR="\"$BUILD/plugins\"" "${host[@]}" \
        -Wl,--version-script="$ROOT/host/libaccel.map" -Wl,-soname,libaccel.so.0 \
        -ldl -o "$BUILD/host/libaccel.so.0"
    ln -sfn libaccel.so.0 "$BUILD/host/libaccel.so"
    "$CC" "${flags[@]}" "${plugin_flags[@]}" "${null[@]}" -ldl \
        -o "$BUILD/plugins/null/accel-plugin-null.so"
    "$CC" "${flags[@]}" "${plugin_flags[@]}" -I"$ROOT/plugins/common" "${cuda[@]}" \
        "${common[@]}" -ldl -o "$BUILD/plugins/cuda/accel-plugin-cuda.so"
    "$CC" "${flags[@]}" -fPIC -shared -fvisibility=hidden \
        -Wl,--version-script="$ROOT/plugins/comm/comm.map" -I"$ROOT/plugins/common" \
        "${nccl[@]}" "$ROOT/plugins/common/native_library.c" -ldl \
        -o "$BUILD/plugins/comm/nccl/accel-comm-nccl.so"
    "$CC" "${flags[@]}" "$ROOT/tools/accel-info.c" "$ROOT/tools/json.c" "${link[@]}" \
        -o "$BUILD/tools/accel-info"
    "$CC" "${flags[@]}" -I"$ROOT/host" -DACCEL_PLUGINDIR="\"$BUILD/plugins\"" \
        "$ROOT/tools/accel-pack.c" "$ROOT/tools/json.c" "${host[@]}" -ldl \
        -o "$BUILD/tools/accel-pack"
    "$CC" "${flags[@]}" -I"$ROOT/tools" "${bench[@]}" "${link[@]}" -o "$BUILD/tools/bench/accel-bench"
    ln -sfn "$BUILD/tools/bench/accel-bench" "$BUILD/accel-bench"

    "$CC" "${flags[@]}" "$ROOT/tools/accel-conformance.c" "${conformance[@]}" "${link[@]}" \
        -o "$BUILD/tools/accel-conformance"
}

# The probes of the checks in step 5, over the libaccel just built.
build_probe() {
    "$CC" -std=c11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra -I"$ROOT/include" \
        "$ROOT/tools/gpu-check-probe.c" -L"$BUILD/host" -Wl,-rpath,"$BUILD/host" -laccel \
        -o "$BUILD/gpu-check-probe"
    "$CC" -std=c11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra -I"$ROOT/include" \
        "$ROOT/tools/gpu-check-nccl.c" -L"$BUILD/host" -Wl,-rpath,"$BUILD/host" -laccel \
        -o "$BUILD/gpu-check-nccl"
}

step_build() {
    if [ "$cc_build" = 0 ] && command -v meson >/dev/null && command -v ninja >/dev/null; then
        build_with_meson
    else
        [ "$rehearse" = 0 ] || echo "note: a rehearsal needs the fake driver, which meson builds"
        build_with_cc
    fi
    build_probe
}

# A kernel with launch bounds below any device's limit, saxpy's parameters.
write_bounded_kernel() {
    cat >"$KERNELS/bounded.cu" <<'CU'
extern "C" __global__ void __launch_bounds__(128)
bounded_saxpy(unsigned n, float a, const float *x, float *y)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
CU
}

step_kernels() {
    local ptx=$KERNELS/examples.ptx cubin=$KERNELS/examples-$ARCH.cubin
    local compute=compute_${ARCH#sm_}
    "$NVCC" -ptx -arch="$compute" -x cu -I"$ROOT/include" -o "$ptx" "$ROOT/kernels/examples.cu"
    "$NVCC" -cubin -arch="$ARCH" -x cu -I"$ROOT/include" -o "$cubin" "$ROOT/kernels/examples.cu"
    "$NVCC" -ptx -arch="$compute" -x cu -I"$ROOT/include" -o "$KERNELS/testing.ptx" \
        "$ROOT/kernels/testing.cu"
    "$NVCC" -cubin -arch="$ARCH" -x cu -I"$ROOT/include" -o "$KERNELS/testing-$ARCH.cubin" \
        "$ROOT/kernels/testing.cu"
    write_bounded_kernel
    "$NVCC" -ptx -arch="$compute" -o "$KERNELS/bounded.ptx" "$KERNELS/bounded.cu"
    "$BUILD/tools/accel-pack" create "$KERNELS/examples.accelpack" \
        "cuda:$ARCH:cubin=$cubin" "cuda:$compute:ptx=$ptx"
    "$BUILD/tools/accel-pack" list "$KERNELS/examples.accelpack"
    ls -l "$KERNELS"
}

# The environment every run on the device shares.
device_env() {
    export ACCEL_PLUGIN_PATH="$BUILD/plugins/cuda/accel-plugin-cuda.so:$BUILD/plugins/null/accel-plugin-null.so"
    export ACCEL_BACKEND=cuda
    unset ACCEL_LOG
    if [ "$rehearse" = 1 ]; then
        export ACCEL_CUDA_LIBRARY="$BUILD/tests/fakes/cuda/libfakecuda.so"
        # The fake runs CPU images: a real NVRTC's PTX (where the CUDA
        # toolkit is installed) would fail conformance's module_compile.
        export ACCEL_NVRTC_LIBRARY="$BUILD/tests/fakes/cuda/libfakenvrtc.so"
    fi
}

step_accel_info() {
    device_env
    "$BUILD/tools/accel-info"
    "$BUILD/tools/accel-info" --json >"$OUT/accel-info.json"
}

# accel-conformance on every CUDA device with module image $1, named $2.
conformance_with() {
    device_env
    local module=$1
    if [ "$rehearse" = 1 ]; then
        # The fake runs CPU images only; PTX and cubin were still compiled above.
        module=$(ls "$BUILD"/kernels/accel-kernels-examples.so)
    fi
    "$BUILD/tools/accel-conformance" --module "$module" --junit "$OUT/conformance-$2.xml" \
        "$BUILD/plugins/cuda/accel-plugin-cuda.so"
}
step_conformance_ptx() { conformance_with "$KERNELS/examples.ptx" ptx; }
step_conformance_cubin() { conformance_with "$KERNELS/examples-$ARCH.cubin" cubin; }
step_conformance_bundle() { conformance_with "$KERNELS/examples.accelpack" bundle; }

# ---- what only a real driver shows (tools/gpu-check-probe.c) ----

# The testing kernels' image: nvcc's cubin, or the CPU image the fake runs.
testing_module() {
    if [ "$rehearse" = 1 ]; then
        ls "$BUILD"/kernels/accel-kernels-testing.so
    else
        echo "$KERNELS/testing-$ARCH.cubin"
    fi
}

probe() { "$BUILD/gpu-check-probe" cuda "$@"; }

step_fault_recovery() {
    device_env
    if [ "$rehearse" = 1 ]; then
        # The fake cannot fault on a bad address: it faults the first launch instead.
        export GPU_CHECK_SIMULATED_FAULT=1 FAKE_CUDA_LOSE_AT=cuLaunchKernel:1
    fi
    probe fault-recovery "$(testing_module)"
}

step_wait_cpu() {
    device_env
    if [ "$rehearse" = 1 ]; then
        export FAKE_CUDA_DELAY_US=20000
        probe wait-cpu "$(testing_module)" 1024
    else
        probe wait-cpu "$(testing_module)" $((1 << 24))
    fi
}

step_two_hosts() {
    device_env
    probe two-hosts
}

step_contention() {
    device_env
    local jit=$KERNELS/examples.ptx
    if [ "$rehearse" = 1 ]; then
        jit=$(ls "$BUILD"/kernels/accel-kernels-examples.so)
        export GPU_CHECK_STALL_BOUND_MS=1000
    fi
    # Every load JIT-compiles again: no cached result hides the compile.
    CUDA_CACHE_DISABLE=1 probe contention "$(testing_module)" "$jit"
}

step_testing_kernels() {
    device_env
    local module=$KERNELS/testing.ptx
    [ "$rehearse" = 0 ] || module=$(testing_module)
    probe testing-kernels "$module"
}

step_launch_bounds() {
    device_env
    if [ "$rehearse" = 1 ]; then
        # The fake's saxpy, bounded as __launch_bounds__(128) would bound it.
        FAKE_CUDA_KERNEL_LIMITS=saxpy:128 probe launch-bounds \
            "$(ls "$BUILD"/kernels/accel-kernels-examples.so)" saxpy 128
    else
        probe launch-bounds "$KERNELS/bounded.ptx" bounded_saxpy 128
    fi
}

# The nccl provider, one rank per GPU; 77 (a SKIP) without libnccl.so.2.
# The provider is found on the plugin search path, in its directory.
step_nccl() {
    device_env
    export ACCEL_PLUGIN_PATH="$ACCEL_PLUGIN_PATH:$BUILD/plugins/comm/nccl"
    if [ "$rehearse" = 1 ]; then
        export ACCEL_NCCL_LIBRARY="$BUILD/tests/fakes/nccl/libfakenccl.so" FAKE_CUDA_DEVICES=2
    fi
    "$BUILD/gpu-check-nccl"
}

step_unit_tests() {
    if [ ! -f "$BUILD/build.ninja" ]; then
        echo "not a meson build: no unit tests to run"
        return 0
    fi
    meson test -C "$BUILD" --no-rebuild --print-errorlogs --num-processes 8
}

step_bench() {
    device_env
    local impls=accel,plugin,cuda-raw bundle=$KERNELS/examples.accelpack
    if [ "$rehearse" = 1 ]; then
        # The fake runs the CPU image; raw CUDA calls need the real libcuda.
        impls=accel,plugin
        bundle=$KERNELS/rehearsal.accelpack
        "$BUILD/tools/accel-pack" create "$bundle" \
            "cuda:any:elf=$(ls "$BUILD"/kernels/accel-kernels-examples.so)"
    fi
    "$BUILD/accel-bench" --quick \
        --case dispatch,launch_empty,launch_stream,copy_h2d,copy_d2h,copy_d2d,alloc_free \
        --impl "$impls" --bundle "$bundle" --svg "$OUT/bench-copy.svg" | tee "$OUT/bench.txt"
}

export -f detect_arch step_system meson_sources build_with_meson build_with_cc build_probe \
    step_build write_bounded_kernel step_kernels device_env step_accel_info conformance_with \
    step_conformance_ptx step_conformance_cubin step_conformance_bundle testing_module probe step_nccl \
    step_fault_recovery step_wait_cpu step_two_hosts step_contention step_testing_kernels \
    step_launch_bounds step_unit_tests step_bench

# ---- the run ----

results=()
failed=0

# run_step NAME BUDGET_S FUNCTION: run it under min(budget, time left), log to logs/NAME.log.
run_step() {
    local name=$1 budget=$2 fn=$3 left status=0 began detail
    left=$((TOTAL_BUDGET_S - (SECONDS - START_S)))
    if [ "$left" -lt 5 ]; then
        results+=("$(printf '%-18s %-8s %6s  %s' "$name" "SKIPPED" "-" "no time left in the 8 minutes")")
        failed=1
        return 1
    fi
    [ "$budget" -le "$left" ] || budget=$left
    began=$SECONDS
    echo "== $name (budget ${budget}s)"
    timeout --kill-after=5 "$budget" bash -c "set -euo pipefail; $fn" >"$LOGS/$name.log" 2>&1 ||
        status=$?
    case $status in
    0) detail="" ;;
    77) detail="skipped: $(grep -m1 '^skipped: ' "$LOGS/$name.log" | cut -c10-)" ;;
    124 | 137) detail="stopped after its ${budget}s budget" ;;
    *) detail="exit status $status" ;;
    esac
    # cmocka's verdict, where the step ran a suite.
    if grep -q '^\[==========\] .* test(s) run' "$LOGS/$name.log"; then
        detail="$(grep -Eo '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$LOGS/$name.log" |
            sed -E 's/^\[ +([A-Z]+) +\] ([0-9]+) test/\2 \L\1/' | paste -sd, -)${detail:+; $detail}"
    fi
    results+=("$(printf '%-18s %-8s %5ss  %s' "$name" \
        "$(case $status in 0) echo PASS ;; 77) echo SKIP ;; *) echo FAIL ;; esac)" \
        "$((SECONDS - began))" "${detail:-see logs/$name.log}")")
    if [ "$status" != 0 ] && [ "$status" != 77 ]; then
        failed=1
        tail -n 20 "$LOGS/$name.log" | sed 's/^/    /'
        return 1
    fi
}

if ! ARCH=$(detect_arch); then
    echo "gpu-check: no NVIDIA GPU found (nvidia-smi failed); --rehearse runs without one" >&2
    exit 1
fi
export ARCH

# Budgets add up past the total: a step that finishes early leaves its time to
# the next; the bench and the unit tests, last, take what is left.
run_step system 20 step_system || true
if run_step build 180 step_build; then
    run_step kernels 60 step_kernels || true
    run_step accel-info 20 step_accel_info || true
    run_step conformance-ptx 45 step_conformance_ptx || true
    run_step conformance-cubin 30 step_conformance_cubin || true
    run_step conformance-bundle 30 step_conformance_bundle || true
    run_step fault-recovery 30 step_fault_recovery || true
    run_step wait-cpu 30 step_wait_cpu || true
    run_step two-hosts 20 step_two_hosts || true
    run_step contention 30 step_contention || true
    run_step testing-kernels 30 step_testing_kernels || true
    run_step launch-bounds 20 step_launch_bounds || true
    run_step nccl 60 step_nccl || true
    run_step bench 120 step_bench || true
    run_step unit-tests 180 step_unit_tests || true
fi

{
    echo "accel gpu-check, $(date -u '+%Y-%m-%d %H:%M UTC'), arch $ARCH$([ "$rehearse" = 1 ] && echo ', REHEARSAL on the fake driver (no GPU)')"
    echo
    printf '%-18s %-8s %6s  %s\n' step result time detail
    printf '%s\n' "${results[@]}"
    echo
    echo "total: $((SECONDS - START_S))s of the ${TOTAL_BUDGET_S}s budget; $([ "$failed" = 0 ] && echo 'every step passed' || echo 'SOME STEPS FAILED')"
    if [ -s "$OUT/bench.txt" ]; then
        echo
        echo "accel-bench, accel beside raw CUDA Driver API calls in the same run (accel÷ is accel's median over the peer's):"
        cat "$OUT/bench.txt"
    fi
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$failed"
