/*
 * libfakehip.so: a CPU implementation of the HIP runtime entry points that
 * accel's HIP plugin uses, so that the plugin and the conformance suite run
 * in CI without an AMD GPU. The plugin loads it like libamdhip64, through
 * ACCEL_HIP_LIBRARY, and resolves its entries by name.
 *
 * What it models: devices with a per-thread current device (hipSetDevice)
 * and a context made at first use and emptied by hipDeviceReset, which
 * frees its streams, memory and pinned registrations but, as ROCm's
 * runtime, not its events or modules (hipEventDestroy and hipModuleUnload
 * alone free those; fake_hip_live_events and fake_hip_live_modules count
 * what is left); device memory that is host memory (a device
 * pointer is the memory's address) with every device range checked
 * against a live allocation; pinned host memory, the runtime's own
 * (hipHostMalloc, freed with its context) or the caller's, registered
 * (hipHostRegister, a registration its context's end drops); non-blocking
 * streams whose work runs later on a thread of their own, in order
 * (tests/fakes/common); events that mark a point in a stream; 1D, 2D and
 * 3D copies with HIP's rules (a direction for each call, pitches,
 * hipPitchedPtr's ysize, no arrays); modules that are clang offload
 * bundles as hipcc writes them, whose host entry is a CPU image of
 * <accel/kernel.h> kernels that hipModuleLaunchKernel runs block by block
 * on the stream's thread (make_fake_code_object.c builds them); and a
 * context that, once lost, fails every call with hipErrorIllegalAddress
 * until hipDeviceReset.
 *
 * Knobs, read from the environment at each hipInit:
 *
 *   FAKE_HIP_DEVICES=N            devices, 0 to 8 (default 1)
 *   FAKE_HIP_INIT_RESULT=R        what hipInit returns (a hipError_t name
 *                                 or number; default hipSuccess). Until a
 *                                 hipInit succeeds every other entry fails,
 *                                 with hipErrorNoDevice when R says there
 *                                 is no device (hipErrorInvalidDevice or
 *                                 hipErrorNoDevice), as ROCm's runtime
 *                                 does on a machine without an AMD GPU
 *   FAKE_HIP_FAIL=F:N:R[,...]     the Nth call (from 1) of entry F
 *                                 returns R and does nothing else
 *   FAKE_HIP_LOSE_AT=N | F:N      the Nth call counted over every entry
 *                                 (or of entry F) loses the context: the
 *                                 call fails with hipErrorIllegalAddress,
 *                                 except hipModuleLaunchKernel, whose
 *                                 kernel "faults" when the stream reaches it
 *   FAKE_HIP_MEMORY_MB=N          memory per device (default 1024)
 *   FAKE_HIP_MAX_PITCH=N          hipDeviceAttributeMaxPitch (default
 *                                 2147483647)
 *   FAKE_HIP_DELAY_US=N           sleep before each piece of stream work
 *   FAKE_HIP_ARCH=T               gcnArchName (default
 *                                 gfx90a:sramecc+:xnack-)
 *   FAKE_HIP_KERNEL_LIMITS=K:T[:S][,...]
 *                                 kernel K's own limits, as launch bounds
 *                                 give them: at most T threads per block
 *                                 (hipModuleLaunchKernel refuses more), S
 *                                 bytes of static shared memory
 *
 * Like the runtime, and unlike a kinder double: hipDeviceReset empties the
 * device's context but keeps it, and a destroyed stream's handle is handed
 * out again by the next create; hipStreamSynchronize, and
 * hipEventSynchronize on an event made without hipEventBlockingSync, poll
 * actively (a core stays busy), so that a test can measure the CPU time of
 * a wait; no host function runs once the context is lost, except a
 * hipStreamAddCallback callback, which is told the error.
 *
 * Built with FAKE_HIP_ROCM5 (libfakehip5.so) it is a ROCm 5.2 runtime: no
 * hipGetDevicePropertiesR0600 and no hipLaunchHostFunc exported, and
 * hipGetErrorString gives the code's name, as Debian's libamdhip64.so.5
 * does. It never prints.
 */
#include "fake_hip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_hip_state fake_hip;

/* The calling thread's current device, as HIP keeps it; 0 until set. */
static _Thread_local int fake_hip_thread_device;

/* ---- names and knobs ---- */

struct fake_hip_code_name {
    const char *name;
    int value;
};

static const struct fake_hip_code_name fake_hip_code_names[] = {
#define FAKE_HIP_CODE_NAME(name, value) {#name, value},
    AHIP_ERROR_LIST(FAKE_HIP_CODE_NAME)
        AHIP_ERROR_LIST_LATER(FAKE_HIP_CODE_NAME)};

#define FAKE_HIP_CODE_COUNT                                                    \
    (sizeof(fake_hip_code_names) / sizeof(fake_hip_code_names[0]))

static const char *fake_hip_code_name(ahip_hipError_t code)
{
    for (size_t i = 0; i < FAKE_HIP_CODE_COUNT; i++) {
        if (fake_hip_code_names[i].value == (int)code)
            return fake_hip_code_names[i].name;
    }
    return NULL;
}

/* A hipError_t by name or number; false when it is neither. */
static bool fake_hip_parse_code(const char *text, int *out_code)
{
    char *end = NULL;
    long value;

    for (size_t i = 0; i < FAKE_HIP_CODE_COUNT; i++) {
        if (strcmp(fake_hip_code_names[i].name, text) == 0) {
            *out_code = fake_hip_code_names[i].value;
            return true;
        }
    }
    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > 100000)
        return false;
    *out_code = (int)value;
    return true;
}

static void fake_hip_read_knobs(void)
{
    const char *arch = getenv("FAKE_HIP_ARCH");

    fake_hip.device_count = (int)fake_env_number("FAKE_HIP_DEVICES", 1);
    if (fake_hip.device_count > FAKE_HIP_DEVICES_MAX)
        fake_hip.device_count = FAKE_HIP_DEVICES_MAX;
    fake_hip.memory_bytes = fake_env_number("FAKE_HIP_MEMORY_MB", 1024) << 20;
    fake_hip.max_pitch = fake_env_number("FAKE_HIP_MAX_PITCH", 2147483647u);
    fake_core.delay_us = fake_env_number("FAKE_HIP_DELAY_US", 0);
    snprintf(fake_hip.arch, sizeof(fake_hip.arch), "%s",
             arch != NULL && arch[0] != '\0' ? arch : FAKE_HIP_DEFAULT_ARCH);
    fake_kernel_limits_read("FAKE_HIP_KERNEL_LIMITS", &fake_hip.kernel_limits);
    fake_fails_read("FAKE_HIP_FAIL", fake_hip_parse_code, &fake_hip.fails);
    fake_lose_read("FAKE_HIP_LOSE_AT", &fake_hip.lose);
}

/* ---- entry bookkeeping ---- */

FAKE_EXPORT uint64_t fake_hip_calls(const char *name)
{
    return fake_calls(name);
}

ahip_hipError_t fake_hip_enter(const char *name, bool *out_lose)
{
    int failed;

    *out_lose = false;
    fake_count(name);
    if (!fake_hip.initialised)
        return fake_hip.init_result == AHIP_hipErrorInvalidDevice ||
                       fake_hip.init_result == AHIP_hipErrorNoDevice
                   ? AHIP_hipErrorNoDevice
                   : AHIP_hipErrorNotInitialized;
    failed = fake_knobs_apply(&fake_hip.fails, &fake_hip.lose, name, out_lose);
    return (ahip_hipError_t)failed;
}

ahip_hipError_t fake_hip_current(struct fake_hip_context **out_ctx)
{
    struct fake_hip_device *device;
    struct fake_hip_context *ctx;

    *out_ctx = NULL;
    if (fake_hip_thread_device >= fake_hip.device_count)
        return AHIP_hipErrorInvalidDevice;
    device = &fake_hip.devices[fake_hip_thread_device];
    if (device->context == NULL) {
        ctx = calloc(1, sizeof(*ctx));
        if (ctx == NULL)
            return AHIP_hipErrorOutOfMemory;
        ctx->magic = FAKE_HIP_MAGIC_CONTEXT;
        ctx->owner.device = fake_hip_thread_device;
        device->context = ctx;
    }
    *out_ctx = device->context;
    return device->context->owner.lost ? AHIP_hipErrorIllegalAddress
                                       : AHIP_hipSuccess;
}

void fake_hip_lose_current(void)
{
    struct fake_hip_context *ctx;

    (void)fake_hip_current(&ctx);
    fake_owner_lose(ctx != NULL ? &ctx->owner : NULL);
}

/* ---- initialisation and devices ---- */

FAKE_EXPORT ahip_hipError_t hipInit(unsigned int flags)
{
    const char *forced = getenv("FAKE_HIP_INIT_RESULT");
    int result = AHIP_hipSuccess;

    pthread_mutex_lock(&fake_core.lock);
    fake_count(__func__);
    if (forced != NULL && !fake_hip_parse_code(forced, &result))
        result = AHIP_hipErrorUnknown;
    if (flags != 0)
        result = AHIP_hipErrorInvalidValue;
    fake_hip_read_knobs();
    fake_hip.init_result = (ahip_hipError_t)result;
    fake_hip.initialised = result == AHIP_hipSuccess;
    pthread_mutex_unlock(&fake_core.lock);
    return (ahip_hipError_t)result;
}

FAKE_EXPORT ahip_hipError_t hipDriverGetVersion(int *version)
{
    if (version == NULL)
        return AHIP_hipErrorInvalidValue;
#ifdef FAKE_HIP_ROCM5
    *version = 50221153;
#else
    *version = 60342134;
#endif
    return AHIP_hipSuccess;
}

FAKE_EXPORT ahip_hipError_t hipGetDeviceCount(int *count)
{
    FAKE_HIP_ENTER(lose);
    if (count == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    *count = fake_hip.device_count;
    FAKE_HIP_RETURN(fake_hip.device_count == 0 ? AHIP_hipErrorNoDevice
                                               : AHIP_hipSuccess);
}

static bool fake_hip_device_valid(int device)
{
    return device >= 0 && device < fake_hip.device_count;
}

FAKE_EXPORT ahip_hipError_t hipDeviceGetName(char *name, int length,
                                             ahip_hipDevice_t device)
{
    FAKE_HIP_ENTER(lose);
    if (name == NULL || length <= 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    snprintf(name, (size_t)length, "Fake AMD GPU %d", device);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* As ROCm: 16 characters of the device's unique id, "GPU-" added by the plugin. */
FAKE_EXPORT ahip_hipError_t hipDeviceGetUuid(ahip_hipUUID *uuid,
                                             ahip_hipDevice_t device)
{
    char text[17];

    FAKE_HIP_ENTER(lose);
    if (uuid == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    snprintf(text, sizeof(text), "a3f0c0de%08x", (unsigned)device);
    memcpy(uuid->bytes, text, sizeof(uuid->bytes));
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* Device d sits on bus 0xc1 + d in domain 1, as HIP writes it. */
FAKE_EXPORT ahip_hipError_t hipDeviceGetPCIBusId(char *bus_id, int length,
                                                 int device)
{
    FAKE_HIP_ENTER(lose);
    if (bus_id == NULL || length <= 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    snprintf(bus_id, (size_t)length, "0001:%02x:00.0", 0xc1 + device);
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipDeviceTotalMem(size_t *bytes,
                                              ahip_hipDevice_t device)
{
    FAKE_HIP_ENTER(lose);
    if (bytes == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    *bytes = (size_t)fake_hip.memory_bytes;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* An MI200-like device: 110 compute units, AMD's usual limits. */
static bool fake_hip_attribute(ahip_hipDeviceAttribute_t attribute, int *out_value)
{
    switch (attribute) {
    case AHIP_hipDeviceAttributeMaxThreadsPerBlock:
        *out_value = 1024;
        return true;
    case AHIP_hipDeviceAttributeMaxBlockDimX:
        *out_value = 1024;
        return true;
    case AHIP_hipDeviceAttributeMaxBlockDimY:
        *out_value = 1024;
        return true;
    case AHIP_hipDeviceAttributeMaxBlockDimZ:
        *out_value = 1024;
        return true;
    case AHIP_hipDeviceAttributeMaxGridDimX:
        *out_value = 2147483647;
        return true;
    case AHIP_hipDeviceAttributeMaxGridDimY:
        *out_value = 65536;
        return true;
    case AHIP_hipDeviceAttributeMaxGridDimZ:
        *out_value = 65536;
        return true;
    case AHIP_hipDeviceAttributeMaxSharedMemoryPerBlock:
        *out_value = FAKE_HIP_MAX_SHARED_BYTES;
        return true;
    case AHIP_hipDeviceAttributeMaxPitch:
        *out_value = fake_hip.max_pitch > 2147483647u ? 2147483647
                                                      : (int)fake_hip.max_pitch;
        return true;
    case AHIP_hipDeviceAttributeMultiprocessorCount:
        *out_value = 110;
        return true;
    }
    return false;
}

FAKE_EXPORT ahip_hipError_t hipDeviceGetAttribute(
    int *value, ahip_hipDeviceAttribute_t attribute, int device)
{
    FAKE_HIP_ENTER(lose);
    if (value == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    FAKE_HIP_RETURN(fake_hip_attribute(attribute, value)
                        ? AHIP_hipSuccess
                        : AHIP_hipErrorInvalidValue);
}

/*
 * Fill a properties buffer of either layout: the name at the start of both,
 * gcnArchName where that layout has it (the plugin's hip_api.h offsets,
 * which hip_api_check.c proves against HIP's headers). The runtime writes
 * the whole struct; the fake writes as much of it as the R0600 layout's
 * size, so that a caller's too small buffer shows under the sanitizers.
 */
static ahip_hipError_t fake_hip_properties(void *properties, int device,
                                           size_t arch_offset,
                                           size_t struct_bytes)
{
    unsigned char *bytes = properties;

    if (properties == NULL)
        return AHIP_hipErrorInvalidValue;
    if (!fake_hip_device_valid(device))
        return AHIP_hipErrorInvalidDevice;
    memset(bytes, 0, struct_bytes);
    snprintf((char *)bytes, 256, "Fake AMD GPU %d", device);
    snprintf((char *)bytes + arch_offset, AHIP_PROPS_GCN_ARCH_NAME_BYTES, "%s",
             fake_hip.arch);
    return AHIP_hipSuccess;
}

/* The sizes of the two layouts: ROCm 5's hipDeviceProp_t, and ROCm 6's. */
#define FAKE_HIP_PROPS_R0000_BYTES 792
#define FAKE_HIP_PROPS_R0600_BYTES 1472

FAKE_EXPORT ahip_hipError_t
hipGetDeviceProperties(ahip_hipDeviceProp_tR0000 *properties, int device)
{
    FAKE_HIP_ENTER(lose);
    FAKE_HIP_RETURN(fake_hip_properties(properties, device,
                                        AHIP_PROPS_R0000_GCN_ARCH_NAME_OFFSET,
                                        FAKE_HIP_PROPS_R0000_BYTES));
}

#ifndef FAKE_HIP_ROCM5
FAKE_EXPORT ahip_hipError_t
hipGetDevicePropertiesR0600(ahip_hipDeviceProp_tR0600 *properties, int device)
{
    FAKE_HIP_ENTER(lose);
    FAKE_HIP_RETURN(fake_hip_properties(properties, device,
                                        AHIP_PROPS_R0600_GCN_ARCH_NAME_OFFSET,
                                        FAKE_HIP_PROPS_R0600_BYTES));
}
#endif

/* ---- the calling thread's device, and its reset ---- */

FAKE_EXPORT ahip_hipError_t hipGetDevice(int *device)
{
    FAKE_HIP_ENTER(lose);
    if (device == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    *device = fake_hip_thread_device;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipSetDevice(int device)
{
    FAKE_HIP_ENTER(lose);
    if (!fake_hip_device_valid(device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    fake_hip_thread_device = device;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/*
 * As HIP's (ROCm 5.2's hip_device_runtime.cpp, and clr's hip::Device::Reset
 * from ROCm 6): the current device's streams, memory and registrations go;
 * events and modules stay until destroyed. The device's context object stays, live again, as the runtime's does: the handles of
 * what it made may be handed out again (hipStreamCreateWithFlags), and a
 * stale one then names another stream.
 */
FAKE_EXPORT ahip_hipError_t hipDeviceReset(void)
{
    struct fake_hip_device *device;
    struct fake_hip_context *ctx;

    FAKE_HIP_ENTER(lose);
    if (!fake_hip_device_valid(fake_hip_thread_device))
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidDevice);
    device = &fake_hip.devices[fake_hip_thread_device];
    ctx = device->context;
    if (ctx != NULL) {
        fake_hip_release_streams(ctx);
        device->used_bytes -= fake_blocks_release(&ctx->owner);
        ctx->owner.lost = false;
    }
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

/* ---- memory ---- */

FAKE_EXPORT ahip_hipError_t hipMalloc(void **pointer, size_t bytes)
{
    struct fake_hip_device *device;
    struct fake_hip_context *ctx;
    ahip_hipError_t result;
    uintptr_t base = 0;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (pointer == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    *pointer = NULL;
    if (bytes == 0)
        FAKE_HIP_RETURN(AHIP_hipSuccess);
    device = &fake_hip.devices[ctx->owner.device];
    if (bytes > fake_hip.memory_bytes - device->used_bytes)
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    if (!fake_block_add(bytes, ctx->owner.device, &ctx->owner, &base))
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    device->used_bytes += bytes;
    *pointer = (void *)base;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipFree(void *pointer)
{
    struct fake_hip_context *ctx;
    int device;
    struct fake_block *block;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (pointer == NULL)
        FAKE_HIP_RETURN(result);
    block = fake_block_take((uintptr_t)pointer, true);
    if (block == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    /* Freed even on a lost device, which still reports its error. */
    device = block->device;
    fake_hip.devices[device].used_bytes -= fake_block_free(block);
    FAKE_HIP_RETURN(result);
}

FAKE_EXPORT ahip_hipError_t hipHostMalloc(void **pointer, size_t bytes,
                                          unsigned int flags)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;
    uintptr_t base = 0;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (pointer == NULL || bytes == 0 ||
        (flags & ~FAKE_HIP_HOST_MALLOC_PORTABLE) != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    /* The device's context owns it: hipDeviceReset frees it too. */
    if (!fake_block_add(bytes, -1, &ctx->owner, &base))
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    *pointer = (void *)base;
    FAKE_HIP_RETURN(AHIP_hipSuccess);
}

FAKE_EXPORT ahip_hipError_t hipHostFree(void *pointer)
{
    struct fake_hip_context *ctx;
    struct fake_block *block;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (pointer == NULL)
        FAKE_HIP_RETURN(result);
    block = fake_block_take((uintptr_t)pointer, false);
    if (block == NULL)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    fake_block_free(block);
    FAKE_HIP_RETURN(result);
}

/* As HIP's: the registration belongs to the current device's context, which hipDeviceReset ends. */
FAKE_EXPORT ahip_hipError_t hipHostRegister(void *pointer, size_t bytes,
                                            unsigned int flags)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    result = fake_hip_current(&ctx);
    if (result != AHIP_hipSuccess)
        FAKE_HIP_RETURN(result);
    if (pointer == NULL || bytes == 0 || (flags & ~0xfu) != 0)
        FAKE_HIP_RETURN(AHIP_hipErrorInvalidValue);
    switch (fake_host_register((uintptr_t)pointer, bytes, &ctx->owner)) {
    case FAKE_REGISTER_DONE:
        FAKE_HIP_RETURN(AHIP_hipSuccess);
    case FAKE_REGISTER_OVERLAPS:
        FAKE_HIP_RETURN(AHIP_hipErrorHostMemoryAlreadyRegistered);
    default:
        FAKE_HIP_RETURN(AHIP_hipErrorOutOfMemory);
    }
}

FAKE_EXPORT ahip_hipError_t hipHostUnregister(void *pointer)
{
    struct fake_hip_context *ctx;
    ahip_hipError_t result;

    FAKE_HIP_ENTER(lose);
    /* Dropped even on a lost device, which still reports its error. */
    result = fake_hip_current(&ctx);
    if (!fake_host_unregister((uintptr_t)pointer))
        FAKE_HIP_RETURN(AHIP_hipErrorHostMemoryNotRegistered);
    FAKE_HIP_RETURN(result);
}

FAKE_EXPORT uint64_t fake_hip_registered_bytes(void)
{
    return fake_registered_bytes();
}

/* ---- errors ---- */

FAKE_EXPORT const char *hipGetErrorName(ahip_hipError_t error)
{
    const char *name = fake_hip_code_name(error);

    return name != NULL ? name : "hipErrorUnknown";
}

FAKE_EXPORT const char *hipGetErrorString(ahip_hipError_t error)
{
#ifndef FAKE_HIP_ROCM5
    if (error == AHIP_hipErrorOutOfMemory)
        return "out of memory (fake HIP runtime)";
    if (error == AHIP_hipErrorIllegalAddress)
        return "an illegal memory access was encountered (fake HIP runtime)";
#endif
    /* ROCm 5.2 gives the name again. */
    return hipGetErrorName(error);
}
