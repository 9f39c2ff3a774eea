/*
 * HeCBench's convolution3D (src/convolution3D-cuda/main.cu; BSD-3-Clause,
 * Zheming Jin; from Kirk and Hwu's textbook, chapter 16): a direct
 * convolution layer (N x C x Hin x Win inputs, M filters of C x K x K)
 * computed by three kernels that differ only in how a 3D grid of 16x16
 * blocks covers (n, m, output tile): a step launches the float instances
 * of conv3d_s1, conv3d_s2 and conv3d_s3 once each, as one repetition of
 * main's three timed loops. The size is the largest of its Makefile's run
 * lines (C=96, M=256, 26 x 26, K=5) with the batch cut from 32 to 1, so
 * that a step stays near a second on two CPU threads. Every output is
 * written by every kernel and none is read, so nothing is reset; the
 * values are sums of products of small integers, exact in float in any
 * order, so the check is exact.
 */
#include <stdlib.h>

#include "../hecbench.h"

#define TILE_WIDTH 16
#define N 1
#define C 96
#define M 256
#define HIN 26
#define WIN 26
#define K 5
#define HOUT (HIN - K + 1)
#define WOUT (WIN - K + 1)

extern const char hb_convolution3D_cl[];
void hb_convolution3D_openmp(void *const buffers[]);
void hb_convolution3D_reference(void *const buffers[]);

/* conv3D's inputs: srand(123), the filters, then the inputs; Y at -1. */
static void init(void *const buffers[])
{
    float *X = buffers[0], *W = buffers[1], *Y = buffers[2];
    size_t X_size = N * C * HIN * WIN;
    size_t W_size = M * C * K * K;
    size_t Y_size = N * M * HOUT * WOUT;

    srand(123);

    for (size_t i = 0; i < W_size; i++)
        W[i] = rand() % 31;
    for (size_t i = 0; i < X_size; i++)
        X[i] = rand() % 13;

    for (size_t i = 0; i < Y_size; i++)
        Y[i] = -1;
}

static bool conv(const struct hb_launcher *l, const char *kernel, uint32_t gx,
                 uint32_t gy, uint32_t gz)
{
    int W_grid = (WOUT + TILE_WIDTH - 1) / TILE_WIDTH;

    return hb_launch(
        l, &(struct hb_launch){kernel,
                               {gx, gy, gz},
                               {TILE_WIDTH, TILE_WIDTH, 1},
                               0,
                               11,
                               {HB_BUF(0), HB_BUF(1), HB_BUF(2), HB_I32(C),
                                HB_I32(M), HB_I32(K), HB_I32(HIN), HB_I32(WIN),
                                HB_I32(HOUT), HB_I32(WOUT), HB_I32(W_grid)}});
}

static bool step(const struct hb_launcher *l)
{
    int W_grid = (WOUT + TILE_WIDTH - 1) / TILE_WIDTH;
    int H_grid = (HOUT + TILE_WIDTH - 1) / TILE_WIDTH;
    int Z = H_grid * W_grid;

    /* main's grids_s1 (N, M, Z), grids_s2 (M, Z, N), grids_s3 (Z, N, M). */
    return conv(l, "conv3d_s1_f32", N, M, Z) &&
           conv(l, "conv3d_s2_f32", M, Z, N) &&
           conv(l, "conv3d_s3_f32", Z, N, M);
}

const struct hb_program hb_convolution3D = {
    .name = "convolution3D",
    .origin = "src/convolution3D-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "direct convolution, three 3D grids of 16x16 blocks, "
              "C++ templates (float instances), global memory only",
    .size = "N=1 C=96 M=256 26 x 26, K=5",
    .opencl = hb_convolution3D_cl,
    .buffer_count = 3,
    .buffers = {{"dX", HB_F32, N *C *HIN *WIN * 4, false, false},
                {"dW", HB_F32, M *C *K *K * 4, false, false},
                {"dY", HB_F32, N *M *HOUT *WOUT * 4, false, true}},
    .init = init,
    .step = step,
    .openmp = hb_convolution3D_openmp,
    .reference = hb_convolution3D_reference,
    .tolerance = 0,
};
