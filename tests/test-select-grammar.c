/*
 * The selection grammar beyond an index: uuid prefixes, pci=, name= globs,
 * exclusions, '*', and every error, through accel_host_selection,
 * accel_device_open_selected and accel_host_selection_explain.
 *
 * Fixtures: good (priority 10, 2 devices), high (50, 1), zero (90, no
 * device). Fixture device N has uuid FIX-0000000N-5e1e-c7ed-0000, bus id
 * 0000:1N:00.0 and the name "fixture device"; the CPU plugin's devices are
 * "accel CPU device N", uuid CPU-..., no bus id.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/driver.h>

struct grammar_case {
    char *dir;
    accel_host *host;
    accel_device *device;
};

static int setup(void **state)
{
    struct grammar_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->dir = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "high", "high");
    support_install_fixture(c->dir, "zero", "zero");
    *state = c;
    return 0;
}

static void drop_host(struct grammar_case *c)
{
    accel_device_close(c->device);
    c->device = NULL;
    accel_host_destroy(c->host);
    c->host = NULL;
}

static int teardown(void **state)
{
    struct grammar_case *c = *state;
    drop_host(c);
    support_remove_dir(c->dir);
    free(c);
    return 0;
}

static void create_host(struct grammar_case *c, const char *backend)
{
    drop_host(c);
    accel_host_options options = {.plugin_path = c->dir, .backend = backend};
    assert_status(accel_host_create(&options, &c->host), ACCEL_OK);
}

/* `backend` picks plugin:index, reported and opened alike. */
static void expect_pick(struct grammar_case *c, const char *backend,
                        const char *plugin, uint32_t index)
{
    create_host(c, backend);
    const char *name = NULL;
    uint32_t picked = UINT32_MAX;
    accel_status status = accel_host_selection(c->host, &name, &picked);
    if (status != ACCEL_OK)
        fail_msg("'%s': %s: %s", backend, accel_status_name(status),
                 accel_last_error());
    if (strcmp(name, plugin) != 0 || picked != index)
        fail_msg("'%s' picked %s:%u, expected %s:%u", backend, name, picked,
                 plugin, index);
    assert_status(accel_device_open_selected(c->host, &c->device), ACCEL_OK);
    accel_device_info info;
    assert_status(accel_device_info_get(c->device, &info), ACCEL_OK);
    assert_string_equal(info.plugin, plugin);
    assert_int_equal(info.index, index);
}

/* `backend` fails with `expected`, its detail holding each of `words` (NULL-ended). */
static void expect_error(struct grammar_case *c, const char *backend,
                         accel_status expected, const char *const *words)
{
    create_host(c, backend);
    accel_status status = accel_device_open_selected(c->host, &c->device);
    if (status != expected)
        fail_msg("'%s' gave %s (%s), expected %s", backend,
                 accel_status_name(status), accel_last_error(),
                 accel_status_name(expected));
    assert_null(c->device);
    for (; *words != NULL; words++) {
        if (strstr(accel_last_error(), *words) == NULL)
            fail_msg("'%s': the detail \"%s\" does not say \"%s\"", backend,
                     accel_last_error(), *words);
    }
}

static void test_device_props_carry_uuid_and_bus_id(void **state)
{
    struct grammar_case *c = *state;
    create_host(c, "good");
    struct accel_device_props props;
    assert_status(accel_host_device_props(c->host, "good", 1, &props), ACCEL_OK);
    assert_string_equal(props.uuid, "FIX-00000001-5e1e-c7ed-0000");
    assert_string_equal(props.pci_bus_id, "0000:11:00.0");
}

static void test_a_1_0_plugins_uuid_is_not_read_and_abi_is_listed(void **state)
{
    struct grammar_case *c = *state;
    support_install_fixture(c->dir, "minor0", "minor0");
    create_host(c, "minor0,good");
    struct accel_device_props props;
    assert_status(accel_host_device_props(c->host, "minor0", 0, &props),
                  ACCEL_OK);
    assert_string_equal(props.name, "fixture device");
    assert_string_equal(props.uuid, "");
    assert_string_equal(props.pci_bus_id, "");
    const accel_plugin_info *old = support_find_plugin(c->host, "minor0", 0);
    assert_int_equal(old->abi_major, 1);
    assert_int_equal(old->abi_minor, 0);
    const accel_plugin_info *good = support_find_plugin(c->host, "good", 0);
    assert_int_equal(good->abi_minor, ACCEL_DRIVER_ABI_MINOR);
    assert_string_equal(good->optional_entries, "host_func");
    const char *words[] = {"matches no device", "minor0:0 (no uuid)", NULL};
    expect_error(c, "minor0:FIX-0000", ACCEL_ERR_NOT_FOUND, words);
}

static void test_uuid_prefix_picks_the_device(void **state)
{
    struct grammar_case *c = *state;
    expect_pick(c, "good:FIX-00000001", "good", 1);
    /* Case ignored; the tag before the first '-' may be left out. */
    expect_pick(c, "good:fix-00000001-5E1E", "good", 1);
    expect_pick(c, "good:00000001", "good", 1);
    expect_pick(c, "*:FIX-00000001", "good", 1);
}

static void test_ambiguous_uuid_prefix_is_an_error(void **state)
{
    struct grammar_case *c = *state;
    const char *words[] = {"ambiguous", "good:0", "good:1", NULL};
    expect_error(c, "good:FIX-0000", ACCEL_ERR_INVALID_ARGUMENT, words);
}

static void test_pci_bus_id_picks_the_device_in_any_spelling(void **state)
{
    struct grammar_case *c = *state;
    expect_pick(c, "good:pci=0000:11:00.0", "good", 1);
    expect_pick(c, "good:pci=00000000:11:00.0", "good", 1); /* as nvidia-smi */
    expect_pick(c, "good:pci=11:00.0", "good", 1);
    expect_pick(c, "good:pci=0000:10:00.0", "good", 0);
}

static void test_name_glob_picks_the_first_match(void **state)
{
    struct grammar_case *c = *state;
    expect_pick(c, "good:name=*fixture*", "good", 0);
    expect_pick(c, "*:name=FIXTURE DEV?CE", "high", 0); /* highest priority first */
}

static void test_star_tries_plugins_by_priority(void **state)
{
    struct grammar_case *c = *state;
    expect_pick(c, "*", "high", 0);
    expect_pick(c, "*:1", "good", 1); /* high has no device 1 */
}

static void test_exclusion_skips_plugins_and_devices(void **state)
{
    struct grammar_case *c = *state;
    expect_pick(c, "!high", "good", 0);
    expect_pick(c, "!high,!good:0", "good", 1);
    expect_pick(c, "good,!good:0", "good", 1);
    expect_pick(c, "good,!good:FIX-00000000", "good", 1);
    expect_pick(c, "*,!*:pci=0000:10:00.0", "good", 1);
    expect_pick(c, "zero,good:name=fixture*,high,!good:0", "good", 1);
}

static void test_wholly_excluded_plugin_is_not_opened(void **state)
{
    struct grammar_case *c = *state;
    create_host(c, "!high");
    const accel_plugin_info *high = support_find_plugin(c->host, "high", 0);
    assert_non_null(high);
    assert_int_equal(high->state, ACCEL_PLUGIN_SKIPPED);
    const accel_plugin_info *good = support_find_plugin(c->host, "good", 0);
    assert_int_equal(good->state, ACCEL_PLUGIN_LOADED);
}

static void test_everything_excluded_is_no_device(void **state)
{
    struct grammar_case *c = *state;
    const char *words[] = {"excluded", NULL};
    expect_error(c, "good,!good:0,!good:1", ACCEL_ERR_NO_DEVICE, words);
}

static void test_term_matching_no_device_is_an_error_naming_the_devices(void **state)
{
    /* Not covered by the next item: a typo in an identity must show. */
    struct grammar_case *c = *state;
    const char *uuid[] = {"'good:FIX-99'", "matches no device",
                          "FIX-00000000-5e1e-c7ed-0000", "pci=0000:11:00.0",
                          NULL};
    expect_error(c, "good:FIX-99,high", ACCEL_ERR_NOT_FOUND, uuid);
    const char *pci[] = {"'good:pci=0000:41:00.0'", "good:1", NULL};
    expect_error(c, "good:pci=0000:41:00.0,high", ACCEL_ERR_NOT_FOUND, pci);
    const char *glob[] = {"'*:name=*MI300*'", "'fixture device'", "high:0", NULL};
    expect_error(c, "*:name=*MI300*", ACCEL_ERR_NOT_FOUND, glob);
}

static void test_exclusion_taking_nothing_is_an_error(void **state)
{
    struct grammar_case *c = *state;
    const char *index[] = {"'!good:7'", "excludes no device", "good:0", NULL};
    expect_error(c, "!good:7", ACCEL_ERR_NOT_FOUND, index);
    const char *uuid[] = {"'!*:GPU-5b1c'", "excludes no device", NULL};
    expect_error(c, "good,!*:GPU-5b1c", ACCEL_ERR_NOT_FOUND, uuid);
}

static void test_unknown_plugin_anywhere_is_not_found(void **state)
{
    struct grammar_case *c = *state;
    const char *words[] = {"'nosuch'", "good", "high", "zero", NULL};
    expect_error(c, "!nosuch", ACCEL_ERR_NOT_FOUND, words);
    expect_error(c, "good,nosuch:GPU-5b1c", ACCEL_ERR_NOT_FOUND, words);
}

static void test_rejected_plugin_named_is_no_device_with_its_reason(void **state)
{
    /* badmajor's file is found but refused: its reason, not "not found". */
    struct grammar_case *c = *state;
    support_install_fixture(c->dir, "badmajor", "badmajor");
    const char *words[] = {"badmajor: ", "major", NULL};
    expect_error(c, "badmajor:GPU-5b1c", ACCEL_ERR_NO_DEVICE, words);
    expect_pick(c, "badmajor,good:1", "good", 1);
}

static void test_deviceless_plugin_falls_through_to_next_item(void **state)
{
    /* zero has no device: its identity term cannot match, and the next item tries. */
    struct grammar_case *c = *state;
    expect_pick(c, "zero:GPU-5b1c,good:pci=0000:10:00.0", "good", 0);
}

static void expect_malformed(struct grammar_case *c, const char *backend)
{
    const char *words[] = {"backend", NULL};
    expect_error(c, backend, ACCEL_ERR_INVALID_ARGUMENT, words);
}

static void test_malformed_terms_are_invalid_argument(void **state)
{
    struct grammar_case *c = *state;
    const char *malformed[] = {
        "good:pci=",
        "good:pci=41",
        "good:pci=0000:41:00",
        "good:pci=0000:41:20.0",
        "good:pci=0000:41:00.8",
        "good:pci=000000000:41:00.0",
        "good:name=",
        "good:GPU",
        "good:GPU_5b1c",
        "good:GPU-5b1c!",
        "!",
        "!*:",
        "**",
        "good:*",
        "good:a-very-long-uuid-prefix-that-has-more-than-47-characters",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        expect_malformed(c, malformed[i]);
}

static void test_explain_says_what_each_item_found(void **state)
{
    struct grammar_case *c = *state;
    create_host(c, "zero,good:pci=0000:11:00.0");
    char text[4096];
    assert_status(accel_host_selection_explain(c->host, text, sizeof text),
                  ACCEL_OK);
    assert_contains(text, "'zero':");
    assert_contains(text, "fixture has no device");
    assert_contains(text,
                    "picks good:1 'fixture device' FIX-00000001-5e1e-c7ed-0000 "
                    "pci=0000:11:00.0");

    create_host(c, "good:FIX-99");
    assert_status(accel_host_selection_explain(c->host, text, sizeof text),
                  ACCEL_ERR_NOT_FOUND);
    assert_contains(text,
                    "error: ACCEL_ERR_NOT_FOUND: backend item 'good:FIX-99'");

    /* A short buffer is cut, still terminated. */
    char small[8];
    assert_status(accel_host_selection_explain(c->host, small, sizeof small),
                  ACCEL_ERR_NOT_FOUND);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_status(accel_host_selection_explain(c->host, NULL, 0),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_cpu_plugin_uuid_is_stable_and_per_device(void **state)
{
    (void)state;
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH,
                                  .backend = "null"};
    struct accel_device_props first[2], again;
    for (int round = 0; round < 2; round++) {
        accel_host *host = NULL;
        assert_status(accel_host_create(&options, &host), ACCEL_OK);
        for (uint32_t i = 0; i < 2; i++) {
            struct accel_device_props *props = round == 0 ? &first[i] : &again;
            assert_status(accel_host_device_props(host, "null", i, props),
                          ACCEL_OK);
            assert_int_equal(strncmp(props->uuid, "CPU-", 4), 0);
            assert_int_equal(strlen(props->uuid), 40);
            assert_string_equal(props->pci_bus_id, "");
            if (round == 1)
                assert_string_equal(again.uuid, first[i].uuid);
        }
        assert_string_not_equal(first[0].uuid, first[1].uuid);
        accel_host_destroy(host);
    }
    unsetenv("ACCEL_NULL_DEVICES");
}

#define GRAMMAR_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        GRAMMAR_TEST(test_device_props_carry_uuid_and_bus_id),
        GRAMMAR_TEST(test_a_1_0_plugins_uuid_is_not_read_and_abi_is_listed),
        GRAMMAR_TEST(test_uuid_prefix_picks_the_device),
        GRAMMAR_TEST(test_ambiguous_uuid_prefix_is_an_error),
        GRAMMAR_TEST(test_pci_bus_id_picks_the_device_in_any_spelling),
        GRAMMAR_TEST(test_name_glob_picks_the_first_match),
        GRAMMAR_TEST(test_star_tries_plugins_by_priority),
        GRAMMAR_TEST(test_exclusion_skips_plugins_and_devices),
        GRAMMAR_TEST(test_wholly_excluded_plugin_is_not_opened),
        GRAMMAR_TEST(test_everything_excluded_is_no_device),
        GRAMMAR_TEST(test_term_matching_no_device_is_an_error_naming_the_devices),
        GRAMMAR_TEST(test_exclusion_taking_nothing_is_an_error),
        GRAMMAR_TEST(test_unknown_plugin_anywhere_is_not_found),
        GRAMMAR_TEST(test_rejected_plugin_named_is_no_device_with_its_reason),
        GRAMMAR_TEST(test_deviceless_plugin_falls_through_to_next_item),
        GRAMMAR_TEST(test_malformed_terms_are_invalid_argument),
        GRAMMAR_TEST(test_explain_says_what_each_item_found),
        GRAMMAR_TEST(test_cpu_plugin_uuid_is_stable_and_per_device),
    };
    return cmocka_run_group_tests_name("select-grammar", tests, NULL, NULL);
}
