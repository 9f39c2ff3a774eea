/*
 * Typed kernel signatures: what the host knows of a kernel's parameters
 * (kind, element type, name, size) and the launch checks made against it.
 *
 * A signature comes from the plugin's kernel_get (a CPU image's descriptors
 * carry it whole; a GPU plugin gives sizes at most), completed from a
 * bundle's signatures entry (bundle.h) for images that carry no types.
 *
 * The signatures entry is text, written by accel-cc (accel-pack
 * signatures) from the kernels' ACCEL_KERNEL declarations:
 *
 *   accel-signatures 1
 *   saxpy n:val:u32 a:val:f32 x:ptr:f32 y:ptr:f32
 *   fill data:ptr:u32 count:val:u64
 *
 * The first line as shown; then one line per kernel: its name, then each
 * parameter as NAME:KIND:TYPE, separated by one space, where a name is 1 to
 * 200 characters of [A-Za-z0-9_], KIND is `ptr` (a pointer: a ref is
 * passed) or `val` (a value), and TYPE an accel_elem_type_name ("f32",
 * "u8", ..., "byte" where the pointee or value has no element type). Every
 * line ends with a newline; at most ACCEL_KERNEL_MAX_PARAMS parameters. The
 * first line of a kernel is the one used. The text is parsed as hostile
 * input: bounded by its size, never past it.
 */
#ifndef ACCEL_HOST_SIGNATURE_H
#define ACCEL_HOST_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

#define ACCEL__SIGNATURES_HEADER "accel-signatures 1\n"

/*
 * Check what a plugin's kernel_get gave for `kernel`: kinds and types in
 * range, names NUL-terminated words. ACCEL_ERR_PLUGIN_ABI says what is
 * wrong.
 */
accel_status accel__signature_check(const char *kernel,
                                    const struct accel_kernel_signature *signature);

/* Check a whole signatures entry of `size` bytes. ACCEL_ERR_MODULE. */
accel_status accel__signatures_check(const char *text, size_t size);

/*
 * Complete `signature`, as the plugin gave it for `kernel`, from a checked
 * signatures entry: only when the plugin gave no kinds, and only when the
 * entry has a line for the kernel. The entry's parameters must agree with
 * what the plugin knows (count, sizes), else ACCEL_ERR_MODULE.
 */
accel_status accel__signature_complete(const char *text, size_t size,
                                       const char *kernel,
                                       struct accel_kernel_signature *signature);

/*
 * Check argument `index` of a launch of `kernel`: a ref for a pointer
 * parameter, a value for a value parameter. ACCEL_ERR_TYPE_MISMATCH names
 * the parameter. Nothing is checked where the kind is unknown.
 */
accel_status
accel__signature_check_kind(const char *kernel,
                            const struct accel_kernel_signature *signature,
                            uint32_t index, const accel_arg *arg);

/*
 * Check that a ref whose memory holds `ref_type` elements fits pointer
 * parameter `index`: the same element type, or bytes on either side.
 * ACCEL_ERR_TYPE_MISMATCH names the parameter.
 */
accel_status
accel__signature_check_ref_type(const char *kernel,
                                const struct accel_kernel_signature *signature,
                                uint32_t index, uint32_t ref_type);

#endif /* ACCEL_HOST_SIGNATURE_H */
