// HeCBench's gd kernels (src/gd-cuda/main.cu; BSD-3-Clause, Copyright (c)
// 2020 Argonne National Laboratory, 2020- Oak Ridge National Laboratory
// (Zheming Jin)) in OpenCL C for accel-bench: compute, and the update
// without the L2 norm (kernels/hecbench/gd.cu says why), the same loops
// and arithmetic in the same order. CUDA's atomicAdd on a float, which
// OpenCL 1.2 lacks, is a compare and swap; on an int it is atomic_add.

inline void atomic_add_float(volatile __global float *p, float v)
{
  union { unsigned int u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atomic_cmpxchg((volatile __global unsigned int *)p, old.u, sum.u) != old.u);
}

__kernel void compute(__global const float *restrict x,
                      __global float *restrict grad,
                      __global const int *restrict A_row_ptr,
                      __global const int *restrict A_col_index,
                      __global const float *restrict A_value,
                      __global const int *restrict A_y_label,
                      __global float *restrict total_obj_val,
                      __global int *restrict correct,
                      const int m)
{
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);

  if (i < m) {
    // Simple sparse matrix multiply x' = A * x
    float xp = 0.f;
    for( int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      xp += A_value[j] * x[A_col_index[j]];
    }

    // compute objective
    float v = log(1.f + exp(-xp * A_y_label[i]));
    atomic_add_float(total_obj_val, v);

    // compute errors
    float prediction = 1.f / (1.f + exp(-xp));
    int t = (prediction >= 0.5f) ? 1 : -1;
    if (A_y_label[i] == t) atomic_add(correct, 1);

    // compute gradient at x
    float accum = exp(-A_y_label[i] * xp);
    accum = accum / (1.f + accum);
    for(int j = A_row_ptr[i]; j < A_row_ptr[i+1]; ++j){
      float temp = -accum * A_value[j] * A_y_label[i];
      atomic_add_float(&grad[A_col_index[j]], temp);
    }
  }
}

__kernel void update(__global float *restrict x,
                     __global const float *restrict grad,
                     const int m, const int n, const float lambda,
                     const float alpha)
{
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) {
    float g = grad[i] / (float)m + lambda * x[i];
    x[i] = x[i] - alpha * g;
  }
}
