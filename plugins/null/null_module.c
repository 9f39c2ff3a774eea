/*
 * Modules and kernels. A CPU module image is an ELF shared object built
 * from kernels that follow <accel/kernel.h>: each kernel NAME is a data
 * symbol accel_cpu_kernel_NAME, its descriptor.
 *
 * An image arrives as bytes, so it is written to an anonymous memory file
 * (memfd), or with ACCEL_PERF_MAP=1 to a named file perf can read
 * (null_perfmap.h), and opened with dlopen through /proc/self/fd. Loading a module
 * runs the image's code (its constructors), as loading any module does:
 * images are trusted code, to be trusted like the program itself. What the
 * plugin checks, before the dynamic loader sees the bytes, is that they
 * are a whole shared object for this machine with its headers, segments
 * and dynamic section inside the image (common/elf_check.h): that catches
 * truncated, foreign and damaged images with a reason rather than a crash,
 * not an image built to do harm.
 *
 * The memory file stays open as long as the module: the dynamic loader
 * recognises objects it already has by path, so a number that a closed
 * descriptor freed would make the next image come back as the previous one.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_check.h"
#include "null_check.h"
#include "null_launch.h"
#include "null_os.h"
#include "null_perfmap.h"
#include "null_plugin.h"

/* The longest kernel name kernel_get looks up. */
#define NULL_KERNEL_NAME_MAX 200u

struct accel_drv_module {
    struct null_list link;
    void *handle; /* from dlopen */
    int fd;       /* the memory file the image was loaded from */
};

/* ---- checking an image ---- */

/*
 * The checks libaccel runs on plugin files, shared (common/elf_check.c):
 * they catch a truncated, wrong-architecture or damaged image, dynamic
 * section included, before the dynamic loader could crash on it. They do
 * not make an image safe: it is code that runs in the process.
 */
static accel_status null_elf_check(const struct accel_host_services *services,
                                   const void *image, size_t size)
{
    struct accel__elf_memory memory = {.bytes = image, .size = size};
    char why[512];

    if (accel__elf_refusal(accel__elf_read_memory, &memory, size, why,
                           sizeof(why)) != NULL)
        return services->set_error(ACCEL_ERR_MODULE,
                                   "module_load: the image (%zu bytes) "
                                   "is not a loadable shared object: %s",
                                   size, why);
    return ACCEL_OK;
}

/* ---- loading ---- */

/* Write the image into a fresh memory file; its descriptor in *out_fd. */
static accel_status null_image_to_memfd(const struct accel_host_services *services,
                                        const unsigned char *image, size_t size,
                                        int *out_fd)
{
    int fd;

    *out_fd = -1;
    fd = null_memfd_create("accel-module");
    if (fd < 0)
        return services->set_error(ACCEL_ERR_MODULE,
                                   "module_load: memfd_create failed: %s",
                                   null_errno_name(errno));
    if (!null_write_all(fd, image, size)) {
        int err = errno;

        close(fd);
        return services->set_error(
            err == ENOMEM || err == ENOSPC ? ACCEL_ERR_OUT_OF_HOST_MEMORY
                                           : ACCEL_ERR_MODULE,
            "module_load: writing %zu bytes to a memfd failed: %s", size,
            null_errno_name(err));
    }
    *out_fd = fd;
    return ACCEL_OK;
}

/*
 * dlopen the memory file. The loader also takes an object it already has
 * for one whose DT_SONAME matches: the link map's name then is not ours,
 * and the image is refused rather than silently replaced by another.
 */
static accel_status null_dlopen_fd(const struct accel_host_services *services,
                                   int fd, void **out_handle)
{
    struct link_map *map = NULL;
    char path[64];
    void *handle;

    *out_handle = NULL;
    snprintf(path, sizeof(path), NULL_FD_PATH_FORMAT, fd);
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();

        return services->set_error(ACCEL_ERR_MODULE,
                                   "module_load: dlopen failed: %s",
                                   why != NULL ? why : "no reason given");
    }
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL &&
        strcmp(map->l_name, path) != 0) {
        const char *other = map->l_name[0] != '\0' ? map->l_name : "the program";

        dlclose(handle);
        return services->set_error(
            ACCEL_ERR_MODULE,
            "module_load: the dynamic loader gave back %s, already "
            "loaded, for the image (a DT_SONAME they share?)",
            other);
    }
    *out_handle = handle;
    return ACCEL_OK;
}

accel_status accel__null_module_load(accel_drv_device *device, const void *image,
                                     size_t size, accel_drv_module **out_module)
{
    const struct accel_host_services *services = null_services(device);
    accel_drv_module *module;
    struct null_pool *pool;
    accel_status status;

    *out_module = NULL;
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_module_load);
    if (status != ACCEL_OK)
        return status;
    if (image == NULL)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "module_load: the image is NULL");
    status = null_elf_check(services, image, size);
    if (status != ACCEL_OK)
        return status;
    /* Started here, so that every launch of the module finds it running. */
    status = accel__null_plugin_pool(device->plugin, &pool);
    if (status != ACCEL_OK)
        return status;
    module = calloc(1, sizeof(*module));
    if (module == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "module_load: calloc of a module failed");
    module->fd = accel__null_perf_image_fd(services, image, size);
    if (module->fd < 0) {
        status = null_image_to_memfd(services, image, size, &module->fd);
        if (status != ACCEL_OK)
            goto fail_free;
    }
    status = null_dlopen_fd(services, module->fd, &module->handle);
    if (status != ACCEL_OK)
        goto fail_close;
    accel__null_perf_map_note(services, image, size, module->handle);
    accel__null_device_track(device, &device->modules, &module->link);
    *out_module = module;
    return ACCEL_OK;

fail_close:
    close(module->fd);
fail_free:
    free(module);
    return status;
}

static void null_module_free(accel_drv_module *module)
{
    dlclose(module->handle);
    close(module->fd);
    free(module);
}

void accel__null_module_unload(accel_drv_device *device, accel_drv_module *module)
{
    accel__null_enter_void(device->plugin, device, NULL_ENTRY_module_unload);
    if (module == NULL)
        return;
    accel__null_device_untrack(device, &module->link);
    null_module_free(module);
}

static void null_module_free_link(struct null_list *link)
{
    null_module_free(null_container_of(link, accel_drv_module, link));
}

uint32_t accel__null_modules_release_all(accel_drv_device *device)
{
    return null_list_drain(&device->modules, null_module_free_link);
}

/* ---- kernels ---- */

static bool null_kernel_name_valid(const char *name)
{
    size_t length = 0;

    for (const char *c = name; *c != '\0'; c++, length++) {
        bool word = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || *c == '_';

        if (!word || length >= NULL_KERNEL_NAME_MAX)
            return false;
    }
    return length != 0;
}

/*
 * A descriptor this plugin can run, or ACCEL_ERR_MODULE saying why not.
 * ABI 1 descriptors (images built before barriers) end at run_block.
 */
static accel_status null_kernel_check(const struct accel_host_services *services,
                                      const char *name,
                                      const struct accel_cpu_kernel *kernel)
{
    if (kernel->abi < ACCEL_CPU_KERNEL_ABI_MIN ||
        kernel->abi > ACCEL_CPU_KERNEL_ABI)
        return services->set_error(
            ACCEL_ERR_MODULE,
            "kernel_get: kernel '%s' follows CPU kernel ABI %u; this "
            "plugin runs ABI %u to %u",
            name, kernel->abi, ACCEL_CPU_KERNEL_ABI_MIN, ACCEL_CPU_KERNEL_ABI);
    if (kernel->run_block == NULL ||
        kernel->param_count > ACCEL_KERNEL_MAX_PARAMS ||
        (kernel->abi >= 2 && kernel->run_thread == NULL))
        return services->set_error(
            ACCEL_ERR_MODULE,
            "kernel_get: kernel '%s' has a malformed descriptor (%s)", name,
            kernel->run_block == NULL ? "no run_block"
            : kernel->param_count > ACCEL_KERNEL_MAX_PARAMS
                ? "too many parameters"
                : "no run_thread");
    for (uint32_t i = 0; i < kernel->param_count; i++) {
        if (kernel->param_sizes[i] == 0)
            return services->set_error(
                ACCEL_ERR_MODULE,
                "kernel_get: kernel '%s' gives parameter %u a size "
                "of zero",
                name, i);
    }
    return ACCEL_OK;
}

/* Checked mode: keep the parameters' declarations, for reports to name. */
static void null_kernel_note_params(accel_drv_module *module, const char *name,
                                    const struct accel_cpu_kernel *kernel)
{
    char symbol[sizeof(ACCEL_CPU_PARAMS_PREFIX) + NULL_KERNEL_NAME_MAX];
    const char *text;

    snprintf(symbol, sizeof(symbol), ACCEL_CPU_PARAMS_PREFIX "%s", name);
    text = dlsym(module->handle, symbol);
    if (text != NULL && strnlen(text, 4096) < 4096)
        accel__null_check_note_kernel(kernel, text);
}

/*
 * The next name of an ABI 3 descriptor's param_names (" n a x y") into
 * `out_name`, cut to ACCEL_PARAM_NAME_MAX characters; false when there is
 * none. *cursor moves past it. The string comes from the image, which is
 * trusted code, but a hand-written one may hold anything: only word
 * characters make a name, and a name is read no further than it may be
 * long plus the longest identifier anyone writes.
 */
static bool null_next_param_name(const char **cursor, char *out_name)
{
    const char *c = *cursor;
    size_t length = 0;

    if (*c != ' ')
        return false;
    for (c++; (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '_';
         c++) {
        if (length < ACCEL_PARAM_NAME_MAX)
            out_name[length] = *c;
        if (++length > NULL_KERNEL_NAME_MAX)
            return false;
    }
    out_name[length < ACCEL_PARAM_NAME_MAX ? length : ACCEL_PARAM_NAME_MAX] = '\0';
    *cursor = c;
    return length > 0;
}

/*
 * The typed fields of an ABI 3 descriptor into `signature`, checked: a
 * pointer is 8 bytes, every kind and type is one this header knows, and
 * there is one name per parameter. ACCEL_ERR_MODULE says what is wrong.
 */
static accel_status null_kernel_types(const struct accel_host_services *services,
                                      const char *name,
                                      const struct accel_cpu_kernel *kernel,
                                      struct accel_kernel_signature *signature)
{
    const char *cursor = kernel->param_names != NULL ? kernel->param_names : "";

    for (uint32_t i = 0; i < kernel->param_count; i++) {
        uint8_t kind = kernel->param_kinds[i], type = kernel->param_types[i];

        if ((kind != ACCEL_CPU_PARAM_POINTER && kind != ACCEL_CPU_PARAM_VALUE) ||
            type >= ACCEL_PARAM_TYPE_COUNT ||
            (kind == ACCEL_CPU_PARAM_POINTER && kernel->param_sizes[i] != 8))
            return services->set_error(
                ACCEL_ERR_MODULE,
                "kernel_get: kernel '%s' gives parameter %u kind %u "
                "and type %u (size %u)",
                name, i, kind, type, kernel->param_sizes[i]);
        if (!null_next_param_name(&cursor, signature->param_names[i]))
            return services->set_error(
                ACCEL_ERR_MODULE,
                "kernel_get: kernel '%s' has no name for parameter "
                "%u in its descriptor",
                name, i);
        signature->param_kinds[i] = kind == ACCEL_CPU_PARAM_POINTER
                                        ? ACCEL_PARAM_KIND_POINTER
                                        : ACCEL_PARAM_KIND_VALUE;
        signature->param_types[i] = type;
    }
    if (*cursor != '\0')
        return services->set_error(
            ACCEL_ERR_MODULE,
            "kernel_get: kernel '%s' names more parameters than its "
            "%u",
            name, kernel->param_count);
    return ACCEL_OK;
}

/*
 * What the host gets to know of a kernel's parameters: sizes always; kinds,
 * types and names from ABI 3 descriptors, for a host that reads them.
 */
static accel_status
null_kernel_signature(const struct accel_host_services *services,
                      const char *name, const struct accel_cpu_kernel *kernel,
                      struct accel_kernel_signature *out_signature)
{
    bool typed = ACCEL_HOST_SERVICES_HAS(services, host_minor) &&
                 services->host_minor >= 1;

    memset(out_signature, 0,
           typed ? sizeof(*out_signature) : ACCEL_KERNEL_SIGNATURE_V1_0_SIZE);
    out_signature->param_count = kernel->param_count;
    memcpy(out_signature->param_sizes, kernel->param_sizes,
           kernel->param_count * sizeof(kernel->param_sizes[0]));
    if (!typed || kernel->abi < 3)
        return ACCEL_OK;
    return null_kernel_types(services, name, kernel, out_signature);
}

accel_status accel__null_kernel_get(accel_drv_device *device,
                                    accel_drv_module *module, const char *name,
                                    accel_drv_kernel **out_kernel,
                                    struct accel_kernel_signature *out_signature)
{
    const struct accel_host_services *services = null_services(device);
    char symbol[sizeof(ACCEL_CPU_KERNEL_PREFIX) + NULL_KERNEL_NAME_MAX];
    const struct accel_cpu_kernel *kernel;
    accel_status status;

    *out_kernel = NULL;
    memset(out_signature, 0, ACCEL_KERNEL_SIGNATURE_V1_0_SIZE);
    status = accel__null_enter(device->plugin, device, NULL_ENTRY_kernel_get);
    if (status != ACCEL_OK)
        return status;
    if (name == NULL)
        return services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                   "kernel_get: the name is NULL");
    /* Never found, since no symbol can be named so; said plainly. */
    if (!null_kernel_name_valid(name))
        return services->set_error(
            ACCEL_ERR_NOT_FOUND,
            "kernel_get: '%.*s' is not a kernel name: 1 to %u "
            "characters of [A-Za-z0-9_]",
            (int)NULL_KERNEL_NAME_MAX, name, NULL_KERNEL_NAME_MAX);
    snprintf(symbol, sizeof(symbol), ACCEL_CPU_KERNEL_PREFIX "%s", name);
    kernel = dlsym(module->handle, symbol);
    if (kernel == NULL)
        return services->set_error(
            ACCEL_ERR_NOT_FOUND,
            "kernel_get: the module has no kernel '%s' (no symbol %s)", name,
            symbol);
    status = null_kernel_check(services, name, kernel);
    if (status == ACCEL_OK)
        status = null_kernel_signature(services, name, kernel, out_signature);
    if (status != ACCEL_OK)
        return status;
    if (device->plugin->check != NULL_CHECK_OFF)
        null_kernel_note_params(module, name, kernel);
    *out_kernel = null_kernel_handle(kernel);
    return ACCEL_OK;
}

_Static_assert(
    ACCEL_CPU_PARAM_POINTER == ACCEL_PARAM_KIND_POINTER &&
        ACCEL_CPU_PARAM_VALUE == ACCEL_PARAM_KIND_VALUE,
    "<accel/kernel.h> and <accel/driver.h> must agree on parameter kinds");
_Static_assert(
    ACCEL_CPU_KERNEL_MAX_PARAMS == ACCEL_KERNEL_MAX_PARAMS,
    "<accel/kernel.h> and <accel/driver.h> must agree on the parameter limit");
