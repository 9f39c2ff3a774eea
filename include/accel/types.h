/*
 * What the application API (<accel/accel.h>) and the plugin ABI
 * (<accel/driver.h>) share: the status codes, a copy's layout and what a
 * device is. Both headers include this one; an application sees the plugin
 * ABI only if it includes <accel/driver.h> itself.
 *
 * Everything here is part of the frozen plugin ABI, version 1: fields and
 * codes are only ever added, never moved or renumbered.
 */
#ifndef ACCEL_TYPES_H
#define ACCEL_TYPES_H

#include <stddef.h>
#include <stdint.h>

/*
 * Status codes, shared by the plugin ABI and the application API.
 * X(name, value, description). The description says when the code is
 * returned; accel_status_string() gives it back at run time.
 * ACCEL_ERR_BUSY is reserved: neither the host nor the bundled plugins
 * return it today.
 */
#define ACCEL_STATUS_LIST(X)                                                                                    \
    X(ACCEL_OK, 0, "success")                                                                                   \
    X(ACCEL_NOT_READY, 1,                                                                                       \
      "the work has not completed yet (a query, not an error)")                                                 \
    X(ACCEL_ERR_NO_DEVICE, -1,                                                                                  \
      "no usable device: no plugin, no device, or the index is out of range")                                   \
    X(ACCEL_ERR_PLUGIN_ABI, -2,                                                                                 \
      "a plugin broke the ABI: bad table, version, name or return value")                                       \
    X(ACCEL_ERR_INVALID_ARGUMENT, -3,                                                                           \
      "an argument is invalid: NULL, zero, out of range, or overflowing")                                       \
    X(ACCEL_ERR_OUT_OF_DEVICE_MEMORY, -4,                                                                       \
      "the device is out of memory; the device stays usable")                                                   \
    X(ACCEL_ERR_OUT_OF_HOST_MEMORY, -5, "the host is out of memory")                                            \
    X(ACCEL_ERR_STALE_REF, -6,                                                                                  \
      "the ref was minted before the device was reset or lost")                                                 \
    X(ACCEL_ERR_FREED_REF, -7,                                                                                  \
      "the ref's allocation has been freed, or the ref was never valid")                                        \
    X(ACCEL_ERR_DEVICE_MISMATCH, -8,                                                                            \
      "the ref or object belongs to another device")                                                            \
    X(ACCEL_ERR_TYPE_MISMATCH, -9,                                                                              \
      "the ref's element type differs from the host data's")                                                    \
    X(ACCEL_ERR_DEVICE_LOST, -10,                                                                               \
      "the device was lost; reset it to use it again")                                                          \
    X(ACCEL_ERR_UNRECOVERABLE,                                                                                  \
      -11, "the device was lost more often than its recovery budget allows, or its driver refused to reset it") \
    X(ACCEL_ERR_LAUNCH, -12, "a kernel launch failed")                                                          \
    X(ACCEL_ERR_COPY, -13, "a copy failed")                                                                     \
    X(ACCEL_ERR_MODULE, -14, "a module image is invalid or failed to load")                                     \
    X(ACCEL_ERR_NOT_SUPPORTED, -15,                                                                             \
      "the operation is not supported by this plugin or device")                                                \
    X(ACCEL_ERR_TIMEOUT, -16, "the wait timed out")                                                             \
    X(ACCEL_ERR_DRIVER, -17,                                                                                    \
      "the vendor driver reported an error with no better code")                                                \
    X(ACCEL_ERR_NOT_FOUND, -18, "no such plugin, kernel or named object")                                       \
    X(ACCEL_ERR_BUSY, -19, "the object is still in use")                                                        \
    X(ACCEL_ERR_COMM_ABORTED,                                                                                   \
      -20, "the communicator was aborted (a reset, a stalled rank, a failed peer or accel_comm_abort)")

typedef enum accel_status {
#define ACCEL_STATUS_ENUM_(name, value, text) name = value,
    ACCEL_STATUS_LIST(ACCEL_STATUS_ENUM_)
#undef ACCEL_STATUS_ENUM_
} accel_status;

/* Element types of refs, kernel parameters and collectives. */
typedef enum accel_elem_type {
    ACCEL_BYTE = 0,
    ACCEL_F16,
    ACCEL_BF16,
    ACCEL_F32,
    ACCEL_F64,
    ACCEL_I8,
    ACCEL_I16,
    ACCEL_I32,
    ACCEL_I64,
    ACCEL_U8,
    ACCEL_U16,
    ACCEL_U32,
    ACCEL_U64,
    ACCEL_ELEM_TYPE_COUNT
} accel_elem_type;

/* Reductions. Every element type of types.h is reduced (f16 and bf16 in
 * f32 arithmetic, rounded back); ACCEL_BYTE reduces as u8. */
typedef enum accel_reduce_op {
    ACCEL_REDUCE_SUM = 0,
    ACCEL_REDUCE_PROD = 1,
    ACCEL_REDUCE_MIN = 2,
    ACCEL_REDUCE_MAX = 3,
    ACCEL_REDUCE_OP_COUNT
} accel_reduce_op;

/* Log levels, most severe first. */
typedef enum accel_log_level {
    ACCEL_LOG_NONE = 0,
    ACCEL_LOG_ERROR = 1,
    ACCEL_LOG_WARN = 2,
    ACCEL_LOG_INFO = 3,
    ACCEL_LOG_DEBUG = 4
} accel_log_level;

/* The native handles of an accel device and stream (driver.h's
 * native_handles entry and accel_stream_native fill it; comm.h uses it). */
typedef enum accel_native_kind {
    ACCEL_NATIVE_CPU = 0,  /* the null plugin: addresses are host pointers */
    ACCEL_NATIVE_CUDA = 1, /* device: CUdevice ordinal; context: CUcontext;
                              stream: CUstream */
    ACCEL_NATIVE_HIP = 2   /* device: hipDevice_t ordinal; context: NULL;
                              stream: hipStream_t */
} accel_native_kind;

struct accel_native_handles {
    uint32_t struct_size; /* sizeof, set by the caller */
    uint32_t kind;        /* accel_native_kind */
    int32_t device_ordinal;
    uint32_t reserved;
    void *context;
    void *stream; /* NULL when no stream was asked for */
};

/*
 * A copy's shape. Offsets are bytes from the start of each side's base
 * address. The copy moves `depth` slices of `rows` rows of `row_bytes` bytes;
 * row r of slice s starts at offset + s * slice_pitch + r * pitch on each
 * side. depth 0 is treated as 1, and rows 0 as 1; a pitch is ignored when
 * there is one row, a slice pitch when there is one slice. The host
 * validates every layout, overflow included, before a plugin sees it: a
 * plugin receives only layouts with row_bytes > 0, rows >= 1, depth >= 1,
 * pitches >= row_bytes where rows > 1, and slice pitches that keep slices
 * apart ((rows - 1) * pitch + row_bytes or more) where depth > 1. A layout
 * whose rows and slices are contiguous on both sides arrives folded into a
 * single row.
 */
struct accel_copy_layout {
    uint64_t src_offset;
    uint64_t dst_offset;
    uint64_t row_bytes;
    uint64_t rows;
    uint64_t src_pitch;
    uint64_t dst_pitch;
    uint64_t depth;
    uint64_t src_slice_pitch;
    uint64_t dst_slice_pitch;
};

/* Room for accel_device_props.uuid and .pci_bus_id, with the NUL. */
#define ACCEL_DEVICE_UUID_MAX 48
#define ACCEL_DEVICE_PCI_BUS_ID_MAX 32

/* Device capability bits (accel_device_props.caps). */
enum {
    /* Device addresses are host pointers: the host may copy with memcpy. */
    ACCEL_DEVICE_CAP_HOST_VISIBLE = 1u << 0,
    /* The device runs kernels from module images. A plugin none of whose
     * devices has it may leave module_load, module_unload, kernel_get and
     * launch NULL (all four, or none); the host answers accel_module_load
     * on a device without it with ACCEL_ERR_NOT_SUPPORTED and never calls
     * the plugin's kernel entries for that device. */
    ACCEL_DEVICE_CAP_KERNELS = 1u << 1,
    /* The device copies 3D layouts (depth > 1) natively. Informational:
     * the host does not read it, and hands layouts with depth > 1 to every
     * plugin's copy_* entries, which must accept them either way. */
    ACCEL_DEVICE_CAP_COPY_3D = 1u << 2,
    /* Every allocation wants its own mem_alloc, of exactly the bytes asked
     * for (not rounded, not a slice of a larger page), and its own
     * mem_free once it is freed (no page kept for reuse): a plugin that
     * checks kernels' memory accesses (the null plugin's ACCEL_NULL_CHECK)
     * then sees each allocation's bounds. Since: 1.1. */
    ACCEL_DEVICE_CAP_OWN_ALLOCATIONS = 1u << 3
};

/*
 * What a plugin tells about one device. Filled by device_info.
 *
 * The struct grows only at its end; each minor's size is named below. The
 * host zeroes the whole struct before device_info, and reads the fields a
 * minor added only from a plugin of that minor or later. A plugin writes
 * at most accel_device_props_size(services) bytes (the size of the host's
 * minor), so that a plugin built against a newer header never writes past
 * an older host's struct: fill a local struct, then copy that many bytes.
 */
struct accel_device_props {
    char name[128];         /* human name, NUL-terminated */
    char arch[32];          /* target: "sm_90", "gfx90a", "x86_64", ... */
    uint64_t total_memory;  /* bytes */
    uint32_t compute_units; /* SMs, CUs, or CPU cores */
    uint32_t caps;          /* ACCEL_DEVICE_CAP_* bits */
    uint32_t max_threads_per_block;
    uint32_t max_block_dim[3];
    uint32_t max_grid_dim[3];
    uint32_t max_shared_bytes; /* per block */

    /* ---- Since: 1.1 ---- */

    /*
     * A stable identifier of the device, as the vendor's tools print it,
     * NUL-terminated: "GPU-5b1c2f3a-...." (nvidia-smi -L), "GPU-..." for
     * HIP, "CPU-...." for the CPU plugin. Selection matches a prefix of it
     * (accel.h, "cuda:GPU-5b1c"). "" when the device has none.
     */
    char uuid[ACCEL_DEVICE_UUID_MAX];
    /*
     * The PCI address as domain:bus:device.function in lower-case hex,
     * "0000:41:00.0", NUL-terminated; "" for a device not on PCI.
     */
    char pci_bus_id[ACCEL_DEVICE_PCI_BUS_ID_MAX];
};

/* The props of a 1.0 plugin end at max_shared_bytes. */
#define ACCEL_DEVICE_PROPS_V1_0_SIZE                                           \
    (offsetof(struct accel_device_props, max_shared_bytes) + sizeof(uint32_t))
/* 1.1 added uuid and pci_bus_id. */
#define ACCEL_DEVICE_PROPS_V1_1_SIZE                                           \
    (offsetof(struct accel_device_props, pci_bus_id) +                         \
     ACCEL_DEVICE_PCI_BUS_ID_MAX)

#endif /* ACCEL_TYPES_H */
