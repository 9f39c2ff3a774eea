/*
 * module_compile and compiler_identity through hiprtc (runtime_compiler.h):
 * $ACCEL_HIPRTC_LIBRARY, else libhiprtc.so.6 (ROCm 6), else the HIP
 * runtime of ROCm 5, which holds hiprtc itself (libamdhip64.so.5). The
 * source is compiled for the device's full target ID (gfx90a:xnack-, ...)
 * to a code object, which the host loads as any HIP image. Debian 12's
 * ROCm 5.2 runtime compiles this way with no GPU present.
 */
#include <stdio.h>

#include "hip_plugin.h"

static const char *const hiprtc_defaults[] = {"libhiprtc.so.6", "libhiprtc.so.5",
                                              "libamdhip64.so.5", NULL};

static const struct accel__rtc_vendor hiprtc_vendor = {
    .title = "hiprtc",
    .prefix = "hiprtc",
    .code_size = "hiprtcGetCodeSize",
    .code = "hiprtcGetCode",
    .library_env = "ACCEL_HIPRTC_LIBRARY",
    .defaults = hiprtc_defaults,
    .file_name = "kernel.hip",
};

/* "--offload-arch=" the device's target ID, features included. */
static void hiprtc_target(const accel_drv_device *device, char *out, size_t size)
{
    size_t index = (size_t)(device->physical - device->plugin->base.devices);
    const char *arch = device->physical->props.arch;
    if (index < ACCEL__NATIVE_DEVICES_MAX &&
        device->plugin->targets[index][0] != '\0')
        arch = device->plugin->targets[index];
    snprintf(out, size, "--offload-arch=%s", arch);
}

accel_status accel__hip_compiler_identity(accel_drv_device *device,
                                          char *out_identity, size_t capacity)
{
    char target[96];
    hiprtc_target(device, target, sizeof target);
    return accel__rtc_identity(&device->plugin->hiprtc, &hiprtc_vendor,
                               device->plugin->base.services, target,
                               out_identity, capacity);
}

accel_status accel__hip_module_compile(accel_drv_device *device,
                                       const struct accel_compile_request *request)
{
    char target[96];
    hiprtc_target(device, target, sizeof target);
    return accel__rtc_compile(&device->plugin->hiprtc, &hiprtc_vendor,
                              device->plugin->base.services, target, request);
}
