/*
  Reference
  Chapter 16 in Programming massively parallel processors,
  A hands-on approach (D. Kirk and W. Hwu)
 */
// HeCBench's conv3d_s1, conv3d_s2 and conv3d_s3 (src/convolution3D-cuda/
// main.cu; BSD-3-Clause, Zheming Jin), their float instances, in OpenCL C
// for accel-bench: the same grid organizations and arithmetic in the same
// order, in 16x16 work-groups.
#define TILE_WIDTH 16

#define II(n,c,h,w) ((n)*C*Hin*Win+(c)*Hin*Win+(h)*Win+w)
#define WI(n,c,h,w) ((n)*C*K*K+(c)*K*K+(h)*K+w)
#define OI(n,c,h,w) ((n)*M*Hout*Wout+(c)*Hout*Wout+(h)*Wout+w)

#define CONV3D_PARAMS                                                        \
  __global const float *restrict X, __global const float *restrict W,        \
  __global float *restrict Y, const int C, const int M, const int K,         \
  const int Hin, const int Win, const int Hout, const int Wout,              \
  const int W_grid

// The body the three kernels share once each has found n, m, h and w.
#define CONV3D_BODY                                                          \
  if (h < Hout && w < Wout) {                                                \
    float s = 0;                                                             \
    for (int c = 0; c < C; c++) {                                            \
      for (int p = 0; p < K; p++) {                                          \
        for (int q = 0; q < K; q++) {                                        \
          s += X[II(n, c, h+p, w+q)] * W[WI(m, c, p, q)];                    \
        }                                                                    \
      }                                                                      \
    }                                                                        \
    Y[OI(n, m, h, w)] = s;                                                   \
  }

__kernel void conv3d_s1_f32(CONV3D_PARAMS)
{
  int n = get_group_id(0);
  int m = get_group_id(1);
  int h = get_group_id(2) / W_grid * TILE_WIDTH + get_local_id(1);
  int w = get_group_id(2) % W_grid * TILE_WIDTH + get_local_id(0);
  CONV3D_BODY
}

__kernel void conv3d_s2_f32(CONV3D_PARAMS)
{
  int m = get_group_id(0);
  int h = get_group_id(1) / W_grid * TILE_WIDTH + get_local_id(1);
  int w = get_group_id(1) % W_grid * TILE_WIDTH + get_local_id(0);
  int n = get_group_id(2);
  CONV3D_BODY
}

__kernel void conv3d_s3_f32(CONV3D_PARAMS)
{
  int h = get_group_id(0) / W_grid * TILE_WIDTH + get_local_id(1);
  int w = get_group_id(0) % W_grid * TILE_WIDTH + get_local_id(0);
  int n = get_group_id(1);
  int m = get_group_id(2);
  CONV3D_BODY
}
