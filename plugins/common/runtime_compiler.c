/* A vendor's run-time compiler, NVRTC or hiprtc (runtime_compiler.h). */
#include "runtime_compiler.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel_header.h"

#define RTC_OPTIONS_MAX 260u

/* What kernel.h takes from <stdint.h>. */
static const char rtc_stdint[] =
    "#ifndef ACCEL_RTC_STDINT_H\n#define ACCEL_RTC_STDINT_H\n"
    "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int "
    "int32_t;\n"
    "typedef long long int64_t;\ntypedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;\ntypedef long long intptr_t;\n"
    "typedef unsigned long long uintptr_t;\n"
    "#define INT32_MAX 2147483647\n#define UINT32_MAX 4294967295u\n"
    "#define INT64_MAX 9223372036854775807ll\n#define UINT64_MAX "
    "18446744073709551615ull\n"
    "#endif\n";

void accel__rtc_init(struct accel__rtc *rtc)
{
    memset(rtc, 0, sizeof *rtc);
    pthread_mutex_init(&rtc->lock, NULL);
}

void accel__rtc_fini(struct accel__rtc *rtc)
{
    /*
     * The compiler stays mapped, as an initialised driver does: NVRTC and
     * hiprtc keep state of their own (hiprtc lives in the HIP runtime on
     * ROCm 5, with its threads), and unmapping it under that would fail
     * later, far from here.
     */
    if (rtc->loaded)
        accel__native_library_close(&rtc->library, true);
    pthread_mutex_destroy(&rtc->lock);
}

static void *rtc_symbol(struct accel__rtc *rtc, const char *prefix,
                        const char *suffix, bool *missing)
{
    char name[96];
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    void *symbol = accel__native_library_symbol(&rtc->library, name);
    if (symbol == NULL && !*missing) {
        *missing = true;
        snprintf(rtc->reason, sizeof rtc->reason, "%.400s has no %s",
                 rtc->library.path, name);
    }
    return symbol;
}

/*
 * Resolve every call, and say who the compiler is: its version (hiprtc of
 * ROCm 5 says 0.0) and the library file, by path, size and time, so that
 * an update of either is a new cache key.
 */
static bool rtc_resolve(struct accel__rtc *rtc,
                        const struct accel__rtc_vendor *vendor)
{
    bool missing = false;
    const char *p = vendor->prefix;
    *(void **)&rtc->version = rtc_symbol(rtc, p, "Version", &missing);
    *(void **)&rtc->error_string = rtc_symbol(rtc, p, "GetErrorString", &missing);
    *(void **)&rtc->create = rtc_symbol(rtc, p, "CreateProgram", &missing);
    *(void **)&rtc->destroy = rtc_symbol(rtc, p, "DestroyProgram", &missing);
    *(void **)&rtc->compile = rtc_symbol(rtc, p, "CompileProgram", &missing);
    *(void **)&rtc->log_size = rtc_symbol(rtc, p, "GetProgramLogSize", &missing);
    *(void **)&rtc->log = rtc_symbol(rtc, p, "GetProgramLog", &missing);
    *(void **)&rtc->code_size = rtc_symbol(rtc, "", vendor->code_size, &missing);
    *(void **)&rtc->code = rtc_symbol(rtc, "", vendor->code, &missing);
    if (missing)
        return false;
    int major = 0, minor = 0;
    rtc->version(&major, &minor);
    Dl_info info;
    struct stat st;
    const char *file = dladdr(*(void **)&rtc->create, &info) != 0 &&
                               info.dli_fname != NULL
                           ? info.dli_fname
                           : rtc->library.path;
    if (stat(file, &st) != 0)
        memset(&st, 0, sizeof st);
    snprintf(rtc->identity, sizeof rtc->identity,
             "%s=%d.%d lib=%.400s size=%lld mtime=%lld", vendor->prefix, major,
             minor, file, (long long)st.st_size, (long long)st.st_mtime);
    return true;
}

/* The compiler, loaded on first use; false with the reason set as the error. */
static bool rtc_ready(struct accel__rtc *rtc,
                      const struct accel__rtc_vendor *vendor,
                      const struct accel_host_services *services)
{
    pthread_mutex_lock(&rtc->lock);
    if (!rtc->tried) {
        rtc->tried = true;
        if (accel__native_library_open(services, vendor->library_env,
                                       vendor->defaults, &rtc->library,
                                       rtc->reason, sizeof rtc->reason)) {
            rtc->loaded = rtc_resolve(rtc, vendor);
            if (!rtc->loaded)
                accel__native_library_close(&rtc->library, false);
        }
    }
    bool loaded = rtc->loaded;
    pthread_mutex_unlock(&rtc->lock);
    if (!loaded)
        services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                            "no %s to compile source: %s", vendor->title,
                            rtc->reason);
    return loaded;
}

accel_status accel__rtc_identity(struct accel__rtc *rtc,
                                 const struct accel__rtc_vendor *vendor,
                                 const struct accel_host_services *services,
                                 const char *target, char *out_identity,
                                 size_t capacity)
{
    if (!rtc_ready(rtc, vendor, services))
        return ACCEL_ERR_NOT_SUPPORTED;
    int length = snprintf(out_identity, capacity, "%s %s kernel.h=%s",
                          rtc->identity, target, accel__kernel_header_sha256);
    if (length < 0 || (size_t)length >= capacity)
        return services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                   "%s: the identity is too long", vendor->title);
    return ACCEL_OK;
}

/* The program's log to the host, when it has one. */
static void rtc_hand_log(struct accel__rtc *rtc, accel__rtc_program program,
                         const struct accel_compile_request *request)
{
    size_t size = 0;
    if (rtc->log_size(program, &size) != 0 || size <= 1)
        return;
    char *log = malloc(size);
    if (log != NULL && rtc->log(program, log) == 0)
        request->put_log(request->host, log, strnlen(log, size));
    free(log);
}

/* The code (PTX with its NUL: the driver reads PTX up to it) to the host. */
static accel_status rtc_hand_code(struct accel__rtc *rtc,
                                  const struct accel__rtc_vendor *vendor,
                                  const struct accel_host_services *services,
                                  accel__rtc_program program,
                                  const struct accel_compile_request *request)
{
    size_t size = 0;
    int result = rtc->code_size(program, &size);
    char *code = result == 0 && size > 1 ? malloc(size) : NULL;
    if (code != NULL)
        result = rtc->code(program, code);
    accel_status status = code != NULL && result == 0
                              ? request->put_image(request->host, code, size)
                              : services->set_error(ACCEL_ERR_DRIVER,
                                                    "%s failed: %s", vendor->code,
                                                    rtc->error_string(result));
    free(code);
    return status;
}

accel_status accel__rtc_compile(struct accel__rtc *rtc,
                                const struct accel__rtc_vendor *vendor,
                                const struct accel_host_services *services,
                                const char *target,
                                const struct accel_compile_request *request)
{
    if (!rtc_ready(rtc, vendor, services))
        return ACCEL_ERR_NOT_SUPPORTED;
    const char *headers[] = {accel__kernel_header, rtc_stdint};
    const char *names[] = {"accel/kernel.h", "stdint.h"};
    accel__rtc_program program = NULL;
    int result = rtc->create(&program, request->source, vendor->file_name, 2,
                             headers, names);
    if (result != 0)
        return services->set_error(ACCEL_ERR_DRIVER, "%sCreateProgram failed: %s",
                                   vendor->prefix, rtc->error_string(result));
    const char *options[RTC_OPTIONS_MAX];
    uint32_t count = 0;
    options[count++] = target;
    /* -xc and -xc++ are the CPU plugin's: NVRTC and hiprtc compile C++. */
    for (uint32_t i = 0; i < request->option_count && count < RTC_OPTIONS_MAX; i++)
        if (strncmp(request->options[i], "-x", 2) != 0)
            options[count++] = request->options[i];
    result = rtc->compile(program, (int)count, options);
    rtc_hand_log(rtc, program, request);
    accel_status status;
    if (result != 0)
        status = services->set_error(
            ACCEL_ERR_MODULE, "%s refused the source (%s) for %s",
            vendor->title, rtc->error_string(result), target);
    else
        status = rtc_hand_code(rtc, vendor, services, program, request);
    rtc->destroy(&program);
    return status;
}
