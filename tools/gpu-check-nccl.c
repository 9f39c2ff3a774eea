/*
 * gpu-check-nccl: collectives through NCCL on every CUDA device of the
 * machine, one rank per device, ranks as threads of this process
 * (accel_comm_create_local with ACCEL_COMM=nccl), through the public API:
 * the CUDA plugin's native handles, libaccel's collectives and the nccl
 * provider together. tools/gpu-check.sh runs it; the meson tests run it
 * over the fake NCCL and CUDA driver, and without NCCL, where it skips.
 *
 *   gpu-check-nccl [COUNT]
 *
 * Each rank fills COUNT floats (default 1 Mi + 3: not a power of two) on
 * its device, all-reduces them (sum) on its stream, meets the others at a
 * barrier, and checks every element against the serial sum; then one
 * all-gather, checked too. One line per rank; exit 0 when every rank
 * verified, 1 on a failure, 77 (skipped, with the reason) when there is
 * no CUDA device or the nccl provider does not serve (no libnccl.so.2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define RANKS_MAX 16

struct rank {
    int rank, size;
    size_t count;
    accel_device *device;
    accel_stream *stream;
    accel_comm *comm;
    char verdict[1100];
    int ok;
};

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

/* Element i of the result of an all-reduce (gathered: false) or all-gather. */
static float expected(const struct rank *rank, size_t i, int gathered)
{
    float sum = 0;

    if (gathered)
        return value_of((int)(i / rank->count), i % rank->count);
    for (int r = 0; r < rank->size; r++)
        sum += value_of(r, i);
    return sum;
}

static int check(struct rank *rank, accel_status status, const char *what)
{
    if (status != ACCEL_OK)
        snprintf(rank->verdict, sizeof(rank->verdict), "%s: %s: %s", what,
                 accel_status_name(status), accel_last_error());
    return status == ACCEL_OK;
}

static int verify(struct rank *rank, const float *host, size_t n, int gathered)
{
    for (size_t i = 0; i < n; i++) {
        if (host[i] != expected(rank, i, gathered)) {
            snprintf(rank->verdict, sizeof(rank->verdict),
                     "%s element %zu is %g, not %g",
                     gathered ? "all-gather" : "all-reduce", i, (double)host[i],
                     (double)expected(rank, i, gathered));
            return 0;
        }
    }
    return 1;
}

/* The rank's collectives, each result copied back and verified. */
static int rank_run(struct rank *rank, float *host, accel_ref send, accel_ref recv)
{
    size_t n = rank->count, all = n * (size_t)rank->size;

    for (size_t i = 0; i < n; i++)
        host[i] = value_of(rank->rank, i);
    return check(rank, accel_copy_to_device(rank->stream, send, 0, host, n * 4),
                 "copy in") &&
           check(rank,
                 accel_allreduce(rank->comm, rank->stream, send, recv, n,
                                 ACCEL_REDUCE_SUM),
                 "accel_allreduce") &&
           check(rank, accel_comm_barrier(rank->comm, rank->stream),
                 "accel_comm_barrier") &&
           check(rank, accel_copy_to_host(rank->stream, host, recv, 0, n * 4),
                 "copy out") &&
           check(rank, accel_stream_sync(rank->stream), "accel_stream_sync") &&
           verify(rank, host, n, 0) &&
           check(rank, accel_allgather(rank->comm, rank->stream, send, recv, n),
                 "accel_allgather") &&
           check(rank, accel_copy_to_host(rank->stream, host, recv, 0, all * 4),
                 "copy out") &&
           check(rank, accel_stream_sync(rank->stream), "accel_stream_sync") &&
           verify(rank, host, all, 1) &&
           check(rank, accel_comm_status(rank->comm), "accel_comm_status");
}

static void *rank_main(void *arg)
{
    struct rank *rank = arg;
    size_t all = rank->count * (size_t)rank->size;
    float *host = malloc(all * sizeof(float));
    accel_ref send = {0}, recv = {0};
    double began = now_ms();

    if (host == NULL) {
        snprintf(rank->verdict, sizeof(rank->verdict), "out of host memory");
        return NULL;
    }
    rank->ok = check(rank,
                     accel_alloc(rank->device, ACCEL_F32, rank->count, &send),
                     "accel_alloc") &&
               check(rank, accel_alloc(rank->device, ACCEL_F32, all, &recv),
                     "accel_alloc") &&
               rank_run(rank, host, send, recv);
    if (rank->ok)
        snprintf(rank->verdict, sizeof(rank->verdict),
                 "all-reduce, barrier and all-gather of %zu floats through %s "
                 "verified in %.1f ms",
                 rank->count, accel_comm_provider_name(rank->comm),
                 now_ms() - began);
    accel_free(rank->device, send);
    accel_free(rank->device, recv);
    free(host);
    return NULL;
}

/* One rank per CUDA device; 77 when there is none. */
static int open_ranks(accel_host *host, struct rank *ranks, size_t count,
                      int *out_size)
{
    accel_device *device;
    int size = 0;

    while (size < RANKS_MAX && accel_device_open(host, "cuda", (uint32_t)size,
                                                 &device) == ACCEL_OK) {
        ranks[size] = (struct rank){
            .rank = size, .count = count, .device = device};
        if (accel_stream_create(device, &ranks[size].stream) != ACCEL_OK) {
            fprintf(stderr, "gpu-check-nccl: cuda:%d: %s\n", size,
                    accel_last_error());
            return 1;
        }
        size++;
    }
    if (size == 0) {
        printf("skipped: no CUDA device: %s\n", accel_last_error());
        return 77;
    }
    for (int r = 0; r < size; r++)
        ranks[r].size = size;
    *out_size = size;
    return 0;
}

int main(int argc, char **argv)
{
    static struct rank ranks[RANKS_MAX];
    accel_device *devices[RANKS_MAX];
    accel_comm *comms[RANKS_MAX];
    pthread_t threads[RANKS_MAX];
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : (1u << 20) + 3;
    accel_host *host = NULL;
    int size = 0, status, failed = 0;

    if (count == 0) {
        fprintf(stderr, "usage: gpu-check-nccl [COUNT]\n");
        return 2;
    }
    /* NCCL alone: another provider would not test what this is for. */
    setenv("ACCEL_COMM", "nccl", 1);
    if (accel_host_create(NULL, &host) != ACCEL_OK) {
        fprintf(stderr, "gpu-check-nccl: %s\n", accel_last_error());
        return 1;
    }
    status = open_ranks(host, ranks, count, &size);
    if (status == 0) {
        for (int r = 0; r < size; r++)
            devices[r] = ranks[r].device;
        status = accel_comm_create_local(devices, size, comms);
        if (status == ACCEL_ERR_NOT_FOUND)
            printf("skipped: the nccl provider does not serve here: %s\n",
                   accel_last_error());
        else if (status != ACCEL_OK)
            fprintf(stderr, "gpu-check-nccl: accel_comm_create_local: %s\n",
                    accel_last_error());
        status = status == ACCEL_OK              ? 0
                 : status == ACCEL_ERR_NOT_FOUND ? 77
                                                 : 1;
    }
    for (int r = 0; status == 0 && r < size; r++) {
        ranks[r].comm = comms[r];
        pthread_create(&threads[r], NULL, rank_main, &ranks[r]);
    }
    for (int r = 0; status == 0 && r < size; r++) {
        pthread_join(threads[r], NULL);
        printf("rank %d of %d on cuda:%d: %s: %s\n", r, size, r,
               ranks[r].ok ? "OK" : "FAILED", ranks[r].verdict);
        failed |= !ranks[r].ok;
    }
    for (int r = 0; r < size; r++) {
        accel_comm_destroy(ranks[r].comm);
        accel_stream_destroy(ranks[r].stream);
        accel_device_close(ranks[r].device);
    }
    accel_host_destroy(host);
    return status != 0 ? status : failed;
}
