// HeCBench's jacobi_step (src/jacobi-cuda/main.cu; Apache-2.0, Copyright
// (c) 2021, NVIDIA CORPORATION) in OpenCL C for accel-bench: the same
// tile, halo and arithmetic; OpenCL 1.2 has no warp shuffles, so the two
// shuffle reductions (offsets 8, 4, 2, 1 over 16 lanes) are the same
// additions in the same order through local memory.
#define N 2048
#define IDX(i, j) ((i) + (j) * N)

// CUDA's atomicAdd on a float, which OpenCL 1.2 lacks, as a compare and swap.
inline void atomic_add_float(volatile __global float *p, float v)
{
  union { unsigned int u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atomic_cmpxchg((volatile __global unsigned int *)p, old.u, sum.u) != old.u);
}

__kernel void jacobi_step(__global float *restrict f,
                          __global const float *restrict f_old,
                          __global float *restrict error)
{
  __local float f_old_tile[18][18];
  __local float lanes[16][16];
  __local float reduction_array[16];

  int tx = get_local_id(0), ty = get_local_id(1);
  int i = tx + get_group_id(0) * get_local_size(0);
  int j = ty + get_group_id(1) * get_local_size(1);

  f_old_tile[ty+1][tx+1] = f_old[IDX(i,j)];
  if (tx == 0 && i >= 1)
    f_old_tile[ty+1][tx+0] = f_old[IDX(i-1,j)];
  if (tx == 15 && i <= N-2)
    f_old_tile[ty+1][tx+2] = f_old[IDX(i+1,j)];
  if (ty == 0 && j >= 1)
    f_old_tile[ty+0][tx+1] = f_old[IDX(i,j-1)];
  if (ty == 15 && j <= N-2)
    f_old_tile[ty+2][tx+1] = f_old[IDX(i,j+1)];

  barrier(CLK_LOCAL_MEM_FENCE);

  float err = 0.0f;

  if (j >= 1 && j <= N-2) {
    if (i >= 1 && i <= N-2) {
      f[IDX(i,j)] = 0.25f * (f_old_tile[ty+1][tx+2] +
                             f_old_tile[ty+1][tx+0] +
                             f_old_tile[ty+2][tx+1] +
                             f_old_tile[ty+0][tx+1]);
      float df = f[IDX(i,j)] - f_old_tile[ty+1][tx+1];
      err = df * df;
    }
  }

  // __shfl_down_sync over the 16 lanes of a row (lanes past 15 read 0:
  // the CUDA form reads the next row's lanes there, whose sums lane 0
  // never takes in).
  for (int offset = 8; offset > 0; offset /= 2) {
    lanes[ty][tx] = err;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx + offset < 16)
      err += lanes[ty][tx + offset];
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  if (tx == 0)
    reduction_array[ty] = err;

  barrier(CLK_LOCAL_MEM_FENCE);

  // Every row reduces the partial sums (OpenCL needs every work-item at
  // a barrier); row 0's is the one CUDA's first warp makes.
  err = reduction_array[tx];
  for (int offset = 8; offset > 0; offset /= 2) {
    lanes[ty][tx] = err;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx + offset < 16)
      err += lanes[ty][tx + offset];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ty == 0 && tx == 0)
    atomic_add_float(error, err);
}
