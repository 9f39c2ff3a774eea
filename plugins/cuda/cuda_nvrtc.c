/*
 * module_compile and compiler_identity through NVRTC (cuda_nvrtc.h). The
 * source is compiled for the device's compute capability to PTX
 * (--gpu-architecture=compute_XY), which the host then loads as any PTX
 * image: the driver JIT-compiles it for the GPU. <accel/kernel.h> is handed
 * to NVRTC as a named header, with a <stdint.h> of our own: NVRTC has no
 * C library headers, and kernel.h needs only the fixed-width types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_plugin.h"
#include "kernel_header.h"

#define ACCEL_NVRTC_LIBRARY_ENV "ACCEL_NVRTC_LIBRARY"
#define NVRTC_OPTIONS_MAX 260u

static const char *const nvrtc_defaults[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                             "libnvrtc.so.11", NULL};

/* What kernel.h takes from <stdint.h>, for NVRTC, which has no C library. */
static const char nvrtc_stdint[] =
    "#ifndef ACCEL_NVRTC_STDINT_H\n#define ACCEL_NVRTC_STDINT_H\n"
    "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\n"
    "typedef long long int64_t;\ntypedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;\ntypedef long long intptr_t;\n"
    "typedef unsigned long long uintptr_t;\n"
    "#define INT32_MAX 2147483647\n#define UINT32_MAX 4294967295u\n"
    "#define INT64_MAX 9223372036854775807ll\n#define UINT64_MAX 18446744073709551615ull\n"
    "#endif\n";

void accel__cuda_nvrtc_init(accel_drv_plugin *plugin)
{
    memset(&plugin->nvrtc, 0, sizeof plugin->nvrtc);
    pthread_mutex_init(&plugin->nvrtc.lock, NULL);
}

void accel__cuda_nvrtc_fini(accel_drv_plugin *plugin)
{
    if (plugin->nvrtc.loaded)
        accel__native_library_close(&plugin->nvrtc.library, false);
    pthread_mutex_destroy(&plugin->nvrtc.lock);
}

static bool nvrtc_resolve(struct cuda_nvrtc *nvrtc)
{
#define ACU_NVRTC_RESOLVE_(name, ret, params)                                          \
    nvrtc->name = (ret(*) params)accel__native_library_symbol(&nvrtc->library, #name); \
    if (nvrtc->name == NULL) {                                                         \
        snprintf(nvrtc->reason, sizeof nvrtc->reason, "%.400s has no %s",              \
                 nvrtc->library.path, #name);                                          \
        return false;                                                                  \
    }
    ACU_NVRTC_SYMBOLS(ACU_NVRTC_RESOLVE_)
#undef ACU_NVRTC_RESOLVE_
    return nvrtc->nvrtcVersion(&nvrtc->major, &nvrtc->minor) == ACU_NVRTC_SUCCESS;
}

/* NVRTC, loaded on first use; NULL with the reason set as the error. */
static struct cuda_nvrtc *nvrtc_of(accel_drv_device *device)
{
    accel_drv_plugin *plugin = device->plugin;
    struct cuda_nvrtc *nvrtc = &plugin->nvrtc;
    pthread_mutex_lock(&nvrtc->lock);
    if (!nvrtc->tried) {
        nvrtc->tried = true;
        if (accel__native_library_open(plugin->base.services, ACCEL_NVRTC_LIBRARY_ENV,
                                       nvrtc_defaults, &nvrtc->library, nvrtc->reason,
                                       sizeof nvrtc->reason)) {
            nvrtc->loaded = nvrtc_resolve(nvrtc);
            if (!nvrtc->loaded)
                accel__native_library_close(&nvrtc->library, false);
        }
    }
    bool loaded = nvrtc->loaded;
    pthread_mutex_unlock(&nvrtc->lock);
    if (loaded)
        return nvrtc;
    plugin->base.services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                     "cuda: no NVRTC to compile source: %s", nvrtc->reason);
    return NULL;
}

/* "compute_90" for a device whose arch is "sm_90". */
static void nvrtc_virtual_arch(const accel_drv_device *device, char *out, size_t size)
{
    const char *arch = device->physical->props.arch;
    snprintf(out, size, "compute_%s", strncmp(arch, "sm_", 3) == 0 ? arch + 3 : arch);
}

accel_status accel__cuda_compiler_identity(accel_drv_device *device, char *out_identity,
                                           size_t capacity)
{
    struct cuda_nvrtc *nvrtc = nvrtc_of(device);
    if (nvrtc == NULL)
        return ACCEL_ERR_NOT_SUPPORTED;
    char arch[40];
    nvrtc_virtual_arch(device, arch, sizeof arch);
    int length = snprintf(out_identity, capacity, "cuda nvrtc=%d.%d lib=%.400s %s ptx kernel.h=%s",
                          nvrtc->major, nvrtc->minor, nvrtc->library.path, arch,
                          accel__kernel_header_sha256);
    if (length < 0 || (size_t)length >= capacity)
        return device->plugin->base.services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                                        "cuda: NVRTC's path is too long");
    return ACCEL_OK;
}

/* The program's log to the host, when it has one. */
static void nvrtc_hand_log(struct cuda_nvrtc *nvrtc, acu_nvrtcProgram program,
                           const struct accel_compile_request *request)
{
    size_t size = 0;
    if (nvrtc->nvrtcGetProgramLogSize(program, &size) != ACU_NVRTC_SUCCESS || size <= 1)
        return;
    char *log = malloc(size);
    if (log != NULL && nvrtc->nvrtcGetProgramLog(program, log) == ACU_NVRTC_SUCCESS)
        request->put_log(request->host, log, strnlen(log, size));
    free(log);
}

/* The PTX (its NUL included: the driver reads PTX up to it) to the host. */
static accel_status nvrtc_hand_ptx(const struct accel_host_services *services,
                                   struct cuda_nvrtc *nvrtc, acu_nvrtcProgram program,
                                   const struct accel_compile_request *request)
{
    size_t size = 0;
    acu_nvrtcResult result = nvrtc->nvrtcGetPTXSize(program, &size);
    char *ptx = result == ACU_NVRTC_SUCCESS && size > 1 ? malloc(size) : NULL;
    if (ptx != NULL)
        result = nvrtc->nvrtcGetPTX(program, ptx);
    accel_status status =
        ptx != NULL && result == ACU_NVRTC_SUCCESS
            ? request->put_image(request->host, ptx, size)
            : services->set_error(ACCEL_ERR_DRIVER, "cuda: nvrtcGetPTX failed: %s",
                                  nvrtc->nvrtcGetErrorString(result));
    free(ptx);
    return status;
}

accel_status accel__cuda_module_compile(accel_drv_device *device,
                                        const struct accel_compile_request *request)
{
    const struct accel_host_services *services = device->plugin->base.services;
    struct cuda_nvrtc *nvrtc = nvrtc_of(device);
    if (nvrtc == NULL)
        return ACCEL_ERR_NOT_SUPPORTED;
    const char *headers[] = {accel__kernel_header, nvrtc_stdint};
    const char *names[] = {"accel/kernel.h", "stdint.h"};
    acu_nvrtcProgram program = NULL;
    acu_nvrtcResult result =
        nvrtc->nvrtcCreateProgram(&program, request->source, "kernel.cu", 2, headers, names);
    if (result != ACU_NVRTC_SUCCESS)
        return services->set_error(ACCEL_ERR_DRIVER, "cuda: nvrtcCreateProgram failed: %s",
                                   nvrtc->nvrtcGetErrorString(result));
    char arch[64], arch_option[96];
    nvrtc_virtual_arch(device, arch, sizeof arch);
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
    const char *options[NVRTC_OPTIONS_MAX];
    uint32_t count = 0;
    options[count++] = arch_option;
    for (uint32_t i = 0; i < request->option_count && count < NVRTC_OPTIONS_MAX; i++)
        options[count++] = request->options[i];
    result = nvrtc->nvrtcCompileProgram(program, (int)count, options);
    nvrtc_hand_log(nvrtc, program, request);
    accel_status status;
    if (result == ACU_NVRTC_ERROR_COMPILATION)
        status = services->set_error(ACCEL_ERR_MODULE, "cuda: NVRTC refused the source for %s",
                                     arch);
    else if (result != ACU_NVRTC_SUCCESS)
        status = services->set_error(ACCEL_ERR_DRIVER, "cuda: nvrtcCompileProgram failed: %s",
                                     nvrtc->nvrtcGetErrorString(result));
    else
        status = nvrtc_hand_ptx(services, nvrtc, program, request);
    nvrtc->nvrtcDestroyProgram(&program);
    return status;
}
