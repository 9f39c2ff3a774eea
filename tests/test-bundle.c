/*
 * Bundles: what the writer produces parses back to the same images, every
 * way a file can be malformed is rejected with its own detail, the picker
 * prefers the exact target to portable PTX, and accel-pack round-trips
 * images and lists them.
 *
 * Corrupt inputs are made by writing a valid bundle and changing one field;
 * where the check under test comes after the checksum, the test recomputes
 * the checksum (with its own CRC-32, so the format's checksum is pinned
 * independently of the library's code).
 */
#include "support.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle.h"

/* Header field offsets, as the format in bundle.h specifies them. */
enum {
    HDR_VERSION = 8,
    HDR_HEADER_SIZE = 10,
    HDR_COUNT = 12,
    HDR_FILE_SIZE = 16,
    HDR_CHECKSUM = 24,
    HDR_RESERVED = 28,
    TABLE = 32,
    ENTRY = 88,
    E_BACKEND = 0,
    E_TARGET = 32,
    E_FORMAT = 64,
    E_OFFSET = 72,
    E_SIZE = 80,
};

/* ---- helpers ---- */

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;
    for (unsigned i = bytes; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

static void put_le(uint8_t *p, uint64_t value, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++, value >>= 8)
        p[i] = (uint8_t)value;
}

/* Bit by bit, unlike the library's table: the two must agree. */
static uint32_t reference_crc32(const uint8_t *data, size_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

static void reseal(uint8_t *data, size_t size)
{
    put_le(data + HDR_CHECKSUM, reference_crc32(data + TABLE, size - TABLE), 4);
}

static uint8_t *entry_at(uint8_t *data, uint32_t index)
{
    return data + TABLE + (size_t)index * ENTRY;
}

static void set_field(uint8_t *entry, unsigned offset, unsigned field_size,
                      const char *value)
{
    memset(entry + offset, 0, field_size);
    memcpy(entry + offset, value, strlen(value));
}

static void fill_pattern(uint8_t *data, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* Three images of odd sizes, so that padding and alignment are exercised. */
struct sample {
    uint8_t elf[100];
    uint8_t cubin[70];
    uint8_t ptx[33];
    struct accel__bundle_image images[3];
    uint8_t *data;
    size_t size;
};

static void sample_make(struct sample *s)
{
    fill_pattern(s->elf, sizeof s->elf, 1);
    fill_pattern(s->cubin, sizeof s->cubin, 2);
    fill_pattern(s->ptx, sizeof s->ptx, 3);
    s->images[0] = (struct accel__bundle_image){"null", "x86_64", "elf", s->elf,
                                                sizeof s->elf};
    s->images[1] = (struct accel__bundle_image){"cuda", "sm_90", "cubin",
                                                s->cubin, sizeof s->cubin};
    s->images[2] = (struct accel__bundle_image){"cuda", "compute_80", "ptx",
                                                s->ptx, sizeof s->ptx};
    void *data = NULL;
    assert_status(accel__bundle_write(s->images, 3, &data, &s->size), ACCEL_OK);
    s->data = data;
}

static void sample_free(struct sample *s)
{
    free(s->data);
    s->data = NULL;
}

/*
 * Parse a copy of exactly `size` bytes, so that the sanitizers catch any
 * read past the end, and expect ACCEL_ERR_MODULE with `fragment`.
 */
static void expect_rejected(const uint8_t *data, size_t size, const char *fragment)
{
    uint8_t *copy = malloc(size > 0 ? size : 1);
    assert_non_null(copy);
    if (size > 0)
        memcpy(copy, data, size);
    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 99;
    accel_status status = accel__bundle_parse(copy, size, entries, &count);
    free(copy);
    assert_status(status, ACCEL_ERR_MODULE);
    assert_int_equal(count, 0);
    if (fragment != NULL)
        assert_contains(accel_last_error(), fragment);
}

static struct accel__bundle_entry
make_entry(const char *backend, const char *target, const char *format)
{
    struct accel__bundle_entry e;
    memset(&e, 0, sizeof e);
    strncpy(e.backend, backend, sizeof e.backend - 1);
    strncpy(e.target, target, sizeof e.target - 1);
    strncpy(e.format, format, sizeof e.format - 1);
    e.size = 1;
    return e;
}

/* ---- writing and parsing back ---- */

static void test_written_bundle_parses_back_to_the_same_images(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    assert_true(accel__bundle_is(s.data, s.size));

    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 0;
    assert_status(accel__bundle_parse(s.data, s.size, entries, &count), ACCEL_OK);
    assert_int_equal(count, 3);
    for (uint32_t i = 0; i < count; i++) {
        assert_string_equal(entries[i].backend, s.images[i].backend);
        assert_string_equal(entries[i].target, s.images[i].target);
        assert_string_equal(entries[i].format, s.images[i].format);
        assert_int_equal(entries[i].size, s.images[i].size);
        assert_int_equal(entries[i].offset % ACCEL__BUNDLE_ALIGN, 0);
        assert_memory_equal(s.data + entries[i].offset, s.images[i].data,
                            s.images[i].size);
    }
    sample_free(&s);
}

static void test_written_bundle_has_the_documented_layout(void **state)
{
    (void)state;
    /* The check value of CRC-32/ISO-HDLC, the CRC of zlib. */
    assert_int_equal(reference_crc32((const uint8_t *)"123456789", 9),
                     0xCBF43926u);
    struct sample s;
    sample_make(&s);
    assert_memory_equal(s.data, "ACCELPK\0", 8);
    assert_int_equal(get_le(s.data + HDR_VERSION, 2), 1);
    assert_int_equal(get_le(s.data + HDR_HEADER_SIZE, 2), 32);
    assert_int_equal(get_le(s.data + HDR_COUNT, 4), 3);
    assert_int_equal(get_le(s.data + HDR_FILE_SIZE, 8), s.size);
    assert_int_equal(get_le(s.data + HDR_CHECKSUM, 4),
                     reference_crc32(s.data + TABLE, s.size - TABLE));
    assert_int_equal(get_le(s.data + HDR_RESERVED, 4), 0);
    /* The first image right after the table, rounded up to 64 bytes. */
    assert_int_equal(get_le(entry_at(s.data, 0) + E_OFFSET, 8), 320);
    assert_string_equal((const char *)entry_at(s.data, 1) + E_TARGET, "sm_90");
    /* The file ends with the last image: no trailing padding. */
    uint8_t *last = entry_at(s.data, 2);
    assert_int_equal(get_le(last + E_OFFSET, 8) + get_le(last + E_SIZE, 8),
                     s.size);
    sample_free(&s);
}

static void test_writer_rejects_what_the_format_forbids(void **state)
{
    (void)state;
    uint8_t byte = 1;
    const struct accel__bundle_image bad[] = {
        {"CUDA", "sm_90", "cubin", &byte, 1},
        {"cuda", "sm_90", "spirv", &byte, 1},
        {"cuda", "sm 90", "cubin", &byte, 1},
        {"cuda", "", "cubin", &byte, 1},
        {"cuda", "sm_90", "cubin", &byte, 0},
        {"cuda", "a_target_name_that_is_much_too_long", "ptx", &byte, 1},
        {"a_backend_name_of_thirty_two_chars", "sm_90", "ptx", &byte, 1},
        {NULL, "sm_90", "ptx", &byte, 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        void *data = &byte;
        size_t size = 7;
        assert_status(accel__bundle_write(&bad[i], 1, &data, &size),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_null(data);
        assert_int_equal(size, 0);
    }
    const struct accel__bundle_image twice[] = {
        {"cuda", "sm_90", "cubin", &byte, 1},
        {"cuda", "sm_90", "cubin", &byte, 1},
    };
    void *data = NULL;
    size_t size = 0;
    assert_status(accel__bundle_write(twice, 2, &data, &size),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "both cuda:sm_90:cubin");
    assert_status(accel__bundle_write(twice, 0, &data, &size),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

/* ---- the parser: header ---- */

static void test_short_file_is_rejected(void **state)
{
    (void)state;
    expect_rejected((const uint8_t *)"ACCELPK", 8, "shorter than its 32-byte");
    expect_rejected(NULL, 0, "bundle is 0 bytes");
}

static void test_every_truncation_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    for (size_t length = 0; length < s.size; length++)
        expect_rejected(s.data, length, NULL);
    expect_rejected(s.data, s.size - 1, "truncated");
    sample_free(&s);
}

static void test_trailing_bytes_are_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *longer = calloc(1, s.size + 5);
    assert_non_null(longer);
    memcpy(longer, s.data, s.size);
    expect_rejected(longer, s.size + 5, "5 bytes past its end");
    free(longer);
    sample_free(&s);
}

static void test_bad_magic_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    s.data[3] = 'X';
    assert_false(accel__bundle_is(s.data, s.size));
    expect_rejected(s.data, s.size, "magic");
    sample_free(&s);
}

static void test_unknown_version_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_VERSION, 2, 2);
    expect_rejected(s.data, s.size, "bundle version 2 is not supported");
    sample_free(&s);
}

static void test_header_size_mismatch_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_HEADER_SIZE, 40, 2);
    expect_rejected(s.data, s.size, "header size is 40 bytes");
    sample_free(&s);
}

static void test_nonzero_reserved_field_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_RESERVED, 1, 4);
    expect_rejected(s.data, s.size, "reserved");
    sample_free(&s);
}

static void test_zero_count_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_COUNT, 0, 4);
    expect_rejected(s.data, s.size, "no entries");
    sample_free(&s);
}

static void test_huge_count_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_COUNT, UINT32_MAX, 4);
    expect_rejected(s.data, s.size, "claims 4294967295 entries");
    put_le(s.data + HDR_COUNT, ACCEL__BUNDLE_MAX_ENTRIES + 1, 4);
    expect_rejected(s.data, s.size, "at most 256");
    sample_free(&s);
}

static void test_table_past_the_end_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    /* 200 entries need 14432 bytes of table: more than the file has. */
    put_le(s.data + HDR_COUNT, 200, 4);
    expect_rejected(s.data, s.size, "entry table (200 entries");
    sample_free(&s);
}

static void test_file_size_mismatch_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(s.data + HDR_FILE_SIZE, s.size + 1, 8);
    expect_rejected(s.data, s.size, "truncated");
    put_le(s.data + HDR_FILE_SIZE, UINT64_MAX, 8);
    expect_rejected(s.data, s.size, "truncated");
    put_le(s.data + HDR_FILE_SIZE, s.size - 1, 8);
    expect_rejected(s.data, s.size, "1 bytes past its end");
    sample_free(&s);
}

static void test_bad_checksum_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    s.data[s.size - 1] ^= 0x01;
    expect_rejected(s.data, s.size, "checksum mismatch");
    sample_free(&s);
}

/* ---- the parser: entries ---- */

static void test_entry_past_the_end_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *e = entry_at(s.data, 2);
    uint64_t offset = get_le(e + E_OFFSET, 8);
    char expected[160];

    put_le(e + E_SIZE, 100, 8);
    reseal(s.data, s.size);
    snprintf(expected, sizeof expected,
             "bundle entry 2: offset %llu + size 100 passes the end of the "
             "file (%zu bytes)",
             (unsigned long long)offset, s.size);
    expect_rejected(s.data, s.size, expected);

    /* offset + size wraps around 2^64: caught without overflowing. */
    put_le(e + E_OFFSET, UINT64_MAX - 63, 8);
    put_le(e + E_SIZE, 128, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "passes the end of the file");

    put_le(e + E_OFFSET, offset, 8);
    put_le(e + E_SIZE, UINT64_MAX, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "passes the end of the file");
    sample_free(&s);
}

static void test_entry_inside_the_header_or_table_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *e = entry_at(s.data, 1);
    put_le(e + E_OFFSET, 0, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size,
                    "bundle entry 1: offset 0 lies inside the header and "
                    "entry table (which end at byte 296)");
    put_le(e + E_OFFSET, 192, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "offset 192 lies inside the header");
    sample_free(&s);
}

static void test_misaligned_entry_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *e = entry_at(s.data, 0);
    put_le(e + E_OFFSET, get_le(e + E_OFFSET, 8) + 4, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "is not a multiple of 64");
    sample_free(&s);
}

static void test_overlapping_entries_are_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    /* Entry 1 starts where entry 0 does. */
    put_le(entry_at(s.data, 1) + E_OFFSET,
           get_le(entry_at(s.data, 0) + E_OFFSET, 8), 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "bundle entries 0 and 1 overlap");
    sample_free(&s);
}

static void test_empty_image_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    put_le(entry_at(s.data, 2) + E_SIZE, 0, 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "bundle entry 2: the image is empty");
    sample_free(&s);
}

static void test_unknown_format_is_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    set_field(entry_at(s.data, 1), E_FORMAT, 8, "spirv");
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "format 'spirv' is unknown");
    sample_free(&s);
}

static void test_malformed_names_are_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *e = entry_at(s.data, 1);

    set_field(e, E_BACKEND, 32, "CUDA");
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "backend 'CUDA' has 'C', outside [a-z0-9_]");

    set_field(e, E_BACKEND, 32, "");
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "the backend is empty");

    set_field(e, E_BACKEND, 32, "cuda");
    memset(e + E_TARGET, 'a', 32);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "the target is not NUL-terminated");

    set_field(e, E_TARGET, 32, "sm_90");
    e[E_TARGET + 2] = '\n';
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "byte 0x0a at position 2");

    set_field(e, E_TARGET, 32, "sm_90");
    e[E_TARGET + 20] = 'x';
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "followed by bytes other than NUL");

    set_field(e, E_TARGET, 32, "sm_90");
    memset(e + E_FORMAT, 'c', 8);
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size, "the format is not NUL-terminated");
    sample_free(&s);
}

static void test_duplicate_entries_are_rejected(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    uint8_t *e = entry_at(s.data, 2);
    set_field(e, E_TARGET, 32, "sm_90");
    set_field(e, E_FORMAT, 8, "cubin");
    reseal(s.data, s.size);
    expect_rejected(s.data, s.size,
                    "bundle entries 1 and 2 are both cuda:sm_90:cubin");
    sample_free(&s);
}

static void test_parse_rejects_null_arguments(void **state)
{
    (void)state;
    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 5;
    assert_status(accel__bundle_parse(NULL, 64, entries, &count),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
    assert_status(accel__bundle_parse("x", 1, NULL, &count),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel__bundle_parse("x", 1, entries, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_false(accel__bundle_is(NULL, 0));
}

static void test_bundle_of_the_maximum_count_parses(void **state)
{
    (void)state;
    struct accel__bundle_image images[ACCEL__BUNDLE_MAX_ENTRIES];
    char targets[ACCEL__BUNDLE_MAX_ENTRIES][16];
    uint8_t byte = 0x5a;
    for (int i = 0; i < ACCEL__BUNDLE_MAX_ENTRIES; i++) {
        snprintf(targets[i], sizeof targets[i], "t%d", i);
        images[i] = (struct accel__bundle_image){"null", targets[i], "elf",
                                                 &byte, 1};
    }
    void *data = NULL;
    size_t size = 0;
    assert_status(
        accel__bundle_write(images, ACCEL__BUNDLE_MAX_ENTRIES, &data, &size),
        ACCEL_OK);
    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 0;
    assert_status(accel__bundle_parse(data, size, entries, &count), ACCEL_OK);
    assert_int_equal(count, ACCEL__BUNDLE_MAX_ENTRIES);
    assert_string_equal(entries[255].target, "t255");
    free(data);
}

/* ---- picking ---- */

static uint32_t pick(const struct accel__bundle_entry *entries, uint32_t count,
                     const char *backend, const char *arch)
{
    uint32_t index = UINT32_MAX;
    assert_status(accel__bundle_pick(entries, count, backend, arch, &index),
                  ACCEL_OK);
    return index;
}

static void test_pick_prefers_the_exact_target_over_ptx(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("cuda", "compute_80", "ptx"),
        make_entry("cuda", "sm_90", "ptx"),
        make_entry("hip", "gfx90a", "hsaco"),
        make_entry("cuda", "sm_90", "cubin"),
        make_entry("cuda", "sm_80", "cubin"),
    };
    assert_int_equal(pick(entries, 5, "cuda", "sm_90"), 3);
    assert_int_equal(pick(entries, 5, "cuda", "sm_80"), 4);
    /* Exact-target PTX beats PTX for an older compute capability. */
    assert_int_equal(pick(entries, 3, "cuda", "sm_90"), 1);
    assert_int_equal(pick(entries, 5, "hip", "gfx90a"), 2);
}

static uint32_t pick_at_level(const struct accel__bundle_entry *entries,
                              uint32_t count, const char *arch, unsigned level)
{
    uint32_t index = UINT32_MAX;
    assert_status(accel__bundle_pick_at_level(entries, count, "null", arch,
                                              level, &index),
                  ACCEL_OK);
    return index;
}

static void test_pick_takes_the_highest_isa_level_the_cpu_runs(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("null", "x86_64-v3", "elf"),
        make_entry("null", "x86_64", "elf"),
        make_entry("null", "x86_64-v4", "elf"),
        make_entry("null", "x86_64-v2", "elf"),
        make_entry("null", "aarch64", "elf"),
    };
    assert_int_equal(pick_at_level(entries, 5, "x86_64", 1), 1);
    assert_int_equal(pick_at_level(entries, 5, "x86_64", 2), 3);
    assert_int_equal(pick_at_level(entries, 5, "x86_64", 3), 0);
    assert_int_equal(pick_at_level(entries, 5, "x86_64", 4), 2);
    assert_int_equal(pick_at_level(entries, 5, "aarch64", 1), 4);
    /* Without a v3 image, a v3 CPU takes v2. */
    const struct accel__bundle_entry no_v3[] = {
        make_entry("null", "x86_64", "elf"),
        make_entry("null", "x86_64-v4", "elf"),
        make_entry("null", "x86_64-v2", "elf"),
    };
    assert_int_equal(pick_at_level(no_v3, 3, "x86_64", 3), 2);
}

static void test_pick_never_takes_an_isa_level_above_the_cpus(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("null", "x86_64-v4", "elf"),
        make_entry("null", "x86_64-v3", "elf"),
    };
    uint32_t index = UINT32_MAX;
    /* A v2 CPU (no AVX2, no AVX-512) runs neither image. */
    assert_status(
        accel__bundle_pick_at_level(entries, 2, "null", "x86_64", 2, &index),
        ACCEL_ERR_NOT_FOUND);
    assert_non_null(strstr(accel_last_error(), "x86_64-v4"));
    /* A v3 CPU without AVX-512 takes v3, never v4. */
    assert_int_equal(pick_at_level(entries, 2, "x86_64", 3), 1);
    /* A level of another architecture is not this one's. */
    const struct accel__bundle_entry other[] = {
        make_entry("null", "aarch64-v2", "elf"),
        make_entry("null", "x86_64-v0", "elf"),
        make_entry("null", "x86_64-vx", "elf"),
    };
    assert_status(
        accel__bundle_pick_at_level(other, 3, "null", "x86_64", 4, &index),
        ACCEL_ERR_NOT_FOUND);
}

static void test_cpu_isa_level_agrees_with_the_compilers_cpu_checks(void **state)
{
    (void)state;
    unsigned level = accel__cpu_isa_level("x86_64");
    assert_int_equal(accel__cpu_isa_level("aarch64-not-this"), 1);
#if defined(__x86_64__)
    __builtin_cpu_init();
    assert_true(level >= 1 && level <= 4);
    assert_int_equal(level >= 2, __builtin_cpu_supports("sse4.2") &&
                                     __builtin_cpu_supports("popcnt") &&
                                     __builtin_cpu_supports("ssse3"));
    assert_int_equal(level >= 3, level >= 2 && __builtin_cpu_supports("avx2") &&
                                     __builtin_cpu_supports("fma") &&
                                     __builtin_cpu_supports("bmi2"));
    assert_int_equal(level >= 4, level >= 3 && __builtin_cpu_supports("avx512f") &&
                                     __builtin_cpu_supports("avx512bw") &&
                                     __builtin_cpu_supports("avx512vl") &&
                                     __builtin_cpu_supports("avx512dq") &&
                                     __builtin_cpu_supports("avx512cd"));
#else
    assert_int_equal(level, 1);
#endif
}

static void test_pick_falls_back_to_the_newest_ptx_the_device_runs(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("cuda", "sm_90", "cubin"),
        make_entry("cuda", "compute_70", "ptx"),
        make_entry("cuda", "compute_80", "ptx"),
        make_entry("cuda", "compute_90", "ptx"),
    };
    assert_int_equal(pick(entries, 4, "cuda", "sm_86"), 2);
    assert_int_equal(pick(entries, 4, "cuda", "sm_75"), 1);
    assert_int_equal(pick(entries, 4, "cuda", "sm_100"), 3);
    /* An arch-specific device still runs its family's portable PTX. */
    assert_int_equal(pick(entries, 4, "cuda", "sm_90a"), 3);
}

static void test_pick_skips_ptx_for_a_newer_compute_capability(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("cuda", "compute_80", "ptx"),
        make_entry("cuda", "sm_90", "cubin"),
    };
    uint32_t index = 7;
    assert_status(accel__bundle_pick(entries, 2, "cuda", "sm_75", &index),
                  ACCEL_ERR_NOT_FOUND);
    assert_int_equal(index, 0);
    /* Only "compute_XX" targets are portable, and only as PTX. */
    const struct accel__bundle_entry not_portable[] = {
        make_entry("cuda", "sm_70", "ptx"),
        make_entry("cuda", "compute_70", "cubin"),
        make_entry("cuda", "compute_7x", "ptx"),
    };
    assert_status(accel__bundle_pick(not_portable, 3, "cuda", "sm_90", &index),
                  ACCEL_ERR_NOT_FOUND);
}

static void test_pick_takes_the_any_target_last(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("null", "any", "elf"),
        make_entry("null", "x86_64", "elf"),
    };
    assert_int_equal(pick(entries, 2, "null", "x86_64"), 1);
    assert_int_equal(pick(entries, 2, "null", "aarch64"), 0);
}

static void test_pick_not_found_lists_the_contents(void **state)
{
    (void)state;
    const struct accel__bundle_entry entries[] = {
        make_entry("cuda", "compute_80", "ptx"),
        make_entry("hip", "gfx90a", "hsaco"),
        make_entry("null", "x86_64", "elf"),
    };
    uint32_t index;
    assert_status(accel__bundle_pick(entries, 3, "cuda", "sm_75", &index),
                  ACCEL_ERR_NOT_FOUND);
    assert_contains(accel_last_error(), "backend cuda, target sm_75");
    assert_contains(accel_last_error(),
                    "cuda:compute_80:ptx, hip:gfx90a:hsaco, null:x86_64:elf");
    assert_status(accel__bundle_pick(entries, 3, "hip", "gfx1100", &index),
                  ACCEL_ERR_NOT_FOUND);
    assert_status(accel__bundle_pick(entries, 3, NULL, "sm_75", &index),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_pick_not_found_message_stays_bounded(void **state)
{
    (void)state;
    static struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    for (int i = 0; i < ACCEL__BUNDLE_MAX_ENTRIES; i++) {
        entries[i] = make_entry("hip", "", "hsaco");
        snprintf(entries[i].target, sizeof entries[i].target,
                 "gfx_target_number_%d", i);
    }
    uint32_t index;
    assert_status(accel__bundle_pick(entries, ACCEL__BUNDLE_MAX_ENTRIES, "cuda",
                                     "sm_90", &index),
                  ACCEL_ERR_NOT_FOUND);
    assert_contains(accel_last_error(), "hip:gfx_target_number_0:hsaco");
    assert_contains(accel_last_error(), "more");
}

/* ---- accel-pack ---- */

#ifdef ACCEL_PACK_PATH

struct pack_run {
    int exit_code;
    char out[16384];
    char err[4096];
};

static void read_small_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* snprintf that fails the test rather than cut a path short. */
static void format_path(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void format_path(char *buf, size_t size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf, size, fmt, args);
    va_end(args);
    assert_true(n >= 0 && (size_t)n < size);
}

/* Run accel-pack with `args` (NULL-terminated), capturing its output. */
static void run_pack(const char *dir, const char *const *args,
                     struct pack_run *out_run)
{
    char out_path[4096], err_path[4096];
    format_path(out_path, sizeof out_path, "%s/stdout", dir);
    format_path(err_path, sizeof err_path, "%s/stderr", dir);
    const char *argv[16] = {ACCEL_PACK_PATH};
    size_t argc = 1;
    for (; args[argc - 1] != NULL; argc++) {
        assert_true(argc < 15);
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        execv(ACCEL_PACK_PATH, (char *const *)argv);
        _exit(127);
    }
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    out_run->exit_code = WEXITSTATUS(wstatus);
    read_small_file(out_path, out_run->out, sizeof out_run->out);
    read_small_file(err_path, out_run->err, sizeof out_run->err);
}

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static void assert_file_equals(const char *path, const void *data, size_t size)
{
    size_t got_size;
    uint8_t *got = support_read_file(path, &got_size);
    assert_int_equal(got_size, size);
    assert_memory_equal(got, data, size);
    free(got);
}

/* Write the sample's images as files and pack them; returns the dir. */
static char *pack_sample(struct sample *s, char *bundle_path, size_t path_size)
{
    char *dir = support_make_temp_dir();
    char paths[3][4096], specs[3][4200];
    const char *names[3] = {"k.so", "k.cubin", "k.ptx"};
    for (int i = 0; i < 3; i++) {
        format_path(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        write_bytes(paths[i], s->images[i].data, s->images[i].size);
        format_path(specs[i], sizeof specs[i], "%s:%s:%s=%s",
                    s->images[i].backend, s->images[i].target,
                    s->images[i].format, paths[i]);
    }
    format_path(bundle_path, path_size, "%s/k.bundle", dir);
    struct pack_run run;
    run_pack(dir,
             (const char *[]){"create", bundle_path, specs[0], specs[1],
                              specs[2], NULL},
             &run);
    assert_int_equal(run.exit_code, 0);
    return dir;
}

static void test_pack_round_trip_gives_back_every_image(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    char bundle[4096], out[4200];
    char *dir = pack_sample(&s, bundle, sizeof bundle);

    /* The tool writes what the library writes, byte for byte. */
    assert_file_equals(bundle, s.data, s.size);

    struct pack_run run;
    format_path(out, sizeof out, "%s/extracted", dir);
    for (int i = 0; i < 3; i++) {
        char index[4];
        snprintf(index, sizeof index, "%d", i);
        run_pack(dir, (const char *[]){"extract", bundle, index, out, NULL},
                 &run);
        assert_int_equal(run.exit_code, 0);
        assert_file_equals(out, s.images[i].data, s.images[i].size);
    }
    run_pack(dir,
             (const char *[]){"extract", bundle, "--backend", "cuda",
                              "--target", "sm_86", out, NULL},
             &run);
    assert_int_equal(run.exit_code, 0);
    assert_file_equals(out, s.ptx, sizeof s.ptx);
    run_pack(dir,
             (const char *[]){"extract", bundle, "--backend", "cuda",
                              "--target", "sm_90", out, NULL},
             &run);
    assert_int_equal(run.exit_code, 0);
    assert_file_equals(out, s.cubin, sizeof s.cubin);

    support_remove_dir(dir);
    sample_free(&s);
}

static void test_pack_list_shows_every_image(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    char bundle[4096];
    char *dir = pack_sample(&s, bundle, sizeof bundle);

    struct pack_run run;
    run_pack(dir, (const char *[]){"list", bundle, NULL}, &run);
    assert_int_equal(run.exit_code, 0);
    assert_contains(run.out, "index  backend  target      format");
    assert_contains(run.out, "    0  null     x86_64      elf");
    assert_contains(run.out, "    1  cuda     sm_90       cubin");
    assert_contains(run.out, "    2  cuda     compute_80  ptx");

    run_pack(dir, (const char *[]){"list", "--json", bundle, NULL}, &run);
    assert_int_equal(run.exit_code, 0);
    assert_contains(run.out, "\"target\": \"compute_80\"");
    assert_contains(run.out, "\"offset\": 320");
    char size[64];
    snprintf(size, sizeof size, "\"size\": %zu", s.size);
    assert_contains(run.out, size);

    support_remove_dir(dir);
    sample_free(&s);
}

static void test_pack_reports_errors_with_nonzero_exit(void **state)
{
    (void)state;
    struct sample s;
    sample_make(&s);
    char bundle[4096], out[4200];
    char *dir = pack_sample(&s, bundle, sizeof bundle);
    format_path(out, sizeof out, "%s/extracted", dir);
    struct pack_run run;

    run_pack(dir,
             (const char *[]){"extract", bundle, "--backend", "cuda",
                              "--target", "sm_75", out, NULL},
             &run);
    assert_int_equal(run.exit_code, 1);
    assert_contains(run.err, "no image in the bundle fits");
    assert_int_equal(access(out, F_OK), -1);

    run_pack(dir, (const char *[]){"extract", bundle, "3", out, NULL}, &run);
    assert_int_equal(run.exit_code, 1);
    assert_contains(run.err, "INDEX '3' is not one of 0 to 2");

    s.data[s.size - 1] ^= 0xff;
    write_bytes(bundle, s.data, s.size);
    run_pack(dir, (const char *[]){"list", bundle, NULL}, &run);
    assert_int_equal(run.exit_code, 1);
    assert_contains(run.err, "checksum mismatch");

    run_pack(dir, (const char *[]){"list", dir, NULL}, &run);
    assert_int_equal(run.exit_code, 1);
    assert_contains(run.err, "is a directory");

    run_pack(dir, (const char *[]){"create", bundle, "cuda:sm_90=x", NULL}, &run);
    assert_int_equal(run.exit_code, 2);
    assert_contains(run.err, "is not backend:target:format=PATH");

    run_pack(dir,
             (const char *[]){"create", bundle, "cuda:sm_90:cubin=/nonexistent",
                              NULL},
             &run);
    assert_int_equal(run.exit_code, 1);
    assert_contains(run.err, "/nonexistent");

    run_pack(dir, (const char *[]){"frobnicate", NULL}, &run);
    assert_int_equal(run.exit_code, 2);
    run_pack(dir, (const char *[]){"--help", NULL}, &run);
    assert_int_equal(run.exit_code, 0);
    assert_contains(run.out, "Usage: accel-pack create OUT IMAGE...");

    support_remove_dir(dir);
    sample_free(&s);
}

#else

static void test_pack_is_not_built(void **state)
{
    (void)state;
    skip();
}

#endif

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_bundle_parses_back_to_the_same_images),
        cmocka_unit_test(test_written_bundle_has_the_documented_layout),
        cmocka_unit_test(test_writer_rejects_what_the_format_forbids),
        cmocka_unit_test(test_short_file_is_rejected),
        cmocka_unit_test(test_every_truncation_is_rejected),
        cmocka_unit_test(test_trailing_bytes_are_rejected),
        cmocka_unit_test(test_bad_magic_is_rejected),
        cmocka_unit_test(test_unknown_version_is_rejected),
        cmocka_unit_test(test_header_size_mismatch_is_rejected),
        cmocka_unit_test(test_nonzero_reserved_field_is_rejected),
        cmocka_unit_test(test_zero_count_is_rejected),
        cmocka_unit_test(test_huge_count_is_rejected),
        cmocka_unit_test(test_table_past_the_end_is_rejected),
        cmocka_unit_test(test_file_size_mismatch_is_rejected),
        cmocka_unit_test(test_bad_checksum_is_rejected),
        cmocka_unit_test(test_entry_past_the_end_is_rejected),
        cmocka_unit_test(test_entry_inside_the_header_or_table_is_rejected),
        cmocka_unit_test(test_misaligned_entry_is_rejected),
        cmocka_unit_test(test_overlapping_entries_are_rejected),
        cmocka_unit_test(test_empty_image_is_rejected),
        cmocka_unit_test(test_unknown_format_is_rejected),
        cmocka_unit_test(test_malformed_names_are_rejected),
        cmocka_unit_test(test_duplicate_entries_are_rejected),
        cmocka_unit_test(test_parse_rejects_null_arguments),
        cmocka_unit_test(test_bundle_of_the_maximum_count_parses),
        cmocka_unit_test(test_pick_prefers_the_exact_target_over_ptx),
        cmocka_unit_test(test_pick_falls_back_to_the_newest_ptx_the_device_runs),
        cmocka_unit_test(test_pick_takes_the_highest_isa_level_the_cpu_runs),
        cmocka_unit_test(test_pick_never_takes_an_isa_level_above_the_cpus),
        cmocka_unit_test(test_cpu_isa_level_agrees_with_the_compilers_cpu_checks),
        cmocka_unit_test(test_pick_skips_ptx_for_a_newer_compute_capability),
        cmocka_unit_test(test_pick_takes_the_any_target_last),
        cmocka_unit_test(test_pick_not_found_lists_the_contents),
        cmocka_unit_test(test_pick_not_found_message_stays_bounded),
#ifdef ACCEL_PACK_PATH
        cmocka_unit_test(test_pack_round_trip_gives_back_every_image),
        cmocka_unit_test(test_pack_list_shows_every_image),
        cmocka_unit_test(test_pack_reports_errors_with_nonzero_exit),
#else
        cmocka_unit_test(test_pack_is_not_built),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
