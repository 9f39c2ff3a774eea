/*
 * The conformance suite as a library: what every plugin must do, tested
 * through the public API (accel.h), run by accel-conformance against any
 * plugin and by the meson suite against the bundled ones.
 *
 * Two groups of tests. Plugin tests run once per plugin, with or without
 * a device: the table, the state discovery gave it, what opening a device
 * it does not have returns. Device tests run once per device, each with a
 * fresh host, the device open and one stream. A test fails, passes, or is
 * skipped with the reason (a capability or an optional entry the plugin
 * does not have, a module image not given).
 */
#ifndef ACCEL_CONFORMANCE_H
#define ACCEL_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <accel/accel.h>
#include <accel/driver.h>

/* The plugin under test, as discovery saw it, and what its table holds. */
struct conf_plugin {
    char path[4096]; /* the plugin file */
    char name[ACCEL_PLUGIN_NAME_MAX + 1];
    accel_plugin_state state;
    char reason[512]; /* discovery's reason, "" when loaded */
    uint32_t device_count;
    /* Read from the loaded table (the host has checked it first). */
    bool table_read;
    uint32_t struct_size;
    uint16_t abi_major, abi_minor;
    uint64_t entries; /* bit `slot` set: the entry is in the table, non-NULL */
};

/* What one run of a test sees. */
struct conformance {
    const struct conf_plugin *plugin;
    const char *module_path; /* a module image of kernels/examples.cu, or NULL */
    accel_host *host;
    /* Device tests only: */
    uint32_t index;
    accel_device *device;
    accel_stream *stream;
    accel_device_info info;
};

struct conf_test {
    const char *name;
    void (*run)(struct conformance *c);
};

enum conf_outcome { CONF_PASS, CONF_FAIL, CONF_SKIP };

struct conf_result {
    const char *group; /* "null" for a plugin test, "null:0" for a device's */
    const char *name;
    enum conf_outcome outcome;
    char message[1024]; /* why it failed or was skipped; "" when it passed */
    double seconds;
};

/* The tests, in the order they run. */
extern const struct conf_test conf_plugin_tests[];
extern const size_t conf_plugin_test_count;
/* Device test `i` of conf_device_test_count(), across the areas below. */
const struct conf_test *conf_device_test(size_t i);
size_t conf_device_test_count(void);
/* The device tests by area, joined into conf_device_tests. */
extern const struct conf_test conf_copy_tests[];
extern const size_t conf_copy_test_count;
extern const struct conf_test conf_stream_tests[];
extern const size_t conf_stream_test_count;
extern const struct conf_test conf_kernel_tests[];
extern const size_t conf_kernel_test_count;

/*
 * Fill `plugin` from a host's discovery: the candidate named `name`, its
 * table's size, minor and entries. false, with the detail in `error`, when
 * the host has no such candidate.
 */
bool conf_plugin_describe(accel_host *host, const char *name,
                          struct conf_plugin *plugin, char *error,
                          size_t error_size);

/* Whether the plugin's table has entry `slot`, non-NULL. */
bool conf_plugin_has_entry(const struct conf_plugin *plugin, unsigned slot);

/*
 * Run one test and fill `out`. A device test (index given) gets a host of
 * its own (`options` as the tool was given them) with device `index` open.
 */
void conf_run_plugin_test(const struct conf_test *test,
                          const accel_host_options *options,
                          const struct conf_plugin *plugin,
                          const char *module_path, const char *group,
                          struct conf_result *out);
void conf_run_device_test(const struct conf_test *test,
                          const accel_host_options *options,
                          const struct conf_plugin *plugin,
                          const char *module_path, uint32_t index,
                          const char *group, struct conf_result *out);

/* ---- reports ---- */

/* One line per result as it comes, then the totals (human). */
void conf_report_human_line(FILE *out, const struct conf_result *r);
void conf_report_human_totals(FILE *out, const struct conf_result *results,
                              size_t count);
/* TAP version 13: the header and plan, then one line (and YAML block) per result. */
void conf_report_tap_plan(FILE *out, size_t planned);
void conf_report_tap_line(FILE *out, size_t number, const struct conf_result *r);
/* JUnit XML, one testsuite per group. Returns false when the file cannot be written. */
bool conf_report_junit(const char *path, const struct conf_result *results,
                       size_t count);

#endif /* ACCEL_CONFORMANCE_H */
