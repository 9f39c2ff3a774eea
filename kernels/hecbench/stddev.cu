/*
 * Copyright (c) 2018-2020, NVIDIA CORPORATION.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */


// From HeCBench (github.com/zjin-lcf/HeCBench, src/stddev-cuda/main.cu,
// commit f27000a51): the kernels sampleKernel and sopKernel, their bodies
// unchanged; only each declaration line is accel's (ACCEL_KERNEL_TEMPLATE
// for `template <...> __global__ void`). The instances are the ones
// HeCBench's stddev<float, int> launches: sopKernel<float, int, 256, 32>
// (a column-wise sum of squares, atomicAdd into a shared array, then
// into the result) and sampleKernel<float, int>.
#include <accel/kernel.h>

// final step for the deviation of a sample
ACCEL_KERNEL_TEMPLATE((typename Type, typename IdxType), sampleKernel,
                      (Type *, std), (IdxType, D), (IdxType, N)) {
  IdxType i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < D) std[i] = sqrtf(std[i] / N);
}

// sum of products using atomics
ACCEL_KERNEL_TEMPLATE((typename Type, typename IdxType, int TPB, int ColsPerBlk = 32), sopKernel,
        (Type *__restrict__, std), 
  (const Type *__restrict__, data), 
  (IdxType, D), 
  (IdxType, N)) 
{
  const int RowsPerBlkPerIter = TPB / ColsPerBlk;
  IdxType thisColId = threadIdx.x % ColsPerBlk;
  IdxType thisRowId = threadIdx.x / ColsPerBlk;
  IdxType colId = thisColId + ((IdxType)blockIdx.y * ColsPerBlk);
  IdxType rowId = thisRowId + ((IdxType)blockIdx.x * RowsPerBlkPerIter);
  Type thread_data = Type(0);
  const IdxType stride = RowsPerBlkPerIter * gridDim.x;
  for (IdxType i = rowId; i < N; i += stride) {
    Type val = (colId < D) ? data[i * D + colId] : Type(0);
    thread_data += val * val;
  }
  __shared__ Type sstd[ColsPerBlk];
  if (threadIdx.x < ColsPerBlk) sstd[threadIdx.x] = Type(0);
  __syncthreads();

  atomicAdd(sstd + thisColId, thread_data);
  __syncthreads();

  if (threadIdx.x < ColsPerBlk) atomicAdd(std + colId, sstd[thisColId]);
}

// The instances accel-bench launches (tools/bench/hecbench/stddev.c).
ACCEL_KERNEL_INSTANCE(sopKernel, (float, int, 256, 32), sopKernel_float_int_256_32,
        (float *__restrict__, std), 
  (const float *__restrict__, data), 
  (int, D), 
  (int, N))
ACCEL_KERNEL_INSTANCE(sampleKernel, (float, int), sampleKernel_float_int,
                      (float *, std), (int, D), (int, N))
