/*
 * The bootstrap between the threads of one process (accel_comm_create_local):
 * a shared buffer and a barrier with a deadline. Both calls of
 * struct accel_comm_bootstrap are one allgather here (a broadcast keeps the
 * root's share), which is plenty for the few bytes of a unique id.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "os.h"
#include "status.h"

struct accel__local_boot {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int size;
    uint64_t timeout_ns;
    int arrived;
    uint64_t generation;
    bool failed; /* a rank timed out: every later call fails */
    uint8_t *buffer;
    size_t buffer_bytes;
};

accel_status accel__local_boot_create(int size, uint64_t timeout_ns,
                                      struct accel__local_boot **out_boot)
{
    struct accel__local_boot *boot = calloc(1, sizeof *boot);
    pthread_condattr_t attr;
    if (boot == NULL || pthread_condattr_init(&attr) != 0) {
        free(boot);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "bootstrap");
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&boot->changed, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&boot->lock, NULL);
    boot->size = size;
    boot->timeout_ns = timeout_ns;
    *out_boot = boot;
    return ACCEL_OK;
}

void accel__local_boot_destroy(struct accel__local_boot *boot)
{
    if (boot == NULL)
        return;
    pthread_cond_destroy(&boot->changed);
    pthread_mutex_destroy(&boot->lock);
    free(boot->buffer);
    free(boot);
}

/* Wait for every rank to arrive; lock held. */
static accel_status barrier_locked(struct accel__local_boot *boot,
                                   uint64_t deadline)
{
    if (boot->failed)
        return accel__error(ACCEL_ERR_TIMEOUT,
                            "bootstrap: a rank timed out before");
    uint64_t generation = boot->generation;
    if (++boot->arrived == boot->size) {
        boot->arrived = 0;
        boot->generation++;
        pthread_cond_broadcast(&boot->changed);
        return ACCEL_OK;
    }
    struct timespec until = {.tv_sec = (time_t)(deadline / 1000000000u),
                             .tv_nsec = (long)(deadline % 1000000000u)};
    while (generation == boot->generation && !boot->failed) {
        int rc = deadline ? pthread_cond_timedwait(&boot->changed, &boot->lock,
                                                   &until)
                          : pthread_cond_wait(&boot->changed, &boot->lock);
        if (rc == ETIMEDOUT && generation == boot->generation) {
            boot->failed = true;
            pthread_cond_broadcast(&boot->changed);
        }
    }
    if (generation != boot->generation)
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_TIMEOUT,
                        "bootstrap: %d of %d ranks joined within "
                        "ACCEL_COMM_TIMEOUT_MS",
                        boot->arrived, boot->size);
}

/* Every rank's `bytes` at send into out (size * bytes). */
static accel_status exchange(struct accel__local_rank_boot *view,
                             const void *send, void *out, size_t bytes)
{
    struct accel__local_boot *boot = view->shared;
    uint64_t deadline = boot->timeout_ns ? accel__now_ns() + boot->timeout_ns
                                         : 0;
    size_t total = bytes * (size_t)boot->size;
    pthread_mutex_lock(&boot->lock);
    /* The first barrier: nobody reads the previous exchange any more. */
    accel_status status = barrier_locked(boot, deadline);
    if (status == ACCEL_OK && boot->buffer_bytes < total) {
        uint8_t *grown = realloc(boot->buffer, total);
        if (grown == NULL)
            boot->failed = true; /* the others must not wait for ever */
        else {
            boot->buffer = grown;
            boot->buffer_bytes = total;
        }
    }
    if (status == ACCEL_OK && !boot->failed)
        memcpy(boot->buffer + (size_t)view->rank * bytes, send, bytes);
    if (status == ACCEL_OK)
        status = barrier_locked(boot, deadline);
    if (status == ACCEL_OK)
        memcpy(out, boot->buffer, total);
    pthread_mutex_unlock(&boot->lock);
    return status;
}

static accel_status local_allgather(void *ctx, const void *send, void *out,
                                    size_t bytes)
{
    return exchange(ctx, send, out, bytes);
}

static accel_status local_broadcast(void *ctx, void *data, size_t bytes,
                                    int root)
{
    struct accel__local_rank_boot *view = ctx;
    if (root < 0 || root >= view->shared->size)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "bootstrap: root %d out of range", root);
    uint8_t *all = malloc(bytes * (size_t)view->shared->size + 1);
    if (all == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "bootstrap");
    accel_status status = exchange(view, data, all, bytes);
    if (status == ACCEL_OK)
        memcpy(data, all + (size_t)root * bytes, bytes);
    free(all);
    return status;
}

void accel__local_boot_view(struct accel__local_boot *boot,
                            struct accel__local_rank_boot *storage, int rank,
                            struct accel_comm_bootstrap *out)
{
    storage->shared = boot;
    storage->rank = rank;
    *out = (struct accel_comm_bootstrap){
        .ctx = storage,
        .broadcast = local_broadcast,
        .allgather = local_allgather,
    };
}
