/*
 * Selection: which device accel_device_open_selected opens for a backend
 * string (the grammar of ACCEL_BACKEND), and that only named plugins are
 * opened.
 *
 * Fixtures: good (priority 10, 2 devices), peer (10, 1), high (50, 1),
 * zero (90, no device).
 */
#include "support.h"

#include <accel/driver.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct select_case {
    char *dir;
    char *dir2;
    char *dir3;
    accel_host *host;
    accel_device *device;
};

static int setup(void **state)
{
    struct select_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->dir = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "high", "high");
    support_install_fixture(c->dir, "zero", "zero");
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct select_case *c = *state;
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    support_remove_dir(c->dir);
    support_remove_dir(c->dir2);
    support_remove_dir(c->dir3);
    unsetenv("ACCEL_BACKEND");
    free(c);
    return 0;
}

static void create_host_at(struct select_case *c, const char *plugin_path,
                           const char *backend)
{
    accel_host_options options = {.plugin_path = plugin_path, .backend = backend};
    assert_status(accel_host_create(&options, &c->host), ACCEL_OK);
    assert_non_null(c->host);
}

static void create_host(struct select_case *c, const char *backend)
{
    create_host_at(c, c->dir, backend);
}

/* Both the reported selection and the opened device are plugin:index. */
static void expect_selected(struct select_case *c, const char *plugin,
                            uint32_t index)
{
    const char *name = NULL;
    uint32_t selected_index = UINT32_MAX;
    assert_status(accel_host_selection(c->host, &name, &selected_index),
                  ACCEL_OK);
    assert_non_null(name);
    assert_string_equal(name, plugin);
    assert_int_equal(selected_index, index);

    assert_status(accel_device_open_selected(c->host, &c->device), ACCEL_OK);
    assert_non_null(c->device);
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.plugin, plugin);
    assert_int_equal(info.index, index);
}

static void expect_open_fails(struct select_case *c, accel_status expected)
{
    assert_status(accel_device_open_selected(c->host, &c->device), expected);
    assert_null(c->device);
}

static void test_unset_backend_picks_highest_priority_live_device(void **state)
{
    /* zero has the highest priority but no device; high comes next. */
    struct select_case *c = *state;
    create_host(c, NULL);
    expect_selected(c, "high", 0);
}

static void test_empty_and_blank_backend_count_as_unset(void **state)
{
    struct select_case *c = *state;
    create_host(c, "");
    expect_selected(c, "high", 0);
    accel_device_close(c->device);
    c->device = NULL;
    accel_host_destroy(c->host);
    c->host = NULL;

    create_host(c, " \t ");
    expect_selected(c, "high", 0);
}

static void test_priority_tie_goes_to_first_in_search_order(void **state)
{
    /* good and peer share priority 10; peer's directory comes first. */
    struct select_case *c = *state;
    c->dir2 = support_make_temp_dir();
    c->dir3 = support_make_temp_dir();
    support_install_fixture(c->dir2, "peer", "peer");
    support_install_fixture(c->dir3, "good", "good");
    char path[1024];
    snprintf(path, sizeof path, "%s:%s", c->dir2, c->dir3);
    create_host_at(c, path, NULL);
    expect_selected(c, "peer", 0);
    accel_device_close(c->device);
    c->device = NULL;
    accel_host_destroy(c->host);
    c->host = NULL;

    /* In one directory, name order decides: good before peer. */
    support_install_fixture(c->dir3, "peer", "peer");
    create_host_at(c, c->dir3, NULL);
    expect_selected(c, "good", 0);
}

static void test_named_backend_opens_its_first_device(void **state)
{
    struct select_case *c = *state;
    create_host(c, "good");
    expect_selected(c, "good", 0);
}

static void test_named_backend_with_index_opens_that_device(void **state)
{
    struct select_case *c = *state;
    create_host(c, "good:1");
    expect_selected(c, "good", 1);
}

static void test_first_entry_with_a_device_wins(void **state)
{
    struct select_case *c = *state;
    create_host(c, "zero,good");
    expect_selected(c, "good", 0);
}

static void test_entry_order_is_respected(void **state)
{
    struct select_case *c = *state;
    create_host(c, "good,high");
    expect_selected(c, "good", 0);
    accel_device_close(c->device);
    c->device = NULL;
    accel_host_destroy(c->host);
    c->host = NULL;

    create_host(c, "high,good");
    expect_selected(c, "high", 0);
}

static void test_whitespace_around_items_is_trimmed(void **state)
{
    struct select_case *c = *state;
    create_host(c, "  zero ,\tgood:1  ");
    expect_selected(c, "good", 1);
}

static void test_index_out_of_range_is_no_device(void **state)
{
    struct select_case *c = *state;
    create_host(c, "good:5");
    expect_open_fails(c, ACCEL_ERR_NO_DEVICE);
    assert_contains(accel_last_error(), "out of range");
    accel_host_destroy(c->host);
    c->host = NULL;

    /* good has devices 0 and 1: 2 is the first index out of range. */
    create_host(c, "good:2");
    expect_open_fails(c, ACCEL_ERR_NO_DEVICE);
    assert_contains(accel_last_error(), "out of range");
}

static void test_entry_out_of_range_falls_through_to_next(void **state)
{
    struct select_case *c = *state;
    create_host(c, "good:5,high");
    expect_selected(c, "high", 0);
}

static void test_only_deviceless_plugin_named_is_no_device_with_reason(void **state)
{
    struct select_case *c = *state;
    create_host(c, "zero");
    expect_open_fails(c, ACCEL_ERR_NO_DEVICE);
    assert_contains(accel_last_error(), "fixture has no device");
}

static void test_unknown_name_is_not_found_and_lists_plugins(void **state)
{
    struct select_case *c = *state;
    create_host(c, "nosuch");
    expect_open_fails(c, ACCEL_ERR_NOT_FOUND);
    const char *detail = accel_last_error();
    assert_contains(detail, "nosuch");
    assert_contains(detail, "good");
    assert_contains(detail, "high");
}

static void expect_malformed(struct select_case *c, const char *backend)
{
    accel_host_options options = {.plugin_path = c->dir, .backend = backend};
    accel_host *host = NULL;
    /* A malformed selection does not stop the host: candidates are listed. */
    accel_status status = accel_host_create(&options, &host);
    if (status != ACCEL_OK)
        fail_msg("accel_host_create failed for backend \"%s\": %s", backend,
                 accel_status_name(status));
    c->host = host;
    assert_true(support_plugin_count(host) > 0);

    accel_device *device = NULL;
    status = accel_device_open_selected(host, &device);
    if (status != ACCEL_ERR_INVALID_ARGUMENT)
        fail_msg("backend \"%s\" gave %s, expected ACCEL_ERR_INVALID_ARGUMENT",
                 backend, accel_status_name(status));
    assert_null(device);
    accel_host_destroy(host);
    c->host = NULL;
}

static void test_malformed_backend_is_invalid_argument(void **state)
{
    struct select_case *c = *state;
    const char *malformed[] = {
        "good:",
        ":1",
        "good:x",
        "a,,b",
        "good:-1",
        "go od",
        "a_name_that_is_much_longer_than_31_chars",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        expect_malformed(c, malformed[i]);
}

static void test_empty_edge_items_and_non_decimal_index_are_malformed(void **state)
{
    /* Empty items at either end are as empty as "a,,b"'s; indexes are decimal. */
    struct select_case *c = *state;
    const char *malformed[] = {"good,", ",good", "good:1:2", "good:0x1",
                               "good:1x"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        expect_malformed(c, malformed[i]);
}

static void test_name_of_exactly_31_chars_is_well_formed(void **state)
{
    /* Well formed but unknown: NOT_FOUND, not INVALID_ARGUMENT. */
    struct select_case *c = *state;
    const char *name = "abcdefghijklmnopqrstuvwxyz01234";
    assert_int_equal(strlen(name), ACCEL_PLUGIN_NAME_MAX);
    create_host(c, name);
    expect_open_fails(c, ACCEL_ERR_NOT_FOUND);
}

static void test_only_named_plugins_are_opened(void **state)
{
    struct select_case *c = *state;
    support_install_fixture(c->dir, "badmajor", "badmajor");
    create_host(c, "good");

    const accel_plugin_info *good = support_find_plugin(c->host, "good", 0);
    assert_non_null(good);
    assert_int_equal(good->state, ACCEL_PLUGIN_LOADED);
    assert_non_null(good->version);

    const char *skipped[] = {"high", "zero", "badmajor"};
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++) {
        const accel_plugin_info *info = support_find_plugin(c->host, skipped[i],
                                                            0);
        if (info == NULL)
            fail_msg("\"%s\" is not listed", skipped[i]);
        if (info->state != ACCEL_PLUGIN_SKIPPED)
            fail_msg("\"%s\" is %s, expected skipped", skipped[i],
                     accel_plugin_state_name(info->state));
        assert_null(info->version);
    }
    expect_selected(c, "good", 0);
}

static void test_environment_backend_applies_when_option_is_unset(void **state)
{
    struct select_case *c = *state;
    setenv("ACCEL_BACKEND", "good:1", 1);
    create_host(c, NULL);
    unsetenv("ACCEL_BACKEND");
    expect_selected(c, "good", 1);
}

static void test_backend_option_wins_over_environment(void **state)
{
    struct select_case *c = *state;
    setenv("ACCEL_BACKEND", "good:1", 1);
    create_host(c, "high");
    unsetenv("ACCEL_BACKEND");
    expect_selected(c, "high", 0);
}

static void test_rejected_plugin_of_higher_priority_is_never_selected(void **state)
{
    /* The high fixture (priority 50) under another name fails the name check. */
    struct select_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir2, "high", "aaa");
    support_install_fixture(c->dir2, "good", "good");
    create_host_at(c, c->dir2, NULL);
    const accel_plugin_info *aaa = support_find_plugin(c->host, "aaa", 0);
    assert_non_null(aaa);
    assert_int_equal(aaa->state, ACCEL_PLUGIN_REJECTED);
    expect_selected(c, "good", 0);
}

#define SELECT_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        SELECT_TEST(test_unset_backend_picks_highest_priority_live_device),
        SELECT_TEST(test_empty_and_blank_backend_count_as_unset),
        SELECT_TEST(test_priority_tie_goes_to_first_in_search_order),
        SELECT_TEST(test_named_backend_opens_its_first_device),
        SELECT_TEST(test_named_backend_with_index_opens_that_device),
        SELECT_TEST(test_first_entry_with_a_device_wins),
        SELECT_TEST(test_entry_order_is_respected),
        SELECT_TEST(test_whitespace_around_items_is_trimmed),
        SELECT_TEST(test_index_out_of_range_is_no_device),
        SELECT_TEST(test_entry_out_of_range_falls_through_to_next),
        SELECT_TEST(test_only_deviceless_plugin_named_is_no_device_with_reason),
        SELECT_TEST(test_unknown_name_is_not_found_and_lists_plugins),
        SELECT_TEST(test_malformed_backend_is_invalid_argument),
        SELECT_TEST(test_empty_edge_items_and_non_decimal_index_are_malformed),
        SELECT_TEST(test_name_of_exactly_31_chars_is_well_formed),
        SELECT_TEST(test_only_named_plugins_are_opened),
        SELECT_TEST(test_environment_backend_applies_when_option_is_unset),
        SELECT_TEST(test_backend_option_wins_over_environment),
        SELECT_TEST(test_rejected_plugin_of_higher_priority_is_never_selected),
    };
    return cmocka_run_group_tests_name("select", tests, NULL, NULL);
}
