/*
 * The nccl and rccl communication providers, called through their
 * accel_comm_v1 tables over the fake NCCL (tests/fakes/nccl) and the fake
 * CUDA driver or HIP runtime, ranks as threads of this process; and the
 * nccl provider over the real libnccl.so.2 where the machine has one
 * (argument "real": ncclGetVersion needs no GPU, and without one
 * plugin_open must say so).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#include <accel/comm.h>

#define RANKS_MAX 8
#define MS 1000000ull

/* ---- services: the last error of each thread, kept ---- */

static _Thread_local char last_error[2048];

static void services_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status services_set_error(accel_status status, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, args);
    va_end(args);
    return status;
}

static const char *services_getenv(const char *name)
{
    return getenv(name);
}

static const struct accel_comm_services services = {
    .struct_size = sizeof(struct accel_comm_services),
    .host_minor = ACCEL_COMM_ABI_MINOR,
    .log = services_log,
    .set_error = services_set_error,
    .getenv = services_getenv,
};

/* ---- the fake GPU: CUDA or HIP, as the flavour wants ---- */

struct gpu {
    void *library;
    bool hip;
    int (*cu_init)(unsigned);
    int (*cu_retain)(void **, int);
    int (*cu_push)(void *);
    int (*cu_pop)(void **);
    int (*cu_current)(void **);
    int (*cu_stream_create)(void **, unsigned);
    int (*cu_alloc)(unsigned long long *, size_t);
    int (*sync)(void *);
    int (*hip_init)(unsigned);
    int (*hip_set_device)(int);
    int (*hip_get_device)(int *);
    int (*hip_stream_create)(void **, unsigned);
    int (*hip_malloc)(void **, size_t);
};

#define RESOLVE(g, field, name)                                                \
    do {                                                                       \
        *(void **)&(g)->field = dlsym((g)->library, name);                     \
        assert_non_null((g)->field);                                           \
    } while (0)

static void gpu_open(struct gpu *g, bool hip)
{
    memset(g, 0, sizeof(*g));
    g->hip = hip;
    g->library = dlopen(hip ? FAKE_HIP_PATH : FAKE_CUDA_PATH,
                        RTLD_NOW | RTLD_LOCAL);
    assert_non_null(g->library);
    if (hip) {
        RESOLVE(g, hip_init, "hipInit");
        RESOLVE(g, hip_set_device, "hipSetDevice");
        RESOLVE(g, hip_get_device, "hipGetDevice");
        RESOLVE(g, hip_stream_create, "hipStreamCreateWithFlags");
        RESOLVE(g, hip_malloc, "hipMalloc");
        RESOLVE(g, sync, "hipStreamSynchronize");
        assert_int_equal(g->hip_init(0), 0);
        return;
    }
    RESOLVE(g, cu_init, "cuInit");
    RESOLVE(g, cu_retain, "cuDevicePrimaryCtxRetain");
    RESOLVE(g, cu_push, "cuCtxPushCurrent_v2");
    RESOLVE(g, cu_pop, "cuCtxPopCurrent_v2");
    RESOLVE(g, cu_current, "cuCtxGetCurrent");
    RESOLVE(g, cu_stream_create, "cuStreamCreate");
    RESOLVE(g, cu_alloc, "cuMemAlloc_v2");
    RESOLVE(g, sync, "cuStreamSynchronize");
    assert_int_equal(g->cu_init(0), 0);
}

/* A rank's device handles, a stream and `count` bytes of device memory on it. */
static void gpu_rank(struct gpu *g, int ordinal,
                     struct accel_native_handles *out, void **out_stream)
{
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->device_ordinal = ordinal;
    if (g->hip) {
        out->kind = ACCEL_NATIVE_HIP;
        assert_int_equal(g->hip_set_device(ordinal), 0);
        assert_int_equal(g->hip_stream_create(out_stream, 1), 0);
        return;
    }
    out->kind = ACCEL_NATIVE_CUDA;
    assert_int_equal(g->cu_retain(&out->context, ordinal), 0);
    assert_int_equal(g->cu_push(out->context), 0);
    assert_int_equal(g->cu_stream_create(out_stream, 1), 0);
    {
        void *popped;
        assert_int_equal(g->cu_pop(&popped), 0);
    }
}

static void *gpu_alloc(struct gpu *g, const struct accel_native_handles *device,
                       size_t bytes)
{
    void *pointer = NULL;
    unsigned long long address = 0;
    void *popped;

    if (g->hip) {
        assert_int_equal(g->hip_set_device(device->device_ordinal), 0);
        assert_int_equal(g->hip_malloc(&pointer, bytes), 0);
        return pointer;
    }
    assert_int_equal(g->cu_push(device->context), 0);
    assert_int_equal(g->cu_alloc(&address, bytes), 0);
    assert_int_equal(g->cu_pop(&popped), 0);
    /* The fake's device memory is host memory: the address is the pointer. */
    return (void *)(uintptr_t)address;
}

/* Wait for `stream` of `device` (CUDA: in its context, as the driver wants). */
static void gpu_sync(struct gpu *g, const struct accel_native_handles *device,
                     void *stream)
{
    void *popped;

    if (g->hip) {
        assert_int_equal(g->sync(stream), 0);
        return;
    }
    assert_int_equal(g->cu_push(device->context), 0);
    assert_int_equal(g->sync(stream), 0);
    assert_int_equal(g->cu_pop(&popped), 0);
}

/* ---- a provider and its ranks ---- */

struct world;

struct rank {
    struct world *world;
    int rank;
    struct accel_native_handles device;
    void *stream;
    accel_comm_handle *comm;
    accel_status status;             /* of comm_create */
    char error[2048];                /* what comm_create said */
    void (*work)(struct rank *rank); /* what the rank's thread does next */
    int index;                       /* for the work: which case */
};

struct world {
    void *dl;
    const struct accel_comm_v1 *table;
    accel_comm_provider *provider;
    struct gpu gpu;
    int size;
    unsigned char id[ACCEL_COMM_UNIQUE_ID_MAX];
    size_t id_bytes;
    uint64_t timeout_ns;
    struct rank ranks[RANKS_MAX];
    char *temp_dir; /* rccl: where the fake is librccl.so.1 */
};

static struct world the_world;

static void clear_knobs(void)
{
    support_clean_environment();
    unsetenv("FAKE_NCCL_VERSION");
    unsetenv("FAKE_NCCL_FAIL");
    unsetenv("FAKE_NCCL_ASYNC_ERROR");
    unsetenv("FAKE_CUDA_DEVICES");
    unsetenv("FAKE_HIP_DEVICES");
    unsetenv("ACCEL_NCCL_LIBRARY");
    unsetenv("ACCEL_RCCL_LIBRARY");
    unsetenv("ACCEL_CUDA_LIBRARY");
    unsetenv("ACCEL_HIP_LIBRARY");
    unsetenv("ACCEL_COMM");
}

static int setup_nccl(void **state)
{
    clear_knobs();
    setenv("ACCEL_NCCL_LIBRARY", FAKE_NCCL_PATH, 1);
    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    memset(&the_world, 0, sizeof(the_world));
    the_world.timeout_ns = 20000 * MS;
    *state = &the_world;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;

    for (int r = 0; r < RANKS_MAX; r++) {
        if (w->ranks[r].comm != NULL)
            w->table->comm_destroy(w->ranks[r].comm);
    }
    if (w->provider != NULL)
        w->table->plugin_close(w->provider);
    if (w->gpu.library != NULL)
        dlclose(w->gpu.library);
    if (w->dl != NULL)
        dlclose(w->dl);
    if (w->temp_dir != NULL)
        support_remove_dir(w->temp_dir);
    clear_knobs();
    return 0;
}

static const struct accel_comm_v1 *load_table(struct world *w, const char *path)
{
    w->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(w->dl);
    w->table = dlsym(w->dl, ACCEL_COMM_SYMBOL);
    assert_non_null(w->table);
    assert_int_equal(w->table->struct_size, sizeof(struct accel_comm_v1));
    return w->table;
}

/* The provider open over the fakes, `size` ranks with a device and a stream each. */
static void world_open(struct world *w, const char *provider_path, bool hip,
                       int size)
{
    size_t bytes = 0;

    load_table(w, provider_path);
    assert_status(w->table->plugin_open(&services, &w->provider), ACCEL_OK);
    gpu_open(&w->gpu, hip);
    w->size = size;
    for (int r = 0; r < size; r++) {
        w->ranks[r].world = w;
        w->ranks[r].rank = r;
        /* Two devices: ranks alternate between them. */
        gpu_rank(&w->gpu, r % 2, &w->ranks[r].device, &w->ranks[r].stream);
    }
    assert_status(w->table->unique_id(w->provider, w->id, sizeof(w->id), &bytes),
                  ACCEL_OK);
    assert_int_equal(bytes, 128);
    w->id_bytes = bytes;
}

static void rank_create(struct rank *rank)
{
    struct world *w = rank->world;
    struct accel_comm_init init = {
        .struct_size = sizeof(init),
        .rank = rank->rank,
        .size = w->size,
        .local_rank = rank->rank,
        .local_size = w->size,
        .device = rank->device,
        .id = w->id,
        .id_bytes = w->id_bytes,
        .timeout_ns = w->timeout_ns,
    };
    struct accel_comm_bootstrap unused = {0};

    init.bootstrap = &unused;
    rank->status = w->table->comm_create(w->provider, &init, &rank->comm);
    snprintf(rank->error, sizeof(rank->error), "%s", last_error);
}

/*
 * comm_create with the other device bound on this thread, as an
 * application's thread may have it: the communicator still binds to the
 * rank's device, and the thread's binding is the same afterwards.
 */
static void rank_create_elsewhere(struct rank *rank)
{
    struct world *w = rank->world;
    struct rank *other = &w->ranks[(rank->rank + 1) % w->size];
    void *context = NULL;
    int ordinal = -1;

    if (w->gpu.hip) {
        assert_int_equal(w->gpu.hip_set_device(other->device.device_ordinal), 0);
        rank_create(rank);
        assert_int_equal(w->gpu.hip_get_device(&ordinal), 0);
        assert_int_equal(ordinal, other->device.device_ordinal);
        return;
    }
    assert_int_equal(w->gpu.cu_push(other->device.context), 0);
    rank_create(rank);
    assert_int_equal(w->gpu.cu_current(&context), 0);
    assert_ptr_equal(context, other->device.context);
    assert_int_equal(w->gpu.cu_pop(&context), 0);
}

static void *rank_thread(void *arg)
{
    struct rank *rank = arg;

    rank->work(rank);
    return NULL;
}

/* Run `work` on the first `count` ranks, one thread each, and wait. */
static void run_ranks(struct world *w, int count, void (*work)(struct rank *))
{
    pthread_t threads[RANKS_MAX];

    for (int r = 0; r < count; r++) {
        w->ranks[r].work = work;
        assert_int_equal(
            pthread_create(&threads[r], NULL, rank_thread, &w->ranks[r]), 0);
    }
    for (int r = 0; r < count; r++)
        pthread_join(threads[r], NULL);
}

static void world_create(struct world *w)
{
    run_ranks(w, w->size, rank_create);
    for (int r = 0; r < w->size; r++) {
        if (w->ranks[r].status != ACCEL_OK)
            fail_msg("rank %d: %s", r, w->ranks[r].error);
    }
}

static struct accel_comm_op op_of(const struct world *w, uint32_t kind,
                                  uint32_t type, uint64_t count,
                                  const void *send, void *recv)
{
    struct accel_comm_op op = {
        .struct_size = sizeof(op),
        .kind = kind,
        .type = type,
        .reduce_op = ACCEL_REDUCE_SUM,
        .count = count,
        .memory = w->gpu.hip ? ACCEL_NATIVE_HIP : ACCEL_NATIVE_CUDA,
        .send = (uint64_t)(uintptr_t)send,
        .recv = (uint64_t)(uintptr_t)recv,
    };

    return op;
}

static accel_status rank_submit(struct rank *rank, struct accel_comm_op op)
{
    accel_status status;

    op.stream = rank->stream;
    status = rank->world->table->submit(rank->comm, &op);
    if (status == ACCEL_OK)
        gpu_sync(&rank->world->gpu, &rank->device, rank->stream);
    return status;
}

static uint64_t fake_calls(const char *name)
{
    void *fake = dlopen(FAKE_NCCL_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    uint64_t (*calls)(const char *);
    uint64_t count = 0;

    if (fake == NULL)
        return 0;
    *(void **)&calls = dlsym(fake, "fake_nccl_calls");
    if (calls != NULL)
        count = calls(name);
    dlclose(fake);
    return count;
}

/* ---- opening ---- */

static void test_missing_library_is_not_supported_and_named(void **state)
{
    struct world *w = *state;

    setenv("ACCEL_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
    load_table(w, NCCL_PROVIDER_PATH);
    assert_string_equal(w->table->name, "nccl");
    assert_status(w->table->plugin_open(&services, &w->provider),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_null(w->provider);
    assert_contains(last_error, "/nonexistent/libnccl.so.2 not found: ");
    assert_contains(last_error, "No such file");
}

static void test_open_over_the_fake_takes_cuda_memory_only(void **state)
{
    struct world *w = *state;

    load_table(w, NCCL_PROVIDER_PATH);
    assert_int_equal(w->table->caps,
                     ACCEL_COMM_CAP_STREAM | ACCEL_COMM_CAP_LOOPBACK);
    assert_status(w->table->plugin_open(&services, &w->provider), ACCEL_OK);
    assert_status(w->table->accepts_memory(w->provider, ACCEL_NATIVE_CUDA),
                  ACCEL_OK);
    assert_status(w->table->accepts_memory(w->provider, ACCEL_NATIVE_CPU),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "CUDA device memory only");
    assert_status(w->table->accepts_memory(w->provider, ACCEL_NATIVE_HIP),
                  ACCEL_ERR_NOT_SUPPORTED);
}

static void test_open_without_gpu_says_no_gpu(void **state)
{
    struct world *w = *state;

    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    load_table(w, NCCL_PROVIDER_PATH);
    assert_status(w->table->plugin_open(&services, &w->provider),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error,
                    "NCCL 2.28.9 at " FAKE_NCCL_PATH " loaded, but no GPU");
    assert_contains(last_error, "/nonexistent/libcuda.so.1");

    setenv("ACCEL_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    assert_status(w->table->plugin_open(&services, &w->provider),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "no GPU: ");
}

static void test_unique_id_is_nccl_s_128_bytes(void **state)
{
    struct world *w = *state;
    unsigned char small[64];
    size_t bytes = 1;

    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    assert_status(w->table->unique_id(w->provider, small, sizeof(small), &bytes),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_int_equal(bytes, 0);
    assert_contains(last_error, "128 bytes");
}

/* ---- operations ---- */

#define COUNT 37 /* not a power of two */

/* Every kind of operation over three ranks (on two devices), f32. */
static void every_kind(struct rank *rank)
{
    struct world *w = rank->world;
    int r = rank->rank, n = w->size;
    float *send = gpu_alloc(&w->gpu, &rank->device, COUNT * n * sizeof(float));
    float *recv = gpu_alloc(&w->gpu, &rank->device, COUNT * n * sizeof(float));
    struct accel_comm_op op;

    for (int i = 0; i < COUNT * n; i++)
        send[i] = (float)(r * 100 + i);
    /* all-reduce */
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                          COUNT, send, recv)),
                  ACCEL_OK);
    for (int i = 0; i < COUNT; i++)
        assert_true(recv[i] == (float)(100 * (0 + 1 + 2) + 3 * i));
    /* broadcast from rank 1 */
    op = op_of(w, ACCEL_COMM_BROADCAST, ACCEL_F32, COUNT, send, recv);
    op.root = 1;
    assert_status(rank_submit(rank, op), ACCEL_OK);
    for (int i = 0; i < COUNT; i++)
        assert_true(recv[i] == (float)(100 + i));
    /* reduce (max) to rank 2: the others' recv is left alone */
    memset(recv, 0, COUNT * sizeof(float));
    op = op_of(w, ACCEL_COMM_REDUCE, ACCEL_F32, COUNT, send, recv);
    op.root = 2;
    op.reduce_op = ACCEL_REDUCE_MAX;
    assert_status(rank_submit(rank, op), ACCEL_OK);
    for (int i = 0; i < COUNT; i++)
        assert_true(recv[i] == (r == 2 ? (float)(200 + i) : 0.0f));
    /* all-gather */
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLGATHER, ACCEL_F32,
                                          COUNT, send, recv)),
                  ACCEL_OK);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < COUNT; i++)
            assert_true(recv[q * COUNT + i] == (float)(q * 100 + i));
    /* reduce-scatter: rank r gets the sum of every rank's share r */
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_REDUCE_SCATTER,
                                          ACCEL_F32, COUNT, send, recv)),
                  ACCEL_OK);
    for (int i = 0; i < COUNT; i++)
        assert_true(recv[i] == (float)(300 + 3 * (r * COUNT + i)));
    /* send to the next rank, receive from the previous one */
    op = op_of(w, ACCEL_COMM_SEND, ACCEL_F32, COUNT, send, NULL);
    op.root = (r + 1) % n;
    assert_status(rank_submit(rank, op), ACCEL_OK);
    op = op_of(w, ACCEL_COMM_RECV, ACCEL_F32, COUNT, NULL, recv);
    op.root = (r + n - 1) % n;
    assert_status(rank_submit(rank, op), ACCEL_OK);
    for (int i = 0; i < COUNT; i++)
        assert_true(recv[i] == (float)(((r + n - 1) % n) * 100 + i));
    /* barrier */
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_BARRIER, ACCEL_BYTE, 0,
                                          NULL, NULL)),
                  ACCEL_OK);
}

static void test_every_kind_over_three_ranks_matches_a_serial_reference(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 3);
    world_create(w);
    run_ranks(w, 3, every_kind);
    /* The barrier is one all-reduce of one word, on a word made once per rank. */
    assert_true(fake_calls("ncclAllReduce") >= 6);
}

/* In place: all-reduce and all-gather work, reduce-scatter is refused with the reason. */
static void in_place(struct rank *rank)
{
    struct world *w = rank->world;
    int r = rank->rank;
    int32_t *buffer = gpu_alloc(&w->gpu, &rank->device, 2 * 4 * sizeof(int32_t));

    for (int i = 0; i < 4; i++)
        buffer[i] = r + i;
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 4,
                                          buffer, buffer)),
                  ACCEL_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(buffer[i], 1 + 2 * i);
    /* all-gather in place: the rank's share is already where it lands */
    for (int i = 0; i < 4; i++)
        buffer[r * 4 + i] = 10 * r + i;
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLGATHER, ACCEL_I32, 4,
                                          buffer, buffer)),
                  ACCEL_OK);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 4; i++)
            assert_int_equal(buffer[q * 4 + i], 10 * q + i);
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_REDUCE_SCATTER,
                                          ACCEL_I32, 4, buffer, buffer)),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "in-place reduce-scatter");
}

static void test_in_place_operations(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    run_ranks(w, 2, in_place);
}

/* A value every type holds exactly, for rank r and element i. */
static double value_of(int r, int i, uint32_t op)
{
    /* Products stay small; the others use a wider range. */
    return op == ACCEL_REDUCE_PROD ? (double)(1 + (r + i) % 3)
                                   : (double)(r * 3 + i % 5);
}

static size_t type_bytes(uint32_t type)
{
    static const size_t bytes[] = {1, 2, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
    return bytes[type];
}

static void store(uint32_t type, void *base, int i, double v)
{
    unsigned char *at = (unsigned char *)base + (size_t)i * type_bytes(type);

    switch (type) {
    case ACCEL_F16: { /* small integers: exact halves */
        uint16_t h = v == 0 ? 0 : (uint16_t)0;
        int e = 0;
        double m = v;
        if (v != 0) {
            while (m >= 2.0) {
                m /= 2.0;
                e++;
            }
            h = (uint16_t)(((e + 15) << 10) | (uint16_t)((m - 1.0) * 1024.0));
        }
        memcpy(at, &h, 2);
        break;
    }
    case ACCEL_BF16: {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        uint16_t b = (uint16_t)(bits >> 16);
        memcpy(at, &b, 2);
        break;
    }
    case ACCEL_F32: {
        float f = (float)v;
        memcpy(at, &f, 4);
        break;
    }
    case ACCEL_F64:
        memcpy(at, &v, 8);
        break;
    case ACCEL_BYTE:
    case ACCEL_U8: {
        uint8_t x = (uint8_t)v;
        memcpy(at, &x, 1);
        break;
    }
    case ACCEL_I8: {
        int8_t x = (int8_t)v;
        memcpy(at, &x, 1);
        break;
    }
    case ACCEL_I16: {
        int16_t x = (int16_t)v;
        memcpy(at, &x, 2);
        break;
    }
    case ACCEL_U16: {
        uint16_t x = (uint16_t)v;
        memcpy(at, &x, 2);
        break;
    }
    case ACCEL_I32: {
        int32_t x = (int32_t)v;
        memcpy(at, &x, 4);
        break;
    }
    case ACCEL_U32: {
        uint32_t x = (uint32_t)v;
        memcpy(at, &x, 4);
        break;
    }
    case ACCEL_I64: {
        int64_t x = (int64_t)v;
        memcpy(at, &x, 8);
        break;
    }
    default: {
        uint64_t x = (uint64_t)v;
        memcpy(at, &x, 8);
        break;
    }
    }
}

static double load(uint32_t type, const void *base, int i)
{
    const unsigned char *at = (const unsigned char *)base +
                              (size_t)i * type_bytes(type);

    switch (type) {
    case ACCEL_F16: {
        uint16_t h;
        memcpy(&h, at, 2);
        if (h == 0)
            return 0;
        return (1.0 + (h & 0x3ff) / 1024.0) *
               (double)(1u << (((h >> 10) & 0x1f) - 15));
    }
    case ACCEL_BF16: {
        uint16_t b;
        uint32_t bits;
        float f;
        memcpy(&b, at, 2);
        bits = (uint32_t)b << 16;
        memcpy(&f, &bits, 4);
        return f;
    }
    case ACCEL_F32: {
        float f;
        memcpy(&f, at, 4);
        return f;
    }
    case ACCEL_F64: {
        double d;
        memcpy(&d, at, 8);
        return d;
    }
    case ACCEL_BYTE:
    case ACCEL_U8: {
        uint8_t x;
        memcpy(&x, at, 1);
        return x;
    }
    case ACCEL_I8: {
        int8_t x;
        memcpy(&x, at, 1);
        return x;
    }
    case ACCEL_I16: {
        int16_t x;
        memcpy(&x, at, 2);
        return x;
    }
    case ACCEL_U16: {
        uint16_t x;
        memcpy(&x, at, 2);
        return x;
    }
    case ACCEL_I32: {
        int32_t x;
        memcpy(&x, at, 4);
        return x;
    }
    case ACCEL_U32: {
        uint32_t x;
        memcpy(&x, at, 4);
        return x;
    }
    case ACCEL_I64: {
        int64_t x;
        memcpy(&x, at, 8);
        return (double)x;
    }
    default: {
        uint64_t x;
        memcpy(&x, at, 8);
        return (double)x;
    }
    }
}

static double reference(uint32_t op, int ranks, int i)
{
    double acc = value_of(0, i, op);

    for (int r = 1; r < ranks; r++) {
        double v = value_of(r, i, op);
        acc = op == ACCEL_REDUCE_SUM    ? acc + v
              : op == ACCEL_REDUCE_PROD ? acc * v
              : op == ACCEL_REDUCE_MIN  ? (v < acc ? v : acc)
                                        : (v > acc ? v : acc);
    }
    return acc;
}

#define TYPE_COUNT 11

/* Every element type and operation through all-reduce; 16-bit integers refused. */
static void every_type(struct rank *rank)
{
    struct world *w = rank->world;
    void *send = gpu_alloc(&w->gpu, &rank->device, TYPE_COUNT * 8);
    void *recv = gpu_alloc(&w->gpu, &rank->device, TYPE_COUNT * 8);

    for (uint32_t type = 0; type < ACCEL_ELEM_TYPE_COUNT; type++) {
        for (uint32_t op = 0; op < ACCEL_REDUCE_OP_COUNT; op++) {
            struct accel_comm_op c = op_of(w, ACCEL_COMM_ALLREDUCE, type,
                                           TYPE_COUNT, send, recv);
            accel_status status;

            c.reduce_op = op;
            for (int i = 0; i < TYPE_COUNT; i++)
                store(type, send, i, value_of(rank->rank, i, op));
            status = rank_submit(rank, c);
            if (type == ACCEL_I16 || type == ACCEL_U16) {
                assert_status(status, ACCEL_ERR_NOT_SUPPORTED);
                assert_contains(last_error, "no 16-bit integer type");
                continue;
            }
            assert_status(status, ACCEL_OK);
            for (int i = 0; i < TYPE_COUNT; i++) {
                if (load(type, recv, i) != reference(op, w->size, i))
                    fail_msg("type %u op %u element %d: %g, not %g", type, op,
                             i, load(type, recv, i), reference(op, w->size, i));
            }
        }
    }
    /* Moving data needs no arithmetic: a broadcast of u16 goes. */
    for (int i = 0; i < TYPE_COUNT; i++)
        store(ACCEL_U16, send, i, 1000 * rank->rank + i);
    {
        struct accel_comm_op c = op_of(w, ACCEL_COMM_BROADCAST, ACCEL_U16,
                                       TYPE_COUNT, send, recv);
        c.root = 1;
        assert_status(rank_submit(rank, c), ACCEL_OK);
        for (int i = 0; i < TYPE_COUNT; i++)
            assert_true(load(ACCEL_U16, recv, i) == 1000 + i);
    }
}

static void test_every_type_and_operation_or_the_reason(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    run_ranks(w, 2, every_type);
}

static void bf16_refused(struct rank *rank)
{
    struct world *w = rank->world;
    void *buffer = gpu_alloc(&w->gpu, &rank->device, 64);

    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_BF16,
                                          4, buffer, buffer)),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "bf16 needs NCCL 2.10");
    /* and the same library moves bf16 */
    assert_status(rank_submit(rank, op_of(w, ACCEL_COMM_ALLGATHER, ACCEL_BF16,
                                          4, buffer, buffer)),
                  ACCEL_OK);
}

static void test_bf16_reductions_need_nccl_2_10(void **state)
{
    struct world *w = *state;

    setenv("FAKE_NCCL_VERSION", "20906", 1);
    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    world_create(w);
    run_ranks(w, 1, bf16_refused);
}

static void mismatched(struct rank *rank)
{
    struct world *w = rank->world;
    void *buffer = gpu_alloc(&w->gpu, &rank->device, 64);

    assert_status(
        rank_submit(rank, op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_F32,
                                4 + (uint64_t)rank->rank, buffer, buffer)),
        ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(last_error, "ncclAllReduce failed: ncclInvalidArgument");
}

static void test_counts_that_differ_across_ranks_are_an_error(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    run_ranks(w, 2, mismatched);
}

static void test_host_memory_and_malformed_ops_are_refused(void **state)
{
    struct world *w = *state;
    struct accel_comm_op op;
    int host[4] = {0};

    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    world_create(w);
    op = op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 4, host, host);
    op.memory = ACCEL_NATIVE_CPU;
    op.stream = w->ranks[0].stream;
    assert_status(w->table->submit(w->ranks[0].comm, &op),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "not CUDA device memory");
    op = op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 4, host, host);
    op.kind = ACCEL_COMM_OP_KIND_COUNT;
    op.stream = w->ranks[0].stream;
    assert_status(w->table->submit(w->ranks[0].comm, &op),
                  ACCEL_ERR_INVALID_ARGUMENT);
    op = op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 4, host, host);
    assert_status(w->table->submit(w->ranks[0].comm, &op),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_contains(last_error, "no native stream");
}

/* ---- communicators ---- */

/* The device each rank's communicator was made on, as the fake saw it. */
static void assert_bound(struct world *w, const char *library)
{
    bool (*device_of)(int, void **, int *);
    void *fake = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    void *context = NULL;
    int ordinal = -1;

    assert_non_null(fake);
    *(void **)&device_of = dlsym(fake, "fake_nccl_rank_device");
    assert_non_null(device_of);
    for (int r = 0; r < w->size; r++) {
        assert_true(device_of(r, &context, &ordinal));
        if (w->gpu.hip)
            assert_int_equal(ordinal, w->ranks[r].device.device_ordinal);
        else
            assert_ptr_equal(context, w->ranks[r].device.context);
    }
    dlclose(fake);
}

static void test_each_communicator_is_bound_to_its_rank_s_device(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    assert_ptr_not_equal(w->ranks[0].device.context, w->ranks[1].device.context);
    run_ranks(w, 2, rank_create_elsewhere);
    for (int r = 0; r < 2; r++)
        assert_status(w->ranks[r].status, ACCEL_OK);
    assert_bound(w, FAKE_NCCL_PATH);
}

static void test_rank_that_never_joins_times_out_and_is_aborted(void **state)
{
    struct world *w = *state;
    uint64_t aborts;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    w->timeout_ns = 50 * MS;
    aborts = fake_calls("ncclCommAbort");
    /* Rank 1 never calls. */
    run_ranks(w, 1, rank_create);
    assert_status(w->ranks[0].status, ACCEL_ERR_TIMEOUT);
    assert_null(w->ranks[0].comm);
    assert_contains(w->ranks[0].error, "not every rank joined within 50 ms");
    assert_int_equal(fake_calls("ncclCommAbort"), aborts + 1);
}

static void test_nccl_before_2_14_initialises_blocking(void **state)
{
    struct world *w = *state;
    uint64_t configs = fake_calls("ncclCommInitRankConfig");
    uint64_t plain = fake_calls("ncclCommInitRank");

    setenv("FAKE_NCCL_VERSION", "21206", 1);
    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    assert_int_equal(fake_calls("ncclCommInitRankConfig"), configs);
    assert_int_equal(fake_calls("ncclCommInitRank"), plain + 2);
}

/* An in-place all-reduce of 4 words, sum of the ranks' numbers, checked. */
static void one_allreduce(struct rank *rank)
{
    struct world *w = rank->world;
    int32_t *buffer = gpu_alloc(&w->gpu, &rank->device, 16);

    for (int i = 0; i < 4; i++)
        buffer[i] = rank->rank + i;
    rank->status = rank_submit(
        rank, op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 4, buffer, buffer));
    snprintf(rank->error, sizeof(rank->error), "%s", last_error);
    for (int i = 0; rank->status == ACCEL_OK && i < 4; i++)
        assert_int_equal(buffer[i], w->size * (w->size - 1) / 2 + w->size * i);
}

static void test_asynchronous_error_is_reported_by_comm_error(void **state)
{
    struct world *w = *state;

    setenv("FAKE_NCCL_ASYNC_ERROR", "1:ncclRemoteError", 1);
    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    world_create(w);
    assert_status(w->table->comm_error(w->ranks[0].comm), ACCEL_OK);
    run_ranks(w, 1, one_allreduce);
    assert_status(w->ranks[0].status, ACCEL_OK);
    assert_status(w->table->comm_error(w->ranks[0].comm), ACCEL_ERR_COMM_ABORTED);
    assert_contains(last_error,
                    "ncclCommGetAsyncError failed: ncclRemoteError");
}

static void test_failed_call_names_the_call_and_nccl_s_error(void **state)
{
    struct world *w = *state;

    setenv("FAKE_NCCL_FAIL", "ncclAllReduce:1:ncclSystemError", 1);
    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    world_create(w);
    run_ranks(w, 1, one_allreduce);
    assert_status(w->ranks[0].status, ACCEL_ERR_DRIVER);
    assert_contains(w->ranks[0].error,
                    "nccl: ncclAllReduce failed: ncclSystemError (2)");
}

static void
test_abort_fails_later_calls_and_destroy_does_not_free_twice(void **state)
{
    struct world *w = *state;
    uint64_t aborts, destroys;

    world_open(w, NCCL_PROVIDER_PATH, false, 1);
    world_create(w);
    aborts = fake_calls("ncclCommAbort");
    destroys = fake_calls("ncclCommDestroy");
    w->table->comm_abort(w->ranks[0].comm);
    w->table->comm_abort(w->ranks[0].comm);
    assert_int_equal(fake_calls("ncclCommAbort"), aborts + 1);
    run_ranks(w, 1, one_allreduce);
    assert_status(w->ranks[0].status, ACCEL_ERR_COMM_ABORTED);
    assert_status(w->table->comm_error(w->ranks[0].comm), ACCEL_ERR_COMM_ABORTED);
    w->table->comm_destroy(w->ranks[0].comm);
    w->ranks[0].comm = NULL;
    assert_int_equal(fake_calls("ncclCommDestroy"), destroys);
}

static uint64_t allreduces_before_abort;

/* Abort rank 0 once it waits in its all-reduce (the fake counts it, then waits). */
static void *abort_later(void *arg)
{
    struct world *w = arg;
    struct timespec pause = {0, 1000000};

    while (fake_calls("ncclAllReduce") == allreduces_before_abort)
        nanosleep(&pause, NULL);
    w->table->comm_abort(w->ranks[0].comm);
    return NULL;
}

static void test_abort_releases_a_rank_waiting_for_a_stalled_peer(void **state)
{
    struct world *w = *state;
    pthread_t aborter;

    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    /* Rank 1 stalls (never calls); rank 0 waits in the all-reduce until aborted. */
    allreduces_before_abort = fake_calls("ncclAllReduce");
    assert_int_equal(pthread_create(&aborter, NULL, abort_later, w), 0);
    run_ranks(w, 1, one_allreduce);
    pthread_join(aborter, NULL);
    assert_status(w->ranks[0].status, ACCEL_ERR_COMM_ABORTED);
    assert_contains(w->ranks[0].error, "ncclRemoteError");
    w->table->comm_abort(w->ranks[1].comm);
}

static void split_and_reduce(struct rank *rank)
{
    struct world *w = rank->world;
    int r = rank->rank;
    accel_comm_handle *child = NULL;
    int32_t *buffer = gpu_alloc(&w->gpu, &rank->device, 16);
    int color = r == 4 ? -1 : r % 2;

    rank->status = w->table->comm_split(rank->comm, color, -r, &child);
    if (rank->status != ACCEL_OK || color < 0) {
        assert_null(child);
        return;
    }
    assert_non_null(child);
    buffer[0] = r;
    {
        struct accel_comm_op op = op_of(w, ACCEL_COMM_ALLREDUCE, ACCEL_I32, 1,
                                        buffer, buffer);
        op.stream = rank->stream;
        rank->status = w->table->submit(child, &op);
        gpu_sync(&w->gpu, &rank->device, rank->stream);
    }
    /* Ranks 0 and 2 make one, 1 and 3 the other; 4 is in none. */
    assert_int_equal(buffer[0], r % 2 == 0 ? 0 + 2 : 1 + 3);
    w->table->comm_destroy(child);
}

static void test_split_by_color_and_no_color(void **state)
{
    struct world *w = *state;

    world_open(w, NCCL_PROVIDER_PATH, false, 5);
    world_create(w);
    run_ranks(w, 5, split_and_reduce);
    for (int r = 0; r < 5; r++)
        assert_status(w->ranks[r].status, ACCEL_OK);
}

static void split_on_old_nccl(struct rank *rank)
{
    accel_comm_handle *child = NULL;

    rank->status = rank->world->table->comm_split(rank->comm, 0, 0, &child);
    snprintf(rank->error, sizeof(rank->error), "%s", last_error);
    assert_null(child);
}

static void test_split_before_nccl_2_18_is_refused_with_the_version(void **state)
{
    struct world *w = *state;

    setenv("FAKE_NCCL_VERSION", "21703", 1);
    world_open(w, NCCL_PROVIDER_PATH, false, 2);
    world_create(w);
    run_ranks(w, 2, split_on_old_nccl);
    for (int r = 0; r < 2; r++) {
        assert_status(w->ranks[r].status, ACCEL_ERR_NOT_SUPPORTED);
        assert_contains(w->ranks[r].error, "it came in NCCL 2.18; this is "
                                           "version code 21703");
    }
}

/* ---- rccl: the same source over the same fake, as librccl.so.1, on HIP ---- */

static int setup_rccl(void **state)
{
    static char library[512];
    char *dir;

    setup_nccl(state);
    unsetenv("ACCEL_NCCL_LIBRARY");
    unsetenv("ACCEL_CUDA_LIBRARY");
    dir = support_make_temp_dir();
    support_copy_file(FAKE_NCCL_PATH, dir, "librccl.so.1");
    snprintf(library, sizeof(library), "%s/librccl.so.1", dir);
    the_world.temp_dir = dir;
    setenv("ACCEL_RCCL_LIBRARY", library, 1);
    setenv("ACCEL_HIP_LIBRARY", FAKE_HIP_PATH, 1);
    setenv("FAKE_HIP_DEVICES", "2", 1);
    return 0;
}

static void test_rccl_runs_on_hip_devices(void **state)
{
    struct world *w = *state;

    world_open(w, RCCL_PROVIDER_PATH, true, 2);
    assert_string_equal(w->table->name, "rccl");
    assert_status(w->table->accepts_memory(w->provider, ACCEL_NATIVE_HIP),
                  ACCEL_OK);
    assert_status(w->table->accepts_memory(w->provider, ACCEL_NATIVE_CUDA),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "RCCL works on HIP device memory only");
    run_ranks(w, 2, rank_create_elsewhere);
    for (int r = 0; r < 2; r++)
        assert_status(w->ranks[r].status, ACCEL_OK);
    assert_bound(w, getenv("ACCEL_RCCL_LIBRARY"));
    run_ranks(w, 2, one_allreduce);
    for (int r = 0; r < 2; r++)
        assert_status(w->ranks[r].status, ACCEL_OK);
}

static void test_rccl_without_library_names_librccl(void **state)
{
    struct world *w = *state;

    setenv("ACCEL_RCCL_LIBRARY", "/nonexistent/librccl.so.1", 1);
    load_table(w, RCCL_PROVIDER_PATH);
    assert_status(w->table->plugin_open(&services, &w->provider),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(last_error, "rccl: /nonexistent/librccl.so.1 not found: ");
}

/* ---- through libaccel: accel_stream_native and the public collectives ---- */

#define PUBLIC_COUNT 1003

struct public_rank {
    accel_device *device;
    accel_stream *stream;
    accel_comm *comm;
    int rank;
    accel_status status;
    char error[512];
};

/* Each rank all-reduces and broadcasts through the public API, checked. */
static void *public_rank_main(void *arg)
{
    struct public_rank *p = arg;
    float *host = calloc(PUBLIC_COUNT, sizeof(float));
    accel_ref ref;

    assert_non_null(host);
    for (int i = 0; i < PUBLIC_COUNT; i++)
        host[i] = (float)((p->rank + 1) * (i % 11));
    p->status = accel_alloc(p->device, ACCEL_F32, PUBLIC_COUNT, &ref);
    if (p->status == ACCEL_OK)
        p->status = accel_copy_to_device(p->stream, ref, 0, host,
                                         PUBLIC_COUNT * sizeof(float));
    if (p->status == ACCEL_OK)
        p->status = accel_allreduce(p->comm, p->stream, ref, ref, PUBLIC_COUNT,
                                    ACCEL_REDUCE_SUM);
    if (p->status == ACCEL_OK)
        p->status = accel_comm_barrier(p->comm, p->stream);
    if (p->status == ACCEL_OK)
        p->status = accel_copy_to_host(p->stream, host, ref, 0,
                                       PUBLIC_COUNT * sizeof(float));
    if (p->status == ACCEL_OK)
        p->status = accel_stream_sync(p->stream);
    snprintf(p->error, sizeof(p->error), "%s", accel_last_error());
    for (int i = 0; p->status == ACCEL_OK && i < PUBLIC_COUNT; i++) {
        if (host[i] != (float)(3 * (i % 11)))
            fail_msg("rank %d element %d: %g, not %g", p->rank, i,
                     (double)host[i], (double)(3 * (i % 11)));
    }
    accel_free(p->device, ref);
    free(host);
    return NULL;
}

static void test_public_collectives_run_on_cuda_devices_through_nccl(void **state)
{
    struct public_rank ranks[2] = {{0}};
    accel_device *devices[2];
    accel_comm *comms[2] = {NULL, NULL};
    struct accel_native_handles native = {.struct_size = sizeof(native)};
    pthread_t threads[2];
    accel_host *host = NULL;

    (void)state;
    setenv("ACCEL_COMM", "nccl", 1);
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    for (int r = 0; r < 2; r++) {
        ranks[r].rank = r;
        assert_status(
            accel_device_open(host, "cuda", (uint32_t)r, &ranks[r].device),
            ACCEL_OK);
        assert_status(accel_stream_create(ranks[r].device, &ranks[r].stream),
                      ACCEL_OK);
        devices[r] = ranks[r].device;
    }
    /* The CUDA plugin's native_handles, as the host hands them on. */
    assert_status(accel_stream_native(ranks[1].stream, &native), ACCEL_OK);
    assert_int_equal(native.kind, ACCEL_NATIVE_CUDA);
    assert_int_equal(native.device_ordinal, 1);
    assert_non_null(native.context);
    assert_non_null(native.stream);

    assert_status(accel_comm_create_local(devices, 2, comms), ACCEL_OK);
    for (int r = 0; r < 2; r++) {
        assert_string_equal(accel_comm_provider_name(comms[r]), "nccl");
        ranks[r].comm = comms[r];
        assert_int_equal(
            pthread_create(&threads[r], NULL, public_rank_main, &ranks[r]), 0);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(threads[r], NULL);
    for (int r = 0; r < 2; r++) {
        if (ranks[r].status != ACCEL_OK)
            fail_msg("rank %d: %s: %s", r, accel_status_name(ranks[r].status),
                     ranks[r].error);
        assert_status(accel_comm_status(comms[r]), ACCEL_OK);
    }
    assert_true(fake_calls("ncclAllReduce") >= 4);
    for (int r = 0; r < 2; r++) {
        accel_comm_destroy(comms[r]);
        accel_stream_destroy(ranks[r].stream);
        accel_device_close(ranks[r].device);
    }
    accel_host_destroy(host);
}

/* Each rank splits its stream-ordered communicator and all-reduces in the child. */
static void *public_split_main(void *arg)
{
    struct public_rank *p = arg;
    int color = p->rank == 3 ? -1 : p->rank % 2;
    accel_comm *child = NULL;
    int32_t value = p->rank + 1;
    accel_ref ref;

    p->status = accel_comm_split(p->comm, color, -p->rank, &child);
    snprintf(p->error, sizeof(p->error), "%s", accel_last_error());
    if (p->status != ACCEL_OK || color < 0) {
        assert_null(child);
        return NULL;
    }
    assert_non_null(child);
    assert_string_equal(accel_comm_provider_name(child), "nccl");
    /* Keys are -rank: ranks 0 and 2 make one (2 first), 1 is alone. */
    assert_int_equal(accel_comm_size(child), color == 0 ? 2 : 1);
    assert_int_equal(accel_comm_rank(child), p->rank == 0 ? 1 : 0);
    assert_status(accel_alloc(p->device, ACCEL_I32, 1, &ref), ACCEL_OK);
    assert_status(accel_copy_to_device(p->stream, ref, 0, &value, sizeof(value)),
                  ACCEL_OK);
    assert_status(accel_allreduce(child, p->stream, ref, ref, 1, ACCEL_REDUCE_SUM),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(p->stream, &value, ref, 0, sizeof(value)),
                  ACCEL_OK);
    assert_status(accel_stream_sync(p->stream), ACCEL_OK);
    assert_int_equal(value, color == 0 ? 1 + 3 : 2);
    assert_status(accel_comm_status(child), ACCEL_OK);
    accel_free(p->device, ref);
    accel_comm_destroy(child);
    return NULL;
}

static void test_public_split_of_a_stream_ordered_communicator(void **state)
{
    struct public_rank ranks[4] = {{0}};
    accel_device *devices[4];
    accel_comm *comms[4] = {NULL};
    pthread_t threads[4];
    accel_host *host = NULL;
    uint64_t splits = fake_calls("ncclCommSplit");

    (void)state;
    setenv("ACCEL_COMM", "nccl", 1);
    setenv("FAKE_CUDA_DEVICES", "4", 1);
    assert_status(accel_host_create(NULL, &host), ACCEL_OK);
    for (int r = 0; r < 4; r++) {
        ranks[r].rank = r;
        assert_status(
            accel_device_open(host, "cuda", (uint32_t)r, &ranks[r].device),
            ACCEL_OK);
        assert_status(accel_stream_create(ranks[r].device, &ranks[r].stream),
                      ACCEL_OK);
        devices[r] = ranks[r].device;
    }
    assert_status(accel_comm_create_local(devices, 4, comms), ACCEL_OK);
    for (int r = 0; r < 4; r++) {
        ranks[r].comm = comms[r];
        assert_int_equal(
            pthread_create(&threads[r], NULL, public_split_main, &ranks[r]), 0);
    }
    for (int r = 0; r < 4; r++)
        pthread_join(threads[r], NULL);
    for (int r = 0; r < 4; r++) {
        if (ranks[r].status != ACCEL_OK)
            fail_msg("rank %d: %s: %s", r, accel_status_name(ranks[r].status),
                     ranks[r].error);
    }
    assert_int_equal(fake_calls("ncclCommSplit") - splits, 4);
    for (int r = 0; r < 4; r++) {
        accel_comm_destroy(comms[r]);
        accel_stream_destroy(ranks[r].stream);
        accel_device_close(ranks[r].device);
    }
    accel_host_destroy(host);
}

/* ---- the real libnccl.so.2 ---- */

static void test_real_nccl_loads_and_says_no_gpu(void **state)
{
    struct world *w = *state;

    setenv("ACCEL_NCCL_LIBRARY", REAL_NCCL_PATH, 1);
    setenv("ACCEL_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    load_table(w, NCCL_PROVIDER_PATH);
    assert_status(w->table->plugin_open(&services, &w->provider),
                  ACCEL_ERR_NOT_SUPPORTED);
    /* ncclGetVersion answered: the version is in the reason. */
    assert_contains(last_error, "nccl: NCCL 2.");
    assert_contains(last_error, " at " REAL_NCCL_PATH " loaded, but no GPU: ");
    if (CUDA_STUB_PATH[0] != '\0') {
        /* The toolkit's stub driver is a library, and says it has no GPU. */
        setenv("ACCEL_CUDA_LIBRARY", CUDA_STUB_PATH, 1);
        assert_status(w->table->plugin_open(&services, &w->provider),
                      ACCEL_ERR_NOT_SUPPORTED);
        assert_contains(last_error,
                        "no GPU: cuInit of " CUDA_STUB_PATH " failed");
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest fake_tests[] = {
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup_nccl, teardown)
        CASE(test_missing_library_is_not_supported_and_named),
        CASE(test_open_over_the_fake_takes_cuda_memory_only),
        CASE(test_open_without_gpu_says_no_gpu),
        CASE(test_unique_id_is_nccl_s_128_bytes),
        CASE(test_every_kind_over_three_ranks_matches_a_serial_reference),
        CASE(test_in_place_operations),
        CASE(test_every_type_and_operation_or_the_reason),
        CASE(test_bf16_reductions_need_nccl_2_10),
        CASE(test_counts_that_differ_across_ranks_are_an_error),
        CASE(test_host_memory_and_malformed_ops_are_refused),
        CASE(test_each_communicator_is_bound_to_its_rank_s_device),
        CASE(test_rank_that_never_joins_times_out_and_is_aborted),
        CASE(test_nccl_before_2_14_initialises_blocking),
        CASE(test_asynchronous_error_is_reported_by_comm_error),
        CASE(test_failed_call_names_the_call_and_nccl_s_error),
        CASE(test_abort_fails_later_calls_and_destroy_does_not_free_twice),
        CASE(test_abort_releases_a_rank_waiting_for_a_stalled_peer),
        CASE(test_split_by_color_and_no_color),
        CASE(test_split_before_nccl_2_18_is_refused_with_the_version),
        cmocka_unit_test_setup_teardown(test_rccl_runs_on_hip_devices,
                                        setup_rccl, teardown),
        cmocka_unit_test_setup_teardown(test_rccl_without_library_names_librccl,
                                        setup_rccl, teardown),
        CASE(test_public_collectives_run_on_cuda_devices_through_nccl),
        CASE(test_public_split_of_a_stream_ordered_communicator),
#undef CASE
    };
    const struct CMUnitTest real_tests[] = {
        cmocka_unit_test_setup_teardown(test_real_nccl_loads_and_says_no_gpu,
                                        setup_nccl, teardown),
    };

    if (argc > 1 && strcmp(argv[1], "real") == 0) {
        if (REAL_NCCL_PATH[0] == '\0') {
            printf(
                "no libnccl.so.2 on this machine (looked in the CUDA toolkit's "
                "lib64): the real-library test is skipped\n");
            return 77;
        }
        return cmocka_run_group_tests(real_tests, NULL, NULL);
    }
    return cmocka_run_group_tests(fake_tests, NULL, NULL);
}
