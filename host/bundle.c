/*
 * Bundles: parse, pick and write (the format is specified in bundle.h).
 *
 * The parser treats its input as hostile: it reads integers byte by byte
 * (the data may be unaligned), checks every length against the data before
 * using it, does arithmetic that cannot overflow, and stops at the first
 * problem with a detail that names the field and the numbers. It keeps no
 * state and does no I/O, so that a fuzzer can drive it directly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "status.h"

/* Formats a plugin may be handed; anything else is a corrupt bundle. */
static const char *const known_formats[] = {
    "ptx", "cubin", "fatbin", "hsaco", "elf", ACCEL__BUNDLE_SIGNATURES_FORMAT,
};
#define KNOWN_FORMATS_TEXT "ptx, cubin, fatbin, hsaco, elf, sig"

/* Entry field offsets inside one 88-byte table entry. */
enum {
    ENTRY_BACKEND = 0,
    ENTRY_TARGET = 32,
    ENTRY_FORMAT = 64,
    ENTRY_OFFSET = 72,
    ENTRY_SIZE = 80,
};

struct bundle_header {
    uint16_t version;
    uint16_t header_size;
    uint32_t count;
    uint64_t file_size;
    uint32_t checksum;
    uint32_t reserved;
};

/* ---- little-endian fields ---- */

static uint64_t read_le(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;
    for (unsigned i = bytes; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

static void write_le(uint8_t *p, uint64_t value, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++, value >>= 8)
        p[i] = (uint8_t)value;
}

/*
 * CRC-32 as zlib computes it (reflected polynomial 0xEDB88320, initial and
 * final XOR with all ones), so that any zlib binding can check a bundle.
 * The table is built on the stack at each call: it costs far less than the
 * pass over the data and keeps this file free of global state.
 */
static uint32_t crc32_ieee(const uint8_t *data, size_t size)
{
    uint32_t table[256];
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++)
        crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

/* ---- names ---- */

static bool format_known(const char *format)
{
    for (size_t i = 0; i < sizeof known_formats / sizeof known_formats[0]; i++)
        if (strcmp(format, known_formats[i]) == 0)
            return true;
    return false;
}

static bool backend_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * Check one fixed-size name field: non-empty printable ASCII, a NUL, then
 * only NULs. The field's bytes are printed only once they are known to be
 * printable, so that a hostile file cannot put escapes into a message.
 */
static accel_status check_name(const char *field, size_t field_size,
                               const char *name, accel_status status,
                               const char *what, uint32_t index)
{
    size_t length = strnlen(field, field_size);
    if (length == field_size)
        return accel__error(status,
                            "%s %" PRIu32 ": the %s is not "
                            "NUL-terminated within its %zu bytes",
                            what, index, name, field_size);
    if (length == 0)
        return accel__error(status, "%s %" PRIu32 ": the %s is empty", what,
                            index, name);
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)field[i];
        if (c < 0x21 || c > 0x7e)
            return accel__error(status,
                                "%s %" PRIu32 ": the %s has byte "
                                "0x%02x at position %zu, which is not "
                                "printable ASCII",
                                what, index, name, c, i);
    }
    for (size_t i = length + 1; i < field_size; i++)
        if (field[i] != '\0')
            return accel__error(status,
                                "%s %" PRIu32 ": the %s '%s' is "
                                "followed by bytes other than NUL",
                                what, index, name, field);
    return ACCEL_OK;
}

/* The checks on an entry's names, shared by the parser and the writer. */
static accel_status check_names(const struct accel__bundle_entry *entry,
                                accel_status status, const char *what,
                                uint32_t index)
{
    accel_status st;
    if ((st = check_name(entry->backend, sizeof entry->backend, "backend",
                         status, what, index)) != ACCEL_OK ||
        (st = check_name(entry->target, sizeof entry->target, "target", status,
                         what, index)) != ACCEL_OK ||
        (st = check_name(entry->format, sizeof entry->format, "format", status,
                         what, index)) != ACCEL_OK)
        return st;
    for (const char *c = entry->backend; *c != '\0'; c++)
        if (!backend_char(*c))
            return accel__error(status,
                                "%s %" PRIu32 ": backend '%s' has "
                                "'%c', outside [a-z0-9_]",
                                what, index, entry->backend, *c);
    if (!format_known(entry->format))
        return accel__error(status,
                            "%s %" PRIu32 ": format '%s' is unknown "
                            "(known: " KNOWN_FORMATS_TEXT ")",
                            what, index, entry->format);
    return ACCEL_OK;
}

static bool same_key(const struct accel__bundle_entry *a,
                     const struct accel__bundle_entry *b)
{
    return strcmp(a->backend, b->backend) == 0 &&
           strcmp(a->target, b->target) == 0 &&
           strcmp(a->format, b->format) == 0;
}

/* At most ACCEL__BUNDLE_MAX_ENTRIES entries: the quadratic scan is bounded. */
static accel_status check_duplicates(const struct accel__bundle_entry *entries,
                                     uint32_t count, accel_status status,
                                     const char *plural)
{
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (same_key(&entries[i], &entries[j]))
                return accel__error(
                    status, "%s %" PRIu32 " and %" PRIu32 " are both %s:%s:%s",
                    plural, j, i, entries[i].backend, entries[i].target,
                    entries[i].format);
    return ACCEL_OK;
}

/* ---- parsing ---- */

bool accel__bundle_is(const void *data, size_t size)
{
    return data != NULL && size >= ACCEL__BUNDLE_MAGIC_SIZE &&
           memcmp(data, ACCEL__BUNDLE_MAGIC, ACCEL__BUNDLE_MAGIC_SIZE) == 0;
}

static void decode_header(const uint8_t *p, struct bundle_header *out_header)
{
    out_header->version = (uint16_t)read_le(p + 8, 2);
    out_header->header_size = (uint16_t)read_le(p + 10, 2);
    out_header->count = (uint32_t)read_le(p + 12, 4);
    out_header->file_size = read_le(p + 16, 8);
    out_header->checksum = (uint32_t)read_le(p + 24, 4);
    out_header->reserved = (uint32_t)read_le(p + 28, 4);
}

/* The header's own fields, before anything they point at is trusted. */
static accel_status check_header_fields(const struct bundle_header *header)
{
    if (header->version != ACCEL__BUNDLE_VERSION)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle version %u is not "
                            "supported (this library reads version %d)",
                            header->version, ACCEL__BUNDLE_VERSION);
    if (header->header_size != ACCEL__BUNDLE_HEADER_SIZE)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle header size is %u "
                            "bytes; version %d has %d",
                            header->header_size, ACCEL__BUNDLE_VERSION,
                            ACCEL__BUNDLE_HEADER_SIZE);
    if (header->reserved != 0)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle header's reserved field "
                            "is 0x%08" PRIx32 "; it must be 0",
                            header->reserved);
    if (header->count == 0)
        return accel__error(ACCEL_ERR_MODULE, "bundle has no entries");
    if (header->count > ACCEL__BUNDLE_MAX_ENTRIES)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle claims %" PRIu32
                            " entries; at most %d are allowed",
                            header->count, ACCEL__BUNDLE_MAX_ENTRIES);
    return ACCEL_OK;
}

static accel_status check_header(const uint8_t *data, size_t size,
                                 struct bundle_header *out_header)
{
    memset(out_header, 0, sizeof *out_header);
    if (size < ACCEL__BUNDLE_HEADER_SIZE)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle is %zu bytes, shorter "
                            "than its %d-byte header",
                            size, ACCEL__BUNDLE_HEADER_SIZE);
    if (!accel__bundle_is(data, size))
        return accel__error(ACCEL_ERR_MODULE,
                            "not a bundle: the file does "
                            "not start with the magic \"%s\"",
                            ACCEL__BUNDLE_MAGIC);
    decode_header(data, out_header);
    accel_status status = check_header_fields(out_header);
    if (status != ACCEL_OK)
        return status;
    if (out_header->file_size > size)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle is truncated: its "
                            "header says %" PRIu64 " bytes but only %zu are "
                            "present",
                            out_header->file_size, size);
    if (out_header->file_size < size)
        return accel__error(
            ACCEL_ERR_MODULE,
            "bundle has %" PRIu64 " bytes "
            "past its end (its header says %" PRIu64 " bytes, %zu are present)",
            (uint64_t)size - out_header->file_size, out_header->file_size, size);
    /* count <= ACCEL__BUNDLE_MAX_ENTRIES: this cannot overflow. */
    uint64_t table_end = ACCEL__BUNDLE_HEADER_SIZE +
                         (uint64_t)out_header->count * ACCEL__BUNDLE_ENTRY_SIZE;
    if (table_end > size)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle's entry table (%" PRIu32
                            " entries of %d bytes, ending at byte %" PRIu64
                            ") passes the end of the file (%zu bytes)",
                            out_header->count, ACCEL__BUNDLE_ENTRY_SIZE,
                            table_end, size);
    uint32_t crc = crc32_ieee(data + ACCEL__BUNDLE_HEADER_SIZE,
                              size - ACCEL__BUNDLE_HEADER_SIZE);
    if (crc != out_header->checksum)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle checksum mismatch: the "
                            "header says 0x%08" PRIx32 ", the contents give "
                            "0x%08" PRIx32 " (the file is corrupt)",
                            out_header->checksum, crc);
    return ACCEL_OK;
}

static void decode_entry(const uint8_t *p, struct accel__bundle_entry *out_entry)
{
    memcpy(out_entry->backend, p + ENTRY_BACKEND, sizeof out_entry->backend);
    memcpy(out_entry->target, p + ENTRY_TARGET, sizeof out_entry->target);
    memcpy(out_entry->format, p + ENTRY_FORMAT, sizeof out_entry->format);
    out_entry->offset = read_le(p + ENTRY_OFFSET, 8);
    out_entry->size = read_le(p + ENTRY_SIZE, 8);
}

/* An entry's image lies after the table, inside the file, aligned. */
static accel_status check_range(const struct accel__bundle_entry *entry,
                                uint32_t index, uint64_t table_end,
                                uint64_t file_size)
{
    if (entry->size == 0)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle entry %" PRIu32 ": the "
                            "image is empty",
                            index);
    if (entry->offset < table_end)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle entry %" PRIu32 ": offset %" PRIu64
                            " lies inside the header and "
                            "entry table (which end at byte %" PRIu64 ")",
                            index, entry->offset, table_end);
    /* Written so that no sum can wrap: offset <= file_size is known first. */
    if (entry->offset > file_size || entry->size > file_size - entry->offset)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle entry %" PRIu32 ": offset %" PRIu64
                            " + size %" PRIu64 " passes "
                            "the end of the file (%" PRIu64 " bytes)",
                            index, entry->offset, entry->size, file_size);
    if (entry->offset % ACCEL__BUNDLE_ALIGN != 0)
        return accel__error(ACCEL_ERR_MODULE,
                            "bundle entry %" PRIu32 ": offset %" PRIu64
                            " is not a multiple of %d",
                            index, entry->offset, ACCEL__BUNDLE_ALIGN);
    return ACCEL_OK;
}

/* Ranges are in the file, so offset + size does not wrap. */
static accel_status check_overlaps(const struct accel__bundle_entry *entries,
                                   uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        const struct accel__bundle_entry *a = &entries[i];
        for (uint32_t j = 0; j < i; j++) {
            const struct accel__bundle_entry *b = &entries[j];
            if (a->offset < b->offset + b->size && b->offset < a->offset + a->size)
                return accel__error(ACCEL_ERR_MODULE,
                                    "bundle entries %" PRIu32 " and %" PRIu32
                                    " overlap: bytes [%" PRIu64 ", %" PRIu64
                                    ") and [%" PRIu64 ", %" PRIu64 ")",
                                    j, i, b->offset, b->offset + b->size,
                                    a->offset, a->offset + a->size);
        }
    }
    return ACCEL_OK;
}

accel_status accel__bundle_parse(const void *data, size_t size,
                                 struct accel__bundle_entry *out_entries,
                                 uint32_t *out_count)
{
    if (out_count != NULL)
        *out_count = 0;
    if ((data == NULL && size > 0) || out_entries == NULL || out_count == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel__bundle_parse: NULL data, entries or count");

    const uint8_t *bytes = data;
    struct bundle_header header;
    accel_status status = check_header(bytes, size, &header);
    if (status != ACCEL_OK)
        return status;

    uint64_t table_end = ACCEL__BUNDLE_HEADER_SIZE +
                         (uint64_t)header.count * ACCEL__BUNDLE_ENTRY_SIZE;
    for (uint32_t i = 0; i < header.count; i++) {
        struct accel__bundle_entry *entry = &out_entries[i];
        decode_entry(bytes + ACCEL__BUNDLE_HEADER_SIZE +
                         (size_t)i * ACCEL__BUNDLE_ENTRY_SIZE,
                     entry);
        status = check_names(entry, ACCEL_ERR_MODULE, "bundle entry", i);
        if (status != ACCEL_OK)
            return status;
        status = check_range(entry, i, table_end, header.file_size);
        if (status != ACCEL_OK)
            return status;
    }
    status = check_overlaps(out_entries, header.count);
    if (status != ACCEL_OK)
        return status;
    status = check_duplicates(out_entries, header.count, ACCEL_ERR_MODULE,
                              "bundle entries");
    if (status != ACCEL_OK)
        return status;
    *out_count = header.count;
    return ACCEL_OK;
}

/* ---- picking ---- */

/*
 * Read "PREFIX<digits>" into *out_number, with at most four digits. With
 * `suffix_ok`, lowercase letters may follow the digits ("sm_90a").
 */
static bool parse_numbered(const char *text, const char *prefix, bool suffix_ok,
                           unsigned *out_number)
{
    *out_number = 0;
    size_t prefix_length = strlen(prefix);
    if (strncmp(text, prefix, prefix_length) != 0)
        return false;
    const char *p = text + prefix_length;
    unsigned number = 0;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 5; p++, digits++)
        number = number * 10 + (unsigned)(*p - '0');
    if (digits == 0 || digits > 4)
        return false;
    while (suffix_ok && *p >= 'a' && *p <= 'z')
        p++;
    if (*p != '\0')
        return false;
    *out_number = number;
    return true;
}

/* How well an entry fits; higher is better, 0 is not at all. */
enum fit {
    FIT_NONE = 0,
    FIT_ANY_TARGET = 1,
    FIT_PORTABLE_PTX = 2,
    FIT_EXACT_PTX = 3,
    FIT_EXACT = 4,
};

/*
 * Rate one entry for the device. *out_tiebreak orders entries of the same
 * fit: for portable PTX, the newest compute capability the device runs.
 */
/*
 * For a CPU image built for ISA level N of the device's architecture
 * ("x86_64-v3" on an "x86_64" device), N; else 0. The baseline, the bare
 * architecture, is level 1.
 */
static unsigned isa_level_of(const char *target, const char *arch)
{
    size_t arch_length = strlen(arch);
    unsigned level;
    if (strcmp(target, arch) == 0)
        return 1;
    if (strncmp(target, arch, arch_length) != 0 || target[arch_length] != '-' ||
        !parse_numbered(target + arch_length + 1, "v", false, &level) ||
        level < 1)
        return 0;
    return level;
}

static enum fit rate_entry(const struct accel__bundle_entry *entry,
                           const char *backend, const char *arch,
                           unsigned cpu_level, unsigned *out_tiebreak)
{
    *out_tiebreak = 0;
    /* The kernels' signatures are no image, whatever a plugin is named. */
    if (strcmp(entry->backend, backend) != 0 ||
        strcmp(entry->format, ACCEL__BUNDLE_SIGNATURES_FORMAT) == 0)
        return FIT_NONE;
    bool ptx = strcmp(entry->format, "ptx") == 0;
    if (strcmp(entry->target, arch) == 0) {
        *out_tiebreak = 1;
        return ptx ? FIT_EXACT_PTX : FIT_EXACT;
    }
    unsigned level = ptx ? 0 : isa_level_of(entry->target, arch);
    if (level > 1) {
        /* Never an image for a level above the CPU's: it would fault. */
        if (level > cpu_level)
            return FIT_NONE;
        *out_tiebreak = level;
        return FIT_EXACT;
    }
    unsigned needed, device_sm;
    if (ptx && parse_numbered(entry->target, "compute_", false, &needed) &&
        parse_numbered(arch, "sm_", true, &device_sm) && device_sm >= needed) {
        *out_tiebreak = needed;
        return FIT_PORTABLE_PTX;
    }
    if (strcmp(entry->target, "any") == 0)
        return FIT_ANY_TARGET;
    return FIT_NONE;
}

/* Say what the bundle holds, for the detail of a failed pick. */
static accel_status no_fit(const struct accel__bundle_entry *entries,
                           uint32_t count, const char *backend, const char *arch)
{
    /* Leave room in the detail (1024 bytes) for the words around the list. */
    char list[768] = "";
    size_t used = 0;
    uint32_t listed = 0;
    for (; listed < count; listed++) {
        const struct accel__bundle_entry *e = &entries[listed];
        int n = snprintf(list + used, sizeof list - used, "%s%s:%s:%s",
                         listed > 0 ? ", " : "", e->backend, e->target,
                         e->format);
        if (n < 0 || (size_t)n >= sizeof list - used - 32) {
            list[used] = '\0';
            break;
        }
        used += (size_t)n;
    }
    if (listed < count)
        snprintf(list + used, sizeof list - used, ", and %" PRIu32 " more",
                 count - listed);
    return accel__error(ACCEL_ERR_NOT_FOUND,
                        "no image in the bundle fits the "
                        "device (backend %.31s, target %.31s); the bundle "
                        "holds %s",
                        backend, arch, count > 0 ? list : "nothing");
}

accel_status accel__bundle_pick(const struct accel__bundle_entry *entries,
                                uint32_t count, const char *backend,
                                const char *arch, uint32_t *out_index)
{
    return accel__bundle_pick_at_level(entries, count, backend, arch,
                                       accel__cpu_isa_level(arch), out_index);
}

accel_status accel__bundle_pick_at_level(const struct accel__bundle_entry *entries,
                                         uint32_t count, const char *backend,
                                         const char *arch, unsigned cpu_level,
                                         uint32_t *out_index)
{
    if (out_index != NULL)
        *out_index = 0;
    if ((entries == NULL && count > 0) || backend == NULL || arch == NULL ||
        out_index == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel__bundle_pick: NULL entries, backend, arch "
                            "or index");

    enum fit best = FIT_NONE;
    unsigned best_tiebreak = 0;
    uint32_t best_index = 0;
    for (uint32_t i = 0; i < count; i++) {
        unsigned tiebreak;
        enum fit fit = rate_entry(&entries[i], backend, arch, cpu_level,
                                  &tiebreak);
        if (fit > best ||
            (fit == best && fit != FIT_NONE && tiebreak > best_tiebreak)) {
            best = fit;
            best_tiebreak = tiebreak;
            best_index = i;
        }
    }
    if (best == FIT_NONE)
        return no_fit(entries, count, backend, arch);
    *out_index = best_index;
    return ACCEL_OK;
}

bool accel__bundle_find_signatures(const struct accel__bundle_entry *entries,
                                   uint32_t count, uint32_t *out_index)
{
    for (uint32_t i = 0; i < count; i++) {
        if (strcmp(entries[i].backend, ACCEL__BUNDLE_SIGNATURES_BACKEND) == 0 &&
            strcmp(entries[i].format, ACCEL__BUNDLE_SIGNATURES_FORMAT) == 0) {
            *out_index = i;
            return true;
        }
    }
    return false;
}

/* ---- writing ---- */

/* Copy the caller's names into an entry, checking that they fit. */
static accel_status fill_entry(const struct accel__bundle_image *image,
                               uint32_t index,
                               struct accel__bundle_entry *out_entry)
{
    memset(out_entry, 0, sizeof *out_entry);
    const struct {
        const char *value;
        char *field;
        size_t field_size;
        const char *name;
    } names[] = {
        {image->backend, out_entry->backend, sizeof out_entry->backend, "backend"},
        {image->target, out_entry->target, sizeof out_entry->target, "target"},
        {image->format, out_entry->format, sizeof out_entry->format, "format"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (names[i].value == NULL)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "bundle image %" PRIu32 ": no %s", index,
                                names[i].name);
        size_t length = strlen(names[i].value);
        if (length >= names[i].field_size)
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "bundle image %" PRIu32 ": the %s has %zu characters; at most "
                "%zu fit",
                index, names[i].name, length, names[i].field_size - 1);
        memcpy(names[i].field, names[i].value, length);
    }
    accel_status status = check_names(out_entry, ACCEL_ERR_INVALID_ARGUMENT,
                                      "bundle image", index);
    if (status != ACCEL_OK)
        return status;
    if (image->data == NULL || image->size == 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "bundle image %" PRIu32 " (%s:%s:%s) is empty",
                            index, out_entry->backend, out_entry->target,
                            out_entry->format);
    out_entry->size = image->size;
    return ACCEL_OK;
}

/* Round up to the image alignment; false when that passes SIZE_MAX. */
static bool align_up(size_t value, size_t *out_value)
{
    *out_value = 0;
    if (value > SIZE_MAX - (ACCEL__BUNDLE_ALIGN - 1))
        return false;
    *out_value = (value + ACCEL__BUNDLE_ALIGN - 1) &
                 ~(size_t)(ACCEL__BUNDLE_ALIGN - 1);
    return true;
}

/* Give each entry its offset, in order; *out_size is the file's size. */
static accel_status lay_out(struct accel__bundle_entry *entries, uint32_t count,
                            size_t *out_size)
{
    *out_size = 0;
    size_t end = ACCEL__BUNDLE_HEADER_SIZE +
                 (size_t)count * ACCEL__BUNDLE_ENTRY_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        size_t offset;
        if (!align_up(end, &offset) || entries[i].size > SIZE_MAX - offset)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "bundle image %" PRIu32
                                ": the bundle would pass SIZE_MAX "
                                "bytes",
                                i);
        entries[i].offset = offset;
        end = offset + (size_t)entries[i].size;
    }
    *out_size = end;
    return ACCEL_OK;
}

static void encode(const struct accel__bundle_entry *entries, uint32_t count,
                   const struct accel__bundle_image *images, uint8_t *out,
                   size_t size)
{
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *p = out + ACCEL__BUNDLE_HEADER_SIZE +
                     (size_t)i * ACCEL__BUNDLE_ENTRY_SIZE;
        memcpy(p + ENTRY_BACKEND, entries[i].backend, sizeof entries[i].backend);
        memcpy(p + ENTRY_TARGET, entries[i].target, sizeof entries[i].target);
        memcpy(p + ENTRY_FORMAT, entries[i].format, sizeof entries[i].format);
        write_le(p + ENTRY_OFFSET, entries[i].offset, 8);
        write_le(p + ENTRY_SIZE, entries[i].size, 8);
        memcpy(out + entries[i].offset, images[i].data, images[i].size);
    }
    memcpy(out, ACCEL__BUNDLE_MAGIC, ACCEL__BUNDLE_MAGIC_SIZE);
    write_le(out + 8, ACCEL__BUNDLE_VERSION, 2);
    write_le(out + 10, ACCEL__BUNDLE_HEADER_SIZE, 2);
    write_le(out + 12, count, 4);
    write_le(out + 16, size, 8);
    write_le(out + 24,
             crc32_ieee(out + ACCEL__BUNDLE_HEADER_SIZE,
                        size - ACCEL__BUNDLE_HEADER_SIZE),
             4);
    write_le(out + 28, 0, 4);
}

accel_status accel__bundle_write(const struct accel__bundle_image *images,
                                 uint32_t count, void **out_data,
                                 size_t *out_size)
{
    struct accel__bundle_entry *entries = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    accel_status status;
    if (out_data != NULL)
        *out_data = NULL;
    if (out_size != NULL)
        *out_size = 0;
    if (images == NULL || out_data == NULL || out_size == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel__bundle_write: NULL images or output");
    if (count == 0 || count > ACCEL__BUNDLE_MAX_ENTRIES)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "a bundle holds 1 to "
                            "%d images, not %" PRIu32,
                            ACCEL__BUNDLE_MAX_ENTRIES, count);

    entries = calloc(count, sizeof *entries);
    if (entries == NULL) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "no memory for %" PRIu32 " bundle entries", count);
        goto fail;
    }
    for (uint32_t i = 0; i < count; i++)
        if ((status = fill_entry(&images[i], i, &entries[i])) != ACCEL_OK)
            goto fail;
    status = check_duplicates(entries, count, ACCEL_ERR_INVALID_ARGUMENT,
                              "bundle images");
    if (status != ACCEL_OK)
        goto fail;
    if ((status = lay_out(entries, count, &size)) != ACCEL_OK)
        goto fail;
    /* Zeroed: the padding between images is part of the checksum. */
    data = calloc(1, size);
    if (data == NULL) {
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                              "no memory for a bundle of %zu bytes", size);
        goto fail;
    }
    encode(entries, count, images, data, size);
    free(entries);
    *out_data = data;
    *out_size = size;
    return ACCEL_OK;

fail:
    free(data);
    free(entries);
    return status;
}
