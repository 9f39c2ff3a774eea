/*
 * libFuzzer target for the bundle parser (host/bundle.c).
 *
 * Any input must be either rejected with ACCEL_ERR_MODULE or accepted with
 * entries that lie inside it; an accepted bundle, written again from its
 * entries, must parse back to the same entries. The picker runs on every
 * accepted bundle too.
 *
 * A random change almost never keeps the header's file size and CRC-32
 * right, so the checks behind them would go unexplored: each input that
 * starts with the magic is parsed a second time with those two fields
 * repaired.
 *
 * Built by meson (see tests/meson.build and the README): every build runs
 * it over tests/fuzz/corpus/bundle, a libFuzzer build also fuzzes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "signature.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)

static void check_rewrite(const uint8_t *data,
                          const struct accel__bundle_entry *entries,
                          uint32_t count)
{
    struct accel__bundle_image images[ACCEL__BUNDLE_MAX_ENTRIES];
    for (uint32_t i = 0; i < count; i++)
        images[i] = (struct accel__bundle_image){
            entries[i].backend,      entries[i].target,
            entries[i].format,       data + entries[i].offset,
            (size_t)entries[i].size,
        };
    void *out = NULL;
    size_t out_size = 0;
    CHECK(accel__bundle_write(images, count, &out, &out_size) == ACCEL_OK);

    static struct accel__bundle_entry again[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t again_count = 0;
    CHECK(accel__bundle_parse(out, out_size, again, &again_count) == ACCEL_OK);
    CHECK(again_count == count);
    for (uint32_t i = 0; i < count; i++) {
        CHECK(strcmp(again[i].backend, entries[i].backend) == 0);
        CHECK(strcmp(again[i].target, entries[i].target) == 0);
        CHECK(strcmp(again[i].format, entries[i].format) == 0);
        CHECK(again[i].size == entries[i].size);
        CHECK(memcmp((const uint8_t *)out + again[i].offset,
                     data + entries[i].offset, (size_t)entries[i].size) == 0);
    }
    free(out);
}

/*
 * A signatures entry's text: checked without reading past it, and when it
 * passes, every kernel it could name gives a signature within the limits.
 */
static void check_signatures(const char *text, size_t size)
{
    accel_status status = accel__signatures_check(text, size);
    CHECK(status == ACCEL_OK || status == ACCEL_ERR_MODULE);
    static const char *const kernels[] = {"k", "saxpy", "typed_params", "a_b"};
    for (size_t k = 0;
         status == ACCEL_OK && k < sizeof kernels / sizeof kernels[0]; k++) {
        struct accel_kernel_signature signature;
        memset(&signature, 0, sizeof signature);
        signature.param_count = ACCEL_PARAM_COUNT_UNKNOWN;
        if (accel__signature_complete(text, size, kernels[k], &signature) !=
            ACCEL_OK)
            continue;
        CHECK(signature.param_count == ACCEL_PARAM_COUNT_UNKNOWN ||
              signature.param_count <= ACCEL_KERNEL_MAX_PARAMS);
        CHECK(accel__signature_check(kernels[k], &signature) == ACCEL_OK);
    }
}

static void check_one(const uint8_t *data, size_t size)
{
    /* The input as a signatures entry's text, too. */
    check_signatures((const char *)data, size);
    static struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 0;
    accel_status status = accel__bundle_parse(data, size, entries, &count);
    if (status != ACCEL_OK) {
        CHECK(status == ACCEL_ERR_MODULE && count == 0);
        return;
    }
    CHECK(count >= 1 && count <= ACCEL__BUNDLE_MAX_ENTRIES);
    for (uint32_t i = 0; i < count; i++)
        CHECK(entries[i].size > 0 && entries[i].offset < size &&
              entries[i].size <= size - entries[i].offset);

    static const char *const devices[][2] = {
        {"cuda", "sm_90"},
        {"cuda", "sm_75"},
        {"hip", "gfx90a"},
        {"null", "x86_64"},
    };
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        uint32_t index;
        status = accel__bundle_pick(entries, count, devices[d][0],
                                    devices[d][1], &index);
        CHECK(status == ACCEL_ERR_NOT_FOUND ||
              (status == ACCEL_OK && index < count));
    }
    /* A device whose target an entry names always finds an image of its
     * backend (that entry, or one the picker ranks higher); the signatures
     * entry is no image. */
    for (uint32_t i = 0; i < count; i++) {
        uint32_t index = count;
        if (strcmp(entries[i].format, ACCEL__BUNDLE_SIGNATURES_FORMAT) == 0)
            continue;
        CHECK(accel__bundle_pick(entries, count, entries[i].backend,
                                 entries[i].target, &index) == ACCEL_OK);
        CHECK(index < count &&
              strcmp(entries[index].backend, entries[i].backend) == 0);
    }
    check_rewrite(data, entries, count);
    uint32_t sig = 0;
    if (accel__bundle_find_signatures(entries, count, &sig))
        check_signatures((const char *)data + entries[sig].offset,
                         (size_t)entries[sig].size);
}

/* CRC-32 (IEEE 802.3), bit by bit: written apart from the library's. */
static uint32_t crc32_bitwise(const uint8_t *data, size_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

static void put_le(uint8_t *p, uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(value >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_one(data, size);
    if (size < ACCEL__BUNDLE_HEADER_SIZE || !accel__bundle_is(data, size))
        return 0;
    uint8_t *repaired = malloc(size);
    if (repaired == NULL)
        return 0;
    memcpy(repaired, data, size);
    put_le(repaired + 16, size, 8);
    put_le(repaired + 24,
           crc32_bitwise(repaired + ACCEL__BUNDLE_HEADER_SIZE,
                         size - ACCEL__BUNDLE_HEADER_SIZE),
           4);
    check_one(repaired, size);
    free(repaired);
    return 0;
}
