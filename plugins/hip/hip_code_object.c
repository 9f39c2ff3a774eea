/*
 * What a HIP module image says about its kernels: clang offload bundles,
 * AMDGPU ELF notes and their MessagePack metadata.
 */
#include "hip_code_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bounded little-endian reads ---- */

/* A window of the image; every read checks it. */
struct hip_bytes {
    const unsigned char *data;
    size_t size;
};

static bool hip_read_u16(struct hip_bytes bytes, size_t at, uint16_t *out)
{
    if (at > bytes.size || bytes.size - at < 2)
        return false;
    *out = (uint16_t)(bytes.data[at] | bytes.data[at + 1] << 8);
    return true;
}

static bool hip_read_u32(struct hip_bytes bytes, size_t at, uint32_t *out)
{
    if (at > bytes.size || bytes.size - at < 4)
        return false;
    *out = 0;
    for (int i = 3; i >= 0; i--)
        *out = *out << 8 | bytes.data[at + (size_t)i];
    return true;
}

static bool hip_read_u64(struct hip_bytes bytes, size_t at, uint64_t *out)
{
    if (at > bytes.size || bytes.size - at < 8)
        return false;
    *out = 0;
    for (int i = 7; i >= 0; i--)
        *out = *out << 8 | bytes.data[at + (size_t)i];
    return true;
}

/* The sub-window [offset, offset + length), when it lies inside. */
static bool hip_window(struct hip_bytes bytes, uint64_t offset, uint64_t length,
                       struct hip_bytes *out)
{
    if (offset > bytes.size || length > bytes.size - offset)
        return false;
    out->data = bytes.data + offset;
    out->size = (size_t)length;
    return true;
}

/* ---- MessagePack, as much as the metadata uses ---- */

/* Deeper nesting than any metadata has is refused, not followed. */
#define HIP_MSGPACK_DEPTH_MAX 16

struct hip_msgpack {
    struct hip_bytes bytes;
    size_t at;
};

enum hip_msgpack_kind {
    HIP_MP_OTHER,
    HIP_MP_UINT,
    HIP_MP_STR,
    HIP_MP_ARRAY,
    HIP_MP_MAP
};

/* A big-endian number of `width` bytes at the cursor. */
static bool hip_mp_number(struct hip_msgpack *mp, unsigned width, uint64_t *out)
{
    if (mp->at > mp->bytes.size || mp->bytes.size - mp->at < width)
        return false;
    *out = 0;
    for (unsigned i = 0; i < width; i++)
        *out = *out << 8 | mp->bytes.data[mp->at + i];
    mp->at += width;
    return true;
}

/*
 * Read one object's head: its kind, and its value (an unsigned integer), its
 * length (a string's bytes, after which the cursor is at them) or its count
 * (an array's items, a map's pairs). Anything else is HIP_MP_OTHER with
 * `*out_skip` bytes of payload to jump.
 */
static bool hip_mp_head(struct hip_msgpack *mp, enum hip_msgpack_kind *out_kind,
                        uint64_t *out_value, uint64_t *out_skip)
{
    static const unsigned char fixext_sizes[5] = {1, 2, 4, 8, 16};
    unsigned char tag;

    *out_value = 0;
    *out_skip = 0;
    *out_kind = HIP_MP_OTHER;
    if (mp->at >= mp->bytes.size)
        return false;
    tag = mp->bytes.data[mp->at++];
    if (tag <= 0x7f) {
        *out_kind = HIP_MP_UINT;
        *out_value = tag;
    } else if (tag <= 0x8f) {
        *out_kind = HIP_MP_MAP;
        *out_value = tag & 0x0fu;
    } else if (tag <= 0x9f) {
        *out_kind = HIP_MP_ARRAY;
        *out_value = tag & 0x0fu;
    } else if (tag <= 0xbf) {
        *out_kind = HIP_MP_STR;
        *out_value = tag & 0x1fu;
    } else if (tag >= 0xcc && tag <= 0xcf) {
        *out_kind = HIP_MP_UINT;
        return hip_mp_number(mp, 1u << (tag - 0xcc), out_value);
    } else if (tag >= 0xd9 && tag <= 0xdb) {
        *out_kind = HIP_MP_STR;
        return hip_mp_number(mp, 1u << (tag - 0xd9), out_value);
    } else if (tag == 0xdc || tag == 0xdd) {
        *out_kind = HIP_MP_ARRAY;
        return hip_mp_number(mp, tag == 0xdc ? 2 : 4, out_value);
    } else if (tag == 0xde || tag == 0xdf) {
        *out_kind = HIP_MP_MAP;
        return hip_mp_number(mp, tag == 0xde ? 2 : 4, out_value);
    } else if (tag >= 0xc4 && tag <= 0xc6) { /* bin 8/16/32 */
        return hip_mp_number(mp, 1u << (tag - 0xc4), out_skip);
    } else if (tag >= 0xc7 && tag <= 0xc9) { /* ext 8/16/32: a length, a type byte */
        if (!hip_mp_number(mp, 1u << (tag - 0xc7), out_skip))
            return false;
        *out_skip += 1;
    } else if (tag >= 0xd4 && tag <= 0xd8) { /* fixext: a type byte and the data */
        *out_skip = 1u + fixext_sizes[tag - 0xd4];
    } else if (tag == 0xca || tag == 0xcb) { /* float 32/64 */
        *out_skip = tag == 0xca ? 4 : 8;
    } else if (tag >= 0xd0 && tag <= 0xd3) { /* int 8..64: signed, so not a size */
        *out_skip = 1u << (tag - 0xd0);
    } else if (tag == 0xc1) { /* never used */
        return false;
    }
    /* nil, booleans and negative fixints have no payload. */
    return true;
}

static bool hip_mp_advance(struct hip_msgpack *mp, uint64_t bytes)
{
    if (mp->at > mp->bytes.size || bytes > mp->bytes.size - mp->at)
        return false;
    mp->at += (size_t)bytes;
    return true;
}

/* Skip one whole object, whatever it holds. */
static bool hip_mp_skip(struct hip_msgpack *mp, int depth)
{
    enum hip_msgpack_kind kind;
    uint64_t value, skip;

    if (depth > HIP_MSGPACK_DEPTH_MAX || !hip_mp_head(mp, &kind, &value, &skip))
        return false;
    switch (kind) {
    case HIP_MP_STR:
        return hip_mp_advance(mp, value);
    case HIP_MP_ARRAY:
    case HIP_MP_MAP:
        /* A count can claim more objects than bytes remain; each needs one. */
        if (value > mp->bytes.size - mp->at)
            return false;
        for (uint64_t i = 0; i < (kind == HIP_MP_MAP ? 2 * value : value); i++) {
            if (!hip_mp_skip(mp, depth + 1))
                return false;
        }
        return true;
    case HIP_MP_UINT:
        return true;
    case HIP_MP_OTHER:
        break;
    }
    return hip_mp_advance(mp, skip);
}

/* The next object as a string; false when it is something else. */
static bool hip_mp_string(struct hip_msgpack *mp, const char **out_text,
                          size_t *out_length)
{
    enum hip_msgpack_kind kind;
    uint64_t value, skip;

    if (!hip_mp_head(mp, &kind, &value, &skip) || kind != HIP_MP_STR ||
        value > mp->bytes.size - mp->at)
        return false;
    *out_text = (const char *)mp->bytes.data + mp->at;
    *out_length = (size_t)value;
    mp->at += (size_t)value;
    return true;
}

/* The next object as an array or map count; false when it is something else. */
static bool hip_mp_container(struct hip_msgpack *mp, enum hip_msgpack_kind want,
                             uint64_t *out_count)
{
    enum hip_msgpack_kind kind;
    uint64_t skip;

    return hip_mp_head(mp, &kind, out_count, &skip) && kind == want &&
           *out_count <= mp->bytes.size - mp->at;
}

static bool hip_mp_key_is(const char *key, size_t length, const char *want)
{
    return strlen(want) == length && memcmp(key, want, length) == 0;
}

/* ---- the metadata's kernels ---- */

/* One argument map: its size, and whether it is one of the caller's. */
static bool hip_read_arg(struct hip_msgpack *mp, uint32_t *out_size,
                         bool *out_explicit)
{
    uint64_t pairs;

    *out_size = 0;
    *out_explicit = true;
    if (!hip_mp_container(mp, HIP_MP_MAP, &pairs))
        return false;
    for (uint64_t i = 0; i < pairs; i++) {
        const char *key, *text;
        size_t key_length, text_length;
        enum hip_msgpack_kind kind;
        uint64_t value, skip;

        if (!hip_mp_string(mp, &key, &key_length))
            return false;
        if (hip_mp_key_is(key, key_length, ".size")) {
            if (!hip_mp_head(mp, &kind, &value, &skip) || kind != HIP_MP_UINT)
                return false;
            *out_size = value <= UINT32_MAX ? (uint32_t)value : 0;
        } else if (hip_mp_key_is(key, key_length, ".value_kind")) {
            if (!hip_mp_string(mp, &text, &text_length))
                return false;
            *out_explicit = !(text_length >= 7 && memcmp(text, "hidden_", 7) == 0);
        } else if (!hip_mp_skip(mp, 2)) {
            return false;
        }
    }
    return true;
}

/* The ".args" array: the caller's arguments, in order, into `signature`. */
static bool hip_read_args(struct hip_msgpack *mp,
                          struct accel_kernel_signature *signature)
{
    uint64_t count;

    signature->param_count = 0;
    if (!hip_mp_container(mp, HIP_MP_ARRAY, &count))
        return false;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t size;
        bool is_explicit;

        if (!hip_read_arg(mp, &size, &is_explicit))
            return false;
        if (!is_explicit || signature->param_count == ACCEL_PARAM_COUNT_UNKNOWN)
            continue;
        if (signature->param_count == ACCEL_KERNEL_MAX_PARAMS)
            signature->param_count = ACCEL_PARAM_COUNT_UNKNOWN;
        else
            signature->param_sizes[signature->param_count++] = size;
    }
    return true;
}

static bool hip_add_kernel(struct accel__hip_code_object *object,
                           const char *name, size_t length,
                           const struct accel_kernel_signature *signature,
                           bool *out_memory)
{
    struct accel__hip_kernel_info *grown;
    char *copy;

    *out_memory = true;
    grown = realloc(object->kernels, (object->kernel_count + 1) * sizeof(*grown));
    if (grown == NULL)
        return *out_memory = false;
    object->kernels = grown;
    copy = malloc(length + 1);
    if (copy == NULL)
        return *out_memory = false;
    memcpy(copy, name, length);
    copy[length] = '\0';
    grown[object->kernel_count].name = copy;
    grown[object->kernel_count].signature = *signature;
    object->kernel_count++;
    return true;
}

/* One kernel map; added when it has a name and arguments. */
static bool hip_read_kernel(struct hip_msgpack *mp,
                            struct accel__hip_code_object *object,
                            bool *out_memory)
{
    struct accel_kernel_signature signature;
    const char *name = NULL;
    size_t name_length = 0;
    uint64_t pairs;

    *out_memory = true;
    memset(&signature, 0, sizeof(signature));
    if (!hip_mp_container(mp, HIP_MP_MAP, &pairs))
        return false;
    for (uint64_t i = 0; i < pairs; i++) {
        const char *key;
        size_t key_length;

        if (!hip_mp_string(mp, &key, &key_length))
            return false;
        if (hip_mp_key_is(key, key_length, ".name")) {
            if (!hip_mp_string(mp, &name, &name_length))
                return false;
        } else if (hip_mp_key_is(key, key_length, ".args")) {
            if (!hip_read_args(mp, &signature))
                return false;
        } else if (!hip_mp_skip(mp, 1)) {
            return false;
        }
    }
    /* Without ".args" the kernel has no parameters: the signature says 0 already. */
    if (name == NULL || name_length == 0 ||
        memchr(name, '\0', name_length) != NULL)
        return true;
    return hip_add_kernel(object, name, name_length, &signature, out_memory);
}

/*
 * The metadata map's "amdhsa.kernels". False when memory ran out; a
 * malformed map keeps the kernels read before the fault.
 */
static bool hip_read_metadata(struct hip_bytes bytes,
                              struct accel__hip_code_object *object)
{
    struct hip_msgpack mp = {bytes, 0};
    uint64_t pairs, kernels;
    bool memory = true;

    if (!hip_mp_container(&mp, HIP_MP_MAP, &pairs))
        return true;
    for (uint64_t i = 0; i < pairs; i++) {
        const char *key;
        size_t key_length;

        if (!hip_mp_string(&mp, &key, &key_length))
            return true;
        if (!hip_mp_key_is(key, key_length, "amdhsa.kernels")) {
            if (!hip_mp_skip(&mp, 1))
                return true;
            continue;
        }
        if (!hip_mp_container(&mp, HIP_MP_ARRAY, &kernels))
            return true;
        for (uint64_t k = 0; k < kernels; k++) {
            if (!hip_read_kernel(&mp, object, &memory))
                return memory;
        }
    }
    return true;
}

/* ---- ELF notes ---- */

#define HIP_ELF_SHT_NOTE 7u
#define HIP_NT_AMDGPU_METADATA 32u

/* The AMDGPU metadata note's payload in one SHT_NOTE section, if it is there. */
static bool hip_find_note(struct hip_bytes section, struct hip_bytes *out_payload)
{
    size_t at = 0;

    while (at < section.size) {
        uint32_t name_size, desc_size, type;
        size_t name_at = at + 12, desc_at;

        if (!hip_read_u32(section, at, &name_size) ||
            !hip_read_u32(section, at + 4, &desc_size) ||
            !hip_read_u32(section, at + 8, &type) || name_size > section.size)
            return false;
        desc_at = name_at + ((name_size + 3u) & ~3u);
        if (desc_at > section.size || desc_size > section.size - desc_at)
            return false;
        if (type == HIP_NT_AMDGPU_METADATA && name_size == 7 &&
            memcmp(section.data + name_at, "AMDGPU", 7) == 0)
            return hip_window(section, desc_at, desc_size, out_payload);
        at = desc_at + ((desc_size + 3u) & ~3u);
    }
    return false;
}

/* Read the metadata of a 64-bit little-endian ELF code object. */
static bool hip_read_elf(struct hip_bytes elf,
                         struct accel__hip_code_object *object)
{
    uint64_t section_headers;
    uint16_t entry_size, count;

    if (elf.size < 64 || memcmp(elf.data, "\177ELF", 4) != 0 || elf.data[4] != 2 ||
        elf.data[5] != 1 || !hip_read_u64(elf, 0x28, &section_headers) ||
        !hip_read_u16(elf, 0x3a, &entry_size) ||
        !hip_read_u16(elf, 0x3c, &count) || entry_size < 64 ||
        section_headers > elf.size)
        return true;
    for (uint16_t i = 0; i < count; i++) {
        struct hip_bytes header, section, payload;
        uint64_t offset, size;
        uint32_t type;

        if (!hip_window(elf, section_headers + (uint64_t)i * entry_size, 64,
                        &header))
            return true;
        if (!hip_read_u32(header, 4, &type) || type != HIP_ELF_SHT_NOTE ||
            !hip_read_u64(header, 0x18, &offset) ||
            !hip_read_u64(header, 0x20, &size) ||
            !hip_window(elf, offset, size, &section))
            continue;
        if (hip_find_note(section, &payload))
            return hip_read_metadata(payload, object);
    }
    return true;
}

/* ---- clang offload bundles ---- */

static const char hip_bundle_magic[24] = "__CLANG_OFFLOAD_BUNDLE__";
static const char hip_compressed_magic[4] = "CCOB";

/* Entries past this many are not looked at. */
#define HIP_BUNDLE_ENTRIES_MAX 1024u

struct hip_bundle_entry {
    struct hip_bytes code;
    char processor[64];
    char target[96]; /* with its features, for messages */
};

/* Where a target ID's processor starts: after "amdgcn-amd-amdhsa-" and an empty environment. */
static const char *hip_target_start(const char *target_id)
{
    const char *start = strstr(target_id, "amdgcn-amd-amdhsa-");

    if (start == NULL)
        return target_id;
    start += strlen("amdgcn-amd-amdhsa-");
    /* The environment field is empty in "hipv4-amdgcn-amd-amdhsa--gfx90a". */
    return *start == '-' ? start + 1 : start;
}

void accel__hip_target_with_features(const char *target_id, char *out, size_t size)
{
    const char *start = hip_target_start(target_id);

    if (size == 0)
        return;
    if (strncmp(start, "gfx", 3) != 0)
        start = "";
    /* Cut to `size` on purpose: a memcpy, which -O3's truncation warning
     * for snprintf does not flag. */
    size_t length = strlen(start);
    if (length >= size)
        length = size - 1;
    memcpy(out, start, length);
    out[length] = '\0';
}

void accel__hip_target_processor(const char *target_id, char *out, size_t size)
{
    const char *start = hip_target_start(target_id);
    size_t length = 0;

    while (start[length] != '\0' && start[length] != ':')
        length++;
    if (size == 0)
        return;
    if (strncmp(start, "gfx", 3) != 0)
        length = 0;
    if (length >= size)
        length = size - 1;
    memcpy(out, start, length);
    out[length] = '\0';
}

/*
 * The bundle entry whose header starts at *at, which moves to the next
 * header; false when the header is out of bounds. An entry whose code lies
 * out of bounds comes back with no code.
 */
static bool hip_bundle_entry(struct hip_bytes bundle, size_t *at,
                             struct hip_bundle_entry *out)
{
    uint64_t offset, size, id_length;
    char id[192];

    if (!hip_read_u64(bundle, *at, &offset) ||
        !hip_read_u64(bundle, *at + 8, &size) ||
        !hip_read_u64(bundle, *at + 16, &id_length) ||
        id_length > bundle.size - *at - 24)
        return false;
    snprintf(id, sizeof(id), "%.*s",
             (int)(id_length < sizeof(id) ? id_length : sizeof(id) - 1),
             (const char *)bundle.data + *at + 24);
    *at += 24 + (size_t)id_length;
    out->processor[0] = '\0';
    out->target[0] = '\0';
    if (strstr(id, "amdgcn-amd-amdhsa") != NULL) {
        accel__hip_target_processor(id, out->processor, sizeof(out->processor));
        accel__hip_target_with_features(id, out->target, sizeof(out->target));
    }
    if (!hip_window(bundle, offset, size, &out->code))
        out->code.size = 0;
    return true;
}

static void hip_add_target(struct accel__hip_code_object *object,
                           const char *processor)
{
    size_t used = strlen(object->targets);

    if (processor[0] == '\0' || used + 1 >= sizeof(object->targets))
        return;
    snprintf(object->targets + used, sizeof(object->targets) - used, "%s%s",
             used != 0 ? ", " : "", processor);
}

/* Read the entry for `arch`, else the first GPU entry with code, and list the targets. */
static bool hip_read_bundle(struct hip_bytes bundle, const char *arch,
                            struct accel__hip_code_object *object)
{
    struct hip_bundle_entry entry, chosen = {{NULL, 0}, "", ""};
    uint64_t count;
    size_t at = 32;

    object->kind = ACCEL__HIP_IMAGE_BUNDLE;
    object->has_device_target = false;
    if (!hip_read_u64(bundle, 24, &count))
        return true;
    for (uint64_t i = 0; i < count && i < HIP_BUNDLE_ENTRIES_MAX; i++) {
        if (!hip_bundle_entry(bundle, &at, &entry))
            break;
        if (entry.processor[0] == '\0')
            continue;
        hip_add_target(object, entry.target);
        if (strcmp(entry.processor, arch) == 0 && entry.code.size != 0 &&
            !object->has_device_target) {
            object->has_device_target = true;
            chosen = entry;
        } else if (chosen.code.size == 0) {
            chosen = entry;
        }
    }
    return chosen.code.size == 0 || hip_read_elf(chosen.code, object);
}

/* ---- the reader ---- */

bool accel__hip_code_object_read(const void *image, size_t size, const char *arch,
                                 struct accel__hip_code_object *out_object)
{
    struct hip_bytes bytes = {image, size};

    memset(out_object, 0, sizeof(*out_object));
    if (image == NULL)
        return true;
    if (size >= sizeof(hip_bundle_magic) &&
        memcmp(image, hip_bundle_magic, sizeof(hip_bundle_magic)) == 0)
        return hip_read_bundle(bytes, arch, out_object);
    if (size >= sizeof(hip_compressed_magic) &&
        memcmp(image, hip_compressed_magic, sizeof(hip_compressed_magic)) == 0) {
        out_object->kind = ACCEL__HIP_IMAGE_COMPRESSED;
        return true;
    }
    if (size >= 4 && memcmp(image, "\177ELF", 4) == 0) {
        out_object->kind = ACCEL__HIP_IMAGE_ELF;
        out_object->has_device_target = true;
        return hip_read_elf(bytes, out_object);
    }
    return true;
}

const struct accel_kernel_signature *
accel__hip_code_object_signature(const struct accel__hip_code_object *object,
                                 const char *name)
{
    for (uint32_t i = 0; i < object->kernel_count; i++) {
        if (strcmp(object->kernels[i].name, name) == 0)
            return &object->kernels[i].signature;
    }
    return NULL;
}

void accel__hip_code_object_free(struct accel__hip_code_object *object)
{
    for (uint32_t i = 0; i < object->kernel_count; i++)
        free(object->kernels[i].name);
    free(object->kernels);
    memset(object, 0, sizeof(*object));
}
