/*
 * Backend selection: what the items of a selection (select_parse.c) pick.
 *
 * Positive items are tried in order, and the first that picks a device
 * wins; exclusions ("!hip", "!cuda:1") apply to every item; a selection of
 * exclusions alone ends in an implicit "*". An item picks, among the
 * plugins it names ("*": every loaded plugin, highest priority first), the
 * first device that its term matches and no exclusion takes.
 *
 * Never silently dropped: a plugin name not found is an error naming those
 * found; a uuid, pci= or name= term that matches none of the devices of
 * plugins that have some is an error naming the devices there are (a typo
 * must show, not be covered by the next item); so is an exclusion that
 * takes nothing. An index past the count, or a plugin without a device,
 * lets the next item try (the ordered fallback: "cuda,null").
 *
 * A rank term ("%local", "%rank") counts the devices of the item's first
 * plugin, in the item's order, that has a device no exclusion takes, and
 * picks the one at the local rank (the rank): more ranks than devices is
 * an error, not a quiet fallback that would put two ranks on one device;
 * "%local%" wraps around. The launcher's variables are read at each
 * selection, so that the answer follows the environment of the moment.
 *
 * Every step is written to a trace, which accel_host_selection_explain
 * returns: accel-info --select shows what an expression picks and why.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "device.h"
#include "host.h"
#include "loader.h"
#include "rank.h"
#include "select.h"
#include "status.h"
#include "trace.h"

#define TRACE_MAX 4096

/* One selection being worked out: its trace and its answer. */
struct pick {
    accel_host *host;
    char trace[TRACE_MAX];
    char why[1024];               /* the reasons no item picked */
    struct accel__plugin *plugin; /* the pick, NULL until made */
    uint32_t index;
    /* Some term names devices by their props: ask the plugins for them.
     * Otherwise none is asked (indexes alone need nothing from a plugin). */
    bool describe;
};

static bool needs_props(const accel_host *host)
{
    for (size_t i = 0; i < host->item_count; i++) {
        enum accel__term_kind kind = host->items[i].kind;
        if (kind == ACCEL__TERM_UUID || kind == ACCEL__TERM_PCI ||
            kind == ACCEL__TERM_NAME)
            return true;
    }
    return false;
}

/* Append formatted text to a NUL-terminated buffer of `size` bytes. */
static void append(char *buffer, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *buffer, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buffer);
    if (used + 1 >= size)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer + used, size - used, fmt, args);
    va_end(args);
}

/* "null, cuda" from the catalog's candidate names, into `buffer`. */
static void names_found(const struct accel__catalog *catalog, char *buffer,
                        size_t size)
{
    buffer[0] = '\0';
    for (size_t i = 0; i < catalog->count; i++) {
        if (catalog->plugins[i].name != NULL)
            append(buffer, size, "%s%s", buffer[0] ? ", " : "",
                   catalog->plugins[i].name);
    }
    if (buffer[0] == '\0')
        snprintf(buffer, size, "none");
}

/* Whether some candidate file, rejected or not, is named `name`. */
static bool name_in_catalog(const struct accel__catalog *catalog, const char *name)
{
    for (size_t i = 0; i < catalog->count; i++) {
        if (catalog->plugins[i].name != NULL &&
            strcmp(catalog->plugins[i].name, name) == 0)
            return true;
    }
    return false;
}

static accel_status check_names(struct pick *pick)
{
    accel_host *host = pick->host;
    for (size_t i = 0; i < host->item_count; i++) {
        const struct accel__backend_item *item = &host->items[i];
        if (item->any || name_in_catalog(&host->catalog, item->name))
            continue;
        char found[512];
        names_found(&host->catalog, found, sizeof found);
        return accel__error(
            ACCEL_ERR_NOT_FOUND,
            "the backend selection names '%s', which is not among the "
            "plugins found: %s",
            item->name, found);
    }
    return ACCEL_OK;
}

/* Whether `uuid` begins with `prefix`, case ignored, with or without its "GPU-" tag. */
static bool uuid_prefix_matches(const char *uuid, const char *prefix)
{
    size_t length = strlen(prefix);
    if (strncasecmp(uuid, prefix, length) == 0)
        return true;
    const char *dash = strchr(uuid, '-');
    return dash != NULL && strncasecmp(dash + 1, prefix, length) == 0;
}

static bool term_matches(const struct accel__backend_item *item, uint32_t index,
                         const struct accel_device_props *props)
{
    switch (item->kind) {
    case ACCEL__TERM_NONE:
        return true;
    case ACCEL__TERM_INDEX:
        return index == item->index;
    case ACCEL__TERM_UUID:
        return props->uuid[0] != '\0' &&
               uuid_prefix_matches(props->uuid, item->text);
    case ACCEL__TERM_PCI:
        return strcmp(props->pci_bus_id, item->text) == 0;
    case ACCEL__TERM_NAME:
        return fnmatch(item->text, props->name, FNM_CASEFOLD) == 0;
    case ACCEL__TERM_LOCAL:
    case ACCEL__TERM_RANK:
        /* Bound by position among the devices left (try_ranked_item). */
        return true;
    }
    return false;
}

static bool item_names(const struct accel__backend_item *item,
                       const struct accel__plugin *plugin)
{
    return item->any || strcmp(item->name, plugin->name) == 0;
}

/* The exclusion that takes plugin's device `index`, or NULL. */
static const struct accel__backend_item *
exclusion_of(const accel_host *host, const struct accel__plugin *plugin,
             uint32_t index, const struct accel_device_props *props)
{
    for (size_t i = 0; i < host->item_count; i++) {
        const struct accel__backend_item *item = &host->items[i];
        if (item->exclude && item_names(item, plugin) &&
            term_matches(item, index, props))
            return item;
    }
    return NULL;
}

/* "cuda:0 GPU-5b1c... pci=0000:41:00.0 'NAME'; ..." for the loaded plugins `item` names. */
static void devices_there_are(accel_host *host,
                              const struct accel__backend_item *item,
                              char *buffer, size_t size)
{
    buffer[0] = '\0';
    for (size_t p = 0; p < host->catalog.count; p++) {
        struct accel__plugin *plugin = &host->catalog.plugins[p];
        if (plugin->state_kind != ACCEL_PLUGIN_LOADED ||
            !item_names(item, plugin))
            continue;
        for (uint32_t i = 0; i < plugin->device_count; i++) {
            struct accel_device_props props;
            if (accel__plugin_device_props(plugin, i, &props) != ACCEL_OK)
                continue;
            append(buffer, size, "%s%s:%u %s%s%s '%s'", buffer[0] ? "; " : "",
                   plugin->name, i, props.uuid[0] ? props.uuid : "(no uuid)",
                   props.pci_bus_id[0] ? " pci=" : "", props.pci_bus_id,
                   props.name);
        }
    }
    if (buffer[0] == '\0')
        snprintf(buffer, size, "none");
}

/* Every exclusion with a term must take a device of a plugin that has some. */
static accel_status check_exclusions(struct pick *pick)
{
    accel_host *host = pick->host;
    for (size_t i = 0; i < host->item_count; i++) {
        const struct accel__backend_item *item = &host->items[i];
        if (!item->exclude || item->kind == ACCEL__TERM_NONE)
            continue;
        bool live = false, takes = false;
        for (size_t p = 0; p < host->catalog.count && !takes; p++) {
            struct accel__plugin *plugin = &host->catalog.plugins[p];
            if (plugin->state_kind != ACCEL_PLUGIN_LOADED ||
                !item_names(item, plugin))
                continue;
            live = true;
            for (uint32_t d = 0; d < plugin->device_count && !takes; d++) {
                struct accel_device_props props;
                takes = accel__plugin_device_props(plugin, d, &props) ==
                            ACCEL_OK &&
                        term_matches(item, d, &props);
            }
        }
        if (live && !takes) {
            char there[1024];
            devices_there_are(host, item, there, sizeof there);
            return accel__error(
                ACCEL_ERR_NOT_FOUND,
                "backend item '%s' excludes no device; the devices there "
                "are: %s",
                item->source, there);
        }
    }
    return ACCEL_OK;
}

/* The plugins an item names, in the order it tries them, into `order`; their count. */
static size_t item_plugins(const accel_host *host,
                           const struct accel__backend_item *item, size_t *order)
{
    size_t count = 0;
    for (size_t p = 0; p < host->catalog.count; p++) {
        const struct accel__plugin *plugin = &host->catalog.plugins[p];
        /* A named plugin's refusal is a reason to show; "*" tries what was opened. */
        if (plugin->name == NULL || !item_names(item, plugin) ||
            (item->any && (plugin->state_kind == ACCEL_PLUGIN_REJECTED ||
                           plugin->state_kind == ACCEL_PLUGIN_SKIPPED)))
            continue;
        /* Highest priority first; equal priorities keep the search order. */
        size_t at = count++;
        while (at > 0 && host->catalog.plugins[order[at - 1]].priority <
                             plugin->priority) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = p;
    }
    return count;
}

/* What one item finds in one plugin: devices its term matches, and a pick. */
struct found {
    uint32_t matches;
    bool live;
};

/* Why `plugin` offers no device, in the trace and in the reasons. */
static void note_no_device(struct pick *pick, const struct accel__plugin *plugin,
                           const char *reason)
{
    append(pick->trace, sizeof pick->trace, "  %s: %s\n", plugin->name, reason);
    append(pick->why, sizeof pick->why, "%s%s: %s", pick->why[0] ? "; " : "",
           plugin->name, reason);
}

static accel_status try_plugin(struct pick *pick,
                               const struct accel__backend_item *item,
                               struct accel__plugin *plugin, struct found *found)
{
    if (plugin->state_kind != ACCEL_PLUGIN_LOADED) {
        note_no_device(pick, plugin,
                       plugin->reason ? plugin->reason : "not loaded");
        return ACCEL_OK;
    }
    found->live = true;
    for (uint32_t i = 0; i < plugin->device_count; i++) {
        struct accel_device_props props;
        memset(&props, 0, sizeof props);
        if (pick->describe) {
            accel_status status = accel__plugin_device_props(plugin, i, &props);
            if (status != ACCEL_OK)
                return status;
        }
        if (!term_matches(item, i, &props))
            continue;
        found->matches++;
        const struct accel__backend_item *exclusion = exclusion_of(
            pick->host, plugin, i, &props);
        if (exclusion != NULL) {
            append(pick->trace, sizeof pick->trace,
                   "  %s:%u is excluded by '%s'\n", plugin->name, i,
                   exclusion->source);
            continue;
        }
        if (pick->plugin != NULL) {
            if (item->kind != ACCEL__TERM_UUID)
                return ACCEL_OK;
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "backend item '%s' is ambiguous: %s:%u and %s:%u both have a "
                "uuid that begins with '%s'",
                item->source, pick->plugin->name, pick->index, plugin->name, i,
                item->text);
        }
        pick->plugin = plugin;
        pick->index = i;
        if (pick->describe)
            append(pick->trace, sizeof pick->trace,
                   "  picks %s:%u '%s' %s%s%s\n", plugin->name, i, props.name,
                   props.uuid[0] ? props.uuid : "(no uuid)",
                   props.pci_bus_id[0] ? " pci=" : "", props.pci_bus_id);
        else
            append(pick->trace, sizeof pick->trace, "  picks %s:%u\n",
                   plugin->name, i);
    }
    return ACCEL_OK;
}

/* The rank a rank term binds by, read now, and written to the trace. */
struct bind_rank {
    int32_t value;
    const char *source;
    const char *what; /* "local rank" or "rank" */
};

static accel_status bind_rank_read(struct pick *pick,
                                   const struct accel__backend_item *item,
                                   struct bind_rank *out)
{
    accel_rank_info info;
    accel_status status = accel__rank_info_as(&pick->host->ids, &info);
    if (status != ACCEL_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", accel_last_error());
        return accel__error(status, "backend item '%s': %s", item->source,
                            detail);
    }
    bool local = item->kind == ACCEL__TERM_LOCAL;
    out->value = local ? info.local_rank : info.rank;
    out->source = local ? info.local_rank_source : info.rank_source;
    out->what = local ? "local rank" : "rank";
    append(pick->trace, sizeof pick->trace, "  %s %d (%s) of %d (%s)\n",
           out->what, (int)out->value, out->source,
           (int)(local ? info.local_size : info.size),
           local ? info.local_size_source : info.size_source);
    if (out->value >= 0)
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_NOT_FOUND,
                        "backend item '%s': the local rank is unknown: %s "
                        "gives the rank, but no variable gives the local "
                        "rank; set ACCEL_LOCAL_RANK",
                        item->source, info.rank_source);
}

/* The devices of `plugin` that no exclusion takes, into `left`. */
static accel_status devices_left(struct pick *pick, struct accel__plugin *plugin,
                                 uint32_t *left, uint32_t *out_count)
{
    *out_count = 0;
    for (uint32_t i = 0; i < plugin->device_count; i++) {
        struct accel_device_props props;
        memset(&props, 0, sizeof props);
        if (pick->describe) {
            accel_status status = accel__plugin_device_props(plugin, i, &props);
            if (status != ACCEL_OK)
                return status;
        }
        const struct accel__backend_item *exclusion = exclusion_of(
            pick->host, plugin, i, &props);
        if (exclusion != NULL)
            append(pick->trace, sizeof pick->trace,
                   "  %s:%u is excluded by '%s'\n", plugin->name, i,
                   exclusion->source);
        else
            left[(*out_count)++] = i;
    }
    return ACCEL_OK;
}

/* The device at the rank among the `count` of `left`, or the error saying why none. */
static accel_status bind_device(struct pick *pick,
                                const struct accel__backend_item *item,
                                struct accel__plugin *plugin,
                                const uint32_t *left, uint32_t count,
                                const struct bind_rank *rank)
{
    uint32_t position = (uint32_t)rank->value;
    if (item->modulo) {
        position %= count;
    } else if (position >= count) {
        return accel__error(
            ACCEL_ERR_NOT_FOUND,
            "backend item '%s': more ranks than devices: %s %u (%s) has no "
            "device of its own, %s has %u to bind; '%s:%%%s%%' shares them "
            "(the %s modulo %u)",
            item->source, rank->what, position, rank->source, plugin->name,
            count, item->name, item->kind == ACCEL__TERM_LOCAL ? "local" : "rank",
            rank->what, count);
    }
    pick->plugin = plugin;
    pick->index = left[position];
    char modulo[64] = "";
    if (item->modulo)
        snprintf(modulo, sizeof modulo, " modulo %u is %u", count, position);
    append(pick->trace, sizeof pick->trace,
           "  %s: %u device%s to bind; %s %u%s: picks %s:%u\n", plugin->name,
           count, count == 1 ? "" : "s", rank->what, (uint32_t)rank->value,
           modulo, plugin->name, pick->index);
    return ACCEL_OK;
}

/*
 * A rank term: the first of the item's plugins with a device left binds
 * the rank; one without lets the next plugin, then the next item, try.
 */
static accel_status try_ranked_item(struct pick *pick,
                                    const struct accel__backend_item *item,
                                    size_t *order)
{
    struct bind_rank rank = {0, NULL, NULL};
    accel_status status = bind_rank_read(pick, item, &rank);
    size_t count = status == ACCEL_OK ? item_plugins(pick->host, item, order) : 0;
    for (size_t i = 0; i < count && pick->plugin == NULL; i++) {
        struct accel__plugin *plugin = &pick->host->catalog.plugins[order[i]];
        if (plugin->state_kind != ACCEL_PLUGIN_LOADED) {
            note_no_device(pick, plugin,
                           plugin->reason ? plugin->reason : "not loaded");
            continue;
        }
        uint32_t *left = malloc((plugin->device_count + 1) * sizeof *left);
        if (left == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "selection");
        uint32_t left_count = 0;
        status = devices_left(pick, plugin, left, &left_count);
        if (status == ACCEL_OK && left_count > 0)
            status = bind_device(pick, item, plugin, left, left_count, &rank);
        else if (status == ACCEL_OK)
            note_no_device(pick, plugin,
                           plugin->device_count == 0
                               ? "no device"
                               : "every device is excluded");
        free(left);
        if (status != ACCEL_OK)
            return status;
    }
    return status;
}

/* One positive item: a pick, nothing (the next item tries), or an error. */
static accel_status try_item(struct pick *pick,
                             const struct accel__backend_item *item,
                             size_t *order)
{
    accel_host *host = pick->host;
    struct found found = {0, false};
    append(pick->trace, sizeof pick->trace, "'%s':\n", item->source);
    if (item->kind == ACCEL__TERM_LOCAL || item->kind == ACCEL__TERM_RANK)
        return try_ranked_item(pick, item, order);
    size_t count = item_plugins(host, item, order);
    for (size_t i = 0; i < count; i++) {
        struct accel__plugin *plugin = &host->catalog.plugins[order[i]];
        accel_status status = try_plugin(pick, item, plugin, &found);
        if (status != ACCEL_OK)
            return status;
        if (pick->plugin != NULL && item->kind != ACCEL__TERM_UUID)
            break;
    }
    if (pick->plugin != NULL || !found.live || found.matches > 0) {
        if (pick->plugin == NULL && found.matches > 0)
            append(pick->why, sizeof pick->why,
                   "%s'%s': every device it matches is excluded",
                   pick->why[0] ? "; " : "", item->source);
        return ACCEL_OK;
    }
    if (item->kind == ACCEL__TERM_NONE || item->kind == ACCEL__TERM_INDEX) {
        char line[sizeof item->source + 64];
        snprintf(line, sizeof line, "'%s': device index %u is out of range",
                 item->source, item->index);
        append(pick->trace, sizeof pick->trace, "  %s\n", line);
        append(pick->why, sizeof pick->why, "%s%s", pick->why[0] ? "; " : "",
               line);
        return ACCEL_OK;
    }
    char there[1024];
    devices_there_are(host, item, there, sizeof there);
    return accel__error(
        ACCEL_ERR_NOT_FOUND,
        "backend item '%s' matches no device; the devices there are: %s",
        item->source, there);
}

static accel_status select_listed(struct pick *pick)
{
    accel_host *host = pick->host;
    accel_status status = check_names(pick);
    if (status == ACCEL_OK)
        status = check_exclusions(pick);
    if (status != ACCEL_OK)
        return status;
    size_t *order = malloc((host->catalog.count + 1) * sizeof *order);
    if (order == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "selection");
    bool positive = false;
    for (size_t i = 0;
         i < host->item_count && status == ACCEL_OK && !pick->plugin; i++) {
        if (host->items[i].exclude)
            continue;
        positive = true;
        status = try_item(pick, &host->items[i], order);
    }
    if (!positive && status == ACCEL_OK) {
        /* Exclusions alone: any device they leave. */
        struct accel__backend_item any = {.name = "*", .any = true, .source = "*"};
        status = try_item(pick, &any, order);
    }
    free(order);
    if (status != ACCEL_OK || pick->plugin != NULL)
        return status;
    return accel__error(
        ACCEL_ERR_NO_DEVICE,
        "no plugin named in the backend selection has the device: %s",
        pick->why[0] ? pick->why : "every device is excluded");
}

static accel_status select_auto(struct pick *pick)
{
    accel_host *host = pick->host;
    struct accel__plugin *best = NULL;
    append(
        pick->trace,
        sizeof pick->trace, "no selection: the first device of the loaded plugin of highest priority\n");
    for (size_t i = 0; i < host->catalog.count; i++) {
        struct accel__plugin *plugin = &host->catalog.plugins[i];
        if (plugin->state_kind != ACCEL_PLUGIN_LOADED)
            continue;
        if (best == NULL || plugin->priority > best->priority)
            best = plugin;
    }
    if (best == NULL)
        return accel__error(
            ACCEL_ERR_NO_DEVICE,
            "no plugin with a device was found (%zu candidate file(s); "
            "ACCEL_LOG=info or accel-info says why)",
            host->catalog.count);
    pick->plugin = best;
    pick->index = 0;
    append(pick->trace, sizeof pick->trace, "  picks %s:0 (priority %d)\n",
           best->name, (int)best->priority);
    return ACCEL_OK;
}

static accel_status select_device(struct pick *pick)
{
    accel_host *host = pick->host;
    if (host->parse_status != ACCEL_OK)
        return accel__error(host->parse_status, "%s", host->parse_error);
    pick->describe = pick->describe || needs_props(host);
    if (host->item_count > 0)
        return select_listed(pick);
    return select_auto(pick);
}

static accel_status host_selection_untraced(accel_host *host,
                                            const char **out_plugin,
                                            uint32_t *out_index)
{
    if (out_plugin != NULL)
        *out_plugin = NULL;
    if (out_index != NULL)
        *out_index = 0;
    if (host == NULL || out_plugin == NULL || out_index == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_host_selection: NULL argument");
    struct pick *pick = calloc(1, sizeof *pick);
    if (pick == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "selection");
    pick->host = host;
    accel_status status = select_device(pick);
    if (status == ACCEL_OK) {
        *out_plugin = pick->plugin->name;
        *out_index = pick->index;
    }
    free(pick);
    return status;
}

static accel_status selection_explain_untraced(accel_host *host, char *buffer,
                                               size_t size)
{
    if (buffer != NULL && size > 0)
        buffer[0] = '\0';
    if (host == NULL || buffer == NULL || size == 0)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "accel_host_selection_explain: NULL argument or no room");
    struct pick *pick = calloc(1, sizeof *pick);
    if (pick == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "selection");
    pick->host = host;
    pick->describe = true; /* the trace names each device it considers */
    accel_status status = select_device(pick);
    if (status != ACCEL_OK)
        append(pick->trace, sizeof pick->trace, "error: %s: %s\n",
               accel_status_name(status), accel_last_error());
    snprintf(buffer, size, "%s", pick->trace);
    free(pick);
    return status;
}

accel_status accel_host_selection(accel_host *host, const char **out_plugin,
                                  uint32_t *out_index)
{
    uint64_t traced = accel__trace_now();
    accel_status status = host_selection_untraced(host, out_plugin, out_index);
    return accel__trace_end("accel_host_selection", traced, status, 0);
}

accel_status accel_host_selection_explain(accel_host *host, char *buffer,
                                          size_t size)
{
    uint64_t traced = accel__trace_now();
    accel_status status = selection_explain_untraced(host, buffer, size);
    return accel__trace_end("accel_host_selection_explain", traced, status, 0);
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

accel_status accel_device_open_selected(accel_host *host,
                                        accel_device **out_device)
{
    uint64_t traced = accel__trace_now();
    accel_status status = device_open_selected_untraced(host, out_device);
    return accel__trace_end("accel_device_open_selected", traced, status, 0);
}
