// From HeCBench (github.com/zjin-lcf/HeCBench, src/bilateral-cuda/main.cu,
// commit f27000a51; BSD-3-Clause, HeCBench's own LICENSE, Zheming Jin;
// HeCBench's README names its origin as jstraub/cudaPcl): the kernel
// template bilateralFilter, its body unchanged; only its declaration is
// accel's (ACCEL_KERNEL_TEMPLATE), and the three instances main launches,
// R = 3, 6 and 9, are ACCEL_KERNEL_INSTANCE (bilateralFilter_3 and so on:
// an instance needs a name of its own beside the template's). LOOP_UNROLL
// is not defined, as HeCBench's Makefile does not define it. The sizes are
// kernel arguments, so no -D is needed.
#include <accel/kernel.h>

ACCEL_KERNEL_TEMPLATE((int R), bilateralFilter,
    (const float *__restrict__, in),
    (float *__restrict__, out),
    (int, w),
    (int, h),
    (float, a_square),
    (float, variance_I),
    (float, variance_spatial))
{
  const int idx = blockIdx.x*blockDim.x + threadIdx.x;
  const int idy = blockIdx.y*blockDim.y + threadIdx.y;

  if(idx >= w || idy >= h) return;

  int id = idy*w + idx;
  float I = in[id];
  float res = 0;
  float normalization = 0;

  // window centered at the coordinate (idx, idy)
#ifdef LOOP_UNROLL
  #pragma unroll
#endif
  for(int i = -R; i <= R; i++) {
#ifdef LOOP_UNROLL
    #pragma unroll
#endif
    for(int j = -R; j <= R; j++) {

      int idk = idx+i;
      int idl = idy+j;

      // mirror edges
      if( idk < 0) idk = -idk;
      if( idl < 0) idl = -idl;
      if( idk > w - 1) idk = w - 1 - i;
      if( idl > h - 1) idl = h - 1 - j;

      int id_w = idl*w + idk;
      float I_w = in[id_w];

      // range kernel for smoothing differences in intensities
      float range = -(I-I_w) * (I-I_w) / (2.f * variance_I);

      // spatial (or domain) kernel for smoothing differences in coordinates
      float spatial = -((idk-idx)*(idk-idx) + (idl-idy)*(idl-idy)) /
                      (2.f * variance_spatial);

      // the weight is assigned using the spatial closeness (using the spatial kernel) 
      // and the intensity difference (using the range kernel)
      float weight = a_square * expf(spatial + range);

      normalization += weight;
      res += (I_w * weight);
    }
  }
  out[id] = res/normalization;
}

ACCEL_KERNEL_INSTANCE(bilateralFilter, (3), bilateralFilter_3,
    (const float *__restrict__, in),
    (float *__restrict__, out),
    (int, w),
    (int, h),
    (float, a_square),
    (float, variance_I),
    (float, variance_spatial))

ACCEL_KERNEL_INSTANCE(bilateralFilter, (6), bilateralFilter_6,
    (const float *__restrict__, in),
    (float *__restrict__, out),
    (int, w),
    (int, h),
    (float, a_square),
    (float, variance_I),
    (float, variance_spatial))

ACCEL_KERNEL_INSTANCE(bilateralFilter, (9), bilateralFilter_9,
    (const float *__restrict__, in),
    (float *__restrict__, out),
    (int, w),
    (int, h),
    (float, a_square),
    (float, variance_I),
    (float, variance_spatial))
