// HeCBench (github.com/zjin-lcf/HeCBench), BSD-3-Clause: Copyright (c)
// 2020, Argonne National Laboratory, and 2020-, Oak Ridge National
// Laboratory (Zheming Jin). All rights reserved.
//
// From src/scan-cuda/main.cu (commit f27000a51): the kernels scan and
// scan_bcao (a work-efficient Blelloch exclusive scan of N elements a
// block, N/2 threads, barriers inside the up-sweep and down-sweep loops;
// scan_bcao pads the shared array against bank conflicts), their bodies
// unchanged; only each declaration line is accel's (ACCEL_KERNEL_TEMPLATE
// for `template<typename T, int N> __global__ void`). HeCBench's main
// runs them for char, short, int and long at N = 128 ... 2048; the suite
// launches the int instances at N = 128 (64 threads a block), the
// instances below. int, not float: HeCBench instantiates no float scan,
// and its check is an exact comparison. N = 128, the smallest HeCBench
// runs, because the OpenMP version runs each block as a team of N/2 host
// threads (tools/bench/hecbench/scan-omp.cpp).
#include <accel/kernel.h>

// bank conflict aware optimization

#define LOG_MEM_BANKS 5
#define OFFSET(n) ((n) >> LOG_MEM_BANKS)

// N is the number of elements to scan in a thread block
ACCEL_KERNEL_TEMPLATE((typename T, int N), scan_bcao,
  (const int64_t, nblocks),
  (T *__restrict__, g_odata),
  (const T *__restrict__, g_idata))
{
  __shared__ T temp[2*N];

  for (int64_t bid = blockIdx.x; bid < nblocks; bid += gridDim.x)
  {
    auto gi = g_idata + bid * N;
    auto go = g_odata + bid * N;

    int thid = threadIdx.x;
    int a = thid;
    int b = a + (N/2);
    int oa = OFFSET(a);
    int ob = OFFSET(b);

    temp[a + oa] = gi[a];
    temp[b + ob] = gi[b];

    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1)
    {
      __syncthreads();
      if (thid < d)
      {
        int ai = offset*(2*thid+1)-1;
        int bi = offset*(2*thid+2)-1;
        ai += OFFSET(ai);
        bi += OFFSET(bi);
        temp[bi] += temp[ai];
      }
      offset *= 2;
    }

    if (thid == 0) temp[N-1+OFFSET(N-1)] = 0; // clear the last elem
    for (int d = 1; d < N; d *= 2) // traverse down
    {
      offset >>= 1;
      __syncthreads();
      if (thid < d)
      {
        int ai = offset*(2*thid+1)-1;
        int bi = offset*(2*thid+2)-1;
        ai += OFFSET(ai);
        bi += OFFSET(bi);
        T t = temp[ai];
        temp[ai] = temp[bi];
        temp[bi] += t;
      }
    }
    __syncthreads(); // required

    go[a] = temp[a + oa];
    go[b] = temp[b + ob];
  }
}

ACCEL_KERNEL_TEMPLATE((typename T, int N), scan,
  (const int64_t, nblocks),
  (T *__restrict__, g_odata),
  (const T *__restrict__, g_idata))
{
  __shared__ T temp[N];

  for (int64_t bid = blockIdx.x; bid < nblocks; bid += gridDim.x)
  {
    auto gi = g_idata + bid * N;
    auto go = g_odata + bid * N;

    int thid = threadIdx.x;
    int offset = 1;
    temp[2*thid]   = gi[2*thid];
    temp[2*thid+1] = gi[2*thid+1];
    for (int d = N >> 1; d > 0; d >>= 1)
    {
      __syncthreads();
      if (thid < d)
      {
        // e.g.
        // thread 0: ai = 0, bi = 1 (offset = 1) d = 4
        // thread 1: ai = 2, bi = 3 (offset = 1) d = 4
        // thread 2: ai = 4, bi = 5 (offset = 1) d = 4
        // thread 3: ai = 6, bi = 7 (offset = 1) d = 4
        // thread 0: ai = 1, bi = 3 (offset = 2) d = 2
        // thread 1: ai = 5, bi = 7 (offset = 2) d = 2
        // thread 0: ai = 3, bi = 7 (offset = 4) d = 1
        int ai = offset*(2*thid+1)-1;
        int bi = offset*(2*thid+2)-1;
        temp[bi] += temp[ai];
      }
      offset *= 2;
    }

    if (thid == 0) temp[N-1] = 0; // clear the last elem
    for (int d = 1; d < N; d *= 2) // traverse down
    {
      offset >>= 1;
      __syncthreads();
      if (thid < d)
      {
        int ai = offset*(2*thid+1)-1;
        int bi = offset*(2*thid+2)-1;
        T t = temp[ai];
        temp[ai] = temp[bi];
        temp[bi] += t;
      }
    }
    go[2*thid] = temp[2*thid];
    go[2*thid+1] = temp[2*thid+1];
  }
}

// The instances accel-bench launches (tools/bench/hecbench/scan.c).
ACCEL_KERNEL_INSTANCE(scan, (int, 128), scan_int_128,
  (const int64_t, nblocks),
  (int *__restrict__, g_odata),
  (const int *__restrict__, g_idata))
ACCEL_KERNEL_INSTANCE(scan_bcao, (int, 128), scan_bcao_int_128,
  (const int64_t, nblocks),
  (int *__restrict__, g_odata),
  (const int *__restrict__, g_idata))
