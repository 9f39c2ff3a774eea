// HeCBench's laplace3d (src/laplace3d-cuda/kernel.h; BSD-3-Clause, Zheming
// Jin) in OpenCL C for accel-bench: the same 32x8 work-groups marching over
// the k-planes with three planes in local memory, the same halo loads,
// barriers and arithmetic.
#define BLOCK_X 32
#define BLOCK_Y 8
#define IOFF  1
#define JOFF (BLOCK_X+2)
#define KOFF (BLOCK_X+2)*(BLOCK_Y+2)
#define INDEX(i,j,j_off)  (i + (j) * (j_off))

__kernel void laplace3d(int NX, int NY, int NZ, int pitch,
                        __global const float *restrict d_u1,
                        __global float *restrict d_u2)
{
  int   indg, indg_h = 0, indg0 = 0;
  int   i, j, k, ind, ind_h = 0, halo, active;
  float u2, sixth=1.0f/6.0f;

  int NXM1 = NX-1;
  int NYM1 = NY-1;
  int NZM1 = NZ-1;

  __local float u1[3*KOFF];

  const int threadIdx_x = get_local_id(0);
  const int threadIdx_y = get_local_id(1);
  const int blockIdx_x = get_group_id(0);
  const int blockIdx_y = get_group_id(1);

  k    = threadIdx_x + threadIdx_y*BLOCK_X;
  halo = k < 2*(BLOCK_X+BLOCK_Y+2);

  if (halo) {
    if (threadIdx_y<2) {               // y-halos (coalesced)
      i = threadIdx_x;
      j = threadIdx_y*(BLOCK_Y+1) - 1;
    }
    else {                             // x-halos (not coalesced)
      i = (k%2)*(BLOCK_X+1) - 1;
      j =  k/2 - BLOCK_X - 1;
    }

    ind_h  = INDEX(i+1,j+1,JOFF) + KOFF;

    i      = INDEX(i,blockIdx_x,BLOCK_X);   // global indices
    j      = INDEX(j,blockIdx_y,BLOCK_Y);
    indg_h = INDEX(i,j,pitch);

    halo   =  (i>=0) && (i<NX) && (j>=0) && (j<NY);
  }

  i    = threadIdx_x;
  j    = threadIdx_y;
  ind  = INDEX(i+1,j+1,JOFF) + KOFF;

  i    = INDEX(i,blockIdx_x,BLOCK_X);     // global indices
  j    = INDEX(j,blockIdx_y,BLOCK_Y);
  indg = INDEX(i,j,pitch);

  active = (i<NX) && (j<NY);

  if (active) u1[ind+KOFF] = d_u1[indg];
  if (halo) u1[ind_h+KOFF] = d_u1[indg_h];

  for (k=0; k<NZ; k++) {

    if (active) {
      indg0 = indg;
      indg  = INDEX(indg,NY,pitch);
      u1[ind-KOFF] = u1[ind];
      u1[ind]      = u1[ind+KOFF];
      if (k<NZM1)
        u1[ind+KOFF] = d_u1[indg];
    }

    if (halo) {
      indg_h = INDEX(indg_h,NY,pitch);
      u1[ind_h-KOFF] = u1[ind_h];
      u1[ind_h]      = u1[ind_h+KOFF];
      if (k<NZM1)
        u1[ind_h+KOFF] = d_u1[indg_h];
    }

    barrier(CLK_LOCAL_MEM_FENCE);

    if (active) {
      if (i==0 || i==NXM1 || j==0 || j==NYM1 || k==0 || k==NZM1) {
        u2 = u1[ind];          // Dirichlet b.c.'s
      }
      else {
        u2 = ( u1[ind-IOFF] + u1[ind+IOFF]
             + u1[ind-JOFF] + u1[ind+JOFF]
             + u1[ind-KOFF] + u1[ind+KOFF] ) * sixth;
      }
      d_u2[indg0] = u2;
    }

    barrier(CLK_LOCAL_MEM_FENCE);

  }
}
