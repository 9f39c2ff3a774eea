/*
 * gpu-check-nccl: the nccl communication provider on real GPUs, one rank
 * per CUDA device, ranks as threads of this process (loopback), through
 * the provider's table (include/accel/comm.h) and the CUDA driver alone.
 * tools/gpu-check.sh runs it; the meson tests run it over the fake NCCL
 * and CUDA driver, and without NCCL, where it must skip.
 *
 *   gpu-check-nccl PROVIDER.so [COUNT]
 *
 * Each rank fills COUNT floats (default 1 Mi + 3: not a power of two) on
 * its device, all-reduces them (sum) on its stream, meets the others at
 * a barrier, and checks every element against the serial sum; then one
 * all-gather, checked too. One line per rank; exit 0 when every rank
 * verified, 1 on a failure, 77 (skipped, with the reason) when the
 * provider cannot open (no libnccl.so.2, no GPU). ACCEL_NCCL_LIBRARY and
 * ACCEL_CUDA_LIBRARY choose the libraries, as for the provider.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/comm.h>

#define RANKS_MAX 16

/* The CUDA Driver API calls used here, by their versioned names. */
struct cuda {
    void *library;
    int (*init)(unsigned);
    int (*device_count)(int *);
    int (*retain)(void **, int);
    int (*release)(int);
    int (*push)(void *);
    int (*pop)(void **);
    int (*stream_create)(void **, unsigned);
    int (*stream_destroy)(void *);
    int (*stream_sync)(void *);
    int (*alloc)(unsigned long long *, size_t);
    int (*free)(unsigned long long);
    int (*to_device)(unsigned long long, const void *, size_t, void *);
    int (*to_host)(void *, unsigned long long, size_t, void *);
};

struct rank {
    int rank, size;
    size_t count;
    struct accel_native_handles device;
    void *stream;
    unsigned long long send, recv;
    accel_comm_handle *comm;
    char verdict[1100];
    int ok;
};

static const struct accel_comm_v1 *table;
static accel_comm_provider *provider;
static struct cuda cuda;
static unsigned char unique_id[ACCEL_COMM_UNIQUE_ID_MAX];
static size_t unique_id_bytes;
static _Thread_local char last_error[1024];

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

static int cuda_open(void)
{
    const char *path = getenv("ACCEL_CUDA_LIBRARY");
    struct {
        void **slot;
        const char *name;
    } entries[] = {
        {(void **)&cuda.init, "cuInit"},
        {(void **)&cuda.device_count, "cuDeviceGetCount"},
        {(void **)&cuda.retain, "cuDevicePrimaryCtxRetain"},
        {(void **)&cuda.release, "cuDevicePrimaryCtxRelease_v2"},
        {(void **)&cuda.push, "cuCtxPushCurrent_v2"},
        {(void **)&cuda.pop, "cuCtxPopCurrent_v2"},
        {(void **)&cuda.stream_create, "cuStreamCreate"},
        {(void **)&cuda.stream_destroy, "cuStreamDestroy_v2"},
        {(void **)&cuda.stream_sync, "cuStreamSynchronize"},
        {(void **)&cuda.alloc, "cuMemAlloc_v2"},
        {(void **)&cuda.free, "cuMemFree_v2"},
        {(void **)&cuda.to_device, "cuMemcpyHtoDAsync_v2"},
        {(void **)&cuda.to_host, "cuMemcpyDtoHAsync_v2"},
    };

    cuda.library = dlopen(path != NULL && path[0] != '\0' ? path : "libcuda.so.1",
                          RTLD_NOW | RTLD_LOCAL);
    if (cuda.library == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
        *entries[i].slot = dlsym(cuda.library, entries[i].name);
        if (*entries[i].slot == NULL)
            return 0;
    }
    return cuda.init(0) == 0;
}

static double now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

/* What rank r puts in element i: exact in float once summed. */
static float value_of(int r, size_t i)
{
    return (float)(r + 1) * (float)(i % 7);
}

#define CUDA_CHECK(call, what)                                                 \
    do {                                                                       \
        int result_ = (call);                                                  \
        if (result_ != 0) {                                                    \
            snprintf(rank->verdict, sizeof(rank->verdict), "%s failed: %d",    \
                     what, result_);                                           \
            return 0;                                                          \
        }                                                                      \
    } while (0)

/* The rank's device, stream and buffers; the send buffer filled. */
static int rank_prepare(struct rank *rank)
{
    size_t bytes = rank->count * sizeof(float) * (size_t)rank->size;
    float *host = malloc(bytes);
    void *popped;
    int ok = 0;

    if (host == NULL)
        return 0;
    for (size_t i = 0; i < rank->count * (size_t)rank->size; i++)
        host[i] = value_of(rank->rank, i);
    rank->device.struct_size = sizeof(rank->device);
    rank->device.kind = ACCEL_NATIVE_CUDA;
    rank->device.device_ordinal = rank->rank;
    if (cuda.retain(&rank->device.context, rank->rank) == 0 &&
        cuda.push(rank->device.context) == 0) {
        ok = cuda.stream_create(&rank->stream, 1) == 0 &&
             cuda.alloc(&rank->send, bytes) == 0 &&
             cuda.alloc(&rank->recv, bytes) == 0 &&
             cuda.to_device(rank->send, host, bytes, rank->stream) == 0 &&
             cuda.stream_sync(rank->stream) == 0;
        cuda.pop(&popped);
    }
    free(host);
    if (!ok)
        snprintf(rank->verdict, sizeof(rank->verdict),
                 "the device's stream and buffers could not be made");
    return ok;
}

static int rank_submit(struct rank *rank, uint32_t kind)
{
    struct accel_comm_op op = {
        .struct_size = sizeof(op),
        .kind = kind,
        .type = ACCEL_F32,
        .reduce_op = ACCEL_REDUCE_SUM,
        .count = rank->count,
        .memory = ACCEL_NATIVE_CUDA,
        .send = rank->send,
        .recv = rank->recv,
        .stream = rank->stream,
    };
    accel_status status = table->submit(rank->comm, &op);

    if (status != ACCEL_OK)
        snprintf(rank->verdict, sizeof(rank->verdict), "submit: %s", last_error);
    return status == ACCEL_OK;
}

/* Compare recv with the serial reference of `kind`. */
static int rank_verify(struct rank *rank, uint32_t kind)
{
    size_t n = kind == ACCEL_COMM_ALLGATHER ? rank->count * (size_t)rank->size
                                            : rank->count;
    float *host = malloc(n * sizeof(float));
    float expected;
    void *popped;
    int ok = host != NULL;

    ok = ok && cuda.push(rank->device.context) == 0;
    if (ok) {
        ok = cuda.to_host(host, rank->recv, n * sizeof(float), rank->stream) ==
                 0 &&
             cuda.stream_sync(rank->stream) == 0;
        cuda.pop(&popped);
    }
    for (size_t i = 0; ok && i < n; i++) {
        expected = 0;
        if (kind == ACCEL_COMM_ALLGATHER)
            expected = value_of((int)(i / rank->count), i % rank->count);
        else
            for (int r = 0; r < rank->size; r++)
                expected += value_of(r, i);
        if (host[i] != expected) {
            snprintf(rank->verdict, sizeof(rank->verdict),
                     "element %zu is %g, not %g", i, (double)host[i],
                     (double)expected);
            ok = 0;
        }
    }
    free(host);
    return ok;
}

static void *rank_main(void *arg)
{
    struct rank *rank = arg;
    struct accel_comm_init init = {
        .struct_size = sizeof(init),
        .rank = rank->rank,
        .size = rank->size,
        .local_rank = rank->rank,
        .local_size = rank->size,
        .device = rank->device,
        .id = unique_id,
        .id_bytes = unique_id_bytes,
        .timeout_ns = 60000000000ull,
    };
    struct accel_comm_bootstrap none = {0};
    double began = now_ms();

    init.bootstrap = &none;
    if (table->comm_create(provider, &init, &rank->comm) != ACCEL_OK) {
        snprintf(rank->verdict, sizeof(rank->verdict), "comm_create: %s",
                 last_error);
        return NULL;
    }
    rank->ok = rank_submit(rank, ACCEL_COMM_ALLREDUCE) &&
               rank_submit(rank, ACCEL_COMM_BARRIER) &&
               rank_verify(rank, ACCEL_COMM_ALLREDUCE) &&
               rank_submit(rank, ACCEL_COMM_ALLGATHER) &&
               rank_verify(rank, ACCEL_COMM_ALLGATHER) &&
               table->comm_error(rank->comm) == ACCEL_OK;
    if (rank->ok)
        snprintf(
            rank->verdict,
            sizeof(rank->verdict), "all-reduce, barrier and all-gather of %zu floats verified in %.1f ms",
            rank->count, now_ms() - began);
    return NULL;
}

static int provider_open(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

    table = dl != NULL ? dlsym(dl, ACCEL_COMM_SYMBOL) : NULL;
    if (table == NULL) {
        fprintf(stderr, "gpu-check-nccl: %s: %s\n", path,
                dl == NULL ? dlerror() : "no accel_comm_v1");
        return 1;
    }
    if (table->plugin_open(&services, &provider) != ACCEL_OK) {
        printf("skipped: the %s provider does not open here: %s\n", table->name,
               last_error);
        return 77;
    }
    if (table->unique_id(provider, unique_id, sizeof(unique_id),
                         &unique_id_bytes) != ACCEL_OK) {
        fprintf(stderr, "gpu-check-nccl: unique_id: %s\n", last_error);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct rank ranks[RANKS_MAX];
    pthread_t threads[RANKS_MAX];
    size_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : (1u << 20) + 3;
    int size = 0, status, failed = 0;

    if (argc < 2 || count == 0) {
        fprintf(stderr, "usage: gpu-check-nccl PROVIDER.so [COUNT]\n");
        return 2;
    }
    status = provider_open(argv[1]);
    if (status != 0)
        return status;
    if (!cuda_open() || cuda.device_count(&size) != 0 || size < 1) {
        printf("skipped: no CUDA device to run on\n");
        return 77;
    }
    if (size > RANKS_MAX)
        size = RANKS_MAX;
    for (int r = 0; r < size; r++) {
        ranks[r] = (struct rank){.rank = r, .size = size, .count = count};
        if (!rank_prepare(&ranks[r])) {
            printf("rank %d on cuda:%d: FAILED: %s\n", r, r, ranks[r].verdict);
            return 1;
        }
    }
    for (int r = 0; r < size; r++)
        pthread_create(&threads[r], NULL, rank_main, &ranks[r]);
    for (int r = 0; r < size; r++) {
        pthread_join(threads[r], NULL);
        printf("rank %d of %d on cuda:%d: %s: %s\n", r, size, r,
               ranks[r].ok ? "OK" : "FAILED", ranks[r].verdict);
        failed |= !ranks[r].ok;
        if (ranks[r].comm != NULL)
            table->comm_destroy(ranks[r].comm);
    }
    table->plugin_close(provider);
    return failed;
}
