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
// From HeCBench (src/simpleSpmv-omp/kernels.cpp and src/simpleSpmv-cuda/
// utils.cpp, commit f27000a51): one repetition of mv_csr_parallel's and
// vector_mv_csr_parallel's loops at block size 256 (one of main's, which
// runs 32 to 1024), their pragmas and bodies unchanged, in that order (the
// CUDA step's order), each writing its own y; and mv_csr_serial, the
// program's host reference, unchanged, filling both. The sizes are
// simpleSpmv.c's.
//
// What the host runs (GCC 12, -foffload=disable, target regions on the
// host): mv_csr's "target teams distribute parallel for num_threads(bs)"
// is one team of bs = 256 OpenMP threads, whatever the CPU count, as the
// clause asks. The vector version's "target teams distribute
// num_teams(2048)" is 2048 teams run one after another by the initial
// thread, and each row's "parallel for num_threads(32) reduction" forks a
// team of 32 threads: a fork a row. Neither relies on a team's size for
// its result; both sum each row as the serial reference does, the
// vector version in per-thread partial sums.
#include <stddef.h>
#include <omp.h>

#define REAL float

#define HB_SPMV_ROWS 2048
#define HB_SPMV_NNZ 671088
#define HB_SPMV_BS 256

// Reference
// https://github.com/ROCm/rocm-blogs/blob/release/blogs/high-performance-computing/spmv/part-1/examples/vector_csr.cpp
static size_t prevPowerOf2(size_t v) {
  v--;
  v |= v >> 1;
  v |= v >> 2;
  v |= v >> 4;
  v |= v >> 8;
  v |= v >> 16;
  v++;
  return v >> 1;
}

// Buffers in simpleSpmv.c's order: d_row_indices, d_col_indices,
// d_values, d_x, d_y (mv_csr's), d_y_vector (vector_mv_csr's).
extern "C" void hb_simpleSpmv_openmp(void *const buffers[])
{
  const size_t *row_indices = static_cast<const size_t *>(buffers[0]);
  const size_t *col_indices = static_cast<const size_t *>(buffers[1]);
  const REAL *values = static_cast<const REAL *>(buffers[2]);
  const REAL *x = static_cast<const REAL *>(buffers[3]);
  REAL *y = static_cast<REAL *>(buffers[4]);
  REAL *y_vector = static_cast<REAL *>(buffers[5]);
  const size_t num_rows = HB_SPMV_ROWS;
  const size_t nnz = HB_SPMV_NNZ;
  const int bs = HB_SPMV_BS;

  // mv_csr_parallel
      #pragma omp target teams distribute parallel for num_threads(bs)
      for (size_t i = 0; i < num_rows; i++) {
        size_t row_start = row_indices[i];
        size_t row_end = row_indices[i+1];

        REAL temp = 0;
        for(size_t j = row_start; j < row_end; j++){
          temp += values[j] * x[col_indices[j]];
        }
        y[i] = temp;
      }

  // vector_mv_csr_parallel
  int nnz_per_row = nnz / num_rows;
  int threads_per_row = prevPowerOf2(nnz_per_row);
  int warpSize = 32;
  // limit the number of threads per row to be no larger than the wavefront (warp) size
  threads_per_row = threads_per_row > warpSize ? warpSize : threads_per_row;
  int rows_per_block = bs / threads_per_row;
  if (rows_per_block == 0) rows_per_block = 1;
  int num_blocks = (num_rows + rows_per_block - 1) / rows_per_block;

  y = y_vector;
      #pragma omp target teams distribute num_teams(num_blocks * rows_per_block)
      for (size_t i = 0; i < num_rows; i++) {
        size_t row_start = row_indices[i];
        size_t row_end = row_indices[i+1];

        REAL temp = 0;
        #pragma omp parallel for num_threads(threads_per_row) reduction(+:temp)
        for(size_t j = row_start; j < row_end; j++){
          temp += values[j] * x[col_indices[j]];
        }
        y[i] = temp;
      }
}

// utils.cpp
void mv_csr_serial(const size_t num_rows,
                   const size_t *row_indices,
                   const size_t *col_indices,
                   const REAL *values, const REAL *x, REAL *y)
{
  for(size_t row = 0; row < num_rows; row++){
    size_t row_start = row_indices[row];
    size_t row_end = row_indices[row+1];

    REAL dot = 0;
    for ( size_t i = row_start; i < row_end; i++)
      dot += values[i] * x[col_indices[i]];

    y[row] = dot;
  }
}

extern "C" void hb_simpleSpmv_reference(void *const buffers[])
{
  const size_t *row_indices = static_cast<const size_t *>(buffers[0]);
  const size_t *col_indices = static_cast<const size_t *>(buffers[1]);
  const REAL *values = static_cast<const REAL *>(buffers[2]);
  const REAL *x = static_cast<const REAL *>(buffers[3]);

  mv_csr_serial(HB_SPMV_ROWS, row_indices, col_indices, values, x,
                static_cast<REAL *>(buffers[4]));
  mv_csr_serial(HB_SPMV_ROWS, row_indices, col_indices, values, x,
                static_cast<REAL *>(buffers[5]));
}
