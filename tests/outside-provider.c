/*
 * A communication plugin vendor's view (README "Which provider", comm.h):
 * each table of outside-provider-fixture.c is installed as
 * accel-comm-outside.so and the host must refuse it with its reason, or
 * take it, as comm.h's rules say: struct_size honoured entry by entry,
 * abi_major a hard line and abi_minor not, required entries present, what
 * is checked is what is loaded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

/* accel_host_comm_providers' one entry for the variant installed alone. */
struct seen {
    int32_t open;
    uint32_t caps;
    char reason[1024];
};

static void look(const char *variant, struct seen *out)
{
    support_clean_environment();
    char *dir = support_make_temp_dir();
    char from[1024];
    snprintf(from, sizeof from, "%s/outside-provider-%s.so", FIXTURE_DIR,
             variant);
    support_copy_file(from, dir, "accel-comm-outside.so");
    char path[2048];
    snprintf(path, sizeof path, "%s:%s", NULL_PLUGIN_PATH, dir);
    setenv("ACCEL_PLUGIN_PATH", path, 1);
    setenv("ACCEL_COMM", "outside", 1);
    accel_host *host = NULL;
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    const accel_comm_provider_info *list = NULL;
    size_t count = 0;
    assert_status(accel_host_comm_providers(host, &list, &count), ACCEL_OK);
    assert_int_equal(count, 1);
    assert_string_equal(list[0].name, "outside");
    assert_non_null(list[0].path);
    out->open = list[0].open;
    out->caps = list[0].caps;
    snprintf(out->reason, sizeof out->reason, "%s",
             list[0].reason ? list[0].reason : "");
    /* Whatever the table, a device of this host is still usable. */
    accel_device *device = NULL;
    assert_status(accel_device_open(host, "null", 0, &device), ACCEL_OK);
    accel_comm *comm = NULL;
    accel_status status = accel_comm_create_local(&device, 1, &comm);
    assert_int_not_equal(status, ACCEL_OK);
    assert_null(comm);
    accel_host_destroy(host);
    unsetenv("ACCEL_PLUGIN_PATH");
    unsetenv("ACCEL_COMM");
    support_remove_dir(dir);
}

static void expect_refused(const char *variant, const char *reason)
{
    struct seen seen;
    look(variant, &seen);
    if (seen.open != 0 || strstr(seen.reason, reason) == NULL)
        fail_msg("variant %s: open %d, reason '%s'; expected refused with '%s'",
                 variant, (int)seen.open, seen.reason, reason);
    assert_int_equal(seen.caps, 0);
}

static void expect_taken(const char *variant)
{
    struct seen seen;
    look(variant, &seen);
    if (seen.open != 1 || seen.reason[0] != '\0')
        fail_msg("variant %s: open %d, reason '%s'; expected it taken", variant,
                 (int)seen.open, seen.reason);
    assert_int_equal(seen.caps, 1u << 1); /* ACCEL_COMM_CAP_LOOPBACK */
}

static void test_every_required_entry_is_required(void **state)
{
    (void)state;
    const char *const entries[] = {
        "plugin_open",  "plugin_close", "accepts_memory", "comm_create",
        "comm_destroy", "comm_abort",   "comm_error"};
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        char variant[64], reason[96];
        snprintf(variant, sizeof variant, "null-%s", entries[i]);
        snprintf(reason, sizeof reason, "required entry '%s' is NULL",
                 entries[i]);
        expect_refused(variant, reason);
    }
}

static void test_names_that_are_not_the_files_are_refused(void **state)
{
    (void)state;
    expect_refused("name-null", "name");
    expect_refused("name-empty", "name");
    expect_refused("name-upper", "name");
    expect_refused("name-long", "name");
}

static void test_struct_size_at_each_boundary(void **state)
{
    (void)state;
    expect_refused("size-0", "struct_size");
    expect_refused("size-1-0-less-1", "struct_size");
    expect_refused("size-cuts-bootstrap", "struct_size");
    /* A symbol of 1.0's size that claims the 1.1 entry: the host must not
     * read past the symbol for it. */
    expect_refused("size-past-symbol", "symbol");
    expect_refused("size-max", "symbol");
}

static void test_older_and_newer_tables_are_taken(void **state)
{
    (void)state;
    expect_taken("old-1-0");
    expect_taken("future");
    expect_taken("minor-0");
    expect_taken("minor-max");
    expect_refused("major-0", "ABI major");
}

static void test_open_failures_keep_a_reason_of_their_own(void **state)
{
    (void)state;
    /* A provider that fails without set_error still gets a reason, and not
     * a stale one. */
    assert_status(accel_comm_abort(NULL), ACCEL_ERR_INVALID_ARGUMENT);
    expect_refused("open-silent", "plugin_open");
    struct seen seen;
    look("open-silent", &seen);
    assert_null(strstr(seen.reason, "accel_comm_abort"));
    /* A status that is no accel_status is refused, not taken as success. */
    expect_refused("open-bogus", "plugin_open");
    expect_refused("open-positive", "plugin_open");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_required_entry_is_required),
        cmocka_unit_test(test_names_that_are_not_the_files_are_refused),
        cmocka_unit_test(test_struct_size_at_each_boundary),
        cmocka_unit_test(test_older_and_newer_tables_are_taken),
        cmocka_unit_test(test_open_failures_keep_a_reason_of_their_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
