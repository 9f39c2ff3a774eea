/*
 * HeCBench's bilateral (src/bilateral-cuda/main.cu; BSD-3-Clause, Zheming
 * Jin; from jstraub/cudaPcl): a bilateral filter of a 370 x 180 image on a
 * 2D grid of 16x16 blocks, a 2D stencil of radius R with an expf a
 * neighbour and mirrored edges, no shared memory. Its Makefile's run line
 * is 2960 x 1440 (variances 0.5 and 0.5, kept); a step there took about
 * 40 s on two CPU threads (most weights are expf of large negative
 * numbers), so each side is cut by 8, 64 times fewer pixels. A step is one
 * repetition of each of main's three timed loops: the instances R = 3, 6
 * and 9 of the templated kernel once each, all writing d_dst, which no
 * launch reads, so nothing is reset; the result is the R = 9 filter's,
 * checked against HeCBench's host reference<9>.
 */
#include <stdlib.h>

#include "../hecbench.h"

#define W 370
#define H 180

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

extern const char hb_bilateral_cl[];
void hb_bilateral_openmp(void *const buffers[]);
void hb_bilateral_reference(void *const buffers[]);

/* main's image: srand(123), then rand() % 256 a pixel. */
static void init(void *const buffers[])
{
    float *h_src = buffers[0];

    srand(123);
    for (int i = 0; i < W * H; i++)
        h_src[i] = rand() % 256;
}

static bool filter(const struct hb_launcher *l, const char *kernel)
{
    const float variance_I = 0.5f, variance_spatial = 0.5f;
    const float a_square = 0.5f / (variance_I * (float)M_PI);

    return hb_launch(
        l, &(struct hb_launch){kernel,
                               {(W + 15) / 16, (H + 15) / 16, 1},
                               {16, 16, 1},
                               0,
                               7,
                               {HB_BUF(0), HB_BUF(1), HB_I32(W), HB_I32(H),
                                HB_F32(a_square), HB_F32(variance_I),
                                HB_F32(variance_spatial)}});
}

static bool step(const struct hb_launcher *l)
{
    return filter(l, "bilateralFilter_3") && filter(l, "bilateralFilter_6") &&
           filter(l, "bilateralFilter_9");
}

const struct hb_program hb_bilateral = {
    .name = "bilateral",
    .origin = "src/bilateral-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "2D stencil (bilateral filter, radius 3, 6, 9), 2D grid of "
              "16x16 blocks, C++ template on an int, expf, global memory",
    .size = "370 x 180",
    .opencl = hb_bilateral_cl,
    .buffer_count = 2,
    .buffers = {{"d_src", HB_F32, W *H * 4, false, false},
                {"d_dst", HB_F32, W *H * 4, false, true}},
    .init = init,
    .step = step,
    .openmp = hb_bilateral_openmp,
    .reference = hb_bilateral_reference,
    .tolerance = 1e-5,
};
