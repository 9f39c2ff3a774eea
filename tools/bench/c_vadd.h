/*
 * The plain C loops of the vadd baseline: the same loop, compiled twice,
 * each in a file of its own. bench_vadd_scalar is built at -O2, where gcc
 * 12 leaves a loop of unknown length scalar, as the CPU kernel's thread
 * loop is; bench_vadd_vector at -O3, where gcc vectorises it: the best a
 * C programmer gets without intrinsics. Both with loops aligned to 64
 * bytes, as the kernel images are (include/accel/kernel.h says why).
 */
#ifndef ACCEL_BENCH_C_VADD_H
#define ACCEL_BENCH_C_VADD_H

#include <stddef.h>

typedef void (*bench_vadd_fn)(const float *restrict a, const float *restrict b,
                              float *restrict c, size_t from, size_t to);

/* c[i] = a[i] + b[i] for i in [from, to). */
void bench_vadd_scalar(const float *restrict a, const float *restrict b,
                       float *restrict c, size_t from, size_t to);
void bench_vadd_vector(const float *restrict a, const float *restrict b,
                       float *restrict c, size_t from, size_t to);

#endif /* ACCEL_BENCH_C_VADD_H */
