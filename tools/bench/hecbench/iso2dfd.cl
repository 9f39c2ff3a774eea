// HeCBench's iso_2dfd_kernel (src/iso2dfd-cuda/iso2dfd.cu; MIT, Copyright
// (c) 2019 Intel Corporation) in OpenCL C for accel-bench: the same bounds
// tests and arithmetic in the same order, size_t indices as the CUDA form
// has them.
#define HALF_LENGTH 1

__kernel void iso_2dfd_kernel(__global float *restrict next,
                              __global const float *restrict prev,
                              __global const float *restrict vel,
                              const float dtDIVdxy, const ulong nRows,
                              const ulong nCols)
{
  size_t gidCol = get_local_size(0) * get_group_id(0) + get_local_id(0);
  size_t gidRow = get_local_size(1) * get_group_id(1) + get_local_id(1);

  if (gidRow < nRows && gidCol < nCols) {

    size_t gid = (gidRow)*nCols + gidCol;

    if ((gidCol >= HALF_LENGTH && gidCol < nCols - HALF_LENGTH) &&
        (gidRow >= HALF_LENGTH && gidRow < nRows - HALF_LENGTH)) {
      float value = 0.f;
      value += prev[gid + 1] - 2.f * prev[gid] + prev[gid - 1];
      value += prev[gid + nCols] - 2.f * prev[gid] + prev[gid - nCols];
      value *= dtDIVdxy * vel[gid];
      next[gid] = 2.f * prev[gid] - next[gid] + value;
    }
  }
}
