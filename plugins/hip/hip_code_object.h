/*
 * What a HIP module image says about its kernels, read before the runtime
 * loads it.
 *
 * HIP has no call that tells a kernel's parameters (CUDA 12.4's
 * cuFuncGetParamInfo has no HIP counterpart), yet hipModuleLaunchKernel
 * reads as many argument bytes as the kernel takes, whatever the caller
 * passed. The code object says them: an AMDGPU ELF carries a note
 * (owner "AMDGPU", type NT_AMDGPU_METADATA) whose MessagePack map lists,
 * under "amdhsa.kernels", each kernel's ".name" and ".args", each argument
 * with its ".size" and ".value_kind" (the "hidden_*" kinds are the
 * runtime's own: grid offsets, printf buffers, ...). The reader turns that
 * into an accel_kernel_signature per kernel, so that the host checks a
 * launch's arguments before the GPU reads them.
 *
 * Images come as hipcc writes them: a clang offload bundle
 * ("__CLANG_OFFLOAD_BUNDLE__", one entry per target, e.g.
 * "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-") or a bare code object (an ELF).
 * From a bundle the entry for the device's target is read (another amdgcn
 * entry when none matches: every entry was compiled from the same source).
 * A compressed bundle (ROCm 6.2's --offload-compress) or a code object
 * without metadata is not an error: its kernels' signatures are unknown,
 * which leaves the arguments unchecked.
 *
 * The image is untrusted input: every read is bounds-checked, nesting is
 * limited, and a malformed image gives no kernels, never a crash.
 */
#ifndef ACCEL_HIP_CODE_OBJECT_H
#define ACCEL_HIP_CODE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>

/* What kind of image it is, for error details. */
enum accel__hip_image_kind {
    ACCEL__HIP_IMAGE_UNKNOWN = 0, /* neither a bundle nor an ELF */
    ACCEL__HIP_IMAGE_BUNDLE,      /* a clang offload bundle */
    ACCEL__HIP_IMAGE_COMPRESSED,  /* a compressed clang offload bundle */
    ACCEL__HIP_IMAGE_ELF          /* a bare code object */
};

struct accel__hip_kernel_info {
    char *name;
    struct accel_kernel_signature signature;
};

struct accel__hip_code_object {
    enum accel__hip_image_kind kind;
    /*
     * The bundle's GPU targets with their features, comma-separated
     * ("gfx906, gfx90a:sramecc+:xnack-"); empty otherwise.
     */
    char targets[256];
    /* The bundle has an entry for the device's target (always true for an ELF). */
    bool has_device_target;
    uint32_t kernel_count;
    struct accel__hip_kernel_info *kernels;
};

/*
 * Read `image` (`size` bytes) for a device whose target is `arch` (the
 * base processor name, "gfx90a"). Every output field is set; the caller
 * frees it with accel__hip_code_object_free. Returns false only when
 * memory runs out; an image it cannot read is success with no kernels.
 */
bool accel__hip_code_object_read(const void *image, size_t size, const char *arch,
                                 struct accel__hip_code_object *out_object);

/* The signature of kernel `name`, or NULL when the metadata does not list it. */
const struct accel_kernel_signature *
accel__hip_code_object_signature(const struct accel__hip_code_object *object,
                                 const char *name);

void accel__hip_code_object_free(struct accel__hip_code_object *object);

/*
 * The base processor of a target ID: "gfx90a:sramecc+:xnack-" and
 * "amdgcn-amd-amdhsa--gfx90a:xnack-" give "gfx90a". Writes at most
 * `size` bytes with the NUL; an empty string when there is none.
 */
void accel__hip_target_processor(const char *target_id, char *out, size_t size);

/*
 * The target of a bundle entry's ID, features included:
 * "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" gives
 * "gfx90a:sramecc+:xnack-". As accel__hip_target_processor otherwise.
 */
void accel__hip_target_with_features(const char *target_id, char *out,
                                     size_t size);

#endif /* ACCEL_HIP_CODE_OBJECT_H */
