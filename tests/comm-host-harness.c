/*
 * What the host provider's tests share (comm-host-harness.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "comm-host-harness.h"

const struct accel_comm_v1 *table;
accel_comm_provider *provider;
static void *library;
bool under_valgrind;

/* ---- services: errors kept per thread, for the asserts ---- */

_Thread_local char last_error[512];

static void test_log(accel_log_level level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static accel_status test_set_error(accel_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

static const char *test_getenv(const char *name)
{
    return getenv(name);
}

static const struct accel_comm_services services = {
    .struct_size = sizeof services,
    .host_minor = ACCEL_COMM_ABI_MINOR,
    .log = test_log,
    .set_error = test_set_error,
    .getenv = test_getenv,
};

/* A deadline `seconds` from now, so that a broken operation fails the test
 * instead of hanging it (and, across processes, leaving ranks behind). */
uint64_t deadline_in(unsigned seconds)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return ((uint64_t)now.tv_sec + seconds) * 1000000000u + (uint64_t)now.tv_nsec;
}

/* ---- a bootstrap between threads or (in shared memory) processes ---- */

#define HOST_TEST_BOOT_BYTES (8 * 256)

struct boot_shared {
    pthread_barrier_t barrier;
    uint8_t data[HOST_TEST_BOOT_BYTES];
};

struct boot_rank {
    struct boot_shared *shared;
    int rank;
    int size;
};

static accel_status boot_broadcast(void *ctx, void *data, size_t bytes, int root)
{
    struct boot_rank *self = ctx;
    if (self->rank == root)
        memcpy(self->shared->data, data, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    if (self->rank != root)
        memcpy(data, self->shared->data, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    return ACCEL_OK;
}

static accel_status boot_allgather(void *ctx, const void *send, void *out,
                                   size_t bytes)
{
    struct boot_rank *self = ctx;
    memcpy(self->shared->data + (size_t)self->rank * bytes, send, bytes);
    pthread_barrier_wait(&self->shared->barrier);
    memcpy(out, self->shared->data, (size_t)self->size * bytes);
    pthread_barrier_wait(&self->shared->barrier);
    return ACCEL_OK;
}

struct boot_shared *boot_new(int size, bool processes)
{
    struct boot_shared *boot = mmap(NULL, sizeof *boot, PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(boot != MAP_FAILED);
    pthread_barrierattr_t attr;
    pthread_barrierattr_init(&attr);
    pthread_barrierattr_setpshared(&attr, processes ? PTHREAD_PROCESS_SHARED
                                                    : PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_init(&boot->barrier, &attr, (unsigned)size);
    pthread_barrierattr_destroy(&attr);
    return boot;
}

void boot_free(struct boot_shared *boot)
{
    pthread_barrier_destroy(&boot->barrier);
    munmap(boot, sizeof *boot);
}

/* ---- running ranks as threads ---- */

struct rank_thread {
    struct group *group;
    int rank;
    pthread_t thread;
};

accel_status create_rank(struct group *group, int rank,
                         accel_comm_handle **out_comm)
{
    struct boot_rank boot = {group->boot, rank, group->size};
    struct accel_comm_bootstrap bootstrap = {&boot, boot_broadcast,
                                             boot_allgather};
    struct accel_comm_init init = {
        .struct_size = sizeof init,
        .rank = rank,
        .size = group->size,
        .local_rank = rank,
        .local_size = group->size,
        .device = {.struct_size = sizeof init.device,
                   .kind = ACCEL_NATIVE_CPU,
                   .device_ordinal = rank},
        .id = group->id,
        .id_bytes = group->id_bytes,
        .bootstrap = &bootstrap,
        .timeout_ns = 20000000000ull,
    };
    return table->comm_create(provider, &init, out_comm);
}

static void *rank_main(void *arg)
{
    struct rank_thread *self = arg;
    struct group *group = self->group;
    if (group->comms[self->rank] == NULL) {
        group->status[self->rank] = create_rank(group, self->rank,
                                                &group->comms[self->rank]);
        snprintf(group->errors[self->rank], sizeof group->errors[0], "%s",
                 last_error);
        if (group->status[self->rank] != ACCEL_OK)
            return NULL;
    }
    group->fn(group, self->rank);
    return NULL;
}

/* Run fn on every rank, each in its own thread, and join them. */
void run_ranks(struct group *group, rank_fn fn, void *arg)
{
    struct rank_thread threads[MAX_RANKS];
    group->fn = fn;
    group->arg = arg;
    for (int r = 0; r < group->size; r++) {
        threads[r] = (struct rank_thread){group, r, 0};
        assert_int_equal(
            pthread_create(&threads[r].thread, NULL, rank_main, &threads[r]), 0);
    }
    for (int r = 0; r < group->size; r++)
        pthread_join(threads[r].thread, NULL);
}

static void no_op(struct group *group, int rank)
{
    (void)group;
    (void)rank;
}

struct group *group_new(int size)
{
    struct group *group = calloc(1, sizeof *group);
    assert_non_null(group);
    group->size = size;
    group->boot = boot_new(size, false);
    assert_int_equal(table->unique_id(provider, group->id, sizeof group->id,
                                      &group->id_bytes),
                     ACCEL_OK);
    run_ranks(group, no_op, NULL);
    for (int r = 0; r < size; r++) {
        if (group->status[r] != ACCEL_OK)
            fail_msg("rank %d: comm_create: %d: %s", r, group->status[r],
                     group->errors[r]);
    }
    return group;
}

void group_free(struct group *group)
{
    for (int r = 0; r < group->size; r++)
        table->comm_destroy(group->comms[r]);
    boot_free(group->boot);
    free(group);
}

void rank_failed(struct group *group, int rank, accel_status status,
                 const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    group->status[rank] = status;
    vsnprintf(group->errors[rank], sizeof group->errors[0], fmt, args);
    va_end(args);
}

/* Lay out this rank's buffers as the case asks; *out_base is what to free,
 * and the result is read from *out_recv. */

void expect_all_ok(struct group *group)
{
    for (int r = 0; r < group->size; r++)
        if (group->status[r] != ACCEL_OK)
            fail_msg("rank %d of %d: status %d: %s", r, group->size,
                     group->status[r], group->errors[r]);
}

int comm_host_setup(void **state)
{
    (void)state;
    under_valgrind = getenv("ACCEL_TEST_UNDER_VALGRIND") != NULL;
    library = dlopen(COMM_HOST_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", COMM_HOST_PLUGIN_PATH, dlerror());
        return -1;
    }
    table = dlsym(library, ACCEL_COMM_SYMBOL);
    if (table == NULL)
        return -1;
    return table->plugin_open(&services, &provider) == ACCEL_OK ? 0 : -1;
}

int comm_host_teardown(void **state)
{
    (void)state;
    table->plugin_close(provider);
    dlclose(library);
    return 0;
}
