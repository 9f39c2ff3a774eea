/*
 * What the host provider's tests share: the provider's table (dlopen'd
 * from the build), host services that keep each thread's last error, a
 * bootstrap between threads or processes, and groups of ranks run as
 * threads.
 */
#ifndef ACCEL_TEST_COMM_HOST_HARNESS_H
#define ACCEL_TEST_COMM_HOST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/comm.h>

extern const struct accel_comm_v1 *table;
extern accel_comm_provider *provider;
extern bool under_valgrind; /* ACCEL_TEST_UNDER_VALGRIND: cut sizes */
/* The detail of the last error the provider set on this thread. */
extern _Thread_local char last_error[512];

/* cmocka group setup and teardown: open and close the provider. */
int comm_host_setup(void **state);
int comm_host_teardown(void **state);

/* A deadline `seconds` from now, so that a broken operation fails the test
 * instead of hanging it (and, across processes, leaving ranks behind). */
uint64_t deadline_in(unsigned seconds);

/* A bootstrap over a barrier in shared memory (between processes when
 * `processes`, for fork). */
struct boot_shared;
struct boot_shared *boot_new(int size, bool processes);
void boot_free(struct boot_shared *boot);

#define MAX_RANKS 8

struct group;
typedef void (*rank_fn)(struct group *group, int rank);

struct group {
    int size;
    accel_comm_handle *comms[MAX_RANKS];
    uint8_t id[ACCEL_COMM_UNIQUE_ID_MAX];
    size_t id_bytes;
    struct boot_shared *boot;
    rank_fn fn;
    void *arg;
    accel_status status[MAX_RANKS];
    char errors[MAX_RANKS][512];
};

/* This rank's communicator over the group's id and bootstrap. */
accel_status create_rank(struct group *group, int rank,
                         accel_comm_handle **out_comm);
/* Run fn on every rank, each in its own thread, and join them. */
void run_ranks(struct group *group, rank_fn fn, void *arg);
/* A group of `size` ranks with their communicators made. */
struct group *group_new(int size);
void group_free(struct group *group);
/* Record a rank's failure (threads do not assert: cmocka is not
 * thread-safe); expect_all_ok asserts on the main thread. */
void rank_failed(struct group *group, int rank, accel_status status,
                 const char *fmt, ...);
void expect_all_ok(struct group *group);

#endif /* ACCEL_TEST_COMM_HOST_HARNESS_H */
