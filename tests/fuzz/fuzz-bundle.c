/*
 * libFuzzer target for the bundle parser (host/bundle.c).
 *
 * Any input must be either rejected with ACCEL_ERR_MODULE or accepted with
 * entries that lie inside it; an accepted bundle, written again from its
 * entries, must parse back to the same entries. The picker runs on every
 * accepted bundle too.
 *
 * Not built by meson yet. By hand, from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *     -DACCEL_PLUGINDIR=\"/nonexistent\" \
 *     -Iinclude -Ihost tests/fuzz/fuzz-bundle.c host/[a-z]*.c -lpthread -ldl \
 *     -o /tmp/fuzz-bundle
 *   /tmp/fuzz-bundle -max_len=4096
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

#define CHECK(cond)        \
    do {                   \
        if (!(cond))       \
            abort();       \
    } while (0)

static void check_rewrite(const uint8_t *data,
                          const struct accel__bundle_entry *entries,
                          uint32_t count)
{
    struct accel__bundle_image images[ACCEL__BUNDLE_MAX_ENTRIES];
    for (uint32_t i = 0; i < count; i++)
        images[i] = (struct accel__bundle_image){
            entries[i].backend, entries[i].target, entries[i].format,
            data + entries[i].offset, (size_t)entries[i].size,
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count = 0;
    accel_status status = accel__bundle_parse(data, size, entries, &count);
    if (status != ACCEL_OK) {
        CHECK(status == ACCEL_ERR_MODULE && count == 0);
        return 0;
    }
    CHECK(count >= 1 && count <= ACCEL__BUNDLE_MAX_ENTRIES);
    for (uint32_t i = 0; i < count; i++)
        CHECK(entries[i].size > 0 && entries[i].offset < size &&
              entries[i].size <= size - entries[i].offset);

    static const char *const devices[][2] = {
        { "cuda", "sm_90" }, { "cuda", "sm_75" }, { "hip", "gfx90a" },
        { "null", "x86_64" },
    };
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        uint32_t index;
        status = accel__bundle_pick(entries, count, devices[d][0],
                                    devices[d][1], &index);
        CHECK(status == ACCEL_ERR_NOT_FOUND ||
              (status == ACCEL_OK && index < count));
    }
    check_rewrite(data, entries, count);
    return 0;
}
