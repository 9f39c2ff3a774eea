/*
 * accel-conformance: the conformance suite (tools/conformance) against one
 * plugin, by file or as the environment selects it, on every device of the
 * plugin or on one.
 *
 *   accel-conformance [--tap] [--junit FILE] [--device N] [--module FILE]
 *                     [path/to/accel-plugin-NAME.so]
 *
 * Exit status: 0 when every test that ran passed (skips are not failures),
 * 1 when one failed, 2 when the command line or the plugin could not be
 * used at all.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#include "conformance/conformance.h"

struct args {
    bool tap;
    const char *junit;
    const char *module;
    const char *file;
    long device; /* -1: every device */
};

static void usage(FILE *out)
{
    fputs("usage: accel-conformance [--tap] [--junit FILE] [--device N] "
          "[--module FILE]\n"
          "                         [path/to/accel-plugin-NAME.so]\n"
          "Runs the conformance suite against the plugin file given, or else "
          "against the\n"
          "plugin that ACCEL_PLUGIN_PATH and ACCEL_BACKEND select, on each of "
          "its devices\n"
          "(or device N alone). --module names an image of kernels/examples.cu "
          "for the\n"
          "device (default: ACCEL_CONFORMANCE_MODULE); without one the kernel "
          "tests are\n"
          "skipped. --tap writes TAP version 13 to stdout instead of the "
          "summary; --junit\n"
          "also writes JUnit XML to FILE. Exit 0 when no test failed.\n",
          out);
}

static bool parse_args(int argc, char **argv, struct args *a)
{
    *a = (struct args){.device = -1,
                       .module = getenv("ACCEL_CONFORMANCE_MODULE")};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;

        if (strcmp(arg, "--tap") == 0) {
            a->tap = true;
        } else if (strcmp(arg, "--junit") == 0 && has_value) {
            a->junit = argv[++i];
        } else if (strcmp(arg, "--module") == 0 && has_value) {
            a->module = argv[++i];
        } else if (strcmp(arg, "--device") == 0 && has_value) {
            char *end = NULL;

            errno = 0;
            a->device = strtol(argv[++i], &end, 10);
            if (errno != 0 || end == argv[i] || *end != '\0' || a->device < 0 ||
                a->device > UINT32_MAX) {
                fprintf(
                    stderr,
                    "accel-conformance: --device takes an index, not \"%s\"\n",
                    argv[i]);
                return false;
            }
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (arg[0] != '-' && a->file == NULL) {
            a->file = arg;
        } else {
            fprintf(
                stderr,
                "accel-conformance: unknown or incomplete argument \"%s\"\n",
                arg);
            usage(stderr);
            return false;
        }
    }
    return true;
}

/* NAME from .../accel-plugin-NAME.so, or false when the file is not so named. */
static bool name_of_file(const char *path, char *name, size_t size)
{
    static const char prefix[] = "accel-plugin-", suffix[] = ".so";
    const char *base = strrchr(path, '/');
    size_t length;

    base = base != NULL ? base + 1 : path;
    length = strlen(base);
    if (strncmp(base, prefix, sizeof(prefix) - 1) != 0 ||
        length <= sizeof(prefix) - 1 + sizeof(suffix) - 1 ||
        strcmp(base + length - (sizeof(suffix) - 1), suffix) != 0)
        return false;
    length -= sizeof(prefix) - 1 + sizeof(suffix) - 1;
    if (length >= size)
        return false;
    memcpy(name, base + sizeof(prefix) - 1, length);
    name[length] = '\0';
    return true;
}

/*
 * The plugin the environment selects: the selected device's, or, when no
 * device can be selected (a plugin without devices), the one candidate
 * that ACCEL_BACKEND let the host open.
 */
static bool selected_name(accel_host *host, char *name, size_t size)
{
    const accel_plugin_info *plugins = NULL;
    const char *plugin = NULL, *opened = NULL;
    size_t count = 0, opened_count = 0;
    uint32_t index = 0;

    if (accel_host_selection(host, &plugin, &index) == ACCEL_OK) {
        snprintf(name, size, "%s", plugin);
        return true;
    }
    accel_host_plugins(host, &plugins, &count);
    for (size_t i = 0; i < count; i++) {
        if (plugins[i].state == ACCEL_PLUGIN_NO_DEVICE &&
            plugins[i].name != NULL) {
            opened = plugins[i].name;
            opened_count++;
        }
    }
    if (opened_count != 1 || getenv("ACCEL_BACKEND") == NULL)
        return false;
    snprintf(name, size, "%s", opened);
    return true;
}

/* Find the plugin under test. Returns false, having said why, when there is none. */
static bool find_plugin(const struct args *a, accel_host_options *options,
                        struct conf_plugin *plugin)
{
    char name[ACCEL_PLUGIN_NAME_MAX + 2], error[512];
    accel_host *host = NULL;
    bool found;

    if (a->file != NULL && !name_of_file(a->file, name, sizeof(name))) {
        fprintf(
            stderr, "accel-conformance: %s: a plugin file is named accel-plugin-NAME.so\n",
            a->file);
        return false;
    }
    if (a->file != NULL) {
        options->plugin_path = a->file;
        options->backend = name;
    }
    if (accel_host_create(options, &host) != ACCEL_OK) {
        fprintf(stderr, "accel-conformance: accel_host_create: %s\n",
                accel_last_error());
        return false;
    }
    if (a->file == NULL && !selected_name(host, name, sizeof(name))) {
        fprintf(
            stderr,
            "accel-conformance: no plugin selected (ACCEL_BACKEND=%s): %s\n",
            getenv("ACCEL_BACKEND") != NULL ? getenv("ACCEL_BACKEND") : "(unset)",
            accel_last_error());
        accel_host_destroy(host);
        return false;
    }
    found = conf_plugin_describe(host, name, plugin, error, sizeof(error));
    accel_host_destroy(host);
    if (!found)
        fprintf(stderr, "accel-conformance: %s\n", error);
    /* From here every host names the plugin by file and name, as found. */
    options->plugin_path = found ? plugin->path : NULL;
    options->backend = found ? plugin->name : NULL;
    return found;
}

static void describe(const struct conf_plugin *p, const char *module)
{
    printf("accel-conformance: plugin %s (%s): %s, %u device(s)", p->name,
           p->path, accel_plugin_state_name(p->state), p->device_count);
    if (p->table_read)
        printf(", ABI %u.%u (this host speaks %d.%d)", p->abi_major,
               p->abi_minor, ACCEL_DRIVER_ABI_MAJOR, ACCEL_DRIVER_ABI_MINOR);
    printf("\n");
    if (p->reason[0] != '\0')
        printf("  reason: %s\n", p->reason);
#define ABSENT_ENTRY_(entry, need, since, slot)                                \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_OPTIONAL && p->table_read &&         \
        !conf_plugin_has_entry(p, slot))                                       \
        printf("  optional entry absent: %s (since 1.%d)\n", #entry, since);
    ACCEL_DRIVER_V1_ENTRIES(ABSENT_ENTRY_)
#undef ABSENT_ENTRY_
    printf("  module: %s\n\n",
           module != NULL && module[0] != '\0' ? module : "(none)");
}

struct run {
    const struct args *args;
    const accel_host_options *options;
    const struct conf_plugin *plugin;
    struct conf_result *results;
    size_t done;
};

static void report(struct run *run)
{
    const struct conf_result *r = &run->results[run->done++];

    if (run->args->tap)
        conf_report_tap_line(stdout, run->done, r);
    else
        conf_report_human_line(stdout, r);
}

static void run_device(struct run *run, uint32_t index, const char *group)
{
    for (size_t t = 0; t < conf_device_test_count(); t++) {
        conf_run_device_test(conf_device_test(t), run->options, run->plugin,
                             run->args->module, index, group,
                             &run->results[run->done]);
        report(run);
    }
}

/* A report group, "plugin:index": the name, a colon, a 32-bit index. */
#define CONF_GROUP_MAX (ACCEL_PLUGIN_NAME_MAX + sizeof(":4294967295"))

/* Every test, in order; the results in `run`. */
static void run_all(struct run *run, uint32_t first, uint32_t devices,
                    char (*groups)[CONF_GROUP_MAX])
{
    for (size_t t = 0; t < conf_plugin_test_count; t++) {
        conf_run_plugin_test(&conf_plugin_tests[t], run->options, run->plugin,
                             run->args->module, run->plugin->name,
                             &run->results[run->done]);
        report(run);
    }
    for (uint32_t d = 0; d < devices; d++) {
        snprintf(groups[d], sizeof(groups[d]), "%.*s:%u",
                 (int)ACCEL_PLUGIN_NAME_MAX, run->plugin->name, first + d);
        run_device(run, first + d, groups[d]);
    }
}

int main(int argc, char **argv)
{
    struct args args;
    accel_host_options options = {0};
    struct conf_plugin plugin;
    uint32_t first = 0, devices;
    size_t planned, failed = 0;
    char(*groups)[CONF_GROUP_MAX];
    struct run run;

    if (!parse_args(argc, argv, &args))
        return 2;
    if (!find_plugin(&args, &options, &plugin))
        return 2;
    devices = plugin.device_count;
    if (args.device >= 0) {
        if ((uint32_t)args.device >= plugin.device_count) {
            fprintf(
                stderr, "accel-conformance: --device %ld: the plugin %s has %u device(s)\n",
                args.device, plugin.name, plugin.device_count);
            return 2;
        }
        first = (uint32_t)args.device;
        devices = 1;
    }
    planned = conf_plugin_test_count + (size_t)devices * conf_device_test_count();
    run = (struct run){.args = &args,
                       .options = &options,
                       .plugin = &plugin,
                       .results = calloc(planned, sizeof(struct conf_result))};
    groups = calloc(devices + 1, sizeof(*groups));
    if (run.results == NULL || groups == NULL) {
        fprintf(stderr, "accel-conformance: out of memory\n");
        return 2;
    }
    if (args.tap)
        conf_report_tap_plan(stdout, planned);
    else
        describe(&plugin, args.module);
    run_all(&run, first, devices, groups);
    for (size_t i = 0; i < run.done; i++)
        failed += run.results[i].outcome == CONF_FAIL;
    if (!args.tap)
        conf_report_human_totals(stdout, run.results, run.done);
    if (args.junit != NULL &&
        !conf_report_junit(args.junit, run.results, run.done)) {
        fprintf(stderr, "accel-conformance: cannot write %s: %s\n", args.junit,
                strerror(errno));
        failed++;
    }
    free(run.results);
    free(groups);
    return failed == 0 ? 0 : 1;
}
