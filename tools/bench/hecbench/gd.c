/*
 * HeCBench's gd (src/gd-cuda/main.cu; BSD-3-Clause, Zheming Jin; its
 * libsvm reader by Naga V Gudapati): one iteration of gradient descent
 * for L2-regularised logistic regression, the kernels compute (a thread
 * an observation: a CSR row times x, gathered through the column
 * indices, then expf and logf, and atomicAdd into the objective, the
 * count of correct predictions and every gradient entry the row touches)
 * and update (a thread a feature), in 256-thread blocks. HeCBench's run
 * line reads gisette_scale, a download; here the data set is synthetic,
 * of gisette's shape (6000 observations, 5000 features) at 10% density
 * (500 features an observation, one in each run of 10 columns), values
 * uniform in [-1, 1] and labels +1 or -1 from rand() with a fixed seed,
 * each observation then normalised as get_CRSM_from_svm normalises it.
 * lambda 0.0001 and alpha 10 are the run line's. main launches the update
 * that also sums x's L2 norm with cub::BlockReduce; the kernel bundle has
 * main.cu's other update, without the norm (kernels/hecbench/gd.cu says
 * why). x starts at zero, as main's does; the objective, count and
 * gradient are zeroed before each step (main's cudaMemsets) and x put
 * back.
 */
#include <math.h>
#include <stdlib.h>

#include "../hecbench.h"

#define M 6000 /* observations */
#define N 5000 /* features */
#define PER_ROW 500
#define NNZ (M * PER_ROW)

extern const char hb_gd_cl[];
void hb_gd_openmp(void *const buffers[]);
void hb_gd_reference(void *const buffers[]);

static void init(void *const buffers[])
{
    int *row_ptr = buffers[2], *col_index = buffers[3], *y_label = buffers[5];
    float *values = buffers[4];

    srand(12345);
    row_ptr[0] = 0;
    for (int i = 0; i < M; i++) {
        y_label[i] = rand() % 2 ? 1 : -1;
        for (int k = 0; k < PER_ROW; k++) {
            int j = i * PER_ROW + k;

            col_index[j] = k * (N / PER_ROW) + rand() % (N / PER_ROW);
            values[j] = 2.f * ((float)rand() / (float)RAND_MAX) - 1.f;
        }
        row_ptr[i + 1] = (i + 1) * PER_ROW;
    }

    /* get_CRSM_from_svm's normalisation, in double as its auto does. */
    for (int i = 0; i < M; i++) {
        double norm_sqrd = 0.0;
        for (int j = row_ptr[i]; j < row_ptr[i + 1]; j++)
            norm_sqrd += pow(values[j], 2);
        double norm = sqrt(norm_sqrd);
        for (int j = row_ptr[i]; j < row_ptr[i + 1]; j++)
            values[j] = (float)(values[j] / norm);
    }
}

static bool step(const struct hb_launcher *l)
{
    return hb_launch(l, &(struct hb_launch){"compute",
                                            {(M + 255) / 256, 1, 1},
                                            {256, 1, 1},
                                            0,
                                            9,
                                            {HB_BUF(0), HB_BUF(1), HB_BUF(2),
                                             HB_BUF(3), HB_BUF(4), HB_BUF(5),
                                             HB_BUF(6), HB_BUF(7), HB_I32(M)}}) &&
           hb_launch(l, &(struct hb_launch){"update",
                                            {(N + 255) / 256, 1, 1},
                                            {256, 1, 1},
                                            0,
                                            6,
                                            {HB_BUF(0), HB_BUF(1), HB_I32(M),
                                             HB_I32(N), HB_F32(0.0001f),
                                             HB_F32(10.f)}});
}

const struct hb_program hb_gd = {
    .name = "gd",
    .origin = "src/gd-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "CSR row times vector, expf and logf, float and int atomicAdd "
              "scattered into the gradient",
    .size = "6000 x 5000, 3000000 non-zeros (synthetic)",
    .opencl = hb_gd_cl,
    .buffer_count = 8,
    .buffers = {{"d_x", HB_F32, N * 4, true, true},
                {"d_grad", HB_F32, N * 4, true, true},
                {"d_row_ptr", HB_I32, (M + 1) * 4, false, false},
                {"d_col_index", HB_I32, NNZ * 4, false, false},
                {"d_value", HB_F32, NNZ * 4, false, false},
                {"d_y_label", HB_I32, M * 4, false, false},
                {"d_total_obj_val", HB_F32, 4, true, true},
                {"d_correct", HB_I32, 4, true, true}},
    .init = init,
    .step = step,
    .openmp = hb_gd_openmp,
    .reference = hb_gd_reference,
    .tolerance = 1e-4,
};
