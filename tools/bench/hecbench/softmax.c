/*
 * HeCBench's softmax (src/softmax-cuda/main.cu; BSD-3-Clause, Zheming
 * Jin): a softmax of each slice of a matrix with expf, implementation 0
 * of main (softMax, a thread a slice, 256 threads a block), one launch a
 * step as main times it. Implementation 1 (softMax2) needs cooperative
 * groups, which accel's kernels do not have, and is left out. HeCBench
 * runs 100000 slices of 784; here 20000 slices of 784, so that a step
 * stays near 100 ms on 2 CPUs and each buffer is 63 MB, not 314 MB. The
 * reference is HeCBench's host model softMax_cpu.
 */
#include <math.h>
#include <stdlib.h>

#include "../hecbench.h"

#define BLOCK_SIZE 256
#define NUM_SLICE 20000
#define SLICE_SIZE 784

extern const char hb_softmax_cl[];
void hb_softmax_openmp(void *const buffers[]);

/* HeCBench's input: srand(2), rand() % 13. */
static void init(void *const buffers[])
{
    float *input = buffers[0];

    srand(2);
    for (int i = 0; i < NUM_SLICE; i++)
        for (int j = 0; j < SLICE_SIZE; j++)
            input[i * SLICE_SIZE + j] = rand() % 13;
}

/* HeCBench's softMax_cpu ("a C model derived from the OpenCL kernel"). */
static void softMax_cpu(const int numSlice, const int sliceSize,
                        const float *src, float *dest)
{
    for (int i = 0; i < numSlice; i++) {
        float max_ = src[i * sliceSize];
        for (int j = 0; j < sliceSize; j++) {
            max_ = (max_ < src[i * sliceSize + j]) ? src[i * sliceSize + j]
                                                   : max_;
        }
        float sum = 0;
        for (int j = 0; j < sliceSize; j++) {
            float e = expf(src[i * sliceSize + j] - max_);
            sum += e;
            dest[i * sliceSize + j] = e;
        }
        for (int j = 0; j < sliceSize; j++) {
            dest[i * sliceSize + j] /= sum;
        }
    }
}

static void reference(void *const buffers[])
{
    softMax_cpu(NUM_SLICE, SLICE_SIZE, buffers[0], buffers[1]);
}

static bool step(const struct hb_launcher *l)
{
    return hb_launch(
        l, &(struct hb_launch){
               "softMax",
               {(NUM_SLICE + BLOCK_SIZE - 1) / BLOCK_SIZE, 1, 1},
               {BLOCK_SIZE, 1, 1},
               0,
               4,
               {HB_I32(NUM_SLICE), HB_I32(SLICE_SIZE), HB_BUF(0), HB_BUF(1)}});
}

const struct hb_program hb_softmax = {
    .name = "softmax",
    .origin = "src/softmax-cuda/main.cu",
    .license = "BSD-3-Clause",
    .covers = "a thread a row, expf, long serial loops, early return",
    .size = "20000 slices of 784",
    .opencl = hb_softmax_cl,
    .buffer_count = 2,
    .buffers = {{"d_input", HB_F32, (uint64_t)NUM_SLICE *SLICE_SIZE * 4, false,
                 false},
                {"d_output", HB_F32, (uint64_t)NUM_SLICE *SLICE_SIZE * 4, false,
                 true}},
    .init = init,
    .step = step,
    .openmp = hb_softmax_openmp,
    .reference = reference,
    .tolerance = 1e-5,
};
