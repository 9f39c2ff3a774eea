/* What the conformance suites share: patterns, round trips, kernels. */
#ifndef ACCEL_CONFORMANCE_SUITE_H
#define ACCEL_CONFORMANCE_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conformance.h"

/* A byte pattern that differs per seed and per 256-byte stretch. */
void fill_pattern(unsigned char *bytes, size_t count, unsigned seed);
/* `bytes` of `src` to new device memory and back into `dst`, synchronised. */
void round_trip_bytes(struct conformance *c, void *dst, const void *src,
                      size_t bytes);
bool has_kernels(const struct conformance *c);
/* Skip a kernel test, saying why, on a device that runs no kernels. */
void skip_without_kernels(const struct conformance *c);
/* The examples module (kernels/examples.cu) loaded, or the test skipped. */
accel_module *load_examples(struct conformance *c);
/* y = a * x + y on n elements with `saxpy`, checked against C. */
void run_saxpy(struct conformance *c, accel_kernel *saxpy, uint32_t n);
/* Skip unless the plugin's table has the optional entry (slot `slot`). */
void skip_without_entry(const struct conformance *c, unsigned slot,
                        const char *entry, const char *what);

#endif /* ACCEL_CONFORMANCE_SUITE_H */
