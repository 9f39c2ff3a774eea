/*
 * The collectives API checked from outside: written from README.md
 * ("Collectives", the environment table) and include/accel/accel.h alone,
 * as a newcomer and an attacker would use it. Ranks are threads of this
 * process over null devices, with the `host` provider in loopback; the
 * rendezvous cases present rank 0 of 2 through ACCEL_RANK / ACCEL_SIZE.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

static bool under_valgrind;

struct job {
    accel_host *host;
    accel_device *dev[2];
    accel_stream *stream[2];
    accel_comm *comm[2];
};

static void env_base(void)
{
    support_clean_environment();
    setenv("ACCEL_PLUGIN_PATH", NULL_PLUGIN_PATH ":" COMM_HOST_PLUGIN_PATH, 1);
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    setenv("ACCEL_COMM", "host", 1);
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
    unsetenv("ACCEL_COMM_RENDEZVOUS");
    unsetenv("ACCEL_RANK");
    unsetenv("ACCEL_SIZE");
    unsetenv("ACCEL_LOCAL_RANK");
    unsetenv("ACCEL_LOCAL_SIZE");
}

static void job_devices(struct job *j)
{
    memset(j, 0, sizeof *j);
    assert_status(accel_host_create(NULL, &j->host), ACCEL_OK);
    for (uint32_t r = 0; r < 2; r++) {
        assert_status(accel_device_open(j->host, "null", r, &j->dev[r]),
                      ACCEL_OK);
        assert_status(accel_stream_create(j->dev[r], &j->stream[r]), ACCEL_OK);
    }
}

static void job_open(struct job *j)
{
    job_devices(j);
    assert_status(accel_comm_create_local(j->dev, 2, j->comm), ACCEL_OK);
}

static void job_close(struct job *j)
{
    for (int r = 0; r < 2; r++)
        accel_comm_destroy(j->comm[r]);
    for (int r = 0; r < 2; r++) {
        accel_stream_destroy(j->stream[r]);
        accel_device_close(j->dev[r]);
    }
    accel_host_destroy(j->host);
}

static void sleep_ms(unsigned ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* ---- creation: every documented error, outputs cleared ---- */

static void test_create_refuses_null_and_counts_out_of_range(void **state)
{
    (void)state;
    env_base();
    struct job j;
    job_devices(&j);
    accel_comm *c = (accel_comm *)&j; /* garbage the call must clear */
    assert_status(accel_comm_create(NULL, &c), ACCEL_ERR_INVALID_ARGUMENT);
    assert_null(c);
    assert_status(accel_comm_create(j.dev[0], NULL), ACCEL_ERR_INVALID_ARGUMENT);
    accel_comm *out[3];
    assert_status(accel_comm_create_local(NULL, 2, out),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_comm_create_local(j.dev, 2, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
    const int bad_counts[] = {0, -1, INT_MIN, 4097, INT_MAX};
    for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++) {
        assert_status(accel_comm_create_local(j.dev, bad_counts[i], out),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_contains(accel_last_error(), "1 to 4096");
    }
    job_close(&j);
}

static void test_create_local_clears_every_output_on_failure(void **state)
{
    (void)state;
    env_base();
    struct job j;
    job_devices(&j);
    /* README: "Each call clears its outputs first". A NULL in the middle
     * of the array must not leave the later outputs as they were. */
    accel_device *devices[3] = {j.dev[0], NULL, j.dev[1]};
    accel_comm *out[3];
    for (int i = 0; i < 3; i++)
        out[i] = (accel_comm *)&j;
    assert_status(accel_comm_create_local(devices, 3, out),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(accel_last_error(), "devices[1]");
    for (int i = 0; i < 3; i++)
        assert_null(out[i]);
    job_close(&j);
}

static void test_null_communicator_is_refused(void **state)
{
    (void)state;
    assert_status(accel_comm_abort(NULL), ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_comm_status(NULL), ACCEL_ERR_INVALID_ARGUMENT);
    accel_comm *out = (accel_comm *)&out;
    assert_status(accel_comm_split(NULL, 0, 0, &out), ACCEL_ERR_INVALID_ARGUMENT);
    assert_null(out);
    accel_comm_destroy(NULL); /* "NULL allowed" */
    assert_int_equal(accel_comm_rank(NULL), -1);
    assert_int_equal(accel_comm_size(NULL), 0);
    assert_null(accel_comm_device(NULL));
    assert_string_equal(accel_comm_provider_name(NULL), "");
    assert_status(accel_comm_barrier(NULL, NULL), ACCEL_ERR_INVALID_ARGUMENT);
}

/* ---- counts at each boundary ---- */

static void test_counts_at_each_boundary(void **state)
{
    (void)state;
    env_base();
    struct job j;
    job_open(&j);
    accel_ref x[2];
    for (int r = 0; r < 2; r++)
        assert_status(accel_alloc(j.dev[r], ACCEL_I32, 16, &x[r]), ACCEL_OK);
    /* 0 enqueues nothing (rank 1 need not join); 1 and the whole ref run. */
    assert_status(accel_allreduce(j.comm[0], j.stream[0], x[0], x[0], 0,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(accel_stream_sync(j.stream[0]), ACCEL_OK);
    /* ...but is checked first, as every call is. */
    accel_ref zero;
    memset(&zero, 0, sizeof zero);
    assert_status(accel_allreduce(j.comm[0], j.stream[0], zero, zero, 0,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_ERR_FREED_REF);
    assert_status(accel_allreduce(j.comm[0], j.stream[0], x[1], x[1], 0,
                                  ACCEL_REDUCE_SUM),
                  ACCEL_ERR_DEVICE_MISMATCH);
    assert_status(accel_broadcast(j.comm[0], j.stream[0], x[0], x[0], 0, 2),
                  ACCEL_ERR_INVALID_ARGUMENT);
    const uint64_t good[] = {1, 16};
    for (size_t i = 0; i < 2; i++) {
        int32_t v[16];
        for (int r = 0; r < 2; r++) {
            for (int k = 0; k < 16; k++)
                v[k] = r + 1;
            assert_status(accel_copy_to_device(j.stream[r], x[r], 0, v, sizeof v),
                          ACCEL_OK);
            assert_status(accel_allreduce(j.comm[r], j.stream[r], x[r], x[r],
                                          good[i], ACCEL_REDUCE_SUM),
                          ACCEL_OK);
        }
        for (int r = 0; r < 2; r++) {
            assert_status(accel_copy_to_host(j.stream[r], v, x[r], 0, sizeof v),
                          ACCEL_OK);
            assert_status(accel_stream_sync(j.stream[r]), ACCEL_OK);
            assert_int_equal(v[0], 3);
            assert_int_equal(v[good[i] - 1], 3);
            if (good[i] < 16)
                assert_int_equal(v[good[i]], r + 1);
        }
    }
    /* Past the ref, and counts that overflow size * count. */
    const uint64_t bad[] = {17, UINT64_MAX, SIZE_MAX, UINT64_MAX / 2 + 1,
                            (uint64_t)1 << 63};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        accel_comm *c = j.comm[0];
        accel_stream *s = j.stream[0];
        assert_status(accel_allreduce(c, s, x[0], x[0], bad[i], ACCEL_REDUCE_SUM),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_broadcast(c, s, x[0], x[0], bad[i], 0),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_reduce(c, s, x[0], x[0], bad[i], ACCEL_REDUCE_MAX, 0),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_allgather(c, s, x[0], x[0], bad[i]),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(
            accel_reduce_scatter(c, s, x[0], x[0], bad[i], ACCEL_REDUCE_SUM),
            ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_send(c, s, x[0], bad[i], 1),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_status(accel_recv(c, s, x[0], bad[i], 1),
                      ACCEL_ERR_INVALID_ARGUMENT);
    }
    /* The gathered side of 2 ranks: 8 fits 16, 9 does not. */
    assert_status(accel_allgather(j.comm[0], j.stream[0], x[0], x[0], 9),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* Reductions and roots out of range, either side. */
    assert_status(accel_allreduce(j.comm[0], j.stream[0], x[0], x[0], 1,
                                  (accel_reduce_op)-1),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_broadcast(j.comm[0], j.stream[0], x[0], x[0], 1, INT_MIN),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_broadcast(j.comm[0], j.stream[0], x[0], x[0], 1, INT_MAX),
                  ACCEL_ERR_INVALID_ARGUMENT);
    for (int r = 0; r < 2; r++)
        assert_status(accel_free(j.dev[r], x[r]), ACCEL_OK);
    job_close(&j);
}

/* ---- a communicator after abort ---- */

static void test_every_call_after_abort_fails_the_same_way(void **state)
{
    (void)state;
    env_base();
    /* Rank 1 learns of rank 0's abort from the provider, not by timing
     * out; a generous limit keeps a failure from hanging the suite. */
    setenv("ACCEL_COMM_TIMEOUT_MS", "60000", 1);
    struct job j;
    job_open(&j);
    accel_ref x;
    assert_status(accel_alloc(j.dev[0], ACCEL_F32, 4, &x), ACCEL_OK);
    accel_comm *c = j.comm[0];
    accel_stream *s = j.stream[0];
    assert_status(accel_comm_abort(c), ACCEL_OK);
    assert_status(accel_comm_abort(c), ACCEL_OK); /* idempotent */
    assert_status(accel_comm_status(c), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "accel_comm_abort");
    assert_status(accel_allreduce(c, s, x, x, 4, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_allreduce(c, s, x, x, 0, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_broadcast(c, s, x, x, 4, 0), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_reduce(c, s, x, x, 4, ACCEL_REDUCE_SUM, 0),
                  ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_allgather(c, s, x, x, 2), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_reduce_scatter(c, s, x, x, 2, ACCEL_REDUCE_SUM),
                  ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_send(c, s, x, 4, 1), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_recv(c, s, x, 4, 1), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_comm_barrier(c, s), ACCEL_ERR_COMM_ABORTED);
    accel_comm *split = (accel_comm *)&split;
    assert_status(accel_comm_split(c, 0, 0, &split), ACCEL_ERR_COMM_ABORTED);
    assert_null(split);
    assert_status(accel_stream_sync(s), ACCEL_OK); /* nothing was enqueued */
    /* "The host provider tells the other ranks too." */
    assert_status(accel_comm_barrier(j.comm[1], j.stream[1]), ACCEL_OK);
    assert_status(accel_stream_sync(j.stream[1]), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_comm_status(j.comm[1]), ACCEL_ERR_COMM_ABORTED);
    assert_status(accel_free(j.dev[0], x), ACCEL_OK);
    job_close(&j);
}

/* ---- ACCEL_COMM_TIMEOUT_MS ---- */

struct late {
    accel_comm *comm;
    accel_stream *stream;
    unsigned ms;
    accel_status status;
};

static void *join_late(void *arg)
{
    struct late *l = arg;
    sleep_ms(l->ms);
    l->status = accel_comm_barrier(l->comm, l->stream);
    if (l->status == ACCEL_OK)
        l->status = accel_stream_sync(l->stream);
    return NULL;
}

/* A barrier that rank 1 joins `late_ms` after rank 0: its status on rank 0. */
static accel_status barrier_with_a_late_rank(const char *timeout, unsigned late_ms)
{
    env_base();
    setenv("ACCEL_COMM_TIMEOUT_MS", timeout, 1);
    struct job j;
    job_open(&j);
    struct late l = {j.comm[1], j.stream[1], late_ms, ACCEL_OK};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, join_late, &l), 0);
    accel_status status = accel_comm_barrier(j.comm[0], j.stream[0]);
    if (status == ACCEL_OK)
        status = accel_stream_sync(j.stream[0]);
    pthread_join(t, NULL);
    job_close(&j);
    unsetenv("ACCEL_COMM_TIMEOUT_MS");
    return status;
}

static void test_huge_timeouts_wait_rather_than_expire_at_once(void **state)
{
    (void)state;
    unsigned late = under_valgrind ? 1000 : 200;
    /* Milliseconds whose nanoseconds still fit 64 bits, but whose deadline
     * (now + timeout) would not: a long wait, not an expired one. */
    const char *const huge[] = {"18446744073709", "9223372036854", "0"};
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        accel_status status = barrier_with_a_late_rank(huge[i], late);
        if (status != ACCEL_OK)
            fail_msg("ACCEL_COMM_TIMEOUT_MS=%s: %s: %s", huge[i],
                     accel_status_name(status), accel_last_error());
    }
}

static void test_short_timeout_aborts_with_its_reason(void **state)
{
    (void)state;
    unsigned late = under_valgrind ? 3000 : 600;
    assert_status(barrier_with_a_late_rank("100", late), ACCEL_ERR_COMM_ABORTED);
    assert_contains(accel_last_error(), "ACCEL_COMM_TIMEOUT_MS");
}

/* ---- ACCEL_COMM ---- */

static accel_status providers_with(const char *value, size_t *out_count)
{
    env_base();
    setenv("ACCEL_COMM", value, 1);
    accel_host *host = NULL;
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    const accel_comm_provider_info *list = NULL;
    *out_count = 0;
    accel_status status = accel_host_comm_providers(host, &list, out_count);
    accel_host_destroy(host);
    return status;
}

static void test_hostile_provider_lists_are_invalid_argument(void **state)
{
    (void)state;
    char long_name[64];
    memset(long_name, 'a', 32);
    long_name[32] = '\0';
    /* 17 names: one more than a list may hold. */
    char seventeen[128] = "host";
    for (int i = 1; i < 17; i++)
        strcat(seventeen, ",mpi");
    char overlong[8192];
    memset(overlong, 'x', sizeof overlong - 1);
    overlong[sizeof overlong - 1] = '\0';
    const char *const bad[] = {
        "Host",      "host,",   ",host",  "host,,mpi", "ho st",    " host",
        "host;rm",   "../x",    "a/b",    "host\n",    "mpi,HOST", "-",
        "h\xc3\xa9", long_name, overlong, seventeen,
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t count = 0;
        accel_status status = providers_with(bad[i], &count);
        if (status != ACCEL_ERR_INVALID_ARGUMENT ||
            strstr(accel_last_error(), "ACCEL_COMM") == NULL) {
            print_error("ACCEL_COMM='%.40s': %s (%s), not "
                        "ACCEL_ERR_INVALID_ARGUMENT naming ACCEL_COMM\n",
                        bad[i], accel_status_name(status), accel_last_error());
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
    /* 31 characters is a name: listed, not found. */
    long_name[31] = '\0';
    size_t count = 0;
    assert_status(providers_with(long_name, &count), ACCEL_OK);
    assert_int_equal(count, 1);
}

static void test_empty_provider_list_counts_as_unset(void **state)
{
    (void)state;
    size_t count = 0;
    assert_status(providers_with("", &count), ACCEL_OK);
    assert_int_equal(count, 4); /* nccl,rccl,mpi,host */
}

/* ---- ACCEL_COMM_RENDEZVOUS, as rank 0 of 2 ---- */

static accel_status rank0_create_with(const char *rendezvous)
{
    env_base();
    setenv("ACCEL_RANK", "0", 1);
    setenv("ACCEL_SIZE", "2", 1);
    setenv("ACCEL_COMM_RENDEZVOUS", rendezvous, 1);
    setenv("ACCEL_COMM_TIMEOUT_MS", under_valgrind ? "2000" : "300", 1);
    struct job j;
    job_devices(&j);
    accel_status status = accel_comm_create(j.dev[0], &j.comm[0]);
    assert_null(j.comm[0]);
    job_close(&j);
    return status;
}

static void expect_refused(const char *rendezvous, const char *detail)
{
    accel_status status = rank0_create_with(rendezvous);
    if (status != ACCEL_ERR_INVALID_ARGUMENT)
        fail_msg("ACCEL_COMM_RENDEZVOUS='%s': %s (%s), not "
                 "ACCEL_ERR_INVALID_ARGUMENT",
                 rendezvous, accel_status_name(status), accel_last_error());
    assert_contains(accel_last_error(), detail);
}

static void test_malformed_rendezvous_is_invalid_argument(void **state)
{
    (void)state;
    expect_refused("ftp://x", "ACCEL_COMM_RENDEZVOUS");
    expect_refused("file", "ACCEL_COMM_RENDEZVOUS");
    expect_refused("file:", "ACCEL_COMM_RENDEZVOUS");
    expect_refused("file:/nonexistent/accel-outside", "cannot open");
    expect_refused("tcp:", "tcp:host:port");
    expect_refused("tcp:127.0.0.1", "tcp:host:port");
    expect_refused("tcp:127.0.0.1:", "tcp:host:port");
    expect_refused("tcp:127.0.0.1:x1", "ACCEL_COMM_RENDEZVOUS");
    expect_refused("tcp:127.0.0.1:-1", "ACCEL_COMM_RENDEZVOUS");
    /* Ports outside 1 to 65535 must not become another port (99999 is
     * 34463 in 16 bits; 0 and 65536 would listen on a random one). */
    expect_refused("tcp:127.0.0.1:99999", "port");
    expect_refused("tcp:127.0.0.1:65536", "port");
    expect_refused("tcp:127.0.0.1:0", "port");
    expect_refused("tcp:127.0.0.1:4294967297", "port");
    /* A host name cut short would be another host. */
    char spec[600] = "tcp:";
    memset(spec + 4, 'h', 300);
    strcpy(spec + 304, ".invalid:5000");
    expect_refused(spec, "longer than");
}

static void test_rendezvous_directory_others_can_touch_is_refused(void **state)
{
    (void)state;
    char *dir = support_make_temp_dir();
    char spec[1200];
    snprintf(spec, sizeof spec, "file:%s", dir);
    /* Group-writable, or world-writable even with the sticky bit. */
    const mode_t modes[] = {0770, 0720, 01777, 0702};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        assert_int_equal(chmod(dir, modes[i]), 0);
        expect_refused(spec, "writable by no other");
    }
    assert_int_equal(chmod(dir, 0700), 0);
    /* Owned by another user: only root can make one. */
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, 65534, 65534), 0);
        expect_refused(spec, "owned by this user");
        assert_int_equal(chown(dir, 0, 0), 0);
    }
    /* A regular file is not a directory. */
    char *file = support_path_in(dir, "plain");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(spec, sizeof spec, "file:%s", file);
    expect_refused(spec, "cannot open");
    free(file);
    support_remove_dir(dir);
}

static void test_lonely_rank_0_times_out_through_a_private_directory(void **state)
{
    (void)state;
    char *dir = support_make_temp_dir();
    assert_int_equal(chmod(dir, 0700), 0);
    /* A link to it is followed: what is checked is the directory. */
    char *link = support_path_in(dir, "link");
    char *inner = support_path_in(dir, "inner");
    assert_int_equal(mkdir(inner, 0700), 0);
    assert_int_equal(symlink(inner, link), 0);
    char spec[1200];
    snprintf(spec, sizeof spec, "file:%s", link);
    assert_status(rank0_create_with(spec), ACCEL_ERR_TIMEOUT);
    free(link);
    free(inner);
    support_remove_dir(dir);
}

int main(void)
{
    under_valgrind = getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_refuses_null_and_counts_out_of_range),
        cmocka_unit_test(test_create_local_clears_every_output_on_failure),
        cmocka_unit_test(test_null_communicator_is_refused),
        cmocka_unit_test(test_counts_at_each_boundary),
        cmocka_unit_test(test_every_call_after_abort_fails_the_same_way),
        cmocka_unit_test(test_huge_timeouts_wait_rather_than_expire_at_once),
        cmocka_unit_test(test_short_timeout_aborts_with_its_reason),
        cmocka_unit_test(test_hostile_provider_lists_are_invalid_argument),
        cmocka_unit_test(test_empty_provider_list_counts_as_unset),
        cmocka_unit_test(test_malformed_rendezvous_is_invalid_argument),
        cmocka_unit_test(test_rendezvous_directory_others_can_touch_is_refused),
        cmocka_unit_test(test_lonely_rank_0_times_out_through_a_private_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
