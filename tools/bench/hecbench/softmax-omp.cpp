// HeCBench (github.com/zjin-lcf/HeCBench), BSD-3-Clause: Copyright (c)
// 2020, Argonne National Laboratory, and 2020-, Oak Ridge National
// Laboratory (Zheming Jin). All rights reserved.
//
// From HeCBench (src/softmax-omp/main.cpp, commit f27000a51): one
// repetition of main's timed loop, the target region and its loops
// unchanged (a slice an iteration, as the CUDA softMax has a slice a
// thread).
#include <cmath>
#include <omp.h>

#define BLOCK_SIZE 256

// The sizes of tools/bench/hecbench/softmax.c.
#define HB_SOFTMAX_SLICES 20000
#define HB_SOFTMAX_SLICE_SIZE 784

extern "C" void hb_softmax_openmp(void *const buffers[])
{
  const float *input = static_cast<const float *>(buffers[0]);
  float *output_gpu = static_cast<float *>(buffers[1]);
  int numSlice = HB_SOFTMAX_SLICES;
  int sliceSize = HB_SOFTMAX_SLICE_SIZE;

      #pragma omp target teams distribute parallel for simd thread_limit(BLOCK_SIZE)
      for (int i = 0; i < numSlice; i++) {
        float max_ = input[i * sliceSize];
        for (int j = 1; j < sliceSize; j++) {
          max_ = (max_ < input[i * sliceSize + j]) ? input[i * sliceSize + j] : max_;
        }
        float sum = 0;
        for (int j = 0; j < sliceSize; j++) {
          sum += expf(input[i * sliceSize + j] - max_);
        }
        for (int j = 0; j < sliceSize; j++) {
          output_gpu[i * sliceSize + j] = expf(input[i * sliceSize + j] - max_) / sum;
        }
      }
}
