/*
 * HeCBench's rtm8 (src/rtm8-cuda/rtm8.cu; BSD-3-Clause, Zheming Jin; from
 * rtm8 of AMD's HIP-Examples): an 8th-order stencil of reverse-time
 * migration on a 680 x 134 x 112 grid (rtm8.cu's #defines are 680 x 134
 * x 450, whose seven fields take 1.15 GB a copy: the suite holds five
 * copies, a ThreadSanitizer build four times that, more than a 24 GiB
 * test machine has; a quarter of the planes), a 3D grid of
 * 16x16x1 blocks (groupSize 16, one plane of z a block), one rtm8 launch a
 * step as one repetition of main's loop, no shared memory. The launch
 * passes next_s_d where the kernel has current_r and current_r_d where it
 * has next_s (so main's arrays, not the kernel's names, are the buffers
 * here), and a step reads and writes current_r_d and next_r_d, which are
 * therefore reset; image_d is written (inside the 4-point border) and not
 * read. The inputs are main's: constant fields and its five coefficients.
 */
#include <stddef.h>

#include "../hecbench.h"

#define nx 680
#define ny 134
#define nz 112
#define ARRAY_SIZE ((size_t)nx * ny * nz)

extern const char hb_rtm8_cl[];
void hb_rtm8_openmp(void *const buffers[]);
/* main's call of its host reference (rtm8-omp.cpp, which has its OpenMP pragma). */
void hb_rtm8_reference(void *const buffers[]);

static inline int indexTo1D(int x, int y, int z)
{
    return x + y * nx + z * nx * ny;
}

/* main's initialisation of the coefficients and the fields. */
static void init(void *const buffers[])
{
    float *vsq = buffers[0], *next_s = buffers[1], *current_s = buffers[2],
          *next_r = buffers[3], *current_r = buffers[4], *image = buffers[5],
          *a = buffers[6];

    a[0] = -1. / 560.;
    a[1] = 8. / 315;
    a[2] = -0.2;
    a[3] = 1.6;
    a[4] = -1435. / 504.;

    for (int z = 0; z < nz; z++) {
        for (int y = 0; y < ny; y++) {
            for (int x = 0; x < nx; x++) {
                vsq[indexTo1D(x, y, z)] = 1.0;
                next_s[indexTo1D(x, y, z)] = 0;
                current_s[indexTo1D(x, y, z)] = 1.0;
                next_r[indexTo1D(x, y, z)] = 0;
                current_r[indexTo1D(x, y, z)] = 1.0;
                image[indexTo1D(x, y, z)] = 0.5;
            }
        }
    }
}

static bool step(const struct hb_launcher *l)
{
    const int groupSize = 16;
    const int nx_pad = (nx + groupSize - 1) / groupSize;
    const int ny_pad = (ny + groupSize - 1) / groupSize;
    const int nz_pad = nz;

    /* rtm8(vsq_d, current_s_d, next_s_d, current_r_d, next_r_d, image_d,
     * a_d, ArraySize), as main launches it. */
    return hb_launch(l, &(struct hb_launch){"rtm8",
                                            {nx_pad, ny_pad, nz_pad},
                                            {groupSize, groupSize, 1},
                                            0,
                                            8,
                                            {HB_BUF(0), HB_BUF(2), HB_BUF(1),
                                             HB_BUF(4), HB_BUF(3), HB_BUF(5),
                                             HB_BUF(6), HB_I64(ARRAY_SIZE)}});
}

const struct hb_program hb_rtm8 = {
    .name = "rtm8",
    .origin = "src/rtm8-cuda/rtm8.cu",
    .license = "BSD-3-Clause",
    .covers = "8th-order 3D stencil (two fields), 3D grid of 16x16x1 "
              "blocks, global memory only",
    .size = "680 x 134 x 112",
    .opencl = hb_rtm8_cl,
    .buffer_count = 7,
    .buffers = {{"vsq_d", HB_F32, ARRAY_SIZE * 4, false, false},
                {"next_s_d", HB_F32, ARRAY_SIZE * 4, false, false},
                {"current_s_d", HB_F32, ARRAY_SIZE * 4, false, false},
                {"next_r_d", HB_F32, ARRAY_SIZE * 4, true, true},
                {"current_r_d", HB_F32, ARRAY_SIZE * 4, true, true},
                {"image_d", HB_F32, ARRAY_SIZE * 4, false, true},
                {"a_d", HB_F32, 5 * 4, false, false}},
    .init = init,
    .step = step,
    .openmp = hb_rtm8_openmp,
    .reference = hb_rtm8_reference,
    .tolerance = 1e-5,
};
