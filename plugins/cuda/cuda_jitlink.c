/*
 * PTX to a cubin through nvJitLink (CUDA 12 and later), loaded with dlopen
 * like NVRTC: $ACCEL_NVJITLINK_LIBRARY, else libnvJitLink.so.13, .12. A
 * cubin for the device's sm_XY loads without the driver's JIT. Without
 * the library the PTX goes to the driver as it is, so nvJitLink is never
 * required; what is found is part of the compiler identity, so that the
 * kernel cache keeps a cubin and a PTX image apart.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda_plugin.h"

/* nvJitLink's calls, declared here as the driver's are (cuda_api.h). */
enum { JITLINK_SUCCESS = 0, JITLINK_INPUT_PTX = 2 }; /* nvJitLinkInputType */
typedef struct jitlink_st *jitlink_handle;

static const char *const jitlink_defaults[] = {"libnvJitLink.so.13",
                                               "libnvJitLink.so.12", NULL};

void accel__cuda_jitlink_init(struct accel__cuda_jitlink *link)
{
    memset(link, 0, sizeof *link);
    pthread_mutex_init(&link->lock, NULL);
}

void accel__cuda_jitlink_fini(struct accel__cuda_jitlink *link)
{
    /* Kept mapped, as NVRTC is (runtime_compiler.c). */
    if (link->loaded)
        accel__native_library_close(&link->library, true);
    pthread_mutex_destroy(&link->lock);
}

static bool jitlink_resolve(struct accel__cuda_jitlink *link)
{
    static const char *const names[] = {
        "nvJitLinkVersion",        "nvJitLinkCreate",
        "nvJitLinkDestroy",        "nvJitLinkAddData",
        "nvJitLinkComplete",       "nvJitLinkGetLinkedCubinSize",
        "nvJitLinkGetLinkedCubin", "nvJitLinkGetErrorLogSize",
        "nvJitLinkGetErrorLog"};
    void **slots[] = {(void **)&link->version,  (void **)&link->create,
                      (void **)&link->destroy,  (void **)&link->add_data,
                      (void **)&link->complete, (void **)&link->cubin_size,
                      (void **)&link->cubin,    (void **)&link->error_log_size,
                      (void **)&link->error_log};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = accel__native_library_symbol(&link->library, names[i]);
        if (*slots[i] == NULL) {
            snprintf(link->identity, sizeof link->identity,
                     "nvjitlink=none (%.200s has no %s)", link->library.path,
                     names[i]);
            return false;
        }
    }
    unsigned major = 0, minor = 0;
    Dl_info info;
    struct stat st;
    link->version(&major, &minor);
    const char *file = dladdr(*(void **)&link->create, &info) != 0 &&
                               info.dli_fname != NULL
                           ? info.dli_fname
                           : link->library.path;
    if (stat(file, &st) != 0)
        memset(&st, 0, sizeof st);
    snprintf(link->identity, sizeof link->identity,
             "nvjitlink=%u.%u lib=%.400s size=%lld mtime=%lld", major, minor,
             file, (long long)st.st_size, (long long)st.st_mtime);
    return true;
}

const char *accel__cuda_jitlink_identity(accel_drv_plugin *plugin)
{
    struct accel__cuda_jitlink *link = &plugin->jitlink;

    pthread_mutex_lock(&link->lock);
    if (!link->tried) {
        char reason[512];

        link->tried = true;
        if (accel__native_library_open(
                plugin->base.services, "ACCEL_NVJITLINK_LIBRARY",
                jitlink_defaults, &link->library, reason, sizeof reason)) {
            link->loaded = jitlink_resolve(link);
            if (!link->loaded)
                accel__native_library_close(&link->library, false);
        } else {
            snprintf(link->identity, sizeof link->identity,
                     "nvjitlink=none (%.400s)", reason);
        }
    }
    pthread_mutex_unlock(&link->lock);
    return link->identity;
}

/* PTX is text with a .target line; anything else (an ELF image) is not. */
static bool jitlink_is_ptx(const char *image, size_t size)
{
    size_t head = size < 4096 ? size : 4096;

    return size > 4 && memcmp(image, "\177ELF", 4) != 0 &&
           memmem(image, head, ".target", 7) != NULL;
}

/* nvJitLink's error log to the host's build log. */
static void jitlink_hand_log(struct accel__cuda_jitlink *link,
                             jitlink_handle handle,
                             const struct accel_compile_request *request)
{
    size_t size = 0;

    if (link->error_log_size(handle, &size) != JITLINK_SUCCESS || size <= 1)
        return;
    char *log = malloc(size);
    if (log != NULL && link->error_log(handle, log) == JITLINK_SUCCESS)
        request->put_log(request->host, log, strnlen(log, size));
    free(log);
}

accel_status accel__cuda_jitlink_put(accel_drv_device *device,
                                     const struct accel_compile_request *request,
                                     const void *image, size_t size)
{
    struct accel__cuda_jitlink *link = &device->plugin->jitlink;
    const struct accel_host_services *services = device->plugin->base.services;
    const char *arch = device->physical->props.arch;
    char option[64];
    const char *options[] = {option};
    jitlink_handle handle = NULL;
    accel_status status;

    (void)accel__cuda_jitlink_identity(device->plugin);
    if (!link->loaded || !jitlink_is_ptx(image, size) ||
        strncmp(arch, "sm_", 3) != 0)
        return request->put_image(request->host, image, size);
    snprintf(option, sizeof option, "-arch=%s", arch);
    int result = link->create(&handle, 1, options);
    if (result != JITLINK_SUCCESS)
        return services->set_error(
            ACCEL_ERR_DRIVER, "nvJitLinkCreate(%s) failed: %d", option, result);
    result = link->add_data(handle, JITLINK_INPUT_PTX, image, size, "kernel.ptx");
    if (result == JITLINK_SUCCESS)
        result = link->complete(handle);
    size_t cubin_size = 0;
    if (result == JITLINK_SUCCESS)
        result = link->cubin_size(handle, &cubin_size);
    void *cubin = result == JITLINK_SUCCESS && cubin_size > 0
                      ? malloc(cubin_size)
                      : NULL;
    if (cubin != NULL)
        result = link->cubin(handle, cubin);
    if (cubin != NULL && result == JITLINK_SUCCESS) {
        status = request->put_image(request->host, cubin, cubin_size);
    } else {
        jitlink_hand_log(link, handle, request);
        status = services->set_error(
            result == JITLINK_SUCCESS ? ACCEL_ERR_OUT_OF_HOST_MEMORY
                                      : ACCEL_ERR_MODULE,
            "nvJitLink could not link the PTX for %s (result %d)", arch, result);
    }
    free(cubin);
    link->destroy(&handle);
    return status;
}
