// HeCBench's softMax (src/softmax-cuda/main.cu, commit f27000a51;
// BSD-3-Clause, Zheming Jin) in OpenCL C for accel-bench: a work-item a
// slice, 256 a work-group, the same three loops and arithmetic (CUDA's
// max of two floats is fmax).
__kernel void softMax(const int numSlice, const int sliceSize,
                      __global const float* src, __global float* dest)
{
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= numSlice) return;
  float max_ = src[i * sliceSize];
  for (int j = 0; j < sliceSize; j++) {
    max_ = fmax(max_, src[i * sliceSize + j]);
  }
  float sum = 0;
  for (int j = 0; j < sliceSize; j++) {
    sum += exp(src[i * sliceSize + j] - max_);
  }
  for (int j = 0; j < sliceSize; j++) {
    dest[i * sliceSize + j] = exp(src[i * sliceSize + j] - max_) / sum;
  }
}
