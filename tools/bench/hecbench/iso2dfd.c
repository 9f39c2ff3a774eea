/*
 * HeCBench's iso2dfd (src/iso2dfd-cuda/iso2dfd.cu; MIT, Intel): a second
 * order finite-difference step of the 2D acoustic wave equation on a
 * 2048 x 2048 grid (its Makefile's run line), one iso_2dfd_kernel launch
 * a step on 16x16 blocks, no shared memory. HeCBench's loop ping-pongs
 * d_next and d_prev; a step here is its first iteration, which reads
 * d_next (the wavefield two steps back) and writes it, so d_next is reset.
 */
#include <stddef.h>

#include "../hecbench.h"

#define DT 0.002f
#define DXY 20.0f
#define HALF_LENGTH 1
#define BLOCK_SIZE 16
#define NROWS 2048
#define NCOLS 2048

extern const char hb_iso2dfd_cl[];
void hb_iso2dfd_openmp(void *const buffers[]);

/* HeCBench's initialize: a square source wavelet in the middle of prev. */
static void initialize(float *ptr_prev, float *ptr_next, float *ptr_vel,
                       size_t nRows, size_t nCols)
{
    /* Define source wavelet */
    float wavelet[12] = {0.016387336, -0.041464937, -0.067372555, 0.386110067,
                         0.812723635, 0.416998396,  0.076488599,  -0.059434419,
                         0.023680172, 0.005611435,  0.001823209,  -0.000720549};

    /* Initialize arrays */
    for (size_t i = 0; i < nRows; i++) {
        size_t offset = i * nCols;

        for (size_t k = 0; k < nCols; k++) {
            ptr_prev[offset + k] = 0.0f;
            ptr_next[offset + k] = 0.0f;
            /* pre-compute squared value of sample wave velocity v*v (v =
             * 1500 m/s) */
            ptr_vel[offset + k] = 2250000.0f;
        }
    }
    /* Add a source to initial wavefield as an initial condition */
    for (int s = 11; s >= 0; s--) {
        for (size_t i = nRows / 2 - s; i < nRows / 2 + s; i++) {
            size_t offset = i * nCols;
            for (size_t k = nCols / 2 - s; k < nCols / 2 + s; k++) {
                ptr_prev[offset + k] = wavelet[s];
            }
        }
    }
}

static void init(void *const buffers[])
{
    initialize(buffers[1], buffers[0], buffers[2], NROWS, NCOLS);
}

/* HeCBench's host reference, iso_2dfd_iteration_cpu, for one iteration. */
static void iso_2dfd_iteration_cpu(float *next, float *prev, float *vel,
                                   const float dtDIVdxy, size_t nRows,
                                   size_t nCols, int nIterations)
{
    float *swap;
    float value = 0.f;
    for (int k = 0; k < nIterations; k += 1) {
        for (size_t i = 1; i < nRows - HALF_LENGTH; i += 1) {
            for (size_t j = 1; j < nCols - HALF_LENGTH; j += 1) {
                /* Stencil code to update grid */
                size_t gid = j + (i * nCols);
                value = 0.f;
                value += prev[gid + 1] - 2.f * prev[gid] + prev[gid - 1];
                value += prev[gid + nCols] - 2.f * prev[gid] + prev[gid - nCols];
                value *= dtDIVdxy * vel[gid];
                next[gid] = 2.f * prev[gid] - next[gid] + value;
            }
        }

        /* Swap arrays */
        swap = next;
        next = prev;
        prev = swap;
    }
}

static void reference(void *const buffers[])
{
    iso_2dfd_iteration_cpu(buffers[0], buffers[1], buffers[2],
                           (DT * DT) / (DXY * DXY), NROWS, NCOLS, 1);
}

static bool step(const struct hb_launcher *l)
{
    unsigned int grid_cols = (NCOLS + BLOCK_SIZE - 1) / BLOCK_SIZE;
    unsigned int grid_rows = (NROWS + BLOCK_SIZE - 1) / BLOCK_SIZE;

    return hb_launch(l, &(struct hb_launch){"iso_2dfd_kernel",
                                            {grid_cols, grid_rows, 1},
                                            {BLOCK_SIZE, BLOCK_SIZE, 1},
                                            0,
                                            6,
                                            {HB_BUF(0), HB_BUF(1), HB_BUF(2),
                                             HB_F32((DT * DT) / (DXY * DXY)),
                                             HB_I64(NROWS), HB_I64(NCOLS)}});
}

const struct hb_program hb_iso2dfd = {
    .name = "iso2dfd",
    .origin = "src/iso2dfd-cuda/iso2dfd.cu",
    .license = "MIT",
    .covers = "2D finite-difference stencil, 16x16 blocks, global memory only",
    .size = "2048 x 2048",
    .opencl = hb_iso2dfd_cl,
    .buffer_count = 3,
    .buffers = {{"d_next", HB_F32, NROWS *NCOLS * 4, true, true},
                {"d_prev", HB_F32, NROWS *NCOLS * 4, false, false},
                {"d_vel", HB_F32, NROWS *NCOLS * 4, false, false}},
    .init = init,
    .step = step,
    .openmp = hb_iso2dfd_openmp,
    .reference = reference,
    .tolerance = 1e-5,
};
