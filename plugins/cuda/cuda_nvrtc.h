/*
 * NVRTC, CUDA's run-time compiler, for module_compile: loaded with dlopen
 * at the first compile ($ACCEL_NVRTC_LIBRARY, else libnvrtc.so.13, .12,
 * .11) and kept until plugin_close. Its declarations are our own, as the
 * driver's are (cuda_api.h): nvrtc.h is not needed to build.
 */
#ifndef ACCEL_CUDA_NVRTC_H
#define ACCEL_CUDA_NVRTC_H

#include <pthread.h>
#include <stdbool.h>

#include "native_library.h"

typedef struct acu_nvrtcProgram_st *acu_nvrtcProgram;
typedef int acu_nvrtcResult; /* NVRTC_SUCCESS = 0 */
#define ACU_NVRTC_SUCCESS 0
#define ACU_NVRTC_ERROR_COMPILATION 6

/* X(name, return type, parameters): every entry point used, all required. */
#define ACU_NVRTC_SYMBOLS(X)                                                           \
    X(nvrtcVersion, acu_nvrtcResult, (int *major, int *minor))                         \
    X(nvrtcGetErrorString, const char *, (acu_nvrtcResult result))                     \
    X(nvrtcCreateProgram, acu_nvrtcResult,                                             \
      (acu_nvrtcProgram * program, const char *source, const char *name,               \
       int header_count, const char *const *headers, const char *const *include_names)) \
    X(nvrtcDestroyProgram, acu_nvrtcResult, (acu_nvrtcProgram * program))             \
    X(nvrtcCompileProgram, acu_nvrtcResult,                                            \
      (acu_nvrtcProgram program, int option_count, const char *const *options))       \
    X(nvrtcGetProgramLogSize, acu_nvrtcResult, (acu_nvrtcProgram program, size_t *size)) \
    X(nvrtcGetProgramLog, acu_nvrtcResult, (acu_nvrtcProgram program, char *log))     \
    X(nvrtcGetPTXSize, acu_nvrtcResult, (acu_nvrtcProgram program, size_t *size))     \
    X(nvrtcGetPTX, acu_nvrtcResult, (acu_nvrtcProgram program, char *ptx))

struct cuda_nvrtc {
    pthread_mutex_t lock; /* guards the load; the entries are thread-safe */
    bool tried;           /* the load ran (once per plugin) */
    bool loaded;
    char reason[512];     /* why not, when it did not load */
    int major, minor;     /* nvrtcVersion */
    struct accel__native_library library;
#define ACU_NVRTC_FIELD_(name, ret, params) ret(*name) params;
    ACU_NVRTC_SYMBOLS(ACU_NVRTC_FIELD_)
#undef ACU_NVRTC_FIELD_
};

#endif /* ACCEL_CUDA_NVRTC_H */
