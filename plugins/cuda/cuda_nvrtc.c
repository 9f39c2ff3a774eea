/*
 * module_compile and compiler_identity through NVRTC (runtime_compiler.h):
 * $ACCEL_NVRTC_LIBRARY, else libnvrtc.so.13, .12, .11. The source is
 * compiled for the device's compute capability to PTX
 * (--gpu-architecture=compute_XY), which the host loads as any PTX image:
 * the driver JIT-compiles it for the GPU.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_plugin.h"

static const char *const nvrtc_defaults[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                             "libnvrtc.so.11", NULL};

static const struct accel__rtc_vendor nvrtc_vendor = {
    .title = "NVRTC",
    .prefix = "nvrtc",
    .code_size = "nvrtcGetPTXSize",
    .code = "nvrtcGetPTX",
    .library_env = "ACCEL_NVRTC_LIBRARY",
    .defaults = nvrtc_defaults,
    .file_name = "kernel.cu",
};

/* "--gpu-architecture=compute_90" for a device whose arch is "sm_90". */
static void nvrtc_target(const accel_drv_device *device, char *out, size_t size)
{
    const char *arch = device->physical->props.arch;
    snprintf(out, size, "--gpu-architecture=compute_%s",
             strncmp(arch, "sm_", 3) == 0 ? arch + 3 : arch);
}

accel_status accel__cuda_compiler_identity(accel_drv_device *device,
                                           char *out_identity, size_t capacity)
{
    char target[80];
    nvrtc_target(device, target, sizeof target);
    return accel__rtc_identity(&device->plugin->nvrtc, &nvrtc_vendor,
                               device->plugin->base.services, target,
                               out_identity, capacity);
}

accel_status accel__cuda_module_compile(accel_drv_device *device,
                                        const struct accel_compile_request *request)
{
    char target[80];
    nvrtc_target(device, target, sizeof target);
    return accel__rtc_compile(&device->plugin->nvrtc, &nvrtc_vendor,
                              device->plugin->base.services, target, request);
}
