// HeCBench (github.com/zjin-lcf/HeCBench), BSD-3-Clause: Copyright (c)
// 2020, Argonne National Laboratory, and 2020-, Oak Ridge National
// Laboratory (Zheming Jin). All rights reserved.
//
// From src/softmax-cuda/main.cu (commit f27000a51): the kernel softMax
// (implementation 0, "naive": a thread a slice, max, sum of expf, then
// the normalised expf), its body unchanged; only its declaration line is
// accel's (ACCEL_KERNEL). The program's other kernel, softMax2
// (implementation 1), reduces over a warp with cooperative groups
// (cg::tiled_partition, cg::reduce), which <accel/kernel.h> does not
// offer, so it is not here.
#include <accel/kernel.h>

#define BLOCK_SIZE 256

ACCEL_KERNEL(softMax, (const int, numSlice), (const int, sliceSize),
              (const float*, src), (float*, dest))
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= numSlice) return;
  float max_ = src[i * sliceSize];
  for (int j = 0; j < sliceSize; j++) {
    max_ = max(max_, src[i * sliceSize + j]);
  }
  float sum = 0;
  for (int j = 0; j < sliceSize; j++) {
    sum += expf(src[i * sliceSize + j] - max_);
  }
  for (int j = 0; j < sliceSize; j++) {
    dest[i * sliceSize + j] = expf(src[i * sliceSize + j] - max_) / sum;
  }
}
