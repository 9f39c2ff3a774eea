/*
 * HeCBench's scan (src/scan-cuda/main.cu; BSD-3-Clause, Zheming Jin):
 * work-efficient (Blelloch) exclusive scans of independent blocks of N
 * elements, N/2 threads a block, barriers inside the up-sweep and
 * down-sweep loops, a grid-stride loop over the blocks; scan_bcao is the
 * same with its shared array padded against bank conflicts. The int
 * instances at N = 128. One step is one repetition of both of main's
 * timed loops: scan, then scan_bcao, each into its own output (HeCBench
 * writes both into d_out and checks each after its loop). HeCBench's
 * grid is 16 blocks an SM; here 16 x 80 (a V100's SMs). HeCBench runs
 * 268435456 elements; here 16384 (128 blocks of N), because the OpenMP
 * version runs each block as a team of 64 host threads, whose
 * oversubscribed barriers take about 10 ms a team on 2 CPUs. The
 * reference is HeCBench's host scan in runTest.
 */
#include <stdlib.h>

#include "../hecbench.h"

#define N 128
#define HB_SCAN_ELEMENTS 16384
#define NUM_BLOCKS (HB_SCAN_ELEMENTS / N)

extern const char hb_scan_cl[];
void hb_scan_openmp(void *const buffers[]);

/* HeCBench's input: srand(123), rand() % 5 + 1. */
static void init(void *const buffers[])
{
    int *in = buffers[0];

    srand(123);
    for (int64_t n = 0; n < HB_SCAN_ELEMENTS; n++)
        in[n] = rand() % 5 + 1;
}

/* runTest's host scan, once for each output. */
static void reference(void *const buffers[])
{
    for (int o = 1; o <= 2; o++) {
        const int *t_in = buffers[0];
        int *t_out = buffers[o];

        for (int64_t n = 0; n < NUM_BLOCKS; n++) {
            t_out[0] = 0;
            for (int i = 1; i < N; i++)
                t_out[i] = t_out[i - 1] + t_in[i - 1];
            t_out += N;
            t_in += N;
        }
    }
}

static bool step(const struct hb_launcher *l)
{
    return hb_launch(l, &(struct hb_launch){"scan_int_128",
                                            {16 * 80, 1, 1},
                                            {N / 2, 1, 1},
                                            0,
                                            3,
                                            {HB_I64(NUM_BLOCKS), HB_BUF(1),
                                             HB_BUF(0)}}) &&
           hb_launch(l, &(struct hb_launch){
                            "scan_bcao_int_128",
                            {16 * 80, 1, 1},
                            {N / 2, 1, 1},
                            0,
                            3,
                            {HB_I64(NUM_BLOCKS), HB_BUF(2), HB_BUF(0)}});
}

const struct hb_program hb_scan = {
    .name = "scan",
    .origin = "src/scan-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "templated block scans, barriers inside loops, shared memory",
    .size = "16384 ints, 128 a block",
    .opencl = hb_scan_cl,
    .buffer_count = 3,
    .buffers = {{"d_in", HB_I32, HB_SCAN_ELEMENTS * 4, false, false},
                {"d_out", HB_I32, HB_SCAN_ELEMENTS * 4, false, true},
                {"d_out_bcao", HB_I32, HB_SCAN_ELEMENTS * 4, false, true}},
    .init = init,
    .step = step,
    .openmp = hb_scan_openmp,
    .reference = reference,
    .tolerance = 0,
};
