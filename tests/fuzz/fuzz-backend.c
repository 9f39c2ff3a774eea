/*
 * libFuzzer target for the ACCEL_BACKEND parser (accel__backend_parse in
 * host/select.c).
 *
 * The input, up to its first NUL, is the selection text. The parser's
 * answer is compared with a second, deliberately plain reading of the
 * grammar written here from its comment:
 *
 *   selection := item ("," item)*      white space around items is ignored
 *   item      := name [":" index]      name: 1..31 of [a-z0-9_]
 *   index     := decimal digits, < 2^32 - 1
 *
 * (NULL, empty or white space only: zero items; at most 64 items.) Both must
 * accept the same texts with the same items; a refusal is
 * ACCEL_ERR_INVALID_ARGUMENT with a detail and no items.
 *
 * Built by meson (see tests/meson.build and the README), or by hand.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "select.h"

#define CHECK(cond)        \
    do {                   \
        if (!(cond))       \
            abort();       \
    } while (0)

static bool reference_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* One item from [start, end): false when it does not follow the grammar. */
static bool reference_item(const char *start, const char *end,
                           struct accel__backend_item *out)
{
    while (start < end && isspace((unsigned char)*start))
        start++;
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    const char *p = start;
    while (p < end && reference_name_char(*p))
        p++;
    size_t length = (size_t)(p - start);
    if (length == 0 || length > ACCEL_PLUGIN_NAME_MAX)
        return false;
    memset(out, 0, sizeof *out);
    memcpy(out->name, start, length);
    if (p == end)
        return true;
    if (*p != ':' || p + 1 == end)
        return false;
    uint64_t value = 0;
    for (p++; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        value = value * 10 + (uint64_t)(*p - '0');
        if (value >= UINT32_MAX)
            return false;
    }
    out->has_index = true;
    out->index = (uint32_t)value;
    return true;
}

/* The whole selection; -1 when refused, else the number of items. */
static long reference_parse(const char *text,
                            struct accel__backend_item *items)
{
    const char *p = text;
    while (*p != '\0' && isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return 0;
    long count = 0;
    for (const char *start = text;;) {
        const char *comma = strchr(start, ',');
        const char *end = comma ? comma : start + strlen(start);
        if (count == ACCEL__BACKEND_ITEMS_MAX ||
            !reference_item(start, end, &items[count]))
            return -1;
        count++;
        if (comma == NULL)
            return count;
        start = comma + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    static struct accel__backend_item items[ACCEL__BACKEND_ITEMS_MAX];
    static struct accel__backend_item expected[ACCEL__BACKEND_ITEMS_MAX];
    size_t count = 99;
    accel_status status = accel__backend_parse(text, items, &count);
    long expected_count = reference_parse(text, expected);
    if (expected_count < 0) {
        CHECK(status == ACCEL_ERR_INVALID_ARGUMENT);
        CHECK(count == 0);
        CHECK(accel_last_error()[0] != '\0');
    } else {
        CHECK(status == ACCEL_OK);
        CHECK(count == (size_t)expected_count);
        for (size_t i = 0; i < count; i++) {
            CHECK(strcmp(items[i].name, expected[i].name) == 0);
            CHECK(accel__plugin_name_valid(items[i].name,
                                           strlen(items[i].name)));
            CHECK(items[i].has_index == expected[i].has_index);
            CHECK(items[i].index == expected[i].index);
        }
    }
    free(text);
    return 0;
}
