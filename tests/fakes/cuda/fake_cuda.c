/*
 * libfakecuda.so: a CPU implementation of the CUDA Driver API entry points
 * that accel's CUDA plugin uses, so that the plugin and the conformance
 * suite run in CI without a GPU. The plugin loads it like the real driver,
 * through ACCEL_CUDA_LIBRARY, by cuGetProcAddress_v2 or by versioned names.
 *
 * What it models: devices with a primary context (retained, released,
 * reset), made current per thread on a stack; device memory that is host
 * memory (a CUdeviceptr is the pointer's value) with every device range
 * checked against a live allocation; pinned host memory, the driver's own
 * (cuMemHostAlloc, freed with its context) or the caller's, registered
 * (cuMemHostRegister, a registration its context's end drops); streams
 * that run their work later on a thread of their own, in order, as a GPU does
 * (copies from pageable memory read their source before returning, and
 * copies to pageable memory finish before returning, as CUDA's do); events
 * that mark a point in a stream; 1D/2D/3D copies with cuda.h's rules
 * (pitches, srcHeight, LOD, reserved fields); modules that are CPU images
 * built from <accel/kernel.h> kernels (an ELF shared object, loaded from
 * memory), whose accel_cpu_kernel_NAME descriptors cuLaunchKernel runs,
 * block by block, on the stream's thread; and a context that, once lost,
 * fails every call with CUDA_ERROR_ILLEGAL_ADDRESS until it is reset.
 *
 * Knobs, read from the environment at each cuInit:
 *
 *   FAKE_CUDA_DEVICES=N            devices, 0 to 8 (default 1)
 *   FAKE_CUDA_INIT_RESULT=R        what cuInit returns (a CUresult name or
 *                                  number; default CUDA_SUCCESS)
 *   FAKE_CUDA_FAIL=F:N:R[,...]     the Nth call (from 1) of entry F (its
 *                                  exported name, e.g. cuMemAlloc_v2)
 *                                  returns R and does nothing else
 *   FAKE_CUDA_LOSE_AT=N | F:N      the Nth call counted over every entry
 *                                  (or of entry F) loses the context: the
 *                                  call fails with ILLEGAL_ADDRESS, except
 *                                  cuLaunchKernel, whose kernel "faults"
 *                                  when the stream reaches it, like a GPU's
 *   FAKE_CUDA_MEMORY_MB=N          memory per device (default 1024)
 *   FAKE_CUDA_MAX_PITCH=N          CU_DEVICE_ATTRIBUTE_MAX_PITCH (default
 *                                  2147483647)
 *   FAKE_CUDA_DELAY_US=N           sleep before each piece of stream work
 *   FAKE_CUDA_NO_PROC_ADDRESS=1    cuGetProcAddress_v2 fails (an older
 *                                  driver): entries come by dlsym
 *   FAKE_CUDA_NO_PARAM_INFO=1      cuFuncGetParamInfo is not supported
 *   FAKE_CUDA_JIT_DELAY_US=N       cuModuleLoadDataEx takes N µs more, as
 *                                  a JIT does (read at each call, spent
 *                                  before the fake's lock is taken)
 *   FAKE_CUDA_GATE=F[,...]         each call of entry F (cuMemFree_v2,
 *                                  cuModuleGetFunction, cuMemHostRegister_v2)
 *                                  waits, before the fake's lock is taken,
 *                                  until fake_cuda_gate_open() (as the
 *                                  driver's free waits for the device, or a
 *                                  lazy load or a pinning takes long);
 *                                  fake_cuda_gate_waiting() counts the
 *                                  calls waiting there
 *   FAKE_CUDA_KERNEL_LIMITS=K:T[:S][,...]
 *                                  kernel K's own limits, as a kernel
 *                                  compiled with launch bounds or static
 *                                  shared memory has them: at most T
 *                                  threads per block (cuLaunchKernel
 *                                  refuses more with INVALID_VALUE), S
 *                                  bytes of static shared memory
 *
 * Like the driver, and unlike a kinder double: a primary context keeps its
 * handle across cuDevicePrimaryCtxReset and its last release; a destroyed
 * stream's or event's handle is handed out again by the next create;
 * cuStreamSynchronize, and cuEventSynchronize on an event made without
 * CU_EVENT_BLOCKING_SYNC, spin (a core stays busy until the work is done,
 * as under the driver's default scheduling), so that a test can measure the
 * CPU time of a wait; a launch above a kernel's own thread limit, or with
 * more dynamic shared memory than it opted in to (48 KiB less its static
 * shared memory by default), fails; cuMemFree_v2 waits until the current
 * context's streams have done their work, as the driver's synchronises;
 * and no host function runs once the context is lost.
 *
 * It runs over the vendor-neutral fake core (tests/fakes/common), as the
 * fake HIP runtime does. It never prints.
 */
#include "fake_cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_state fake;

/* The calling thread's context stack. */
#define FAKE_STACK_MAX 16
static _Thread_local struct CUctx_st *fake_stack[FAKE_STACK_MAX];
static _Thread_local int fake_stack_depth;

/* FAKE_CUDA_GATE: calls held until the test lets them go. */
static pthread_mutex_t free_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t free_gate_moved = PTHREAD_COND_INITIALIZER;
static bool free_gate_opened;
static unsigned free_gate_waiters;

/* ---- names and knobs ---- */

struct fake_result_name {
    const char *name;
    acu_CUresult value;
};

static const struct fake_result_name fake_result_names[] = {
#define FAKE_RESULT_NAME(name, value) {#name, (acu_CUresult)(value)},
    ACU_RESULT_LIST(FAKE_RESULT_NAME)};

#define FAKE_RESULT_COUNT                                                      \
    (sizeof(fake_result_names) / sizeof(fake_result_names[0]))

static const char *fake_result_name(acu_CUresult result)
{
    for (size_t i = 0; i < FAKE_RESULT_COUNT; i++) {
        if (fake_result_names[i].value == result)
            return fake_result_names[i].name;
    }
    return NULL;
}

/* A CUresult by name or number; false when it is neither. */
static bool fake_parse_result(const char *text, int *out_result)
{
    char *end = NULL;
    long value;

    for (size_t i = 0; i < FAKE_RESULT_COUNT; i++) {
        if (strcmp(fake_result_names[i].name, text) == 0) {
            *out_result = (int)fake_result_names[i].value;
            return true;
        }
    }
    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0)
        return false;
    *out_result = (int)value;
    return true;
}

static void fake_read_knobs(void)
{
    fake.device_count = (int)fake_env_number("FAKE_CUDA_DEVICES", 1);
    if (fake.device_count > FAKE_DEVICES_MAX)
        fake.device_count = FAKE_DEVICES_MAX;
    fake.memory_bytes = fake_env_number("FAKE_CUDA_MEMORY_MB", 1024) << 20;
    fake.max_pitch = fake_env_number("FAKE_CUDA_MAX_PITCH", 2147483647u);
    fake_core.delay_us = fake_env_number("FAKE_CUDA_DELAY_US", 0);
    fake.no_param_info = fake_env_number("FAKE_CUDA_NO_PARAM_INFO", 0) != 0;
    fake_kernel_limits_read("FAKE_CUDA_KERNEL_LIMITS", &fake.kernel_limits);
    fake_fails_read("FAKE_CUDA_FAIL", fake_parse_result, &fake.fails);
    fake_lose_read("FAKE_CUDA_LOSE_AT", &fake.lose);
}

/* ---- entry bookkeeping ---- */

FAKE_EXPORT uint64_t fake_cuda_calls(const char *name)
{
    return fake_calls(name);
}

acu_CUresult fake_enter(const char *name, bool *out_lose)
{
    *out_lose = false;
    fake_count(name);
    if (!fake.initialised)
        return ACU_CUDA_ERROR_NOT_INITIALIZED;
    return (acu_CUresult)fake_knobs_apply(&fake.fails, &fake.lose, name,
                                          out_lose);
}

acu_CUresult fake_current(struct CUctx_st **out_ctx)
{
    struct CUctx_st *ctx = fake_stack_depth > 0
                               ? fake_stack[fake_stack_depth - 1]
                               : NULL;

    *out_ctx = ctx;
    if (ctx == NULL)
        return ACU_CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->magic != FAKE_MAGIC_CONTEXT || !ctx->active)
        return ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (ctx->owner.lost)
        return ACU_CUDA_ERROR_ILLEGAL_ADDRESS;
    return ACU_CUDA_SUCCESS;
}

bool fake_current_to_release(struct CUctx_st **out_ctx, acu_CUresult *out_result)
{
    *out_result = fake_current(out_ctx);
    return *out_result != ACU_CUDA_ERROR_INVALID_CONTEXT &&
           *out_result != ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

void fake_lose_current(void)
{
    struct CUctx_st *ctx = fake_stack_depth > 0
                               ? fake_stack[fake_stack_depth - 1]
                               : NULL;

    if (ctx == NULL || ctx->magic != FAKE_MAGIC_CONTEXT)
        ctx = fake.device_count > 0 ? fake.devices[0].primary : NULL;
    fake_owner_lose(ctx != NULL ? &ctx->owner : NULL);
}

/* ---- initialisation and devices ---- */

FAKE_EXPORT acu_CUresult cuInit(unsigned int flags)
{
    const char *forced = getenv("FAKE_CUDA_INIT_RESULT");
    int result = ACU_CUDA_SUCCESS;

    if (flags != 0)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    if (forced != NULL && !fake_parse_result(forced, &result))
        result = ACU_CUDA_ERROR_UNKNOWN;
    pthread_mutex_lock(&free_gate_lock);
    free_gate_opened = false;
    pthread_mutex_unlock(&free_gate_lock);
    pthread_mutex_lock(&fake_core.lock);
    fake_read_knobs();
    fake.initialised = result == ACU_CUDA_SUCCESS;
    pthread_mutex_unlock(&fake_core.lock);
    return (acu_CUresult)result;
}

FAKE_EXPORT acu_CUresult cuDriverGetVersion(int *version)
{
    if (version == NULL)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    *version = FAKE_DRIVER_VERSION;
    return ACU_CUDA_SUCCESS;
}

FAKE_EXPORT acu_CUresult cuDeviceGetCount(int *count)
{
    FAKE_ENTER(lose);
    if (count == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    *count = fake.device_count;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuDeviceGet(acu_CUdevice *device, int ordinal)
{
    FAKE_ENTER(lose);
    if (device == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (ordinal < 0 || ordinal >= fake.device_count)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    *device = ordinal;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

static bool fake_device_valid(acu_CUdevice device)
{
    return device >= 0 && device < fake.device_count;
}

FAKE_EXPORT acu_CUresult cuDeviceGetName(char *name, int length,
                                         acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (name == NULL || length <= 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    snprintf(name, (size_t)length, "Fake CUDA Device %d", device);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* Device d's uuid is 5b1c2f3a-0d00-4c1e-8a6b-00000000000d (d as its second group's
 * first byte and its last): one prefix for all, a longer one for each. */
FAKE_EXPORT acu_CUresult cuDeviceGetUuid_v2(acu_CUuuid *uuid, acu_CUdevice device)
{
    static const unsigned char base[16] = {0x5b, 0x1c, 0x2f, 0x3a, 0x00, 0x00,
                                           0x4c, 0x1e, 0x8a, 0x6b, 0,    0,
                                           0,    0,    0,    0};

    FAKE_ENTER(lose);
    if (uuid == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    memcpy(uuid->bytes, base, sizeof(base));
    uuid->bytes[4] = (char)device;
    uuid->bytes[15] = (char)device;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* Device d sits on bus 0x41 + d, written as CUDA does (upper case). */
FAKE_EXPORT acu_CUresult cuDeviceGetPCIBusId(char *bus_id, int length,
                                             acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (bus_id == NULL || length <= 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    snprintf(bus_id, (size_t)length, "0000:%02X:00.0", 0x41 + device);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuDeviceTotalMem_v2(size_t *bytes, acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (bytes == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    *bytes = (size_t)fake.memory_bytes;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* A compute capability 9.0 device with four SMs and CUDA's usual limits. */
static bool fake_attribute(acu_CUdevice_attribute attribute, int *out_value)
{
    switch (attribute) {
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *out_value = 1024;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        *out_value = 1024;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        *out_value = 1024;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        *out_value = 64;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *out_value = 2147483647;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        *out_value = 65535;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *out_value = 65535;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *out_value = FAKE_MAX_SHARED_BYTES;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_PITCH:
        *out_value = fake.max_pitch > 2147483647u ? 2147483647
                                                  : (int)fake.max_pitch;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *out_value = 4;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        *out_value = 1;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *out_value = 9;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *out_value = 0;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *out_value = FAKE_MAX_SHARED_OPTIN_BYTES;
        return true;
    }
    return false;
}

FAKE_EXPORT acu_CUresult cuDeviceGetAttribute(int *value,
                                              acu_CUdevice_attribute attribute,
                                              acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (value == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    FAKE_RETURN(fake_attribute(attribute, value) ? ACU_CUDA_SUCCESS
                                                 : ACU_CUDA_ERROR_INVALID_VALUE);
}

/* ---- contexts ---- */

/*
 * Free everything made in a primary context, as its reset and its last
 * release do; the context itself, its handle, stays, live again (or
 * inactive after the last release). Streams first, since their threads
 * may still be using memory and modules.
 */
static void fake_context_clear(struct fake_device *device, bool deactivate)
{
    struct CUctx_st *ctx = device->primary;

    if (ctx == NULL)
        return;
    fake_release_streams(ctx);
    fake_release_modules(ctx);
    device->used_bytes -= fake_blocks_release(&ctx->owner);
    ctx->owner.lost = false;
    if (deactivate)
        ctx->active = false;
}

FAKE_EXPORT acu_CUresult cuDevicePrimaryCtxRetain(acu_CUcontext *context,
                                                  acu_CUdevice device)
{
    struct fake_device *d;

    FAKE_ENTER(lose);
    if (context == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    d = &fake.devices[device];
    if (d->primary == NULL) {
        d->primary = calloc(1, sizeof(*d->primary));
        if (d->primary == NULL)
            FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
        d->primary->magic = FAKE_MAGIC_CONTEXT;
        d->primary->owner.device = device;
    }
    d->primary->active = true;
    d->retains++;
    *context = d->primary;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuDevicePrimaryCtxRelease_v2(acu_CUdevice device)
{
    struct fake_device *d;

    FAKE_ENTER(lose);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    d = &fake.devices[device];
    if (d->retains == 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    if (--d->retains == 0)
        fake_context_clear(d, true);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* As CUDA's: the context's state goes; its handle and the retains stay. */
FAKE_EXPORT acu_CUresult cuDevicePrimaryCtxReset_v2(acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    fake_context_clear(&fake.devices[device], fake.devices[device].retains == 0);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuCtxGetCurrent(acu_CUcontext *context)
{
    FAKE_ENTER(lose);
    if (context == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    *context = fake_stack_depth > 0 ? fake_stack[fake_stack_depth - 1] : NULL;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuCtxPushCurrent_v2(acu_CUcontext context)
{
    FAKE_ENTER(lose);
    if (context == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (context->magic != FAKE_MAGIC_CONTEXT)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    if (fake_stack_depth == FAKE_STACK_MAX)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    fake_stack[fake_stack_depth++] = context;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* As CUDA's: replaces the top of the thread's stack; NULL unbinds it. */
FAKE_EXPORT acu_CUresult cuCtxSetCurrent(acu_CUcontext context)
{
    FAKE_ENTER(lose);
    if (context != NULL && context->magic != FAKE_MAGIC_CONTEXT)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    if (context == NULL) {
        if (fake_stack_depth > 0)
            fake_stack_depth--;
        FAKE_RETURN(ACU_CUDA_SUCCESS);
    }
    if (fake_stack_depth == 0)
        fake_stack_depth = 1;
    fake_stack[fake_stack_depth - 1] = context;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuCtxPopCurrent_v2(acu_CUcontext *context)
{
    FAKE_ENTER(lose);
    if (fake_stack_depth == 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_CONTEXT);
    fake_stack_depth--;
    if (context != NULL)
        *context = fake_stack[fake_stack_depth];
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* ---- memory ---- */

FAKE_EXPORT acu_CUresult cuMemAlloc_v2(acu_CUdeviceptr *address, size_t bytes)
{
    struct fake_device *d;
    struct CUctx_st *ctx;
    acu_CUresult result;
    uintptr_t base = 0;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (address == NULL || bytes == 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    d = &fake.devices[ctx->owner.device];
    if (bytes > fake.memory_bytes - d->used_bytes)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    /* Device memory starts with garbage, as a GPU's does. */
    if (!fake_block_add(bytes, ctx->owner.device, &ctx->owner, &base))
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    d->used_bytes += bytes;
    *address = base;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* Free the block of that kind at `base`; even on a lost context, which still reports its error. */
static acu_CUresult fake_free_block(uintptr_t base, bool device)
{
    struct fake_block *block;
    struct CUctx_st *ctx;
    acu_CUresult result;
    int owner_device;
    size_t bytes;

    if (!fake_current_to_release(&ctx, &result))
        return result;
    block = fake_block_take(base, device);
    if (block == NULL)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    owner_device = block->device;
    bytes = fake_block_free(block);
    if (device)
        fake.devices[owner_device].used_bytes -= bytes;
    return result;
}

FAKE_EXPORT void fake_cuda_gate_open(void)
{
    pthread_mutex_lock(&free_gate_lock);
    free_gate_opened = true;
    pthread_cond_broadcast(&free_gate_moved);
    pthread_mutex_unlock(&free_gate_lock);
}

FAKE_EXPORT unsigned fake_cuda_gate_waiting(void)
{
    pthread_mutex_lock(&free_gate_lock);
    unsigned waiting = free_gate_waiters;
    pthread_mutex_unlock(&free_gate_lock);
    return waiting;
}

/* Wait at the gate if FAKE_CUDA_GATE names `entry`. */
void fake_gate_pass(const char *entry)
{
    const char *list = getenv("FAKE_CUDA_GATE");
    size_t length = strlen(entry);
    const char *at = list;

    while (at != NULL && (strncmp(at, entry, length) != 0 ||
                          (at[length] != ',' && at[length] != '\0'))) {
        at = strchr(at, ',');
        at = at != NULL ? at + 1 : NULL;
    }
    if (at == NULL)
        return;
    pthread_mutex_lock(&free_gate_lock);
    free_gate_waiters++;
    pthread_cond_broadcast(&free_gate_moved);
    while (!free_gate_opened)
        pthread_cond_wait(&free_gate_moved, &free_gate_lock);
    free_gate_waiters--;
    pthread_mutex_unlock(&free_gate_lock);
}

/*
 * As the driver's cuMemFree, which synchronises: wait until every stream of
 * the current context has done what was enqueued on it (or the context is
 * lost). Lock held; dropped while waiting, so the scan starts again after
 * each wait.
 */
static void fake_wait_context_idle(void)
{
    struct CUctx_st *ctx;
    bool waited = true;

    if (fake_current(&ctx) != ACU_CUDA_SUCCESS)
        return;
    while (waited && !ctx->owner.lost) {
        waited = false;
        for (struct CUstream_st *s = fake.streams; s != NULL; s = s->next) {
            if (s->ctx == ctx && s->queue.completed < s->queue.submitted) {
                fake_stream_wait_ticket(&s->queue, s->queue.submitted);
                waited = true;
                break;
            }
        }
    }
}

FAKE_EXPORT acu_CUresult cuMemFree_v2(acu_CUdeviceptr address)
{
    fake_gate_pass("cuMemFree_v2");
    FAKE_ENTER(lose);
    fake_wait_context_idle();
    FAKE_RETURN(fake_free_block((uintptr_t)address, true));
}

FAKE_EXPORT acu_CUresult cuMemHostAlloc(void **pointer, size_t bytes,
                                        unsigned int flags)
{
    struct CUctx_st *ctx;
    acu_CUresult result;
    uintptr_t base = 0;

    (void)flags;
    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (pointer == NULL || bytes == 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    /* The context owns it, as CUDA's does: cuDevicePrimaryCtxReset frees it too. */
    if (!fake_block_add(bytes, -1, &ctx->owner, &base))
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    *pointer = (void *)base;
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

FAKE_EXPORT acu_CUresult cuMemFreeHost(void *pointer)
{
    FAKE_ENTER(lose);
    FAKE_RETURN(fake_free_block((uintptr_t)pointer, false));
}

/* As CUDA's: portable or not, the registration belongs to the current context. */
FAKE_EXPORT acu_CUresult cuMemHostRegister_v2(void *pointer, size_t bytes,
                                              unsigned int flags)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    fake_gate_pass("cuMemHostRegister_v2");
    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result != ACU_CUDA_SUCCESS)
        FAKE_RETURN(result);
    if (pointer == NULL || bytes == 0 || (flags & ~0xfu) != 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    switch (fake_host_register((uintptr_t)pointer, bytes, &ctx->owner)) {
    case FAKE_REGISTER_DONE:
        FAKE_RETURN(ACU_CUDA_SUCCESS);
    case FAKE_REGISTER_OVERLAPS:
        FAKE_RETURN(ACU_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    default:
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    }
}

FAKE_EXPORT acu_CUresult cuMemHostUnregister(void *pointer)
{
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    if (!fake_current_to_release(&ctx, &result))
        FAKE_RETURN(result);
    if (!fake_host_unregister((uintptr_t)pointer))
        FAKE_RETURN(ACU_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    FAKE_RETURN(result);
}

FAKE_EXPORT uint64_t fake_cuda_registered_bytes(void)
{
    return fake_registered_bytes();
}

/* ---- errors ---- */

FAKE_EXPORT acu_CUresult cuGetErrorString(acu_CUresult error, const char **text)
{
    const char *name = fake_result_name(error);

    if (text == NULL || name == NULL)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    *text = error == ACU_CUDA_ERROR_OUT_OF_MEMORY
                ? "out of memory (fake driver)"
            : error == ACU_CUDA_ERROR_ILLEGAL_ADDRESS
                ? "an illegal memory access was encountered (fake driver)"
                : "no description (fake driver)";
    return ACU_CUDA_SUCCESS;
}

FAKE_EXPORT acu_CUresult cuGetErrorName(acu_CUresult error, const char **text)
{
    const char *name = fake_result_name(error);

    if (text == NULL || name == NULL)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    *text = name;
    return ACU_CUDA_SUCCESS;
}
