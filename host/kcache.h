/*
 * The on-disk kernel cache: images compiled from source, kept under
 * $ACCEL_CACHE_DIR, else $XDG_CACHE_HOME/accel, else ~/.cache/accel, one
 * file per key. An entry is native code (or GPU code) the process will
 * run, so the cache gets the care plugin directories get: the directory
 * must be owned by the effective user and writable by nobody else (else
 * the cache is bypassed, with the reason logged), every entry is written
 * to a temporary file and renamed into place, and checked (owner, mode,
 * size, SHA-256 of the image, its key) before use. Under elevated
 * privileges, or with ACCEL_CACHE=0, nothing is read or written.
 * ACCEL_CACHE_MAX_BYTES caps its size (default 256 MiB): the entries used
 * least recently are removed first.
 */
#ifndef ACCEL_HOST_KCACHE_H
#define ACCEL_HOST_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

struct accel__kcache {
    int dir_fd; /* the checked directory, held open */
    uint64_t max_bytes;
};

/*
 * Open the cache directory (made, 0700, when missing) and check it; never
 * when `elevated` (the host's view of the process) or the process itself
 * runs with elevated privileges. False
 * when the cache is off or bypassed; the reason is logged (a warning for
 * a directory that fails a check, debug for a cache turned off).
 */
bool accel__kcache_open(bool elevated, struct accel__kcache *out_cache);
void accel__kcache_close(struct accel__kcache *cache);

/*
 * The image stored under `key`, malloc'd, when an entry exists and passes
 * every check. A damaged entry is removed (and logged) and is a miss.
 */
bool accel__kcache_get(struct accel__kcache *cache,
                       const unsigned char key[ACCEL__SHA256_BYTES],
                       void **out_image, size_t *out_size);
/*
 * Store `image` under `key`: a temporary file renamed into place, so that
 * a reader sees the whole entry or none, and two writers of one key leave
 * one entry. Then entries past the size cap are evicted. A failure only
 * logs: the cache is an optimisation.
 */
void accel__kcache_put(struct accel__kcache *cache,
                       const unsigned char key[ACCEL__SHA256_BYTES],
                       const void *image, size_t size);

#endif /* ACCEL_HOST_KCACHE_H */
