/*
 * libFuzzer target for the ACCEL_BACKEND parser (accel__backend_parse in
 * host/select.c).
 *
 * The input, up to its first NUL, is the selection text. The parser's
 * answer is compared with a second, deliberately plain reading of the
 * grammar written here from its comment:
 *
 *   selection := item ("," item)*      white space around items is ignored
 *   item      := ["!"] plugin [":" term]   plugin: "*" or 1..31 of [a-z0-9_]
 *   term      := index | "pci=" bus-id | "name=" glob | uuid-prefix
 *
 * (an index: decimal, < 2^32 - 1; a bus id: [domain:]bus:device.function
 * in hex, compared normalized; a glob: 1..127 bytes; a uuid prefix: 4..47
 * of [A-Za-z0-9-], not all digits; an item under 163 bytes)
 *
 * (NULL, empty or white space only: zero items; at most 64 items.) Both must
 * accept the same texts with the same items; a refusal is
 * ACCEL_ERR_INVALID_ARGUMENT with a detail and no items.
 *
 * Built by meson (see tests/meson.build and the README), or by hand.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "select.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)

static bool reference_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static int reference_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A hex field of 1..max digits ending at `stop` (or at end when stop is 0). */
static bool reference_field(const char **p, const char *end, int max, char stop,
                            unsigned long *out)
{
    unsigned long value = 0;
    int digits = 0;
    while (*p < end && **p != stop) {
        int digit = reference_hex(**p);
        if (digit < 0 || ++digits > max)
            return false;
        value = value * 16 + (unsigned long)digit;
        (*p)++;
    }
    if (digits == 0 || (stop != 0 && *p == end))
        return false;
    if (stop != 0)
        (*p)++;
    *out = value;
    return true;
}

/* "[domain:]bus:device.function" to "dddd:bb:dd.f" (8 domain digits past 0xffff). */
static bool reference_pci(const char *p, const char *end, char *out, size_t size)
{
    int colons = 0;
    for (const char *q = p; q < end; q++)
        colons += *q == ':';
    unsigned long domain = 0, bus, device, function;
    if (colons == 2 && !reference_field(&p, end, 8, ':', &domain))
        return false;
    if ((colons != 1 && colons != 2) || !reference_field(&p, end, 2, ':', &bus) ||
        !reference_field(&p, end, 2, '.', &device) ||
        !reference_field(&p, end, 1, 0, &function) || device > 0x1f ||
        function > 7)
        return false;
    snprintf(out, size,
             domain > 0xffff ? "%08lx:%02lx:%02lx.%lx" : "%04lx:%02lx:%02lx.%lx",
             domain, bus, device, function);
    return true;
}

/* The term after the first ':' of an item. */
static bool reference_term(const char *p, const char *end,
                           struct accel__backend_item *out)
{
    size_t length = (size_t)(end - p);
    if (length == 0)
        return false;
    static const char *const rank_terms[] = {"%local", "%local%", "%rank",
                                             "%rank%"};
    for (size_t i = 0; i < 4; i++)
        if (length == strlen(rank_terms[i]) &&
            memcmp(p, rank_terms[i], length) == 0) {
            if (out->exclude)
                return false;
            out->kind = i < 2 ? ACCEL__TERM_LOCAL : ACCEL__TERM_RANK;
            out->modulo = i % 2 == 1;
            return true;
        }
    if (length >= 4 && memcmp(p, "pci=", 4) == 0) {
        out->kind = ACCEL__TERM_PCI;
        return reference_pci(p + 4, end, out->text, sizeof out->text);
    }
    if (length >= 5 && memcmp(p, "name=", 5) == 0) {
        out->kind = ACCEL__TERM_NAME;
        if (length == 5 || length - 5 >= sizeof out->text)
            return false;
        memcpy(out->text, p + 5, length - 5);
        return true;
    }
    bool digits = true, uuid_chars = true;
    for (const char *q = p; q < end; q++) {
        digits = digits && *q >= '0' && *q <= '9';
        uuid_chars = uuid_chars && (isalnum((unsigned char)*q) || *q == '-');
    }
    if (digits) {
        uint64_t value = 0;
        for (; p < end; p++) {
            value = value * 10 + (uint64_t)(*p - '0');
            if (value >= UINT32_MAX)
                return false;
        }
        out->kind = ACCEL__TERM_INDEX;
        out->index = (uint32_t)value;
        return true;
    }
    if (!uuid_chars || length < 4 || length > 47)
        return false;
    out->kind = ACCEL__TERM_UUID;
    memcpy(out->text, p, length);
    return true;
}

/* One item from [start, end): false when it does not follow the grammar. */
static bool reference_item(const char *start, const char *end,
                           struct accel__backend_item *out)
{
    while (start < end && isspace((unsigned char)*start))
        start++;
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    memset(out, 0, sizeof *out);
    if (start == end || (size_t)(end - start) >= sizeof out->source)
        return false;
    memcpy(out->source, start, (size_t)(end - start));
    if (*start == '!') {
        out->exclude = true;
        start++;
    }
    const char *p = start;
    if (p < end && *p == '*') {
        out->any = true;
        p++;
    } else {
        while (p < end && reference_name_char(*p))
            p++;
    }
    size_t length = (size_t)(p - start);
    if (length == 0 || length > ACCEL_PLUGIN_NAME_MAX)
        return false;
    memcpy(out->name, start, length);
    if (p == end)
        return true;
    if (*p != ':')
        return false;
    return reference_term(p + 1, end, out);
}

/* The whole selection; -1 when refused, else the number of items. */
static long reference_parse(const char *text, struct accel__backend_item *items)
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
            CHECK(items[i].any ||
                  accel__plugin_name_valid(items[i].name, strlen(items[i].name)));
            CHECK(items[i].exclude == expected[i].exclude);
            CHECK(items[i].any == expected[i].any);
            CHECK(items[i].kind == expected[i].kind);
            CHECK(items[i].index == expected[i].index);
            CHECK(strcmp(items[i].text, expected[i].text) == 0);
            CHECK(strcmp(items[i].source, expected[i].source) == 0);
        }
    }
    free(text);
    return 0;
}
