/*
  Reference
  Chapter 16 in Programming massively parallel processors,
  A hands-on approach (D. Kirk and W. Hwu)
 */
// From HeCBench (github.com/zjin-lcf/HeCBench, src/convolution3D-cuda/
// main.cu, commit f27000a51; BSD-3-Clause, HeCBench's own LICENSE, Zheming
// Jin): the kernel templates conv3d_s1, conv3d_s2 and conv3d_s3 and the
// index macros they use, their bodies unchanged; only each declaration is
// accel's (ACCEL_KERNEL_TEMPLATE), and the float instances main launches
// are ACCEL_KERNEL_INSTANCE (conv3d_s1_f32 and so on: an instance needs a
// name of its own beside the template's). The sizes are kernel arguments,
// so no -D is needed.
#include <accel/kernel.h>

#define TILE_WIDTH 16

#define II(n,c,h,w) ((n)*C*Hin*Win+(c)*Hin*Win+(h)*Win+w)
#define WI(n,c,h,w) ((n)*C*K*K+(c)*K*K+(h)*K+w)
#define OI(n,c,h,w) ((n)*M*Hout*Wout+(c)*Hout*Wout+(h)*Wout+w)

ACCEL_KERNEL_TEMPLATE((typename T), conv3d_s1,
               (const T * __restrict__, X),
               (const T * __restrict__, W),
               (      T * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
{
  int n = blockIdx.x;
  int m = blockIdx.y;
  int h = blockIdx.z / W_grid * TILE_WIDTH + threadIdx.y;
  int w = blockIdx.z % W_grid * TILE_WIDTH + threadIdx.x;
  if (h < Hout && w < Wout) {
    T s = 0;
    for (int c = 0; c < C; c++) {
      for (int p = 0; p < K; p++) {
        for (int q = 0; q < K; q++) {
          s += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];
        }
      }
    }
    Y[OI(n, m, h, w)] = s;
  }
}

ACCEL_KERNEL_TEMPLATE((typename T), conv3d_s2,
               (const T * __restrict__, X),
               (const T * __restrict__, W),
               (      T * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
{
  int m = blockIdx.x;
  int h = blockIdx.y / W_grid * TILE_WIDTH + threadIdx.y;
  int w = blockIdx.y % W_grid * TILE_WIDTH + threadIdx.x;
  int n = blockIdx.z;
  if (h < Hout && w < Wout) {
    T s = 0;
    for (int c = 0; c < C; c++) {
      for (int p = 0; p < K; p++) {
        for (int q = 0; q < K; q++) {
          s += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];
        }
      }
    }
    Y[OI(n, m, h, w)] = s;
  }
}

ACCEL_KERNEL_TEMPLATE((typename T), conv3d_s3,
               (const T * __restrict__, X),
               (const T * __restrict__, W),
               (      T * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
{
  int h = blockIdx.x / W_grid * TILE_WIDTH + threadIdx.y;
  int w = blockIdx.x % W_grid * TILE_WIDTH + threadIdx.x;
  int n = blockIdx.y;
  int m = blockIdx.z;
  if (h < Hout && w < Wout) {
    T s = 0;
    for (int c = 0; c < C; c++) {
      for (int p = 0; p < K; p++) {
        for (int q = 0; q < K; q++) {
          s += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];
        }
      }
    }
    Y[OI(n, m, h, w)] = s;
  }
}

ACCEL_KERNEL_INSTANCE(conv3d_s1, (float), conv3d_s1_f32,
               (const float * __restrict__, X),
               (const float * __restrict__, W),
               (      float * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
ACCEL_KERNEL_INSTANCE(conv3d_s2, (float), conv3d_s2_f32,
               (const float * __restrict__, X),
               (const float * __restrict__, W),
               (      float * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
ACCEL_KERNEL_INSTANCE(conv3d_s3, (float), conv3d_s3_f32,
               (const float * __restrict__, X),
               (const float * __restrict__, W),
               (      float * __restrict__, Y),
               (const int, C),
               (const int, M),
               (const int, K),
               (const int, Hin),
               (const int, Win),
               (const int, Hout),
               (const int, Wout),
               (const int, W_grid))
