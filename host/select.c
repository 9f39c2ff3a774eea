/*
 * Backend selection: the ACCEL_BACKEND grammar and the choice of a device.
 *
 *   selection := item ("," item)*      white space around items is ignored
 *   item      := name [":" index]      name: 1..31 of [a-z0-9_]
 *   index     := decimal digits, < 2^32
 *
 * Items are tried in order; the first whose plugin has the device wins.
 * Without a selection the live device of the highest-priority plugin wins.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

static accel_status parse_index(const char *p, const char *end,
                                const char *item, int item_length,
                                uint32_t *out_index)
{
    uint64_t value = 0;
    if (p == end)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "backend item '%.*s': the index after ':' is empty",
                            item_length, item);
    for (; p < end; p++) {
        if (*p < '0' || *p > '9' || value > UINT32_MAX / 10)
            return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                                "backend item '%.*s': the index is not a whole "
                                "number from 0 to %u",
                                item_length, item, UINT32_MAX - 1);
        value = value * 10 + (uint64_t)(*p - '0');
    }
    if (value >= UINT32_MAX)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "backend item '%.*s': the index is too large",
                            item_length, item);
    *out_index = (uint32_t)value;
    return ACCEL_OK;
}

static accel_status parse_item(const char *start, const char *end,
                               struct accel__backend_item *out_item)
{
    start = skip_space(start, end);
    end = trim_end(start, end);
    int length = (int)(end - start);
    if (start == end)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "the backend selection has an empty item");
    const char *colon = memchr(start, ':', (size_t)(end - start));
    const char *name_end = colon ? colon : end;
    if (!accel__plugin_name_valid(start, (size_t)(name_end - start)))
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "backend item '%.*s': a plugin name is 1 to %d "
                            "characters of [a-z0-9_]",
                            length, start, ACCEL_PLUGIN_NAME_MAX);
    memcpy(out_item->name, start, (size_t)(name_end - start));
    out_item->name[name_end - start] = '\0';
    out_item->has_index = colon != NULL;
    out_item->index = 0;
    if (colon == NULL)
        return ACCEL_OK;
    return parse_index(colon + 1, end, start, length, &out_item->index);
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

/* "null, cuda" from the catalog's candidate names, into `buffer`. */
static void names_found(const struct accel__catalog *catalog, char *buffer,
                        size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (size_t i = 0; i < catalog->count && used < size; i++) {
        const char *name = catalog->plugins[i].name;
        if (name == NULL)
            continue;
        int n = snprintf(buffer + used, size - used, "%s%s",
                         used ? ", " : "", name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (buffer[0] == '\0')
        snprintf(buffer, size, "none");
}

static bool name_in_catalog(const struct accel__catalog *catalog,
                            const char *name)
{
    for (size_t i = 0; i < catalog->count; i++) {
        if (catalog->plugins[i].name != NULL &&
            strcmp(catalog->plugins[i].name, name) == 0)
            return true;
    }
    return false;
}

/* Append one formatted reason to a semicolon-separated list. */
static void note(char *buffer, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(char *buffer, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buffer);
    if (used + 2 >= size)
        return;
    if (used > 0) {
        memcpy(buffer + used, "; ", 3);
        used += 2;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer + used, size - used, fmt, args);
    va_end(args);
}

static accel_status select_listed(accel_host *host, const char **out_plugin,
                                  uint32_t *out_index)
{
    struct accel__catalog *catalog = &host->catalog;
    char found[512];
    for (size_t i = 0; i < host->item_count; i++) {
        if (!name_in_catalog(catalog, host->items[i].name)) {
            names_found(catalog, found, sizeof found);
            return accel__error(ACCEL_ERR_NOT_FOUND,
                                "the backend selection names '%s', which is not "
                                "among the plugins found: %s",
                                host->items[i].name, found);
        }
    }
    char why[1024] = "";
    for (size_t i = 0; i < host->item_count; i++) {
        const struct accel__backend_item *item = &host->items[i];
        struct accel__plugin *plugin = accel__catalog_find(catalog, item->name);
        if (plugin == NULL || plugin->state_kind != ACCEL_PLUGIN_LOADED) {
            note(why, sizeof why, "%s: %s", item->name,
                 plugin && plugin->reason ? plugin->reason : "rejected");
            continue;
        }
        if (item->index >= plugin->device_count) {
            note(why, sizeof why,
                 "%s: device index %u is out of range (%u device(s))",
                 item->name, item->index, plugin->device_count);
            continue;
        }
        *out_plugin = plugin->name;
        *out_index = item->index;
        return ACCEL_OK;
    }
    return accel__error(ACCEL_ERR_NO_DEVICE,
                        "no plugin named in the backend selection has the "
                        "device: %s",
                        why);
}

static accel_status select_auto(accel_host *host, const char **out_plugin,
                                uint32_t *out_index)
{
    const struct accel__plugin *best = NULL;
    for (size_t i = 0; i < host->catalog.count; i++) {
        const struct accel__plugin *plugin = &host->catalog.plugins[i];
        if (plugin->state_kind != ACCEL_PLUGIN_LOADED)
            continue;
        if (best == NULL || plugin->priority > best->priority)
            best = plugin;
    }
    if (best == NULL)
        return accel__error(ACCEL_ERR_NO_DEVICE,
                            "no plugin with a device was found (%zu candidate "
                            "file(s); ACCEL_LOG=info or accel-info says why)",
                            host->catalog.count);
    *out_plugin = best->name;
    *out_index = 0;
    return ACCEL_OK;
}

static accel_status host_selection_untraced(accel_host *host, const char **out_plugin,
                                            uint32_t *out_index)
{
    if (out_plugin != NULL)
        *out_plugin = NULL;
    if (out_index != NULL)
        *out_index = 0;
    if (host == NULL || out_plugin == NULL || out_index == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_selection: NULL argument");
    if (host->parse_status != ACCEL_OK)
        return accel__error(host->parse_status, "%s", host->parse_error);
    if (host->item_count > 0)
        return select_listed(host, out_plugin, out_index);
    return select_auto(host, out_plugin, out_index);
}

accel_status accel_host_selection(accel_host *host, const char **out_plugin,
                                  uint32_t *out_index)
{
    uint64_t traced = accel__trace_now();
    accel_status status = host_selection_untraced(host, out_plugin, out_index);
    return accel__trace_end("accel_host_selection", traced, status, 0);
}

static accel_status device_open_selected_untraced(accel_host *host,
                                                  accel_device **out_device)
{
    if (out_device != NULL)
        *out_device = NULL;
    const char *plugin = NULL;
    uint32_t index = 0;
    accel_status status = accel_host_selection(host, &plugin, &index);
    if (status != ACCEL_OK)
        return status;
    return accel_device_open(host, plugin, index, out_device);
}

accel_status accel_device_open_selected(accel_host *host, accel_device **out_device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_open_selected_untraced(host, out_device);
    return accel__trace_end("accel_device_open_selected", traced, status, 0);
}
