/*
  Reference
  Chapter 16 in Programming massively parallel processors,
  A hands-on approach (D. Kirk and W. Hwu)
 */
// From HeCBench (src/convolution3D-omp/main.cpp, commit f27000a51;
// BSD-3-Clause, HeCBench's own LICENSE, Zheming Jin): conv3D's timed loop,
// its pragma and body unchanged, with repeat = 3: the CUDA step launches
// conv3d_s1, conv3d_s2 and conv3d_s3 once each (the same convolution over
// three grid organizations), and the OpenMP version has one loop for all
// three, so a step here is three of its repetitions. The host reference,
// reference<float>, is the file's own, unchanged. The sizes are the
// descriptor's (tools/bench/hecbench/convolution3D.c).
#include <omp.h>

#define TILE_WIDTH 16

#define II(n,c,h,w) ((n)*C*Hin*Win+(c)*Hin*Win+(h)*Win+w)
#define WI(n,c,h,w) ((n)*C*K*K+(c)*K*K+(h)*K+w)
#define OI(n,c,h,w) ((n)*M*Hout*Wout+(c)*Hout*Wout+(h)*Wout+w)


// Hin = Hout-1+K; max(h+p) is Hin - 1 as max(h) = Hout-1 and max(p) = K-1
template <typename T>
void reference(const T * __restrict__ X,
               const T * __restrict__ W,
                     T * __restrict__ Y,
               const int N,
               const int M,
               const int C,
               const int K,
               const int Hin,
               const int Win,
               const int Hout,
               const int Wout)
{
  for(int n = 0; n < N; n++)
    for(int m = 0; m < M; m++)
      for(int h = 0; h < Hout; h++)
        for(int w = 0; w < Wout; w++) {
          Y[OI(n, m, h, w)] = 0;
          for(int c = 0; c < C; c++)
            for(int p = 0; p < K; p++)
              for(int q = 0; q < K; q++)
                Y[OI(n, m, h, w)] += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];
        }
}

// The problem: batch N, C input channels, M output feature maps, Hin x Win
// inputs, K x K filters.
#define CONV_N 1
#define CONV_C 96
#define CONV_M 256
#define CONV_HIN 26
#define CONV_WIN 26
#define CONV_K 5

extern "C" void hb_convolution3D_openmp(void *const buffers[])
{
  typedef float T;
  const int N = CONV_N, C = CONV_C, M = CONV_M;
  const int Hin = CONV_HIN, Win = CONV_WIN, K = CONV_K;
  const int Hout = Hin-K+1;
  const int Wout = Win-K+1;
  const int repeat = 3;
  const T *X = static_cast<const T *>(buffers[0]);
  const T *W = static_cast<const T *>(buffers[1]);
  T *Y = static_cast<T *>(buffers[2]);

    for (int i = 0; i < repeat; i++) {
      #pragma omp target teams distribute parallel for collapse(4) thread_limit(TILE_WIDTH*TILE_WIDTH)
      for(int n = 0; n < N; n++)
        for(int m = 0; m < M; m++)
          for(int h = 0; h < Hout; h++)
            for(int w = 0; w < Wout; w++) {
              T s = 0;
              for(int c = 0; c < C; c++)
                for(int p = 0; p < K; p++)
                  for(int q = 0; q < K; q++)
                    s += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];
              Y[OI(n, m, h, w)] = s;
            }
    }

}

extern "C" void hb_convolution3D_reference(void *const buffers[])
{
  const int Hout = CONV_HIN-CONV_K+1;
  const int Wout = CONV_WIN-CONV_K+1;

  reference(static_cast<const float *>(buffers[0]),
            static_cast<const float *>(buffers[1]),
            static_cast<float *>(buffers[2]), CONV_N, CONV_M, CONV_C, CONV_K,
            CONV_HIN, CONV_WIN, Hout, Wout);
}
