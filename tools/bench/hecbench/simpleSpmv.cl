// HeCBench's simpleSpmv CSR kernels (src/simpleSpmv-cuda/kernels.cu;
// BSD-3-Clause, Copyright (c) 2020 - 2021 HPCAS Lab, University of North
// Carolina at Charlotte) in OpenCL C for accel-bench: mv_csr, and
// vector_mv_csr<32> as vector_mv_csr_32, the same loops and additions in
// the same order. OpenCL kernels take no size_t, so num_rows is a ulong
// and the indices ulongs (size_t is 64 bits on both sides here). OpenCL
// 1.2 has no warp shuffles: __shfl_down_sync over a row's 32 lanes goes
// through local memory, a lane whose source is past the row keeping its
// own value as CUDA's does, with every work-item at each barrier. As in
// the accel form (kernels/hecbench/simpleSpmv.cu), lane 0 alone stores the
// row's sum.
#define REAL float
#define BS 32

__kernel void mv_csr(const ulong num_rows,
                     __global const ulong *row_indices,
                     __global const ulong *col_indices,
                     __global const REAL *values,
                     __global const REAL *x,
                     __global REAL *y)
{
  size_t i = get_group_id(0) * get_local_size(0) + get_local_id(0);
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

// Launched with BS x 8 work-groups (8 rows of 32 lanes).
__kernel void vector_mv_csr_32(const ulong num_rows,
                               __global const ulong *row_indices,
                               __global const ulong *col_indices,
                               __global const REAL *values,
                               __global const REAL *x,
                               __global REAL *y)
{
  __local REAL lanes[8][BS];
  const size_t tx = get_local_id(0), ty = get_local_id(1);
  size_t m = get_group_id(0) * get_local_size(1) + ty;

  REAL temp = 0;
  if (m < num_rows) {
    size_t row_start = row_indices[m];
    size_t row_end = row_indices[m+1];

    for(size_t n = row_start + tx; n < row_end; n += BS){
      temp += values[n] * x[col_indices[n]];
    }
  }
  for (int i = BS >> 1; i > 0; i >>= 1) {
    lanes[ty][tx] = temp;
    barrier(CLK_LOCAL_MEM_FENCE);
    temp += tx + i < BS ? lanes[ty][tx + i] : temp;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (m < num_rows && tx == 0)
    y[m] = temp;
}
