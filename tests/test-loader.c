/*
 * Discovery: which files a host considers, in what order, and how each
 * malformed plugin is rejected with its reason while the good plugin beside
 * it still loads.
 */
#include "support.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct loader_case {
    char *dir;
    char *dir2;
    accel_host *host;
};

static int setup(void **state)
{
    struct loader_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->dir = support_make_temp_dir();
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct loader_case *c = *state;
    accel_host_destroy(c->host);
    support_remove_dir(c->dir);
    support_remove_dir(c->dir2);
    free(c);
    return 0;
}

static void create_host(struct loader_case *c, const char *plugin_path)
{
    accel_host_options options = {.plugin_path = plugin_path};
    assert_status(accel_host_create(&options, &c->host), ACCEL_OK);
    assert_non_null(c->host);
}

/* The good plugin loads with both devices and can open one. */
static void expect_good_usable(struct loader_case *c)
{
    const accel_plugin_info *good = support_expect_plugin(c->host, "good",
                                                          ACCEL_PLUGIN_LOADED);
    assert_int_equal(good->device_count, 2);

    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "good", 0, &device), ACCEL_OK);
    assert_non_null(device);
    accel_device_close(device);
}

/*
 * The candidate `name` alone is rejected, with a reason naming the failed
 * check, cannot be opened, and the good plugin beside it still works.
 */
static void expect_rejected_beside_good(struct loader_case *c, const char *name,
                                        const char *fragment)
{
    const accel_plugin_info *bad = support_expect_plugin(c->host, name,
                                                         ACCEL_PLUGIN_REJECTED);
    assert_non_null(bad->reason);
    assert_contains(bad->reason, fragment);
    assert_int_equal(bad->device_count, 0);

    accel_device *device = NULL;
    assert_true(accel_device_open(c->host, name, 0, &device) != ACCEL_OK);
    assert_null(device);

    expect_good_usable(c);
}

/* Install `variant` as accel-plugin-NAME.so beside the good plugin. */
static void expect_rejected(struct loader_case *c, const char *variant,
                            const char *name, const char *fragment)
{
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, variant, name);
    create_host(c, c->dir);
    expect_rejected_beside_good(c, name, fragment);
}

/* The catalog entry whose path ends in `file`. */
static const accel_plugin_info *entry_by_file(accel_host *host, const char *file)
{
    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(host, &plugins, &count);
    for (size_t i = 0; i < count; i++) {
        size_t length = strlen(plugins[i].path);
        if (length >= strlen(file) &&
            strcmp(plugins[i].path + length - strlen(file), file) == 0)
            return &plugins[i];
    }
    fail_msg("no catalog entry for %s", file);
    return NULL;
}

static void test_good_plugin_loads_with_version_priority_and_devices(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);

    assert_int_equal(support_plugin_count(c->host), 1);
    const accel_plugin_info *good = support_expect_plugin(c->host, "good",
                                                          ACCEL_PLUGIN_LOADED);
    assert_null(good->reason);
    assert_non_null(good->version);
    assert_string_equal(good->version, "fixture-1.0");
    assert_int_equal(good->priority, 10);
    assert_int_equal(good->device_count, 2);
    assert_non_null(good->path);
    assert_contains(good->path, c->dir);
    assert_contains(good->path, "accel-plugin-good.so");
}

static void test_opened_device_reports_plugin_and_index(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);

    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "good", 1, &device), ACCEL_OK);
    accel_device_info info;
    assert_status(accel_device_info_get(device, &info), ACCEL_OK);
    assert_string_equal(info.plugin, "good");
    assert_int_equal(info.index, 1);
    assert_string_equal(info.props.name, "fixture device");
    accel_device_close(device);
}

static void test_device_index_past_count_is_no_device(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);

    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "good", 2, &device),
                  ACCEL_ERR_NO_DEVICE);
    assert_null(device);
}

static void test_wrong_abi_major_is_rejected(void **state)
{
    expect_rejected(*state, "badmajor", "badmajor", "ABI major version");
}

static void test_table_smaller_than_v1_is_rejected(void **state)
{
    expect_rejected(*state, "smalltable", "smalltable", "table size");
}

static void test_null_required_entry_is_rejected_by_name(void **state)
{
    expect_rejected(*state, "nullentry", "nullentry",
                    "required entry 'device_open' is NULL");
}

static void test_missing_driver_symbol_is_rejected(void **state)
{
    expect_rejected(*state, "nosymbol", "nosymbol", "accel_driver_v1");
}

static void test_file_that_is_not_a_shared_object_is_rejected(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    support_copy_file(FIXTURE_SRC_DIR "/not-a-shared-object.txt", c->dir,
                      "accel-plugin-text.so");
    create_host(c, c->dir);
    expect_rejected_beside_good(
        c, "text", "not a loadable shared object: not an ELF file");
}

static void test_table_name_differing_from_file_name_is_rejected(void **state)
{
    /* The good fixture's table says "good"; its file says "renamed". */
    expect_rejected(*state, "good", "renamed", "does not match");
}

static void test_failing_plugin_open_is_rejected(void **state)
{
    expect_rejected(*state, "openfails", "openfails", "plugin_open");
}

static void test_plugin_without_device_is_kept_with_its_reason(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "zero", "zero");
    create_host(c, c->dir);

    const accel_plugin_info *zero = support_expect_plugin(
        c->host, "zero", ACCEL_PLUGIN_NO_DEVICE);
    assert_int_equal(zero->device_count, 0);
    assert_non_null(zero->reason);
    assert_contains(zero->reason, "fixture has no device");
    assert_non_null(zero->version);
    assert_int_equal(zero->priority, 90);

    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "zero", 0, &device),
                  ACCEL_ERR_NO_DEVICE);
    assert_null(device);
    expect_good_usable(c);
}

static void test_same_name_in_second_directory_is_a_duplicate(void **state)
{
    struct loader_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "good", "good");
    char path[1024];
    snprintf(path, sizeof path, "%s:%s", c->dir, c->dir2);
    create_host(c, path);

    assert_int_equal(support_plugin_count(c->host), 2);
    const accel_plugin_info *first = support_find_plugin(c->host, "good", 0);
    const accel_plugin_info *second = support_find_plugin(c->host, "good", 1);
    assert_non_null(first);
    assert_non_null(second);
    assert_int_equal(first->state, ACCEL_PLUGIN_LOADED);
    assert_contains(first->path, c->dir);
    assert_int_equal(second->state, ACCEL_PLUGIN_REJECTED);
    assert_contains(second->path, c->dir2);
    assert_contains(second->reason, "duplicate");
    expect_good_usable(c);
}

static void test_candidates_are_sorted_by_name_within_a_directory(void **state)
{
    struct loader_case *c = *state;
    /* Created out of order: the directory's own order must not matter. */
    support_install_fixture(c->dir, "zero", "zero");
    support_install_fixture(c->dir, "peer", "peer");
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "high", "high");
    create_host(c, c->dir);

    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(c->host, &plugins, &count);
    assert_int_equal(count, 4);
    const char *expected[] = {"good", "high", "peer", "zero"};
    for (size_t i = 0; i < count; i++)
        assert_string_equal(plugins[i].name, expected[i]);
}

static void test_directories_are_searched_in_path_order(void **state)
{
    struct loader_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "zero", "zero");
    support_install_fixture(c->dir2, "high", "high");
    /* dir2 first: its plugins come before dir's though "good" sorts first. */
    char path[1024];
    snprintf(path, sizeof path, "%s:%s", c->dir2, c->dir);
    create_host(c, path);

    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(c->host, &plugins, &count);
    assert_int_equal(count, 3);
    assert_string_equal(plugins[0].name, "high");
    assert_string_equal(plugins[1].name, "zero");
    assert_string_equal(plugins[2].name, "good");

    const char *const *entries = NULL;
    size_t entry_count = 0;
    accel_host_search_path(c->host, &entries, &entry_count);
    assert_int_equal(entry_count, 2);
    assert_string_equal(entries[0], c->dir2);
    assert_string_equal(entries[1], c->dir);
}

static void test_path_entry_may_name_a_plugin_file(void **state)
{
    struct loader_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "high", "high");
    support_install_fixture(c->dir2, "zero", "zero");
    char path[1024];
    snprintf(path, sizeof path, "%s/accel-plugin-high.so:%s", c->dir2, c->dir);
    create_host(c, path);

    assert_int_equal(support_plugin_count(c->host), 2);
    support_expect_plugin(c->host, "high", ACCEL_PLUGIN_LOADED);
    assert_null(support_find_plugin(c->host, "zero", 0));
    expect_good_usable(c);
}

static void test_files_not_named_like_plugins_are_not_candidates(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    /* Good shared objects, under names the loader must not consider. */
    char from[1024];
    snprintf(from, sizeof from, "%s/fixture-high.so", FIXTURE_DIR);
    support_copy_file(from, c->dir, "libaccel-plugin-high.so");
    support_copy_file(from, c->dir, "accel-plugin-high.so.1");
    support_copy_file(from, c->dir, "accel-plugin-high.txt");
    support_copy_file(from, c->dir, "high.so");
    create_host(c, c->dir);

    /* The two near misses are listed, with a hint, and never loaded
     * (test_misnamed_plugin_files_are_listed_with_their_right_name). */
    assert_int_equal(support_plugin_count(c->host), 3);
    assert_int_equal(entry_by_file(c->host, "libaccel-plugin-high.so")->state,
                     ACCEL_PLUGIN_REJECTED);
    assert_int_equal(entry_by_file(c->host, "accel-plugin-high.so.1")->state,
                     ACCEL_PLUGIN_REJECTED);
    expect_good_usable(c);
}

static void test_directory_named_like_a_plugin_is_refused(void **state)
{
    /* Only regular files are loaded; anything else named like a plugin is
     * listed as refused, so that a user sees why it was not used. */
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/accel-plugin-dir.so", c->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    create_host(c, c->dir);
    expect_rejected_beside_good(c, "dir", "not a regular file");
}

static void test_plugin_file_writable_by_others_is_refused(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "high", "high");
    char path[1024];
    snprintf(path, sizeof path, "%s/accel-plugin-high.so", c->dir);
    assert_int_equal(chmod(path, 0666), 0);
    create_host(c, c->dir);
    expect_rejected_beside_good(c, "high", "writable");
}

static void test_plugin_directory_writable_by_others_is_refused(void **state)
{
    struct loader_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "high", "high");
    assert_int_equal(chmod(c->dir2, 0777), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s:%s", c->dir, c->dir2);
    create_host(c, path);
    assert_int_equal(chmod(c->dir2, 0700), 0);
    expect_rejected_beside_good(c, "high", "writable");
}

static void test_missing_directory_in_path_is_harmless(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char path[1024];
    snprintf(path, sizeof path, "/nonexistent/accel-test-dir:%s", c->dir);
    create_host(c, path);

    assert_int_equal(support_plugin_count(c->host), 1);
    expect_good_usable(c);
}

static void test_directory_listed_twice_loads_each_file_once(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char path[1024];
    snprintf(path, sizeof path, "%s:%s", c->dir, c->dir);
    create_host(c, path);

    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(c->host, &plugins, &count);
    size_t loaded = 0;
    for (size_t i = 0; i < count; i++)
        loaded += plugins[i].state == ACCEL_PLUGIN_LOADED;
    assert_int_equal(loaded, 1);
    expect_good_usable(c);
}

static void test_every_rejection_is_listed_beside_a_loaded_plugin(void **state)
{
    struct loader_case *c = *state;
    const char *bad[] = {"badmajor", "smalltable", "nullentry", "nosymbol",
                         "openfails"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        support_install_fixture(c->dir, bad[i], bad[i]);
    support_install_fixture(c->dir, "zero", "zero");
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);

    assert_int_equal(support_plugin_count(c->host), 7);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const accel_plugin_info *info = support_expect_plugin(
            c->host, bad[i], ACCEL_PLUGIN_REJECTED);
        assert_non_null(info->reason);
        assert_true(info->reason[0] != '\0');
    }
    support_expect_plugin(c->host, "zero", ACCEL_PLUGIN_NO_DEVICE);
    expect_good_usable(c);
}

static void test_environment_plugin_path_applies_without_options(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    setenv("ACCEL_PLUGIN_PATH", c->dir, 1);
    accel_status status = accel_host_create(NULL, &c->host);
    unsetenv("ACCEL_PLUGIN_PATH");
    assert_status(status, ACCEL_OK);
    assert_int_equal(support_plugin_count(c->host), 1);
    expect_good_usable(c);
}

static void test_plugin_path_option_wins_over_environment(void **state)
{
    struct loader_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "high", "high");
    setenv("ACCEL_PLUGIN_PATH", c->dir2, 1);
    accel_host_options options = {.plugin_path = c->dir};
    accel_status status = accel_host_create(&options, &c->host);
    unsetenv("ACCEL_PLUGIN_PATH");
    assert_status(status, ACCEL_OK);
    assert_int_equal(support_plugin_count(c->host), 1);
    assert_null(support_find_plugin(c->host, "high", 0));
    expect_good_usable(c);
}

static void test_host_without_plugins_lists_none(void **state)
{
    struct loader_case *c = *state;
    create_host(c, c->dir);
    assert_int_equal(support_plugin_count(c->host), 0);

    accel_device *device = NULL;
    assert_status(accel_device_open_selected(c->host, &device),
                  ACCEL_ERR_NO_DEVICE);
    assert_null(device);
}

static void test_plugin_state_names_are_distinct_words(void **state)
{
    (void)state;
    assert_string_equal(accel_plugin_state_name(ACCEL_PLUGIN_LOADED), "loaded");
    const accel_plugin_state states[] = {
        ACCEL_PLUGIN_LOADED, ACCEL_PLUGIN_NO_DEVICE, ACCEL_PLUGIN_REJECTED,
        ACCEL_PLUGIN_SKIPPED};
    for (size_t i = 0; i < 4; i++) {
        const char *a = accel_plugin_state_name(states[i]);
        assert_non_null(a);
        assert_true(a[0] != '\0');
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(a, accel_plugin_state_name(states[j]));
    }
    assert_non_null(accel_plugin_state_name((accel_plugin_state)77));
}

/* ---- hints for common vendor mistakes ---- */

static void
test_plugin_exporting_more_than_its_table_loads_with_a_warning(void **state)
{
    struct loader_case *c = *state;
    support_install_fixture(c->dir, "exports", "exports");
    create_host(c, c->dir);

    const accel_plugin_info *p = support_expect_plugin(c->host, "exports",
                                                       ACCEL_PLUGIN_LOADED);
    assert_non_null(p->reason);
    assert_contains(
        p->reason,
        "exports 5 symbols; only accel_driver_v1 should be exported");
    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "exports", 0, &device), ACCEL_OK);
    accel_device_close(device);
}

static void test_misnamed_plugin_files_are_listed_with_their_right_name(void **state)
{
    struct loader_case *c = *state;
    static const struct {
        const char *file, *hint;
    } cases[] = {
        {"libaccel-plugin-good.so", "did you mean accel-plugin-good.so?"},
        {"accel-plugin-high.so.1", "did you mean accel-plugin-high.so?"},
        {"libaccel-plugin-zero.so.1.2", "did you mean accel-plugin-zero.so?"},
    };
    support_copy_file(FIXTURE_DIR "/fixture-good.so", c->dir, cases[0].file);
    support_copy_file(FIXTURE_DIR "/fixture-high.so", c->dir, cases[1].file);
    support_copy_file(FIXTURE_DIR "/fixture-zero.so", c->dir, cases[2].file);
    /* Neither a plugin nor a near miss: not listed at all. */
    support_copy_file(FIXTURE_DIR "/fixture-good.so", c->dir,
                      "accel-plugin-good.so.bak");
    create_host(c, c->dir);

    assert_int_equal(support_plugin_count(c->host), 3);
    for (size_t i = 0; i < 3; i++) {
        const accel_plugin_info *p = entry_by_file(c->host, cases[i].file);
        assert_int_equal(p->state, ACCEL_PLUGIN_REJECTED);
        assert_non_null(p->reason);
        assert_contains(p->reason, "not a candidate: ");
        assert_contains(p->reason, cases[i].hint);
        assert_null(p->version);
        /* Never loaded: the dynamic loader has not mapped it. */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", c->dir, cases[i].file);
        assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD));
    }
    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, "good", 0, &device),
                  ACCEL_ERR_NOT_FOUND);
}

/* Named on the path directly, the same hint. */
static void test_misnamed_file_on_the_path_gets_the_hint(void **state)
{
    struct loader_case *c = *state;
    support_copy_file(FIXTURE_DIR "/fixture-good.so", c->dir,
                      "accel-plugin-good.so.1");
    char path[4096];
    snprintf(path, sizeof path, "%s/accel-plugin-good.so.1", c->dir);
    create_host(c, path);
    const accel_plugin_info *p = entry_by_file(c->host,
                                               "accel-plugin-good.so.1");
    assert_int_equal(p->state, ACCEL_PLUGIN_REJECTED);
    assert_contains(p->reason,
                    "not a candidate: did you mean accel-plugin-good.so?");
    assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD));
}

#define LOADER_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        LOADER_TEST(test_good_plugin_loads_with_version_priority_and_devices),
        LOADER_TEST(test_plugin_exporting_more_than_its_table_loads_with_a_warning),
        LOADER_TEST(test_misnamed_plugin_files_are_listed_with_their_right_name),
        LOADER_TEST(test_misnamed_file_on_the_path_gets_the_hint),
        LOADER_TEST(test_opened_device_reports_plugin_and_index),
        LOADER_TEST(test_device_index_past_count_is_no_device),
        LOADER_TEST(test_wrong_abi_major_is_rejected),
        LOADER_TEST(test_table_smaller_than_v1_is_rejected),
        LOADER_TEST(test_null_required_entry_is_rejected_by_name),
        LOADER_TEST(test_missing_driver_symbol_is_rejected),
        LOADER_TEST(test_file_that_is_not_a_shared_object_is_rejected),
        LOADER_TEST(test_table_name_differing_from_file_name_is_rejected),
        LOADER_TEST(test_failing_plugin_open_is_rejected),
        LOADER_TEST(test_plugin_without_device_is_kept_with_its_reason),
        LOADER_TEST(test_same_name_in_second_directory_is_a_duplicate),
        LOADER_TEST(test_candidates_are_sorted_by_name_within_a_directory),
        LOADER_TEST(test_directories_are_searched_in_path_order),
        LOADER_TEST(test_path_entry_may_name_a_plugin_file),
        LOADER_TEST(test_files_not_named_like_plugins_are_not_candidates),
        LOADER_TEST(test_directory_named_like_a_plugin_is_refused),
        LOADER_TEST(test_plugin_file_writable_by_others_is_refused),
        LOADER_TEST(test_plugin_directory_writable_by_others_is_refused),
        LOADER_TEST(test_missing_directory_in_path_is_harmless),
        LOADER_TEST(test_directory_listed_twice_loads_each_file_once),
        LOADER_TEST(test_every_rejection_is_listed_beside_a_loaded_plugin),
        LOADER_TEST(test_environment_plugin_path_applies_without_options),
        LOADER_TEST(test_plugin_path_option_wins_over_environment),
        LOADER_TEST(test_host_without_plugins_lists_none),
        LOADER_TEST(test_plugin_state_names_are_distinct_words),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
