/*
 * Status codes: every code of ACCEL_STATUS_LIST has its own name and its
 * documented sentence, and unknown codes are answered, never NULL.
 */
#include "support.h"

#include <string.h>

struct status_entry {
    accel_status status;
    const char *name;
    const char *text;
};

#define STATUS_ENTRY_(name, value, text) {name, #name, text},
static const struct status_entry all_statuses[] = {
    ACCEL_STATUS_LIST(STATUS_ENTRY_)};
#undef STATUS_ENTRY_

#define STATUS_COUNT (sizeof all_statuses / sizeof all_statuses[0])

static void test_every_code_has_its_own_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < STATUS_COUNT; i++) {
        const char *name = accel_status_name(all_statuses[i].status);
        assert_non_null(name);
        assert_string_equal(name, all_statuses[i].name);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(name,
                                    accel_status_name(all_statuses[j].status));
    }
}

static void test_every_code_has_its_documented_sentence(void **state)
{
    (void)state;
    for (size_t i = 0; i < STATUS_COUNT; i++) {
        const char *text = accel_status_string(all_statuses[i].status);
        assert_non_null(text);
        assert_true(text[0] != '\0');
        assert_string_equal(text, all_statuses[i].text);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(text,
                                    accel_status_string(all_statuses[j].status));
    }
}

static void test_codes_keep_their_abi_values(void **state)
{
    /* The values cross the plugin boundary: they must never move. */
    (void)state;
    assert_int_equal(ACCEL_OK, 0);
    assert_int_equal(ACCEL_NOT_READY, 1);
    assert_int_equal(ACCEL_ERR_NO_DEVICE, -1);
    assert_int_equal(ACCEL_ERR_STALE_REF, -6);
    assert_int_equal(ACCEL_ERR_DRIVER, -17);
    assert_int_equal(ACCEL_ERR_BUSY, -19);
    for (size_t i = 0; i < STATUS_COUNT; i++)
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(all_statuses[i].status, all_statuses[j].status);
}

static void test_unknown_code_is_answered(void **state)
{
    (void)state;
    const int unknown[] = {2, 100, -21, -1000, 0x7fffffff, -0x7fffffff - 1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        accel_status status = (accel_status)unknown[i];
        const char *name = accel_status_name(status);
        const char *text = accel_status_string(status);
        assert_non_null(name);
        assert_string_equal(name, "ACCEL_STATUS_UNKNOWN");
        assert_non_null(text);
        assert_true(text[0] != '\0');
    }
}

static void test_last_error_is_never_null(void **state)
{
    (void)state;
    assert_non_null(accel_last_error());
}

int main(void)
{
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_its_own_name),
        cmocka_unit_test(test_every_code_has_its_documented_sentence),
        cmocka_unit_test(test_codes_keep_their_abi_values),
        cmocka_unit_test(test_unknown_code_is_answered),
        cmocka_unit_test(test_last_error_is_never_null),
    };
    return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
