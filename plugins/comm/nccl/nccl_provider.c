/*
 * accel-comm-nccl.so and accel-comm-rccl.so: collectives on NVIDIA GPUs
 * through NCCL and on AMD GPUs through RCCL, enqueued on the native stream
 * of the accel stream (ACCEL_COMM_CAP_STREAM), with ranks that may be
 * threads of one process (ACCEL_COMM_CAP_LOOPBACK: NCCL takes one
 * communicator per thread).
 *
 * Both are this one source, built twice: -DACCEL_NCCL_FLAVOUR_RCCL picks
 * RCCL's library, variable and GPU below. Neither links its library:
 *
 *   ACCEL_NCCL_LIBRARY   path of libnccl (default libnccl.so.2)
 *   ACCEL_RCCL_LIBRARY   path of librccl (default librccl.so.1, then
 *                        librccl.so)
 *
 * Only the named file is tried when the variable is set. plugin_open then
 * opens the GPU's library (nccl_provider.h) and answers
 * ACCEL_ERR_NOT_SUPPORTED, with the reason, without a GPU.
 */
#include "nccl_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the flavour ---- */

#if defined(ACCEL_NCCL_FLAVOUR_RCCL)
static const char *const flavour_libraries[] = {"librccl.so.1", "librccl.so",
                                                NULL};
const struct nccl_flavour accel__nccl_flavour = {
    .name = "rccl",
    .title = "RCCL",
    .library_env = "ACCEL_RCCL_LIBRARY",
    .libraries = flavour_libraries,
    .memory = ACCEL_NATIVE_HIP,
    .device = &accel__nccl_hip_ops,
};
#else
static const char *const flavour_libraries[] = {"libnccl.so.2", NULL};
const struct nccl_flavour accel__nccl_flavour = {
    .name = "nccl",
    .title = "NCCL",
    .library_env = "ACCEL_NCCL_LIBRARY",
    .libraries = flavour_libraries,
    .memory = ACCEL_NATIVE_CUDA,
    .device = &accel__nccl_cuda_ops,
};
#endif

/* ---- results ---- */

const char *accel__nccl_result_text(accel_comm_provider *provider,
                                    ancl_ncclResult_t result, char *buffer,
                                    size_t size)
{
    const char *text = provider->nccl.ncclGetErrorString != NULL
                           ? provider->nccl.ncclGetErrorString(result)
                           : NULL;

    if (text != NULL)
        return text;
    snprintf(buffer, size, "result %d", (int)result);
    return buffer;
}

/* What a failed NCCL call means for the caller. */
static accel_status nccl_status_of(ancl_ncclResult_t result)
{
    switch (result) {
    case ANCL_ncclInvalidArgument:
    case ANCL_ncclInvalidUsage:
        return ACCEL_ERR_INVALID_ARGUMENT;
    case ANCL_ncclRemoteError:
        /* A peer failed or left: the communicator is of no further use. */
        return ACCEL_ERR_COMM_ABORTED;
    case ANCL_ncclInProgress:
        return ACCEL_ERR_TIMEOUT;
    default:
        return ACCEL_ERR_DRIVER;
    }
}

accel_status accel__nccl_fail(accel_comm_provider *provider, const char *call,
                              ancl_ncclResult_t result)
{
    char number[32];

    if (result == ANCL_ncclInProgress)
        return provider->services->set_error(
            ACCEL_ERR_TIMEOUT, "%s: %s still in progress at the deadline",
            provider->flavour->name, call);
    return provider->services->set_error(
        nccl_status_of(result), "%s: %s failed: %s (%d)", provider->flavour->name,
        call, accel__nccl_result_text(provider, result, number, sizeof(number)),
        (int)result);
}

/* ---- the library ---- */

/* The host services the shared library loader reads (only getenv). */
static struct accel_host_services
loader_services(const struct accel_comm_services *services)
{
    struct accel_host_services host = {
        .struct_size = (uint32_t)ACCEL_HOST_SERVICES_V1_0_SIZE,
        .version = ACCEL_HOST_SERVICES_VERSION,
        .log = services->log,
        .set_error = services->set_error,
        .getenv = services->getenv,
    };

    return host;
}

/* Resolve every entry; false with the missing required ones in `reason`. */
static bool nccl_resolve(accel_comm_provider *provider, char *reason,
                         size_t reason_size)
{
    struct accel__native_missing missing = {0};
    struct nccl_symbols *s = &provider->nccl;

#define ANCL_RESOLVE(name, params, required)                                   \
    *(void **)&s->name = accel__native_library_symbol(&provider->library,      \
                                                      #name);                  \
    if (s->name == NULL && (required))                                         \
        accel__native_missing_add(&missing, #name);
#define ANCL_RESOLVE_REQUIRED(name, params) ANCL_RESOLVE(name, params, true)
#define ANCL_RESOLVE_OPTIONAL(name, params) ANCL_RESOLVE(name, params, false)
    ANCL_SYMBOLS(ANCL_RESOLVE_REQUIRED, ANCL_RESOLVE_OPTIONAL)
    ANCL_RESOLVE(ncclGetErrorString, (), true)
#undef ANCL_RESOLVE_OPTIONAL
#undef ANCL_RESOLVE_REQUIRED
#undef ANCL_RESOLVE
    if (missing.count == 0)
        return true;
    accel__native_missing_describe(&missing, &provider->library,
                                   provider->flavour->title, reason, reason_size);
    return false;
}

/* The collective library, resolved and asked its version. */
static accel_status nccl_library_open(accel_comm_provider *provider,
                                      const struct accel_host_services *host)
{
    const struct nccl_flavour *flavour = provider->flavour;
    const char *chosen = provider->services->getenv(flavour->library_env);
    char reason[ACCEL__NATIVE_REASON_MAX];
    ancl_ncclResult_t result;

    if (!accel__native_library_open(host, flavour->library_env, flavour->libraries,
                                    &provider->library, reason, sizeof(reason)))
        return provider->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED, "%s: %s not found: %s", flavour->name,
            chosen != NULL && chosen[0] != '\0' ? chosen : flavour->libraries[0],
            reason);
    if (!nccl_resolve(provider, reason, sizeof(reason)))
        return provider->services->set_error(ACCEL_ERR_NOT_SUPPORTED, "%s: %s",
                                             flavour->name, reason);
    result = provider->nccl.ncclGetVersion(&provider->version);
    if (result != ANCL_ncclSuccess)
        return accel__nccl_fail(provider, "ncclGetVersion", result);
    return ACCEL_OK;
}

/* ---- table entries ---- */

/* "2.28.9" from ncclGetVersion's code (X*1000+Y*100+Z before 2.9). */
static const char *version_text(int code, char *buffer, size_t size)
{
    if (code >= 10000)
        snprintf(buffer, size, "%d.%d.%d", code / 10000, code / 100 % 100,
                 code % 100);
    else
        snprintf(buffer, size, "%d.%d.%d", code / 1000, code / 100 % 10,
                 code % 100);
    return buffer;
}

static void nccl_plugin_close(accel_comm_provider *provider);

static accel_status nccl_plugin_open(const struct accel_comm_services *services,
                                     accel_comm_provider **out_provider)
{
    struct accel_host_services host;
    accel_comm_provider *provider;
    char reason[ACCEL__NATIVE_REASON_MAX];
    char version[32];
    accel_status status;

    *out_provider = NULL;
    if (services == NULL ||
        services->struct_size < offsetof(struct accel_comm_services, getenv) +
                                    sizeof(services->getenv))
        return ACCEL_ERR_INVALID_ARGUMENT;
    provider = calloc(1, sizeof(*provider));
    if (provider == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "%s: calloc of the provider failed",
                                   accel__nccl_flavour.name);
    provider->services = services;
    provider->flavour = &accel__nccl_flavour;
    host = loader_services(services);
    status = nccl_library_open(provider, &host);
    if (status != ACCEL_OK)
        goto fail;
    if (!accel__nccl_device_open(&provider->device, provider->flavour->device,
                                 &host, reason, sizeof(reason))) {
        status = services->set_error(
            ACCEL_ERR_NOT_SUPPORTED, "%s: %s %s at %s loaded, but %s",
            provider->flavour->name, provider->flavour->title,
            version_text(provider->version, version, sizeof(version)),
            provider->library.path, reason);
        goto fail;
    }
    services->log(ACCEL_LOG_INFO, "%s: %s %s from %s", provider->flavour->name,
                  provider->flavour->title,
                  version_text(provider->version, version, sizeof(version)),
                  provider->library.path);
    *out_provider = provider;
    return ACCEL_OK;

fail:
    nccl_plugin_close(provider);
    return status;
}

static void nccl_plugin_close(accel_comm_provider *provider)
{
    if (provider == NULL)
        return;
    accel__nccl_device_close(&provider->device);
    /* NCCL runs threads of its own once used: it stays mapped, as a driver does. */
    if (provider->library.handle != NULL)
        accel__native_library_close(&provider->library, provider->version != 0);
    free(provider);
}

static accel_status nccl_accepts_memory(accel_comm_provider *provider,
                                        accel_native_kind kind)
{
    if (kind == provider->flavour->memory)
        return ACCEL_OK;
    return provider->services->set_error(
        ACCEL_ERR_NOT_SUPPORTED, "%s: %s works on %s device memory only",
        provider->flavour->name, provider->flavour->title,
        provider->flavour->memory == ACCEL_NATIVE_HIP ? "HIP" : "CUDA");
}

static accel_status nccl_unique_id(accel_comm_provider *provider, void *out_id,
                                   size_t capacity, size_t *out_bytes)
{
    ancl_ncclUniqueId id;
    ancl_ncclResult_t result;

    *out_bytes = 0;
    if (capacity < sizeof(id))
        return provider->services->set_error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "%s: a unique id takes %zu bytes, not %zu", provider->flavour->name,
            sizeof(id), capacity);
    result = provider->nccl.ncclGetUniqueId(&id);
    if (result != ANCL_ncclSuccess)
        return accel__nccl_fail(provider, "ncclGetUniqueId", result);
    memcpy(out_id, &id, sizeof(id));
    *out_bytes = sizeof(id);
    return ACCEL_OK;
}

extern ACCEL_COMM_EXPORT const struct accel_comm_v1 accel_comm_v1;

const struct accel_comm_v1 accel_comm_v1 = {
    .struct_size = sizeof(struct accel_comm_v1),
    .abi_major = ACCEL_COMM_ABI_MAJOR,
    .abi_minor = ACCEL_COMM_ABI_MINOR,
#if defined(ACCEL_NCCL_FLAVOUR_RCCL)
    .name = "rccl",
#else
    .name = "nccl",
#endif
    .caps = ACCEL_COMM_CAP_STREAM | ACCEL_COMM_CAP_LOOPBACK,
    .plugin_open = nccl_plugin_open,
    .plugin_close = nccl_plugin_close,
    .accepts_memory = nccl_accepts_memory,
    .unique_id = nccl_unique_id,
    .comm_create = accel__nccl_comm_create,
    .comm_split = accel__nccl_comm_split,
    .comm_destroy = accel__nccl_comm_destroy,
    .comm_abort = accel__nccl_comm_abort,
    .comm_error = accel__nccl_comm_error,
    .submit = accel__nccl_submit,
};
