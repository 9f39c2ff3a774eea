/*
 * The host (host.c): what accel_host_create makes, and the process that
 * owns it.
 */
#ifndef ACCEL_HOST_HOST_H
#define ACCEL_HOST_HOST_H

#include <pthread.h>
#include <sys/types.h>

#include "accel/accel.h"
#include "accel/driver.h"
#include "loader.h"
#include "os.h"
#include "select.h"
#include "status.h"

/*
 * accel_host_create as a process with `ids` would run it: the environment
 * is read, and plugin files are checked, for those ids. accel_host_create
 * passes the process's own; tests pass others.
 */
accel_status accel__host_create_as(const accel_host_options *options,
                                   const struct accel__ids *ids,
                                   accel_host **out_host);

/*
 * The calling process's id: set at the first host's creation and again in
 * the child of every fork() (a pthread_atfork handler). A host and its
 * devices keep the id of the process that made them; a call from another
 * process (a fork's child) is refused, since the threads the objects rely
 * on (plugin stream workers, the callback thread) exist only in the parent.
 */
extern pid_t accel__pid;
/* ACCEL_ERR_NOT_SUPPORTED with its detail, for `what` called after fork. */
accel_status accel__forked(const char *what);

/* ACCEL_OK when `owner` is this process: one load and a compare. */
static inline accel_status accel__process_check(pid_t owner, const char *what)
{
    if (__builtin_expect(owner == accel__pid, 1))
        return ACCEL_OK;
    return accel__forked(what);
}

struct accel_host {
    pid_t pid; /* the process that made it */
    /* The ids the environment is read for: also at selection, where
     * "%local" reads the launcher's variables. */
    struct accel__ids ids;
    struct accel__catalog catalog;
    struct accel__backend_item items[ACCEL__BACKEND_ITEMS_MAX];
    size_t item_count;
    accel_status parse_status; /* of the selection text */
    char *parse_error;

    pthread_mutex_t lock;         /* guards `devices` */
    struct accel_device *devices; /* open devices, a list */
    /* Communication providers, loaded at the first communicator (comm.h);
     * host lock. */
    struct accel__comm_catalog *comm;
    /* What this host's plugins receive: the shared services, with this
     * host's minor and its privilege and opt-in. */
    struct accel__host_services services;
};

#endif /* ACCEL_HOST_HOST_H */
