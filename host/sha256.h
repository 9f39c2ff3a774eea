/*
 * SHA-256 (FIPS 180-4), for the kernel cache's keys and its entries'
 * checks: a cache entry is native code the process will run, so its check
 * must not be one that a chance corruption or a crafted file passes.
 */
#ifndef ACCEL_HOST_SHA256_H
#define ACCEL_HOST_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define ACCEL__SHA256_BYTES 32

struct accel__sha256 {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t used; /* bytes in block */
};

void accel__sha256_init(struct accel__sha256 *sha);
void accel__sha256_update(struct accel__sha256 *sha, const void *data,
                          size_t size);
void accel__sha256_final(struct accel__sha256 *sha,
                         unsigned char out_digest[ACCEL__SHA256_BYTES]);
/* The digest of one buffer. */
void accel__sha256(const void *data, size_t size,
                   unsigned char out_digest[ACCEL__SHA256_BYTES]);

#endif /* ACCEL_HOST_SHA256_H */
