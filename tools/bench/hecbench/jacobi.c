/*
 * HeCBench's jacobi (src/jacobi-cuda/main.cu; Apache-2.0, NVIDIA): a
 * Jacobi relaxation of a 2048 x 2048 grid, one jacobi_step a step, 16x16
 * blocks reading a shared tile with its halo, a warp-shuffle reduction of
 * the error and one atomicAdd a block. HeCBench's loop zeroes the error
 * with cudaMemset before each step: here that is the error buffer's reset.
 * The OpenMP version's iteration copies the new grid back into the old
 * one (its second loop), so that buffer is reset too.
 */
#include <math.h>

#include "../hecbench.h"

#define N 2048
#define IDX(i, j) ((i) + (j)*N)

extern const char hb_jacobi_cl[];
void hb_jacobi_openmp(void *const buffers[]);

/* HeCBench's initialize_data: sinusoidal boundaries, zero inside. */
static void initialize_data(float *f)
{
    for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i) {
            if (i == 0 || i == N - 1)
                f[IDX(i, j)] = sinf(j * 2 * M_PI / (N - 1));
            else if (j == 0 || j == N - 1)
                f[IDX(i, j)] = sinf(i * 2 * M_PI / (N - 1));
            else
                f[IDX(i, j)] = 0.0f;
        }
}

static void init(void *const buffers[])
{
    initialize_data(buffers[0]);
    initialize_data(buffers[1]);
}

static bool step(const struct hb_launcher *l)
{
    return hb_launch(l, &(struct hb_launch){"jacobi_step",
                                            {N / 16, N / 16, 1},
                                            {16, 16, 1},
                                            0,
                                            3,
                                            {HB_BUF(0), HB_BUF(1), HB_BUF(2)}});
}

const struct hb_program hb_jacobi = {
    .name = "jacobi",
    .origin = "src/jacobi-cuda/main.cu",
    .license = "Apache-2.0",
    .covers = "2D stencil, 16x16 blocks, shared tile, warp shuffles, atomics",
    .size = "2048 x 2048",
    .opencl = hb_jacobi_cl,
    .buffer_count = 3,
    .buffers = {{"d_f", HB_F32, N *N * 4, false, true},
                {"d_f_old", HB_F32, N *N * 4, true, false},
                {"d_error", HB_F32, 4, true, true}},
    .init = init,
    .step = step,
    .openmp = hb_jacobi_openmp,
    .tolerance = 1e-4,
};
