/*
 * HeCBench's simpleSpmv (src/simpleSpmv-cuda/kernels.cu; BSD-3-Clause,
 * HPCAS Lab, UNC Charlotte): sparse matrix-vector products in CSR, which
 * gather x through the column indices. A step is one repetition of both
 * CSR kernels at block size 256, one of those main's loop runs (32 to
 * 1024): mv_csr (a thread a row, 8 blocks of 256) and then
 * vector_mv_csr<32> (32 lanes a row, strided partial sums and a warp
 * shuffle reduction, 8 rows a 32x8 block). Both are one variant because
 * they are the program's one comparison, the same product two ways over
 * the same matrix; each writes its own y, and both are compared with
 * utils.cpp's mv_csr_serial (vector_mv_csr stores a row's sum from lane
 * 0 alone, where HeCBench's stores from every lane: a race that
 * kernels/hecbench/simpleSpmv.cu describes). main's third kernel, mv_dense, works on the
 * dense matrix and is left out. HeCBench's run line has 10240 rows and
 * 16777216 non-zeros, whose set-up shuffles a 420 MB dense matrix with
 * 10^8 rand() calls, and whose OpenMP version forks a team of 32 threads
 * for every row; here there are 2048 rows at the same density (16%,
 * 671088 non-zeros, 327 a row), with main's generator and seeds.
 */
#define _XOPEN_SOURCE 700 /* drand48 */
#include <stdlib.h>

#include "../hecbench.h"

#define REAL float
#define NUM_ROWS 2048
#define NNZ 671088
#define BS 256
#define THREADS_PER_ROW 32 /* prevPowerOf2(327) = 256, at most a warp */
#define ROWS_PER_BLOCK (BS / THREADS_PER_ROW)

extern const char hb_simpleSpmv_cl[];
void hb_simpleSpmv_openmp(void *const buffers[]);
void hb_simpleSpmv_reference(void *const buffers[]);

/* utils.cpp's init_matrix: a random choice of nnz cells, values in [1, 2). */
static void init_matrix(REAL *matrix, size_t num_rows, size_t nnz)
{
    size_t n = num_rows * num_rows;

    REAL *d = (REAL *)malloc(n * sizeof(REAL));

    srand(123);
    for (size_t i = 0; i < n; i++)
        d[i] = (REAL)i;
    for (size_t i = n; i > 0; i--) {
        size_t a = i - 1;
        size_t b = rand() % i;
        if (a != b) {
            REAL t = d[a];
            d[a] = d[b];
            d[b] = t;
        }
    }

    for (size_t i = 0; i < num_rows; i++) {
        for (size_t j = 0; j < num_rows; j++) {
            matrix[i * num_rows + j] = (d[i * num_rows + j] >= nnz)
                                           ? 0
                                           : (REAL)(drand48() + 1);
        }
    }

    free(d);
}

/* utils.cpp's init_csr: the matrix's non-zeros, row by row. */
static void init_csr(size_t *row_indices, REAL *values, size_t *col_indices,
                     REAL *matrix, size_t num_rows)
{
    size_t tmp = 0;

    row_indices[0] = 0;
    for (size_t i = 0; i < num_rows; i++) {
        for (size_t j = 0; j < num_rows; j++) {
            if (matrix[i * num_rows + j] != 0) {
                values[tmp] = matrix[i * num_rows + j];
                col_indices[tmp] = j;
                tmp++;
            }
        }
        row_indices[i + 1] = tmp;
    }
}

static void init(void *const buffers[])
{
    REAL *matrix = malloc((size_t)NUM_ROWS * NUM_ROWS * sizeof(REAL));
    REAL *x = buffers[3];

    if (matrix == NULL)
        abort();
    /* main: srand48, init_matrix, init_vector, init_csr. */
    srand48(1 << 12);
    init_matrix(matrix, NUM_ROWS, NNZ);
    for (size_t i = 0; i < NUM_ROWS; i++)
        x[i] = (REAL)drand48();
    init_csr(buffers[0], buffers[2], buffers[1], matrix, NUM_ROWS);
    free(matrix);
}

static bool step(const struct hb_launcher *l)
{
    return hb_launch(l,
                     &(struct hb_launch){"mv_csr",
                                         {(NUM_ROWS + BS - 1) / BS, 1, 1},
                                         {BS, 1, 1},
                                         0,
                                         6,
                                         {HB_I64(NUM_ROWS), HB_BUF(0), HB_BUF(1),
                                          HB_BUF(2), HB_BUF(3), HB_BUF(4)}}) &&
           hb_launch(
               l, &(struct hb_launch){
                      "vector_mv_csr_32",
                      {(NUM_ROWS + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, 1, 1},
                      {THREADS_PER_ROW, ROWS_PER_BLOCK, 1},
                      0,
                      6,
                      {HB_I64(NUM_ROWS), HB_BUF(0), HB_BUF(1), HB_BUF(2),
                       HB_BUF(3), HB_BUF(5)}});
}

/* The index buffers hold size_t, which no check reads (HB_U32 is a label). */
const struct hb_program hb_simpleSpmv = {
    .name = "simpleSpmv",
    .origin = "src/simpleSpmv-cuda/kernels.cu",
    .license = "BSD-3-Clause",
    .covers = "CSR SpMV, gathers through column indices, a thread a row and "
              "a warp a row with shuffles",
    .size = "2048 rows, 671088 non-zeros",
    .opencl = hb_simpleSpmv_cl,
    .buffer_count = 6,
    .buffers = {{"d_row_indices", HB_U32, (NUM_ROWS + 1) * 8, false, false},
                {"d_col_indices", HB_U32, (uint64_t)NNZ * 8, false, false},
                {"d_values", HB_F32, (uint64_t)NNZ * 4, false, false},
                {"d_x", HB_F32, NUM_ROWS * 4, false, false},
                {"d_y", HB_F32, NUM_ROWS * 4, false, true},
                {"d_y_vector", HB_F32, NUM_ROWS * 4, false, true}},
    .init = init,
    .step = step,
    .openmp = hb_simpleSpmv_openmp,
    .reference = hb_simpleSpmv_reference,
    .tolerance = 1e-4,
};
