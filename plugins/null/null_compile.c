/*
 * Kernel source compiled at run time (driver.h: module_compile and
 * compiler_identity) with the system C compiler: $ACCEL_CC, else gcc,
 * clang or cc from PATH. gcc comes before clang, as in accel-cc: gcc 12
 * ran the workload kernels up to 2 to 5 times faster than clang 14
 * (BENCHMARKS.md, "Workloads"), and a kernel compiled once runs many times.
 *
 * The compiler gets accel-cc's flags for the highest ISA level this CPU
 * runs, and is started with posix_spawn, never through a shell, in a
 * private directory (mkdtemp, 0700) that holds the source, the plugin's
 * own <accel/kernel.h>, the image and the log, and is removed after.
 * Under elevated privileges ACCEL_CC, TMPDIR and PATH are not read: the
 * compiler is looked for in /usr/bin and /bin and runs with an
 * environment of PATH alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel_header.h"
#include "null_plugin.h"

/* host/isa.c, built in: the ISA level of this CPU for an architecture. */
unsigned accel__cpu_isa_level(const char *arch);

#define SAFE_PATH "/usr/bin:/bin"
#define NULL_COMPILE_FILE_MAX (1ull << 30)

extern char **environ;

static bool null_elevated(const struct accel_host_services *services)
{
    if (ACCEL_HOST_SERVICES_HAS(services, privilege))
        return (services->privilege & ACCEL_HOST_PRIVILEGE_ELEVATED) != 0;
    return getuid() != geteuid() || getgid() != getegid();
}

/* `name` searched in the colon list `path`, into out (PATH_MAX). */
static bool null_search_path(const char *name, const char *path, char *out)
{
    while (path != NULL && *path != '\0') {
        size_t length = strcspn(path, ":");
        if (length > 0 && length + strlen(name) + 2 <= PATH_MAX) {
            snprintf(out, PATH_MAX, "%.*s/%s", (int)length, path, name);
            if (access(out, X_OK) == 0)
                return true;
        }
        path += length + (path[length] == ':');
    }
    return false;
}

/*
 * The compiler as found (run as found: a ccache link needs its own name),
 * its canonical path and the file behind it (for the identity).
 */
static accel_status null_find_compiler(const struct accel_host_services *services,
                                       char *out_found, char *out_path,
                                       struct stat *out_st)
{
    bool elevated = null_elevated(services);
    const char *chosen = elevated ? NULL : services->getenv("ACCEL_CC");
    const char *path = elevated ? SAFE_PATH : services->getenv("PATH");
    if (path == NULL)
        path = SAFE_PATH;
    static const char *defaults[] = {"gcc", "clang", "cc"};
    char *found = out_found;
    bool have = false;
    if (chosen != NULL && chosen[0] != '\0') {
        have = strchr(chosen, '/') != NULL
                   ? snprintf(found, PATH_MAX, "%s", chosen) < PATH_MAX
                   : null_search_path(chosen, path, found);
    } else {
        for (size_t i = 0; i < 3 && !have; i++)
            have = null_search_path(defaults[i], path, found);
    }
    if (!have || realpath(found, out_path) == NULL || stat(out_path, out_st) != 0)
        return services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "null: no C compiler to compile source (%s%s)",
            chosen != NULL ? "ACCEL_CC=" : "tried gcc, clang, cc in ",
            chosen != NULL ? chosen : path);
    return ACCEL_OK;
}

/* -march for this CPU's ISA level, as accel-cc names the levels. */
static const char *null_march(void)
{
    static const char *march[] = {NULL, NULL, "-march=x86-64-v2",
                                  "-march=x86-64-v3", "-march=x86-64-v4"};
    /* Level 1 (the baseline) on any other architecture: no -march. */
    unsigned level = accel__cpu_isa_level("x86_64");
    return level < 5 ? march[level] : NULL;
}

accel_status accel__null_compiler_identity(accel_drv_device *device,
                                           char *out_identity, size_t capacity)
{
    const struct accel_host_services *services = null_services(device);
    char found[PATH_MAX], path[PATH_MAX];
    struct stat st;
    accel_status status = null_find_compiler(services, found, path, &st);
    if (status != ACCEL_OK)
        return status;
    const char *march = null_march();
    int length = snprintf(
        out_identity, capacity,
        "null cc=%s dev=%llu ino=%llu size=%lld mtime=%lld.%09ld "
        "flags=2 %s kernel.h=%s",
        path, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
        (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
        march != NULL ? march : "-march=default", accel__kernel_header_sha256);
    if (length < 0 || (size_t)length >= capacity)
        return services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                   "null: the compiler's path is too long");
    return ACCEL_OK;
}

/* ---- the private directory ---- */

struct null_workdir {
    char path[PATH_MAX];
    int fd;
};

static bool null_write_file(int dir_fd, const char *name, const void *data,
                            size_t size)
{
    int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const char *at = data;
    while (size > 0) {
        ssize_t put = write(fd, at, size);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            break;
        at += put;
        size -= (size_t)put;
    }
    return close(fd) == 0 && size == 0;
}

/* A whole file of the directory, malloc'd (NUL added); NULL if none. */
static char *null_read_file(int dir_fd, const char *name, size_t *out_size)
{
    *out_size = 0;
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return NULL;
    char *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size < NULL_COMPILE_FILE_MAX)
        data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (data != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (data != NULL)
        data[got] = '\0';
    *out_size = got;
    return data;
}

/* The directory, with the source and accel/kernel.h written into it. */
static accel_status null_workdir_make(const struct accel_host_services *services,
                                      const char *source, size_t source_size,
                                      struct null_workdir *out)
{
    const char *tmp = null_elevated(services) ? NULL : services->getenv("TMPDIR");
    if (tmp == NULL || tmp[0] != '/')
        tmp = "/tmp";
    snprintf(out->path, sizeof out->path, "%s/accel-compile-XXXXXX", tmp);
    out->fd = -1;
    if (mkdtemp(out->path) == NULL)
        return services->set_error(ACCEL_ERR_DRIVER, "null: mkdtemp in %s: %s",
                                   tmp, strerror(errno));
    out->fd = open(out->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out->fd < 0 || mkdirat(out->fd, "accel", 0700) != 0)
        return services->set_error(ACCEL_ERR_DRIVER, "null: %s: %s", out->path,
                                   strerror(errno));
    int accel_fd = openat(out->fd, "accel", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool written = accel_fd >= 0 &&
                   null_write_file(accel_fd, "kernel.h", accel__kernel_header,
                                   accel__kernel_header_size) &&
                   null_write_file(out->fd, "kernel.c", source, source_size);
    if (accel_fd >= 0)
        close(accel_fd);
    if (!written)
        return services->set_error(ACCEL_ERR_DRIVER, "null: writing into %s: %s",
                                   out->path, strerror(errno));
    return ACCEL_OK;
}

static void null_workdir_remove(struct null_workdir *dir)
{
    if (dir->fd >= 0) {
        int accel_fd = openat(dir->fd, "accel",
                              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (accel_fd >= 0) {
            unlinkat(accel_fd, "kernel.h", 0);
            close(accel_fd);
        }
        unlinkat(dir->fd, "accel", AT_REMOVEDIR);
        static const char *files[] = {"kernel.c", "kernel.so", "log"};
        for (size_t i = 0; i < 3; i++)
            unlinkat(dir->fd, files[i], 0);
        close(dir->fd);
    }
    if (dir->path[0] != '\0')
        rmdir(dir->path);
}

/* ---- running the compiler ---- */

#define NULL_COMPILE_ARGS_MAX (24u + 256u)

/*
 * accel-cc's command line (compile_cpu_level), the request's options added,
 * linked with -nostdlib: no crt files (an image has no main, no C++
 * constructors to register) and no libc.so script to read, which took a
 * quarter of the link's time (BENCHMARKS.md, "Kernels from source").
 * What the code can still need is named: libm (math calls), libgcc.a
 * (helpers such as __udivti3 or half-float conversions below AVX2), and
 * libc through libm's own dependency, which puts it in the image's scope.
 * Part of the identity: "flags=2".
 */
static void null_compile_argv(const char *compiler,
                              const struct accel_compile_request *request,
                              const char **argv)
{
    /* C11 unless the last -x option says C++17, as accel-cc compiles it. */
    bool cxx = false;
    for (uint32_t i = 0; i < request->option_count; i++)
        if (strncmp(request->options[i], "-x", 2) == 0)
            cxx = strcmp(request->options[i], "-xc++") == 0;
    static const char *flags[] = {"-O3",
                                  "-fPIC",
                                  "-shared",
                                  "-nostdlib",
                                  "-fvisibility=hidden",
                                  "-fno-math-errno",
                                  "-falign-loops=64",
                                  "-I."};
    size_t n = 0;
    argv[n++] = compiler;
    argv[n++] = "-x";
    argv[n++] = cxx ? "c++" : "c";
    argv[n++] = cxx ? "-std=gnu++17" : "-std=gnu11";
    if (cxx) {
        argv[n++] = "-fno-exceptions";
        argv[n++] = "-fno-rtti";
    }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        argv[n++] = flags[i];
    const char *march = null_march();
    if (march != NULL)
        argv[n++] = march;
    for (uint32_t i = 0; i < request->option_count && i < 256; i++)
        if (strncmp(request->options[i], "-x", 2) != 0)
            argv[n++] = request->options[i];
    argv[n++] = "-o";
    argv[n++] = "kernel.so";
    argv[n++] = "kernel.c";
    argv[n++] = "-lm";
    argv[n++] = "-lgcc";
    if (cxx) { /* the guards of function-local statics, if the code has any */
        argv[n++] = "-Wl,--as-needed";
        argv[n++] = "-lstdc++";
    }
    argv[n] = NULL;
}

/* Start the compiler in the directory, its output into "log"; its status. */
static accel_status null_spawn(const struct accel_host_services *services,
                               const struct null_workdir *dir,
                               const char **argv, int *out_wait_status)
{
    static char *const safe_env[] = {"PATH=" SAFE_PATH, NULL};
    char *const *envp = null_elevated(services) ? safe_env : environ;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, dir->path);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "log",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    int error = posix_spawn(&pid, argv[0], &actions, NULL, (char *const *)argv,
                            envp);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0)
        return services->set_error(
            error == ENOENT || error == EACCES ? ACCEL_ERR_NOT_SUPPORTED
                                               : ACCEL_ERR_DRIVER,
            "null: cannot run the C compiler %s: %s", argv[0], strerror(error));
    while (waitpid(pid, out_wait_status, 0) < 0) {
        if (errno != EINTR)
            return services->set_error(ACCEL_ERR_DRIVER,
                                       "null: waitpid for the C compiler: %s "
                                       "(is SIGCHLD ignored?)",
                                       strerror(errno));
    }
    return ACCEL_OK;
}

/* The log and, when the compiler succeeded, the image, to the host. */
static accel_status null_hand_over(const struct accel_host_services *services,
                                   const struct null_workdir *dir,
                                   int wait_status,
                                   const struct accel_compile_request *request)
{
    size_t size = 0;
    char *log = null_read_file(dir->fd, "log", &size);
    if (log != NULL && size > 0)
        request->put_log(request->host, log, size);
    free(log);
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0)
        return services->set_error(
            ACCEL_ERR_MODULE, "null: the C compiler %s with status %d",
            WIFEXITED(wait_status) ? "exited" : "was killed",
            WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                   : WTERMSIG(wait_status));
    char *image = null_read_file(dir->fd, "kernel.so", &size);
    accel_status status = image != NULL && size > 0
                              ? request->put_image(request->host, image, size)
                              : services->set_error(
                                    ACCEL_ERR_MODULE,
                                    "null: the C compiler wrote no image");
    free(image);
    return status;
}

accel_status accel__null_module_compile(accel_drv_device *device,
                                        const struct accel_compile_request *request)
{
    const struct accel_host_services *services = null_services(device);
    char compiler[PATH_MAX], canonical[PATH_MAX];
    struct stat st;
    accel_status status = null_find_compiler(services, compiler, canonical, &st);
    if (status != ACCEL_OK)
        return status;
    struct null_workdir dir;
    status = null_workdir_make(services, request->source, request->source_size,
                               &dir);
    if (status == ACCEL_OK) {
        const char *argv[NULL_COMPILE_ARGS_MAX];
        int wait_status = 0;
        null_compile_argv(compiler, request, argv);
        status = null_spawn(services, &dir, argv, &wait_status);
        if (status == ACCEL_OK)
            status = null_hand_over(services, &dir, wait_status, request);
    }
    null_workdir_remove(&dir);
    return status;
}
