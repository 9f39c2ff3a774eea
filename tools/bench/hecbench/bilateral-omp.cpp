// From HeCBench (src/bilateral-omp/main.cpp and src/bilateral-cuda/
// reference.h, commit f27000a51; BSD-3-Clause, HeCBench's own LICENSE,
// Zheming Jin): the OpenMP template bilateralFilter, its pragma and body
// unchanged, and the host reference template reference, unchanged. One
// step is one repetition of each of main's three timed loops, R = 3, 6 and
// 9, into the same h_dst, as the CUDA step launches them; the reference of
// the step is therefore reference<9>, the result that step leaves. The
// image and the filter's parameters are the descriptor's
// (tools/bench/hecbench/bilateral.c).
#include <math.h>
#include <omp.h>

template<int R>
void reference(
    float *__restrict in,
    float *__restrict out,
    int w, 
    int h, 
    float a_square,
    float variance_I,
    float variance_spatial)
{
  #pragma omp parallel for collapse(2)
  for (int idx = 0; idx < w; idx++)
    for (int idy = 0; idy < h; idy++) {

      int id = idy*w + idx;
      float I = in[id];
      float res = 0;
      float normalization = 0;

      // window centered at the coordinate (idx, idy)
      #pragma unroll
      for(int i = -R; i <= R; i++)
      #pragma unroll
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
      out[id] = res/normalization;
    }
}



template<int R>
void bilateralFilter(
    const float *__restrict in,
    float *__restrict out,
    int w, 
    int h, 
    float a_square,
    float variance_I,
    float variance_spatial)
{
  #pragma omp target teams distribute parallel for collapse(2) thread_limit(256)
  for (int idy = 0; idy < h; idy++)
    for (int idx = 0; idx < w; idx++) {

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
}

#define BILATERAL_W 370
#define BILATERAL_H 180

// main's parameters: its run line's intensity and spatial variances.
static const float variance_I = 0.5f;
static const float variance_spatial = 0.5f;

extern "C" void hb_bilateral_openmp(void *const buffers[])
{
  const float *h_src = static_cast<const float *>(buffers[0]);
  float *h_dst = static_cast<float *>(buffers[1]);
  const int w = BILATERAL_W, h = BILATERAL_H;
  float a_square = 0.5f / (variance_I * (float)M_PI);

  bilateralFilter<3>(h_src, h_dst, w, h, a_square, variance_I, variance_spatial);
  bilateralFilter<6>(h_src, h_dst, w, h, a_square, variance_I, variance_spatial);
  bilateralFilter<9>(h_src, h_dst, w, h, a_square, variance_I, variance_spatial);
}

extern "C" void hb_bilateral_reference(void *const buffers[])
{
  float *h_src = static_cast<float *>(buffers[0]);
  float *r_dst = static_cast<float *>(buffers[1]);
  const int w = BILATERAL_W, h = BILATERAL_H;
  float a_square = 0.5f / (variance_I * (float)M_PI);

  reference<9>(h_src, r_dst, w, h, a_square, variance_I, variance_spatial);
}
