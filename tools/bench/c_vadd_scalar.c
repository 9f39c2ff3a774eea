/* bench_vadd_scalar: built at -O2 (tools/bench/meson.build). */
#include "c_vadd.h"

void bench_vadd_scalar(const float *restrict a, const float *restrict b,
                       float *restrict c, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        c[i] = a[i] + b[i];
}
