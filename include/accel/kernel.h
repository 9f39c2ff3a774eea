/*
 * accel single-source kernels.
 *
 * One kernel source, three compilers:
 *
 *   nvcc   -x cu  -ptx         -> PTX for the CUDA plugin
 *   hipcc  -x hip --genco      -> a code object for the HIP plugin
 *   cc     -x c   -shared -fPIC -> an ELF shared object for the CPU plugin
 *   (or c++ -x c++ -std=gnu++17 -fno-exceptions -fno-rtti: C++ kernels)
 *
 * Build the CPU form with `accel-cc` (every ISA level in one bundle), or by
 * hand optimised, with loops aligned and libm linked: `cc $(pkg-config
 * --cflags accel) -x c -O2 -falign-loops=64 -shared -fPIC ... -lm`. A
 * block's thread loop is the whole
 * kernel on the CPU, and on some x86 CPUs (AMD EPYC here) a loop that
 * straddles a 64-byte boundary runs at about half speed: vadd's block
 * loop went from 7.5 to 14 GB/s on one thread with the flag.
 *
 * A kernel is declared with ACCEL_KERNEL and written the way a CUDA kernel
 * is, with threadIdx, blockIdx, blockDim and gridDim:
 *
 *     #include <accel/kernel.h>
 *
 *     ACCEL_KERNEL(saxpy, (uint32_t, n), (float, a),
 *                  (const float *, x), (float *, y))
 *     {
 *         uint64_t i = accel_global_idx_x();
 *         if (i < n)
 *             y[i] = a * x[i] + y[i];
 *     }
 *
 * Under nvcc and hipcc this is `extern "C" __global__ void saxpy(...)`.
 * Under cc it becomes a block runner that loops over the block's threads
 * and an exported descriptor (the CPU kernel ABI below) that the null
 * plugin finds by name.
 *
 * Block semantics, the same in every form:
 *
 *  - accel_sync_threads(): a barrier for the threads of the block
 *    (__syncthreads). Every thread of the block must reach each barrier,
 *    the same number of times; accel_thread_fence() orders memory for the
 *    whole device, accel_thread_fence_block() for the block.
 *  - ACCEL_SHARED(type, name, count): a static shared array `type
 *    name[count]`, one per block (__shared__), any number per kernel,
 *    declared in the kernel body. ACCEL_SHARED_DYNAMIC(type, name): `type
 *    *name` at the launch's dynamic shared memory (shared_bytes, 64-byte
 *    aligned on the CPU). Both are shared by the block's threads across
 *    barriers; their contents at block start are unspecified.
 *  - Warp operations over the lanes named in an accel_lane_mask (bit l for
 *    lane l; ACCEL_LANES_ALL for all): accel_shfl_sync (from a lane),
 *    accel_shfl_up_sync, accel_shfl_down_sync, accel_shfl_xor_sync on int,
 *    unsigned, long, unsigned long, long long, unsigned long long, float
 *    and double; accel_ballot_sync, accel_any_sync, accel_all_sync,
 *    accel_warp_sync. They follow CUDA's _sync forms: every lane the mask
 *    names (that the block has) that has not returned must make the same
 *    call, the caller's own lane included; a lane that returned takes no
 *    part (CUDA's "non-exited threads named in mask"), as if outside the
 *    mask; a shuffle from a lane outside the mask or the warp
 *    gives the caller's own value. accel_warp_size() is 32 on NVIDIA and
 *    on the CPU, warpSize (64 on most AMD GPUs) on HIP, where the mask is
 *    not passed on (HIP's portable forms take none: the whole wavefront
 *    takes part). accel_lane_id() and accel_thread_rank() (the linear
 *    index in the block, x fastest) and accel_popcount64() complete them.
 *  - Atomics, relaxed, on global or shared memory, returning the old
 *    value: accel_atomic_{add,sub,min,max,exch,and,or,xor}_T(p, v) and
 *    accel_atomic_cas_T(p, compare, v) for T in i32, u32, i64, u64;
 *    accel_atomic_add_f32 and accel_atomic_add_f64.
 *
 * How the CPU form runs them, and what it does not offer:
 *
 *  - Blocks run in parallel on the null plugin's worker threads, in no
 *    particular order; a host thread runs one block at a time. Thread 0 of
 *    a block runs first. If it returns without reaching a barrier or a
 *    warp operation, the other threads run one after another in a plain
 *    loop (x fastest, then y, then z) that the compiler sees whole, so a
 *    kernel without barriers pays only a second call per block and a
 *    fiber switch per run of blocks. If thread 0 reaches one, every thread
 *    of the block gets a fiber (its own stack, ACCEL_NULL_STACK_KB, 64 KiB
 *    by default) and they take turns: each runs until it waits, and a
 *    barrier or warp operation opens once every thread it waits for has
 *    arrived. A barrier costs 10-12 ns per thread in blocks of 32 to 256
 *    threads and about 22 ns in blocks of 1024 (CPU time on a 2-core VM,
 *    accel-block-bench in tools/bench); a block of n threads keeps n
 *    stacks, reused by the next block. A block of one thread needs no
 *    fiber: its barriers return at once.
 *  - Built with `accel-cc --cbs` (clang 14 through accel-cc's barrier pass,
 *    tools/cbs), a kernel with barriers and no warp operation runs
 *    differently: the pass splits it at its barriers into regions, and a
 *    block runs as one loop over its threads per region between two
 *    barriers (PoCL's work-item loops), which the compiler vectorises
 *    across the threads; a value a thread carries across a barrier lives in
 *    a per-thread array the plugin provides (the descriptor's run_regions,
 *    CPU kernel ABI 3). No fiber, no switch: the block runs on the host
 *    thread's own stack. Kernels with warp operations, with calls to
 *    functions the image defines, or with variable-length arrays keep the
 *    fibers, as does every image built without the pass (gcc's).
 *    At each barrier every thread must have reached the same one (the same
 *    accel_sync_threads() call in the source), or all returned: a thread
 *    at another barrier, or one that returned, fails the launch as below.
 *    Two different barrier calls that divergent threads each reach (one in
 *    each side of an if) are an error there, which the fibers accept
 *    (unless clang merged the two calls into one before the pass).
 *  - A barrier that not every thread reaches, or a warp operation that a
 *    lane of its mask that has not returned does not reach (a thread
 *    returned before a barrier, a barrier in divergent code, a mismatched
 *    count, a barrier that thread 0 skipped, a lane waiting at a barrier
 *    instead) fails the launch with ACCEL_ERR_LAUNCH,
 *    naming the kernel, the block and the thread, never hangs; blocks that
 *    had not started by then may not run. On a GPU the same kernel is
 *    undefined.
 *  - A thread that overflows its stack faults on a guard page; the plugin
 *    prints the kernel, block and thread and aborts the process (a kernel
 *    stopped mid-instruction cannot be resumed or unwound safely).
 *  - A static shared array is a thread-local array in the image, so it is
 *    per host thread, which is per block; each thread that declares it
 *    finds it through the dynamic loader's TLS lookup. It may have more
 *    dimensions: ACCEL_SHARED(float, tile, 16][17) is float tile[16][17].
 *    In an AddressSanitizer image (accel-cc --check) it lies between
 *    poisoned zones and its name is a pointer to its first element (of a
 *    2D array, its first row), indexed the same way (see ACCEL_SHARED
 *    below).
 *  - Not offered: cooperative groups, grid sync, warp matrix operations,
 *    the shuffles' `width` argument, independent forward progress between
 *    the threads of a block (a thread that spins on a flag another thread
 *    of its block sets waits for ever; a warp operation or barrier is the
 *    only place a thread lets another run), or waiting for another block
 *    of the grid (blocks run in any order, many in turn on one host
 *    thread).
 *  - Thread and block indices, barriers, warp operations and
 *    ACCEL_SHARED are available in the kernel body only, not in
 *    ACCEL_DEVICE_FN helpers: pass values as arguments, and keep barriers
 *    in the body.
 *  - Up to ACCEL_KERNEL_MACRO_MAX_PARAMS parameters, each a type and a name
 *    in parentheses. A type must be spelled so that `T *` names a pointer
 *    to it (use a typedef for arrays and function pointers). Pointers are
 *    device addresses: 64-bit; the CPU form needs a 64-bit target. Names
 *    beginning with accel__ are reserved.
 *  - Each parameter's kind (pointer or value), element type and name are
 *    recorded from the declaration (the descriptor's typed signature
 *    below; accel-cc writes the same into a bundle's metadata for the GPU
 *    images), and accel_launch refuses a ref whose element type is not the
 *    pointee's, a value for a pointer and a ref for a value. The element
 *    type of `float *` or `float` is f32, of `uint32_t *` u32, and so on
 *    for every accel_elem_type; `void *`, `char *`, structs and pointers
 *    to pointers are bytes, which any ref fits (and an ACCEL_BYTE ref fits
 *    any pointer).
 *  - The CPU form compiles as C11 and as C++17 (accel-cc takes .cu, .cpp,
 *    .cc, .cxx and .hip sources as C++). In C++: templates
 *    (ACCEL_KERNEL_TEMPLATE and ACCEL_KERNEL_INSTANCE below), device
 *    functions with references, overloads, default arguments, constexpr
 *    and namespaces, structs with member functions and operators
 *    (ACCEL_DEVICE on members), lambdas and function objects, and the
 *    float overloads of the math functions, all as nvcc and hipcc take
 *    them; no exceptions, RTTI or allocation (no C++ runtime is linked but
 *    the guards of function-local statics). C is C11 with the math
 *    library, and means what it means in C where C and C++ differ
 *    (sizeof('a'), exp of a float computed in double): nvcc, hipcc, NVRTC
 *    and hiprtc compile every body as C++, so a source meant to mean the
 *    same on every form is compiled as C++ on the CPU too.
 *  - On the CPU form: CUDA's vector types (char1 ... double4, laid out as
 *    CUDA's) and their make_* functions, in C and C++; in C++ on the CPU
 *    and under nvcc, element-wise arithmetic on float, double, int and
 *    uint vectors (HIP's vector types have their own; define
 *    ACCEL_NO_VECTOR_OPERATORS where a CUDA source brings its own);
 *    CUDA's fast math intrinsics (__expf, __powf, __fdividef, rsqrtf, ...)
 *    as the precise functions they approximate; __device__, __host__ and
 *    __forceinline__ as nothing and "always inline"; and CUDA's own
 *    spellings in a body (__syncthreads, __shared__, warpSize, atomicAdd,
 *    min, max, ...: "CUDA's own spellings" below).
 */
#ifndef ACCEL_KERNEL_H
#define ACCEL_KERNEL_H

#include <stdint.h>

/* ==== The CPU kernel ABI: what the null plugin loads from an image ==== */

/*
 * Version of the structs below. The null plugin refuses a descriptor whose
 * abi it does not know. A change to either struct's layout bumps it.
 * ABI 2 added the block runtime (barriers, warp operations) and run_thread;
 * ABI 3 the typed signature (each parameter's kind, element type and
 * name) and run_regions, which accel-cc's barrier pass fills in. The null
 * plugin still runs ABI 1 images (ACCEL_CPU_KERNEL_ABI_MIN), whose kernels
 * have no barriers, and ABI 2 images, and checks launches of ABI 1 and 2
 * kernels by argument sizes only.
 */
#define ACCEL_CPU_KERNEL_ABI 3
#define ACCEL_CPU_KERNEL_ABI_MIN 1
/* A kernel NAME is exported as the data symbol accel_cpu_kernel_NAME. */
#define ACCEL_CPU_KERNEL_PREFIX "accel_cpu_kernel_"
/*
 * An image may also export the data symbol accel_cpu_params_NAME: the
 * kernel's parameters as declared, each "type name;" ("uint32_t n;float *
 * y;"). ACCEL_KERNEL exports it. The null plugin reads it only in its
 * checked mode (ACCEL_NULL_CHECK), to name in a report the argument an
 * access went through and its element type; an image without it loads
 * and runs the same.
 */
#define ACCEL_CPU_PARAMS_PREFIX "accel_cpu_params_"
/* Equal to ACCEL_KERNEL_MAX_PARAMS in <accel/driver.h>. */
#define ACCEL_CPU_KERNEL_MAX_PARAMS 64

/*
 * What a parameter is, in accel_cpu_kernel.param_kinds: a pointer (a device
 * address, which a launch passes as a ref) or a value.
 */
#define ACCEL_CPU_PARAM_POINTER 1
#define ACCEL_CPU_PARAM_VALUE 2

/* The warp operations accel_cpu_runtime.warp_op performs. */
enum accel_cpu_warp_op {
    ACCEL_CPU_WARP_SYNC = 0,     /* no value; returns 0 */
    ACCEL_CPU_WARP_SHFL_IDX = 1, /* the value of lane `arg` */
    ACCEL_CPU_WARP_SHFL_UP = 2, /* the value of lane - arg, or the caller's own */
    ACCEL_CPU_WARP_SHFL_DOWN = 3, /* the value of lane + arg, or the caller's own */
    ACCEL_CPU_WARP_SHFL_XOR = 4, /* the value of lane ^ arg, or the caller's own */
    ACCEL_CPU_WARP_BALLOT = 5, /* bit l set when lane l's value is non-zero */
    ACCEL_CPU_WARP_ALL = 6     /* 1 when every lane's value is non-zero */
};

/*
 * What a kernel calls in the plugin (ABI 2). `thread` is the caller's
 * linear index in its block (x fastest). Neither returns when the call is
 * an error (a barrier not every thread reaches): the plugin abandons the
 * block and fails the launch.
 */
struct accel_cpu_runtime {
    /* accel_sync_threads(): returns once every thread of the block has called it. */
    void (*sync_threads)(void *state, uint32_t thread);
    /*
     * A warp operation over the lanes in `mask` (bit l: lane l of the
     * caller's warp of 32); returns once every such lane of the block has
     * called it, with the caller's result.
     */
    uint64_t (*warp_op)(void *state, uint32_t thread, uint32_t op,
                        uint64_t mask, uint64_t value, uint32_t arg);
};

/* The block a run_block or run_thread call executes. */
struct accel_cpu_block {
    uint32_t grid_dim[3];  /* blocks in the grid, x y z */
    uint32_t block_dim[3]; /* threads in a block, x y z */
    uint32_t block_idx[3]; /* this block */
    uint32_t shared_bytes; /* the launch's dynamic shared memory per block */
    void *shared;          /* shared_bytes, 64-byte aligned; NULL when 0 */
    /* Since ABI 2. */
    uint32_t first_thread; /* run_block runs the threads from this linear index on */
    const struct accel_cpu_runtime *runtime;
    void *runtime_state; /* the plugin's, passed back to the runtime */
};

/*
 * A kernel's descriptor, exported with default visibility as
 * accel_cpu_kernel_NAME (the rest of the image may be hidden).
 *
 * run_block runs the threads of one block from linear index
 * block->first_thread to the last (ABI 1: every thread), one after
 * another; run_thread runs one thread. args[i] points to the bytes of
 * argument i, param_sizes[i] of them, aligned to the smaller of 16 and the
 * size rounded up to a power of two. A device pointer argument is a
 * uint64_t holding the address, which on the CPU plugin is a host pointer.
 * Both are called from several threads at once, for different blocks.
 *
 * The typed signature (ABI 3) is what accel_launch checks arguments
 * against: param_kinds[i] is ACCEL_CPU_PARAM_POINTER or
 * ACCEL_CPU_PARAM_VALUE; param_types[i] is the accel_elem_type (the
 * numbering of <accel/accel.h>) of a pointer's pointee or of a scalar
 * value, 0 (ACCEL_BYTE) where the type has none (void *, a struct, a
 * pointer to a pointer); param_names holds each parameter's name after a
 * space (" n a x y"). ACCEL_KERNEL fills all three from the declaration.
 */
struct accel_cpu_kernel {
    uint32_t abi; /* ACCEL_CPU_KERNEL_ABI */
    uint32_t param_count;
    uint32_t param_sizes[ACCEL_CPU_KERNEL_MAX_PARAMS];
    void (*run_block)(const struct accel_cpu_block *block, void *const *args);
    /* Since ABI 2. */
    void (*run_thread)(const struct accel_cpu_block *block, void *const *args,
                       uint32_t thread);
    /* Since ABI 3. */
    const char *param_names;
    uint8_t param_kinds[ACCEL_CPU_KERNEL_MAX_PARAMS];
    uint8_t param_types[ACCEL_CPU_KERNEL_MAX_PARAMS];
    /*
     * Since ABI 3; NULL unless accel-cc's barrier pass (tools/cbs) built the
     * kernel. Runs the whole block, every thread, as loops over the block's
     * threads between its barriers, keeping what each thread carries across
     * a barrier in `scratch`: at least (threads in the block) *
     * region_thread_bytes + 64 bytes, 64-byte aligned, for the call alone.
     * It never calls block->runtime. Returns ACCEL_CPU_REGIONS_OK, or
     * ACCEL_CPU_REGIONS_DISAGREE(...) when the threads did not all reach the
     * same barrier or all return (the block's work is then incomplete).
     */
    uint64_t (*run_regions)(const struct accel_cpu_block *block,
                            void *const *args, void *scratch);
    uint32_t region_thread_bytes;
};

/*
 * run_regions's result. Where the threads disagreed, it names the first
 * thread (linear index) that did other than thread 0, what that thread did
 * and what thread 0 did: ACCEL_CPU_REGIONS_RETURNED, or k >= 1 for "waits
 * at the kernel's k-th barrier" (numbered by the pass).
 */
#define ACCEL_CPU_REGIONS_OK 0u
#define ACCEL_CPU_REGIONS_RETURNED 0u
#define ACCEL_CPU_REGIONS_DISAGREE(thread, did, thread0_did)                   \
    ((uint64_t)(thread) + 1u | (uint64_t)(did) << 32 |                         \
     (uint64_t)(thread0_did) << 48)
#define ACCEL_CPU_REGIONS_THREAD(result) ((uint32_t)(result)-1u)
#define ACCEL_CPU_REGIONS_DID(result) ((uint32_t)((result) >> 32 & 0xffffu))
#define ACCEL_CPU_REGIONS_THREAD0_DID(result) ((uint32_t)((result) >> 48))

/* ==== Single-source kernels ==== */

/*
 * Which form this compilation produces: exactly one of ACCEL_KERNEL_CUDA,
 * ACCEL_KERNEL_HIP and ACCEL_KERNEL_CPU is 1. ACCEL_KERNEL_GPU is 1 for
 * either GPU form.
 */
#if defined(__HIP__) || defined(__HIPCC__)
#define ACCEL_KERNEL_HIP 1
#define ACCEL_KERNEL_CUDA 0
#define ACCEL_KERNEL_CPU 0
#elif defined(__CUDACC__)
#define ACCEL_KERNEL_HIP 0
#define ACCEL_KERNEL_CUDA 1
#define ACCEL_KERNEL_CPU 0
#else
#define ACCEL_KERNEL_HIP 0
#define ACCEL_KERNEL_CUDA 0
#define ACCEL_KERNEL_CPU 1
#endif
#define ACCEL_KERNEL_GPU (ACCEL_KERNEL_CUDA || ACCEL_KERNEL_HIP)

/* The most parameters ACCEL_KERNEL takes. */
#define ACCEL_KERNEL_MACRO_MAX_PARAMS 16

/*
 * ACCEL_KERNEL(name, (T1, p1), (T2, p2), ...) { body }
 *
 * Declares kernel `name` with parameters p1 of type T1, ... . The body
 * follows like a function body; `return` ends the calling thread.
 */
#define ACCEL_KERNEL(...)                                                      \
    ACCEL__KERNEL_EXPANDED(ACCEL__FIRST(__VA_ARGS__),                          \
                           ACCEL__COUNT(__VA_ARGS__), __VA_ARGS__)
/* One more level, so that the name and count are expanded before ## pastes. */
#define ACCEL__KERNEL_EXPANDED(name, n, ...) ACCEL__KERNEL(name, n, __VA_ARGS__)

/*
 * C++ only: a kernel templated on types and constants, and the instances
 * the host launches by name.
 *
 *     ACCEL_KERNEL_TEMPLATE((typename T, uint32_t B), block_sum,
 *                           (const T *, x), (T *, sums))
 *     { ... T and B in the body ... }
 *     ACCEL_KERNEL_INSTANCE(block_sum, (float, 256u), block_sum_f32,
 *                           (const float *, x), (float *, sums))
 *
 * ACCEL_KERNEL_TEMPLATE(tparams, name, params...) takes the template's
 * parameter list in parentheses, then what ACCEL_KERNEL takes; `return`
 * ends the thread. ACCEL_KERNEL_INSTANCE(template, targs, name,
 * params...) declares kernel `name` (extern "C", the same name under
 * nvcc, hipcc and the CPU compiler) running template<targs>, with the
 * parameters spelled out as the instance has them: the CPU form checks
 * at compile time that they are the specialisation's, and records them
 * as the kernel's typed signature. The body is a device function under
 * nvcc and hipcc (barriers and shared arrays are allowed there).
 */
#define ACCEL_KERNEL_TEMPLATE(tparams, ...)                                    \
    ACCEL__KERNEL_TEMPLATE_EXPANDED(tparams, ACCEL__FIRST(__VA_ARGS__),        \
                                    ACCEL__COUNT(__VA_ARGS__), __VA_ARGS__)
#define ACCEL__KERNEL_TEMPLATE_EXPANDED(tparams, name, n, ...)                 \
    ACCEL__KERNEL_TEMPLATE(tparams, name, n, __VA_ARGS__)
#define ACCEL_KERNEL_INSTANCE(tmpl, targs, ...)                                \
    ACCEL__KERNEL_INSTANCE_EXPANDED(tmpl, targs, ACCEL__FIRST(__VA_ARGS__),    \
                                    ACCEL__COUNT(__VA_ARGS__), __VA_ARGS__)
#define ACCEL__KERNEL_INSTANCE_EXPANDED(tmpl, targs, name, n, ...)             \
    ACCEL__KERNEL_INSTANCE(tmpl, targs, name, n, __VA_ARGS__)

/*
 * Global thread index and grid size in threads, per dimension, as 64-bit
 * values: blockIdx * blockDim + threadIdx does not overflow.
 */
#define accel_global_idx_x() ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x)
#define accel_global_idx_y() ((uint64_t)blockIdx.y * blockDim.y + threadIdx.y)
#define accel_global_idx_z() ((uint64_t)blockIdx.z * blockDim.z + threadIdx.z)
#define accel_global_size_x() ((uint64_t)gridDim.x * blockDim.x)
#define accel_global_size_y() ((uint64_t)gridDim.y * blockDim.y)
#define accel_global_size_z() ((uint64_t)gridDim.z * blockDim.z)

/*
 * A set of lanes of a warp, bit l for lane l: 64 bits, since an AMD
 * wavefront has 64 lanes. ACCEL_LANES_ALL names every lane of the warp.
 */
typedef uint64_t accel_lane_mask;
#define ACCEL_LANES_ALL (~(accel_lane_mask)0)

#if ACCEL_KERNEL_GPU
/* ---- CUDA and HIP: the compilers' own kernels ---- */

#if ACCEL_KERNEL_HIP
#include <hip/hip_runtime.h>
#endif

#define ACCEL_RESTRICT __restrict__
/* A helper function callable from kernels. */
#define ACCEL_DEVICE_FN static __device__ __forceinline__
#define ACCEL_KERNEL_HAS_BARRIERS 1
#define accel_sync_threads() __syncthreads()
#define accel_thread_fence() __threadfence()
#define accel_thread_fence_block() __threadfence_block()

/* `type *name` pointing at the launch's dynamic shared memory. */
#define ACCEL_SHARED_DYNAMIC(type, name)                                       \
    extern __shared__ __align__(16) unsigned char accel__shared_bytes[];       \
    type *name = (type *)accel__shared_bytes
/* `type name[count]`, one per block. */
#define ACCEL_SHARED(type, name, count) __shared__ type name[count]

/* The thread's linear index in its block, x fastest, and its warp lane. */
#define accel_thread_rank()                                                    \
    (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))
#define accel_warp_size() ((uint32_t)warpSize)
#define accel_lane_id() (accel_thread_rank() % accel_warp_size())
/* The number of bits set in a lane mask (or any 64-bit value). */
#define accel_popcount64(x) ((uint32_t)__popcll((unsigned long long)(x)))

#if ACCEL_KERNEL_CUDA
/* CUDA's _sync forms take a 32-bit mask: a warp has 32 lanes. */
#define ACCEL__MASK32(mask) ((unsigned)(mask))
#define accel_shfl_sync(mask, v, src) __shfl_sync(ACCEL__MASK32(mask), v, src)
#define accel_shfl_up_sync(mask, v, d) __shfl_up_sync(ACCEL__MASK32(mask), v, d)
#define accel_shfl_down_sync(mask, v, d)                                       \
    __shfl_down_sync(ACCEL__MASK32(mask), v, d)
#define accel_shfl_xor_sync(mask, v, m)                                        \
    __shfl_xor_sync(ACCEL__MASK32(mask), v, m)
#define accel_ballot_sync(mask, pred)                                          \
    ((accel_lane_mask)__ballot_sync(ACCEL__MASK32(mask), pred))
#define accel_any_sync(mask, pred) __any_sync(ACCEL__MASK32(mask), pred)
#define accel_all_sync(mask, pred) __all_sync(ACCEL__MASK32(mask), pred)
#define accel_warp_sync(mask) __syncwarp(ACCEL__MASK32(mask))
#else
/*
 * HIP: the wavefront runs in lockstep and HIP's portable forms take no
 * mask; the mask is evaluated and every lane of the wavefront takes part.
 */
#define accel_shfl_sync(mask, v, src) ((void)(mask), __shfl(v, src))
#define accel_shfl_up_sync(mask, v, d) ((void)(mask), __shfl_up(v, d))
#define accel_shfl_down_sync(mask, v, d) ((void)(mask), __shfl_down(v, d))
#define accel_shfl_xor_sync(mask, v, m) ((void)(mask), __shfl_xor(v, m))
#define accel_ballot_sync(mask, pred)                                          \
    ((void)(mask), (accel_lane_mask)__ballot(pred))
#define accel_any_sync(mask, pred) ((void)(mask), __any(pred))
#define accel_all_sync(mask, pred) ((void)(mask), __all(pred))
#define accel_warp_sync(mask) ((void)(mask), __builtin_amdgcn_wave_barrier())
#endif

#define ACCEL__KERNEL(name, n, ...)                                            \
    extern "C" __global__ void name(ACCEL__LIST(n, ACCEL__GPU_DECL, __VA_ARGS__))
#define ACCEL__GPU_DECL(i, pair) ACCEL__DECL pair
/* A template's body is a device function; each instance a kernel calling it. */
#define ACCEL__KERNEL_TEMPLATE(tparams, name, n, ...)                          \
    template <ACCEL__UNPAREN tparams>                                          \
    __device__ __forceinline__ void accel__body_##name(                        \
        ACCEL__LIST(n, ACCEL__GPU_DECL, __VA_ARGS__))
#define ACCEL__KERNEL_INSTANCE(tmpl, targs, name, n, ...)                         \
    extern "C" __global__ void name(ACCEL__LIST(n, ACCEL__GPU_DECL, __VA_ARGS__)) \
    {                                                                             \
        accel__body_##tmpl<ACCEL__UNPAREN targs>(                                 \
            ACCEL__LIST(n, ACCEL__GPU_NAME, __VA_ARGS__));                        \
    }
#define ACCEL__GPU_NAME(i, pair) ACCEL__NAME pair
/* Functions and member functions callable from kernels (C++ too). */
#define ACCEL_DEVICE __device__
#define ACCEL__VEC_FN static __host__ __device__ __forceinline__

/*
 * Atomics, relaxed, on global or shared memory: T is the function's type,
 * B the type CUDA's and HIP's bitwise forms take (same width), M the type
 * their min and max take (same signedness). Subtraction is the addition
 * of the negated value, which is the same bits.
 */
#define ACCEL__GPU_ATOMICS(sfx, T, B, M, MINMAX)                               \
    ACCEL_DEVICE_FN T accel_atomic_add_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicAdd((B *)p, (B)v);                                     \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_sub_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicAdd((B *)p, (B)(0ull - (unsigned long long)v));        \
    }                                                                          \
    MINMAX(sfx, T, B, M)                                                       \
    ACCEL_DEVICE_FN T accel_atomic_exch_##sfx(T *p, T v)                       \
    {                                                                          \
        return (T)atomicExch((B *)p, (B)v);                                    \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_cas_##sfx(T *p, T compare, T v)             \
    {                                                                          \
        return (T)atomicCAS((B *)p, (B)compare, (B)v);                         \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_and_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicAnd((B *)p, (B)v);                                     \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_or_##sfx(T *p, T v)                         \
    {                                                                          \
        return (T)atomicOr((B *)p, (B)v);                                      \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_xor_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicXor((B *)p, (B)v);                                     \
    }

/* Min and max in the compilers' own atomics, where both have them. */
#define ACCEL__GPU_MINMAX(sfx, T, B, M)                                        \
    ACCEL_DEVICE_FN T accel_atomic_min_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicMin((M *)p, (M)v);                                     \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_max_##sfx(T *p, T v)                        \
    {                                                                          \
        return (T)atomicMax((M *)p, (M)v);                                     \
    }
/* Signed 64-bit min and max, which HIP lacks: a compare-and-swap loop. */
#define ACCEL__GPU_MINMAX_CAS(sfx, T, B, M)                                    \
    ACCEL_DEVICE_FN T accel_atomic_min_##sfx(T *p, T v)                        \
    {                                                                          \
        B old = *(volatile B *)p, seen;                                        \
                                                                               \
        while ((T)old > v && (seen = atomicCAS((B *)p, old, (B)v)) != old)     \
            old = seen;                                                        \
        return (T)old;                                                         \
    }                                                                          \
    ACCEL_DEVICE_FN T accel_atomic_max_##sfx(T *p, T v)                        \
    {                                                                          \
        B old = *(volatile B *)p, seen;                                        \
                                                                               \
        while ((T)old < v && (seen = atomicCAS((B *)p, old, (B)v)) != old)     \
            old = seen;                                                        \
        return (T)old;                                                         \
    }

ACCEL__GPU_ATOMICS(i32, int32_t, int, int, ACCEL__GPU_MINMAX)
ACCEL__GPU_ATOMICS(u32, uint32_t, unsigned int, unsigned int, ACCEL__GPU_MINMAX)
ACCEL__GPU_ATOMICS(i64, int64_t, unsigned long long, long long,
                   ACCEL__GPU_MINMAX_CAS)
ACCEL__GPU_ATOMICS(u64, uint64_t, unsigned long long, unsigned long long,
                   ACCEL__GPU_MINMAX)

ACCEL_DEVICE_FN float accel_atomic_add_f32(float *p, float v)
{
    return atomicAdd(p, v);
}
ACCEL_DEVICE_FN double accel_atomic_add_f64(double *p, double v)
{
    return atomicAdd(p, v);
}

#else
/* ---- the CPU form: a block runner and an exported descriptor ---- */

#include <math.h>
#include <stddef.h>
#include <string.h>

/*
 * The CPU form compiles as C11 and as C++17: the spellings that differ
 * between the two languages, and C linkage for what the plugin and the
 * barrier pass look up by name.
 */
#ifdef __cplusplus
#define ACCEL__STATIC_ASSERT(cond, message) static_assert(cond, message)
#define ACCEL__THREAD_LOCAL thread_local
#define ACCEL__ALIGNAS(n) alignas(n)
#define ACCEL__EXTERN_C extern "C"
#define ACCEL__EXTERN_C_BEGIN extern "C" {
#define ACCEL__EXTERN_C_END }
/*
 * A static function's symbol, unmangled, on its declaration: the barrier
 * pass finds its functions by name, and perf maps name the runners.
 */
#define ACCEL__SYMBOL(name) __asm__(#name)
#else
#define ACCEL__STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#define ACCEL__THREAD_LOCAL _Thread_local
#define ACCEL__ALIGNAS(n) _Alignas(n)
#define ACCEL__EXTERN_C
#define ACCEL__EXTERN_C_BEGIN
#define ACCEL__EXTERN_C_END
#define ACCEL__SYMBOL(name)
#endif

ACCEL__STATIC_ASSERT(
    sizeof(void *) == 8,
    "the CPU kernel form needs 64-bit pointers: device addresses are 64-bit");

#define ACCEL_RESTRICT __restrict
#define ACCEL_DEVICE_FN static inline
#define ACCEL_DEVICE
#define ACCEL__VEC_FN static inline
/*
 * CUDA's function qualifiers, so that device functions and member
 * functions written for nvcc compile here: __device__ and __host__ mean
 * nothing on the CPU; __forceinline__ is inline, always.
 */
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#endif

/*
 * CUDA's fast math intrinsics, which nvcc and hipcc have built in. On the
 * CPU each is the precise function of the same name without the
 * underscores (or its definition: rsqrtf is 1 / sqrtf, __saturatef clamps
 * to [0, 1] with NaN to 0, the _rn forms round to nearest as every CPU
 * operation does): results agree with a GPU's within the GPU's stated
 * error for the intrinsic, not bit for bit. Macros, since glibc declares
 * some of the same names (__expf) for itself. A source with CPU
 * definitions of its own for these names defines
 * ACCEL_NO_CUDA_INTRINSICS before including this header.
 */
#ifndef ACCEL_NO_CUDA_INTRINSICS
static inline float accel__cpu_rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
static inline double accel__cpu_rsqrt(double x)
{
    return 1.0 / sqrt(x);
}
static inline float accel__cpu_saturatef(float x)
{
    return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}
static inline float accel__cpu_fdividef(float x, float y)
{
    return x / y;
}
static inline float accel__cpu_exp10f(float x)
{
    return powf(10.0f, x);
}
static inline void accel__cpu_sincosf(float x, float *s, float *c)
{
    *s = sinf(x);
    *c = cosf(x);
}
#define rsqrtf(x) accel__cpu_rsqrtf(x)
#define rsqrt(x) accel__cpu_rsqrt(x)
#define __saturatef(x) accel__cpu_saturatef(x)
#define __fdividef(x, y) accel__cpu_fdividef(x, y)
#define __expf(x) expf(x)
#define __exp10f(x) accel__cpu_exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __powf(x, y) powf(x, y)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __sincosf(x, s, c) accel__cpu_sincosf(x, s, c)
#define __fadd_rn(x, y) ((float)(x) + (float)(y))
#define __fsub_rn(x, y) ((float)(x) - (float)(y))
#define __fmul_rn(x, y) ((float)(x) * (float)(y))
#define __fdiv_rn(x, y) ((float)(x) / (float)(y))
#define __fmaf_rn(x, y, z) fmaf(x, y, z)
#define __frcp_rn(x) (1.0f / (float)(x))
#define __fsqrt_rn(x) sqrtf(x)
#endif /* ACCEL_NO_CUDA_INTRINSICS */
/* 1 in every form since CPU kernel ABI 2; kept for sources that test it. */
#define ACCEL_KERNEL_HAS_BARRIERS 1

/* CUDA's dim3, as the CPU form's indices. */
struct accel_cpu_dim3 {
    uint32_t x, y, z;
};

/* One thread's view, handed to the kernel body. */
struct accel_cpu_thread {
    struct accel_cpu_dim3 thread_idx;
    struct accel_cpu_dim3 block_idx;
    struct accel_cpu_dim3 block_dim;
    struct accel_cpu_dim3 grid_dim;
    void *shared;
    uint32_t rank; /* linear index in the block, x fastest */
    const struct accel_cpu_block *block;
};

#define threadIdx (accel__thread->thread_idx)
#define blockIdx (accel__thread->block_idx)
#define blockDim (accel__thread->block_dim)
#define gridDim (accel__thread->grid_dim)

#define ACCEL_SHARED_DYNAMIC(type, name)                                       \
    type *name = (type *)accel__thread->shared
/*
 * What an AddressSanitizer image keeps in the poisoned zones on either side
 * of a static shared array (below), for the null plugin's report; a type
 * only, which normal images never use.
 */
struct accel__shared_zone {
    const void *self; /* the zone's own address: how a reader knows one */
    const void *array;
    const char *declaration; /* "float s[32]" */
    uint32_t bytes;
    uint32_t element_bytes;
};
ACCEL__STATIC_ASSERT(sizeof(struct accel__shared_zone) == 32,
                     "a shared array's zone is 32 bytes");

/*
 * A static shared array: one per host thread, and a host thread runs one
 * block at a time, all of its threads, so one per block as on a GPU.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ACCEL__CPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACCEL__CPU_ASAN 1
#endif
#endif
#ifndef ACCEL__CPU_ASAN
#define ACCEL_SHARED(type, name, count)                                        \
    ACCEL__ALIGNAS(16) static ACCEL__THREAD_LOCAL type name[count]
#else
/*
 * In an AddressSanitizer image (accel-cc --check) only: ASan puts no red
 * zones around thread-local arrays, so the array lies between two poisoned
 * zones of its own, each holding a description of it (struct
 * accel__shared_zone, above) that the null plugin's report reads to name
 * the array. `name` is then a const pointer to the array's first element
 * (`type *const`; of a 2D array a pointer to its first row), indexed as
 * the array is (sizeof(name) is a pointer's there: use the count). The zones are written and poisoned
 * by the first thread that declares the array on each host thread.
 */
/* After the array: up to 15 bytes to the next 16, a zone, and 17 more. */
#define ACCEL__SHARED_HI_BYTES 64u

ACCEL__EXTERN_C void __asan_poison_memory_region(void const volatile *address,
                                                 size_t bytes);

__attribute__((no_sanitize_address)) static inline void *
accel__shared_arm(void *whole, size_t whole_bytes, size_t array_offset,
                  uint32_t bytes, uint32_t element_bytes, const char *declaration)
{
    struct accel__shared_zone *lo = (struct accel__shared_zone *)whole;
    char *array = (char *)whole + array_offset;
    uintptr_t end = (uintptr_t)array + bytes;
    struct accel__shared_zone *hi = (struct accel__shared_zone *)((end + 15u) &
                                                                  ~(uintptr_t)15u);

    if (lo->self == lo && lo->array == array)
        return array; /* armed on this host thread already */
    lo->self = lo;
    lo->array = array;
    lo->declaration = declaration;
    lo->bytes = bytes;
    lo->element_bytes = element_bytes;
    *hi = *lo;
    hi->self = hi;
    __asan_poison_memory_region(whole, array_offset);
    __asan_poison_memory_region(
        (void *)end, (size_t)((char *)whole + whole_bytes - (char *)end));
    return array;
}

#define ACCEL_SHARED(type, name, count)                                        \
    ACCEL__ALIGNAS(16) static ACCEL__THREAD_LOCAL struct {                     \
        struct accel__shared_zone lo;                                          \
        ACCEL__ALIGNAS(16) type array[count];                                  \
        unsigned char hi[ACCEL__SHARED_HI_BYTES];                              \
    } accel__shared_##name;                                                    \
    __typeof__(accel__shared_##name.array[0]) *const name =                    \
        (__typeof__(accel__shared_##name.array[0]) *)accel__shared_arm(        \
            &accel__shared_##name, sizeof(accel__shared_##name),               \
            offsetof(__typeof__(accel__shared_##name), array),                 \
            (uint32_t)sizeof(accel__shared_##name.array),                      \
            (uint32_t)sizeof(type), #type " " #name "[" #count "]")
#endif

#define accel_thread_rank() (accel__thread->rank)
#define accel_warp_size() 32u
#define accel_lane_id() (accel__thread->rank % 32u)
#define accel_popcount64(x)                                                    \
    ((uint32_t)__builtin_popcountll((unsigned long long)(x)))

/*
 * A block's threads run on one host thread: a block fence needs only the
 * compiler's ordering; a device fence orders against other blocks.
 */
#define accel_thread_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define accel_thread_fence_block() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline void accel__cpu_dim3_set(struct accel_cpu_dim3 *d,
                                       const uint32_t v[3])
{
    d->x = v[0];
    d->y = v[1];
    d->z = v[2];
}

static inline void accel__cpu_thread_begin(struct accel_cpu_thread *t,
                                           const struct accel_cpu_block *b)
{
    t->thread_idx.x = t->thread_idx.y = t->thread_idx.z = 0;
    accel__cpu_dim3_set(&t->block_idx, b->block_idx);
    accel__cpu_dim3_set(&t->block_dim, b->block_dim);
    accel__cpu_dim3_set(&t->grid_dim, b->grid_dim);
    t->shared = b->shared;
    t->rank = 0;
    t->block = b;
}

/* ---- barriers and warp operations: calls into the plugin ---- */

static inline void accel__cpu_sync_threads(const struct accel_cpu_thread *t)
{
    t->block->runtime->sync_threads(t->block->runtime_state, t->rank);
}

#ifdef ACCEL__CPU_CBS
/*
 * Defined by accel-cc (clang only) when it builds through its barrier pass
 * (tools/cbs): a barrier is a call to this named function, which the pass
 * finds and splits the kernel at. Left in place (run_block, run_thread, a
 * kernel the pass does not take), it is the runtime's barrier. convergent
 * and noduplicate keep clang from copying a barrier into the two sides of
 * a branch before the pass sees it.
 */
ACCEL__EXTERN_C_BEGIN
void accel__cbs_barrier(const struct accel_cpu_block *b, uint32_t rank);
__attribute__((weak, visibility("hidden"), noinline, convergent, noduplicate)) void
accel__cbs_barrier(const struct accel_cpu_block *b, uint32_t rank)
{
    b->runtime->sync_threads(b->runtime_state, rank);
}
ACCEL__EXTERN_C_END
#define accel_sync_threads()                                                   \
    accel__cbs_barrier(accel__thread->block, accel__thread->rank)
#else
#define accel_sync_threads() accel__cpu_sync_threads(accel__thread)
#endif

static inline uint64_t accel__cpu_warp(const struct accel_cpu_thread *t,
                                       uint32_t op, accel_lane_mask mask,
                                       uint64_t value, uint32_t arg)
{
    return t->block->runtime->warp_op(t->block->runtime_state, t->rank, op,
                                      mask, value, arg);
}

/* A shuffle of each type CUDA's __shfl_sync takes, through its bits. */
#define ACCEL__CPU_SHFL(sfx, T)                                                \
    static inline T accel__shfl_##sfx(const struct accel_cpu_thread *t,        \
                                      uint32_t op, accel_lane_mask mask, T v,  \
                                      int arg)                                 \
    {                                                                          \
        uint64_t bits = 0;                                                     \
        T out;                                                                 \
                                                                               \
        memcpy(&bits, &v, sizeof(v));                                          \
        bits = accel__cpu_warp(t, op, mask, bits, (uint32_t)arg);              \
        memcpy(&out, &bits, sizeof(out));                                      \
        return out;                                                            \
    }
#ifdef __cplusplus
/* C++: one overloaded name, where C picks a function by _Generic. */
#define ACCEL__CPU_SHFL_OVERLOAD(sfx, T)                                       \
    static inline T accel__shfl(const struct accel_cpu_thread *t, uint32_t op, \
                                accel_lane_mask mask, T v, int arg)            \
    {                                                                          \
        return accel__shfl_##sfx(t, op, mask, v, arg);                         \
    }
#else
#define ACCEL__CPU_SHFL_OVERLOAD(sfx, T)
#endif
#define ACCEL__CPU_SHFL_BOTH(sfx, T)                                           \
    ACCEL__CPU_SHFL(sfx, T) ACCEL__CPU_SHFL_OVERLOAD(sfx, T)
ACCEL__CPU_SHFL_BOTH(i, int)
ACCEL__CPU_SHFL_BOTH(u, unsigned int)
ACCEL__CPU_SHFL_BOTH(l, long)
ACCEL__CPU_SHFL_BOTH(ul, unsigned long)
ACCEL__CPU_SHFL_BOTH(ll, long long)
ACCEL__CPU_SHFL_BOTH(ull, unsigned long long)
ACCEL__CPU_SHFL_BOTH(f, float)
ACCEL__CPU_SHFL_BOTH(d, double)
#ifdef __cplusplus
#define ACCEL__SHFL(op, mask, v, arg)                                          \
    accel__shfl(accel__thread, op, mask, v, arg)
#else
#define ACCEL__SHFL(op, mask, v, arg)                                          \
    _Generic((v), int                                                          \
             : accel__shfl_i, unsigned int                                     \
             : accel__shfl_u, long                                             \
             : accel__shfl_l, unsigned long                                    \
             : accel__shfl_ul, long long                                       \
             : accel__shfl_ll, unsigned long long                              \
             : accel__shfl_ull, float                                          \
             : accel__shfl_f, double                                           \
             : accel__shfl_d)(accel__thread, op, mask, v, arg)
#endif

#define accel_shfl_sync(mask, v, src)                                          \
    ACCEL__SHFL(ACCEL_CPU_WARP_SHFL_IDX, mask, v, src)
#define accel_shfl_up_sync(mask, v, d)                                         \
    ACCEL__SHFL(ACCEL_CPU_WARP_SHFL_UP, mask, v, d)
#define accel_shfl_down_sync(mask, v, d)                                       \
    ACCEL__SHFL(ACCEL_CPU_WARP_SHFL_DOWN, mask, v, d)
#define accel_shfl_xor_sync(mask, v, m)                                        \
    ACCEL__SHFL(ACCEL_CPU_WARP_SHFL_XOR, mask, v, m)
#define accel_ballot_sync(mask, pred)                                          \
    ((accel_lane_mask)accel__cpu_warp(accel__thread, ACCEL_CPU_WARP_BALLOT,    \
                                      mask, (pred) != 0, 0))
#define accel_any_sync(mask, pred) ((int)(accel_ballot_sync(mask, pred) != 0))
#define accel_all_sync(mask, pred)                                             \
    ((int)accel__cpu_warp(accel__thread, ACCEL_CPU_WARP_ALL, mask,             \
                          (pred) != 0, 0))
#define accel_warp_sync(mask)                                                  \
    ((void)accel__cpu_warp(accel__thread, ACCEL_CPU_WARP_SYNC, mask, 0, 0))

/* ---- atomics ---- */

/*
 * Atomics, relaxed like CUDA's, on global or shared memory. They are real
 * atomics on the CPU too: blocks run in parallel. Min and max are a
 * compare-and-swap loop; floating-point adds too, on the value's bytes
 * (the generic __atomic builtins compare bits).
 */
#define ACCEL__CPU_ATOMICS(sfx, T)                                             \
    static inline T accel_atomic_add_##sfx(T *p, T v)                          \
    {                                                                          \
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                     \
    }                                                                          \
    static inline T accel_atomic_sub_##sfx(T *p, T v)                          \
    {                                                                          \
        return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);                     \
    }                                                                          \
    static inline T accel_atomic_min_##sfx(T *p, T v)                          \
    {                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                          \
                                                                               \
        while (v < old &&                                                      \
               !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED,   \
                                            __ATOMIC_RELAXED))                 \
            ;                                                                  \
        return old;                                                            \
    }                                                                          \
    static inline T accel_atomic_max_##sfx(T *p, T v)                          \
    {                                                                          \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                          \
                                                                               \
        while (v > old &&                                                      \
               !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED,   \
                                            __ATOMIC_RELAXED))                 \
            ;                                                                  \
        return old;                                                            \
    }                                                                          \
    static inline T accel_atomic_exch_##sfx(T *p, T v)                         \
    {                                                                          \
        return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);                    \
    }                                                                          \
    static inline T accel_atomic_cas_##sfx(T *p, T compare, T v)               \
    {                                                                          \
        __atomic_compare_exchange_n(p, &compare, v, 0, __ATOMIC_RELAXED,       \
                                    __ATOMIC_RELAXED);                         \
        return compare;                                                        \
    }                                                                          \
    static inline T accel_atomic_and_##sfx(T *p, T v)                          \
    {                                                                          \
        return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);                     \
    }                                                                          \
    static inline T accel_atomic_or_##sfx(T *p, T v)                           \
    {                                                                          \
        return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);                      \
    }                                                                          \
    static inline T accel_atomic_xor_##sfx(T *p, T v)                          \
    {                                                                          \
        return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);                     \
    }

ACCEL__CPU_ATOMICS(i32, int32_t)
ACCEL__CPU_ATOMICS(u32, uint32_t)
ACCEL__CPU_ATOMICS(i64, int64_t)
ACCEL__CPU_ATOMICS(u64, uint64_t)

static inline float accel_atomic_add_f32(float *p, float v)
{
    float old, sum;

    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        sum = old + v;
    } while (!__atomic_compare_exchange(p, &old, &sum, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return old;
}
static inline double accel_atomic_add_f64(double *p, double v)
{
    double old, sum;

    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        sum = old + v;
    } while (!__atomic_compare_exchange(p, &old, &sum, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return old;
}

/*
 * CUDA's own spellings in kernel bodies, so that a body written for nvcc
 * compiles here unchanged (nvcc and hipcc have them built in). Leave them
 * out with ACCEL_NO_CUDA_SPELLINGS.
 *
 *  - __syncthreads(), __threadfence(), __threadfence_block(), warpSize
 *    (32), __syncwarp(mask) and the _sync shuffles (without CUDA's width
 *    argument), ballot and votes: the accel_* operations above, in the
 *    kernel body.
 *  - __shared__ on a declaration: a static thread-local array, one per
 *    block as ACCEL_SHARED's, without the checked image's red zones
 *    (accel-cc --check cannot name or fence it: use ACCEL_SHARED for
 *    that). `extern __shared__` (dynamic shared memory) is not offered:
 *    use ACCEL_SHARED_DYNAMIC.
 *  - __ldg(p) is *p; __mul24 and __umul24 multiply; __popc, __popcll,
 *    __clz, __clzll, __ffs, __ffsll, __brev count and reverse bits;
 *    __float_as_int, __int_as_float, __float_as_uint, __uint_as_float,
 *    __double_as_longlong and __longlong_as_double reinterpret bits.
 *  - In C++: atomicAdd, atomicSub, atomicExch, atomicMin, atomicMax,
 *    atomicAnd, atomicOr, atomicXor and atomicCAS overloaded for int,
 *    unsigned int, unsigned long long (and atomicAdd for float and
 *    double), relaxed like CUDA's; min and max overloaded for the integer
 *    types and float and double, as CUDA's device code has them.
 */
#ifndef ACCEL_NO_CUDA_SPELLINGS
#define __syncthreads() accel_sync_threads()
#define __threadfence() accel_thread_fence()
#define __threadfence_block() accel_thread_fence_block()
/* __syncwarp() is every lane's, as CUDA's default mask. */
#define __syncwarp(...)                                                        \
    accel_warp_sync(sizeof(#__VA_ARGS__) == 1                                  \
                        ? ACCEL_LANES_ALL                                      \
                        : (accel_lane_mask)(__VA_ARGS__ + 0))
#define warpSize 32
#define __shfl_sync(mask, v, src) accel_shfl_sync(mask, v, src)
#define __shfl_up_sync(mask, v, d) accel_shfl_up_sync(mask, v, d)
#define __shfl_down_sync(mask, v, d) accel_shfl_down_sync(mask, v, d)
#define __shfl_xor_sync(mask, v, m) accel_shfl_xor_sync(mask, v, m)
#define __ballot_sync(mask, pred) ((unsigned)accel_ballot_sync(mask, pred))
#define __any_sync(mask, pred) accel_any_sync(mask, pred)
#define __all_sync(mask, pred) accel_all_sync(mask, pred)
#define __shared__ ACCEL__ALIGNAS(16) static ACCEL__THREAD_LOCAL
#define __ldg(p) (*(p))
#define __mul24(a, b) ((int)(a) * (int)(b))
#define __umul24(a, b) ((unsigned)(a) * (unsigned)(b))
#define __popc(x) __builtin_popcount((unsigned)(x))
#define __popcll(x) __builtin_popcountll((unsigned long long)(x))
static inline int accel__cpu_clz(unsigned x)
{
    return x == 0 ? 32 : __builtin_clz(x);
}
static inline int accel__cpu_clzll(unsigned long long x)
{
    return x == 0 ? 64 : __builtin_clzll(x);
}
static inline unsigned accel__cpu_brev(unsigned x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    return __builtin_bswap32(x);
}
#define __clz(x) accel__cpu_clz((unsigned)(x))
#define __clzll(x) accel__cpu_clzll((unsigned long long)(x))
#define __ffs(x) __builtin_ffs((int)(x))
#define __ffsll(x) __builtin_ffsll((long long)(x))
#define __brev(x) accel__cpu_brev((unsigned)(x))
#define ACCEL__CPU_BITS(name, From, To)                                        \
    static inline To accel__cpu_##name(From v)                                 \
    {                                                                          \
        To out;                                                                \
        memcpy(&out, &v, sizeof(out));                                         \
        return out;                                                            \
    }
ACCEL__CPU_BITS(float_as_int, float, int)
ACCEL__CPU_BITS(int_as_float, int, float)
ACCEL__CPU_BITS(float_as_uint, float, unsigned)
ACCEL__CPU_BITS(uint_as_float, unsigned, float)
ACCEL__CPU_BITS(double_as_longlong, double, long long)
ACCEL__CPU_BITS(longlong_as_double, long long, double)
#define __float_as_int(x) accel__cpu_float_as_int(x)
#define __int_as_float(x) accel__cpu_int_as_float(x)
#define __float_as_uint(x) accel__cpu_float_as_uint(x)
#define __uint_as_float(x) accel__cpu_uint_as_float(x)
#define __double_as_longlong(x) accel__cpu_double_as_longlong(x)
#define __longlong_as_double(x) accel__cpu_longlong_as_double(x)

#ifdef __cplusplus
#define ACCEL__CPU_ATOMIC_OVERLOADS(T, sfx)                                    \
    static inline T atomicAdd(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_add_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicSub(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_sub_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicExch(T *p, T v)                                      \
    {                                                                          \
        return accel_atomic_exch_##sfx(p, v);                                  \
    }                                                                          \
    static inline T atomicMin(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_min_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicMax(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_max_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicAnd(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_and_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicOr(T *p, T v)                                        \
    {                                                                          \
        return accel_atomic_or_##sfx(p, v);                                    \
    }                                                                          \
    static inline T atomicXor(T *p, T v)                                       \
    {                                                                          \
        return accel_atomic_xor_##sfx(p, v);                                   \
    }                                                                          \
    static inline T atomicCAS(T *p, T compare, T v)                            \
    {                                                                          \
        return accel_atomic_cas_##sfx(p, compare, v);                          \
    }
ACCEL__CPU_ATOMIC_OVERLOADS(int, i32)
ACCEL__CPU_ATOMIC_OVERLOADS(unsigned int, u32)
/* unsigned long long: CUDA's 64-bit atomics' type, not uint64_t's here. */
ACCEL__CPU_ATOMICS(ull, unsigned long long)
ACCEL__CPU_ATOMIC_OVERLOADS(unsigned long long, ull)
static inline float atomicAdd(float *p, float v)
{
    return accel_atomic_add_f32(p, v);
}
static inline double atomicAdd(double *p, double v)
{
    return accel_atomic_add_f64(p, v);
}
#define ACCEL__CPU_MIN_MAX(T)                                                  \
    static inline T min(T a, T b)                                              \
    {                                                                          \
        return b < a ? b : a;                                                  \
    }                                                                          \
    static inline T max(T a, T b)                                              \
    {                                                                          \
        return a < b ? b : a;                                                  \
    }
ACCEL__CPU_MIN_MAX(int)
ACCEL__CPU_MIN_MAX(unsigned int)
ACCEL__CPU_MIN_MAX(long)
ACCEL__CPU_MIN_MAX(unsigned long)
ACCEL__CPU_MIN_MAX(long long)
ACCEL__CPU_MIN_MAX(unsigned long long)
static inline float min(float a, float b)
{
    return fminf(a, b);
}
static inline float max(float a, float b)
{
    return fmaxf(a, b);
}
static inline double min(double a, double b)
{
    return fmin(a, b);
}
static inline double max(double a, double b)
{
    return fmax(a, b);
}
#endif
#endif /* ACCEL_NO_CUDA_SPELLINGS */

#define ACCEL__EXPORT __attribute__((visibility("default")))
#define ACCEL__UNUSED __attribute__((unused))

/*
 * The body becomes a static function of one thread. run_block unpacks the
 * arguments once, then calls the body for each thread of the block from
 * first_thread on; the compiler inlines the body into the loop, so a
 * kernel without barriers runs as a plain loop. run_thread runs one
 * thread: the plugin runs thread 0 with it, and each thread of a block
 * whose thread 0 reached a barrier or a warp operation (see the plugin).
 *
 * A whole row of threads (x from 0) of a block 32 wide, or a multiple of
 * 32, runs as loops of exactly 32 threads: with the trip count known, gcc
 * vectorises them as whole vectors with no prologue, epilogue or
 * trip-count tests, where a loop of blockDim.x threads paid those on every
 * row (BENCHMARKS.md, "Barrier-free kernels: rows of 32 threads").
 * Each row's loop also tells the compiler that its threads are
 * independent (ivdep): between barriers the threads of a block have no
 * order, and running a warp's threads in lockstep is what a GPU does, so
 * the vector code needs no test that the kernel's pointers do not overlap.
 * A body that calls the runtime (a barrier, a warp operation) is not
 * vectorised, and keeps its order.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define ACCEL__CPU_IVDEP _Pragma("GCC ivdep")
#else
/* clang 14 vectorises matvec's rows with gathers when told the same. */
#define ACCEL__CPU_IVDEP
#endif
/*
 * gcc warns "iteration N invokes undefined behavior" on correct kernels
 * whose block is narrower than 32 (a 16-wide block indexing a 16-element
 * shared array by threadIdx.x): it sees the row loops of exactly 32 below,
 * which such a block never runs, and not the test of blockDim.x that
 * guards them. The warning is about code that cannot run, and the body it
 * points at is the kernel's, after this header, so it is turned off for
 * the whole kernel source; accel-cc --check finds the out-of-bounds
 * accesses that do run.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
#define ACCEL__CPU_ROW(callee, n, from, to, ...)                               \
    ACCEL__CPU_IVDEP for (uint32_t accel__x = (from); accel__x < (to);         \
                          accel__x++)                                          \
    {                                                                          \
        accel__t.thread_idx.x = accel__x;                                      \
        accel__t.rank = accel__row + accel__x;                                 \
        callee(&accel__t ACCEL__SEQ(n, ACCEL__COMMA_NAME, __VA_ARGS__));       \
    }
/*
 * One row of a block's threads from x0 on, 32 at a time where it can: the
 * plugin runs thread 0 on its own first, so a block's first row starts at
 * x0 = 1 (a loop of 31, known too) and runs to the next multiple of 32
 * before the whole loops.
 */
#define ACCEL__CPU_ROWS(callee, n, ...)                                        \
    if (accel__bx % 32u != 0) {                                                \
        ACCEL__CPU_ROW(callee, n, accel__x0, accel__bx, __VA_ARGS__)           \
    } else if (accel__bx == 32u && accel__x0 == 0) {                           \
        ACCEL__CPU_ROW(callee, n, 0u, 32u, __VA_ARGS__)                        \
    } else {                                                                   \
        uint32_t accel__c = (accel__x0 + 31u) & ~31u;                          \
                                                                               \
        if (accel__x0 == 1u) {                                                 \
            ACCEL__CPU_ROW(callee, n, 1u, 32u, __VA_ARGS__)                    \
        } else {                                                               \
            ACCEL__CPU_ROW(callee, n, accel__x0, accel__c, __VA_ARGS__)        \
        }                                                                      \
        for (; accel__c < accel__bx; accel__c += 32u) {                        \
            ACCEL__CPU_ROW(callee, n, accel__c, accel__c + 32u, __VA_ARGS__)   \
        }                                                                      \
    }
/* A block's rows from its first thread on, each run by `rows`. */
#define ACCEL__CPU_BLOCK(rows)                                                   \
    for (; accel__z < accel__bz; accel__z++, accel__y0 = 0) {                    \
        accel__t.thread_idx.z = accel__z;                                        \
        for (uint32_t accel__y = accel__y0; accel__y < accel__by;                \
             accel__y++, accel__x0 = 0) {                                        \
            uint32_t accel__row = (accel__z * accel__by + accel__y) * accel__bx; \
                                                                                 \
            accel__t.thread_idx.y = accel__y;                                    \
            rows                                                                 \
        }                                                                        \
    }
/*
 * Whether blockDim.x * blockIdx.x + threadIdx.x cannot wrap around in 32
 * bits in this block, nor the same in y: true but in grids of more than
 * four million blocks a side. The rows run in the branch where it holds,
 * so that gcc sees a thread's index widened to size_t (`size_t i =
 * blockIdx.x * blockDim.x + threadIdx.x`, which CUDA code writes
 * everywhere) as affine in the row loop's counter: its loads and stores
 * become vectors, where they were gathers (HeCBench's iso2dfd and rtm8).
 * The other branch runs the same threads one by one.
 */
#define ACCEL__CPU_INDEX_FITS(t)                                               \
    ((t)->block_dim.x <= 1024u && (t)->block_dim.y <= 1024u &&                 \
     (t)->block_idx.x < (1u << 22) - 1u && (t)->block_idx.y < (1u << 22) - 1u)
#define ACCEL__KERNEL(name, n, ...)                                            \
    ACCEL__BODY_FN void accel__body_##name(                                    \
        const struct accel_cpu_thread *accel__thread ACCEL__UNUSED ACCEL__SEQ( \
            n, ACCEL__COMMA_DECL, __VA_ARGS__));                               \
    ACCEL__KERNEL_RUNNERS(name, (accel__body_##name), n, __VA_ARGS__)          \
    ACCEL__BODY_FN void accel__body_##name(                                    \
        const struct accel_cpu_thread *accel__thread ACCEL__UNUSED ACCEL__SEQ( \
            n, ACCEL__COMMA_DECL, __VA_ARGS__))
/*
 * What runs a kernel whose body is `callee` (a parenthesised function of
 * the thread and the parameters): run_block, run_thread, the barrier
 * pass's functions, the descriptor and the parameters' text.
 */
#define ACCEL__KERNEL_RUNNERS(name, callee, n, ...)                              \
    static void accel__run_##name(const struct accel_cpu_block *accel__block,    \
                                  void *const *accel__args)                      \
        ACCEL__SYMBOL(accel__run_##name);                                        \
    static void accel__thread_##name(                                            \
        const struct accel_cpu_block *accel__block, void *const *accel__args,    \
        uint32_t accel__rank) ACCEL__SYMBOL(accel__thread_##name);               \
    static void accel__run_##name(const struct accel_cpu_block *accel__block,    \
                                  void *const *accel__args)                      \
    {                                                                            \
        ACCEL__SEQ(n, ACCEL__UNPACK, __VA_ARGS__)                                \
        const uint32_t accel__bx = accel__block->block_dim[0];                   \
        const uint32_t accel__by = accel__block->block_dim[1];                   \
        const uint32_t accel__bz = accel__block->block_dim[2];                   \
        uint32_t accel__x0 = accel__block->first_thread % accel__bx;             \
        uint32_t accel__y0 = accel__block->first_thread / accel__bx % accel__by; \
        uint32_t accel__z = accel__block->first_thread / accel__bx / accel__by;  \
        struct accel_cpu_thread accel__t;                                        \
                                                                                 \
        (void)accel__args;                                                       \
        accel__cpu_thread_begin(&accel__t, accel__block);                        \
        if (ACCEL__CPU_INDEX_FITS(&accel__t)) {                                  \
            ACCEL__CPU_BLOCK(ACCEL__CPU_ROWS(callee, n, __VA_ARGS__))            \
        } else {                                                                 \
            ACCEL__CPU_BLOCK(                                                    \
                ACCEL__CPU_ROW(callee, n, accel__x0, accel__bx, __VA_ARGS__))    \
        }                                                                        \
    }                                                                            \
    static void accel__thread_##name(const struct accel_cpu_block *accel__block, \
                                     void *const *accel__args,                   \
                                     uint32_t accel__rank)                       \
    {                                                                            \
        ACCEL__SEQ(n, ACCEL__UNPACK, __VA_ARGS__)                                \
        const uint32_t accel__bx = accel__block->block_dim[0];                   \
        const uint32_t accel__by = accel__block->block_dim[1];                   \
        struct accel_cpu_thread accel__t;                                        \
                                                                                 \
        (void)accel__args;                                                       \
        accel__cpu_thread_begin(&accel__t, accel__block);                        \
        accel__t.thread_idx.x = accel__rank % accel__bx;                         \
        accel__t.thread_idx.y = accel__rank / accel__bx % accel__by;             \
        accel__t.thread_idx.z = accel__rank / accel__bx / accel__by;             \
        accel__t.rank = accel__rank;                                             \
        callee(&accel__t ACCEL__SEQ(n, ACCEL__COMMA_NAME, __VA_ARGS__));         \
    }                                                                            \
    ACCEL__CBS_FUNCTIONS(name, callee, n, __VA_ARGS__)                           \
    ACCEL__EXTERN_C ACCEL__EXPORT const struct accel_cpu_kernel                  \
        accel_cpu_kernel_##name = {                                              \
            ACCEL_CPU_KERNEL_ABI,                                                \
            n - 1,                                                               \
            {ACCEL__SEQ(n, ACCEL__SIZE, __VA_ARGS__) 0},                         \
            accel__run_##name,                                                   \
            accel__thread_##name,                                                \
            "" ACCEL__SEQ(n, ACCEL__NAME_TEXT, __VA_ARGS__),                     \
            {ACCEL__SEQ(n, ACCEL__KIND, __VA_ARGS__) 0},                         \
            {ACCEL__SEQ(n, ACCEL__ELEM, __VA_ARGS__) 0},                         \
            0,                                                                   \
            0,                                                                   \
    };                                                                           \
    ACCEL__EXTERN_C ACCEL__EXPORT const char accel_cpu_params_##name[] =         \
        ACCEL__SEQ(n, ACCEL__PARAM_TEXT, __VA_ARGS__) "";

#ifdef __cplusplus
/*
 * A template's body is a function template of the thread; an instance
 * runs one specialisation, after checking that the parameters it spells
 * are those of the specialisation.
 */
#define ACCEL__KERNEL_TEMPLATE(tparams, name, n, ...)                          \
    template <ACCEL__UNPAREN tparams>                                          \
    ACCEL__BODY_FN void accel__body_##name(                                    \
        const struct accel_cpu_thread *accel__thread ACCEL__UNUSED ACCEL__SEQ( \
            n, ACCEL__COMMA_DECL, __VA_ARGS__))
#define ACCEL__KERNEL_INSTANCE(tmpl, targs, name, n, ...)                      \
    static_assert(                                                             \
        accel__cpu_same<decltype(&accel__body_##tmpl<ACCEL__UNPAREN targs>),   \
                        void (*)(const struct accel_cpu_thread *ACCEL__SEQ(    \
                            n, ACCEL__COMMA_TYPE, __VA_ARGS__))>::value,       \
        "ACCEL_KERNEL_INSTANCE " #name ": the parameters differ from those "   \
        "of " #tmpl #targs);                                                   \
    ACCEL__KERNEL_RUNNERS(name, (accel__body_##tmpl<ACCEL__UNPAREN targs>), n, \
                          __VA_ARGS__)
#define ACCEL__COMMA_TYPE(i, pair) , ACCEL__TYPE pair
template <typename A, typename B> struct accel__cpu_same {
    static const bool value = false;
};
template <typename A> struct accel__cpu_same<A, A> {
    static const bool value = true;
};
#else
#define ACCEL__KERNEL_TEMPLATE(tparams, name, n, ...)                          \
    _Static_assert(0, "ACCEL_KERNEL_TEMPLATE " #name " is C++: compile the "   \
                      "kernel source as C++ (accel-cc -x c++, or name it "     \
                      ".cu or .cpp)")
#define ACCEL__KERNEL_INSTANCE(tmpl, targs, name, n, ...)                      \
    _Static_assert(0, "ACCEL_KERNEL_INSTANCE " #name " is C++: compile the "   \
                      "kernel source as C++ (accel-cc -x c++, or name it "     \
                      ".cu or .cpp)")
#endif

#ifndef ACCEL__CPU_CBS
#define ACCEL__BODY_FN static inline
#define ACCEL__CBS_FUNCTIONS(name, callee, n, ...)
#else
/*
 * What accel-cc's barrier pass (tools/cbs) works on, built only when
 * ACCEL__CPU_CBS is defined (accel-cc defines it for clang builds through
 * the pass). The body is inlined into each runner, so that the pass sees
 * the barriers. step runs one thread of the block from the start
 * (resume 0) and returns 0, hidden from clang by an empty asm (a constant
 * 0 would be folded into region before the pass makes step return other
 * values); the pass makes it resume after barrier k and
 * return k at the next barrier, keeping what the thread carries across in
 * its slots of `scratch`. region runs every thread of the block through
 * one step, and says whether they agree; the pass clones it per resume
 * point so that each becomes a loop the compiler sees whole. run is the
 * kernel's run_regions: steps until every thread returned. `used` keeps
 * them, whole and with their arguments, until the pass has seen them; the
 * pass lets go of the ones it does not use.
 */
#define ACCEL__BODY_FN static inline __attribute__((always_inline))
#define ACCEL__CBS_DISAGREE 0xffffffffu
static inline uint64_t accel__cbs_disagreement(const uint32_t *results,
                                               uint32_t threads)
{
    uint32_t t = 1;

    while (t < threads - 1 && results[t] == results[0])
        t++;
    return ACCEL_CPU_REGIONS_DISAGREE(t, results[t], results[0]);
}
/*
 * The three functions' heads: declared first with their symbols, which the
 * pass looks up and C++ would mangle (ACCEL__SYMBOL), then defined.
 */
#define ACCEL__CBS_STEP(name, n, ...)                                          \
    uint32_t accel__cbs_step_##name(                                           \
        const struct accel_cpu_block *accel__block, uint32_t accel__x,         \
        uint32_t accel__y, uint32_t accel__z, uint32_t accel__rank,            \
        uint32_t accel__resume, void *ACCEL_RESTRICT accel__scratch,           \
        uint32_t accel__threads ACCEL__SEQ(n, ACCEL__COMMA_DECL, __VA_ARGS__))
#define ACCEL__CBS_REGION(name, n, ...)                                        \
    uint32_t accel__cbs_region_##name(                                         \
        const struct accel_cpu_block *accel__block, uint32_t accel__resume,    \
        void *ACCEL_RESTRICT accel__scratch,                                   \
        uint32_t *ACCEL_RESTRICT accel__results ACCEL__SEQ(                    \
            n, ACCEL__COMMA_DECL, __VA_ARGS__))
#define ACCEL__CBS_RUN(name)                                                   \
    uint64_t accel__cbs_run_##name(const struct accel_cpu_block *accel__block, \
                                   void *const *accel__args,                   \
                                   void *accel__scratch)
#define ACCEL__CBS_FUNCTIONS(name, callee, n, ...)                               \
    __attribute__((used, noinline)) static ACCEL__CBS_STEP(name, n, __VA_ARGS__) \
        ACCEL__SYMBOL(accel__cbs_step_##name);                                   \
    __attribute__((used, noinline)) static ACCEL__CBS_REGION(                    \
        name, n, __VA_ARGS__) ACCEL__SYMBOL(accel__cbs_region_##name);           \
    __attribute__((used)) static ACCEL__CBS_RUN(name)                            \
        ACCEL__SYMBOL(accel__cbs_run_##name);                                    \
    __attribute__((used, noinline)) static ACCEL__CBS_STEP(name, n, __VA_ARGS__) \
    {                                                                            \
        struct accel_cpu_thread accel__t;                                        \
                                                                                 \
        /* Used, as far as clang can tell: LLVM 16 and later pass poison for \
         * unused arguments of internal functions, and the pass uses these. */   \
        __asm__("" ::"r"(accel__resume), "r"(accel__scratch),                    \
                "r"(accel__threads));                                            \
        accel__cpu_thread_begin(&accel__t, accel__block);                        \
        accel__t.thread_idx.x = accel__x;                                        \
        accel__t.thread_idx.y = accel__y;                                        \
        accel__t.thread_idx.z = accel__z;                                        \
        accel__t.rank = accel__rank;                                             \
        callee(&accel__t ACCEL__SEQ(n, ACCEL__COMMA_NAME, __VA_ARGS__));         \
        uint32_t accel__returned = 0;                                            \
                                                                                 \
        __asm__("" : "+r"(accel__returned)); /* see above */                     \
        return accel__returned;                                                  \
    }                                                                            \
    __attribute__((used, noinline)) static ACCEL__CBS_REGION(name, n,            \
                                                             __VA_ARGS__)        \
    {                                                                            \
        const uint32_t accel__bx = accel__block->block_dim[0];                   \
        const uint32_t accel__by = accel__block->block_dim[1];                   \
        const uint32_t accel__bz = accel__block->block_dim[2];                   \
        const uint32_t accel__threads = accel__bx * accel__by * accel__bz;       \
        uint32_t accel__lo = ACCEL__CBS_DISAGREE, accel__hi = 0;                 \
                                                                                 \
        for (uint32_t accel__z = 0; accel__z < accel__bz; accel__z++) {          \
            for (uint32_t accel__y = 0; accel__y < accel__by; accel__y++) {      \
                uint32_t accel__row = (accel__z * accel__by + accel__y) *        \
                                      accel__bx;                                 \
                                                                                 \
                for (uint32_t accel__x = 0; accel__x < accel__bx; accel__x++) {  \
                    uint32_t accel__r = accel__cbs_step_##name(                  \
                        accel__block, accel__x, accel__y, accel__z,              \
                        accel__row + accel__x, accel__resume, accel__scratch,    \
                        accel__threads ACCEL__SEQ(n, ACCEL__COMMA_NAME,          \
                                                  __VA_ARGS__));                 \
                                                                                 \
                    accel__results[accel__row + accel__x] = accel__r;            \
                    accel__lo = accel__r < accel__lo ? accel__r : accel__lo;     \
                    accel__hi = accel__r > accel__hi ? accel__r : accel__hi;     \
                }                                                                \
            }                                                                    \
        }                                                                        \
        return accel__lo == accel__hi ? accel__lo : ACCEL__CBS_DISAGREE;         \
    }                                                                            \
    __attribute__((used)) static ACCEL__CBS_RUN(name)                            \
    {                                                                            \
        ACCEL__SEQ(n, ACCEL__UNPACK, __VA_ARGS__)                                \
        const uint32_t accel__threads = accel__block->block_dim[0] *             \
                                        accel__block->block_dim[1] *             \
                                        accel__block->block_dim[2];              \
        uint32_t *accel__results = (uint32_t *)accel__scratch;                   \
        void *accel__slots = (char *)accel__scratch +                            \
                             (((size_t)accel__threads * 4 + 63) & ~(size_t)63);  \
        uint32_t accel__resume = 0;                                              \
                                                                                 \
        (void)accel__args;                                                       \
        for (;;) {                                                               \
            accel__resume = accel__cbs_region_##name(                            \
                accel__block, accel__resume, accel__slots,                       \
                accel__results ACCEL__SEQ(n, ACCEL__COMMA_NAME, __VA_ARGS__));   \
            if (accel__resume == ACCEL_CPU_REGIONS_RETURNED)                     \
                return ACCEL_CPU_REGIONS_OK;                                     \
            if (accel__resume == ACCEL__CBS_DISAGREE)                            \
                return accel__cbs_disagreement(accel__results, accel__threads);  \
        }                                                                        \
    }
#endif

#define ACCEL__COMMA_DECL(i, pair) , ACCEL__DECL pair ACCEL__UNUSED
#define ACCEL__COMMA_NAME(i, pair) , ACCEL__NAME pair
#define ACCEL__SIZE(i, pair) sizeof(ACCEL__TYPE pair),
#define ACCEL__PARAM_TEXT(i, pair) ACCEL__STR(ACCEL__DECL pair) ";"
#define ACCEL__NAME_TEXT(i, pair) " " ACCEL__STR(ACCEL__NAME pair)
#define ACCEL__STR(x) ACCEL__STR_(x)
#define ACCEL__STR_(x) #x

/*
 * A parameter's kind and element type, from its type T at compile time.
 * `*(T *)0` is never evaluated: it names a value of type T, whose
 * qualifiers _Generic drops (so `float *ACCEL_RESTRICT` is `float *`).
 * __builtin_classify_type, which gcc and clang share, tells any pointer
 * (5, pointer_type_class) from a value.
 */
#ifndef __cplusplus
#define ACCEL__KIND(i, pair)                                                   \
    (__builtin_classify_type(*(ACCEL__TYPE pair *)0) == 5                      \
         ? ACCEL_CPU_PARAM_POINTER                                             \
         : ACCEL_CPU_PARAM_VALUE),
#define ACCEL__ELEM(i, pair)                                                   \
    _Generic(*(ACCEL__TYPE pair *)0, ACCEL__CPU_ELEMS(), ACCEL__CPU_ELEMS(*),  \
             ACCEL__CPU_ELEMS(const *), default : 0),
#else
/* C++: the same numbers from templates (accel__cpu_param, below). */
#define ACCEL__KIND(i, pair) accel__cpu_param<ACCEL__TYPE pair>::kind,
#define ACCEL__ELEM(i, pair) accel__cpu_param<ACCEL__TYPE pair>::elem,
#endif

/*
 * The accel_elem_type numbers (<accel/accel.h>: ACCEL_BYTE 0, F16 1, BF16 2,
 * F32 3, F64 4, I8 5, I16 6, I32 7, I64 8, U8 9, U16 10, U32 11, U64 12) of
 * a scalar type, or of the pointee of a pointer P-type (`*`, `const *`).
 * Integers go by size and signedness, as ACCEL_ELEM_TYPE_OF does; plain
 * char is bytes.
 */
#define ACCEL__CPU_ELEMS(P)                                                    \
    float P : 3, double P : 4, char P : 0, signed char P : 5,                  \
        unsigned char P : 9, short P : ACCEL__CPU_INT(short, 5),               \
                                       unsigned short P                        \
        : ACCEL__CPU_INT(short, 9),                                            \
          int P : ACCEL__CPU_INT(int, 5),                                      \
                  unsigned int P : ACCEL__CPU_INT(int, 9),                     \
                                   long P : ACCEL__CPU_INT(long, 5),           \
                                            unsigned long P                    \
        : ACCEL__CPU_INT(long, 9),                                             \
          long long P : ACCEL__CPU_INT(long long, 5),                          \
                        unsigned long long P : ACCEL__CPU_INT(long long, 9)    \
                                                   ACCEL__CPU_FLOAT16(P)       \
                                                       ACCEL__CPU_BFLOAT16(P)
/* I8 (5) or U8 (9) and the next three widths, by the size of T. */
#define ACCEL__CPU_INT(T, base)                                                \
    ((base) + (sizeof(T) == 1   ? 0                                            \
               : sizeof(T) == 2 ? 1                                            \
               : sizeof(T) == 4 ? 2                                            \
                                : 3))
#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 accel__cpu_float16;
#define ACCEL__CPU_FLOAT16(P) , accel__cpu_float16 P : 1
#else
#define ACCEL__CPU_FLOAT16(P)
#endif
#if defined(__BFLT16_MAX__)
__extension__ typedef __bf16 accel__cpu_bfloat16;
#define ACCEL__CPU_BFLOAT16(P) , accel__cpu_bfloat16 P : 2
#else
#define ACCEL__CPU_BFLOAT16(P)
#endif
#ifdef __cplusplus
/*
 * The element type of a scalar type, as the C form's _Generic table gives
 * it: by size and signedness for integers, plain char as bytes, 0 for
 * anything else. accel__cpu_param<T> strips T's top-level qualifiers
 * (const, volatile, restrict) and tells a pointer, whose element type is
 * its pointee's (0 for a pointer to a pointer), from a value.
 */
template <typename T> struct accel__cpu_elem {
    static const uint8_t value = 0;
};
#define ACCEL__CPU_ELEM_IS(T, number)                                          \
    template <> struct accel__cpu_elem<T> {                                    \
        static const uint8_t value = (number);                                 \
    };
ACCEL__CPU_ELEM_IS(float, 3)
ACCEL__CPU_ELEM_IS(double, 4)
ACCEL__CPU_ELEM_IS(signed char, 5)
ACCEL__CPU_ELEM_IS(unsigned char, 9)
ACCEL__CPU_ELEM_IS(short, ACCEL__CPU_INT(short, 5))
ACCEL__CPU_ELEM_IS(unsigned short, ACCEL__CPU_INT(short, 9))
ACCEL__CPU_ELEM_IS(int, ACCEL__CPU_INT(int, 5))
ACCEL__CPU_ELEM_IS(unsigned int, ACCEL__CPU_INT(int, 9))
ACCEL__CPU_ELEM_IS(long, ACCEL__CPU_INT(long, 5))
ACCEL__CPU_ELEM_IS(unsigned long, ACCEL__CPU_INT(long, 9))
ACCEL__CPU_ELEM_IS(long long, ACCEL__CPU_INT(long long, 5))
ACCEL__CPU_ELEM_IS(unsigned long long, ACCEL__CPU_INT(long long, 9))
#if defined(__FLT16_MAX__)
ACCEL__CPU_ELEM_IS(accel__cpu_float16, 1)
#endif
#if defined(__BFLT16_MAX__)
ACCEL__CPU_ELEM_IS(accel__cpu_bfloat16, 2)
#endif
template <typename T> struct accel__cpu_elem<const T> : accel__cpu_elem<T> {
};
template <typename T> struct accel__cpu_elem<volatile T> : accel__cpu_elem<T> {
};
template <typename T>
struct accel__cpu_elem<const volatile T> : accel__cpu_elem<T> {
};

template <typename T> struct accel__cpu_param {
    static const uint8_t kind = ACCEL_CPU_PARAM_VALUE;
    static const uint8_t elem = accel__cpu_elem<T>::value;
};
template <typename T> struct accel__cpu_param<T *> {
    static const uint8_t kind = ACCEL_CPU_PARAM_POINTER;
    static const uint8_t elem = accel__cpu_elem<T>::value;
};
template <typename T>
struct accel__cpu_param<T *__restrict> : accel__cpu_param<T *> {
};
template <typename T> struct accel__cpu_param<const T> : accel__cpu_param<T> {
};
template <typename T>
struct accel__cpu_param<volatile T> : accel__cpu_param<T> {
};
template <typename T>
struct accel__cpu_param<const volatile T> : accel__cpu_param<T> {
};
template <typename T>
struct accel__cpu_param<T *const __restrict> : accel__cpu_param<T *> {
};
#endif
#define ACCEL__UNPACK(i, pair)                                                 \
    ACCEL__TYPE pair ACCEL__NAME pair = *(ACCEL__TYPE pair *)accel__args[i];

#endif /* the CPU form */

/* ==== CUDA's vector types: float4, make_float4, and their arithmetic ==== */

#if ACCEL_KERNEL_CPU
/*
 * The CPU form's own, laid out as CUDA's (vector_types.h): members x, y,
 * z, w; a 2- and 4-vector aligned to its size (16 at most), a 3-vector to
 * its element; make_T2(x, y) and the rest. In C as in C++.
 */
#define ACCEL__VEC_TYPES(name, T, a1, a2, a4)                                  \
    typedef struct name##1                                                     \
    {                                                                          \
        ACCEL__ALIGNAS(a1) T x;                                                \
    }                                                                          \
    name##1;                                                                   \
    typedef struct name##2                                                     \
    {                                                                          \
        ACCEL__ALIGNAS(a2) T x;                                                \
        T y;                                                                   \
    }                                                                          \
    name##2;                                                                   \
    typedef struct name##3                                                     \
    {                                                                          \
        T x, y, z;                                                             \
    }                                                                          \
    name##3;                                                                   \
    typedef struct name##4                                                     \
    {                                                                          \
        ACCEL__ALIGNAS(a4) T x;                                                \
        T y, z, w;                                                             \
    }                                                                          \
    name##4;                                                                   \
    static inline name##1 make_##name##1(T x)                                  \
    {                                                                          \
        name##1 v;                                                             \
        v.x = x;                                                               \
        return v;                                                              \
    }                                                                          \
    static inline name##2 make_##name##2(T x, T y)                             \
    {                                                                          \
        name##2 v;                                                             \
        v.x = x;                                                               \
        v.y = y;                                                               \
        return v;                                                              \
    }                                                                          \
    static inline name##3 make_##name##3(T x, T y, T z)                        \
    {                                                                          \
        name##3 v;                                                             \
        v.x = x;                                                               \
        v.y = y;                                                               \
        v.z = z;                                                               \
        return v;                                                              \
    }                                                                          \
    static inline name##4 make_##name##4(T x, T y, T z, T w)                   \
    {                                                                          \
        name##4 v;                                                             \
        v.x = x;                                                               \
        v.y = y;                                                               \
        v.z = z;                                                               \
        v.w = w;                                                               \
        return v;                                                              \
    }
ACCEL__VEC_TYPES(char, signed char, 1, 2, 4)
ACCEL__VEC_TYPES(uchar, unsigned char, 1, 2, 4)
ACCEL__VEC_TYPES(short, short, 2, 4, 8)
ACCEL__VEC_TYPES(ushort, unsigned short, 2, 4, 8)
ACCEL__VEC_TYPES(int, int, 4, 8, 16)
ACCEL__VEC_TYPES(uint, unsigned int, 4, 8, 16)
ACCEL__VEC_TYPES(long, long, 8, 16, 16)
ACCEL__VEC_TYPES(ulong, unsigned long, 8, 16, 16)
ACCEL__VEC_TYPES(longlong, long long, 8, 16, 16)
ACCEL__VEC_TYPES(ulonglong, unsigned long long, 8, 16, 16)
ACCEL__VEC_TYPES(float, float, 4, 8, 16)
ACCEL__VEC_TYPES(double, double, 8, 16, 16)
#endif

#if defined(__cplusplus) && !ACCEL_KERNEL_HIP &&                               \
    !defined(ACCEL_NO_VECTOR_OPERATORS)
/*
 * C++, on the CPU and under nvcc: element-wise + - * / of two vectors of
 * the same type and of a vector and a scalar of its element type, either
 * side; the compound assignments; unary minus. HIP's vector types have
 * these and more of their own. CUDA's headers have none: a CUDA source
 * that brings its own (cuda-samples' helper_math.h) defines
 * ACCEL_NO_VECTOR_OPERATORS before including this header.
 */
#define ACCEL__VEC_OPS2(V, T)                                                  \
    ACCEL__VEC_FN V accel__splat(V, T s)                                       \
    {                                                                          \
        return make_##V(s, s);                                                 \
    }                                                                          \
    ACCEL__VEC_FN V operator-(V a)                                             \
    {                                                                          \
        return make_##V(-a.x, -a.y);                                           \
    }                                                                          \
    ACCEL__VEC_OP(V, T, +, a.x + b.x, a.y + b.y)                               \
    ACCEL__VEC_OP(V, T, -, a.x - b.x, a.y - b.y)                               \
    ACCEL__VEC_OP(V, T, *, a.x *b.x, a.y *b.y)                                 \
    ACCEL__VEC_OP(V, T, /, a.x / b.x, a.y / b.y)
#define ACCEL__VEC_OPS3(V, T)                                                  \
    ACCEL__VEC_FN V accel__splat(V, T s)                                       \
    {                                                                          \
        return make_##V(s, s, s);                                              \
    }                                                                          \
    ACCEL__VEC_FN V operator-(V a)                                             \
    {                                                                          \
        return make_##V(-a.x, -a.y, -a.z);                                     \
    }                                                                          \
    ACCEL__VEC_OP(V, T, +, a.x + b.x, a.y + b.y, a.z + b.z)                    \
    ACCEL__VEC_OP(V, T, -, a.x - b.x, a.y - b.y, a.z - b.z)                    \
    ACCEL__VEC_OP(V, T, *, a.x *b.x, a.y *b.y, a.z *b.z)                       \
    ACCEL__VEC_OP(V, T, /, a.x / b.x, a.y / b.y, a.z / b.z)
#define ACCEL__VEC_OPS4(V, T)                                                  \
    ACCEL__VEC_FN V accel__splat(V, T s)                                       \
    {                                                                          \
        return make_##V(s, s, s, s);                                           \
    }                                                                          \
    ACCEL__VEC_FN V operator-(V a)                                             \
    {                                                                          \
        return make_##V(-a.x, -a.y, -a.z, -a.w);                               \
    }                                                                          \
    ACCEL__VEC_OP(V, T, +, a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w)         \
    ACCEL__VEC_OP(V, T, -, a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w)         \
    ACCEL__VEC_OP(V, T, *, a.x *b.x, a.y *b.y, a.z *b.z, a.w *b.w)             \
    ACCEL__VEC_OP(V, T, /, a.x / b.x, a.y / b.y, a.z / b.z, a.w / b.w)
/* One operator: of two vectors (the fields given), and with a scalar. */
#define ACCEL__VEC_OP(V, T, op, ...)                                           \
    ACCEL__VEC_FN V operator op(V a, V b)                                      \
    {                                                                          \
        return make_##V(__VA_ARGS__);                                          \
    }                                                                          \
    ACCEL__VEC_FN V operator op(V a, T s)                                      \
    {                                                                          \
        return a op accel__splat(a, s);                                        \
    }                                                                          \
    ACCEL__VEC_FN V operator op(T s, V b)                                      \
    {                                                                          \
        return accel__splat(b, s) op b;                                        \
    }                                                                          \
    ACCEL__VEC_FN V &operator op##=(V &a, V b)                                 \
    {                                                                          \
        return a = a op b;                                                     \
    }                                                                          \
    ACCEL__VEC_FN V &operator op##=(V &a, T s)                                 \
    {                                                                          \
        return a = a op s;                                                     \
    }
#define ACCEL__VEC_ALL_OPS(name, T)                                            \
    ACCEL__VEC_OPS2(name##2, T)                                                \
    ACCEL__VEC_OPS3(name##3, T) ACCEL__VEC_OPS4(name##4, T)
ACCEL__VEC_ALL_OPS(float, float)
ACCEL__VEC_ALL_OPS(double, double)
ACCEL__VEC_ALL_OPS(int, int)
ACCEL__VEC_ALL_OPS(uint, unsigned int)
#endif

/* ---- macro machinery: a parameter is a (type, name) pair ---- */

#define ACCEL__DECL(type, name) type name
#define ACCEL__UNPAREN(...) __VA_ARGS__
#define ACCEL__TYPE(type, name) type
#define ACCEL__NAME(type, name) name

#define ACCEL__CAT(a, b) ACCEL__CAT_(a, b)
#define ACCEL__CAT_(a, b) a##b
#define ACCEL__FIRST(...) ACCEL__FIRST_(__VA_ARGS__, ~)
#define ACCEL__FIRST_(first, ...) first

/* How many arguments, from 1 to ACCEL_KERNEL_MACRO_MAX_PARAMS + 1. */
#define ACCEL__COUNT(...)                                                      \
    ACCEL__COUNT_(__VA_ARGS__, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,  \
                  4, 3, 2, 1, ~)
#define ACCEL__COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,  \
                      _14, _15, _16, _17, n, ...)                              \
    n

/*
 * ACCEL__SEQ(n, M, name, p0, ..., p[n-2]) expands to M(0, p0) M(1, p1) ...;
 * ACCEL__LIST the same with commas between. The kernel's name leads the
 * list so that it is never empty (C11 wants at least one variadic
 * argument); both skip it.
 */
#define ACCEL__SEQ(n, M, ...) ACCEL__CAT(ACCEL__SEQ_, n)(M, __VA_ARGS__)
#define ACCEL__SEQ_1(M, _)
#define ACCEL__SEQ_2(M, _, a) M(0, a)
#define ACCEL__SEQ_3(M, _, a, b) ACCEL__SEQ_2(M, _, a) M(1, b)
#define ACCEL__SEQ_4(M, _, a, b, c) ACCEL__SEQ_3(M, _, a, b) M(2, c)
#define ACCEL__SEQ_5(M, _, a, b, c, d) ACCEL__SEQ_4(M, _, a, b, c) M(3, d)
#define ACCEL__SEQ_6(M, _, a, b, c, d, e) ACCEL__SEQ_5(M, _, a, b, c, d) M(4, e)
#define ACCEL__SEQ_7(M, _, a, b, c, d, e, f)                                   \
    ACCEL__SEQ_6(M, _, a, b, c, d, e) M(5, f)
#define ACCEL__SEQ_8(M, _, a, b, c, d, e, f, g)                                \
    ACCEL__SEQ_7(M, _, a, b, c, d, e, f) M(6, g)
#define ACCEL__SEQ_9(M, _, a, b, c, d, e, f, g, h)                             \
    ACCEL__SEQ_8(M, _, a, b, c, d, e, f, g) M(7, h)
#define ACCEL__SEQ_10(M, _, a, b, c, d, e, f, g, h, i)                         \
    ACCEL__SEQ_9(M, _, a, b, c, d, e, f, g, h) M(8, i)
#define ACCEL__SEQ_11(M, _, a, b, c, d, e, f, g, h, i, j)                      \
    ACCEL__SEQ_10(M, _, a, b, c, d, e, f, g, h, i) M(9, j)
#define ACCEL__SEQ_12(M, _, a, b, c, d, e, f, g, h, i, j, k)                   \
    ACCEL__SEQ_11(M, _, a, b, c, d, e, f, g, h, i, j) M(10, k)
#define ACCEL__SEQ_13(M, _, a, b, c, d, e, f, g, h, i, j, k, l)                \
    ACCEL__SEQ_12(M, _, a, b, c, d, e, f, g, h, i, j, k) M(11, l)
#define ACCEL__SEQ_14(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m)             \
    ACCEL__SEQ_13(M, _, a, b, c, d, e, f, g, h, i, j, k, l) M(12, m)
#define ACCEL__SEQ_15(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n)          \
    ACCEL__SEQ_14(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m) M(13, n)
#define ACCEL__SEQ_16(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o)       \
    ACCEL__SEQ_15(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n) M(14, o)
#define ACCEL__SEQ_17(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)    \
    ACCEL__SEQ_16(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o) M(15, p)

#define ACCEL__LIST(n, M, ...) ACCEL__CAT(ACCEL__LIST_, n)(M, __VA_ARGS__)
#define ACCEL__LIST_1(M, _)
#define ACCEL__LIST_2(M, _, a) M(0, a)
#define ACCEL__LIST_3(M, _, a, b) ACCEL__LIST_2(M, _, a), M(1, b)
#define ACCEL__LIST_4(M, _, a, b, c) ACCEL__LIST_3(M, _, a, b), M(2, c)
#define ACCEL__LIST_5(M, _, a, b, c, d) ACCEL__LIST_4(M, _, a, b, c), M(3, d)
#define ACCEL__LIST_6(M, _, a, b, c, d, e)                                     \
    ACCEL__LIST_5(M, _, a, b, c, d), M(4, e)
#define ACCEL__LIST_7(M, _, a, b, c, d, e, f)                                  \
    ACCEL__LIST_6(M, _, a, b, c, d, e), M(5, f)
#define ACCEL__LIST_8(M, _, a, b, c, d, e, f, g)                               \
    ACCEL__LIST_7(M, _, a, b, c, d, e, f), M(6, g)
#define ACCEL__LIST_9(M, _, a, b, c, d, e, f, g, h)                            \
    ACCEL__LIST_8(M, _, a, b, c, d, e, f, g), M(7, h)
#define ACCEL__LIST_10(M, _, a, b, c, d, e, f, g, h, i)                        \
    ACCEL__LIST_9(M, _, a, b, c, d, e, f, g, h), M(8, i)
#define ACCEL__LIST_11(M, _, a, b, c, d, e, f, g, h, i, j)                     \
    ACCEL__LIST_10(M, _, a, b, c, d, e, f, g, h, i), M(9, j)
#define ACCEL__LIST_12(M, _, a, b, c, d, e, f, g, h, i, j, k)                  \
    ACCEL__LIST_11(M, _, a, b, c, d, e, f, g, h, i, j), M(10, k)
#define ACCEL__LIST_13(M, _, a, b, c, d, e, f, g, h, i, j, k, l)               \
    ACCEL__LIST_12(M, _, a, b, c, d, e, f, g, h, i, j, k), M(11, l)
#define ACCEL__LIST_14(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m)            \
    ACCEL__LIST_13(M, _, a, b, c, d, e, f, g, h, i, j, k, l), M(12, m)
#define ACCEL__LIST_15(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n)         \
    ACCEL__LIST_14(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m), M(13, n)
#define ACCEL__LIST_16(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o)      \
    ACCEL__LIST_15(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n), M(14, o)
#define ACCEL__LIST_17(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)   \
    ACCEL__LIST_16(M, _, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o), M(15, p)

#endif /* ACCEL_KERNEL_H */
