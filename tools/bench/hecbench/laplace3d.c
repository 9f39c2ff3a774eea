/*
 * HeCBench's laplace3d (src/laplace3d-cuda/main.cu; BSD-3-Clause, Zheming
 * Jin): one Jacobi sweep of the 3D Laplace equation on a 128^3 grid (the
 * verified run of its Makefile), one laplace3d launch a step: a 2D grid
 * of 32x8 blocks whose threads march over the k-planes, three planes and
 * their halos in shared memory, two barriers a plane. A sweep reads d_u1
 * and writes every point of d_u2, so nothing needs putting back.
 */
#include "../hecbench.h"

#define BLOCK_X 32
#define BLOCK_Y 8
/* The grid (enum constants, so that the reference keeps its own names). */
enum { NX = 128, NY = 128, NZ = 128 };

extern const char hb_laplace3d_cl[];
void hb_laplace3d_openmp(void *const buffers[]);

/* main's initialisation of u1: 1 on the boundary (Dirichlet), 0 inside. */
static void init(void *const buffers[])
{
    float *h_u1 = buffers[0];

    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                int ind = i + j * NX + k * NX * NY;
                if (i == 0 || i == NX - 1 || j == 0 || j == NY - 1 || k == 0 ||
                    k == NZ - 1)
                    h_u1[ind] = 1.0f; /* Dirichlet b.c.'s */
                else
                    h_u1[ind] = 0.0f;
            }
}

/* HeCBench's host reference (src/laplace3d-cuda/reference.h), unchanged. */
static void laplace3d_reference(int NX, int NY, int NZ, const float *u1, float *u2)
{
    int i, j, k, ind;
    float sixth = 1.0f / 6.0f;

    for (k = 0; k < NZ; k++) {
        for (j = 0; j < NY; j++) {
            for (i = 0; i < NX; i++) { /* i loop innermost for sequential
                                          memory access */
                ind = i + j * NX + k * NX * NY;

                if (i == 0 || i == NX - 1 || j == 0 || j == NY - 1 || k == 0 ||
                    k == NZ - 1) {
                    u2[ind] = u1[ind]; /* Dirichlet b.c.'s */
                } else {
                    u2[ind] = (u1[ind - 1] + u1[ind + 1] + u1[ind - NX] +
                               u1[ind + NX] + u1[ind - NX * NY] +
                               u1[ind + NX * NY]) *
                              sixth;
                }
            }
        }
    }
}

static void reference(void *const buffers[])
{
    laplace3d_reference(NX, NY, NZ, buffers[0], buffers[1]);
}

static bool step(const struct hb_launcher *l)
{
    const int bx = 1 + (NX - 1) / BLOCK_X;
    const int by = 1 + (NY - 1) / BLOCK_Y;

    return hb_launch(l, &(struct hb_launch){"laplace3d",
                                            {bx, by, 1},
                                            {BLOCK_X, BLOCK_Y, 1},
                                            0,
                                            6,
                                            {HB_I32(NX), HB_I32(NY), HB_I32(NZ),
                                             HB_I32(NX), HB_BUF(0), HB_BUF(1)}});
}

const struct hb_program hb_laplace3d = {
    .name = "laplace3d",
    .origin = "src/laplace3d-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "3D stencil, 2D grid of 32x8 blocks looping over planes, "
              "shared planes with halos, barriers in the loop",
    .size = "128 x 128 x 128",
    .opencl = hb_laplace3d_cl,
    .buffer_count = 2,
    .buffers = {{"d_u1", HB_F32, NX *NY *NZ * 4, false, false},
                {"d_u2", HB_F32, NX *NY *NZ * 4, false, true}},
    .init = init,
    .step = step,
    .openmp = hb_laplace3d_openmp,
    .reference = reference,
    .tolerance = 1e-5,
};
