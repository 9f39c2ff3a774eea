/*
 * Plugin-path security: which files the loader refuses for their owner,
 * their mode, their directory or their links, and what a process with
 * elevated privileges (setuid, setgid) ignores.
 *
 * Every case is made in a fresh temporary directory. The privileged process
 * is presented to the host through accel__host_create_as and a struct of
 * ids, the one seam libaccel has for it; so this test links libaccel's
 * objects. Cases that need a file owned by another user chown it to
 * `nobody`, and are skipped unless the test runs as root. One case checks
 * the real thing too: a setuid copy of this program, run as a child.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "os.h"
#include "status.h"
#include "trace.h"

#define NOBODY ((uid_t)65534)

struct security_case {
    char *dir;
    char *dir2;
    accel_host *host;
};

static int setup(void **state)
{
    struct security_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    support_clean_environment();
    c->dir = support_make_temp_dir();
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct security_case *c = *state;
    accel_host_destroy(c->host);
    support_remove_dir(c->dir);
    support_remove_dir(c->dir2);
    support_clean_environment();
    free(c);
    return 0;
}

/* ---- ids ---- */

/* The ids of this process as it is. */
static struct accel__ids ids_real(void)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    return ids;
}

/* A plain process whose real and effective user is `uid`. */
static struct accel__ids ids_plain(uid_t uid)
{
    struct accel__ids ids = ids_real();
    ids.ruid = ids.euid = uid;
    return ids;
}

/* A setuid program: run by another user, with this process's effective
 * user, so that the files this test makes are still the effective user's. */
static struct accel__ids ids_setuid(void)
{
    struct accel__ids ids = ids_real();
    ids.ruid = ids.euid == 1000 ? 1001 : 1000;
    return ids;
}

static struct accel__ids ids_setgid(void)
{
    struct accel__ids ids = ids_real();
    ids.rgid = ids.egid == 1000 ? 1001 : 1000;
    return ids;
}

/* ---- helpers ---- */

static void create_host_as(struct security_case *c, const char *plugin_path,
                           const struct accel__ids *ids)
{
    accel_host_options options = {.plugin_path = plugin_path};
    assert_status(
        accel__host_create_as(plugin_path ? &options : NULL, ids, &c->host),
        ACCEL_OK);
}

static void create_host(struct security_case *c, const char *plugin_path)
{
    struct accel__ids ids = ids_real();
    create_host_as(c, plugin_path, &ids);
}

static void chmod_in(const char *dir, const char *file_name, mode_t mode)
{
    char *path = support_path_in(dir, file_name);
    assert_int_equal(chmod(path, mode), 0);
    free(path);
}

static void chown_in(const char *dir, const char *file_name, uid_t owner)
{
    char *path = support_path_in(dir, file_name);
    assert_int_equal(chown(path, owner, (gid_t)-1), 0);
    free(path);
}

static void link_in(const char *dir, const char *file_name, const char *target)
{
    char *path = support_path_in(dir, file_name);
    assert_int_equal(symlink(target, path), 0);
    free(path);
}

static void skip_unless_root(void)
{
    if (geteuid() != 0) {
        print_message("skipped: needs root to give a file to another user\n");
        skip();
    }
}

static void expect_loaded_and_usable(struct security_case *c, const char *name)
{
    support_expect_plugin(c->host, name, ACCEL_PLUGIN_LOADED);
    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, name, 0, &device), ACCEL_OK);
    accel_device_close(device);
}

static void expect_refused(struct security_case *c, const char *name,
                           const char *fragment)
{
    const accel_plugin_info *info = support_expect_plugin(c->host, name,
                                                          ACCEL_PLUGIN_REJECTED);
    assert_contains(info->reason, fragment);
    accel_device *device = NULL;
    assert_true(accel_device_open(c->host, name, 0, &device) != ACCEL_OK);
    assert_null(device);
}

/* The good plugin and a second one, `name`, which the case then spoils. */
static void install_pair(const char *dir, const char *name)
{
    support_install_fixture(dir, "good", "good");
    support_install_fixture(dir, "peer", name);
}

/* ---- the file's mode ---- */

static void test_group_writable_plugin_is_refused(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0664);
    create_host(c, c->dir);
    expect_refused(c, "peer", "the file is writable by its group (mode 0664)");
    expect_loaded_and_usable(c, "good");
}

static void test_plugin_writable_by_others_is_refused(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0646);
    create_host(c, c->dir);
    expect_refused(c, "peer", "the file is writable by other users (mode 0646)");
    expect_loaded_and_usable(c, "good");
}

static void test_read_only_plugin_of_the_user_loads(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0400);
    create_host(c, c->dir);
    expect_loaded_and_usable(c, "peer");
}

/* ---- the directory ---- */

static void test_directory_writable_by_others_without_sticky_is_refused(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    assert_int_equal(chmod(c->dir, 0777), 0);
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "writable by other users and not sticky (mode 0777)");
    expect_refused(c, "good", "its directory");
}

static void test_sticky_directory_writable_by_others_is_accepted(void **state)
{
    /* Like /tmp: others may add files, but not rename or remove ours. */
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    assert_int_equal(chmod(c->dir, 01777), 0);
    create_host(c, c->dir);
    expect_loaded_and_usable(c, "peer");
    expect_loaded_and_usable(c, "good");
}

static void test_group_writable_directory_is_accepted(void **state)
{
    /* The rule for directories is "writable by others"; a group
     * that may write a plugin directory is trusted with it. */
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    assert_int_equal(chmod(c->dir, 0775), 0);
    create_host(c, c->dir);
    expect_loaded_and_usable(c, "peer");
}

static void test_directory_of_a_file_named_on_the_path_is_checked(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    assert_int_equal(chmod(c->dir, 0777), 0);
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    create_host(c, path);
    free(path);
    expect_refused(c, "peer", "its directory");
}

/* ---- the owner ---- */

static void test_plugin_owned_by_another_user_is_refused(void **state)
{
    struct security_case *c = *state;
    skip_unless_root();
    install_pair(c->dir, "peer");
    chown_in(c->dir, "accel-plugin-peer.so", NOBODY);
    create_host(c, c->dir);
    char fragment[128];
    snprintf(fragment, sizeof fragment,
             "the file is owned by uid %u, neither root nor the effective user "
             "(uid %u)",
             (unsigned)NOBODY, (unsigned)geteuid());
    expect_refused(c, "peer", fragment);
    expect_loaded_and_usable(c, "good");
}

static void test_plugin_owned_by_the_effective_user_loads(void **state)
{
    /* Presented as a process whose user is nobody: nobody's file is its
     * own, root's is trusted, and a third user's is not. */
    struct security_case *c = *state;
    skip_unless_root();
    install_pair(c->dir, "peer");
    support_install_fixture(c->dir, "high", "high");
    chown_in(c->dir, "accel-plugin-peer.so", NOBODY);
    chown_in(c->dir, "accel-plugin-high.so", NOBODY - 1);
    struct accel__ids ids = ids_plain(NOBODY);
    create_host_as(c, c->dir, &ids);
    expect_loaded_and_usable(c, "peer");
    expect_loaded_and_usable(c, "good");
    expect_refused(c, "high",
                   "owned by uid 65533, neither root nor the "
                   "effective user (uid 65534)");
}

static void test_another_users_file_is_refused_for_any_effective_user(void **state)
{
    /* Without root: a file of this user is another user's to a process
     * presented with a different effective user. */
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    uid_t me = geteuid();
    if (me == 0) {
        chown_in(c->dir, "accel-plugin-peer.so", NOBODY);
        me = NOBODY;
    }
    struct accel__ids ids = ids_plain(me + 7);
    create_host_as(c, c->dir, &ids);
    expect_refused(c, "peer", "neither root nor the effective user");
}

static void test_directory_owned_by_another_user_is_refused(void **state)
{
    /* Whoever owns the directory may swap the file after it is checked. */
    struct security_case *c = *state;
    skip_unless_root();
    install_pair(c->dir, "peer");
    assert_int_equal(chown(c->dir, NOBODY, (gid_t)-1), 0);
    create_host(c, c->dir);
    expect_refused(c, "peer", "its directory");
    expect_refused(c, "peer", "is owned by uid 65534");
}

/* ---- ACCEL_ALLOW_INSECURE_PLUGINS ---- */

static void test_insecure_override_lifts_owner_and_mode_checks(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0666);
    assert_int_equal(chmod(c->dir, 0777), 0);
    if (geteuid() == 0)
        chown_in(c->dir, "accel-plugin-good.so", NOBODY);
    setenv("ACCEL_ALLOW_INSECURE_PLUGINS", "1", 1);
    create_host(c, c->dir);
    expect_loaded_and_usable(c, "peer");
    expect_loaded_and_usable(c, "good");
}

static void test_insecure_override_keeps_kind_and_link_checks(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char *sub = support_path_in(c->dir, "accel-plugin-dir.so");
    assert_int_equal(mkdir(sub, 0755), 0);
    free(sub);
    link_in(c->dir, "accel-plugin-broken.so", "missing.so");
    setenv("ACCEL_ALLOW_INSECURE_PLUGINS", "1", 1);
    create_host(c, c->dir);
    expect_refused(c, "dir", "not a regular file");
    expect_refused(c, "broken", "broken symbolic link");
    expect_loaded_and_usable(c, "good");
}

static void test_insecure_override_needs_exactly_one(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0666);
    setenv("ACCEL_ALLOW_INSECURE_PLUGINS", "yes", 1);
    create_host(c, c->dir);
    expect_refused(c, "peer", "writable by other users");
}

/* ---- elevated privileges ---- */

static void test_elevated_process_ignores_plugin_path_variable(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    setenv("ACCEL_PLUGIN_PATH", c->dir, 1);
    struct accel__ids ids = ids_setuid();
    create_host_as(c, NULL, &ids);

    assert_null(support_find_plugin(c->host, "good", 0));
    const char *const *entries = NULL;
    size_t count = 0;
    accel_host_search_path(c->host, &entries, &count);
    for (size_t i = 0; i < count; i++)
        assert_string_not_equal(entries[i], c->dir);
}

static void test_plain_process_reads_plugin_path_variable(void **state)
{
    /* The same as above with plain ids: the variable is what decided. */
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    setenv("ACCEL_PLUGIN_PATH", c->dir, 1);
    struct accel__ids ids = ids_real();
    create_host_as(c, NULL, &ids);
    expect_loaded_and_usable(c, "good");
}

static void test_elevated_process_ignores_backend_variable(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    setenv("ACCEL_BACKEND", "nosuch", 1);
    struct accel__ids ids = ids_setgid();
    /* The program's own options still apply: it chose them. */
    create_host_as(c, c->dir, &ids);
    accel_device *device = NULL;
    assert_status(accel_device_open_selected(c->host, &device), ACCEL_OK);
    accel_device_info info;
    assert_status(accel_device_info_get(device, &info), ACCEL_OK);
    assert_string_equal(info.plugin, "good");
    accel_device_close(device);
}

static void test_elevated_process_ignores_insecure_override(void **state)
{
    struct security_case *c = *state;
    install_pair(c->dir, "peer");
    chmod_in(c->dir, "accel-plugin-peer.so", 0664);
    setenv("ACCEL_ALLOW_INSECURE_PLUGINS", "1", 1);
    struct accel__ids ids = ids_setuid();
    create_host_as(c, c->dir, &ids);
    expect_refused(c, "peer", "writable by its group");
    expect_loaded_and_usable(c, "good");
}

static void test_elevated_process_ignores_trace_variable(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char *trace = support_path_in(c->dir, "trace.json");
    setenv("ACCEL_TRACE", trace, 1);
    struct accel__ids ids = ids_setuid();
    create_host_as(c, c->dir, &ids);
    accel_host_destroy(c->host);
    c->host = NULL;
    /* Nothing was traced, and no file was made where the variable said. */
    assert_false(accel__tracing());
    assert_int_equal(access(trace, F_OK), -1);
    free(trace);
}

static void test_elevated_ids_hide_every_variable(void **state)
{
    (void)state;
    struct accel__ids plain = ids_real();
    struct accel__ids setuid_ids = ids_setuid();
    struct accel__ids setgid_ids = ids_setgid();
    if (accel__ids_elevated(&plain)) {
        print_message("skipped: this process itself runs elevated\n");
        skip();
    }
    assert_true(accel__ids_elevated(&setuid_ids));
    assert_true(accel__ids_elevated(&setgid_ids));
    const char *names[] = {"ACCEL_PLUGIN_PATH",  "ACCEL_BACKEND",
                           "ACCEL_LOG",          "ACCEL_ALLOW_INSECURE_PLUGINS",
                           "ACCEL_NULL_DEVICES", "ACCEL_STAGING_CHUNK",
                           "ACCEL_TRACE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        setenv(names[i], "1", 1);
        assert_string_equal(accel__getenv_as(&plain, names[i]), "1");
        assert_null(accel__getenv_as(&setuid_ids, names[i]));
        assert_null(accel__getenv_as(&setgid_ids, names[i]));
        unsetenv(names[i]);
    }
}

static void test_plugins_read_variables_through_the_same_decision(void **state)
{
    /* A plugin's variables (ACCEL_NULL_*, ACCEL_CUDA_*) come through its
     * services table: the host's own getenv, with the process's ids. */
    (void)state;
    assert_ptr_equal(accel__services.getenv, accel__getenv);
    setenv("ACCEL_NULL_DEVICES", "3", 1);
    assert_string_equal(accel__services.getenv("ACCEL_NULL_DEVICES"), "3");
    unsetenv("ACCEL_NULL_DEVICES");
}

/* ---- symbolic links ---- */

static void test_link_to_a_safe_plugin_is_followed(void **state)
{
    struct security_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "peer", "peer");
    char *target = support_path_in(c->dir2, "accel-plugin-peer.so");
    link_in(c->dir, "accel-plugin-peer.so", target);
    free(target);
    create_host(c, c->dir);
    const accel_plugin_info *info = support_expect_plugin(c->host, "peer",
                                                          ACCEL_PLUGIN_LOADED);
    /* Listed under the path it was found by. */
    assert_contains(info->path, c->dir);
    expect_loaded_and_usable(c, "peer");
}

static void test_relative_link_is_relative_to_its_directory(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char *sub = support_path_in(c->dir, "lib");
    assert_int_equal(mkdir(sub, 0755), 0);
    support_install_fixture(sub, "peer", "peer");
    free(sub);
    link_in(c->dir, "accel-plugin-peer.so", "lib/accel-plugin-peer.so");
    create_host(c, c->dir);
    expect_loaded_and_usable(c, "peer");
}

static void test_link_to_a_link_is_refused(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "peer", "real");
    link_in(c->dir, "middle.so", "accel-plugin-real.so");
    link_in(c->dir, "accel-plugin-peer.so", "middle.so");
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "itself a symbolic link: only one link is followed");
}

static void test_link_to_a_group_writable_file_is_refused(void **state)
{
    struct security_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "peer", "peer");
    chmod_in(c->dir2, "accel-plugin-peer.so", 0664);
    char *target = support_path_in(c->dir2, "accel-plugin-peer.so");
    link_in(c->dir, "accel-plugin-peer.so", target);
    free(target);
    create_host(c, c->dir);
    expect_refused(c, "peer", "the file is writable by its group");
}

static void test_link_into_a_directory_writable_by_others_is_refused(void **state)
{
    struct security_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir2, "peer", "peer");
    assert_int_equal(chmod(c->dir2, 0777), 0);
    char *target = support_path_in(c->dir2, "accel-plugin-peer.so");
    link_in(c->dir, "accel-plugin-peer.so", target);
    free(target);
    create_host(c, c->dir);
    expect_refused(c, "peer", "the directory of its link's target,");
    expect_refused(c, "peer", "writable by other users and not sticky");
    expect_loaded_and_usable(c, "good");
}

static void test_link_in_a_directory_writable_by_others_is_refused(void **state)
{
    /* A safe target does not make the link safe: others may replace it. */
    struct security_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir2, "peer", "peer");
    char *target = support_path_in(c->dir2, "accel-plugin-peer.so");
    link_in(c->dir, "accel-plugin-peer.so", target);
    free(target);
    assert_int_equal(chmod(c->dir, 0777), 0);
    create_host(c, c->dir);
    expect_refused(c, "peer", "its directory");
}

static void test_link_to_a_directory_is_refused(void **state)
{
    struct security_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char *sub = support_path_in(c->dir, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    free(sub);
    link_in(c->dir, "accel-plugin-peer.so", "sub");
    create_host(c, c->dir);
    expect_refused(c, "peer", "not a regular file: a directory");
}

static void test_broken_link_named_on_the_path_is_listed(void **state)
{
    struct security_case *c = *state;
    link_in(c->dir, "accel-plugin-peer.so", "gone.so");
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    create_host(c, path);
    free(path);
    expect_refused(c, "peer", "a broken symbolic link to gone.so");
}

/* ---- a real setuid program ---- */

#define SETUID_CHILD "--setuid-child"

/* In the setuid copy: say what it is and what libaccel lets it read. */
static int setuid_child(void)
{
    const char *path = accel__getenv("ACCEL_PLUGIN_PATH");
    const char *devices = accel__services.getenv("ACCEL_NULL_DEVICES");
    printf("euid=%u ruid=%u secure=%lu path=%s devices=%s\n",
           (unsigned)geteuid(), (unsigned)getuid(), getauxval(AT_SECURE),
           path ? path : "(null)", devices ? devices : "(null)");
    fflush(stdout);
    /* No exit handlers: a leak checker cannot trace a setuid process. */
    _exit(0);
}

/* Run `program` SETUID_CHILD with the variables set; its one line. */
static void run_setuid_child(const char *program, char *line, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        setenv("ACCEL_PLUGIN_PATH", "/accel-test-path", 1);
        setenv("ACCEL_NULL_DEVICES", "3", 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        execl(program, program, SETUID_CHILD, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *out = fdopen(fds[0], "r");
    assert_non_null(out);
    if (fgets(line, (int)size, out) == NULL)
        line[0] = '\0';
    fclose(out);
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
}

static void test_real_setuid_program_ignores_every_variable(void **state)
{
    struct security_case *c = *state;
    skip_unless_root();
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(length > 0);
    self[length] = '\0';
    support_copy_file(self, c->dir, "setuid-copy");
    char *copy = support_path_in(c->dir, "setuid-copy");
    assert_int_equal(chown(copy, NOBODY, (gid_t)-1), 0);
    assert_int_equal(chmod(copy, 04755), 0);

    char line[512];
    run_setuid_child(copy, line, sizeof line);
    free(copy);
    unsigned euid = 0, ruid = 0;
    unsigned long secure = 0;
    char path[256] = "", devices[256] = "";
    assert_int_equal(sscanf(line,
                            "euid=%u ruid=%u secure=%lu path=%255s "
                            "devices=%255s",
                            &euid, &ruid, &secure, path, devices),
                     5);
    if (euid == ruid) {
        print_message("skipped: setuid bits are not honoured here (a nosuid "
                      "mount or no_new_privs)\n");
        skip();
    }
    assert_int_equal(euid, NOBODY);
    assert_int_equal(secure, 1);
    assert_string_equal(path, "(null)");
    assert_string_equal(devices, "(null)");
}

static void
test_process_that_changed_its_effective_user_ignores_variables(void **state)
{
    /* A root daemon that took another effective user after it started is
     * not in secure mode, so secure_getenv alone would still answer. */
    (void)state;
    skip_unless_root();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("ACCEL_PLUGIN_PATH", "/accel-test-path", 1);
        bool ok = seteuid(NOBODY) == 0 &&
                  secure_getenv("ACCEL_PLUGIN_PATH") != NULL &&
                  accel__getenv("ACCEL_PLUGIN_PATH") == NULL;
        _exit(ok ? 0 : 1);
    }
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
}

#define SECURITY_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], SETUID_CHILD) == 0)
        return setuid_child();
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        SECURITY_TEST(test_group_writable_plugin_is_refused),
        SECURITY_TEST(test_elevated_process_ignores_trace_variable),
        SECURITY_TEST(test_plugin_writable_by_others_is_refused),
        SECURITY_TEST(test_read_only_plugin_of_the_user_loads),
        SECURITY_TEST(test_directory_writable_by_others_without_sticky_is_refused),
        SECURITY_TEST(test_sticky_directory_writable_by_others_is_accepted),
        SECURITY_TEST(test_group_writable_directory_is_accepted),
        SECURITY_TEST(test_directory_of_a_file_named_on_the_path_is_checked),
        SECURITY_TEST(test_plugin_owned_by_another_user_is_refused),
        SECURITY_TEST(test_plugin_owned_by_the_effective_user_loads),
        SECURITY_TEST(test_another_users_file_is_refused_for_any_effective_user),
        SECURITY_TEST(test_directory_owned_by_another_user_is_refused),
        SECURITY_TEST(test_insecure_override_lifts_owner_and_mode_checks),
        SECURITY_TEST(test_insecure_override_keeps_kind_and_link_checks),
        SECURITY_TEST(test_insecure_override_needs_exactly_one),
        SECURITY_TEST(test_elevated_process_ignores_plugin_path_variable),
        SECURITY_TEST(test_plain_process_reads_plugin_path_variable),
        SECURITY_TEST(test_elevated_process_ignores_backend_variable),
        SECURITY_TEST(test_elevated_process_ignores_insecure_override),
        SECURITY_TEST(test_elevated_ids_hide_every_variable),
        SECURITY_TEST(test_plugins_read_variables_through_the_same_decision),
        SECURITY_TEST(test_link_to_a_safe_plugin_is_followed),
        SECURITY_TEST(test_relative_link_is_relative_to_its_directory),
        SECURITY_TEST(test_link_to_a_link_is_refused),
        SECURITY_TEST(test_link_to_a_group_writable_file_is_refused),
        SECURITY_TEST(test_link_into_a_directory_writable_by_others_is_refused),
        SECURITY_TEST(test_link_in_a_directory_writable_by_others_is_refused),
        SECURITY_TEST(test_link_to_a_directory_is_refused),
        SECURITY_TEST(test_broken_link_named_on_the_path_is_listed),
        SECURITY_TEST(test_real_setuid_program_ignores_every_variable),
        SECURITY_TEST(
            test_process_that_changed_its_effective_user_ignores_variables),
    };
    return cmocka_run_group_tests_name("security", tests, NULL, NULL);
}
