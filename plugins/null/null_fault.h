/*
 * Fault injection: the null plugin's test knobs for failing its own entry
 * calls (ACCEL_NULL_FAIL), losing a device (ACCEL_NULL_LOSE_AT) and
 * reporting what happened (ACCEL_NULL_REPORT). null_plugin.c documents the
 * variables.
 *
 * Every entry of the table passes through accel__null_enter (or, for an
 * entry that returns nothing, accel__null_enter_void) before it does
 * anything: that counts the call, makes the device lost when the count
 * says so, and returns the injected or the lost status when there is one.
 * Counters are per plugin instance and atomic, since entries run on any
 * thread.
 */
#ifndef ACCEL_NULL_FAULT_H
#define ACCEL_NULL_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

/* Every entry the plugin fills, by its name in driver.h, in table order. */
// clang-format off
#define NULL_ENTRY_LIST(X) \
    X(plugin_open) \
    X(plugin_close) \
    X(device_count) \
    X(device_info) \
    X(device_open) \
    X(device_close) \
    X(device_status) \
    X(device_reset) \
    X(mem_alloc) \
    X(mem_free) \
    X(host_alloc) \
    X(host_free) \
    X(stream_create) \
    X(stream_destroy) \
    X(stream_sync) \
    X(event_create) \
    X(event_destroy) \
    X(event_record) \
    X(event_query) \
    X(event_sync) \
    X(stream_wait_event) \
    X(copy_to_device) \
    X(copy_to_host) \
    X(copy_on_device) \
    X(module_load) \
    X(module_unload) \
    X(kernel_get) \
    X(launch) \
    X(host_func) \
    X(fill) \
    X(event_elapsed) \
    X(native_handles)
// clang-format on

enum null_entry {
#define NULL_ENTRY_ENUM_(name) NULL_ENTRY_##name,
    NULL_ENTRY_LIST(NULL_ENTRY_ENUM_)
#undef NULL_ENTRY_ENUM_
        NULL_ENTRY_COUNT,
    /* ACCEL_NULL_FAIL=any:...: the n-th call of whichever entry. */
    NULL_ENTRY_ANY = NULL_ENTRY_COUNT
};

/* The longest path ACCEL_NULL_REPORT may name. */
#define NULL_REPORT_PATH_MAX 512u

struct null_faults {
    /* What the variables asked for; fixed once the plugin is open. */
    enum null_entry fail_entry;
    uint64_t fail_at; /* 1-based; 0: never */
    accel_status fail_status;
    enum null_entry lose_entry;
    uint64_t lose_at;                       /* 1-based; 0: never */
    char report_path[NULL_REPORT_PATH_MAX]; /* empty: no report */
    /* Any of the three set: count. Else entries skip the counters, which
     * every thread would otherwise write on every call. */
    bool active;

    _Atomic uint64_t calls;
    _Atomic uint64_t entry_calls[NULL_ENTRY_COUNT];
    /* A loss counted on a call that had no device: the next one takes it. */
    _Atomic bool lose_pending;
    _Atomic uint64_t fired;         /* injected failures returned */
    _Atomic uint64_t losses;        /* devices made lost */
    _Atomic uint64_t left_at_close; /* objects device_close had to free */
    _Atomic uint64_t left_at_reset; /* objects alive when device_reset ran */
};

struct accel_drv_plugin;
struct accel_drv_device;

/*
 * Read ACCEL_NULL_FAIL, ACCEL_NULL_LOSE_AT and ACCEL_NULL_REPORT into the
 * plugin's faults. False, with the plugin's no-device reason set, when one
 * is malformed.
 */
bool accel__null_faults_read(struct accel_drv_plugin *plugin);

/*
 * Count a call of `entry` on `device` (NULL for a plugin-level entry) and
 * say how it must end: ACCEL_OK to go on; the injected status; or
 * ACCEL_ERR_DEVICE_LOST when the device is lost (except for device_reset,
 * which rebuilds it). The detail is recorded on the calling thread.
 */
accel_status accel__null_enter(struct accel_drv_plugin *plugin,
                               struct accel_drv_device *device,
                               enum null_entry entry);
/* The same for an entry that returns nothing: counted, never failed. */
void accel__null_enter_void(struct accel_drv_plugin *plugin,
                            struct accel_drv_device *device,
                            enum null_entry entry);

/* Write the report ACCEL_NULL_REPORT asked for, if it did (plugin_close). */
void accel__null_faults_report(struct accel_drv_plugin *plugin);

#endif /* ACCEL_NULL_FAULT_H */
