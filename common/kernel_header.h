/*
 * <accel/kernel.h>, built into the plugins that compile kernel source at
 * run time: the header the source was written for is the one this build
 * ships, whatever is installed (or not) on the machine.
 */
#ifndef ACCEL_COMMON_KERNEL_HEADER_H
#define ACCEL_COMMON_KERNEL_HEADER_H

#include <stddef.h>

/* The header's bytes, NUL-terminated; accel__kernel_header_size of them. */
extern const char accel__kernel_header[];
extern const size_t accel__kernel_header_size;
/* Its SHA-256 in hex, for compiler identities (a new header, a new key). */
extern const char accel__kernel_header_sha256[];

#endif /* ACCEL_COMMON_KERNEL_HEADER_H */
