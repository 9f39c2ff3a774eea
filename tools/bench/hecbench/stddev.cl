// HeCBench's sopKernel<float, int, 256, 32> and sampleKernel<float, int>
// (src/stddev-cuda/main.cu, commit f27000a51; Apache-2.0, Copyright (c)
// 2018-2020, NVIDIA CORPORATION) in OpenCL C for accel-bench: the same
// indexing, loop and arithmetic; CUDA's atomicAdd on a float, which
// OpenCL 1.2 lacks, is a compare and swap, on local and on global memory.
#define Type float
#define IdxType int
#define TPB 256
#define ColsPerBlk 32

inline void atomic_add_local_float(volatile __local float *p, float v)
{
  union { unsigned int u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atomic_cmpxchg((volatile __local unsigned int *)p, old.u, sum.u) != old.u);
}

inline void atomic_add_global_float(volatile __global float *p, float v)
{
  union { unsigned int u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atomic_cmpxchg((volatile __global unsigned int *)p, old.u, sum.u) != old.u);
}

// final step for the deviation of a sample
__kernel void sampleKernel_float_int(__global Type *std, IdxType D, IdxType N) {
  IdxType i = get_local_size(0) * get_group_id(0) + get_local_id(0);
  if (i < D) std[i] = sqrt(std[i] / N);
}

// sum of products using atomics
__kernel void sopKernel_float_int_256_32(
        __global Type *restrict std,
  __global const Type *restrict data,
  IdxType D,
  IdxType N)
{
  const int RowsPerBlkPerIter = TPB / ColsPerBlk;
  IdxType thisColId = get_local_id(0) % ColsPerBlk;
  IdxType thisRowId = get_local_id(0) / ColsPerBlk;
  IdxType colId = thisColId + ((IdxType)get_group_id(1) * ColsPerBlk);
  IdxType rowId = thisRowId + ((IdxType)get_group_id(0) * RowsPerBlkPerIter);
  Type thread_data = (Type)(0);
  const IdxType stride = RowsPerBlkPerIter * get_num_groups(0);
  for (IdxType i = rowId; i < N; i += stride) {
    Type val = (colId < D) ? data[i * D + colId] : (Type)(0);
    thread_data += val * val;
  }
  __local Type sstd[ColsPerBlk];
  if (get_local_id(0) < ColsPerBlk) sstd[get_local_id(0)] = (Type)(0);
  barrier(CLK_LOCAL_MEM_FENCE);

  atomic_add_local_float(sstd + thisColId, thread_data);
  barrier(CLK_LOCAL_MEM_FENCE);

  if (get_local_id(0) < ColsPerBlk) atomic_add_global_float(std + colId, sstd[thisColId]);
}
