/*
 * Bundles: one file holding several kernel images, one per backend and
 * target, from which the host picks the image that fits a device.
 *
 * The format, version 1. Every integer is little-endian and unsigned.
 *
 *   header, 32 bytes, at offset 0:
 *      0  char magic[8]      "ACCELPK\0"
 *      8  u16  version       1
 *     10  u16  header_size   32
 *     12  u32  count         entries in the table: 1 to 256
 *     16  u64  file_size     the whole file, header included
 *     24  u32  checksum      CRC-32 (IEEE 802.3, the one of zlib, gzip and
 *                            PNG) of bytes [32, file_size)
 *     28  u32  reserved      0
 *
 *   entry table, `count` entries of 88 bytes, at offset 32:
 *      0  char backend[32]   the plugin's name: [a-z0-9_]+, as long as a
 *                            plugin name may be (31 characters)
 *     32  char target[32]    "sm_90", "compute_90", "gfx90a", "x86_64", "any",
 *                            or a CPU ISA level: "x86_64-v3"
 *     64  char format[8]     "ptx", "cubin", "fatbin", "hsaco", "elf", or
 *                            "sig" for the kernels' typed signatures (below)
 *     72  u64  offset        of the image, from the start of the file
 *     80  u64  size          of the image in bytes, at least 1
 *
 *     The three names are NUL-terminated and NUL-padded to their field's
 *     size; they hold printable ASCII without spaces (0x21 to 0x7e), and are
 *     never empty. No two entries share backend, target and format.
 *
 *   images: each starts at a multiple of 64 bytes, after the table, inside
 *   the file; no two images overlap. The bytes between images (the writer
 *   pads with zeros) are covered by the checksum and otherwise ignored.
 *
 *   signatures: an entry of backend "accel", target "any" and format "sig"
 *   (accel-cc writes it from the kernels' ACCEL_KERNEL declarations) holds
 *   the typed signature of every kernel of the bundle, for images that
 *   carry none (PTX, code objects). It is never picked as an image. The
 *   text is specified in host/signature.h; a bundle without it is checked
 *   by argument sizes alone.
 *
 * A reader rejects anything else. Nothing here does I/O or keeps state, and
 * the parser's work is bounded by the file's size and the entry limit, so it
 * can run on untrusted bytes (and under a fuzzer).
 */
#ifndef ACCEL_HOST_BUNDLE_H
#define ACCEL_HOST_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"

#define ACCEL__BUNDLE_MAGIC "ACCELPK" /* with its NUL: 8 bytes */
#define ACCEL__BUNDLE_MAGIC_SIZE 8
#define ACCEL__BUNDLE_VERSION 1
#define ACCEL__BUNDLE_HEADER_SIZE 32
#define ACCEL__BUNDLE_ENTRY_SIZE 88
#define ACCEL__BUNDLE_MAX_ENTRIES 256
#define ACCEL__BUNDLE_ALIGN 64

/* Field sizes, NUL included: a backend has at most 31 characters. */
#define ACCEL__BUNDLE_BACKEND_SIZE 32
#define ACCEL__BUNDLE_TARGET_SIZE 32
#define ACCEL__BUNDLE_FORMAT_SIZE 8

/* The entry of the kernels' typed signatures. */
#define ACCEL__BUNDLE_SIGNATURES_BACKEND "accel"
#define ACCEL__BUNDLE_SIGNATURES_TARGET "any"
#define ACCEL__BUNDLE_SIGNATURES_FORMAT "sig"

/* One image of a parsed bundle; the names are NUL-terminated. */
struct accel__bundle_entry {
    char backend[ACCEL__BUNDLE_BACKEND_SIZE];
    char target[ACCEL__BUNDLE_TARGET_SIZE];
    char format[ACCEL__BUNDLE_FORMAT_SIZE];
    uint64_t offset; /* from the start of the bundle */
    uint64_t size;
};

/* One image to write into a bundle; the caller owns every pointer. */
struct accel__bundle_image {
    const char *backend;
    const char *target;
    const char *format;
    const void *data;
    size_t size;
};

/* True when `size` bytes at `data` start with the bundle magic. */
bool accel__bundle_is(const void *data, size_t size);

/*
 * Check `size` bytes at `data` as a bundle and copy its entries into
 * `out_entries`, an array of ACCEL__BUNDLE_MAX_ENTRIES the caller owns;
 * *out_count says how many. Every check of the format above is made, and an
 * entry's offset and size are within `size` bytes when this succeeds.
 * Errors: ACCEL_ERR_MODULE, with the first problem found as detail (*out_count
 * stays 0); ACCEL_ERR_INVALID_ARGUMENT for NULL pointers.
 */
accel_status accel__bundle_parse(const void *data, size_t size,
                                 struct accel__bundle_entry *out_entries,
                                 uint32_t *out_count);

/*
 * Pick the image for a device of plugin `backend` whose target is `arch`
 * ("sm_90", "gfx90a", "x86_64"). Only entries of that backend are
 * considered, best first:
 *   1. target == arch, in a format other than PTX;
 *   2. target == arch, PTX;
 *   3. PTX for "compute_XX" where arch is "sm_YY..." with YY >= XX, the
 *      highest such XX first (the driver compiles PTX for newer devices);
 *   4. target "any".
 * Ties go to the earlier entry, but for CPU images of several ISA levels
 * (see accel__bundle_pick_at_level), where the highest level the CPU runs
 * wins. Errors: ACCEL_ERR_NOT_FOUND when nothing
 * fits, the detail naming the device and what the bundle holds;
 * ACCEL_ERR_INVALID_ARGUMENT for NULL pointers.
 */
accel_status accel__bundle_pick(const struct accel__bundle_entry *entries,
                                uint32_t count, const char *backend,
                                const char *arch, uint32_t *out_index);

/*
 * The same for a CPU of ISA level `cpu_level` (accel__bundle_pick passes
 * accel__cpu_isa_level(arch)): a CPU image whose target is the device's
 * arch with "-vN" ("x86_64-v3", as accel-cc names them) counts as the
 * exact target when N <= cpu_level, and never fits when N > cpu_level; of
 * those that fit, the highest N wins, the bare arch being level 1. Tests
 * call this to fake the CPU.
 */
accel_status accel__bundle_pick_at_level(const struct accel__bundle_entry *entries,
                                         uint32_t count, const char *backend,
                                         const char *arch, unsigned cpu_level,
                                         uint32_t *out_index);

/*
 * The index of the signatures entry (backend "accel", format "sig") of a
 * parsed bundle into *out_index; false when the bundle has none.
 */
bool accel__bundle_find_signatures(const struct accel__bundle_entry *entries,
                                   uint32_t count, uint32_t *out_index);

/*
 * The ISA level of the CPU this runs on, for a device of architecture
 * `arch`: on x86-64 ("x86_64") the psABI level 1 to 4 that both the CPU
 * (CPUID) and the operating system (XCR0) support; 1 for anything else.
 */
unsigned accel__cpu_isa_level(const char *arch);

/*
 * Write a bundle of `count` images into a new buffer that the caller frees
 * with free(). The images are laid out in the given order.
 * Errors: ACCEL_ERR_INVALID_ARGUMENT (no images or too many, a name the
 * format does not allow, an empty image, a duplicate, a bundle over
 * SIZE_MAX), ACCEL_ERR_OUT_OF_HOST_MEMORY.
 */
accel_status accel__bundle_write(const struct accel__bundle_image *images,
                                 uint32_t count, void **out_data,
                                 size_t *out_size);

#endif /* ACCEL_HOST_BUNDLE_H */
