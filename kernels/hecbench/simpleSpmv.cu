// Copyright (c) 2020 - 2021 HPCAS Lab (https://passlab.github.io)
// from University of North Carolina at Charlotte. All rights reserved. Funding for this research and
// development was provided by the National Science Foundation
// under award number CISE SHF-1551182 and CISE SHF-2015254.
//
// Redistribution and use in source and binary forms, with or without modification,
// are permitted provided that the following conditions are met:
//
// 1. Redistributions of source code must retain the above copyright notice,
//    this list of conditions and the following disclaimer.
// 2. Redistributions in binary form must reproduce the above copyright notice,
//    this list of conditions and the following disclaimer in the documentation
//    and/or other materials provided with the distribution.
// 3. Neither the name of the copyright holder nor the names of its contributors may
//    be used to endorse or promote products derived from this software without specific prior written permission.
//
// THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
// IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
// FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
// CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
// DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
// DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY,
// WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
// ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
//
// From HeCBench (github.com/zjin-lcf/HeCBench, src/simpleSpmv-cuda/
// kernels.cu and mv.h, commit f27000a51; the program's LICENSE is the one
// above): the CSR kernels mv_csr and vector_mv_csr, their bodies
// unchanged but for one guard (below); their declaration lines are
// accel's (ACCEL_KERNEL, and ACCEL_KERNEL_TEMPLATE with
// ACCEL_KERNEL_INSTANCE for vector_mv_csr<32>, the instance main launches
// at this size: 327 non-zeros a row give 32 threads a row). Two things:
//  - vector_mv_csr passes __shfl_down_sync a width (BS), which
//    <accel/kernel.h> does not take. For BS = 32 the width is the whole
//    warp and changes nothing, so on the CPU the width is dropped, and a
//    compile-time check refuses any other width.
//  - vector_mv_csr lets every lane of a row store y[m], though after the
//    shuffles only lane 0 holds the row's sum (the others hold partial
//    sums, some doubled by shuffles from past the warp's end): a race whose
//    winner is unspecified on a GPU, and on the CPU the last lane's store
//    lands (y came out 5% high here). So the store is guarded by
//    threadIdx.x == 0, the one change to a body; the HIP and SYCL versions
//    have the same race.
#include <accel/kernel.h>

#define REAL float

#if !ACCEL_KERNEL_GPU
#undef __shfl_down_sync
#define __shfl_down_sync(mask, v, d, width) \
  (static_cast<void>(sizeof(char[(width) == 32 ? 1 : -1])), \
   accel_shfl_down_sync(mask, v, d))
#endif

// sparse matrix vector multiply using the CSR format
ACCEL_KERNEL(mv_csr, (const size_t, num_rows),
                       (const size_t *, row_indices),
                       (const size_t *, col_indices),
                       (const REAL *, values),
                       (const REAL *, x),
                             (REAL *, y))
{
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < num_rows) {
    size_t row_start = row_indices[i];
    size_t row_end = row_indices[i+1];

    REAL temp = 0;
    for(size_t n = row_start; n < row_end; n++){
      temp += values[n] * x[col_indices[n]];
    }
    y[i] = temp;
  }
}

// vector sparse matrix vector multiply using the CSR format
ACCEL_KERNEL_TEMPLATE((int BS), vector_mv_csr, (const size_t, num_rows),
                              (const size_t *, row_indices),
                              (const size_t *, col_indices),
                              (const REAL *, values),
                              (const REAL *, x),
                                    (REAL *, y))
{
  size_t m = blockIdx.x * blockDim.y + threadIdx.y;
  if (m < num_rows) {
    size_t row_start = row_indices[m];
    size_t row_end = row_indices[m+1];

    REAL temp = 0;
    for(size_t n = row_start + threadIdx.x; n < row_end; n += BS){
      temp += values[n] * x[col_indices[n]];
    }
    #pragma unroll
    for (int i = BS >> 1; i > 0; i >>= 1)
      temp += __shfl_down_sync(0xFFFFFFFF, temp, i, BS);

    if (threadIdx.x == 0)  // accel-bench: lane 0 alone (see above)
      y[m] = temp;
  }
}
ACCEL_KERNEL_INSTANCE(vector_mv_csr, (32), vector_mv_csr_32,
                              (const size_t, num_rows),
                              (const size_t *, row_indices),
                              (const size_t *, col_indices),
                              (const REAL *, values),
                              (const REAL *, x),
                                    (REAL *, y))
