/*
 * accel-info: what libaccel sees on this machine.
 *
 * Lists the plugin search path, every candidate plugin file with its state
 * and reason, each device of each loaded plugin, and the device that
 * ACCEL_BACKEND (or automatic selection) picks, and this process's rank
 * with the device it binds. The report is gathered
 * first and then printed, as text or as one JSON document, so that both
 * forms always say the same thing.
 *
 * Exit status: 0 when a device is selected, 2 when selection fails, 1 on
 * any other error (bad usage, no memory).
 */
#include <accel/accel.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "info_rank.h"
#include "json.h"
#include "trace_summary.h"

enum { EXIT_NO_SELECTION = 2 };

/* A device of a loaded plugin, as opening it showed it. */
struct device_entry {
    const accel_plugin_info *plugin; /* owned by the host */
    uint32_t index;
    accel_status status; /* of opening and describing it */
    char *detail;        /* accel_last_error() when status is an error */
    struct accel_device_props props;
};

struct report {
    /* The variables as libaccel reads them; NULL when unset or empty. */
    const char *plugin_path_env;
    const char *backend_env;

    const char *const *search_path; /* owned by the host */
    size_t search_path_count;
    const accel_plugin_info *plugins; /* owned by the host */
    size_t plugin_count;
    struct device_entry *devices;
    size_t device_count;

    accel_status selection_status;
    const char *selected_plugin; /* owned by the host */
    uint32_t selected_index;
    char *selection_detail;
    const char *select_expression; /* --select, NULL without */
    char explanation[4096];        /* what the selection found, step by step */
    struct info_rank rank;
};

static const struct {
    uint32_t bit;
    const char *name;
} cap_names[] = {
    {ACCEL_DEVICE_CAP_HOST_VISIBLE, "host_visible"},
    {ACCEL_DEVICE_CAP_KERNELS, "kernels"},
    {ACCEL_DEVICE_CAP_COPY_3D, "copy_3d"},
};

/* libaccel reads its variables with secure_getenv and treats "" as unset. */
static const char *library_env(const char *name)
{
    const char *value = secure_getenv(name);

    return value != NULL && value[0] != '\0' ? value : NULL;
}

/* The thread's error detail, kept past the next accel call. May be NULL. */
static char *last_error_copy(void)
{
    return strdup(accel_last_error());
}

/* Described without being opened: on a GPU, opening makes a context. */
static void describe_device(accel_host *host, struct device_entry *entry)
{
    entry->status = accel_host_device_props(host, entry->plugin->name,
                                            entry->index, &entry->props);
    if (entry->status != ACCEL_OK)
        entry->detail = last_error_copy();
}

static accel_status gather_devices(accel_host *host, struct report *report)
{
    size_t total = 0;

    for (size_t p = 0; p < report->plugin_count; p++)
        if (report->plugins[p].state == ACCEL_PLUGIN_LOADED)
            total += report->plugins[p].device_count;
    if (total == 0)
        return ACCEL_OK;

    report->devices = calloc(total, sizeof(*report->devices));
    if (report->devices == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    for (size_t p = 0; p < report->plugin_count; p++) {
        const accel_plugin_info *plugin = &report->plugins[p];

        if (plugin->state != ACCEL_PLUGIN_LOADED)
            continue;
        for (uint32_t i = 0; i < plugin->device_count; i++) {
            struct device_entry *entry = &report->devices[report->device_count++];

            entry->plugin = plugin;
            entry->index = i;
            describe_device(host, entry);
        }
    }
    return ACCEL_OK;
}

/* The selection and the rank: all that --rank-binding needs. */
static void gather_selection(accel_host *host, struct report *report)
{
    report->selection_status = accel_host_selection(
        host, &report->selected_plugin, &report->selected_index);
    if (report->selection_status != ACCEL_OK)
        report->selection_detail = last_error_copy();
    info_rank_gather(&report->rank);
}

static accel_status gather(accel_host *host, struct report *report)
{
    accel_status status;

    report->plugin_path_env = library_env("ACCEL_PLUGIN_PATH");
    report->backend_env = library_env("ACCEL_BACKEND");
    accel_host_search_path(host, &report->search_path,
                           &report->search_path_count);
    accel_host_plugins(host, &report->plugins, &report->plugin_count);

    status = gather_devices(host, report);
    if (status != ACCEL_OK)
        return status;

    gather_selection(host, report);
    accel_host_selection_explain(host, report->explanation,
                                 sizeof(report->explanation));
    return ACCEL_OK;
}

static struct info_binding binding_of(const struct report *report)
{
    struct info_binding binding = {
        .status = report->selection_status,
        .plugin = report->selected_plugin,
        .index = report->selected_index,
        .detail = report->selection_detail,
    };
    return binding;
}

static void report_release(struct report *report)
{
    for (size_t i = 0; i < report->device_count; i++)
        free(report->devices[i].detail);
    free(report->devices);
    free(report->selection_detail);
    info_rank_release(&report->rank);
}

/* ---- text ---- */

static void format_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    size_t unit = 0;

    while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(buf, size, "%" PRIu64 " bytes", bytes);
    else
        snprintf(buf, size, "%.1f %s (%" PRIu64 " bytes)", value, units[unit],
                 bytes);
}

/*
 * Print text that comes from outside the program (a path, a reason) with
 * control characters shown as \xNN, so that a strange file name cannot
 * break the layout or drive the terminal.
 */
static void print_clean(const char *text)
{
    /* libaccel's own escaper (common/escape.c), so that both read alike. */
    size_t length = accel__escape(NULL, 0, text);
    char *clean = malloc(length + 1);

    if (clean == NULL) {
        fputs("(out of memory)", stdout);
        return;
    }
    accel__escape(clean, length + 1, text);
    fputs(clean, stdout);
    free(clean);
}

static void print_caps_text(uint32_t caps)
{
    const char *sep = "";

    for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
        if (caps & cap_names[i].bit) {
            printf("%s%s", sep, cap_names[i].name);
            sep = ", ";
            caps &= ~cap_names[i].bit;
        }
    }
    if (caps != 0)
        printf("%sunknown 0x%" PRIx32, sep, caps);
    else if (sep[0] == '\0')
        printf("none");
    printf("\n");
}

static void print_search_path_text(const struct report *report)
{
    printf("Search path (%s):\n", report->plugin_path_env != NULL
                                      ? "from ACCEL_PLUGIN_PATH"
                                      : "default");
    for (size_t i = 0; i < report->search_path_count; i++) {
        printf("  ");
        print_clean(report->search_path[i]);
        printf("\n");
    }
    if (report->search_path_count == 0)
        printf("  (empty)\n");
}

static void print_plugins_text(const struct report *report)
{
    printf("\nPlugins:\n");
    for (size_t i = 0; i < report->plugin_count; i++) {
        const accel_plugin_info *p = &report->plugins[i];

        printf("  %-10s %-10s ", p->name, accel_plugin_state_name(p->state));
        print_clean(p->path);
        printf("\n");
        if (p->version != NULL) {
            printf("             version %s, priority %" PRId32 ", %" PRIu32
                   " device%s\n",
                   p->version, p->priority, p->device_count,
                   p->device_count == 1 ? "" : "s");
            printf("             ABI %u.%u, optional entries: %s\n",
                   p->abi_major, p->abi_minor,
                   p->optional_entries != NULL && p->optional_entries[0] != '\0'
                       ? p->optional_entries
                       : "none");
        }
        if (p->reason != NULL) {
            printf("             ");
            print_clean(p->reason);
            printf("\n");
        }
    }
    if (report->plugin_count == 0)
        printf("  (none: no accel-plugin-NAME.so in the search path)\n");
}

static void print_device_text(const struct device_entry *d)
{
    const struct accel_device_props *props = &d->props;
    char bytes[64];

    printf("  %s:%" PRIu32, d->plugin->name, d->index);
    if (d->status != ACCEL_OK) {
        printf("  cannot open: %s: %s\n", accel_status_name(d->status),
               d->detail != NULL ? d->detail : "");
        return;
    }
    printf("  %.*s\n", (int)strnlen(props->name, sizeof(props->name)),
           props->name);
    printf("      arch           %.*s\n",
           (int)strnlen(props->arch, sizeof(props->arch)), props->arch);
    format_bytes(bytes, sizeof(bytes), props->total_memory);
    printf("      memory         %s\n", bytes);
    printf("      compute units  %" PRIu32 "\n", props->compute_units);
    printf("      caps           ");
    print_caps_text(props->caps);
    printf("      threads/block  %" PRIu32 "\n", props->max_threads_per_block);
    printf("      block dims     %" PRIu32 " x %" PRIu32 " x %" PRIu32 "\n",
           props->max_block_dim[0], props->max_block_dim[1],
           props->max_block_dim[2]);
    printf("      grid dims      %" PRIu32 " x %" PRIu32 " x %" PRIu32 "\n",
           props->max_grid_dim[0], props->max_grid_dim[1],
           props->max_grid_dim[2]);
    format_bytes(bytes, sizeof(bytes), props->max_shared_bytes);
    printf("      shared/block   %s\n", bytes);
    printf("      uuid           ");
    print_clean(props->uuid[0] != '\0' ? props->uuid : "(none)");
    printf("\n      pci bus id     ");
    print_clean(props->pci_bus_id[0] != '\0' ? props->pci_bus_id : "(none)");
    printf("\n");
}

static void print_selection_text(const struct report *report)
{
    printf("\nSelection (");
    if (report->select_expression != NULL)
        printf("--select %s", report->select_expression);
    else if (report->backend_env != NULL)
        printf("ACCEL_BACKEND=%s", report->backend_env);
    else
        printf("automatic: ACCEL_BACKEND is unset");
    printf("): ");
    if (report->selection_status == ACCEL_OK)
        printf("%s:%" PRIu32 "\n", report->selected_plugin,
               report->selected_index);
    else
        printf("none\n  %s: %s\n", accel_status_name(report->selection_status),
               report->selection_detail != NULL ? report->selection_detail : "");
    if (report->select_expression == NULL)
        return;
    /* Why: each item, each plugin and device it considered. */
    printf("\nHow it was chosen:\n");
    for (const char *line = report->explanation; *line != '\0';) {
        size_t length = strcspn(line, "\n");
        char *copy = strndup(line, length);

        printf("  ");
        print_clean(copy != NULL ? copy : "(out of memory)");
        printf("\n");
        free(copy);
        line += length + (line[length] == '\n');
    }
}

static void print_text(const struct report *report)
{
    struct info_binding binding = binding_of(report);

    print_search_path_text(report);
    print_plugins_text(report);
    printf("\nDevices:\n");
    for (size_t i = 0; i < report->device_count; i++)
        print_device_text(&report->devices[i]);
    if (report->device_count == 0)
        printf("  (none)\n");
    info_rank_print_text(&report->rank, &binding);
    print_selection_text(report);
}

/* ---- JSON ---- */

static void json_dims(struct json_writer *w, const char *key,
                      const uint32_t dims[3])
{
    json_begin_array(w, key);
    for (int i = 0; i < 3; i++)
        json_uint(w, NULL, dims[i]);
    json_end_array(w);
}

static void json_caps(struct json_writer *w, uint32_t caps)
{
    json_uint(w, "caps_bits", caps);
    json_begin_array(w, "caps");
    for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
        if (caps & cap_names[i].bit)
            json_string(w, NULL, cap_names[i].name);
    json_end_array(w);
}

static void json_error(struct json_writer *w, accel_status status,
                       const char *detail)
{
    json_string(w, "error", accel_status_name(status));
    json_string(w, "detail", detail != NULL ? detail : "");
}

static void json_plugin(struct json_writer *w, const accel_plugin_info *p)
{
    json_begin_object(w, NULL);
    json_string(w, "name", p->name);
    json_string(w, "path", p->path);
    json_string(w, "state", accel_plugin_state_name(p->state));
    json_string(w, "reason", p->reason);
    json_string(w, "version", p->version);
    json_int(w, "priority", p->priority);
    json_uint(w, "device_count", p->device_count);
    if (p->version != NULL) {
        char abi[32];

        snprintf(abi, sizeof(abi), "%u.%u", p->abi_major, p->abi_minor);
        json_string(w, "abi", abi);
        json_begin_array(w, "optional_entries");
        for (const char *name = p->optional_entries;
             name != NULL && *name != '\0';) {
            size_t length = strcspn(name, ",");

            json_string_n(w, NULL, name, length);
            name += length;
            name += strspn(name, ", ");
        }
        json_end_array(w);
    } else {
        json_string(w, "abi", NULL);
    }
    json_end_object(w);
}

static void json_device(struct json_writer *w, const struct device_entry *d)
{
    const struct accel_device_props *props = &d->props;

    json_begin_object(w, NULL);
    json_string(w, "plugin", d->plugin->name);
    json_uint(w, "index", d->index);
    json_bool(w, "ok", d->status == ACCEL_OK);
    if (d->status != ACCEL_OK) {
        json_error(w, d->status, d->detail);
        json_end_object(w);
        return;
    }
    json_string_n(w, "name", props->name, sizeof(props->name));
    json_string_n(w, "arch", props->arch, sizeof(props->arch));
    json_uint(w, "total_memory", props->total_memory);
    json_uint(w, "compute_units", props->compute_units);
    json_caps(w, props->caps);
    json_uint(w, "max_threads_per_block", props->max_threads_per_block);
    json_dims(w, "max_block_dim", props->max_block_dim);
    json_dims(w, "max_grid_dim", props->max_grid_dim);
    json_uint(w, "max_shared_bytes", props->max_shared_bytes);
    json_string_n(w, "uuid", props->uuid, sizeof(props->uuid));
    json_string_n(w, "pci_bus_id", props->pci_bus_id, sizeof(props->pci_bus_id));
    json_end_object(w);
}

static void json_selection(struct json_writer *w, const struct report *report)
{
    json_begin_object(w, "selection");
    json_string(w, "expression", report->select_expression);
    json_bool(w, "ok", report->selection_status == ACCEL_OK);
    if (report->selection_status == ACCEL_OK) {
        json_string(w, "plugin", report->selected_plugin);
        json_uint(w, "index", report->selected_index);
    } else {
        json_error(w, report->selection_status, report->selection_detail);
    }
    json_string(w, "explanation", report->explanation);
    json_end_object(w);
}

static void print_json(const struct report *report)
{
    struct info_binding binding = binding_of(report);
    struct json_writer w;

    json_writer_init(&w, stdout);
    json_begin_object(&w, NULL);

    json_begin_object(&w, "environment");
    json_string(&w, "ACCEL_PLUGIN_PATH", report->plugin_path_env);
    json_string(&w, "ACCEL_BACKEND", report->backend_env);
    json_end_object(&w);

    json_begin_array(&w, "search_path");
    for (size_t i = 0; i < report->search_path_count; i++)
        json_string(&w, NULL, report->search_path[i]);
    json_end_array(&w);

    json_begin_array(&w, "plugins");
    for (size_t i = 0; i < report->plugin_count; i++)
        json_plugin(&w, &report->plugins[i]);
    json_end_array(&w);

    json_begin_array(&w, "devices");
    for (size_t i = 0; i < report->device_count; i++)
        json_device(&w, &report->devices[i]);
    json_end_array(&w);

    info_rank_json(&w, &report->rank, &binding);
    json_selection(&w, report);
    json_end_object(&w);
    json_writer_finish(&w);
}

/* ---- main ---- */

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: accel-info [--json] [--select EXPR] [--rank-binding]\n"
        "       accel-info --trace-summary FILE\n"
        "\n"
        "Show the plugin search path, every candidate plugin with its state\n"
        "and reason, the devices of each loaded plugin, and the device that\n"
        "ACCEL_BACKEND (or automatic selection) picks, and this process's\n"
        "rank (from the launcher's environment) with the device it binds.\n"
        "\n"
        "  --json          print the same as one JSON document\n"
        "  --select EXPR   what EXPR (the ACCEL_BACKEND grammar) picks and "
        "why;\n"
        "                  only the plugins EXPR names are opened\n"
        "  --rank-binding  print one line, 'rank R: PLUGIN:INDEX (...)', the\n"
        "                  device this rank binds (for mpirun -np N "
        "accel-info)\n"
        "  --trace-summary FILE\n"
        "                  print per-kernel and per-copy totals of an "
        "ACCEL_TRACE file\n"
        "  --help          show this help\n"
        "\n"
        "Environment: ACCEL_PLUGIN_PATH, ACCEL_BACKEND, ACCEL_LOG, the\n"
        "launcher's rank variables and ACCEL_RANK, ACCEL_SIZE,\n"
        "ACCEL_LOCAL_RANK, ACCEL_LOCAL_SIZE.\n"
        "Exit status: 0 when a device is selected, 2 when selection fails,\n"
        "1 on any other error.\n");
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"select", required_argument, NULL, 's'},
        {"rank-binding", no_argument, NULL, 'r'},
        {"trace-summary", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct report report = {0};
    accel_host *host = NULL;
    accel_status status;
    bool json = false, rank_binding = false;
    int exit_code = EXIT_FAILURE;
    int opt;

    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'j':
            json = true;
            break;
        case 's':
            report.select_expression = optarg;
            break;
        case 'r':
            rank_binding = true;
            break;
        case 't':
            return accel_info_trace_summary(optarg);
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        default:
            usage(stderr);
            return EXIT_FAILURE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "accel-info: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return EXIT_FAILURE;
    }

    /* --select wins over ACCEL_BACKEND, as the option does in the API. */
    accel_host_options host_options = {.backend = report.select_expression};
    status = accel_host_create(&host_options, &host);
    if (status != ACCEL_OK) {
        fprintf(stderr, "accel-info: accel_host_create: %s: %s\n",
                accel_status_name(status), accel_last_error());
        goto fail;
    }
    if (rank_binding) {
        struct info_binding binding;

        gather_selection(host, &report);
        binding = binding_of(&report);
        exit_code = info_rank_binding_line(&report.rank, &binding);
        goto fail;
    }
    status = gather(host, &report);
    if (status != ACCEL_OK) {
        fprintf(stderr, "accel-info: %s\n", accel_status_string(status));
        goto fail;
    }

    if (json)
        print_json(&report);
    else
        print_text(&report);

    if (report.selection_status == ACCEL_OK) {
        exit_code = EXIT_SUCCESS;
    } else {
        /* The text output says it already; JSON readers may look only here. */
        if (json)
            fprintf(stderr, "accel-info: no device selected: %s: %s\n",
                    accel_status_name(report.selection_status),
                    report.selection_detail != NULL ? report.selection_detail
                                                    : "");
        exit_code = EXIT_NO_SELECTION;
    }

fail:
    report_release(&report);
    accel_host_destroy(host);
    return exit_code;
}
