/*
 * The on-disk kernel cache (kcache.h). Every file operation is relative to
 * the directory descriptor checked at open, so that the directory checked
 * is the directory used, whatever its path names later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "os.h"
#include "status.h"
#include "kcache.h"

#define KCACHE_MAGIC "ACCELKC1"
#define KCACHE_HEADER (8 + 8 + 2 * ACCEL__SHA256_BYTES)
#define KCACHE_SUFFIX ".kc"
#define KCACHE_NAME_LEN (2 * ACCEL__SHA256_BYTES + sizeof KCACHE_SUFFIX - 1)
#define KCACHE_DEFAULT_MAX (256ull << 20)
#define KCACHE_ENTRY_MAX (1ull << 30)
/* A temporary file older than this was left by a writer that died. */
#define KCACHE_STALE_TMP_S 3600

static bool process_elevated(void)
{
    struct accel__ids ids;
    accel__ids_current(&ids);
    return accel__ids_elevated(&ids) || getauxval(AT_SECURE) != 0;
}

/* The directory the variables name, malloc'd; NULL (with *why) if none. */
static char *cache_path(const char **why)
{
    const char *dir = accel__getenv("ACCEL_CACHE_DIR");
    if (dir != NULL && dir[0] != '\0')
        return strdup(dir);
    const char *xdg = accel__getenv("XDG_CACHE_HOME");
    /* The XDG specification ignores a relative XDG_CACHE_HOME. */
    if (xdg != NULL && xdg[0] == '/')
        return accel__strdup_printf("%s/accel", xdg);
    const char *home = accel__getenv("HOME");
    if (home != NULL && home[0] == '/')
        return accel__strdup_printf("%s/.cache/accel", home);
    *why = "none of ACCEL_CACHE_DIR, XDG_CACHE_HOME and HOME is set";
    return NULL;
}

/* mkdir -p, each directory made 0700 (an existing one is left as it is). */
static void make_path(char *path)
{
    for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash != NULL)
            *slash = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            accel__log(ACCEL_LOG_DEBUG, "kernel cache: mkdir %s: %s", path,
                       strerror(errno));
        if (slash == NULL)
            return;
        *slash = '/';
    }
}

/* Why the opened directory may not hold code this process runs, or NULL. */
static const char *dir_refusal(int fd, char *why, size_t why_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "fstat: %s", strerror(errno));
        return why;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, why_size, "owned by uid %u, not by the effective user %u",
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return why;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, why_size, "writable by other users (mode %04o)",
                 (unsigned)(st.st_mode & 07777));
        return why;
    }
    return NULL;
}

static uint64_t max_bytes_from_env(void)
{
    const char *text = accel__getenv("ACCEL_CACHE_MAX_BYTES");
    if (text == NULL || text[0] == '\0')
        return KCACHE_DEFAULT_MAX;
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || text[0] == '-') {
        accel__log(ACCEL_LOG_WARN,
                   "kernel cache: ACCEL_CACHE_MAX_BYTES is not a number; "
                   "the default (%llu) is used",
                   KCACHE_DEFAULT_MAX);
        return KCACHE_DEFAULT_MAX;
    }
    return value;
}

bool accel__kcache_open(bool elevated, struct accel__kcache *out_cache)
{
    out_cache->dir_fd = -1;
    if (elevated || process_elevated()) {
        accel__log(ACCEL_LOG_DEBUG,
                   "kernel cache: off under elevated privileges");
        return false;
    }
    const char *off = accel__getenv("ACCEL_CACHE");
    if (off != NULL && strcmp(off, "0") == 0) {
        accel__log(ACCEL_LOG_DEBUG, "kernel cache: off (ACCEL_CACHE=0)");
        return false;
    }
    const char *why = NULL;
    char *path = cache_path(&why);
    if (path == NULL) {
        accel__log(ACCEL_LOG_WARN, "kernel cache: bypassed: %s",
                   why != NULL ? why : "out of memory");
        return false;
    }
    make_path(path);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char reason[160];
    const char *refusal = NULL;
    if (fd < 0)
        snprintf(reason, sizeof reason, "open: %s", strerror(errno)),
            refusal = reason;
    else
        refusal = dir_refusal(fd, reason, sizeof reason);
    if (refusal != NULL) {
        char shown[512];
        accel__escape(shown, sizeof shown, path);
        accel__log(ACCEL_LOG_WARN, "kernel cache: %s bypassed: %s", shown,
                   refusal);
        if (fd >= 0)
            close(fd);
        free(path);
        return false;
    }
    free(path);
    out_cache->dir_fd = fd;
    out_cache->max_bytes = max_bytes_from_env();
    return true;
}

void accel__kcache_close(struct accel__kcache *cache)
{
    if (cache->dir_fd >= 0)
        close(cache->dir_fd);
    cache->dir_fd = -1;
}

static void entry_name(const unsigned char key[ACCEL__SHA256_BYTES],
                       char out_name[KCACHE_NAME_LEN + 1])
{
    for (int i = 0; i < ACCEL__SHA256_BYTES; i++)
        snprintf(out_name + 2 * i, 3, "%02x", key[i]);
    memcpy(out_name + 2 * ACCEL__SHA256_BYTES, KCACHE_SUFFIX,
           sizeof KCACHE_SUFFIX);
}

static bool read_all(int fd, void *data, size_t size)
{
    unsigned char *at = data;
    while (size > 0) {
        ssize_t got = read(fd, at, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        at += got;
        size -= (size_t)got;
    }
    return true;
}

static bool write_all(int fd, const void *data, size_t size)
{
    const unsigned char *at = data;
    while (size > 0) {
        ssize_t put = write(fd, at, size);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        at += put;
        size -= (size_t)put;
    }
    return true;
}

static uint64_t get_le64(const unsigned char *bytes)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--)
        value = value << 8 | bytes[i];
    return value;
}

/* Why the opened entry fails its checks, or NULL; the image in *out_image. */
static const char *entry_refusal(int fd,
                                 const unsigned char key[ACCEL__SHA256_BYTES],
                                 void **out_image, size_t *out_size)
{
    struct stat st;
    unsigned char header[KCACHE_HEADER];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return "not a regular file";
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return "owned by another user or writable by other users";
    if (st.st_size < KCACHE_HEADER || !read_all(fd, header, sizeof header) ||
        memcmp(header, KCACHE_MAGIC, 8) != 0)
        return "no entry header";
    uint64_t size = get_le64(header + 8);
    if (size == 0 || size > KCACHE_ENTRY_MAX ||
        (uint64_t)st.st_size != KCACHE_HEADER + size)
        return "its size does not match its header";
    if (memcmp(header + 16 + ACCEL__SHA256_BYTES, key, ACCEL__SHA256_BYTES) != 0)
        return "it holds another key";
    void *image = malloc((size_t)size);
    if (image == NULL)
        return "out of memory";
    unsigned char digest[ACCEL__SHA256_BYTES];
    if (!read_all(fd, image, (size_t)size)) {
        free(image);
        return "short read";
    }
    accel__sha256(image, (size_t)size, digest);
    if (memcmp(digest, header + 16, ACCEL__SHA256_BYTES) != 0) {
        free(image);
        return "its image does not match its SHA-256";
    }
    *out_image = image;
    *out_size = (size_t)size;
    return NULL;
}

bool accel__kcache_get(struct accel__kcache *cache,
                       const unsigned char key[ACCEL__SHA256_BYTES],
                       void **out_image, size_t *out_size)
{
    *out_image = NULL;
    *out_size = 0;
    char name[KCACHE_NAME_LEN + 1];
    entry_name(key, name);
    int fd = openat(cache->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    const char *refusal = entry_refusal(fd, key, out_image, out_size);
    if (refusal == NULL) {
        /* The entry's time is its last use: eviction removes the oldest. */
        futimens(fd, NULL);
        close(fd);
        accel__log(ACCEL_LOG_DEBUG, "kernel cache: hit %s", name);
        return true;
    }
    close(fd);
    accel__log(ACCEL_LOG_WARN, "kernel cache: entry %s removed: %s", name,
               refusal);
    unlinkat(cache->dir_fd, name, 0);
    return false;
}

static void put_le64(unsigned char *bytes, uint64_t value)
{
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)(value >> (8 * i));
}

/* A temporary file in the cache directory, its name in out_name. */
static int create_temporary(int dir_fd, char out_name[64])
{
    for (int attempt = 0; attempt < 16; attempt++) {
        uint64_t random = 0;
        if (getrandom(&random, sizeof random, 0) != (ssize_t)sizeof random)
            random = accel__now_ns() ^ ((uint64_t)getpid() << 32) ^
                     (uint64_t)attempt;
        snprintf(out_name, 64, "tmp-%016" PRIx64 ".part", random);
        int fd = openat(dir_fd, out_name,
                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static void evict(struct accel__kcache *cache, const char *keep);

void accel__kcache_put(struct accel__kcache *cache,
                       const unsigned char key[ACCEL__SHA256_BYTES],
                       const void *image, size_t size)
{
    unsigned char header[KCACHE_HEADER];
    memcpy(header, KCACHE_MAGIC, 8);
    put_le64(header + 8, size);
    accel__sha256(image, size, header + 16);
    memcpy(header + 16 + ACCEL__SHA256_BYTES, key, ACCEL__SHA256_BYTES);
    char name[KCACHE_NAME_LEN + 1], temporary[64];
    entry_name(key, name);
    int fd = create_temporary(cache->dir_fd, temporary);
    if (fd < 0) {
        accel__log(ACCEL_LOG_WARN, "kernel cache: no temporary file: %s",
                   strerror(errno));
        return;
    }
    bool written = write_all(fd, header, sizeof header) &&
                   write_all(fd, image, size);
    if (close(fd) != 0)
        written = false;
    if (!written || renameat(cache->dir_fd, temporary, cache->dir_fd, name) != 0) {
        accel__log(ACCEL_LOG_WARN, "kernel cache: entry %s not stored: %s",
                   name, strerror(errno));
        unlinkat(cache->dir_fd, temporary, 0);
        return;
    }
    evict(cache, name);
}

struct kcache_entry {
    char name[KCACHE_NAME_LEN + 1];
    uint64_t bytes;
    struct timespec used;
};

static int by_last_use(const void *a, const void *b)
{
    const struct kcache_entry *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    return (x->used.tv_nsec > y->used.tv_nsec) -
           (x->used.tv_nsec < y->used.tv_nsec);
}

static bool is_entry_name(const char *name)
{
    size_t hex = 2 * ACCEL__SHA256_BYTES;
    if (strlen(name) != KCACHE_NAME_LEN || strcmp(name + hex, KCACHE_SUFFIX) != 0)
        return false;
    return strspn(name, "0123456789abcdef") == hex;
}

/*
 * Every entry of the directory (and the temporary files writers that died
 * left behind, which are removed), malloc'd; the total size in *out_total.
 */
static struct kcache_entry *list_entries(int dir_fd, size_t *out_count,
                                         uint64_t *out_total)
{
    *out_count = 0;
    *out_total = 0;
    int fd = dup(dir_fd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (dir == NULL) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    rewinddir(dir);
    struct kcache_entry *entries = NULL;
    size_t capacity = 0;
    time_t now = time(NULL);
    for (struct dirent *d = readdir(dir); d != NULL; d = readdir(dir)) {
        struct stat st;
        if (fstatat(dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (strncmp(d->d_name, "tmp-", 4) == 0 &&
            now - st.st_mtime > KCACHE_STALE_TMP_S)
            unlinkat(dir_fd, d->d_name, 0);
        if (!is_entry_name(d->d_name) || !S_ISREG(st.st_mode))
            continue;
        if (*out_count == capacity) {
            size_t grown = capacity == 0 ? 64 : 2 * capacity;
            struct kcache_entry *more = realloc(entries, grown * sizeof *more);
            if (more == NULL)
                break;
            entries = more;
            capacity = grown;
        }
        struct kcache_entry *entry = &entries[(*out_count)++];
        memcpy(entry->name, d->d_name, KCACHE_NAME_LEN + 1);
        entry->bytes = (uint64_t)st.st_size;
        entry->used = st.st_mtim;
        *out_total += entry->bytes;
    }
    closedir(dir);
    return entries;
}

/* Remove the entries used least recently until the cache fits its cap. */
static void evict(struct accel__kcache *cache, const char *keep)
{
    size_t count = 0;
    uint64_t total = 0;
    struct kcache_entry *entries = list_entries(cache->dir_fd, &count, &total);
    if (entries == NULL)
        return;
    if (total > cache->max_bytes) {
        qsort(entries, count, sizeof *entries, by_last_use);
        for (size_t i = 0; i < count && total > cache->max_bytes; i++) {
            if (strcmp(entries[i].name, keep) == 0)
                continue;
            if (unlinkat(cache->dir_fd, entries[i].name, 0) == 0) {
                total -= entries[i].bytes;
                accel__log(ACCEL_LOG_DEBUG, "kernel cache: evicted %s",
                           entries[i].name);
            }
        }
    }
    free(entries);
}
