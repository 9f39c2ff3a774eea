// HeCBench's bilateral (src/bilateral-cuda/main.cu; BSD-3-Clause, Zheming
// Jin) in OpenCL C for accel-bench: the template's body once a radius
// (OpenCL C has no templates: a macro stamps out R = 3, 6 and 9), the same
// 16x16 work-groups and the same arithmetic in the same order; expf is
// OpenCL's exp of a float.
#define BILATERAL_FILTER(R)                                                   \
__kernel void bilateralFilter_##R(                                            \
    __global const float *restrict in,                                        \
    __global float *restrict out,                                             \
    int w,                                                                    \
    int h,                                                                    \
    float a_square,                                                           \
    float variance_I,                                                         \
    float variance_spatial)                                                   \
{                                                                             \
  const int idx = get_group_id(0)*get_local_size(0) + get_local_id(0);        \
  const int idy = get_group_id(1)*get_local_size(1) + get_local_id(1);        \
                                                                              \
  if(idx >= w || idy >= h) return;                                            \
                                                                              \
  int id = idy*w + idx;                                                       \
  float I = in[id];                                                           \
  float res = 0;                                                              \
  float normalization = 0;                                                    \
                                                                              \
  for(int i = -R; i <= R; i++) {                                              \
    for(int j = -R; j <= R; j++) {                                            \
                                                                              \
      int idk = idx+i;                                                        \
      int idl = idy+j;                                                        \
                                                                              \
      if( idk < 0) idk = -idk;                                                \
      if( idl < 0) idl = -idl;                                                \
      if( idk > w - 1) idk = w - 1 - i;                                       \
      if( idl > h - 1) idl = h - 1 - j;                                       \
                                                                              \
      int id_w = idl*w + idk;                                                 \
      float I_w = in[id_w];                                                   \
                                                                              \
      float range = -(I-I_w) * (I-I_w) / (2.f * variance_I);                  \
                                                                              \
      float spatial = -((idk-idx)*(idk-idx) + (idl-idy)*(idl-idy)) /          \
                      (2.f * variance_spatial);                               \
                                                                              \
      float weight = a_square * exp(spatial + range);                         \
                                                                              \
      normalization += weight;                                                \
      res += (I_w * weight);                                                  \
    }                                                                         \
  }                                                                           \
  out[id] = res/normalization;                                                \
}

BILATERAL_FILTER(3)
BILATERAL_FILTER(6)
BILATERAL_FILTER(9)
