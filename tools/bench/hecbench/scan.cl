// HeCBench's scan and scan_bcao (src/scan-cuda/main.cu, commit f27000a51;
// BSD-3-Clause, Zheming Jin) in OpenCL C for accel-bench, the int
// instances at N = 128 (64 work-items a group): the same shared arrays,
// the same up-sweep and down-sweep loops with their barriers, the same
// grid-stride loop over the blocks of N elements.
#define N 128
#define T int

// bank conflict aware optimization

#define LOG_MEM_BANKS 5
#define OFFSET(n) ((n) >> LOG_MEM_BANKS)

__kernel void scan_bcao_int_128(const long nblocks,
                                __global T *restrict g_odata,
                                __global const T *restrict g_idata)
{
  __local T temp[2*N];

  for (long bid = get_group_id(0); bid < nblocks; bid += get_num_groups(0))
  {
    __global const T *gi = g_idata + bid * N;
    __global T *go = g_odata + bid * N;

    int thid = get_local_id(0);
    int a = thid;
    int b = a + (N/2);
    int oa = OFFSET(a);
    int ob = OFFSET(b);

    temp[a + oa] = gi[a];
    temp[b + ob] = gi[b];

    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1)
    {
      barrier(CLK_LOCAL_MEM_FENCE);
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
      barrier(CLK_LOCAL_MEM_FENCE);
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
    barrier(CLK_LOCAL_MEM_FENCE); // required

    go[a] = temp[a + oa];
    go[b] = temp[b + ob];
  }
}

__kernel void scan_int_128(const long nblocks,
                           __global T *restrict g_odata,
                           __global const T *restrict g_idata)
{
  __local T temp[N];

  for (long bid = get_group_id(0); bid < nblocks; bid += get_num_groups(0))
  {
    __global const T *gi = g_idata + bid * N;
    __global T *go = g_odata + bid * N;

    int thid = get_local_id(0);
    int offset = 1;
    temp[2*thid]   = gi[2*thid];
    temp[2*thid+1] = gi[2*thid+1];
    for (int d = N >> 1; d > 0; d >>= 1)
    {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (thid < d)
      {
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
      barrier(CLK_LOCAL_MEM_FENCE);
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
