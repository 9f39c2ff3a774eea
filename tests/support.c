#include "support.h"

#include <ftw.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void support_clean_environment(void)
{
    unsetenv("ACCEL_BACKEND");
    unsetenv("ACCEL_PLUGIN_PATH");
    unsetenv("ACCEL_ALLOW_INSECURE_PLUGINS");
    unsetenv("ACCEL_NULL_DEVICES");
    unsetenv("ACCEL_CC");
    unsetenv("ACCEL_CACHE");
    unsetenv("ACCEL_CACHE_DIR");
    unsetenv("ACCEL_CACHE_MAX_BYTES");
    unsetenv("ACCEL_NULL_THREADS");
    unsetenv("ACCEL_NULL_DELAY_US");
    unsetenv("ACCEL_NULL_HOST_VISIBLE");
    unsetenv("ACCEL_NULL_FAIL");
    unsetenv("ACCEL_NULL_LOSE_AT");
    unsetenv("ACCEL_NULL_REPORT");
    unsetenv("ACCEL_NULL_CHECK");
    unsetenv("ACCEL_STAGING_CHUNK");
    unsetenv("ACCEL_LOG");
    unsetenv("ACCEL_CUDA_DEVICE_NODES");
    unsetenv("ACCEL_HIP_DEVICE_NODES");
    unsetenv("ACCEL_TRACE");
    unsetenv("ACCEL_NVJITLINK_LIBRARY");
}

char *support_make_temp_dir(void)
{
    char *dir = strdup("/tmp/accel-test-XXXXXX");
    assert_non_null(dir);
    if (mkdtemp(dir) == NULL) {
        free(dir);
        fail_msg("mkdtemp failed");
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void support_remove_dir(char *dir)
{
    if (dir == NULL)
        return;
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

void support_copy_file(const char *from, const char *dir, const char *file_name)
{
    char to[4096];
    snprintf(to, sizeof to, "%s/%s", dir, file_name);

    FILE *in = fopen(from, "rb");
    if (in == NULL)
        fail_msg("cannot open %s", from);
    FILE *out = fopen(to, "wb");
    if (out == NULL) {
        fclose(in);
        fail_msg("cannot create %s", to);
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    /* Whatever the umask: the loader refuses files others may write. */
    assert_int_equal(chmod(to, 0644), 0);
}

void support_install_fixture(const char *dir, const char *variant,
                             const char *name)
{
    char from[4096];
    char file_name[256];
    snprintf(from, sizeof from, "%s/fixture-%s.so", FIXTURE_DIR, variant);
    snprintf(file_name, sizeof file_name, "accel-plugin-%s.so", name);
    support_copy_file(from, dir, file_name);
}

const accel_plugin_info *support_find_plugin(const accel_host *host,
                                             const char *name, size_t nth)
{
    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(host, &plugins, &count);
    for (size_t i = 0; i < count; i++) {
        if (plugins[i].name != NULL && strcmp(plugins[i].name, name) == 0) {
            if (nth == 0)
                return &plugins[i];
            nth--;
        }
    }
    return NULL;
}

size_t support_plugin_count(const accel_host *host)
{
    const accel_plugin_info *plugins = NULL;
    size_t count = 0;
    accel_host_plugins(host, &plugins, &count);
    return count;
}

const accel_plugin_info *support_expect_plugin(const accel_host *host,
                                               const char *name,
                                               accel_plugin_state state)
{
    const accel_plugin_info *info = support_find_plugin(host, name, 0);
    if (info == NULL)
        fail_msg("plugin \"%s\" is not listed", name);
    if (info->state != state)
        fail_msg("plugin \"%s\" is %s (reason \"%s\"), expected %s", name,
                 accel_plugin_state_name(info->state),
                 info->reason != NULL ? info->reason : "(null)",
                 accel_plugin_state_name(state));
    return info;
}

char *support_path_in(const char *dir, const char *file_name)
{
    char *path = NULL;
    assert_true(asprintf(&path, "%s/%s", dir, file_name) > 0);
    return path;
}

void *support_read_file(const char *path, size_t *out_size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    void *data = malloc((size_t)size + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *out_size = (size_t)size;
    return data;
}

accel_memory_stats support_memory_stats(accel_device *device)
{
    accel_memory_stats stats;
    assert_status(accel_device_memory_stats(device, &stats), ACCEL_OK);
    return stats;
}

void support_assert_status(accel_status actual, accel_status expected,
                           const char *expr, const char *file, int line)
{
    if (actual == expected)
        return;
    /* Copy the detail first: any later accel call may replace it. */
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", accel_last_error());
    print_error("%s returned %s (%d), expected %s (%d); last error: \"%s\"\n",
                expr, accel_status_name(actual), (int)actual,
                accel_status_name(expected), (int)expected, detail);
    _fail(file, line);
}

void support_assert_contains(const char *haystack, const char *needle,
                             const char *file, int line)
{
    if (haystack != NULL && strstr(haystack, needle) != NULL)
        return;
    print_error("expected \"%s\" to contain \"%s\"\n",
                haystack != NULL ? haystack : "(null)", needle);
    _fail(file, line);
}

/* Set or unset each "NAME=VALUE" of a NULL-terminated list. */
static void apply_env(const char *const *env, bool set)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        char name[128];
        const char *equals = strchr(env[i], '=');
        assert_non_null(equals);
        snprintf(name, sizeof name, "%.*s", (int)(equals - env[i]), env[i]);
        if (set)
            setenv(name, equals + 1, 1);
        else
            unsetenv(name);
    }
}

int support_null_open(struct support_null *null, const char *const *env)
{
    memset(null, 0, sizeof *null);
    support_clean_environment();
    apply_env(env, true);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    int result = 0;
    if (accel_host_create(&options, &null->host) != ACCEL_OK ||
        accel_device_open(null->host, "null", 0, &null->device) != ACCEL_OK ||
        accel_stream_create(null->device, &null->stream) != ACCEL_OK) {
        print_error("opening null:0 failed: %s\n", accel_last_error());
        result = -1;
    }
    apply_env(env, false);
    return result;
}

void support_null_close(struct support_null *null)
{
    accel_stream_destroy(null->stream);
    accel_device_close(null->device);
    accel_host_destroy(null->host);
    memset(null, 0, sizeof *null);
}

int support_run_checked(const char *check, const char *mode,
                        const char *const *argv, char *text, size_t size)
{
    const char *args[16] = {check, "--check", mode};
    int pipe_fds[2], status = 0;
    size_t got = 0, n_args = 3;
    pid_t child;

    while (*argv != NULL && n_args < 15)
        args[n_args++] = *argv++;
    assert_int_equal(pipe(pipe_fds), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(pipe_fds[1], 2);
        dup2(pipe_fds[1], 1);
        close(pipe_fds[0]);
        /* The host's knobs are the test's, not the caller's shell's. */
        support_clean_environment();
        setenv("ASAN_OPTIONS", "symbolize=0", 1);
        execv(check, (char *const *)args);
        _exit(127);
    }
    close(pipe_fds[1]);
    for (;;) {
        ssize_t n = read(pipe_fds[0], text + got, size - 1 - got);

        if (n <= 0)
            break;
        got += (size_t)n;
    }
    text[got] = '\0';
    close(pipe_fds[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    return status;
}
