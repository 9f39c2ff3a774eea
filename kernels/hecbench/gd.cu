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
// From HeCBench (github.com/zjin-lcf/HeCBench, src/gd-cuda/main.cu, commit
// f27000a51): the kernels compute and update, their bodies unchanged; only
// their declaration lines are accel's (ACCEL_KERNEL). main.cu has two
// kernels named update: the one main launches also sums the L2 norm of x
// with cub::BlockReduce, for the objective it prints at the end. CUB is
// not something <accel/kernel.h> offers (and a CPU kernel's barriers must
// be in its body, where CUB's are in its member functions), so this is the
// other one, the same update of x without the norm, which main.cu defines
// beside it. compute gathers x through the CSR column indices, calls expf
// and logf, and adds into the objective, the count of correct predictions
// and the gradient with atomicAdd.
#include <accel/kernel.h>

ACCEL_KERNEL(compute,
    (const float * __restrict__, x),
          (float * __restrict__, grad),
    (const int   * __restrict__, A_row_ptr),
    (const int   * __restrict__, A_col_index),
    (const float * __restrict__, A_value),
    (const int   * __restrict__, A_y_label),
    (float * __restrict__, total_obj_val),
    (int   * __restrict__, correct),
    (int, m))
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < m) {
    // Simple sparse matrix multiply x' = A * x
    float xp = 0.f;
    for( int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      xp += A_value[j] * x[A_col_index[j]];
    }

    // compute objective
    float v = logf(1.f + expf(-xp * A_y_label[i]));
    atomicAdd(total_obj_val, v);

    // compute errors
    float prediction = 1.f / (1.f + expf(-xp));
    int t = (prediction >= 0.5f) ? 1 : -1;
    if (A_y_label[i] == t) atomicAdd(correct, 1);

    // compute gradient at x
    float accum = expf(-A_y_label[i] * xp);
    accum = accum / (1.f + accum);
    for(int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      float temp = -accum * A_value[j] * A_y_label[i];
      atomicAdd(&grad[A_col_index[j]], temp);
    }
  }
}

ACCEL_KERNEL(update,
       (float * __restrict__, x),
       (const float * __restrict__, grad),
       (int, m), (int, n), (float, lambda), (float, alpha))
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float g = grad[i] / (float)m + lambda * x[i];
    x[i] = x[i] - alpha * g;
  }
}
