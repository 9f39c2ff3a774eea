/*
 * What the loader checks is what it loads: the file is opened once and
 * checked and loaded through its descriptor (a swap between the check and
 * the load changes nothing), a descriptor's name never gives back another
 * plugin, links in directories others can write need a trusted owner,
 * POSIX ACLs count as write access, relative path entries are resolved
 * against the working directory, damaged files are refused before dlopen,
 * a directory stuffed with candidates is refused quickly, and log lines
 * escape control characters.
 *
 * It links libaccel's objects for the test seam (accel__plugin_file_test_hook)
 * and the catalog. Cases that crash-test or change process-wide state
 * (the log level, LD_LIBRARY_PATH) run in child processes.
 */
#include "support.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "loader.h"
#include "plugin_file.h"

#define NOBODY ((uid_t)65534)

struct sec_case {
    char *dir;
    char *dir2;
    accel_host *host;
};

static int setup(void **state)
{
    struct sec_case *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    support_clean_environment();
    c->dir = support_make_temp_dir();
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct sec_case *c = *state;
    accel__plugin_file_test_hook = NULL;
    accel_host_destroy(c->host);
    support_remove_dir(c->dir);
    support_remove_dir(c->dir2);
    support_clean_environment();
    free(c);
    return 0;
}

static void create_host(struct sec_case *c, const char *plugin_path)
{
    accel_host_options options = {.plugin_path = plugin_path};
    assert_status(accel_host_create(&options, &c->host), ACCEL_OK);
}

static void expect_refused(struct sec_case *c, const char *name,
                           const char *fragment)
{
    const accel_plugin_info *info = support_expect_plugin(c->host, name,
                                                          ACCEL_PLUGIN_REJECTED);
    assert_contains(info->reason, fragment);
}

static void expect_usable(struct sec_case *c, const char *name, uint32_t devices)
{
    const accel_plugin_info *info = support_expect_plugin(c->host, name,
                                                          ACCEL_PLUGIN_LOADED);
    assert_int_equal(info->device_count, devices);
    accel_device *device = NULL;
    assert_status(accel_device_open(c->host, name, 0, &device), ACCEL_OK);
    accel_device_close(device);
}

static void skip_unless_root(void)
{
    if (geteuid() != 0) {
        print_message("skipped: needs root to give a file to another user\n");
        skip();
    }
}

/* A child's exit status for "skip this test", with the reason printed. */
#define SKIP_EXIT 77

/* Wait for a child and require that it exited with 0, not a signal. */
static void expect_child_ok(pid_t pid, const char *what)
{
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == SKIP_EXIT) {
        print_message("skipped: %s: the child could not set the case up\n", what);
        skip();
    }
    if (WIFSIGNALED(wstatus))
        fail_msg("%s: the child died of signal %d", what, WTERMSIG(wstatus));
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
        fail_msg("%s: the child exited with %d", what, WEXITSTATUS(wstatus));
}

/*
 * Run this test program again as `mode` ARG, in a fresh process (exec, not
 * only fork: a process of its own for the log level, and one that a
 * valgrind run leaves alone), after `prepare` (may be NULL) has run in the
 * child; require it to exit with 0.
 */
static void run_self(const char *mode, const char *arg, bool (*prepare)(void),
                     const char *what)
{
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(length > 0);
    self[length] = '\0';
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (prepare != NULL && !prepare())
            _exit(SKIP_EXIT);
        execl(self, self, mode, arg, (char *)NULL);
        _exit(127);
    }
    expect_child_ok(pid, what);
}

/* ---- check then load: the same inode ---- */

static char swap_from[4096];
static struct stat checked;

/* The seam: the file has passed every check; replace it by name now. */
static void swap_after_check(const char *shown, int fd)
{
    assert_int_equal(fstat(fd, &checked), 0);
    assert_int_equal(rename(swap_from, shown), 0);
}

static void test_file_swapped_between_check_and_load_is_not_what_loads(void **state)
{
    struct sec_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "peer", "peer");
    /* Same name, three devices instead of one: the file an attacker swaps
     * in. It is even refused by the checks (group-writable). */
    support_install_fixture(c->dir2, "peer3", "peer");
    char *other = support_path_in(c->dir2, "accel-plugin-peer.so");
    assert_int_equal(chmod(other, 0666), 0);
    snprintf(swap_from, sizeof swap_from, "%s", other);
    free(other);
    accel__plugin_file_test_hook = swap_after_check;
    create_host(c, c->dir);
    accel__plugin_file_test_hook = NULL;

    /* The checked file loaded: one device, not three. */
    expect_usable(c, "peer", 1);
    /* And the object mapped is the inode checked, not the one now at the
     * path. */
    struct accel__plugin *plugin = accel__catalog_find(&c->host->catalog,
                                                       "peer");
    assert_non_null(plugin);
    assert_non_null(plugin->dl);
    struct link_map *map = NULL;
    assert_int_equal(dlinfo(plugin->dl, RTLD_DI_LINKMAP, &map), 0);
    dev_t dev = 0;
    ino_t ino = 0;
    assert_true(accel__mapped_file(map->l_ld, &dev, &ino));
    assert_true(dev == checked.st_dev);
    assert_true(ino == checked.st_ino);
    struct stat now;
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    assert_int_equal(stat(path, &now), 0);
    free(path);
    assert_true(now.st_ino != checked.st_ino);
}

static void test_descriptor_names_never_give_back_another_plugin(void **state)
{
    /*
     * Objects the dynamic loader keeps under the names /proc/self/fd/N of
     * the next free descriptors (as a plugin that dlclose cannot unload
     * leaves behind): the loader's own descriptors get those numbers, and
     * the plugin must still load as itself, not as the object kept.
     */
    struct sec_case *c = *state;
    c->dir2 = support_make_temp_dir();
    enum { KEPT = 8 };
    void *kept[KEPT];
    int fds[KEPT];
    for (int i = 0; i < KEPT; i++) {
        char name[32];
        snprintf(name, sizeof name, "kept%d", i);
        support_install_fixture(c->dir2, "high", name);
        char file[64];
        snprintf(file, sizeof file, "accel-plugin-%s.so", name);
        char *path = support_path_in(c->dir2, file);
        fds[i] = open(path, O_RDONLY | O_CLOEXEC);
        free(path);
        assert_true(fds[i] >= 0);
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fds[i]);
        kept[i] = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
        assert_non_null(kept[i]);
    }
    for (int i = 0; i < KEPT; i++)
        close(fds[i]);
    support_install_fixture(c->dir, "peer", "peer");
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);
    expect_usable(c, "peer", 1);
    expect_usable(c, "good", 2);
    accel_host_destroy(c->host);
    c->host = NULL;
    for (int i = 0; i < KEPT; i++)
        dlclose(kept[i]);
}

static void test_two_hosts_load_the_same_plugin_file(void **state)
{
    /* The second load finds the object the first holds, under the first
     * descriptor's name: the same inode, so it is accepted. */
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);
    accel_host *second = NULL;
    accel_host_options options = {.plugin_path = c->dir};
    assert_status(accel_host_create(&options, &second), ACCEL_OK);
    const accel_plugin_info *info = support_expect_plugin(second, "good",
                                                          ACCEL_PLUGIN_LOADED);
    assert_int_equal(info->device_count, 2);
    accel_host_destroy(second);
    expect_usable(c, "good", 2);
}

#define NO_PROC_CHILD "--no-proc-child"

/* In the child, before the exec: a mount namespace without /proc. */
static bool hide_proc(void)
{
    return unshare(CLONE_NEWNS) == 0 &&
           mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
           umount2("/proc", MNT_DETACH) == 0;
}

/* With /proc gone: the plugin is refused with the reason, not loaded. */
static int no_proc_child(const char *dir)
{
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = dir};
    if (accel_host_create(&options, &host) != ACCEL_OK)
        return 3;
    const accel_plugin_info *info = support_find_plugin(host, "good", 0);
    int code = info != NULL && info->state == ACCEL_PLUGIN_REJECTED &&
                       strstr(info->reason, "is /proc mounted?") != NULL
                   ? 0
                   : 4;
    if (code != 0)
        fprintf(stderr, "good: %s\n",
                info && info->reason ? info->reason : "loaded");
    accel_host_destroy(host);
    /* _exit: LeakSanitizer's check at exit needs /proc (to find the
     * threads) and would fail this process whatever libaccel did; it cannot
     * be turned off here either, since it reads its options from /proc. */
    fflush(stderr);
    _exit(code);
}

static void test_without_proc_the_plugin_is_refused_not_loaded_by_path(void **state)
{
    struct sec_case *c = *state;
    skip_unless_root();
    support_install_fixture(c->dir, "good", "good");
    run_self(NO_PROC_CHILD, c->dir, hide_proc,
             "without /proc (a mount namespace)");
}

/* ---- links in directories others can write ---- */

static void test_link_of_another_user_in_a_sticky_directory_is_refused(void **state)
{
    struct sec_case *c = *state;
    skip_unless_root();
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir2, "peer", "peer");
    char *target = support_path_in(c->dir2, "accel-plugin-peer.so");
    char *link = support_path_in(c->dir, "accel-plugin-peer.so");
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(lchown(link, NOBODY, (gid_t)-1), 0);
    assert_int_equal(chmod(c->dir, 01777), 0);
    support_install_fixture(c->dir, "good", "good");
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "the symbolic link is owned by uid 65534, neither "
                   "root nor the effective user (uid 0), in a "
                   "directory others can write to");
    expect_usable(c, "good", 2);
    accel_host_destroy(c->host);
    c->host = NULL;
    /* The same link, owned by root, is followed. */
    assert_int_equal(lchown(link, 0, (gid_t)-1), 0);
    create_host(c, c->dir);
    expect_usable(c, "peer", 1);
    free(link);
    free(target);
}

/* ---- POSIX ACLs ---- */

/* setfacl ARGS on PATH; skip the test when ACLs cannot be set here. */
static void setfacl_or_skip(const char *args, const char *path)
{
    char command[8192];
    snprintf(command, sizeof command, "setfacl %s '%s' 2>/dev/null", args, path);
    int rc = system(command);
    if (rc != 0) {
        print_message("skipped: setfacl %s failed (no acl tools, or no ACL "
                      "support on this file system)\n",
                      args);
        skip();
    }
}

static void
test_file_writable_by_another_user_through_an_acl_is_refused(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    support_install_fixture(c->dir, "peer", "peer");
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    setfacl_or_skip("-m u:65534:rw", path);
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "the file is writable by uid 65534 through its ACL "
                   "(system.posix_acl_access)");
    expect_usable(c, "good", 2);
    accel_host_destroy(c->host);
    c->host = NULL;
    /* An ACL entry without write, or whose write the mask takes away, is
     * no write access. */
    setfacl_or_skip("-m u:65534:r,m::r", path);
    create_host(c, c->dir);
    expect_usable(c, "peer", 1);
    free(path);
}

static void
test_file_writable_by_a_named_group_through_an_acl_is_refused(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "peer", "peer");
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    setfacl_or_skip("-m g:65534:w", path);
    free(path);
    create_host(c, c->dir);
    expect_refused(c, "peer", "writable by gid 65534 through its ACL");
}

static void
test_directory_writable_by_another_user_through_an_acl_is_refused(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "peer", "peer");
    setfacl_or_skip("-m u:65534:rwx", c->dir);
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "is writable by uid 65534 through its ACL "
                   "(system.posix_acl_access) and not sticky");
}

static void test_directory_default_acl_granting_write_is_refused(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "peer", "peer");
    setfacl_or_skip("-d -m u:65534:rw", c->dir);
    create_host(c, c->dir);
    expect_refused(c, "peer",
                   "through its default ACL (system.posix_acl_default)");
}

static void test_insecure_override_lifts_the_acl_checks(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "peer", "peer");
    char *path = support_path_in(c->dir, "accel-plugin-peer.so");
    setfacl_or_skip("-m u:65534:rw", path);
    free(path);
    setfacl_or_skip("-m u:65534:rwx", c->dir);
    setenv("ACCEL_ALLOW_INSECURE_PLUGINS", "1", 1);
    create_host(c, c->dir);
    expect_usable(c, "peer", 1);
}

/* ---- relative entries ---- */

#define RELATIVE_CHILD "--relative-child"

/* In a child started with LD_LIBRARY_PATH at another copy: which loads? */
static int relative_child(void)
{
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = "accel-plugin-peer.so"};
    if (accel_host_create(&options, &host) != ACCEL_OK)
        return 3;
    const accel_plugin_info *info = support_find_plugin(host, "peer", 0);
    int code = info == NULL                         ? 4
               : info->state != ACCEL_PLUGIN_LOADED ? 5
               : info->device_count == 1            ? 0
                                                    : 6;
    accel_host_destroy(host);
    return code;
}

static void test_relative_entry_is_the_file_in_the_working_directory(void **state)
{
    /* A bare name was checked in the working directory and then looked up
     * by dlopen on the library path, which found another file. */
    struct sec_case *c = *state;
    c->dir2 = support_make_temp_dir();
    support_install_fixture(c->dir, "peer", "peer");
    support_install_fixture(c->dir2, "peer3", "peer");
    assert_int_equal(setenv("LD_LIBRARY_PATH", c->dir2, 1), 0);
    char *cwd = getcwd(NULL, 0);
    assert_non_null(cwd);
    assert_int_equal(chdir(c->dir), 0);
    run_self(RELATIVE_CHILD, "", NULL, "relative entry");
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    unsetenv("LD_LIBRARY_PATH");
}

static void test_relative_entry_is_listed_resolved(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "peer", "peer");
    char *cwd = getcwd(NULL, 0);
    assert_non_null(cwd);
    assert_int_equal(chdir(c->dir), 0);
    create_host(c, "accel-plugin-peer.so");
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    const char *const *entries = NULL;
    size_t count = 0;
    accel_host_search_path(c->host, &entries, &count);
    assert_true(count >= 1);
    char *expected = support_path_in(c->dir, "accel-plugin-peer.so");
    assert_string_equal(entries[0], expected);
    const accel_plugin_info *info = support_expect_plugin(c->host, "peer",
                                                          ACCEL_PLUGIN_LOADED);
    assert_string_equal(info->path, expected);
    free(expected);
}

/* ---- damaged files ---- */

/* Write `size` bytes of the good fixture cut at `cut`, the rest garbage. */
static void write_damaged(const char *dir, const char *name, const void *good,
                          size_t cut, size_t size)
{
    unsigned char *bytes = malloc(size ? size : 1);
    assert_non_null(bytes);
    memcpy(bytes, good, cut);
    uint32_t x = 2463534242u ^ (uint32_t)cut;
    for (size_t i = cut; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes[i] = (unsigned char)x;
    }
    char file[128];
    snprintf(file, sizeof file, "accel-plugin-%s.so", name);
    char *path = support_path_in(dir, file);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, size, out), size);
    fclose(out);
    assert_int_equal(chmod(path, 0644), 0);
    free(path);
    free(bytes);
}

#define DAMAGED_CHILD "--damaged-child"

/* In a child: the damaged plugin is refused before dlopen, good still works. */
static int damaged_child(const char *name)
{
    const char *dir = getenv("ACCEL_TEST_DIR");
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = dir};
    if (dir == NULL || accel_host_create(&options, &host) != ACCEL_OK)
        return 3;
    const accel_plugin_info *bad = support_find_plugin(host, name, 0);
    const accel_plugin_info *good = support_find_plugin(host, "good", 0);
    int code = 0;
    if (bad == NULL || bad->state != ACCEL_PLUGIN_REJECTED ||
        strstr(bad->reason, "not a loadable shared object: ") == NULL)
        code = 4;
    else if (good == NULL || good->state != ACCEL_PLUGIN_LOADED)
        code = 5;
    accel_host_destroy(host);
    return code;
}

static void load_damaged_in_child(const char *dir, const char *name)
{
    char what[128];
    snprintf(what, sizeof what, "plugin %s", name);
    assert_int_equal(setenv("ACCEL_TEST_DIR", dir, 1), 0);
    run_self(DAMAGED_CHILD, name, NULL, what);
    unsetenv("ACCEL_TEST_DIR");
}

static void test_truncated_or_garbled_plugin_is_refused_without_a_crash(void **state)
{
    struct sec_case *c = *state;
    char from[4096];
    snprintf(from, sizeof from, "%s/fixture-peer.so", FIXTURE_DIR);
    size_t size = 0;
    void *good = support_read_file(from, &size);
    support_install_fixture(c->dir, "good", "good");
    for (unsigned percent = 1; percent <= 95;
         percent = percent == 1 ? 5 : percent + 5) {
        size_t cut = size * percent / 100;
        char name[32];
        snprintf(name, sizeof name, "cut%u", percent);
        write_damaged(c->dir, name, good, cut, cut);
        load_damaged_in_child(c->dir, name);
        snprintf(name, sizeof name, "garbled%u", percent);
        write_damaged(c->dir, name, good, cut, size);
        load_damaged_in_child(c->dir, name);
    }
    free(good);
}

/* ---- CPU module images: the same checks in the null plugin ---- */

/* The image's dynamic entry of tag `tag` (found through its PT_DYNAMIC). */
static ElfW(Dyn) *
    image_dynamic_entry(unsigned char *image, size_t size, int64_t tag)
{
    ElfW(Ehdr) header;
    assert_true(size >= sizeof header);
    memcpy(&header, image, sizeof header);
    for (unsigned i = 0; i < header.e_phnum; i++) {
        ElfW(Phdr) *segment = (ElfW(Phdr) *)(image + header.e_phoff +
                                             (size_t)i * sizeof *segment);
        if (segment->p_type != PT_DYNAMIC)
            continue;
        ElfW(Dyn) *entry = (ElfW(Dyn) *)(image + segment->p_offset);
        for (; entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == tag)
                return entry;
        }
    }
    fail_msg("the image has no dynamic entry %lld", (long long)tag);
    return NULL;
}

#define MODULE_CHILD "--module-child"

/* In a child: loading the image in $ACCEL_TEST_IMAGE fails with
 * ACCEL_ERR_MODULE and a detail holding `fragment`. */
static int module_child(const char *fragment)
{
    const char *path = getenv("ACCEL_TEST_IMAGE");
    size_t size = 0;
    void *image = path ? support_read_file(path, &size) : NULL;
    struct support_null null;
    accel_module *module = NULL;
    int code = image == NULL                         ? 2
               : support_null_open(&null, NULL) != 0 ? 3
               : accel_module_load(null.device, image, size, &module) !=
                       ACCEL_ERR_MODULE
                   ? 4
               : strstr(accel_last_error(), fragment) == NULL ? 5
                                                              : 0;
    if (code >= 4)
        fprintf(stderr, "detail: %s\n", accel_last_error());
    accel_module_unload(module);
    if (code != 2 && code != 3)
        support_null_close(&null);
    free(image);
    return code;
}

/* Write `image` to a file and load it in a child: refused with `fragment`. */
static void module_load_refused_in_child(const char *dir, const void *image,
                                         size_t size, const char *fragment)
{
    char *path = support_path_in(dir, "image.so");
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(image, 1, size, out), size);
    fclose(out);
    assert_int_equal(setenv("ACCEL_TEST_IMAGE", path, 1), 0);
    run_self(MODULE_CHILD, fragment, NULL, fragment);
    unsetenv("ACCEL_TEST_IMAGE");
    free(path);
}

static void test_cpu_image_with_a_corrupt_dynamic_entry_is_refused(void **state)
{
    struct sec_case *c = *state;
    size_t size = 0;
    unsigned char *image = support_read_file(TESTING_CPU_IMAGE, &size);
    ElfW(Dyn) *strtab = image_dynamic_entry(image, size, DT_STRTAB);
    ElfW(Addr) kept = strtab->d_un.d_ptr;
    strtab->d_un.d_ptr = (ElfW(Addr))0x7ff000000000ull;
    module_load_refused_in_child(c->dir, image, size, "dynamic entry");
    module_load_refused_in_child(c->dir, image, size, "(DT_STRTAB:");
    strtab->d_un.d_ptr = kept;
    /* A dynamic section that points past the image. */
    ElfW(Ehdr) header;
    memcpy(&header, image, sizeof header);
    for (unsigned i = 0; i < header.e_phnum; i++) {
        ElfW(Phdr) *segment = (ElfW(Phdr) *)(image + header.e_phoff +
                                             (size_t)i * sizeof *segment);
        if (segment->p_type == PT_DYNAMIC)
            segment->p_offset = size + 4096;
    }
    module_load_refused_in_child(c->dir, image, size, "the dynamic section");
    free(image);
}

/* ---- many candidates ---- */

/*
 * A scratch directory for tens of thousands of files: in memory (/dev/shm)
 * where there is one, so that making them costs the disk nothing; /tmp
 * otherwise. Removed with support_remove_dir.
 */
static char *make_crowd_dir(void)
{
    char *dir = strdup("/dev/shm/accel-test-XXXXXX");
    assert_non_null(dir);
    if (mkdtemp(dir) != NULL)
        return dir;
    free(dir);
    return support_make_temp_dir();
}

static void make_candidates(const char *dir, unsigned count, unsigned first)
{
    for (unsigned i = 0; i < count; i++) {
        char file[64];
        snprintf(file, sizeof file, "accel-plugin-f%u.so", first + i);
        char *path = support_path_in(dir, file);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x", 1), 1);
        close(fd);
        free(path);
    }
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_directory_with_more_candidates_than_the_cap_is_refused_quickly(void **state)
{
    struct sec_case *c = *state;
    char *crowd = make_crowd_dir();
    make_candidates(crowd, 5000, 0);
    support_install_fixture(c->dir, "good", "good");
    char path[8192];
    snprintf(path, sizeof path, "%s:%s", crowd, c->dir);
    double start = cpu_seconds();
    create_host(c, path);
    double spent = cpu_seconds() - start;
    /* Listed as one refused entry, with the reason; nothing in it is
     * opened; the other directory is still searched. */
    assert_int_equal(support_plugin_count(c->host), 2);
    const accel_plugin_info *list = NULL;
    size_t count = 0;
    accel_host_plugins(c->host, &list, &count);
    assert_string_equal(list[0].path, crowd);
    assert_int_equal(list[0].state, ACCEL_PLUGIN_REJECTED);
    assert_contains(list[0].reason,
                    "more than 4096 files named accel-plugin-*.so");
    expect_usable(c, "good", 2);
    /* Counting 5,000 names costs milliseconds, where opening each would
     * cost a hundred times more; a generous bound all the same. */
    assert_true(spent < 5.0);
    support_remove_dir(crowd);
}

/* CPU time of one discovery over `dirs` directories of `per_dir` candidates. */
static double discovery_cpu(unsigned dirs, unsigned per_dir, char **paths)
{
    size_t length = 0;
    for (unsigned i = 0; i < dirs; i++)
        length += strlen(paths[i]) + 1;
    char *path = calloc(length + 1, 1);
    assert_non_null(path);
    for (unsigned i = 0; i < dirs; i++) {
        strcat(path, paths[i]);
        if (i + 1 < dirs)
            strcat(path, ":");
    }
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = path};
    double start = cpu_seconds();
    assert_status(accel_host_create(&options, &host), ACCEL_OK);
    double spent = cpu_seconds() - start;
    assert_int_equal(support_plugin_count(host), (size_t)dirs * per_dir);
    accel_host_destroy(host);
    free(path);
    return spent;
}

static void test_discovery_of_50000_candidates_grows_near_linearly(void **state)
{
    /*
     * 50 directories of 1,000 candidates each (under the cap), against 5 of
     * them: ten times the candidates must cost well under the hundred times
     * a quadratic discovery would (the earlier loader compared each
     * candidate with every one before it). CPU time, not wall time, and the
     * best of three, so that a loaded machine does not decide.
     */
    (void)state;
    enum { DIRS = 50, PER_DIR = 1000 };
    char *paths[DIRS];
    for (unsigned i = 0; i < DIRS; i++) {
        paths[i] = make_crowd_dir();
        make_candidates(paths[i], PER_DIR, i * PER_DIR);
    }
    double small = 1e9, large = 1e9;
    for (int round = 0; round < 3; round++) {
        double s = discovery_cpu(DIRS / 10, PER_DIR, paths);
        double l = discovery_cpu(DIRS, PER_DIR, paths);
        small = s < small ? s : small;
        large = l < large ? l : large;
    }
    print_message("discovery CPU time: 5,000 candidates %.3f s, 50,000 %.3f s "
                  "(x%.1f)\n",
                  small, large, large / small);
    for (unsigned i = 0; i < DIRS; i++)
        support_remove_dir(paths[i]);
    assert_true(large < 30.0 * small + 0.05);
}

/* ---- log lines ---- */

#define LOG_CHILD "--log-child"

/* In a fresh process with ACCEL_LOG=info: discover `dir`. */
static int log_child(const char *dir)
{
    accel_host *host = NULL;
    accel_host_options options = {.plugin_path = dir};
    accel_status status = accel_host_create(&options, &host);
    accel_host_destroy(host);
    return status == ACCEL_OK ? 0 : 3;
}

static void test_log_line_escapes_control_characters_in_a_file_name(void **state)
{
    struct sec_case *c = *state;
    support_install_fixture(c->dir, "good", "good");
    char *evil = support_path_in(c->dir, "accel-plugin-\x1b[31mred.so");
    FILE *file = fopen(evil, "w");
    assert_non_null(file);
    fputs("not a plugin", file);
    fclose(file);
    free(evil);
    char *log_path = support_path_in(c->dir, "log.txt");
    /* The level is read once per process: a fresh one, with stderr in a
     * file. */
    int saved = dup(STDERR_FILENO);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    assert_int_equal(setenv("ACCEL_LOG", "info", 1), 0);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    close(fd);
    run_self(LOG_CHILD, c->dir, NULL, "ACCEL_LOG=info");
    dup2(saved, STDERR_FILENO);
    close(saved);
    unsetenv("ACCEL_LOG");
    size_t size = 0;
    char *text = support_read_file(log_path, &size);
    free(log_path);
    text[size] = '\0';
    assert_contains(text, "accel-plugin-\\x1b[31mred.so");
    assert_null(memchr(text, 0x1b, size));
    /* Every line is one line: no control byte but the newlines. */
    for (size_t i = 0; i < size; i++)
        assert_true((unsigned char)text[i] >= 0x20 || text[i] == '\n');
    free(text);
}

static void test_reason_escapes_control_characters_as_accel_info_does(void **state)
{
    struct sec_case *c = *state;
    char *evil = support_path_in(c->dir, "accel-plugin-bad\x07name.so");
    FILE *file = fopen(evil, "w");
    assert_non_null(file);
    fputs("x", file);
    fclose(file);
    free(evil);
    char *link = support_path_in(c->dir, "accel-plugin-linked.so");
    assert_int_equal(symlink("gone\x1b]0;title\x07.so", link), 0);
    free(link);
    create_host(c, c->dir);
    expect_refused(c, "linked",
                   "a broken symbolic link to gone\\x1b]0;title\\x07.so");
}

#define SEC_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], RELATIVE_CHILD) == 0)
        return relative_child();
    if (argc == 3 && strcmp(argv[1], LOG_CHILD) == 0)
        return log_child(argv[2]);
    if (argc == 3 && strcmp(argv[1], NO_PROC_CHILD) == 0)
        return no_proc_child(argv[2]);
    if (argc == 3 && strcmp(argv[1], DAMAGED_CHILD) == 0)
        return damaged_child(argv[2]);
    if (argc == 3 && strcmp(argv[1], MODULE_CHILD) == 0)
        return module_child(argv[2]);
    support_clean_environment();
    const struct CMUnitTest tests[] = {
        SEC_TEST(test_file_swapped_between_check_and_load_is_not_what_loads),
        SEC_TEST(test_descriptor_names_never_give_back_another_plugin),
        SEC_TEST(test_two_hosts_load_the_same_plugin_file),
        SEC_TEST(test_without_proc_the_plugin_is_refused_not_loaded_by_path),
        SEC_TEST(test_link_of_another_user_in_a_sticky_directory_is_refused),
        SEC_TEST(test_file_writable_by_another_user_through_an_acl_is_refused),
        SEC_TEST(test_file_writable_by_a_named_group_through_an_acl_is_refused),
        SEC_TEST(test_directory_writable_by_another_user_through_an_acl_is_refused),
        SEC_TEST(test_directory_default_acl_granting_write_is_refused),
        SEC_TEST(test_insecure_override_lifts_the_acl_checks),
        SEC_TEST(test_relative_entry_is_the_file_in_the_working_directory),
        SEC_TEST(test_relative_entry_is_listed_resolved),
        SEC_TEST(test_truncated_or_garbled_plugin_is_refused_without_a_crash),
        SEC_TEST(test_cpu_image_with_a_corrupt_dynamic_entry_is_refused),
        SEC_TEST(
            test_directory_with_more_candidates_than_the_cap_is_refused_quickly),
        SEC_TEST(test_discovery_of_50000_candidates_grows_near_linearly),
        SEC_TEST(test_log_line_escapes_control_characters_in_a_file_name),
        SEC_TEST(test_reason_escapes_control_characters_as_accel_info_does),
    };
    return cmocka_run_group_tests_name("loader-security", tests, NULL, NULL);
}
