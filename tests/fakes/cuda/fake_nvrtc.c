/*
 * libfakenvrtc.so: the NVRTC entry points the CUDA plugin uses, over the
 * system C compiler, so that module_compile's whole path (program, named
 * headers, options, log, image, then the module path) runs in every build
 * on the fake CUDA driver. "PTX" here is a CPU image of the source (an ELF
 * shared object), which the fake driver runs as it runs every module.
 *
 * The headers the plugin names are written beside the source, except
 * stdint.h: the plugin's is for NVRTC, which has no C library, and would
 * clash with the C library's types. The log begins with the options
 * received, one line, so that tests can see what the plugin asked for.
 *
 *   FAKE_NVRTC_VERSION=MAJOR.MINOR   what nvrtcVersion says (default 12.8)
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_core.h"

extern char **environ;

typedef int fake_nvrtcResult;
enum {
    FAKE_NVRTC_SUCCESS = 0,
    FAKE_NVRTC_ERROR_INVALID_INPUT = 3,
    FAKE_NVRTC_ERROR_INVALID_PROGRAM = 4,
    FAKE_NVRTC_ERROR_COMPILATION = 6
};

struct fake_program {
    char dir[64]; /* the program's scratch directory */
    char *log;
    void *image;
    size_t image_size;
};

FAKE_EXPORT fake_nvrtcResult nvrtcVersion(int *major, int *minor)
{
    const char *text = getenv("FAKE_NVRTC_VERSION");
    if (major == NULL || minor == NULL)
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    *major = 12;
    *minor = 8;
    if (text != NULL)
        sscanf(text, "%d.%d", major, minor);
    return FAKE_NVRTC_SUCCESS;
}

FAKE_EXPORT const char *nvrtcGetErrorString(fake_nvrtcResult result)
{
    return result == FAKE_NVRTC_SUCCESS             ? "NVRTC_SUCCESS"
           : result == FAKE_NVRTC_ERROR_COMPILATION ? "NVRTC_ERROR_COMPILATION"
                                                    : "NVRTC_ERROR (fake)";
}

static bool fake_write(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(dir)) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *file = fopen(path, "w");
    if (file == NULL)
        return false;
    bool ok = fputs(text, file) >= 0;
    return fclose(file) == 0 && ok;
}

FAKE_EXPORT fake_nvrtcResult nvrtcCreateProgram(struct fake_program **out,
                                                const char *source,
                                                const char *name,
                                                int header_count,
                                                const char *const *headers,
                                                const char *const *include_names)
{
    (void)name;
    if (out == NULL || source == NULL || header_count < 0)
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    struct fake_program *program = calloc(1, sizeof *program);
    if (program == NULL)
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    snprintf(program->dir, sizeof program->dir, "/tmp/fake-nvrtc-XXXXXX");
    bool ok = mkdtemp(program->dir) != NULL &&
              fake_write(program->dir, "kernel.c", source);
    for (int i = 0; ok && i < header_count; i++)
        if (strcmp(include_names[i], "stdint.h") != 0)
            ok = strstr(include_names[i], "..") == NULL &&
                 fake_write(program->dir, include_names[i], headers[i]);
    *out = program;
    return ok ? FAKE_NVRTC_SUCCESS : FAKE_NVRTC_ERROR_INVALID_INPUT;
}

static char *fake_read(const char *dir, const char *name, size_t *out_size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "rb");
    *out_size = 0;
    if (file == NULL)
        return NULL;
    char *data = NULL;
    long length = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    if (length >= 0 && fseek(file, 0, SEEK_SET) == 0)
        data = malloc((size_t)length + 1);
    if (data != NULL) {
        *out_size = fread(data, 1, (size_t)length, file);
        data[*out_size] = '\0';
    }
    fclose(file);
    return data;
}

/* cc in the program's directory: -D and -U options pass, the rest are noted. */
static int fake_cc(struct fake_program *program, int count,
                   const char *const *options)
{
    const char *argv[300] = {"cc",  "-x",        "c",        "-std=gnu11",
                             "-O1", "-fPIC",     "-shared",  "-I.",
                             "-o",  "kernel.so", "kernel.c", "-lm"};
    int n = 12;
    for (int i = 0; i < count && n < 298; i++)
        if (strncmp(options[i], "-D", 2) == 0 || strncmp(options[i], "-U", 2) == 0)
            argv[n++] = options[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, program->dir);
    posix_spawn_file_actions_addopen(&actions, 1, "log",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid;
    int status = -1;
    if (posix_spawnp(&pid, "cc", &actions, NULL, (char *const *)argv, environ) ==
        0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    posix_spawn_file_actions_destroy(&actions);
    return status;
}

FAKE_EXPORT fake_nvrtcResult nvrtcCompileProgram(struct fake_program *program,
                                                 int count,
                                                 const char *const *options)
{
    if (program == NULL || count < 0 || (count > 0 && options == NULL))
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    char line[2048] = "fake nvrtc options:";
    for (int i = 0; i < count; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " %s",
                 options[i]);
    int status = fake_cc(program, count, options);
    size_t size = 0;
    char *cc_log = fake_read(program->dir, "log", &size);
    free(program->log);
    program->log = malloc(strlen(line) + size + 2);
    if (program->log != NULL)
        sprintf(program->log, "%s\n%s", line, cc_log != NULL ? cc_log : "");
    free(cc_log);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return FAKE_NVRTC_ERROR_COMPILATION;
    free(program->image);
    program->image = fake_read(program->dir, "kernel.so", &program->image_size);
    return program->image != NULL ? FAKE_NVRTC_SUCCESS
                                  : FAKE_NVRTC_ERROR_COMPILATION;
}

FAKE_EXPORT fake_nvrtcResult nvrtcGetProgramLogSize(struct fake_program *program,
                                                    size_t *size)
{
    if (program == NULL || size == NULL)
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    *size = program->log != NULL ? strlen(program->log) + 1 : 1;
    return FAKE_NVRTC_SUCCESS;
}

FAKE_EXPORT fake_nvrtcResult nvrtcGetProgramLog(struct fake_program *program,
                                                char *log)
{
    if (program == NULL || log == NULL)
        return FAKE_NVRTC_ERROR_INVALID_INPUT;
    strcpy(log, program->log != NULL ? program->log : "");
    return FAKE_NVRTC_SUCCESS;
}

FAKE_EXPORT fake_nvrtcResult nvrtcGetPTXSize(struct fake_program *program,
                                             size_t *size)
{
    if (program == NULL || size == NULL || program->image == NULL)
        return FAKE_NVRTC_ERROR_INVALID_PROGRAM;
    *size = program->image_size;
    return FAKE_NVRTC_SUCCESS;
}

FAKE_EXPORT fake_nvrtcResult nvrtcGetPTX(struct fake_program *program, char *ptx)
{
    if (program == NULL || ptx == NULL || program->image == NULL)
        return FAKE_NVRTC_ERROR_INVALID_PROGRAM;
    memcpy(ptx, program->image, program->image_size);
    return FAKE_NVRTC_SUCCESS;
}

FAKE_EXPORT fake_nvrtcResult nvrtcDestroyProgram(struct fake_program **program)
{
    if (program == NULL || *program == NULL)
        return FAKE_NVRTC_ERROR_INVALID_PROGRAM;
    static const char *files[] = {"kernel.c", "kernel.so", "log",
                                  "accel/kernel.h", "accel"};
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", (*program)->dir, files[i]);
        remove(path);
    }
    rmdir((*program)->dir);
    free((*program)->log);
    free((*program)->image);
    free(*program);
    *program = NULL;
    return FAKE_NVRTC_SUCCESS;
}
