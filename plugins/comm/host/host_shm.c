/*
 * POSIX shared memory for the host provider between processes
 * (host_shm.h).
 */
#include "host_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOST_SHM_MAGIC 0x61636f6d6d686f31ull /* "acommho1" */

uint64_t accel__host_chunk_bytes(uint32_t size)
{
    uint64_t chunk = (32u << 20) / (size ? size : 1);
    if (chunk > (4u << 20))
        chunk = 4u << 20;
    if (chunk < (64u << 10))
        chunk = 64u << 10;
    return chunk;
}

static void *map_segment(int fd, size_t bytes)
{
    void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return base == MAP_FAILED ? NULL : base;
}

accel_status accel__host_shm_create(accel_comm_handle *comm, const char *name,
                                    uint32_t size, uint64_t chunk_bytes)
{
    size_t bytes = accel__host_region_bytes(size, chunk_bytes);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return accel__host_error(comm, ACCEL_ERR_DRIVER,
                                 "host provider: shm_open(%s, O_EXCL): %s",
                                 name, strerror(errno));
    int rc = ftruncate(fd, (off_t)bytes);
    if (rc == 0)
        rc = posix_fallocate(fd, 0, (off_t)bytes);
    else
        rc = errno;
    void *base = rc == 0 ? map_segment(fd, bytes) : NULL;
    if (base == NULL && rc == 0)
        rc = errno;
    close(fd);
    if (base == NULL) {
        shm_unlink(name);
        return accel__host_error(comm, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                 "host provider: cannot back %zu bytes of "
                                 "shared memory %s: %s",
                                 bytes, name, strerror(rc));
    }
    struct host_shared *shared = base;
    accel_status status =
        accel__host_shared_init(shared, size, chunk_bytes, true);
    if (status != ACCEL_OK) {
        munmap(base, bytes);
        shm_unlink(name);
        return accel__host_error(comm, status,
                                 "host provider: cannot initialise the "
                                 "process-shared lock of %s",
                                 name);
    }
    /* The others open the segment only after this rank said it is ready
     * (through the bootstrap), but the magic is still written last. */
    __atomic_store_n(&shared->magic, HOST_SHM_MAGIC, __ATOMIC_RELEASE);
    comm->shared = shared;
    comm->shm = true;
    comm->mapped_bytes = bytes;
    return ACCEL_OK;
}

accel_status accel__host_shm_open(accel_comm_handle *comm, const char *name,
                                  uint32_t size)
{
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return accel__host_error(comm, ACCEL_ERR_DRIVER,
                                 "host provider: shm_open(%s): %s", name,
                                 strerror(errno));
    struct stat st;
    size_t expected = accel__host_region_bytes(size, accel__host_chunk_bytes(size));
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
        (st.st_mode & 077) != 0 || (uint64_t)st.st_size != expected) {
        close(fd);
        return accel__host_error(comm, ACCEL_ERR_DRIVER,
                                 "host provider: shared memory %s is not the "
                                 "segment this job made (owner, mode or size "
                                 "differ)",
                                 name);
    }
    void *base = map_segment(fd, expected);
    int err = errno;
    close(fd);
    if (base == NULL)
        return accel__host_error(comm, ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                 "host provider: mmap of %s: %s", name,
                                 strerror(err));
    struct host_shared *shared = base;
    if (__atomic_load_n(&shared->magic, __ATOMIC_ACQUIRE) != HOST_SHM_MAGIC ||
        shared->size != size) {
        munmap(base, expected);
        return accel__host_error(comm, ACCEL_ERR_DRIVER,
                                 "host provider: shared memory %s holds no "
                                 "communicator of %u ranks",
                                 name, size);
    }
    comm->shared = shared;
    comm->shm = true;
    comm->mapped_bytes = expected;
    return ACCEL_OK;
}

void accel__host_shm_unlink(const char *name)
{
    shm_unlink(name);
}

void accel__host_shm_close(accel_comm_handle *comm)
{
    if (comm->shared != NULL)
        munmap(comm->shared, comm->mapped_bytes);
    comm->shared = NULL;
}
