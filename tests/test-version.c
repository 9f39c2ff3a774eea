/*
 * Versions and the public structs that grow (accel.h, "structs that
 * grow"): a caller compiled against a smaller struct is read and written
 * only as far as its size, and the version macros say what the build is.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANARY 0xa5

static void test_version_macros_match_the_project_and_the_library(void **state)
{
    (void)state;
    unsigned major, minor, patch;
    assert_int_equal(
        sscanf(ACCEL_PROJECT_VERSION, "%u.%u.%u", &major, &minor, &patch), 3);
    assert_int_equal(ACCEL_VERSION_MAJOR, major);
    assert_int_equal(ACCEL_VERSION_MINOR, minor);
    assert_int_equal(ACCEL_VERSION_PATCH, patch);
    assert_int_equal(ACCEL_VERSION, ACCEL_VERSION_ENCODE(major, minor, patch));
    assert_int_equal(accel_version(), ACCEL_VERSION);
    assert_true(ACCEL_VERSION_ENCODE(0, 2, 0) > ACCEL_VERSION_ENCODE(0, 1, 9));
}

/*
 * Options whose struct_size ends before `backend`, as from a caller built
 * before that field existed: the bytes after it (an unknown backend here)
 * are not read, so the default selection opens the null device.
 */
static void test_host_options_past_struct_size_are_not_read(void **state)
{
    (void)state;
    accel_host_options options = accel_host_options_default();
    options.plugin_path = NULL_PLUGIN_PATH;
    options.backend = "no_such_backend";
    accel_host *host = NULL;
    accel_device *device = NULL;

    assert_status(accel_host_create(&options, &host), ACCEL_OK);
    assert_status(accel_device_open_selected(host, &device), ACCEL_ERR_NOT_FOUND);
    accel_host_destroy(host);

    options.struct_size = (uint32_t)offsetof(accel_host_options, backend);
    assert_status(accel_host_create(&options, &host), ACCEL_OK);
    assert_status(accel_device_open_selected(host, &device), ACCEL_OK);
    accel_device_close(device);
    accel_host_destroy(host);
}

/* A caller's struct that is exactly `size` bytes, on the heap, so that a
 * read or write past it is an error under ASan and valgrind. */
static void *exact_struct(const void *from, size_t size)
{
    void *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, from, size);
    return copy;
}

static void test_an_older_callers_policies_are_read_to_their_size(void **state)
{
    (void)state;
    struct support_null null;
    assert_int_equal(support_null_open(&null, NULL), 0);

    /* Only `automatic` fits: max_losses past it would be refused. */
    accel_recovery_policy recovery = accel_recovery_policy_default();
    recovery.max_losses = ACCEL_RECOVERY_MAX_LOSSES + 1;
    assert_status(accel_device_set_recovery(null.device, &recovery),
                  ACCEL_ERR_INVALID_ARGUMENT);
    recovery.struct_size = (uint32_t)offsetof(accel_recovery_policy, max_losses);
    void *old = exact_struct(&recovery, recovery.struct_size);
    assert_status(accel_device_set_recovery(null.device, old), ACCEL_OK);
    free(old);

    /* struct_size 0 is this layout; a size that holds no field is refused. */
    accel_pool_policy pool = accel_pool_policy_default();
    assert_int_equal(pool.outdated_percent, 25);
    assert_true(pool.automatic);
    pool.struct_size = 0;
    assert_status(accel_device_set_pool_policy(null.device, &pool), ACCEL_OK);
    pool.struct_size = 2;
    assert_status(accel_device_set_pool_policy(null.device, &pool),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "struct_size 2");
    support_null_close(&null);
}

/* The bytes from `from` to `to` of `buffer` all still hold CANARY. */
static void assert_untouched(const unsigned char *buffer, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        assert_int_equal(buffer[i], CANARY);
}

static void test_an_older_callers_stats_are_written_to_their_size(void **state)
{
    (void)state;
    struct support_null null;
    assert_int_equal(support_null_open(&null, NULL), 0);
    accel_ref ref;
    assert_status(accel_alloc(null.device, ACCEL_F32, 1000, &ref), ACCEL_OK);

    size_t size = offsetof(accel_memory_stats, pages);
    unsigned char buffer[sizeof(accel_memory_stats) + 16];
    memset(buffer, CANARY, sizeof buffer);
    accel_memory_stats *stats = (accel_memory_stats *)(void *)buffer;
    assert_status(accel_device_memory_stats_sized(null.device, stats, size),
                  ACCEL_OK);
    assert_int_equal(stats->struct_size, size);
    assert_true(stats->used_bytes >= 4000);
    assert_true(stats->reserved_bytes >= stats->used_bytes);
    assert_untouched(buffer, size, sizeof buffer);

    /* A full one says how much the library wrote. */
    accel_memory_stats full;
    assert_status(accel_device_memory_stats(null.device, &full), ACCEL_OK);
    assert_int_equal(full.struct_size, sizeof full);
    assert_int_equal(full.slices, 1);

    assert_status(accel_device_memory_stats_sized(null.device, stats, 3),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_free(null.device, ref), ACCEL_OK);
    support_null_close(&null);
}

static void test_an_older_callers_device_info_is_written_to_its_size(void **state)
{
    (void)state;
    struct support_null null;
    assert_int_equal(support_null_open(&null, NULL), 0);

    size_t size = offsetof(accel_device_info, generation);
    unsigned char buffer[sizeof(accel_device_info) + 16];
    memset(buffer, CANARY, sizeof buffer);
    accel_device_info *info = (accel_device_info *)(void *)buffer;
    assert_status(accel_device_info_get_sized(null.device, info, size), ACCEL_OK);
    assert_int_equal(info->struct_size, size);
    assert_string_equal(info->plugin, "null");
    assert_int_equal(info->index, 0);
    assert_untouched(buffer, size, sizeof buffer);

    accel_device_info full;
    assert_status(accel_device_info_get(null.device, &full), ACCEL_OK);
    assert_int_equal(full.struct_size, sizeof full);
    assert_true(full.props.name[0] != '\0');
    support_null_close(&null);
}

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_macros_match_the_project_and_the_library),
        cmocka_unit_test(test_host_options_past_struct_size_are_not_read),
        cmocka_unit_test(test_an_older_callers_policies_are_read_to_their_size),
        cmocka_unit_test(test_an_older_callers_stats_are_written_to_their_size),
        cmocka_unit_test(test_an_older_callers_device_info_is_written_to_its_size),
    };
    return cmocka_run_group_tests_name("version", tests, NULL, NULL);
}
