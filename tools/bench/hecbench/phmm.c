/*
 * HeCBench's phmm (src/phmm-cuda/main.cu; MIT, Copyright (c) 2019
 * lienliang): the forward pass of a pair hidden Markov model as a
 * dynamic-programming wavefront, one launch of pair_HMM_forward a cell
 * (i, j), 1 <= i <= x_dim, 1 <= j <= y_dim, a block a batch and a thread
 * a state, with barriers between its shared arrays; after each launch
 * main swaps the input and output forward matrices. One step is one
 * repetition of main's timed loop: the whole wavefront, 11 x 40 = 440
 * launches, HeCBench's own sizes. The swaps are even in number, so the
 * step ends with d_cur_forward where it began. HeCBench leaves
 * d_next_forward as cudaMalloc gives it, and the launches read cells of
 * it that none wrote; here it starts zeroed, so that every side reads the
 * same. The inputs are main's (std::default_random_engine, seed 123; in
 * phmm-omp.cpp, since they are C++). HeCBench prints a checksum and has no
 * reference: the OpenMP version is the reference.
 */
#include "../hecbench.h"

#define x_dim 11
#define y_dim 40
#define batch 4
#define states 3

#define FORWARD_BYTES ((x_dim + 1) * (y_dim + 1) * batch * (states - 1) * 8)

extern const char hb_phmm_cl[];
void hb_phmm_openmp(void *const buffers[]);
void hb_phmm_init(void *const buffers[]);

static bool step(const struct hb_launcher *l)
{
    uint32_t cur = 0, next = 1;

    for (int i = 1; i < x_dim + 1; i++)
        for (int j = 1; j < y_dim + 1; j++) {
            uint32_t t = cur;

            if (!hb_launch(
                    l, &(struct hb_launch){"pair_HMM_forward",
                                           {batch, 1, 1},
                                           {states - 1, 1, 1},
                                           0,
                                           8,
                                           {HB_I32(i), HB_I32(j), HB_BUF(cur),
                                            HB_BUF(3), HB_BUF(2), HB_BUF(4),
                                            HB_BUF(5), HB_BUF(next)}}))
                return false;
            cur = next;
            next = t;
        }
    return true;
}

const struct hb_program hb_phmm = {
    .name = "phmm",
    .origin = "src/phmm-cuda/main.cu",
    .license = "MIT",
    .covers = "DP wavefront, a launch a cell, barriers, shared arrays, double",
    .size = "11 x 40 cells, 4 batches, 3 states",
    .opencl = hb_phmm_cl,
    .buffer_count = 6,
    .buffers = {{"d_cur_forward", HB_F64, FORWARD_BYTES, true, true},
                {"d_next_forward", HB_F64, FORWARD_BYTES, true, true},
                {"d_emis", HB_F64, FORWARD_BYTES, false, false},
                {"d_trans", HB_F64,
                 (x_dim + 1) * (states - 1) * states *batch * 8, false, false},
                {"d_like", HB_F64, 2 * 2 * (states - 1) * batch * 8, false, false},
                {"d_start", HB_F64, batch *(states - 1) * 8, false, false}},
    .init = hb_phmm_init,
    .step = step,
    .openmp = hb_phmm_openmp,
    .tolerance = 1e-9,
};
