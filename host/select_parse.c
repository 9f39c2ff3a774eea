/*
 * The selection grammar: ACCEL_BACKEND, accel_host_options.backend and
 * accel-info --select read it here, one way.
 *
 *   selection := item ("," item)*      white space around items is ignored
 *   item      := ["!"] plugin [":" term]
 *   plugin    := name | "*"            name: 1..31 of [a-z0-9_]; "*": any
 *   term      := index                 decimal digits, < 2^32 - 1
 *              | "pci=" bus-id         [domain:]bus:device.function, hex
 *              | "name=" glob          fnmatch(3), case ignored; no ','
 *              | uuid-prefix           4..47 of [A-Za-z0-9-], not all digits
 *              | "%local" | "%local%"  the device at the local rank (modulo)
 *              | "%rank" | "%rank%"    the device at the rank (modulo)
 *
 * Only the first ':' splits an item, so that a bus id keeps its own.
 * What the items mean is select.c's.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "device_id.h"
#include "loader.h"
#include "select.h"
#include "status.h"

#define UUID_PREFIX_MIN 4

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

static const char *trim_end(const char *start, const char *end)
{
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    return end;
}

static bool starts_with(const char *p, const char *end, const char *prefix)
{
    size_t length = strlen(prefix);
    return (size_t)(end - p) >= length && memcmp(p, prefix, length) == 0;
}

static accel_status malformed(const struct accel__backend_item *item,
                              const char *why)
{
    return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "backend item '%s': %s",
                        item->source, why);
}

static accel_status parse_index(const char *p, const char *end,
                                struct accel__backend_item *item)
{
    uint64_t value = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9' || value > UINT32_MAX / 10)
            return malformed(
                item, "the index is not a whole number from 0 to 4294967294");
        value = value * 10 + (uint64_t)(*p - '0');
    }
    if (value >= UINT32_MAX)
        return malformed(item, "the index is too large");
    item->kind = ACCEL__TERM_INDEX;
    item->index = (uint32_t)value;
    return ACCEL_OK;
}

static accel_status parse_pci(const char *p, const char *end,
                              struct accel__backend_item *item)
{
    if (!accel__pci_bus_id_normalize(p, (size_t)(end - p), item->text,
                                     sizeof item->text))
        return malformed(
            item, "pci= takes a bus id, [domain:]bus:device.function in hex "
                  "(0000:41:00.0)");
    item->kind = ACCEL__TERM_PCI;
    return ACCEL_OK;
}

static accel_status parse_glob(const char *p, const char *end,
                               struct accel__backend_item *item)
{
    if (p == end)
        return malformed(
            item, "name= takes a glob of the device's name (name=*MI300*)");
    if ((size_t)(end - p) >= sizeof item->text)
        return malformed(item, "the name glob is too long");
    memcpy(item->text, p, (size_t)(end - p));
    item->kind = ACCEL__TERM_NAME;
    return ACCEL_OK;
}

static accel_status parse_uuid(const char *p, const char *end,
                               struct accel__backend_item *item)
{
    size_t length = (size_t)(end - p);
    if (length < UUID_PREFIX_MIN || length >= ACCEL_DEVICE_UUID_MAX)
        return malformed(
            item, "a term is an index, pci=BUS, name=GLOB, or a uuid prefix of "
                  "4 to 47 characters (GPU-5b1c)");
    for (const char *q = p; q < end; q++) {
        if (!isalnum((unsigned char)*q) && *q != '-')
            return malformed(
                item, "a term is an index, pci=BUS, name=GLOB, or a uuid "
                      "prefix of letters, digits and '-' (GPU-5b1c)");
    }
    memcpy(item->text, p, length);
    item->kind = ACCEL__TERM_UUID;
    return ACCEL_OK;
}

/* "%local", "%local%", "%rank", "%rank%": bound at selection (select.c). */
static accel_status parse_rank_term(const char *p, const char *end,
                                    struct accel__backend_item *item)
{
    static const struct {
        const char *text;
        enum accel__term_kind kind;
        bool modulo;
    } forms[] = {{"%local", ACCEL__TERM_LOCAL, false},
                 {"%local%", ACCEL__TERM_LOCAL, true},
                 {"%rank", ACCEL__TERM_RANK, false},
                 {"%rank%", ACCEL__TERM_RANK, true}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        if (strlen(forms[i].text) != (size_t)(end - p) ||
            memcmp(p, forms[i].text, (size_t)(end - p)) != 0)
            continue;
        /* An exclusion names devices to leave out; a rank names the one to use. */
        if (item->exclude)
            return malformed(item, "an exclusion cannot take a rank term");
        item->kind = forms[i].kind;
        item->modulo = forms[i].modulo;
        return ACCEL_OK;
    }
    return malformed(item, "a rank term is %local, %local%, %rank or %rank% "
                           "(modulo the devices)");
}

static accel_status parse_term(const char *p, const char *end,
                               struct accel__backend_item *item)
{
    if (p == end)
        return malformed(item, "the term after ':' is empty");
    if (*p == '%')
        return parse_rank_term(p, end, item);
    if (starts_with(p, end, "pci="))
        return parse_pci(p + 4, end, item);
    if (starts_with(p, end, "name="))
        return parse_glob(p + 5, end, item);
    bool digits = true;
    for (const char *q = p; q < end; q++)
        digits = digits && *q >= '0' && *q <= '9';
    if (digits)
        return parse_index(p, end, item);
    return parse_uuid(p, end, item);
}

static accel_status parse_item(const char *start, const char *end,
                               struct accel__backend_item *item)
{
    memset(item, 0, sizeof *item);
    start = skip_space(start, end);
    end = trim_end(start, end);
    if (start == end)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "the backend selection has an empty item");
    snprintf(item->source, sizeof item->source, "%.*s", (int)(end - start),
             start);
    if ((size_t)(end - start) >= sizeof item->source)
        return malformed(item, "the item is too long");
    item->exclude = *start == '!';
    if (item->exclude)
        start++;
    const char *colon = memchr(start, ':', (size_t)(end - start));
    const char *name_end = colon ? colon : end;
    size_t name_length = (size_t)(name_end - start);
    item->any = name_length == 1 && *start == '*';
    if (!item->any && !accel__plugin_name_valid(start, name_length))
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "backend item '%s': a plugin name is 1 to %d characters of "
            "[a-z0-9_], or '*'",
            item->source, ACCEL_PLUGIN_NAME_MAX);
    memcpy(item->name, start, name_length);
    if (colon == NULL)
        return ACCEL_OK;
    return parse_term(colon + 1, end, item);
}

accel_status accel__backend_parse(const char *text,
                                  struct accel__backend_item *out_items,
                                  size_t *out_count)
{
    *out_count = 0;
    if (text == NULL)
        return ACCEL_OK;
    const char *end = text + strlen(text);
    if (skip_space(text, end) == end)
        return ACCEL_OK;
    size_t count = 0;
    for (const char *start = text;;) {
        const char *comma = memchr(start, ',', (size_t)(end - start));
        const char *item_end = comma ? comma : end;
        if (count == ACCEL__BACKEND_ITEMS_MAX)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "the backend selection has more than %d items",
                                ACCEL__BACKEND_ITEMS_MAX);
        accel_status status = parse_item(start, item_end, &out_items[count]);
        if (status != ACCEL_OK)
            return status;
        count++;
        if (comma == NULL)
            break;
        start = comma + 1;
    }
    *out_count = count;
    return ACCEL_OK;
}

bool accel__backend_wants(const struct accel__backend_item *items, size_t count,
                          const char *name)
{
    bool every = count == 0;
    bool named = false;
    bool excluded = false;
    bool positive = false;
    for (size_t i = 0; i < count; i++) {
        const struct accel__backend_item *item = &items[i];
        bool this_name = item->any || strcmp(item->name, name) == 0;
        if (item->exclude) {
            /* "!hip" takes all of hip: it need not be opened. */
            excluded = excluded || (this_name && !item->any &&
                                    item->kind == ACCEL__TERM_NONE);
            continue;
        }
        positive = true;
        every = every || item->any;
        named = named || this_name;
    }
    if (!positive)
        every = true;
    return !excluded && (named || every);
}
