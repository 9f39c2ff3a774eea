/*
 * A vendor's run-time compiler (NVRTC, hiprtc) behind module_compile and
 * compiler_identity: loaded with dlopen at the first compile and kept
 * until plugin_close. Both have the same calls under their own prefix
 * (nvrtcCreateProgram, hiprtcCreateProgram, ...), so one implementation
 * serves both; the declarations are our own, as the drivers' are.
 *
 * <accel/kernel.h> is handed to the compiler as a named header, with a
 * <stdint.h> of our own: these compilers have no C library headers, and
 * kernel.h needs only the fixed-width types from it.
 */
#ifndef ACCEL_PLUGINS_RUNTIME_COMPILER_H
#define ACCEL_PLUGINS_RUNTIME_COMPILER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <accel/driver.h>

#include "native_library.h"

/* What differs between the vendors. */
struct accel__rtc_vendor {
    const char *title;           /* "NVRTC": how details name it */
    const char *prefix;          /* "nvrtc": the calls' prefix */
    const char *code_size;       /* "nvrtcGetPTXSize" */
    const char *code;            /* "nvrtcGetPTX" */
    const char *library_env;     /* "ACCEL_NVRTC_LIBRARY" */
    const char *const *defaults; /* the libraries tried, NULL-terminated */
    const char *file_name; /* "kernel.cu": what the log calls the source */
};

typedef struct accel__rtc_program_st *accel__rtc_program;

/* The compiler of one plugin: zeroed, then accel__rtc_init. */
struct accel__rtc {
    pthread_mutex_t lock; /* guards the load; the compiler's calls are thread-safe */
    bool tried, loaded;
    char reason[512];   /* why it did not load */
    char identity[640]; /* version, library file, for compiler_identity */
    struct accel__native_library library;
    int (*version)(int *major, int *minor);
    const char *(*error_string)(int result);
    int (*create)(accel__rtc_program *program, const char *source,
                  const char *name, int header_count,
                  const char *const *headers, const char *const *include_names);
    int (*destroy)(accel__rtc_program *program);
    int (*compile)(accel__rtc_program program, int option_count,
                   const char *const *options);
    int (*log_size)(accel__rtc_program program, size_t *size);
    int (*log)(accel__rtc_program program, char *log);
    int (*code_size)(accel__rtc_program program, size_t *size);
    int (*code)(accel__rtc_program program, char *code);
};

void accel__rtc_init(struct accel__rtc *rtc);
void accel__rtc_fini(struct accel__rtc *rtc);

/*
 * The compiler's identity for a device whose target option is `target`
 * ("--gpu-architecture=compute_90"): loads the compiler on first use.
 * ACCEL_ERR_NOT_SUPPORTED, with the libraries tried, when none loads.
 */
accel_status accel__rtc_identity(struct accel__rtc *rtc,
                                 const struct accel__rtc_vendor *vendor,
                                 const struct accel_host_services *services,
                                 const char *target, char *out_identity,
                                 size_t capacity);

/*
 * Compile the request with `target` first among the options; the log and
 * the code (its size as the compiler gives it) to the host.
 * ACCEL_ERR_MODULE when the source does not compile.
 */
accel_status accel__rtc_compile(struct accel__rtc *rtc,
                                const struct accel__rtc_vendor *vendor,
                                const struct accel_host_services *services,
                                const char *target,
                                const struct accel_compile_request *request);

#endif /* ACCEL_PLUGINS_RUNTIME_COMPILER_H */
