/*
 * The rendezvous between processes without MPI: ACCEL_COMM_RENDEZVOUS.
 *
 *  - file:/dir  Each exchange, each rank writes its share to
 *    dir/accel-rdv-N-R (written to a temporary name, 0600, then renamed:
 *    readers see whole files only) and reads every rank's. The directory
 *    must be the user's and writable by nobody else. At close, after a last
 *    exchange that tells every rank is done reading, each rank removes its
 *    files; the directory is meant for one job at a time.
 *  - tcp:host:port  Rank 0 listens; the others connect (retrying until the
 *    deadline) and say their rank. Each exchange, every rank sends its
 *    share to rank 0, which sends every share back to every rank. Messages
 *    are length-prefixed; every wait has the deadline of
 *    ACCEL_COMM_TIMEOUT_MS.
 *
 * Both calls of struct accel_comm_bootstrap are one allgather here (a
 * broadcast keeps the root's share): a unique id is a few hundred bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "os.h"
#include "status.h"

#define EXCHANGE_MAX (1u << 20) /* bytes of one rank's share */

struct accel__rendezvous {
    struct accel__rank rank;
    uint64_t timeout_ns;
    uint64_t sequence; /* exchanges so far */
    bool ready;        /* opened: the close exchange is owed */
    /* file: */
    int dir_fd;
    char *dir;
    /* tcp: rank 0's connections, by rank (0 unused); the others' one. */
    int *peers;
    int server;
};

static uint64_t deadline_of(const struct accel__rendezvous *rdv)
{
    return rdv->timeout_ns ? accel__now_ns() + rdv->timeout_ns : 0;
}

/* Milliseconds to the deadline for poll(); -1 without one; 0 when past. */
static int ms_left(uint64_t deadline)
{
    if (deadline == 0)
        return -1;
    uint64_t now = accel__now_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999u) / 1000000u;
    return ms > 60000 ? 60000 : (int)ms;
}

static void nap(void)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
    nanosleep(&pause, NULL);
}

/* ---- file ---- */

static accel_status file_write(struct accel__rendezvous *rdv, const char *name,
                               const void *data, size_t bytes)
{
    char temp[96];
    snprintf(temp, sizeof temp, ".%s.%ld.tmp", name, (long)getpid());
    int fd = openat(rdv->dir_fd, temp,
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return accel__error(ACCEL_ERR_DRIVER, "rendezvous %s/%s: %s", rdv->dir,
                            temp, strerror(errno));
    ssize_t written = write(fd, data, bytes);
    int closed = close(fd);
    if (written != (ssize_t)bytes || closed != 0 ||
        renameat(rdv->dir_fd, temp, rdv->dir_fd, name) != 0) {
        int error = errno;
        unlinkat(rdv->dir_fd, temp, 0);
        return accel__error(ACCEL_ERR_DRIVER, "rendezvous %s/%s: %s", rdv->dir,
                            name, strerror(error));
    }
    return ACCEL_OK;
}

/* Read `bytes` of file `name` once it exists; ACCEL_NOT_READY until then. */
static accel_status file_read(struct accel__rendezvous *rdv, const char *name,
                              void *out, size_t bytes)
{
    int fd = openat(rdv->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT
                   ? ACCEL_NOT_READY
                   : accel__error(ACCEL_ERR_DRIVER, "rendezvous %s/%s: %s",
                                  rdv->dir, name, strerror(errno));
    struct stat st;
    ssize_t got = fstat(fd, &st) == 0 && (size_t)st.st_size == bytes
                      ? read(fd, out, bytes)
                      : -1;
    close(fd);
    if (got != (ssize_t)bytes)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "rendezvous %s/%s: not the %zu bytes expected (the "
                            "ranks disagree, or the directory holds another "
                            "job's files)",
                            rdv->dir, name, bytes);
    return ACCEL_OK;
}

static accel_status file_exchange(struct accel__rendezvous *rdv,
                                  const void *send, void *out, size_t bytes)
{
    uint64_t sequence = rdv->sequence++;
    char name[64];
    snprintf(name, sizeof name, "accel-rdv-%llu-%d",
             (unsigned long long)sequence, rdv->rank.rank);
    accel_status status = file_write(rdv, name, send, bytes);
    uint64_t deadline = deadline_of(rdv);
    for (int r = 0; status == ACCEL_OK && r < rdv->rank.size; r++) {
        snprintf(name, sizeof name, "accel-rdv-%llu-%d",
                 (unsigned long long)sequence, r);
        while ((status = file_read(rdv, name, (uint8_t *)out + (size_t)r * bytes,
                                   bytes)) == ACCEL_NOT_READY) {
            if (ms_left(deadline) == 0)
                return accel__error(ACCEL_ERR_TIMEOUT,
                                    "rendezvous: rank %d did not write %s/%s "
                                    "within ACCEL_COMM_TIMEOUT_MS",
                                    r, rdv->dir, name);
            nap();
        }
    }
    return status;
}

static accel_status file_open(struct accel__rendezvous *rdv, const char *dir)
{
    rdv->dir = strdup(dir);
    rdv->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (rdv->dir == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rendezvous");
    if (rdv->dir_fd < 0 || fstat(rdv->dir_fd, &st) != 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS: cannot open %s: %s", dir,
                            strerror(errno));
    if (st.st_uid != geteuid() || (st.st_mode & 022) != 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS: %s must be owned by this "
                            "user and writable by no other (it is uid %u, "
                            "mode %03o)",
                            dir, (unsigned)st.st_uid,
                            (unsigned)(st.st_mode & 0777));
    return ACCEL_OK;
}

static void file_close(struct accel__rendezvous *rdv)
{
    if (!rdv->ready)
        return;
    /* Past this exchange every rank has read every earlier one. */
    uint8_t one = 1;
    uint8_t *all = malloc((size_t)rdv->rank.size);
    bool done = all != NULL && file_exchange(rdv, &one, all, 1) == ACCEL_OK;
    free(all);
    char name[64];
    for (uint64_t s = 0; done && s + 1 < rdv->sequence; s++) {
        snprintf(name, sizeof name, "accel-rdv-%llu-%d", (unsigned long long)s,
                 rdv->rank.rank);
        unlinkat(rdv->dir_fd, name, 0);
    }
}

/* ---- tcp ---- */

static accel_status io_all(int fd, void *data, size_t bytes, bool sending,
                           uint64_t deadline)
{
    uint8_t *p = data;
    while (bytes > 0) {
        struct pollfd pfd = {.fd = fd, .events = sending ? POLLOUT : POLLIN};
        int ready = poll(&pfd, 1, ms_left(deadline));
        if (ready == 0)
            return accel__error(ACCEL_ERR_TIMEOUT,
                                "rendezvous: no answer within "
                                "ACCEL_COMM_TIMEOUT_MS");
        ssize_t n = ready < 0 ? -1
                    : sending ? send(fd, p, bytes, MSG_NOSIGNAL)
                              : recv(fd, p, bytes, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return accel__error(ACCEL_ERR_DRIVER, "rendezvous: %s",
                                n == 0 ? "the peer closed the connection"
                                       : strerror(errno));
        p += n;
        bytes -= (size_t)n;
    }
    return ACCEL_OK;
}

/* A length-prefixed message. */
static accel_status msg_send(int fd, const void *data, size_t bytes,
                             uint64_t deadline)
{
    uint64_t length = bytes;
    accel_status status = io_all(fd, &length, sizeof length, true, deadline);
    return status == ACCEL_OK ? io_all(fd, (void *)data, bytes, true, deadline)
                              : status;
}

static accel_status msg_recv(int fd, void *data, size_t bytes, uint64_t deadline)
{
    uint64_t length = 0;
    accel_status status = io_all(fd, &length, sizeof length, false, deadline);
    if (status == ACCEL_OK && length != bytes)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "rendezvous: a message of %llu bytes where %zu "
                            "were expected (the ranks disagree)",
                            (unsigned long long)length, bytes);
    return status == ACCEL_OK ? io_all(fd, data, bytes, false, deadline) : status;
}

static accel_status tcp_exchange(struct accel__rendezvous *rdv,
                                 const void *send, void *out, size_t bytes)
{
    uint64_t deadline = deadline_of(rdv);
    int size = rdv->rank.size;
    size_t total = bytes * (size_t)size;
    if (rdv->rank.rank != 0) {
        accel_status status = msg_send(rdv->peers[0], send, bytes, deadline);
        return status == ACCEL_OK ? msg_recv(rdv->peers[0], out, total, deadline)
                                  : status;
    }
    memcpy(out, send, bytes);
    accel_status status = ACCEL_OK;
    for (int r = 1; status == ACCEL_OK && r < size; r++)
        status = msg_recv(rdv->peers[r], (uint8_t *)out + (size_t)r * bytes,
                          bytes, deadline);
    for (int r = 1; status == ACCEL_OK && r < size; r++)
        status = msg_send(rdv->peers[r], out, total, deadline);
    return status;
}

static accel_status tcp_address(const char *spec, struct addrinfo **out)
{
    const char *colon = strrchr(spec, ':');
    if (colon == NULL || colon == spec || colon[1] == '\0')
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS=tcp:%s is not tcp:host:port",
                            spec);
    char host[256];
    if ((size_t)(colon - spec) >= sizeof host)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "ACCEL_COMM_RENDEZVOUS: the host of tcp:%.64s... is "
            "longer than %zu characters",
            spec, sizeof host - 1);
    snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
    /* getaddrinfo keeps the low 16 bits of a numeric service (99999 would
     * be 34463) and takes 0 for "any port": rank 0 would listen where the
     * others do not look. */
    const char *p = colon + 1;
    unsigned long port = 0;
    while (*p >= '0' && *p <= '9' && port <= 65535)
        port = port * 10 + (unsigned long)(*p++ - '0');
    if (*p != '\0' || port == 0 || port > 65535)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS=tcp:%s: the port must be a "
                            "number from 1 to 65535",
                            spec);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, colon + 1, &hints, out);
    if (rc != 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS=tcp:%s: %s", spec,
                            gai_strerror(rc));
    return ACCEL_OK;
}

/* Rank 0: listen, then take one connection from each other rank. */
static accel_status tcp_serve(struct accel__rendezvous *rdv,
                              const struct addrinfo *ai, uint64_t deadline)
{
    int one = 1;
    rdv->server = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rdv->server < 0 ||
        setsockopt(rdv->server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(rdv->server, ai->ai_addr, ai->ai_addrlen) != 0 ||
        listen(rdv->server, rdv->rank.size) != 0)
        return accel__error(ACCEL_ERR_DRIVER, "rendezvous: cannot listen: %s",
                            strerror(errno));
    for (int joined = 1; joined < rdv->rank.size;) {
        struct pollfd pfd = {.fd = rdv->server, .events = POLLIN};
        if (poll(&pfd, 1, ms_left(deadline)) == 0)
            return accel__error(ACCEL_ERR_TIMEOUT,
                                "rendezvous: %d of %d ranks connected within "
                                "ACCEL_COMM_TIMEOUT_MS",
                                joined, rdv->rank.size);
        int fd = accept4(rdv->server, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int32_t rank = -1;
        if (msg_recv(fd, &rank, sizeof rank, deadline) != ACCEL_OK ||
            rank <= 0 || rank >= rdv->rank.size || rdv->peers[rank] >= 0) {
            close(fd); /* not one of ours: the job goes on without it */
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        rdv->peers[rank] = fd;
        joined++;
    }
    return ACCEL_OK;
}

/* Other ranks: connect to rank 0, retrying while it starts. */
static accel_status tcp_join(struct accel__rendezvous *rdv,
                             const struct addrinfo *ai, uint64_t deadline)
{
    for (;;) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            rdv->peers[0] = fd;
            int32_t rank = rdv->rank.rank;
            return msg_send(fd, &rank, sizeof rank, deadline);
        }
        if (fd >= 0)
            close(fd);
        if (ms_left(deadline) == 0)
            return accel__error(ACCEL_ERR_TIMEOUT,
                                "rendezvous: rank 0 did not listen within "
                                "ACCEL_COMM_TIMEOUT_MS");
        for (int i = 0; i < 20; i++)
            nap();
    }
}

static accel_status tcp_open(struct accel__rendezvous *rdv, const char *spec)
{
    rdv->peers = malloc((size_t)rdv->rank.size * sizeof *rdv->peers);
    if (rdv->peers == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rendezvous");
    for (int r = 0; r < rdv->rank.size; r++)
        rdv->peers[r] = -1;
    struct addrinfo *ai = NULL;
    accel_status status = tcp_address(spec, &ai);
    if (status != ACCEL_OK)
        return status;
    uint64_t deadline = deadline_of(rdv);
    status = rdv->rank.rank == 0 ? tcp_serve(rdv, ai, deadline)
                                 : tcp_join(rdv, ai, deadline);
    freeaddrinfo(ai);
    return status;
}

/* ---- the bootstrap ---- */

static accel_status rdv_exchange(struct accel__rendezvous *rdv,
                                 const void *send, void *out, size_t bytes)
{
    if (bytes > EXCHANGE_MAX)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "rendezvous: %zu bytes, more than %u", bytes,
                            EXCHANGE_MAX);
    return rdv->dir != NULL ? file_exchange(rdv, send, out, bytes)
                            : tcp_exchange(rdv, send, out, bytes);
}

static accel_status rdv_allgather(void *ctx, const void *send, void *out,
                                  size_t bytes)
{
    return rdv_exchange(ctx, send, out, bytes);
}

static accel_status rdv_broadcast(void *ctx, void *data, size_t bytes, int root)
{
    struct accel__rendezvous *rdv = ctx;
    if (root < 0 || root >= rdv->rank.size)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "rendezvous: root %d out of range", root);
    uint8_t *all = malloc(bytes * (size_t)rdv->rank.size + 1);
    /* The other ranks send zeros, not what their buffer held. */
    uint8_t *zeros = calloc(bytes + 1, 1);
    if (all == NULL || zeros == NULL) {
        free(all);
        free(zeros);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rendezvous");
    }
    accel_status status = rdv_exchange(
        rdv, rdv->rank.rank == root ? (const void *)data : zeros, all, bytes);
    free(zeros);
    if (status == ACCEL_OK)
        memcpy(data, all + (size_t)root * bytes, bytes);
    free(all);
    return status;
}

accel_status accel__rendezvous_open(const struct accel__rank *rank,
                                    uint64_t timeout_ns,
                                    struct accel__rendezvous **out_rdv,
                                    struct accel_comm_bootstrap *out)
{
    *out_rdv = NULL;
    const char *spec = accel__getenv("ACCEL_COMM_RENDEZVOUS");
    if (spec == NULL || *spec == '\0')
        return ACCEL_ERR_NOT_FOUND;
    bool file = strncmp(spec, "file:", 5) == 0;
    if (!file && strncmp(spec, "tcp:", 4) != 0)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "ACCEL_COMM_RENDEZVOUS='%s' is not file:/dir or "
                            "tcp:host:port",
                            spec);
    struct accel__rendezvous *rdv = calloc(1, sizeof *rdv);
    if (rdv == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "rendezvous");
    rdv->rank = *rank;
    rdv->timeout_ns = timeout_ns;
    rdv->dir_fd = -1;
    rdv->server = -1;
    accel_status status = file ? file_open(rdv, spec + 5)
                               : tcp_open(rdv, spec + 4);
    if (status != ACCEL_OK) {
        accel__rendezvous_close(rdv);
        return status;
    }
    rdv->ready = true;
    *out_rdv = rdv;
    *out = (struct accel_comm_bootstrap){
        .ctx = rdv,
        .broadcast = rdv_broadcast,
        .allgather = rdv_allgather,
    };
    return ACCEL_OK;
}

void accel__rendezvous_close(struct accel__rendezvous *rdv)
{
    if (rdv == NULL)
        return;
    if (rdv->dir != NULL)
        file_close(rdv);
    if (rdv->dir_fd >= 0)
        close(rdv->dir_fd);
    for (int r = 0; rdv->peers != NULL && r < rdv->rank.size; r++) {
        if (rdv->peers[r] >= 0)
            close(rdv->peers[r]);
    }
    if (rdv->server >= 0)
        close(rdv->server);
    free(rdv->peers);
    free(rdv->dir);
    free(rdv);
}
