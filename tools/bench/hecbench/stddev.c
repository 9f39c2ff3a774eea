/*
 * HeCBench's stddev (src/stddev-cuda/main.cu; Apache-2.0, NVIDIA): the
 * column-wise standard deviation of a D x N matrix, one step being one
 * call of stddev<float, int> as main times it: sopKernel<float, int, 256,
 * 32> (each thread sums the squares of 4 rows of a column, atomicAdd into
 * a shared array of 32 columns between two barriers, then into the
 * result) and sampleKernel<float, int>. stddev's cudaMemset of the result
 * before the atomics is the result buffer's reset. HeCBench runs D =
 * 65536, N = 16384; here D = 1024, N = 256, because the OpenMP version
 * runs each block as a team of 256 host threads, one team after another,
 * and takes milliseconds a team on 2 CPUs (tools/bench/hecbench/stddev-omp.cpp).
 * The reference is HeCBench's stddev_ref (reference.h).
 */
#include <stdlib.h>

#include "../hecbench.h"

#define D 1024
#define N 256
#define TPB 256
#define ROWS_PER_THREAD 4
#define COLS_PER_BLK 32
#define ROWS_PER_BLK ((TPB / COLS_PER_BLK) * ROWS_PER_THREAD)

extern const char hb_stddev_cl[];
void hb_stddev_openmp(void *const buffers[]);
void hb_stddev_reference(void *const buffers[]);

/* HeCBench's input: srand(123), rand() / (float)RAND_MAX, row by row. */
static void init(void *const buffers[])
{
    float *data = buffers[0];

    srand(123);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++)
            data[i * D + j] = rand() / (float)RAND_MAX;
}

static bool step(const struct hb_launcher *l)
{
    /* sample is true: the sample size is N - 1. */
    return hb_launch(l,
                     &(struct hb_launch){
                         "sopKernel_float_int_256_32",
                         {(N + ROWS_PER_BLK - 1) / ROWS_PER_BLK,
                          (D + COLS_PER_BLK - 1) / COLS_PER_BLK, 1},
                         {TPB, 1, 1},
                         0,
                         4,
                         {HB_BUF(1), HB_BUF(0), HB_I32(D), HB_I32(N)}}) &&
           hb_launch(l,
                     &(struct hb_launch){"sampleKernel_float_int",
                                         {(D + TPB - 1) / TPB, 1, 1},
                                         {TPB, 1, 1},
                                         0,
                                         3,
                                         {HB_BUF(1), HB_I32(D), HB_I32(N - 1)}});
}

const struct hb_program hb_stddev = {
    .name = "stddev",
    .origin = "src/stddev-cuda/main.cu",
    .license = "Apache-2.0",
    .covers = "templated shared-memory reduction, shared and global atomics",
    .size = "D 1024 x N 256",
    .opencl = hb_stddev_cl,
    .buffer_count = 2,
    .buffers = {{"d_data", HB_F32, (uint64_t)D *N * 4, false, false},
                {"d_std", HB_F32, D * 4, true, true}},
    .init = init,
    .step = step,
    .openmp = hb_stddev_openmp,
    .reference = hb_stddev_reference,
    .tolerance = 1e-4,
};
