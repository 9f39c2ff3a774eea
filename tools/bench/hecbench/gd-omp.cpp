// BSD 3-Clause License
//
// Copyright (c) 2020 ,       Argonne National Laboratory   (Zheming Jin)
// Copyright (c) 2020-,     Oak Ridge National Laboratory   (Zheming Jin)
// All rights reserved.
//
// Redistribution and use in source and binary forms, with or without
// modification, are permitted provided that the following conditions are met:
//
// 1. Redistributions of source code must retain the above copyright notice, this
//    list of conditions and the following disclaimer.
//
// 2. Redistributions in binary form must reproduce the above copyright notice,
//    this list of conditions and the following disclaimer in the documentation
//    and/or other materials provided with the distribution.
//
// 3. Neither the name of the copyright holder nor the names of its
//    contributors may be used to endorse or promote products derived from
//    this software without specific prior written permission.
//
// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
// AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
// IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
// DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
// FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
// DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
// SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
// CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
// OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
// OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
//
// From HeCBench (src/gd-omp/main.cpp and src/gd-cuda/reference.h, commit
// f27000a51): one iteration of main's training loop, its two loops and
// their pragmas unchanged (the update loop sums the L2 norm into a local,
// as main's does), and reference.h's compute_ref and update_ref,
// unchanged, run once as reference() runs them an iteration. The zeroing
// at the top of main's iteration (objective, count, gradient) is the
// buffers' reset (gd.c), as the CUDA version's cudaMemsets are. lambda
// and alpha are HeCBench's run line's; the sizes are gd.c's.
#include <math.h>
#include <omp.h>

#define HB_GD_M 6000
#define HB_GD_N 5000

static const float lambda = 0.0001f;
static const float alpha = 10.f;

// Buffers in gd.c's order: d_x, d_grad, d_row_ptr, d_col_index, d_value,
// d_y_label, d_total_obj_val, d_correct.
extern "C" void hb_gd_openmp(void *const buffers[])
{
  float *d_x = static_cast<float *>(buffers[0]);
  float *d_grad = static_cast<float *>(buffers[1]);
  const int *d_A_row_ptr = static_cast<const int *>(buffers[2]);
  const int *d_A_col_index = static_cast<const int *>(buffers[3]);
  const float *d_A_value = static_cast<const float *>(buffers[4]);
  const int *d_A_y_label = static_cast<const int *>(buffers[5]);
  float *total_obj_val = static_cast<float *>(buffers[6]);
  int *correct = static_cast<int *>(buffers[7]);
  const int m = HB_GD_M;
  const int n = HB_GD_N;
  float l2_norm;

      l2_norm = 0.f;

      // compute the total objective, correct rate, and gradient
      #pragma omp target teams distribute parallel for thread_limit(256)
      for (int i = 0; i < m; ++i) {
        // Simple sparse matrix multiply x' = A * x
        float xp = 0.f;
        for( int j = d_A_row_ptr[i]; j < d_A_row_ptr[i+1]; ++j) {
          xp += d_A_value[j] * d_x[d_A_col_index[j]];
        }

        // compute objective
        float v = logf(1.f + expf(-xp * d_A_y_label[i]));
        #pragma omp atomic update
        total_obj_val[0] += v;

        // compute errors
        float prediction = 1.f / (1.f + expf(-xp));
        int t = (prediction >= 0.5f) ? 1 : -1;
        if (d_A_y_label[i] == t) {
          #pragma omp atomic update
          correct[0]++;
        }

        // compute gradient at x
        float accum = expf(-d_A_y_label[i] * xp);
        accum = accum / (1.f + accum);
        for(int j = d_A_row_ptr[i]; j < d_A_row_ptr[i+1]; ++j) {
          float temp = -accum * d_A_value[j] * d_A_y_label[i];
          #pragma omp atomic update
          d_grad[d_A_col_index[j]] += temp;
        }
      }

      // update x (gradient does not need to be updated)
      #pragma omp target teams distribute parallel for \
      reduction(+:l2_norm) thread_limit(256)
      for (int i = 0; i < n; ++i) {
        l2_norm += d_x[i] * d_x[i];
        float g = d_grad[i] / (float)m + lambda * d_x[i];
        d_x[i] = d_x[i] - alpha * g;
      }
  (void)l2_norm;
}

// reference.h
void compute_ref (
    const float * __restrict__ x,
          float * __restrict__ grad,
    const int   * __restrict__ A_row_ptr,
    const int   * __restrict__ A_col_index,
    const float * __restrict__ A_value,
    const int   * __restrict__ A_y_label,
    float  &total_obj_val,
    int    &correct,
    int m )
{
  for (int i = 0; i < m; i++) {
    // Simple sparse matrix multiply x' = A * x
    float xp = 0.f;
    for( int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      xp += A_value[j] * x[A_col_index[j]];
    }

    // compute objective
    float v = logf(1.f + expf(-xp * A_y_label[i]));
    total_obj_val += v;

    // compute errors
    float prediction = 1.f / (1.f + expf(-xp));
    int t = (prediction >= 0.5f) ? 1 : -1;
    if (A_y_label[i] == t) correct++;

    // compute gradient at x
    float accum = expf(-A_y_label[i] * xp);
    accum = accum / (1.f + accum);
    for(int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      float temp = -accum * A_value[j] * A_y_label[i];
      grad[A_col_index[j]] += temp;
    }
  }
}

void update_ref(float * __restrict__ x,
                const float * __restrict__ grad,
                int m, int n, float lambda, float alpha)
{
  for (int i = 0; i < n; i++ ) {
    float g = grad[i] / (float)m + lambda * x[i];
    x[i] = x[i] - alpha * g;
  }
}

extern "C" void hb_gd_reference(void *const buffers[])
{
  float *h_x = static_cast<float *>(buffers[0]);
  float *h_grad = static_cast<float *>(buffers[1]);

  compute_ref(h_x, h_grad, static_cast<const int *>(buffers[2]),
              static_cast<const int *>(buffers[3]),
              static_cast<const float *>(buffers[4]),
              static_cast<const int *>(buffers[5]),
              *static_cast<float *>(buffers[6]),
              *static_cast<int *>(buffers[7]), HB_GD_M);
  update_ref(h_x, h_grad, HB_GD_M, HB_GD_N, lambda, alpha);
}
