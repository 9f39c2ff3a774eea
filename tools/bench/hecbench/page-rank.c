/*
 * HeCBench's page-rank (src/page-rank-cuda/main.cu; MIT, Erick Lavoie et
 * al.): one PageRank iteration, the kernels map and reduce in turn, one
 * thread a page in 256-thread blocks. map scales row i of the dense link
 * matrix by page i's rank over its out-links; reduce sums column j of
 * that into page j's new rank, each thread striding through the matrix
 * by rows. HeCBench's run line has 20000 pages, whose 1.6 GB matrices
 * take several seconds an iteration on two CPU threads; here there are
 * 4096 (main's own default is 1000). Both kernels' outputs, the ranks and
 * the running maximum differences, are read again by the next step, so
 * both are put back; the maps are overwritten whole.
 */
#include <stdlib.h>

#include "../hecbench.h"

#define HB_N 4096
#define BLOCK_SIZE 256

extern const char hb_page_rank_cl[];
void hb_page_rank_openmp(void *const buffers[]);
void hb_page_rank_reference(void *const buffers[]);

/*
 * main's random_pages with divisor 2, on rand() in its default seed (main
 * calls no srand). The matrix comes zeroed; main's malloc leaves the
 * entries without links unset, zero in practice for an allocation this
 * large.
 */
static void random_pages(int n, int *pages, unsigned int *noutlinks, int divisor)
{
    int i, j, k;

    srand(1);
    for (i = 0; i < n; ++i) {
        noutlinks[i] = 0;
        for (j = 0; j < n; ++j) {
            if (i != j && (abs(rand()) % divisor == 0)) {
                pages[(size_t)i * n + j] = 1;
                noutlinks[i] += 1;
            }
        }

        // the case with no outlinks is avoided
        if (noutlinks[i] == 0) {
            do {
                k = abs(rand()) % n;
            } while (k == i);
            pages[(size_t)i * n + k] = 1;
            noutlinks[i] = 1;
        }
    }
}

static void init(void *const buffers[])
{
    float *page_ranks = buffers[1];

    random_pages(HB_N, buffers[0], buffers[3], 2);
    for (int i = 0; i < HB_N; ++i)
        page_ranks[i] = 1.0f / (float)HB_N;
    /* d_diffs starts zeroed, as main's cudaMemset leaves it. */
}

static bool step(const struct hb_launcher *l)
{
    const uint32_t blocks = (HB_N + BLOCK_SIZE - 1) / BLOCK_SIZE;

    return hb_launch(l, &(struct hb_launch){"map",
                                            {blocks, 1, 1},
                                            {BLOCK_SIZE, 1, 1},
                                            0,
                                            5,
                                            {HB_BUF(0), HB_BUF(1), HB_BUF(2),
                                             HB_BUF(3), HB_I32(HB_N)}}) &&
           hb_launch(l, &(struct hb_launch){
                            "reduce",
                            {blocks, 1, 1},
                            {BLOCK_SIZE, 1, 1},
                            0,
                            4,
                            {HB_BUF(1), HB_BUF(2), HB_I32(HB_N), HB_BUF(4)}});
}

const struct hb_program hb_page_rank = {
    .name = "page-rank",
    .origin = "src/page-rank-cuda/main.cu",
    .license = "MIT",
    .covers = "two kernels an iteration, row and column sweeps of a dense "
              "link matrix, fmaxf",
    .size = "4096 pages",
    .opencl = hb_page_rank_cl,
    .buffer_count = 5,
    .buffers = {{"d_pages", HB_I32, (uint64_t)HB_N *HB_N * 4, false, false},
                {"d_page_ranks", HB_F32, HB_N * 4, true, true},
                {"d_maps", HB_F32, (uint64_t)HB_N *HB_N * 4, false, true},
                {"d_noutlinks", HB_U32, HB_N * 4, false, false},
                {"d_diffs", HB_F32, HB_N * 4, true, true}},
    .init = init,
    .step = step,
    .openmp = hb_page_rank_openmp,
    .reference = hb_page_rank_reference,
    .tolerance = 1e-6,
};
