/*
 * The workload cases' plain C loops: the arithmetic of kernels/workloads.cu
 * in the same order, written as a C programmer would. Built once per ISA
 * level (meson.build), each copy's functions named with its level, so that
 * the C baseline runs the best its CPU has, as accel's bundles do.
 */
#include <stdint.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define LOOP(name) CAT(name, BENCH_LOOP_LEVEL)

void LOOP(bench_matvec_rows_)(uint32_t n, const float *a, const float *x,
                              float *y, uint32_t from, uint32_t to);
void LOOP(bench_stencil_rows_)(uint32_t n, const float *in, float *out,
                               uint32_t from, uint32_t to);
void LOOP(bench_conv3d_planes_)(uint32_t n, const float *in, float *out,
                                uint32_t from, uint32_t to);
void LOOP(bench_histogram_range_)(const uint32_t *values, uint32_t *bins,
                                  uint32_t from, uint32_t to);
void LOOP(bench_gemm_rows_)(uint32_t n, const float *a, const float *b,
                            float *c, uint32_t from, uint32_t to);
void LOOP(bench_reduce_segments_)(const float *x, float *out, uint32_t from,
                                  uint32_t to);
void LOOP(bench_scan_segments_)(const float *x, float *out, uint32_t from,
                                uint32_t to);

void LOOP(bench_matvec_rows_)(uint32_t n, const float *a, const float *x,
                              float *y, uint32_t from, uint32_t to)
{
    for (uint32_t row = from; row < to; row++) {
        const float *r = a + (uint64_t)row * n;
        float sum = 0.0f;

        for (uint32_t k = 0; k < n; k++)
            sum += r[k] * x[k];
        y[row] = sum;
    }
}

void LOOP(bench_stencil_rows_)(uint32_t n, const float *restrict in,
                               float *restrict out, uint32_t from, uint32_t to)
{
    for (uint32_t y = from; y < to; y++) {
        const float *c = in + (uint64_t)y * n;
        float *o = out + (uint64_t)y * n;

        if (y == 0 || y == n - 1) {
            for (uint32_t x = 0; x < n; x++)
                o[x] = c[x];
            continue;
        }
        const float *up = c - n, *down = c + n;

        o[0] = c[0];
        for (uint32_t x = 1; x < n - 1; x++)
            o[x] = 0.5f * c[x] + 0.125f * (c[x - 1] + c[x + 1] + up[x] + down[x]);
        o[n - 1] = c[n - 1];
    }
}

void LOOP(bench_conv3d_planes_)(uint32_t n, const float *restrict in,
                                float *restrict out, uint32_t from, uint32_t to)
{
    uint64_t plane = (uint64_t)n * n;

    for (uint32_t z = from; z < to; z++)
        for (uint32_t y = 0; y < n; y++) {
            float *o = out + z * plane + (uint64_t)y * n;

            if (z == 0 || y == 0 || z == n - 1 || y == n - 1) {
                for (uint32_t x = 0; x < n; x++)
                    o[x] = 0.0f;
                continue;
            }
            o[0] = o[n - 1] = 0.0f;
            for (uint32_t x = 1; x < n - 1; x++) {
                const float *c = in + z * plane + (uint64_t)y * n + x;
                float sum = 0.0f;

                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++)
                            sum += (0.03f +
                                    0.001f * (float)((dz + 1) * 9 +
                                                     (dy + 1) * 3 + dx + 1)) *
                                   c[dz * (int64_t)plane + dy * (int64_t)n + dx];
                o[x] = sum;
            }
        }
}

void LOOP(bench_histogram_range_)(const uint32_t *values, uint32_t *bins,
                                  uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        bins[values[i] >> 24]++;
}

/* Row by row, k outer so that the inner loop runs along B's and C's rows. */
void LOOP(bench_gemm_rows_)(uint32_t n, const float *restrict a,
                            const float *restrict b, float *restrict c,
                            uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        float *row = c + (uint64_t)i * n;

        for (uint32_t j = 0; j < n; j++)
            row[j] = 0.0f;
        for (uint32_t k = 0; k < n; k++) {
            float aik = a[(uint64_t)i * n + k];
            const float *bk = b + (uint64_t)k * n;

            for (uint32_t j = 0; j < n; j++)
                row[j] += aik * bk[j];
        }
    }
}

void LOOP(bench_reduce_segments_)(const float *restrict x, float *restrict out,
                                  uint32_t from, uint32_t to)
{
    for (uint32_t s = from; s < to; s++) {
        const float *v = x + (uint64_t)s * 256;
        float sum = 0.0f;

        for (uint32_t i = 0; i < 256; i++)
            sum += v[i];
        out[s] = sum;
    }
}

void LOOP(bench_scan_segments_)(const float *restrict x, float *restrict out,
                                uint32_t from, uint32_t to)
{
    for (uint64_t s = from; s < to; s++) {
        float sum = 0.0f;

        for (uint64_t i = s * 256; i < (s + 1) * 256; i++)
            out[i] = sum += x[i];
    }
}
