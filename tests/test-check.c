/*
 * The null plugin's checked mode (ACCEL_NULL_CHECK, accel-check): each
 * buggy kernel of kernels/check.cu, run by check-corpus under accel-check,
 * must end with a report that names the kernel, the block, the thread and
 * the argument with its element type, length and the offset touched; the
 * correct kernels of kernels/blocks.cu must run clean; under --check race,
 * a missing barrier and two blocks writing one element are races, the
 * same fixed by an atomic and the correct kernels are not; under --check
 * init, a read of device memory no copy wrote is reported, and the
 * correct kernels read nothing unwritten. In process: what
 * the mode needs, and the devices it makes.
 *
 * The child processes need AddressSanitizer's runtime for the compiler
 * that built the kernels (gcc's libasan8): the tests skip, saying why,
 * where it cannot be had (under valgrind, in a ThreadSanitizer build, no
 * checked bundle built).
 */
#include "support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHECK_TSAN_BUILD 1
#endif
#if __has_feature(address_sanitizer)
#define CHECK_CLANG_ASAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CHECK_TSAN_BUILD 1
#endif

/* Why the child processes cannot run here, or NULL. */
static const char *why_no_children(void)
{
    if (getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL)
        return "AddressSanitizer does not run under valgrind";
#ifdef CHECK_TSAN_BUILD
    return "a ThreadSanitizer program can take neither ASan's runtime nor "
           "libaccel-race";
#endif
#if defined(CHECK_CLANG_ASAN_BUILD) && defined(__clang__)
    return "this program has clang's ASan runtime; the kernels were built by "
           "gcc";
#endif
    if (CHECK_CORPUS_BUNDLE[0] == '\0')
        return "no checked kernels: the compiler has no -fsanitize=address";
    return NULL;
}

static void skip_without_children(void)
{
    const char *why = why_no_children();

    if (why != NULL) {
        print_message("skipped: %s\n", why);
        skip();
    }
}

/*
 * Run `accel-check --check MODE check-corpus BUNDLE CASE`; its stderr into
 * `text` (of `size`), its wait status returned.
 */
static int run_case(const char *mode, const char *bundle, const char *name,
                    char *text, size_t size)
{
    const char *argv[] = {CHECK_CORPUS_PATH, bundle, name, NULL};

    return support_run_checked(ACCEL_CHECK_PATH, mode, argv, text, size);
}

/*
 * The case ended by ASan (not clean, not "the bug went unseen") with a
 * report holding both `who` and `what`.
 */
static void expect_report_of(const char *mode, const char *name,
                             const char *who, const char *what)
{
    static char text[1 << 16];
    int status;

    skip_without_children();
    status = run_case(mode, CHECK_CORPUS_BUNDLE, name, text, sizeof(text));
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 0 ||
        WEXITSTATUS(status) == 3 || strstr(text, who) == NULL ||
        strstr(text, what) == NULL)
        print_error("%s", text);
    assert_true(WIFEXITED(status) || WIFSIGNALED(status));
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    if (strcmp(mode, "memory") == 0)
        assert_contains(text, "ERROR: AddressSanitizer");
    assert_contains(text, who);
    assert_contains(text, what);
}

static void expect_report(const char *name, const char *who, const char *what)
{
    expect_report_of("memory", name, who, what);
}

/* The case runs to its end (exit 0) with no report of `mode`. */
static void expect_clean(const char *mode, const char *bundle, const char *name)
{
    static char text[1 << 16];
    int status;

    skip_without_children();
    status = run_case(mode, bundle, name, text, sizeof(text));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        print_error("%s", text);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_null(strstr(text, "accel-check:"));
    assert_null(strstr(text, "AddressSanitizer"));
}

static void test_off_by_one_read_names_kernel_block_thread_and_ref(void **state)
{
    (void)state;
    expect_report(
        "check_off_by_one_read",
        "accel-check: heap-buffer-overflow: kernel 'check_off_by_one_read' "
        "block "
        "(1,0,0) thread (31,0,0): READ of 4 bytes at ",
        " 0 bytes past the end of argument 1 'const float * x' (float[64], 256 "
        "bytes): byte offset 256, element 64 of 64");
}

static void test_off_by_one_write_names_kernel_block_thread_and_ref(void **state)
{
    (void)state;
    expect_report(
        "check_off_by_one_write",
        "kernel 'check_off_by_one_write' block (2,0,0) thread (0,0,0): WRITE "
        "of 4 "
        "bytes at ",
        "past the end of argument 2 'float * y' (float[64], 256 bytes): byte "
        "offset 256, element 64 of 64");
}

static void test_negative_index_names_kernel_block_thread_and_ref(void **state)
{
    (void)state;
    expect_report(
        "check_negative_index",
        "kernel 'check_negative_index' block (0,0,0) thread (0,0,0): READ of 4 "
        "bytes at ",
        "4 bytes before the start of argument 1 'const float * x' (float[64], "
        "256 "
        "bytes): byte offset -4, element -1 of 64");
}

static void test_shared_memory_overflow_names_the_thread_past_it(void **state)
{
    (void)state;
    expect_report("check_shared_overflow",
                  "kernel 'check_shared_overflow' block (0,0,0) thread "
                  "(31,0,0): WRITE of 4 "
                  "bytes at ",
                  "0 bytes past the end of the block's dynamic shared memory "
                  "(128 bytes): "
                  "byte offset 128");
}

static void test_static_shared_write_past_the_end_names_the_array(void **state)
{
    (void)state;
    expect_report("check_static_shared_past_end",
                  "accel-check: shared-array-overflow: kernel "
                  "'check_static_shared_past_end' block (0,0,0) thread "
                  "(31,0,0): WRITE of 4 bytes at ",
                  " 0 bytes past the end of static shared array 'float s[32]' "
                  "(float[32], 128 bytes): byte offset 128, element 32 of 32");
}

static void test_static_shared_read_before_the_start_names_the_array(void **state)
{
    (void)state;
    expect_report("check_static_shared_before_start",
                  "accel-check: shared-array-overflow: kernel "
                  "'check_static_shared_before_start' block (0,0,0) thread "
                  "(0,0,0): READ of 4 bytes at ",
                  " 4 bytes before the start of static shared array 'float "
                  "s[32]' (float[32], 128 bytes): byte offset -4, element -1 "
                  "of 32");
}

/* The overflow of the first of two arrays is the first's, not a silent
 * write into the second. */
static void test_static_shared_overflow_does_not_land_in_the_next_array(void **state)
{
    (void)state;
    expect_report("check_static_shared_into_next",
                  "accel-check: shared-array-overflow: kernel "
                  "'check_static_shared_into_next' block (0,0,0) thread "
                  "(31,0,0): WRITE of 4 bytes at ",
                  " 0 bytes past the end of static shared array 'float a[32]' "
                  "(float[32], 128 bytes): byte offset 128, element 32 of 32");
}

static void test_use_after_free_through_native_address_is_reported(void **state)
{
    (void)state;
    expect_report("use_after_free",
                  "accel-check: heap-use-after-free: kernel 'check_read_raw' "
                  "block (0,0,0) "
                  "thread (0,0,0): READ of 4 bytes at ",
                  "inside FREED memory reached through argument 1 'uint64_t "
                  "address' (256 "
                  "bytes): byte offset 0");
}

static void test_correct_block_kernels_report_nothing(void **state)
{
    (void)state;
    expect_clean("memory", CHECK_BLOCKS_BUNDLE, "correct");
}

/* ---- races: accel-check --check race ---- */

static void test_missing_barrier_is_a_race_within_the_block(void **state)
{
    (void)state;
    expect_report_of(
        "race", "check_missing_barrier",
        "accel-check: data race: kernel 'check_missing_barrier' block (0,0,0) "
        "thread (1,0,0): WRITE of 4 bytes at ",
        "inside the block's dynamic shared memory (128 bytes): byte offset 4: "
        "races with a READ by block (0,0,0) thread (0,0,0), a thread of the "
        "same "
        "block, with no barrier between them");
}

static void test_two_blocks_writing_one_element_is_a_race(void **state)
{
    (void)state;
    expect_report_of(
        "race", "check_blocks_write_one",
        "accel-check: data race: kernel 'check_blocks_write_one' block (",
        ") thread (0,0,0): WRITE of 4 bytes at ");
    expect_report_of(
        "race", "check_blocks_write_one",
        "inside argument 0 'float * out' (float[64], 256 bytes): byte "
        "offset 0, element 0 of 64: races with a WRITE by block (",
        "another block of the same launch (blocks are not ordered: use an "
        "atomic)");
}

static void test_race_fixed_by_an_atomic_reports_nothing(void **state)
{
    (void)state;
    expect_clean("race", CHECK_CORPUS_BUNDLE, "atomic");
}

/* ---- reads of memory never written: accel-check --check init ---- */

static void test_read_of_never_written_memory_is_reported(void **state)
{
    (void)state;
    expect_report_of(
        "init", "uninit",
        "accel-check: uninitialised read: kernel 'check_copy' block (1,0,0) "
        "thread (0,0,0): READ of 4 bytes at ",
        "inside argument 1 'const float * x' (float[64], 256 bytes): byte "
        "offset "
        "128, element 32 of 64: never written by a copy or a kernel");
}

static void test_correct_block_kernels_read_nothing_unwritten(void **state)
{
    (void)state;
    expect_clean("init", CHECK_BLOCKS_BUNDLE, "correct");
}

static void test_correct_block_kernels_report_no_race(void **state)
{
    (void)state;
    expect_clean("race", CHECK_BLOCKS_BUNDLE, "correct");
}

/* ---- in process: what the mode needs ---- */

static bool asan_runtime_here(void)
{
    return dlsym(RTLD_DEFAULT, "__asan_set_error_report_callback") != NULL;
}

static void test_bad_check_value_leaves_no_device(void **state)
{
    const char *env[] = {"ACCEL_NULL_CHECK=bogus", NULL};
    struct support_null null;
    char reason[512] = "";

    (void)state;
    assert_int_not_equal(support_null_open(&null, env), 0);
    snprintf(reason, sizeof(reason), "%s", accel_last_error());
    support_null_close(&null);
    assert_contains(
        reason,
        "ACCEL_NULL_CHECK='bogus' is not a check: memory, race, init or off");
}

static void test_race_and_init_checks_need_their_runtime(void **state)
{
    static const char *const modes[] = {"race", "init"};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        char variable[64], want[96], reason[512] = "";
        const char *env[] = {variable, NULL};
        struct support_null null;

        snprintf(variable, sizeof(variable), "ACCEL_NULL_CHECK=%s", modes[i]);
        snprintf(want, sizeof(want),
                 "ACCEL_NULL_CHECK=%s needs libaccel-race in the process",
                 modes[i]);
        assert_int_not_equal(support_null_open(&null, env), 0);
        snprintf(reason, sizeof(reason), "%s", accel_last_error());
        support_null_close(&null);
        assert_contains(reason, want);
    }
}

/*
 * Without ASan's runtime the mode leaves no device, saying what to do; with
 * it (an ASan build of the tests), the device picks "-asan" images and
 * gives every allocation its own block of exactly its size.
 */
static void test_memory_check_needs_the_runtime_and_owns_allocations(void **state)
{
    const char *env[] = {"ACCEL_NULL_CHECK=memory", NULL};
    struct support_null null;
    accel_device_info info;
    accel_memory_stats stats;
    accel_ref a, b;
    int rc;

    (void)state;
    rc = support_null_open(&null, env);
    if (!asan_runtime_here()) {
        char reason[512];

        snprintf(reason, sizeof(reason), "%s", accel_last_error());
        support_null_close(&null);
        assert_int_not_equal(rc, 0);
        assert_contains(reason,
                        "needs AddressSanitizer's runtime in the process");
        assert_contains(reason, "accel-check");
        return;
    }
    assert_int_equal(rc, 0);
    assert_status(accel_device_info_get(null.device, &info), ACCEL_OK);
    assert_non_null(strstr(info.props.arch, "-asan"));
    assert_status(accel_alloc(null.device, ACCEL_F32, 3, &a), ACCEL_OK);
    assert_status(accel_alloc(null.device, ACCEL_F32, 5, &b), ACCEL_OK);
    stats = support_memory_stats(null.device);
    assert_int_equal(stats.pages, 2);
    assert_int_equal(stats.reserved_bytes, 32);
    assert_status(accel_free(null.device, a), ACCEL_OK);
    assert_status(accel_free(null.device, b), ACCEL_OK);
    assert_status(accel_device_sync(null.device), ACCEL_OK);
    stats = support_memory_stats(null.device);
    assert_int_equal(stats.reserved_bytes, 0);
    support_null_close(&null);
}

/*
 * The SIGBUS once seen in a long race-mode accel-bench: the build staged a
 * rebuilt plugin over the one the running program had mapped (`cp` keeps
 * the inode and truncates it), and the program's next touch of a page past
 * the new end was a bus error. Staging (tools/stage-copy.sh) must leave a
 * mapped plugin as it was: a file of 64 KiB mapped, staged over by a
 * shorter one, must still read back whole in a child (a SIGBUS there
 * fails the test), while the path names the new file.
 */
static void test_staging_a_plugin_leaves_a_running_program_its_mapping(void **state)
{
    char dir[] = "/tmp/accel-test-stage-XXXXXX", mapped[64], fresh[64];
    enum { OLD_BYTES = 65536 };
    unsigned char *old = malloc(OLD_BYTES), *map;
    int fd, status = 0;
    FILE *f;
    pid_t child;

    (void)state;
    assert_non_null(old);
    assert_non_null(mkdtemp(dir));
    snprintf(mapped, sizeof(mapped), "%s/plugin.so", dir);
    snprintf(fresh, sizeof(fresh), "%s/new.so", dir);
    memset(old, 0xa5, OLD_BYTES);
    assert_non_null(f = fopen(mapped, "wb"));
    assert_int_equal(fwrite(old, 1, OLD_BYTES, f), OLD_BYTES);
    assert_int_equal(fclose(f), 0);
    assert_non_null(f = fopen(fresh, "wb"));
    assert_int_equal(fputs("short", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_true((fd = open(mapped, O_RDONLY)) >= 0);
    map = mmap(NULL, OLD_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    close(fd);

    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        execl("/bin/sh", "sh", STAGE_COPY_PATH, fresh, mapped, (char *)NULL);
        _exit(127);
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    child = fork();
    assert_true(child >= 0);
    if (child == 0) /* a bus error here, when the file was rewritten */
        _exit(memcmp(map, old, OLD_BYTES) == 0 ? 0 : 1);
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status))
        fail_msg("reading the mapped plugin after staging: signal %d",
                 WTERMSIG(status));
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    assert_non_null(f = fopen(mapped, "rb"));
    assert_int_equal(fread(old, 1, OLD_BYTES, f), 5);
    assert_int_equal(fclose(f), 0);
    assert_memory_equal(old, "short", 5);
    munmap(map, OLD_BYTES);
    unlink(mapped);
    unlink(fresh);
    rmdir(dir);
    free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_by_one_read_names_kernel_block_thread_and_ref),
        cmocka_unit_test(test_off_by_one_write_names_kernel_block_thread_and_ref),
        cmocka_unit_test(test_negative_index_names_kernel_block_thread_and_ref),
        cmocka_unit_test(test_shared_memory_overflow_names_the_thread_past_it),
        cmocka_unit_test(test_static_shared_write_past_the_end_names_the_array),
        cmocka_unit_test(test_static_shared_read_before_the_start_names_the_array),
        cmocka_unit_test(
            test_static_shared_overflow_does_not_land_in_the_next_array),
        cmocka_unit_test(test_use_after_free_through_native_address_is_reported),
        cmocka_unit_test(test_correct_block_kernels_report_nothing),
        cmocka_unit_test(test_missing_barrier_is_a_race_within_the_block),
        cmocka_unit_test(test_two_blocks_writing_one_element_is_a_race),
        cmocka_unit_test(test_race_fixed_by_an_atomic_reports_nothing),
        cmocka_unit_test(test_correct_block_kernels_report_no_race),
        cmocka_unit_test(test_read_of_never_written_memory_is_reported),
        cmocka_unit_test(test_correct_block_kernels_read_nothing_unwritten),
        cmocka_unit_test(test_race_and_init_checks_need_their_runtime),
        cmocka_unit_test(test_bad_check_value_leaves_no_device),
        cmocka_unit_test(test_memory_check_needs_the_runtime_and_owns_allocations),
        cmocka_unit_test(
            test_staging_a_plugin_leaves_a_running_program_its_mapping),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
