/*
 * Helpers shared by the accel tests: scratch plugin directories, status
 * assertions that print code names, and plugin-list lookups.
 *
 * Include after <cmocka.h>'s prerequisites; this header includes cmocka.
 */
#ifndef ACCEL_TESTS_SUPPORT_H
#define ACCEL_TESTS_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <accel/accel.h>

/*
 * Remove every variable that could steer a host away from what a test
 * sets up (ACCEL_BACKEND, ACCEL_PLUGIN_PATH, ACCEL_ALLOW_INSECURE_PLUGINS,
 * ACCEL_LOG, ACCEL_STAGING_CHUNK, the null plugin's knobs), so that a
 * developer's shell cannot change a result.
 */
void support_clean_environment(void);

/* A host with the null plugin alone, and its device 0 with a stream. */
struct support_null {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
};

/*
 * Clean the environment, set each "NAME=VALUE" of `env` (NULL-terminated,
 * or NULL for none) while the host is made, unset them again, and open
 * null:0 with a stream. Returns 0, or -1 with the reason printed; either
 * way support_null_close undoes what was done.
 */
int support_null_open(struct support_null *null, const char *const *env);
void support_null_close(struct support_null *null);

/*
 * Run accel-check: `check` with `--check MODE` and the program and
 * arguments of `argv` (NULL-terminated), in the test's clean environment
 * with ASan not symbolizing (a report's own line needs no symbols, and
 * symbolizing takes seconds). Its stdout and stderr into `text` (of
 * `size`, NUL-terminated); its wait status returned.
 */
int support_run_checked(const char *check, const char *mode,
                        const char *const *argv, char *text, size_t size);

/* Make a fresh directory under /tmp; the caller removes it. */
char *support_make_temp_dir(void);
/* Remove a directory made by support_make_temp_dir and all it holds. */
void support_remove_dir(char *dir);

/*
 * Copy the built fixture `fixture-VARIANT.so` into `dir` as
 * `accel-plugin-NAME.so`. A copy, not a link: each copy is its own inode, so
 * the dynamic loader treats it as its own object.
 */
void support_install_fixture(const char *dir, const char *variant,
                             const char *name);
/* Copy any file to dir/file_name. */
void support_copy_file(const char *from, const char *dir, const char *file_name);

/*
 * The candidate named `name`, the `nth` (0-based) of that name in search
 * order; NULL when there is none.
 */
const accel_plugin_info *support_find_plugin(const accel_host *host,
                                             const char *name, size_t nth);
/* How many candidates the host lists. */
size_t support_plugin_count(const accel_host *host);
/*
 * The candidate named `name`, which must be listed in `state`: the test
 * fails, saying what the plugin is and why, when it is not.
 */
const accel_plugin_info *support_expect_plugin(const accel_host *host,
                                               const char *name,
                                               accel_plugin_state state);

/* dir/file_name, newly allocated; the caller frees it. */
char *support_path_in(const char *dir, const char *file_name);
/*
 * The whole of the file at `path`, newly allocated (one byte more than
 * its size, so an empty file has a buffer too); the caller frees it.
 */
void *support_read_file(const char *path, size_t *out_size);

/* The device's memory statistics; the call must succeed. */
accel_memory_stats support_memory_stats(accel_device *device);

void support_assert_status(accel_status actual, accel_status expected,
                           const char *expr, const char *file, int line);
void support_assert_contains(const char *haystack, const char *needle,
                             const char *file, int line);

/* Assert a status by value, printing both names when they differ. */
#define assert_status(expr, expected)                                          \
    support_assert_status((expr), (expected), #expr, __FILE__, __LINE__)
/* Assert that a string (not NULL) contains a fragment. */
#define assert_contains(haystack, needle)                                      \
    support_assert_contains((haystack), (needle), __FILE__, __LINE__)

#endif /* ACCEL_TESTS_SUPPORT_H */
