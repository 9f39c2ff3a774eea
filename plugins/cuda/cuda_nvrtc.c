/*
 * module_compile and compiler_identity through NVRTC (runtime_compiler.h):
 * $ACCEL_NVRTC_LIBRARY, else libnvrtc.so.13, .12, .11. The source is
 * compiled for the device's compute capability to PTX
 * (--gpu-architecture=compute_XY); nvJitLink, where found, links that into
 * a cubin for the device's sm_XY (cuda_jitlink.c), else the host loads the
 * PTX as any PTX image and the driver JIT-compiles it for the GPU.
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
    char target[800];
    nvrtc_target(device, target, sizeof target);
    /* The linker too: a cubin and a PTX image are different entries. */
    size_t used = strlen(target);
    snprintf(target + used, sizeof target - used, " %s",
             accel__cuda_jitlink_identity(device->plugin));
    return accel__rtc_identity(&device->plugin->nvrtc, &nvrtc_vendor,
                               device->plugin->base.services, target,
                               out_identity, capacity);
}

/* The request as NVRTC's side sees it: its image goes through nvJitLink. */
struct nvrtc_link {
    const struct accel_compile_request *outer;
    accel_drv_device *device;
};

static accel_status nvrtc_put_image(void *host, const void *image, size_t size)
{
    struct nvrtc_link *link = host;
    return accel__cuda_jitlink_put(link->device, link->outer, image, size);
}

static accel_status nvrtc_put_log(void *host, const char *text, size_t size)
{
    struct nvrtc_link *link = host;
    return link->outer->put_log(link->outer->host, text, size);
}

accel_status accel__cuda_module_compile(accel_drv_device *device,
                                        const struct accel_compile_request *request)
{
    char target[80];
    struct nvrtc_link link = {request, device};
    struct accel_compile_request inner = *request;

    inner.host = &link;
    inner.put_image = nvrtc_put_image;
    inner.put_log = nvrtc_put_log;
    nvrtc_target(device, target, sizeof target);
    return accel__rtc_compile(&device->plugin->nvrtc, &nvrtc_vendor,
                              device->plugin->base.services, target, &inner);
}
