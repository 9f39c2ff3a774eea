/*
 * libfakecuda.so: a CPU implementation of the CUDA Driver API entry points
 * that accel's CUDA plugin uses, so that the plugin and the conformance
 * suite run in CI without a GPU. The plugin loads it like the real driver,
 * through ACCEL_CUDA_LIBRARY, by cuGetProcAddress_v2 or by versioned names.
 *
 * What it models: devices with a primary context (retained, released,
 * reset), made current per thread on a stack; device memory that is host
 * memory (a CUdeviceptr is the pointer's value) with every device range
 * checked against a live allocation; pinned host memory; streams that run
 * their work later on a thread of their own, in order, as a GPU does
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
 *
 * It never prints.
 */
#include "fake_cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_state fake = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .progress = PTHREAD_COND_INITIALIZER,
};

/* The calling thread's context stack. */
#define FAKE_STACK_MAX 16
static _Thread_local struct CUctx_st *fake_stack[FAKE_STACK_MAX];
static _Thread_local int fake_stack_depth;

/* ---- names and knobs ---- */

struct fake_result_name {
    const char *name;
    acu_CUresult value;
};

static const struct fake_result_name fake_result_names[] = {
#define FAKE_RESULT_NAME(name, value) {#name, (acu_CUresult)(value)},
    ACU_RESULT_LIST(FAKE_RESULT_NAME)
};

#define FAKE_RESULT_COUNT (sizeof(fake_result_names) / sizeof(fake_result_names[0]))

static const char *fake_result_name(acu_CUresult result)
{
    for (size_t i = 0; i < FAKE_RESULT_COUNT; i++) {
        if (fake_result_names[i].value == result)
            return fake_result_names[i].name;
    }
    return NULL;
}

/* A CUresult by name or number; false when it is neither. */
static bool fake_parse_result(const char *text, acu_CUresult *out_result)
{
    char *end = NULL;
    long value;

    for (size_t i = 0; i < FAKE_RESULT_COUNT; i++) {
        if (strcmp(fake_result_names[i].name, text) == 0) {
            *out_result = fake_result_names[i].value;
            return true;
        }
    }
    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0)
        return false;
    *out_result = (acu_CUresult)value;
    return true;
}

static uint64_t fake_env_number(const char *name, uint64_t fallback)
{
    const char *text = getenv(name);
    char *end = NULL;
    unsigned long long value;

    if (text == NULL || *text == '\0')
        return fallback;
    value = strtoull(text, &end, 10);
    return end != text && *end == '\0' ? (uint64_t)value : fallback;
}

/* FAKE_CUDA_FAIL: "name:nth:result", comma-separated. */
static void fake_read_fails(void)
{
    const char *text = getenv("FAKE_CUDA_FAIL");
    char copy[512];
    char *save = NULL;

    fake.fail_count = 0;
    if (text == NULL)
        return;
    snprintf(copy, sizeof(copy), "%s", text);
    for (char *item = strtok_r(copy, ",", &save); item != NULL && fake.fail_count < FAKE_FAILS_MAX;
         item = strtok_r(NULL, ",", &save)) {
        struct fake_fail *fail = &fake.fails[fake.fail_count];
        char *nth = strchr(item, ':');
        char *result = nth != NULL ? strchr(nth + 1, ':') : NULL;

        if (result == NULL)
            continue;
        *nth++ = '\0';
        *result++ = '\0';
        snprintf(fail->name, sizeof(fail->name), "%s", item);
        fail->nth = strtoull(nth, NULL, 10);
        fail->seen = 0;
        if (fake_parse_result(result, &fail->result) && fail->nth != 0)
            fake.fail_count++;
    }
}

/* FAKE_CUDA_LOSE_AT: "nth" or "name:nth". */
static void fake_read_lose(void)
{
    const char *text = getenv("FAKE_CUDA_LOSE_AT");
    const char *colon;

    fake.lose_name[0] = '\0';
    fake.lose_nth = 0;
    fake.lose_seen = 0;
    if (text == NULL)
        return;
    colon = strchr(text, ':');
    if (colon != NULL) {
        snprintf(fake.lose_name, sizeof(fake.lose_name), "%.*s", (int)(colon - text), text);
        text = colon + 1;
    }
    fake.lose_nth = strtoull(text, NULL, 10);
}

static void fake_read_knobs(void)
{
    fake.device_count = (int)fake_env_number("FAKE_CUDA_DEVICES", 1);
    if (fake.device_count > FAKE_DEVICES_MAX)
        fake.device_count = FAKE_DEVICES_MAX;
    fake.memory_bytes = fake_env_number("FAKE_CUDA_MEMORY_MB", 1024) << 20;
    fake.max_pitch = fake_env_number("FAKE_CUDA_MAX_PITCH", 2147483647u);
    fake.delay_us = fake_env_number("FAKE_CUDA_DELAY_US", 0);
    fake.no_param_info = fake_env_number("FAKE_CUDA_NO_PARAM_INFO", 0) != 0;
    fake_read_fails();
    fake_read_lose();
}

/* ---- entry bookkeeping ---- */

#define FAKE_COUNTERS_MAX 64

static struct {
    const char *name;
    uint64_t calls;
} fake_counters[FAKE_COUNTERS_MAX];

void fake_count(const char *name)
{
    for (int i = 0; i < FAKE_COUNTERS_MAX; i++) {
        if (fake_counters[i].name == NULL)
            fake_counters[i].name = name;
        if (strcmp(fake_counters[i].name, name) == 0) {
            fake_counters[i].calls++;
            return;
        }
    }
}

FAKE_EXPORT uint64_t fake_cuda_calls(const char *name)
{
    uint64_t calls = 0;

    pthread_mutex_lock(&fake.lock);
    for (int i = 0; i < FAKE_COUNTERS_MAX && fake_counters[i].name != NULL; i++) {
        if (strcmp(fake_counters[i].name, name) == 0)
            calls = fake_counters[i].calls;
    }
    pthread_mutex_unlock(&fake.lock);
    return calls;
}

acu_CUresult fake_enter(const char *name, bool *out_lose)
{
    *out_lose = false;
    fake_count(name);
    if (!fake.initialised)
        return ACU_CUDA_ERROR_NOT_INITIALIZED;
    for (int i = 0; i < fake.fail_count; i++) {
        struct fake_fail *fail = &fake.fails[i];

        if (strcmp(fail->name, name) == 0 && ++fail->seen == fail->nth)
            return fail->result;
    }
    if (fake.lose_nth != 0 && (fake.lose_name[0] == '\0' || strcmp(fake.lose_name, name) == 0) &&
        ++fake.lose_seen == fake.lose_nth)
        *out_lose = true;
    return ACU_CUDA_SUCCESS;
}

acu_CUresult fake_current(struct CUctx_st **out_ctx)
{
    struct CUctx_st *ctx = fake_stack_depth > 0 ? fake_stack[fake_stack_depth - 1] : NULL;

    *out_ctx = ctx;
    if (ctx == NULL)
        return ACU_CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->magic != FAKE_MAGIC_CONTEXT)
        return ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (ctx->lost)
        return ACU_CUDA_ERROR_ILLEGAL_ADDRESS;
    return ACU_CUDA_SUCCESS;
}

void fake_lose_current(void)
{
    fake_lose(fake_stack_depth > 0 ? fake_stack[fake_stack_depth - 1] : NULL);
}

void fake_lose(struct CUctx_st *ctx)
{
    if (ctx == NULL || ctx->magic != FAKE_MAGIC_CONTEXT)
        ctx = fake.device_count > 0 ? fake.devices[0].primary : NULL;
    if (ctx != NULL)
        ctx->lost = true;
    pthread_cond_broadcast(&fake.progress);
}

/* ---- initialisation and devices ---- */

FAKE_EXPORT acu_CUresult cuInit(unsigned int flags)
{
    const char *forced = getenv("FAKE_CUDA_INIT_RESULT");
    acu_CUresult result = ACU_CUDA_SUCCESS;

    if (flags != 0)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    if (forced != NULL && !fake_parse_result(forced, &result))
        result = ACU_CUDA_ERROR_UNKNOWN;
    pthread_mutex_lock(&fake.lock);
    fake_read_knobs();
    fake.initialised = result == ACU_CUDA_SUCCESS;
    pthread_mutex_unlock(&fake.lock);
    return result;
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

FAKE_EXPORT acu_CUresult cuDeviceGetName(char *name, int length, acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (name == NULL || length <= 0)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    snprintf(name, (size_t)length, "Fake CUDA Device %d", device);
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
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out_value = 1024; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *out_value = 1024; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *out_value = 1024; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *out_value = 64; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *out_value = 2147483647; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *out_value = 65535; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *out_value = 65535; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *out_value = FAKE_MAX_SHARED_BYTES;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MAX_PITCH:
        *out_value = fake.max_pitch > 2147483647u ? 2147483647 : (int)fake.max_pitch;
        return true;
    case ACU_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *out_value = 4; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *out_value = 1; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *out_value = 9; return true;
    case ACU_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *out_value = 0; return true;
    }
    return false;
}

FAKE_EXPORT acu_CUresult cuDeviceGetAttribute(int *value, acu_CUdevice_attribute attribute,
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

/* End a primary context: everything made in it goes, and so does it. */
static void fake_context_destroy(struct fake_device *device)
{
    struct CUctx_st *ctx = device->primary;

    if (ctx == NULL)
        return;
    fake_context_release_objects(ctx);
    ctx->magic = FAKE_MAGIC_RETIRED;
    ctx->next_retired = fake.retired_contexts;
    fake.retired_contexts = ctx;
    device->primary = NULL;
}

FAKE_EXPORT acu_CUresult cuDevicePrimaryCtxRetain(acu_CUcontext *context, acu_CUdevice device)
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
        d->primary->device = device;
    }
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
        fake_context_destroy(d);
    FAKE_RETURN(ACU_CUDA_SUCCESS);
}

/* As CUDA's: the context's state goes, the retains stay; the next retain makes a new one. */
FAKE_EXPORT acu_CUresult cuDevicePrimaryCtxReset_v2(acu_CUdevice device)
{
    FAKE_ENTER(lose);
    if (!fake_device_valid(device))
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_DEVICE);
    fake_context_destroy(&fake.devices[device]);
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

struct fake_block *fake_block_find(uintptr_t address, size_t bytes, bool device)
{
    for (struct fake_block *block = fake.blocks; block != NULL; block = block->next) {
        if ((block->device >= 0) == device && address >= block->base &&
            address - block->base <= block->bytes && bytes <= block->bytes - (address - block->base))
            return block;
    }
    return NULL;
}

static acu_CUresult fake_block_add(size_t bytes, int device, struct CUctx_st *ctx,
                                   uintptr_t *out_base)
{
    size_t rounded = (bytes + FAKE_ALLOC_ALIGN - 1) & ~(size_t)(FAKE_ALLOC_ALIGN - 1);
    struct fake_block *block = calloc(1, sizeof(*block));
    void *memory = rounded >= bytes ? aligned_alloc(FAKE_ALLOC_ALIGN, rounded) : NULL;

    if (block == NULL || memory == NULL) {
        free(block);
        free(memory);
        return ACU_CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* Device memory starts with garbage, as a GPU's does. */
    memset(memory, 0xa5, rounded);
    *block = (struct fake_block){(uintptr_t)memory, bytes, device, ctx, fake.blocks};
    fake.blocks = block;
    *out_base = (uintptr_t)memory;
    return ACU_CUDA_SUCCESS;
}

/* Take the block at exactly `base` off the list; NULL when there is none. */
static struct fake_block *fake_block_take(uintptr_t base, bool device)
{
    for (struct fake_block **link = &fake.blocks; *link != NULL; link = &(*link)->next) {
        struct fake_block *block = *link;

        if (block->base == base && (block->device >= 0) == device) {
            *link = block->next;
            return block;
        }
    }
    return NULL;
}

static void fake_block_free(struct fake_block *block)
{
    if (block->device >= 0)
        fake.devices[block->device].used_bytes -= block->bytes;
    free((void *)block->base);
    free(block);
}

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
    d = &fake.devices[ctx->device];
    if (bytes > fake.memory_bytes - d->used_bytes)
        FAKE_RETURN(ACU_CUDA_ERROR_OUT_OF_MEMORY);
    result = fake_block_add(bytes, ctx->device, ctx, &base);
    if (result == ACU_CUDA_SUCCESS) {
        d->used_bytes += bytes;
        *address = base;
    }
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuMemFree_v2(acu_CUdeviceptr address)
{
    struct fake_block *block;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_ERROR_INVALID_CONTEXT || result == ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED)
        FAKE_RETURN(result);
    block = fake_block_take((uintptr_t)address, true);
    if (block == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    /* Freed even on a lost context, which still reports its error. */
    fake_block_free(block);
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags)
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
    result = fake_block_add(bytes, -1, NULL, &base);
    if (result == ACU_CUDA_SUCCESS)
        *pointer = (void *)base;
    FAKE_RETURN(result);
}

FAKE_EXPORT acu_CUresult cuMemFreeHost(void *pointer)
{
    struct fake_block *block;
    struct CUctx_st *ctx;
    acu_CUresult result;

    FAKE_ENTER(lose);
    result = fake_current(&ctx);
    if (result == ACU_CUDA_ERROR_INVALID_CONTEXT || result == ACU_CUDA_ERROR_CONTEXT_IS_DESTROYED)
        FAKE_RETURN(result);
    block = fake_block_take((uintptr_t)pointer, false);
    if (block == NULL)
        FAKE_RETURN(ACU_CUDA_ERROR_INVALID_VALUE);
    fake_block_free(block);
    FAKE_RETURN(result);
}

void fake_context_release_objects(struct CUctx_st *ctx)
{
    struct fake_block **link = &fake.blocks;

    /*
     * Streams first: their threads may still be using memory and modules.
     * The scan restarts after each, since retiring drops the lock.
     */
    for (;;) {
        struct CUstream_st *s = fake.streams;

        while (s != NULL && s->ctx != ctx)
            s = s->next;
        if (s == NULL)
            break;
        fake_stream_retire(s);
    }
    for (struct CUevent_st **e = &fake.events; *e != NULL;) {
        struct CUevent_st *event = *e;

        if (event->ctx != ctx) {
            e = &event->next;
            continue;
        }
        *e = event->next;
        event->magic = FAKE_MAGIC_RETIRED;
        event->next = fake.retired_events;
        fake.retired_events = event;
    }
    for (struct CUmod_st *m = fake.modules, *next; m != NULL; m = next) {
        next = m->next;
        if (m->ctx == ctx)
            fake_module_retire(m);
    }
    while (*link != NULL) {
        struct fake_block *block = *link;

        if (block->ctx == ctx) {
            *link = block->next;
            fake_block_free(block);
        } else {
            link = &block->next;
        }
    }
}

/* ---- errors ---- */

FAKE_EXPORT acu_CUresult cuGetErrorString(acu_CUresult error, const char **text)
{
    const char *name = fake_result_name(error);

    if (text == NULL || name == NULL)
        return ACU_CUDA_ERROR_INVALID_VALUE;
    *text = error == ACU_CUDA_ERROR_OUT_OF_MEMORY ? "out of memory (fake driver)"
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
