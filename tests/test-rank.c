/*
 * Rank awareness: accel_rank_info from every launcher's variables, faked
 * in-process with setenv (no launcher needed), the ACCEL_* overrides, the
 * order when two launchers' variables coexist, strict parsing; and the
 * selection grammar's rank terms (%local, %local%, %rank, %rank%) over
 * ACCEL_NULL_DEVICES=2 for local ranks 0 to 3.
 *
 * Links libaccel's objects to present an elevated process's ids.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "rank.h"

/* Every variable rank.c reads, cleared before each test. */
static const char *const rank_variables[] = {"OMPI_COMM_WORLD_RANK",
                                             "OMPI_COMM_WORLD_SIZE",
                                             "OMPI_COMM_WORLD_LOCAL_RANK",
                                             "OMPI_COMM_WORLD_LOCAL_SIZE",
                                             "MV2_COMM_WORLD_RANK",
                                             "MV2_COMM_WORLD_SIZE",
                                             "MV2_COMM_WORLD_LOCAL_RANK",
                                             "MV2_COMM_WORLD_LOCAL_SIZE",
                                             "PMI_RANK",
                                             "PMI_SIZE",
                                             "PMI_LOCAL_RANK",
                                             "PMI_LOCAL_SIZE",
                                             "MPI_LOCALRANKID",
                                             "MPI_LOCALNRANKS",
                                             "FLUX_TASK_RANK",
                                             "FLUX_JOB_SIZE",
                                             "FLUX_TASK_LOCAL_ID",
                                             "SLURM_PROCID",
                                             "SLURM_NTASKS",
                                             "SLURM_LOCALID",
                                             "SLURM_NTASKS_PER_NODE",
                                             "SLURM_TASKS_PER_NODE",
                                             "SLURM_NODEID",
                                             "PMIX_RANK",
                                             "ACCEL_RANK",
                                             "ACCEL_SIZE",
                                             "ACCEL_LOCAL_RANK",
                                             "ACCEL_LOCAL_SIZE",
                                             NULL};

static void clear_rank_variables(void)
{
    for (const char *const *name = rank_variables; *name != NULL; name++)
        unsetenv(*name);
}

/* "NAME=VALUE" strings, NULL-terminated, set in the process. */
static void set_all(const char *const *assignments)
{
    for (; *assignments != NULL; assignments++) {
        const char *eq = strchr(*assignments, '=');
        assert_non_null(eq);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *assignments),
                 *assignments);
        assert_int_equal(setenv(name, eq + 1, 1), 0);
    }
}

static int setup(void **state)
{
    (void)state;
    support_clean_environment();
    clear_rank_variables();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_rank_variables();
    unsetenv("ACCEL_NULL_DEVICES");
    return 0;
}

/* What accel_rank_info_get must say: four values and their variables. */
struct expected {
    int32_t rank, size, local_rank, local_size;
    const char *rank_source, *size_source, *local_rank_source, *local_size_source;
};

static void expect_info(const char *const *env, const struct expected *want)
{
    clear_rank_variables();
    set_all(env);
    accel_rank_info info;
    accel_status status = accel_rank_info_get(&info);
    if (status != ACCEL_OK)
        fail_msg("%s=...: %s: %s", env[0], accel_status_name(status),
                 accel_last_error());
    assert_int_equal(info.struct_size, sizeof info);
    assert_int_equal(info.rank, want->rank);
    assert_int_equal(info.size, want->size);
    assert_int_equal(info.local_rank, want->local_rank);
    assert_int_equal(info.local_size, want->local_size);
    assert_string_equal(info.rank_source, want->rank_source);
    assert_string_equal(info.size_source, want->size_source);
    assert_string_equal(info.local_rank_source, want->local_rank_source);
    assert_string_equal(info.local_size_source, want->local_size_source);
}

/* `env` makes accel_rank_info_get fail with `expected`, the detail saying `word`. */
static void expect_rank_error(const char *const *env, accel_status expected,
                              const char *word)
{
    clear_rank_variables();
    set_all(env);
    accel_rank_info info;
    memset(&info, 0x5a, sizeof info);
    accel_status status = accel_rank_info_get(&info);
    if (status != expected)
        fail_msg("%s: gave %s (%s), expected %s", env[0],
                 accel_status_name(status), accel_last_error(),
                 accel_status_name(expected));
    assert_contains(accel_last_error(), word);
    assert_int_equal(info.rank, 0);
    assert_null(info.rank_source);
}

/* ---- launchers ---- */

static void test_no_launcher_is_rank_0_of_1_by_default(void **state)
{
    (void)state;
    const char *const env[] = {NULL};
    const struct expected want = {0,         1,         0,         1,
                                  "default", "default", "default", "default"};
    expect_info(env, &want);
}

static void test_open_mpi_variables_give_every_value(void **state)
{
    (void)state;
    const char *const env[] = {"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8",
                               "OMPI_COMM_WORLD_LOCAL_RANK=1",
                               "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL};
    const struct expected want = {5,
                                  8,
                                  1,
                                  4,
                                  "OMPI_COMM_WORLD_RANK",
                                  "OMPI_COMM_WORLD_SIZE",
                                  "OMPI_COMM_WORLD_LOCAL_RANK",
                                  "OMPI_COMM_WORLD_LOCAL_SIZE"};
    expect_info(env, &want);
}

static void test_mvapich2_variables_give_every_value(void **state)
{
    (void)state;
    const char *const env[] = {"MV2_COMM_WORLD_RANK=3", "MV2_COMM_WORLD_SIZE=4",
                               "MV2_COMM_WORLD_LOCAL_RANK=1",
                               "MV2_COMM_WORLD_LOCAL_SIZE=2", NULL};
    const struct expected want = {3,
                                  4,
                                  1,
                                  2,
                                  "MV2_COMM_WORLD_RANK",
                                  "MV2_COMM_WORLD_SIZE",
                                  "MV2_COMM_WORLD_LOCAL_RANK",
                                  "MV2_COMM_WORLD_LOCAL_SIZE"};
    expect_info(env, &want);
}

static void test_hydra_pmi_and_local_rank_id(void **state)
{
    (void)state;
    const char *const env[] = {"PMI_RANK=2", "PMI_SIZE=6", "MPI_LOCALRANKID=2",
                               "MPI_LOCALNRANKS=3", NULL};
    const struct expected want = {2,
                                  6,
                                  2,
                                  3,
                                  "PMI_RANK",
                                  "PMI_SIZE",
                                  "MPI_LOCALRANKID",
                                  "MPI_LOCALNRANKS"};
    expect_info(env, &want);
}

static void test_pmi_local_rank_comes_before_hydras(void **state)
{
    (void)state;
    const char *const env[] = {"PMI_RANK=2",
                               "PMI_SIZE=6",
                               "PMI_LOCAL_RANK=0",
                               "PMI_LOCAL_SIZE=2",
                               "MPI_LOCALRANKID=1",
                               "MPI_LOCALNRANKS=3",
                               NULL};
    const struct expected want = {
        2, 6, 0, 2, "PMI_RANK", "PMI_SIZE", "PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"};
    expect_info(env, &want);
}

static void test_flux_gives_no_local_size(void **state)
{
    (void)state;
    const char *const env[] = {"FLUX_TASK_RANK=5", "FLUX_JOB_SIZE=8",
                               "FLUX_TASK_LOCAL_ID=1", NULL};
    const struct expected want = {5,
                                  8,
                                  1,
                                  -1,
                                  "FLUX_TASK_RANK",
                                  "FLUX_JOB_SIZE",
                                  "FLUX_TASK_LOCAL_ID",
                                  ACCEL__RANK_UNKNOWN};
    expect_info(env, &want);
}

static void test_slurm_local_size_from_ntasks_per_node(void **state)
{
    (void)state;
    const char *const env[] = {
        "SLURM_PROCID=3",          "SLURM_NTASKS=4",         "SLURM_LOCALID=1",
        "SLURM_NTASKS_PER_NODE=2", "SLURM_TASKS_PER_NODE=9", NULL};
    const struct expected want = {3,
                                  4,
                                  1,
                                  2,
                                  "SLURM_PROCID",
                                  "SLURM_NTASKS",
                                  "SLURM_LOCALID",
                                  "SLURM_NTASKS_PER_NODE"};
    expect_info(env, &want);
}

static void test_slurm_tasks_per_node_is_read_at_the_node_id(void **state)
{
    (void)state;
    /* Nodes 0-2 run 2 tasks each, node 3 runs 1: task 6 is alone there. */
    const char *const last[] = {"SLURM_PROCID=6",
                                "SLURM_NTASKS=7",
                                "SLURM_LOCALID=0",
                                "SLURM_NODEID=3",
                                "SLURM_TASKS_PER_NODE=2(x3),1",
                                NULL};
    const struct expected alone = {6,
                                   7,
                                   0,
                                   1,
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "SLURM_LOCALID",
                                   "SLURM_TASKS_PER_NODE"};
    expect_info(last, &alone);
    const char *const second[] = {"SLURM_PROCID=3",
                                  "SLURM_NTASKS=7",
                                  "SLURM_LOCALID=1",
                                  "SLURM_NODEID=1",
                                  "SLURM_TASKS_PER_NODE=2(x3),1",
                                  NULL};
    const struct expected pair = {3,
                                  7,
                                  1,
                                  2,
                                  "SLURM_PROCID",
                                  "SLURM_NTASKS",
                                  "SLURM_LOCALID",
                                  "SLURM_TASKS_PER_NODE"};
    expect_info(second, &pair);
    /* Without a node id, the first figure. */
    const char *const first[] = {"SLURM_PROCID=1", "SLURM_NTASKS=7",
                                 "SLURM_LOCALID=1",
                                 "SLURM_TASKS_PER_NODE=2(x3),1", NULL};
    const struct expected head = {1,
                                  7,
                                  1,
                                  2,
                                  "SLURM_PROCID",
                                  "SLURM_NTASKS",
                                  "SLURM_LOCALID",
                                  "SLURM_TASKS_PER_NODE"};
    expect_info(first, &head);
}

static void test_pmix_rank_needs_a_size_from_elsewhere(void **state)
{
    (void)state;
    const char *const alone[] = {"PMIX_RANK=1", NULL};
    expect_rank_error(alone, ACCEL_ERR_INVALID_ARGUMENT, "ACCEL_SIZE");
    const char *const sized[] = {"PMIX_RANK=1", "ACCEL_SIZE=2", NULL};
    const struct expected want = {1,
                                  2,
                                  -1,
                                  -1,
                                  "PMIX_RANK",
                                  "ACCEL_SIZE",
                                  ACCEL__RANK_UNKNOWN,
                                  ACCEL__RANK_UNKNOWN};
    expect_info(sized, &want);
}

/* ---- overrides and precedence ---- */

static void test_accel_overrides_replace_each_value(void **state)
{
    (void)state;
    const char *const env[] = {
        "OMPI_COMM_WORLD_RANK=5",       "OMPI_COMM_WORLD_SIZE=8",
        "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
        "ACCEL_LOCAL_RANK=3",           NULL};
    const struct expected want = {5,
                                  8,
                                  3,
                                  4,
                                  "OMPI_COMM_WORLD_RANK",
                                  "OMPI_COMM_WORLD_SIZE",
                                  "ACCEL_LOCAL_RANK",
                                  "OMPI_COMM_WORLD_LOCAL_SIZE"};
    expect_info(env, &want);
    const char *const all[] = {"ACCEL_RANK=2",
                               "ACCEL_SIZE=3",
                               "ACCEL_LOCAL_RANK=0",
                               "ACCEL_LOCAL_SIZE=1",
                               "SLURM_PROCID=0",
                               "SLURM_NTASKS=1",
                               NULL};
    const struct expected mine = {2,
                                  3,
                                  0,
                                  1,
                                  "ACCEL_RANK",
                                  "ACCEL_SIZE",
                                  "ACCEL_LOCAL_RANK",
                                  "ACCEL_LOCAL_SIZE"};
    expect_info(all, &mine);
}

static void test_mpirun_inside_slurm_allocation_believes_the_mpi(void **state)
{
    (void)state;
    /* A batch script's variables, left in every rank by mpirun. */
    const char *const env[] = {"SLURM_PROCID=0",
                               "SLURM_NTASKS=1",
                               "SLURM_LOCALID=0",
                               "SLURM_NTASKS_PER_NODE=1",
                               "PMI_RANK=3",
                               "PMI_SIZE=4",
                               NULL};
    /* Slurm describes another job (rank 0 of 1): its local values are not
     * taken, and the local rank stays unknown rather than guessed. */
    const struct expected want = {3,
                                  4,
                                  -1,
                                  -1,
                                  "PMI_RANK",
                                  "PMI_SIZE",
                                  ACCEL__RANK_UNKNOWN,
                                  ACCEL__RANK_UNKNOWN};
    expect_info(env, &want);
    const char *const ompi[] = {"SLURM_PROCID=0",
                                "SLURM_NTASKS=1",
                                "SLURM_LOCALID=0",
                                "OMPI_COMM_WORLD_RANK=1",
                                "OMPI_COMM_WORLD_SIZE=2",
                                "OMPI_COMM_WORLD_LOCAL_RANK=1",
                                "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                                "PMIX_RANK=1",
                                NULL};
    const struct expected open_mpi = {1,
                                      2,
                                      1,
                                      2,
                                      "OMPI_COMM_WORLD_RANK",
                                      "OMPI_COMM_WORLD_SIZE",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "OMPI_COMM_WORLD_LOCAL_SIZE"};
    expect_info(ompi, &open_mpi);
}

static void test_srun_pmi2_takes_local_values_from_slurm(void **state)
{
    (void)state;
    /* The same process described twice (rank 3 of 4 both times). */
    const char *const env[] = {"PMI_RANK=3",
                               "PMI_SIZE=4",
                               "SLURM_PROCID=3",
                               "SLURM_NTASKS=4",
                               "SLURM_LOCALID=1",
                               "SLURM_NTASKS_PER_NODE=2",
                               NULL};
    const struct expected want = {3,
                                  4,
                                  1,
                                  2,
                                  "PMI_RANK",
                                  "PMI_SIZE",
                                  "SLURM_LOCALID",
                                  "SLURM_NTASKS_PER_NODE"};
    expect_info(env, &want);
    /* srun --mpi=pmix: Slurm comes before PMIx. */
    const char *const pmix[] = {
        "PMIX_RANK=3",     "SLURM_PROCID=3",          "SLURM_NTASKS=4",
        "SLURM_LOCALID=1", "SLURM_NTASKS_PER_NODE=2", NULL};
    const struct expected slurm = {3,
                                   4,
                                   1,
                                   2,
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "SLURM_LOCALID",
                                   "SLURM_NTASKS_PER_NODE"};
    expect_info(pmix, &slurm);
}

static void test_stale_variable_cannot_break_a_complete_answer(void **state)
{
    (void)state;
    const char *const env[] = {"OMPI_COMM_WORLD_RANK=0",
                               "OMPI_COMM_WORLD_SIZE=2",
                               "OMPI_COMM_WORLD_LOCAL_RANK=0",
                               "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                               "SLURM_PROCID=0",
                               "SLURM_NTASKS=2",
                               "SLURM_TASKS_PER_NODE=bogus",
                               NULL};
    const struct expected want = {0,
                                  2,
                                  0,
                                  2,
                                  "OMPI_COMM_WORLD_RANK",
                                  "OMPI_COMM_WORLD_SIZE",
                                  "OMPI_COMM_WORLD_LOCAL_RANK",
                                  "OMPI_COMM_WORLD_LOCAL_SIZE"};
    expect_info(env, &want);
}

static void test_elevated_process_reads_no_variable(void **state)
{
    (void)state;
    const char *const env[] = {"ACCEL_RANK=1", "ACCEL_SIZE=2",
                               "OMPI_COMM_WORLD_RANK=1",
                               "OMPI_COMM_WORLD_SIZE=2", NULL};
    set_all(env);
    struct accel__ids ids;
    accel__ids_current(&ids);
    ids.ruid = ids.euid == 1000 ? 1001 : 1000;
    accel_rank_info info;
    assert_status(accel__rank_info_as(&ids, &info), ACCEL_OK);
    assert_int_equal(info.rank, 0);
    assert_int_equal(info.size, 1);
    assert_string_equal(info.rank_source, "default");
    accel__ids_current(&ids);
    assert_status(accel__rank_info_as(&ids, &info), ACCEL_OK);
    assert_int_equal(info.rank, 1);
}

/* ---- strict parsing ---- */

static void test_malformed_values_are_errors_naming_the_variable(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "OMPI_COMM_WORLD_RANK=1x",
        "OMPI_COMM_WORLD_RANK=-1",
        "OMPI_COMM_WORLD_RANK= 1",
        "OMPI_COMM_WORLD_RANK=+1",
        "OMPI_COMM_WORLD_RANK=0x1",
        "OMPI_COMM_WORLD_RANK=2147483648",
        "OMPI_COMM_WORLD_RANK=99999999999999999999",
        NULL};
    for (const char *const *b = bad; *b != NULL; b++) {
        const char *const env[] = {*b, "OMPI_COMM_WORLD_SIZE=4", NULL};
        expect_rank_error(env, ACCEL_ERR_INVALID_ARGUMENT,
                          "OMPI_COMM_WORLD_RANK=");
    }
    const char *const zero[] = {"PMI_RANK=0", "PMI_SIZE=0", NULL};
    expect_rank_error(zero, ACCEL_ERR_INVALID_ARGUMENT, "PMI_SIZE=");
    const char *const local[] = {"FLUX_TASK_RANK=0", "FLUX_JOB_SIZE=2",
                                 "FLUX_TASK_LOCAL_ID=one", NULL};
    expect_rank_error(local, ACCEL_ERR_INVALID_ARGUMENT, "FLUX_TASK_LOCAL_ID=");
    const char *const override[] = {"ACCEL_LOCAL_SIZE=2.0", NULL};
    expect_rank_error(override, ACCEL_ERR_INVALID_ARGUMENT, "ACCEL_LOCAL_SIZE=");
}

static void test_malformed_slurm_task_lists_are_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"2(x",  "2(y3)",  "2(x3",
                                      "2,,1", "(x2)",   "2(x0)",
                                      "2 ,1", "2(x3)1", NULL};
    for (const char *const *b = bad; *b != NULL; b++) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "SLURM_TASKS_PER_NODE=%s", *b);
        const char *const env[] = {"SLURM_PROCID=6",  "SLURM_NTASKS=7",
                                   "SLURM_LOCALID=0", "SLURM_NODEID=3",
                                   assignment,        NULL};
        expect_rank_error(env, ACCEL_ERR_INVALID_ARGUMENT,
                          "SLURM_TASKS_PER_NODE=");
    }
    const char *const past[] = {"SLURM_PROCID=0",
                                "SLURM_NTASKS=2",
                                "SLURM_LOCALID=0",
                                "SLURM_NODEID=2",
                                "SLURM_TASKS_PER_NODE=1(x2)",
                                NULL};
    expect_rank_error(past, ACCEL_ERR_INVALID_ARGUMENT, "fewer nodes");
    const char *const node[] = {"SLURM_PROCID=0",         "SLURM_NTASKS=2",
                                "SLURM_LOCALID=0",        "SLURM_NODEID=x",
                                "SLURM_TASKS_PER_NODE=2", NULL};
    expect_rank_error(node, ACCEL_ERR_INVALID_ARGUMENT, "SLURM_NODEID=");
}

static void test_inconsistent_values_are_errors(void **state)
{
    (void)state;
    const char *const rank[] = {"OMPI_COMM_WORLD_RANK=4",
                                "OMPI_COMM_WORLD_SIZE=4", NULL};
    expect_rank_error(rank, ACCEL_ERR_INVALID_ARGUMENT,
                      "rank 4 (OMPI_COMM_WORLD_RANK) is not below the size 4");
    const char *const local[] = {"ACCEL_RANK=1", "ACCEL_SIZE=4",
                                 "ACCEL_LOCAL_RANK=2", "ACCEL_LOCAL_SIZE=2",
                                 NULL};
    expect_rank_error(local, ACCEL_ERR_INVALID_ARGUMENT,
                      "local rank 2 (ACCEL_LOCAL_RANK) is not below");
    const char *const wide[] = {"ACCEL_RANK=1", "ACCEL_SIZE=2",
                                "ACCEL_LOCAL_RANK=0", "ACCEL_LOCAL_SIZE=3", NULL};
    expect_rank_error(wide, ACCEL_ERR_INVALID_ARGUMENT,
                      "local size 3 (ACCEL_LOCAL_SIZE) is more than");
    /* A local rank alone, in a job of one: the default local size is 1. */
    const char *const lone[] = {"ACCEL_LOCAL_RANK=1", NULL};
    expect_rank_error(lone, ACCEL_ERR_INVALID_ARGUMENT, "ACCEL_LOCAL_RANK");
    const char *const half[] = {"ACCEL_SIZE=4", NULL};
    expect_rank_error(half, ACCEL_ERR_INVALID_ARGUMENT, "set ACCEL_RANK");
}

static void test_empty_variable_counts_as_unset(void **state)
{
    (void)state;
    const char *const env[] = {"ACCEL_RANK=", "OMPI_COMM_WORLD_RANK=1",
                               "OMPI_COMM_WORLD_SIZE=2", NULL};
    const struct expected want = {1,
                                  2,
                                  -1,
                                  -1,
                                  "OMPI_COMM_WORLD_RANK",
                                  "OMPI_COMM_WORLD_SIZE",
                                  ACCEL__RANK_UNKNOWN,
                                  ACCEL__RANK_UNKNOWN};
    expect_info(env, &want);
}

static void test_small_struct_is_refused_and_no_byte_past_it_written(void **state)
{
    (void)state;
    _Alignas(accel_rank_info) unsigned char buffer[sizeof(accel_rank_info) + 8];
    memset(buffer, 0xee, sizeof buffer);
    assert_status(accel_rank_info_get_sized((accel_rank_info *)buffer, 4),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_rank_info_get_sized(NULL, sizeof(accel_rank_info)),
                  ACCEL_ERR_INVALID_ARGUMENT);
    /* An older caller's struct: rank and size only. */
    size_t old = offsetof(accel_rank_info, local_rank);
    assert_status(accel_rank_info_get_sized((accel_rank_info *)buffer, old),
                  ACCEL_OK);
    uint32_t written;
    memcpy(&written, buffer, sizeof written);
    assert_int_equal(written, old);
    for (size_t i = old; i < sizeof buffer; i++)
        assert_int_equal(buffer[i], 0xee);
}

/* ---- selection: %local, %local%, %rank ---- */

struct select_case {
    char *dir;
    accel_host *host;
};

static int select_setup(void **state)
{
    setup(state);
    struct select_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->dir = support_make_temp_dir();
    support_copy_file(NULL_PLUGIN_PATH, c->dir, "accel-plugin-null.so");
    support_install_fixture(c->dir, "zero", "zero");
    setenv("ACCEL_NULL_DEVICES", "2", 1);
    *state = c;
    return 0;
}

static int select_teardown(void **state)
{
    struct select_case *c = *state;
    accel_host_destroy(c->host);
    support_remove_dir(c->dir);
    free(c);
    return teardown(state);
}

static void create_host(struct select_case *c, const char *backend)
{
    accel_host_destroy(c->host);
    c->host = NULL;
    accel_host_options options = {.plugin_path = c->dir, .backend = backend};
    assert_status(accel_host_create(&options, &c->host), ACCEL_OK);
}

/* The local rank `local` of 4 on this machine (rank local + 4 of 8). */
static void be_local_rank(int local)
{
    char text[16];
    clear_rank_variables();
    snprintf(text, sizeof text, "%d", local);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", text, 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    snprintf(text, sizeof text, "%d", local + 4);
    setenv("OMPI_COMM_WORLD_RANK", text, 1);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
}

static void expect_bound(struct select_case *c, const char *backend,
                         const char *plugin, uint32_t index)
{
    const char *name = NULL;
    uint32_t picked = UINT32_MAX;
    accel_status status = accel_host_selection(c->host, &name, &picked);
    if (status != ACCEL_OK)
        fail_msg("'%s': %s: %s", backend, accel_status_name(status),
                 accel_last_error());
    if (strcmp(name, plugin) != 0 || picked != index)
        fail_msg("'%s' bound %s:%u, expected %s:%u", backend, name, picked,
                 plugin, index);
}

static void expect_select_error(struct select_case *c, const char *backend,
                                accel_status expected, const char *word)
{
    const char *name = NULL;
    uint32_t picked = 0;
    accel_status status = accel_host_selection(c->host, &name, &picked);
    if (status != expected)
        fail_msg("'%s' gave %s (%s), expected %s", backend,
                 accel_status_name(status), accel_last_error(),
                 accel_status_name(expected));
    assert_contains(accel_last_error(), word);
}

static void test_local_binds_each_local_rank_its_device(void **state)
{
    struct select_case *c = *state;
    const char *backend = "null:%local";
    create_host(c, backend);
    for (int local = 0; local < 4; local++) {
        be_local_rank(local);
        if (local < 2) {
            expect_bound(c, backend, "null", (uint32_t)local);
            continue;
        }
        expect_select_error(c, backend, ACCEL_ERR_NOT_FOUND,
                            "more ranks than devices");
        assert_contains(accel_last_error(), "OMPI_COMM_WORLD_LOCAL_RANK");
        assert_contains(accel_last_error(), "null:%local%");
    }
}

static void test_local_modulo_shares_the_devices(void **state)
{
    struct select_case *c = *state;
    const char *backend = "null:%local%";
    create_host(c, backend);
    for (int local = 0; local < 4; local++) {
        be_local_rank(local);
        expect_bound(c, backend, "null", (uint32_t)(local % 2));
    }
}

static void test_rank_terms_bind_by_the_global_rank(void **state)
{
    struct select_case *c = *state;
    create_host(c, "null:%rank%");
    be_local_rank(1); /* rank 5 */
    expect_bound(c, "null:%rank%", "null", 1);
    create_host(c, "null:%rank");
    expect_select_error(c, "null:%rank", ACCEL_ERR_NOT_FOUND,
                        "rank 5 (OMPI_COMM_WORLD_RANK)");
    clear_rank_variables();
    setenv("ACCEL_RANK", "1", 1);
    setenv("ACCEL_SIZE", "2", 1);
    expect_bound(c, "null:%rank", "null", 1);
}

static void test_deviceless_plugin_falls_through_to_the_next_item(void **state)
{
    struct select_case *c = *state;
    /* As "cuda:%local,null:%local" on a machine without a GPU. */
    const char *backend = "zero:%local,null:%local";
    create_host(c, backend);
    be_local_rank(1);
    expect_bound(c, backend, "null", 1);
    be_local_rank(3);
    expect_select_error(c, backend, ACCEL_ERR_NOT_FOUND,
                        "more ranks than devices");
}

static void test_local_counts_the_devices_exclusions_leave(void **state)
{
    struct select_case *c = *state;
    const char *backend = "null:%local,!null:0";
    create_host(c, backend);
    be_local_rank(0);
    expect_bound(c, backend, "null", 1);
    be_local_rank(1);
    expect_select_error(c, backend, ACCEL_ERR_NOT_FOUND, "null has 1 to bind");
    create_host(c, "null:%local%,!null:1");
    be_local_rank(3);
    expect_bound(c, "null:%local%,!null:1", "null", 0);
}

static void test_unknown_or_malformed_rank_fails_only_rank_terms(void **state)
{
    struct select_case *c = *state;
    clear_rank_variables();
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "2", 1);
    create_host(c, "null:%local%");
    expect_select_error(c, "null:%local%", ACCEL_ERR_NOT_FOUND,
                        "the local rank is unknown");
    create_host(c, "null:%rank");
    expect_bound(c, "null:%rank", "null", 1);
    setenv("PMI_RANK", "one", 1);
    expect_select_error(c, "null:%rank", ACCEL_ERR_INVALID_ARGUMENT,
                        "PMI_RANK='one'");
    create_host(c, "null:1");
    expect_bound(c, "null:1", "null", 1);
}

static void test_malformed_rank_terms_are_invalid_argument(void **state)
{
    struct select_case *c = *state;
    static const char *const bad[] = {
        "null:%locale", "null:%",      "null:%%", "null:%local%%",
        "!null:%local", "null:%LOCAL", NULL};
    for (const char *const *b = bad; *b != NULL; b++) {
        create_host(c, *b);
        accel_device *device = NULL;
        accel_status status = accel_device_open_selected(c->host, &device);
        if (status != ACCEL_ERR_INVALID_ARGUMENT)
            fail_msg("'%s' gave %s", *b, accel_status_name(status));
        assert_null(device);
        assert_contains(accel_last_error(), *b);
    }
}

static void test_explain_shows_the_rank_its_source_and_index(void **state)
{
    struct select_case *c = *state;
    create_host(c, "zero:%local%,null:%local%");
    be_local_rank(3);
    char text[4096];
    assert_status(accel_host_selection_explain(c->host, text, sizeof text),
                  ACCEL_OK);
    assert_contains(text, "local rank 3 (OMPI_COMM_WORLD_LOCAL_RANK) of 4 "
                          "(OMPI_COMM_WORLD_LOCAL_SIZE)");
    assert_contains(text, "zero: fixture has no device");
    assert_contains(text, "local rank 3 modulo 2 is 1: picks null:1");
}

static void test_selected_device_opens_at_the_local_rank(void **state)
{
    struct select_case *c = *state;
    create_host(c, "null:%local");
    be_local_rank(1);
    accel_device *device = NULL;
    assert_status(accel_device_open_selected(c->host, &device), ACCEL_OK);
    accel_device_info info;
    assert_status(accel_device_info_get(device, &info), ACCEL_OK);
    assert_string_equal(info.plugin, "null");
    assert_int_equal(info.index, 1);
    accel_device_close(device);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define S(f) cmocka_unit_test_setup_teardown(f, select_setup, select_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_no_launcher_is_rank_0_of_1_by_default),
        T(test_open_mpi_variables_give_every_value),
        T(test_mvapich2_variables_give_every_value),
        T(test_hydra_pmi_and_local_rank_id),
        T(test_pmi_local_rank_comes_before_hydras),
        T(test_flux_gives_no_local_size),
        T(test_slurm_local_size_from_ntasks_per_node),
        T(test_slurm_tasks_per_node_is_read_at_the_node_id),
        T(test_pmix_rank_needs_a_size_from_elsewhere),
        T(test_accel_overrides_replace_each_value),
        T(test_mpirun_inside_slurm_allocation_believes_the_mpi),
        T(test_srun_pmi2_takes_local_values_from_slurm),
        T(test_stale_variable_cannot_break_a_complete_answer),
        T(test_elevated_process_reads_no_variable),
        T(test_malformed_values_are_errors_naming_the_variable),
        T(test_malformed_slurm_task_lists_are_errors),
        T(test_inconsistent_values_are_errors),
        T(test_empty_variable_counts_as_unset),
        T(test_small_struct_is_refused_and_no_byte_past_it_written),
        S(test_local_binds_each_local_rank_its_device),
        S(test_local_modulo_shares_the_devices),
        S(test_rank_terms_bind_by_the_global_rank),
        S(test_deviceless_plugin_falls_through_to_the_next_item),
        S(test_local_counts_the_devices_exclusions_leave),
        S(test_unknown_or_malformed_rank_fails_only_rank_terms),
        S(test_malformed_rank_terms_are_invalid_argument),
        S(test_explain_shows_the_rank_its_source_and_index),
        S(test_selected_device_opens_at_the_local_rank),
    };
    return cmocka_run_group_tests_name("rank", tests, NULL, NULL);
}
