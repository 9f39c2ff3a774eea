/*
 * The checks a conformance test makes. They read as cmocka's, which the
 * rest of the tree's tests use, but stand on their own: accel-conformance
 * is installed, and needs no test framework where it runs. A failed check
 * or a skip leaves the test at once (longjmp to the runner), so a check
 * must be made on the thread that runs the test; other threads record what
 * they saw for the test's thread to check.
 */
#ifndef ACCEL_CONFORMANCE_CHECK_H
#define ACCEL_CONFORMANCE_CHECK_H

#include <stdint.h>
#include <string.h>

#include "conformance.h"

#if defined(__GNUC__)
#define CONF_NORETURN_PRINTF_(f, a)                                            \
    __attribute__((noreturn, format(printf, f, a)))
#else
#define CONF_NORETURN_PRINTF_(f, a)
#endif

/* Leave the test as failed at file:line, with the message. */
void conf__fail(const char *file, int line, const char *fmt, ...)
    CONF_NORETURN_PRINTF_(3, 4);
/* Leave the test as skipped, saying why. */
void conf__skip(const char *fmt, ...) CONF_NORETURN_PRINTF_(1, 2);
void conf__check_status(accel_status actual, accel_status expected,
                        const char *expr, const char *file, int line);
void conf__check_memory(const void *actual, const void *expected, size_t bytes,
                        const char *expr, const char *file, int line);

#define fail_msg(...) conf__fail(__FILE__, __LINE__, __VA_ARGS__)
#define skip_because(...) conf__skip(__VA_ARGS__)

/* A status by value: both names and accel_last_error() when they differ. */
#define assert_status(expr, expected)                                          \
    conf__check_status((expr), (expected), #expr, __FILE__, __LINE__)
#define assert_true(expr)                                                      \
    do {                                                                       \
        if (!(expr))                                                           \
            fail_msg("%s is false", #expr);                                    \
    } while (0)
#define assert_false(expr) assert_true(!(expr))
#define assert_non_null(expr) assert_true((expr) != NULL)
#define assert_null(expr) assert_true((expr) == NULL)
#define assert_int_equal(a, b)                                                 \
    do {                                                                       \
        uintmax_t conf_a_ = (uintmax_t)(a), conf_b_ = (uintmax_t)(b);          \
        if (conf_a_ != conf_b_)                                                \
            fail_msg("%s is %ju, not %ju (%s)", #a, conf_a_, conf_b_, #b);     \
    } while (0)
#define assert_memory_equal(a, b, bytes)                                       \
    conf__check_memory((a), (b), (bytes), #a " against " #b, __FILE__, __LINE__)

#endif /* ACCEL_CONFORMANCE_CHECK_H */
