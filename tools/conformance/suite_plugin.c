/*
 * Conformance of the plugin itself, with or without a device: it was
 * opened, its table says what it is, a device it does not have is
 * "no device" with a reason, and it opens and closes again cleanly. These
 * are the tests a plugin on a machine without its hardware runs.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "suite.h"

static void test_plugin_is_opened_with_a_state_and_reason(struct conformance *c)
{
    const struct conf_plugin *p = c->plugin;

    if (p->state == ACCEL_PLUGIN_REJECTED)
        fail_msg("the host refused the plugin: %s", p->reason);
    if (p->state == ACCEL_PLUGIN_SKIPPED)
        fail_msg("the plugin was not opened: %s", p->reason);
    if (p->state == ACCEL_PLUGIN_NO_DEVICE) {
        assert_int_equal(p->device_count, 0);
        if (p->reason[0] == '\0')
            fail_msg(
                "no device, and no reason given (device_count's out_reason)");
    } else {
        assert_true(p->device_count > 0);
    }
}

static void test_table_says_what_the_plugin_is(struct conformance *c)
{
    const struct conf_plugin *p = c->plugin;
    unsigned kernel_entries = 0;

    if (!p->table_read)
        fail_msg("the table could not be read back from %s", p->path);
    assert_int_equal(p->abi_major, ACCEL_DRIVER_ABI_MAJOR);
    assert_true(p->struct_size >= ACCEL_DRIVER_V1_MIN_SIZE);
    /* A smaller table ends on an entry boundary (a larger one is a newer minor's). */
    if (p->struct_size < ACCEL_DRIVER_V1_1_SIZE)
        assert_int_equal((p->struct_size - ACCEL_DRIVER_V1_ENTRY_OFFSET(0)) %
                             sizeof(void (*)(void)),
                         0);
#define COUNT_KERNEL_ENTRY_(entry, need, since, slot)                          \
    kernel_entries += ACCEL_ENTRY_##need == ACCEL_ENTRY_KERNELS &&             \
                      conf_plugin_has_entry(p, slot);
    ACCEL_DRIVER_V1_ENTRIES(COUNT_KERNEL_ENTRY_)
#undef COUNT_KERNEL_ENTRY_
    if (kernel_entries != 0 && kernel_entries != 4)
        fail_msg("%u of the four kernel entries are set: all four, or none",
                 kernel_entries);
}

static void test_device_past_the_last_is_no_device(struct conformance *c)
{
    const struct conf_plugin *p = c->plugin;
    struct accel_device_props props;
    accel_device *device = NULL;

    assert_status(accel_device_open(c->host, p->name, p->device_count, &device),
                  ACCEL_ERR_NO_DEVICE);
    assert_null(device);
    assert_true(strlen(accel_last_error()) > 0);
    assert_status(
        accel_host_device_props(c->host, p->name, p->device_count, &props),
        ACCEL_ERR_NO_DEVICE);
}

static void test_every_device_describes_itself_unopened(struct conformance *c)
{
    const struct conf_plugin *p = c->plugin;

    if (p->device_count == 0)
        skip_because("the plugin has no device: %s", p->reason);
    for (uint32_t i = 0; i < p->device_count; i++) {
        struct accel_device_props props;

        memset(&props, 0, sizeof(props));
        assert_status(accel_host_device_props(c->host, p->name, i, &props),
                      ACCEL_OK);
        assert_true(strlen(props.name) > 0 &&
                    strlen(props.name) < sizeof(props.name));
        assert_true(strlen(props.arch) > 0 &&
                    strlen(props.arch) < sizeof(props.arch));
        assert_true(props.total_memory > 0);
    }
}

/* plugin_open and plugin_close again, twice, from a host of its own. */
static void test_plugin_opens_and_closes_again(struct conformance *c)
{
    accel_host_options options = {.plugin_path = c->plugin->path,
                                  .backend = c->plugin->name};

    for (int round = 0; round < 2; round++) {
        accel_host *host = NULL;
        struct conf_plugin again;
        char error[256];

        assert_status(accel_host_create(&options, &host), ACCEL_OK);
        if (!conf_plugin_describe(host, c->plugin->name, &again, error,
                                  sizeof(error)))
            fail_msg("%s", error);
        assert_int_equal(again.state, c->plugin->state);
        assert_int_equal(again.device_count, c->plugin->device_count);
        accel_host_destroy(host);
    }
}

const struct conf_test conf_plugin_tests[] = {
#define T(name)                                                                \
    {                                                                          \
#name, test_##name                                                     \
    }
    T(plugin_is_opened_with_a_state_and_reason),
    T(table_says_what_the_plugin_is),
    T(device_past_the_last_is_no_device),
    T(every_device_describes_itself_unopened),
    T(plugin_opens_and_closes_again),
#undef T
};
const size_t conf_plugin_test_count = sizeof(conf_plugin_tests) /
                                      sizeof(conf_plugin_tests[0]);
