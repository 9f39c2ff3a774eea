/*
 * fork(): a host, its devices and their streams belong to the process that
 * made them. A child that uses the parent's gets ACCEL_ERR_NOT_SUPPORTED at
 * once (their threads exist only in the parent: a sync would wait for ever);
 * a host the child makes itself works.
 *
 * Each child runs under alarm(): a regression that hangs kills the child,
 * and the parent's test fails instead of hanging. A child reports the
 * first check that failed as its exit status.
 */
#include "support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORDS 4096u
#define CHILD_SECONDS 30 /* generous: valgrind and the sanitizers are slow */

#define DETAIL "used after fork: create a new host in the child"

/*
 * ThreadSanitizer refuses new threads in the child of a threaded process
 * unless told otherwise; the child here makes only its own host's threads.
 * (Read by TSan builds alone; TSAN_OPTIONS still adds to it.)
 */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "die_after_fork=0";
}

struct parent {
    struct support_null null;
    accel_module *module;
    accel_kernel *add;
    accel_event *event;
    accel_ref ref;
};

static accel_status launch_add(accel_stream *stream, accel_kernel *add,
                               accel_ref ref, uint32_t value)
{
    uint32_t n = (uint32_t)ref.count;
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(ref),
                        ACCEL_ARG_VALUE(value)};
    return accel_launch(stream, add, (accel_dim3){(n + 255) / 256, 1, 1},
                        (accel_dim3){256, 1, 1}, 0, args, 3);
}

/* In the child: true when `status` is NOT_SUPPORTED with the fork detail. */
static bool refused(accel_status status)
{
    return status == ACCEL_ERR_NOT_SUPPORTED &&
           strstr(accel_last_error(), DETAIL) != NULL;
}

/* Run `child` in a child process; its exit status, or 128 + its signal. */
static int run_child(int (*child)(struct parent *), struct parent *p)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        /*
         * The parent's objects are the parent's to free, and the child
         * cannot: what the parent's worker threads held is unreachable
         * here. So the child leaves by exec, not exit, which a leak checker
         * (valgrind) does not treat as the end of a process to check.
         */
        char code[4];
        snprintf(code, sizeof code, "%d", child(p) & 0xff);
        execl("/bin/sh", "sh", "-c", "exit \"$0\"", code, (char *)NULL);
        _exit(127);
    }
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return WEXITSTATUS(wstatus);
}

/* Every use of the parent's objects is refused; closing them is a no-op. */
static int use_parents_objects(struct parent *p)
{
    accel_stream *stream = p->null.stream;
    accel_device *device = p->null.device;
    uint32_t words[WORDS] = {0};
    accel_ref ref = {0};
    accel_stream *other = NULL;
    /* Before the check, the copy was queued for a worker the child does
     * not have, and the sync waited for it for ever. */
    if (!refused(accel_copy_in(stream, p->ref, words, WORDS)))
        return 1;
    if (!refused(accel_stream_sync(stream)))
        return 2;
    if (!refused(launch_add(stream, p->add, p->ref, 1)))
        return 3;
    if (!refused(accel_alloc(device, ACCEL_U32, WORDS, &ref)))
        return 4;
    if (!refused(accel_device_status(device)) ||
        !refused(accel_device_sync(device)))
        return 5;
    if (!refused(accel_event_record(p->event, stream)) ||
        !refused(accel_event_sync(p->event)) ||
        !refused(accel_event_query(p->event)))
        return 6;
    if (!refused(accel_stream_create(device, &other)) || other != NULL)
        return 7;
    if (!refused(accel_free(device, p->ref)) ||
        !refused(accel_device_reset(device)))
        return 8;
    if (!refused(accel_stream_wait(stream, ACCEL_WAIT_SPIN, 1000000)))
        return 9;
    /* The parent's objects are left alone, without waiting for anything. */
    accel_stream_destroy(stream);
    accel_module_unload(p->module);
    accel_device_close(device);
    accel_host_destroy(p->null.host);
    return 0;
}

/* A host made in the child: a copy and a kernel, verified. */
static int use_own_host(struct parent *p)
{
    (void)p;
    struct support_null own;
    accel_module *module = NULL;
    accel_kernel *add = NULL;
    accel_ref ref = {0};
    static uint32_t in[WORDS], out[WORDS];
    if (support_null_open(&own, NULL) != 0)
        return 1;
    if (accel_module_load_file(own.device, TESTING_CPU_IMAGE, &module) !=
            ACCEL_OK ||
        accel_kernel_get(module, "add_u32", &add) != ACCEL_OK)
        return 2;
    if (accel_alloc(own.device, ACCEL_U32, WORDS, &ref) != ACCEL_OK)
        return 3;
    for (uint32_t i = 0; i < WORDS; i++)
        in[i] = i;
    if (accel_copy_in(own.stream, ref, in, WORDS) != ACCEL_OK ||
        launch_add(own.stream, add, ref, 5) != ACCEL_OK ||
        accel_copy_out(own.stream, out, ref, WORDS) != ACCEL_OK ||
        accel_stream_sync(own.stream) != ACCEL_OK)
        return 4;
    for (uint32_t i = 0; i < WORDS; i++) {
        if (out[i] != i + 5)
            return 5;
    }
    if (accel_free(own.device, ref) != ACCEL_OK)
        return 6;
    accel_module_unload(module);
    support_null_close(&own);
    return 0;
}

static int setup(void **state)
{
    struct parent *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -1;
    *state = p;
    if (support_null_open(&p->null, NULL) != 0)
        return -1;
    if (accel_module_load_file(p->null.device, TESTING_CPU_IMAGE, &p->module) !=
            ACCEL_OK ||
        accel_kernel_get(p->module, "add_u32", &p->add) != ACCEL_OK ||
        accel_event_create(p->null.device, &p->event) != ACCEL_OK ||
        accel_alloc(p->null.device, ACCEL_U32, WORDS, &p->ref) != ACCEL_OK) {
        print_error("setup: %s\n", accel_last_error());
        return -1;
    }
    /* The stream's worker has run: a child would wait for it in vain. */
    if (launch_add(p->null.stream, p->add, p->ref, 1) != ACCEL_OK ||
        accel_stream_sync(p->null.stream) != ACCEL_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    struct parent *p = *state;
    accel_free(p->null.device, p->ref);
    accel_event_destroy(p->event);
    accel_module_unload(p->module);
    support_null_close(&p->null);
    free(p);
    return 0;
}

static void test_a_child_using_the_parents_stream_is_refused_at_once(void **state)
{
    struct parent *p = *state;
    assert_int_equal(run_child(use_parents_objects, p), 0);
    /* The parent's objects still work. */
    assert_status(launch_add(p->null.stream, p->add, p->ref, 1), ACCEL_OK);
    assert_status(accel_stream_sync(p->null.stream), ACCEL_OK);
}

static void test_a_child_with_its_own_host_runs_a_copy_and_a_kernel(void **state)
{
    struct parent *p = *state;
    assert_int_equal(run_child(use_own_host, p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_a_child_using_the_parents_stream_is_refused_at_once, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_child_with_its_own_host_runs_a_copy_and_a_kernel, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
