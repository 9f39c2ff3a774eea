/*
 * The malformed-plugin corpus: fixture plugins each wrong in one way (every
 * header field out of range, every required entry NULL in turn, bad names,
 * a table symbol of the wrong kind or size, entries that return codes that
 * are not accel_status, opens that fail after allocating, more devices than
 * open) and files that are no plugin at all (truncated, empty, a directory,
 * a FIFO, a broken link).
 *
 * Each is installed beside the good fixture. A plugin that fails a check
 * before it is used is refused: listed as rejected with its own reason, and
 * never opened. A plugin that fails once in use is contained: the call that
 * failed returns an error with the plugin's detail, the host calls nothing
 * more for that object, and everything else keeps working. In both cases the
 * good plugin still loads and opens. Run under ASan and valgrind in CI, the
 * same tests show that no refusal leaks or touches freed memory.
 */
#include "support.h"

#include <accel/driver.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fixture variant, the name it is installed under, and its reason. */
struct malformed_case {
    const char *variant;
    const char *name;
    const char *fragment;
};

struct scratch {
    char *dir;
    accel_host *host;
    const struct malformed_case *refused;
};

static int setup(void **state)
{
    struct scratch *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -1;
    s->refused = *state;
    s->dir = support_make_temp_dir();
    support_install_fixture(s->dir, "good", "good");
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct scratch *s = *state;
    accel_host_destroy(s->host);
    support_remove_dir(s->dir);
    free(s);
    return 0;
}

static void create_host(struct scratch *s)
{
    accel_host_options options = {.plugin_path = s->dir};
    assert_status(accel_host_create(&options, &s->host), ACCEL_OK);
}

/* The good plugin loads with both its devices, and one opens and works. */
static void expect_good_usable(struct scratch *s)
{
    const accel_plugin_info *good = support_expect_plugin(s->host, "good",
                                                          ACCEL_PLUGIN_LOADED);
    assert_int_equal(good->device_count, 2);
    accel_device *device = NULL;
    assert_status(accel_device_open(s->host, "good", 1, &device), ACCEL_OK);
    accel_ref ref;
    assert_status(accel_alloc(device, ACCEL_U32, 16, &ref), ACCEL_OK);
    assert_status(accel_free(device, ref), ACCEL_OK);
    accel_device_close(device);
}

/* `name` is rejected with `fragment` in its reason and cannot be opened. */
static void expect_refused(struct scratch *s, const char *name,
                           const char *fragment)
{
    const accel_plugin_info *bad = support_expect_plugin(s->host, name,
                                                         ACCEL_PLUGIN_REJECTED);
    assert_non_null(bad->reason);
    assert_contains(bad->reason, fragment);
    assert_int_equal(bad->device_count, 0);
    for (const char *c = bad->reason; *c != '\0'; c++)
        assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);

    accel_device *device = NULL;
    assert_true(accel_device_open(s->host, name, 0, &device) != ACCEL_OK);
    assert_null(device);
    expect_good_usable(s);
}

/* ---- refused: each variant of the table driven list below ---- */

static void test_malformed_plugin_is_refused_beside_good(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, s->refused->variant, s->refused->name);
    create_host(s);
    assert_int_equal(support_plugin_count(s->host), 2);
    expect_refused(s, s->refused->name, s->refused->fragment);
}

static const struct malformed_case refused_cases[] = {
    {"abi0", "abi0", "ABI major version 0,"},
    {"abi2", "abi2", "ABI major version 2,"},
    {"abi65535", "abi65535", "ABI major version 65535,"},
    {"size0", "size0", "table size 0 does not fit"},
    {"size_short", "size_short", "table size 248 does not fit"},
    {"size_huge", "size_huge", "table size 4294967295 does not fit"},
    {"name_null", "name_null", "the table's name is NULL"},
    {"name_empty", "name_empty", "the table's name is empty"},
    {"name_long", "name_long", "the table's name is longer than 31"},
    {"name_upper", "name_upper", "byte 0x4e at 0, outside [a-z0-9_]"},
    {"name_control", "name_control", "byte 0x01 at 3, outside [a-z0-9_]"},
    {"name_wild", "name_wild", "the table's name points outside the plugin"},
    {"good", "renamed", "'good' does not match the file name's 'renamed'"},
    {"version_control", "version_control",
     "the table's version has control byte 0x1b at 3"},
    {"nosymbol", "nosymbol", "no symbol accel_driver_v1"},
    /* 8 bytes, or more where a sanitizer pads globals. */
    {"symbol_small", "symbol_small", "bytes, smaller than a 1.0 table (256)"},
    {"symbol_function", "symbol_function",
     "symbol accel_driver_v1 is not a data object"},
    {"open_status", "open_status",
     "plugin_open returned 12345, which is not an accel_status"},
    {"open_not_ready", "open_not_ready", "plugin_open returned ACCEL_NOT_READY"},
    {"open_null", "open_null", "plugin_open succeeded without a plugin"},
    {"open_fails", "open_fails",
     "plugin_open failed: ACCEL_ERR_DRIVER: fixture: plugin_open fails on "
     "purpose"},
    {"count_status", "count_status",
     "device_count returned 12345, which is not an accel_status"},
    {"count_huge", "count_huge",
     "device_count reported 2147483648 devices, more than a plugin may have"},
};

/* ---- contained: loaded, and each failure stays with its call ---- */

static void test_device_info_with_undefined_status_fails_the_open(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "info_status", "info_status");
    create_host(s);
    support_expect_plugin(s->host, "info_status", ACCEL_PLUGIN_LOADED);

    accel_device *device = NULL;
    assert_status(accel_device_open(s->host, "info_status", 0, &device),
                  ACCEL_ERR_PLUGIN_ABI);
    assert_null(device);
    assert_contains(accel_last_error(), "device_info returned 12345");
    struct accel_device_props props;
    assert_status(accel_host_device_props(s->host, "info_status", 0, &props),
                  ACCEL_ERR_PLUGIN_ABI);
    expect_good_usable(s);
}

static void test_mem_alloc_with_undefined_status_fails_the_alloc(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "alloc_status", "alloc_status");
    create_host(s);
    support_expect_plugin(s->host, "alloc_status", ACCEL_PLUGIN_LOADED);

    accel_device *device = NULL;
    assert_status(accel_device_open(s->host, "alloc_status", 0, &device),
                  ACCEL_OK);
    accel_ref ref;
    assert_status(accel_alloc(device, ACCEL_F32, 1024, &ref),
                  ACCEL_ERR_PLUGIN_ABI);
    assert_contains(accel_last_error(), "12345");
    assert_status(accel_device_status(device), ACCEL_OK);
    accel_device_close(device);
    expect_good_usable(s);
}

/*
 * A plugin call's error names the public call it was made in and the
 * entry, with neither typed at the call (the traced wrapper sets the one,
 * ACCEL__DRV_CALL the other).
 */
static void test_plugin_call_error_names_its_site_and_entry(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "reset_status", "reset_status");
    create_host(s);
    support_expect_plugin(s->host, "reset_status", ACCEL_PLUGIN_LOADED);

    accel_device *device = NULL;
    assert_status(accel_device_open(s->host, "reset_status", 0, &device),
                  ACCEL_OK);
    assert_status(accel_device_reset(device), ACCEL_ERR_PLUGIN_ABI);
    assert_contains(accel_last_error(),
                    "accel_device_reset: device_reset returned 12345");
    accel_device_close(device);
    expect_good_usable(s);
}

static void test_more_devices_than_open_fail_one_by_one(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "unopenable", "unopenable");
    create_host(s);
    const accel_plugin_info *info = support_expect_plugin(s->host, "unopenable",
                                                          ACCEL_PLUGIN_LOADED);
    assert_int_equal(info->device_count, 3);

    accel_device *first = NULL, *device = NULL;
    assert_status(accel_device_open(s->host, "unopenable", 0, &first), ACCEL_OK);
    for (uint32_t index = 1; index < 3; index++) {
        assert_status(accel_device_open(s->host, "unopenable", index, &device),
                      ACCEL_ERR_DRIVER);
        assert_null(device);
        assert_contains(accel_last_error(), "cannot be opened");
    }
    /* The one that opened is untouched by its siblings' failures. */
    accel_ref ref;
    assert_status(accel_alloc(first, ACCEL_U8, 64, &ref), ACCEL_OK);
    accel_device_close(first);
    expect_good_usable(s);
}

static void test_device_open_without_device_is_an_abi_error(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "device_null", "device_null");
    create_host(s);
    support_expect_plugin(s->host, "device_null", ACCEL_PLUGIN_LOADED);

    accel_device *device = NULL;
    assert_status(accel_device_open(s->host, "device_null", 0, &device),
                  ACCEL_ERR_PLUGIN_ABI);
    assert_null(device);
    assert_contains(accel_last_error(), "without a device");
    expect_good_usable(s);
}

/* ---- files that are no plugin ---- */

static void test_truncated_shared_object_is_refused(void **state)
{
    struct scratch *s = *state;
    char from[4096];
    snprintf(from, sizeof from, "%s/fixture-good.so", FIXTURE_DIR);
    support_copy_file(from, s->dir, "accel-plugin-truncated.so");
    char *path = support_path_in(s->dir, "accel-plugin-truncated.so");
    assert_int_equal(truncate(path, 100), 0);
    free(path);
    create_host(s);
    expect_refused(s, "truncated",
                   "not a loadable shared object: the program headers");
}

static void test_empty_file_is_refused(void **state)
{
    struct scratch *s = *state;
    char *path = support_path_in(s->dir, "accel-plugin-empty.so");
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fclose(file);
    assert_int_equal(chmod(path, 0644), 0);
    free(path);
    create_host(s);
    expect_refused(s, "empty", "the file is empty");
}

static void test_directory_named_like_a_plugin_is_refused(void **state)
{
    struct scratch *s = *state;
    char *path = support_path_in(s->dir, "accel-plugin-dir.so");
    assert_int_equal(mkdir(path, 0755), 0);
    free(path);
    create_host(s);
    expect_refused(s, "dir", "not a regular file: a directory");
}

static void test_fifo_named_like_a_plugin_is_refused_without_hanging(void **state)
{
    /* Opening a FIFO blocks until a writer comes: the kind is checked first,
     * so the loader never opens it. */
    struct scratch *s = *state;
    char *path = support_path_in(s->dir, "accel-plugin-fifo.so");
    assert_int_equal(mkfifo(path, 0644), 0);
    free(path);
    create_host(s);
    expect_refused(s, "fifo", "not a regular file: a FIFO");
}

static void test_broken_symlink_is_refused(void **state)
{
    struct scratch *s = *state;
    char *path = support_path_in(s->dir, "accel-plugin-broken.so");
    assert_int_equal(symlink("nowhere/accel-plugin-broken.so", path), 0);
    free(path);
    create_host(s);
    expect_refused(s, "broken",
                   "a broken symbolic link to nowhere/accel-plugin-broken.so");
}

static void test_file_that_is_not_a_shared_object_is_refused(void **state)
{
    struct scratch *s = *state;
    support_copy_file(FIXTURE_SRC_DIR "/not-a-shared-object.txt", s->dir,
                      "accel-plugin-text.so");
    create_host(s);
    expect_refused(s, "text", "not a loadable shared object: not an ELF file");
}

/* ---- where the table ends ---- */

static const char **table_entries(size_t *out_count);
static const char **required_entries(size_t *out_count);

/* The end of `entry` in the table, from driver.h's list. */
static size_t entry_end(const char *entry)
{
#define ENTRY_END(name, need, since, slot)                                     \
    if (strcmp(entry, #name) == 0)                                             \
        return ACCEL_DRIVER_V1_ENTRY_OFFSET((slot) + 1);
    ACCEL_DRIVER_V1_ENTRIES(ENTRY_END)
#undef ENTRY_END
    fail_msg("'%s' is no entry of driver.h's list", entry);
    return 0;
}

static void count_call(void *user, accel_status status)
{
    (void)status;
    (*(int *)user)++;
}

/* Callbacks on `name`'s device are `expected`; when accepted, one runs. */
static void expect_callback_support(struct scratch *s, const char *name,
                                    accel_status expected)
{
    int calls = 0;
    accel_device *device = NULL;
    accel_stream *stream = NULL;
    assert_status(accel_device_open(s->host, name, 0, &device), ACCEL_OK);
    assert_status(accel_stream_create(device, &stream), ACCEL_OK);
    assert_status(accel_stream_add_callback(stream, count_call, &calls),
                  expected);
    assert_status(accel_stream_sync(stream), ACCEL_OK);
    accel_stream_destroy(stream);
    /* Closing the device delivers every callback still outstanding. */
    accel_device_close(device);
    assert_int_equal(calls, expected == ACCEL_OK ? 1 : 0);
}

/*
 * A table that ends on each entry boundary: refused while it lacks a
 * required entry, loaded after, and then the host reads no entry past
 * struct_size (the fixture's host_func is set, and is not called when the
 * table ends before it).
 */
static void test_table_ending_at_every_entry_boundary(void **state)
{
    struct scratch *s = *state;
    size_t count = 0;
    const char **entries = table_entries(&count);
    char variant[64];
    for (size_t i = 0; i < count; i++) {
        snprintf(variant, sizeof variant, "ends_after_%s", entries[i]);
        support_install_fixture(s->dir, variant, variant);
    }
    create_host(s);
    for (size_t i = 0; i < count; i++) {
        snprintf(variant, sizeof variant, "ends_after_%s", entries[i]);
        size_t end = entry_end(entries[i]);
        if (end < ACCEL_DRIVER_V1_MIN_SIZE) {
            char fragment[64];
            snprintf(fragment, sizeof fragment,
                     "table size %zu does not fit a 1.0 table", end);
            expect_refused(s, variant, fragment);
            continue;
        }
        support_expect_plugin(s->host, variant, ACCEL_PLUGIN_LOADED);
        expect_callback_support(s, variant,
                                end > offsetof(struct accel_driver_v1, host_func)
                                    ? ACCEL_OK
                                    : ACCEL_ERR_NOT_SUPPORTED);
    }
    expect_good_usable(s);
}

/* The case: 4 bytes of host_func are half a pointer, never read. */
static void test_table_ending_inside_an_entry_is_refused(void **state)
{
    struct scratch *s = *state;
    support_install_fixture(s->dir, "ends_inside_host_func",
                            "ends_inside_host_func");
    create_host(s);
    char fragment[128];
    snprintf(fragment, sizeof fragment,
             "table size %zu ends 4 bytes into entry 'host_func'",
             offsetof(struct accel_driver_v1, host_func) + 4);
    expect_refused(s, "ends_inside_host_func", fragment);
}

/* The build's lists of entries (meson) are driver.h's, in its order. */
static void test_build_entry_lists_match_driver_header(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int need;
    } header[] = {
#define HEADER_ENTRY(name, need, since, slot) {#name, ACCEL_ENTRY_##need},
        ACCEL_DRIVER_V1_ENTRIES(HEADER_ENTRY)
#undef HEADER_ENTRY
    };
    size_t header_count = sizeof header / sizeof header[0];
    size_t table_count = 0, required_count = 0;
    const char **table = table_entries(&table_count);
    const char **required = required_entries(&required_count);
    assert_int_equal(table_count, header_count);
    size_t r = 0;
    for (size_t i = 0; i < header_count; i++) {
        assert_string_equal(table[i], header[i].name);
        if (header[i].need != ACCEL_ENTRY_OPTIONAL) {
            assert_true(r < required_count);
            assert_string_equal(required[r++], header[i].name);
        }
    }
    assert_int_equal(r, required_count);
}

/* ---- all at once ---- */

static void test_whole_corpus_in_one_directory_keeps_every_reason(void **state)
{
    struct scratch *s = *state;
    size_t refused = sizeof refused_cases / sizeof refused_cases[0];
    for (size_t i = 0; i < refused; i++)
        support_install_fixture(s->dir, refused_cases[i].variant,
                                refused_cases[i].name);
    size_t entry_count = 0;
    const char **entries = required_entries(&entry_count);
    for (size_t i = 0; i < entry_count; i++) {
        char variant[64];
        snprintf(variant, sizeof variant, "null_%s", entries[i]);
        support_install_fixture(s->dir, variant, variant);
    }
    create_host(s);
    assert_int_equal(support_plugin_count(s->host), 1 + refused + entry_count);

    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(s->host, &plugins, &count);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(plugins[i].name, "good") == 0)
            continue;
        assert_int_equal(plugins[i].state, ACCEL_PLUGIN_REJECTED);
        /* Each its own reason: no two refusals read the same. */
        for (size_t j = 0; j < i; j++) {
            if (plugins[j].reason != NULL)
                assert_string_not_equal(plugins[i].reason, plugins[j].reason);
        }
    }
    for (size_t i = 0; i < refused; i++)
        assert_contains(
            support_find_plugin(s->host, refused_cases[i].name, 0)->reason,
            refused_cases[i].fragment);
    expect_good_usable(s);
}

/* ---- the lists of entries, from the build ---- */

/* Split "a,b,c" once into `entries`. */
static const char **split_list(char *text, const char **entries, size_t *count,
                               size_t *out_count)
{
    if (*count == 0) {
        for (char *save = NULL, *entry = strtok_r(text, ",", &save);
             entry != NULL && *count < 64; entry = strtok_r(NULL, ",", &save))
            entries[(*count)++] = entry;
    }
    *out_count = *count;
    return entries;
}

/* REQUIRED_ENTRIES is "plugin_open,plugin_close,...", from meson: every
 * entry that may not be NULL on its own (the kernel entries included). */
static const char **required_entries(size_t *out_count)
{
    static const char *entries[64];
    static char text[] = REQUIRED_ENTRIES;
    static size_t count;
    return split_list(text, entries, &count, out_count);
}

/* TABLE_ENTRIES: every entry of the table, in order, from meson. */
static const char **table_entries(size_t *out_count)
{
    static const char *entries[64];
    static char text[] = TABLE_ENTRIES;
    static size_t count;
    return split_list(text, entries, &count, out_count);
}

/* What the loader says of a NULL `entry`: a kernel entry may be NULL only
 * with the other three. */
static int entry_need(const char *entry)
{
#define ENTRY_NEED(name, need, since, slot)                                    \
    if (strcmp(entry, #name) == 0)                                             \
        return ACCEL_ENTRY_##need;
    ACCEL_DRIVER_V1_ENTRIES(ENTRY_NEED)
#undef ENTRY_NEED
    return -1;
}

/* One refused case per required entry, named after it. */
static struct malformed_case *null_entry_cases(size_t *out_count)
{
    size_t count = 0;
    const char **entries = required_entries(&count);
    struct malformed_case *cases = calloc(count, sizeof *cases);
    assert_non_null(cases);
    for (size_t i = 0; i < count; i++) {
        char *variant = NULL, *fragment = NULL;
        assert_true(asprintf(&variant, "null_%s", entries[i]) > 0);
        if (entry_need(entries[i]) == ACCEL_ENTRY_KERNELS)
            assert_true(asprintf(&fragment, "kernel entry '%s' is NULL but",
                                 entries[i]) > 0);
        else
            assert_true(asprintf(&fragment, "required entry '%s' is NULL",
                                 entries[i]) > 0);
        cases[i] = (struct malformed_case){variant, variant, fragment};
    }
    *out_count = count;
    return cases;
}

static struct CMUnitTest refused_test(const struct malformed_case *c)
{
    char *name = NULL;
    assert_true(
        asprintf(&name, "test_%s_is_refused: %s", c->name, c->fragment) > 0);
    return (struct CMUnitTest){
        .name = name,
        .test_func = test_malformed_plugin_is_refused_beside_good,
        .setup_func = setup,
        .teardown_func = teardown,
        .initial_state = (void *)c,
    };
}

#define MALFORMED_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    support_clean_environment();
    static const struct CMUnitTest fixed[] = {
        MALFORMED_TEST(test_device_info_with_undefined_status_fails_the_open),
        MALFORMED_TEST(test_mem_alloc_with_undefined_status_fails_the_alloc),
        MALFORMED_TEST(test_plugin_call_error_names_its_site_and_entry),
        MALFORMED_TEST(test_more_devices_than_open_fail_one_by_one),
        MALFORMED_TEST(test_device_open_without_device_is_an_abi_error),
        MALFORMED_TEST(test_truncated_shared_object_is_refused),
        MALFORMED_TEST(test_empty_file_is_refused),
        MALFORMED_TEST(test_directory_named_like_a_plugin_is_refused),
        MALFORMED_TEST(test_fifo_named_like_a_plugin_is_refused_without_hanging),
        MALFORMED_TEST(test_broken_symlink_is_refused),
        MALFORMED_TEST(test_file_that_is_not_a_shared_object_is_refused),
        MALFORMED_TEST(test_whole_corpus_in_one_directory_keeps_every_reason),
        MALFORMED_TEST(test_table_ending_at_every_entry_boundary),
        MALFORMED_TEST(test_table_ending_inside_an_entry_is_refused),
        MALFORMED_TEST(test_build_entry_lists_match_driver_header),
    };
    size_t refused = sizeof refused_cases / sizeof refused_cases[0];
    size_t null_count = 0;
    struct malformed_case *null_cases = null_entry_cases(&null_count);
    size_t fixed_count = sizeof fixed / sizeof fixed[0];
    size_t total = refused + null_count + fixed_count;
    struct CMUnitTest *tests = calloc(total, sizeof *tests);
    assert_non_null(tests);
    size_t n = 0;
    for (size_t i = 0; i < refused; i++)
        tests[n++] = refused_test(&refused_cases[i]);
    for (size_t i = 0; i < null_count; i++)
        tests[n++] = refused_test(&null_cases[i]);
    for (size_t i = 0; i < fixed_count; i++)
        tests[n++] = fixed[i];

    int failed = _cmocka_run_group_tests("malformed", tests, total, NULL, NULL);

    for (size_t i = 0; i < refused + null_count; i++)
        free((char *)tests[i].name);
    for (size_t i = 0; i < null_count; i++) {
        free((char *)null_cases[i].variant);
        free((char *)null_cases[i].fragment);
    }
    free(null_cases);
    free(tests);
    return failed;
}
