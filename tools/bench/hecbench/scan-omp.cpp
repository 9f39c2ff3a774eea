// HeCBench (github.com/zjin-lcf/HeCBench), BSD-3-Clause: Copyright (c)
// 2020, Argonne National Laboratory, and 2020-, Oak Ridge National
// Laboratory (Zheming Jin). All rights reserved.
//
// From HeCBench (src/scan-omp/main.cpp, commit f27000a51): one repetition
// of runTest<int, 128>'s two timed loops, the scan and the bank-conflict
// aware scan, their target regions and bodies unchanged. HeCBench writes
// both into `out`; here the first goes to buffers[1] and the second to
// buffers[2] (out is pointed at each in turn), so that both are checked.
//
// The regions need a team of exactly N/2 threads (omp_get_thread_num is
// the element pair, and the barriers are the kernel's __syncthreads),
// which a GPU gives through thread_limit(N/2). On the host, GCC's libgomp
// runs the num_blocks teams one after another, and a parallel region in
// a target region takes the host device's default thread count (the
// CPUs, 2 here; omp_set_num_threads outside the target region does not
// reach it), capped by thread_limit, which computes a wrong scan. The one
// change: each `#pragma omp parallel` has num_threads(N/2), so the host
// runs every team as 64 OpenMP threads on the CPUs there are, with the
// code's barriers; that is slow (oversubscribed barriers), and is what
// this OpenMP version does on a CPU.
#include <cstdint>
#include <omp.h>

// bank conflict aware optimization
#define LOG_MEM_BANKS 5
#define OFFSET(n) ((n) >> LOG_MEM_BANKS)

template<typename T, int N>
static void scan_step(const int64_t num_blocks, T *in, T *out_scan, T *out_bcao)
{
    T *out = out_scan;
      #pragma omp target teams num_teams(num_blocks) thread_limit(N/2)
      {
        T temp[N];
        #pragma omp parallel num_threads(N/2)
        {
          for (int64_t bid = omp_get_team_num(); bid < num_blocks; bid += omp_get_num_teams())
          {
            T *t_in  = in + bid * N;
            T *t_out = out + bid * N;

            int thid = omp_get_thread_num();
            int offset = 1;

            temp[2*thid]   = t_in[2*thid];
            temp[2*thid+1] = t_in[2*thid+1];

            for (int d = N >> 1; d > 0; d >>= 1)
            {
              #pragma omp barrier
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
              #pragma omp barrier
              if (thid < d)
              {
                int ai = offset*(2*thid+1)-1;
                int bi = offset*(2*thid+2)-1;
                T t = temp[ai];
                temp[ai] = temp[bi];
                temp[bi] += t;
              }
            }
            t_out[2*thid] = temp[2*thid];
            t_out[2*thid+1] = temp[2*thid+1];
	  }
	}
      }
    out = out_bcao;
      #pragma omp target teams num_teams(num_blocks) thread_limit(N/2)
      {
        T temp[2*N];
        #pragma omp parallel num_threads(N/2)
        {
          for (int64_t bid = omp_get_team_num(); bid < num_blocks; bid += omp_get_num_teams())
          {
            T *t_in  = in + bid * N;
            T *t_out = out + bid * N;

            int thid = omp_get_thread_num();
            int a = thid;
            int b = a + (N/2);
            int oa = OFFSET(a);
            int ob = OFFSET(b);

            temp[a + oa] = t_in[a];
            temp[b + ob] = t_in[b];

            int offset = 1;
            for (int d = N >> 1; d > 0; d >>= 1)
            {
              #pragma omp barrier
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
              #pragma omp barrier
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
            #pragma omp barrier // required

            t_out[a] = temp[a + oa];
            t_out[b] = temp[b + ob];
          }
        }
      }
}

extern "C" void hb_scan_openmp(void *const buffers[])
{
  // HB_SCAN_ELEMENTS elements (tools/bench/hecbench/scan.c), a multiple of N.
  const int64_t num_blocks = 16384 / 128;

  scan_step<int, 128>(num_blocks, static_cast<int *>(buffers[0]),
                      static_cast<int *>(buffers[1]),
                      static_cast<int *>(buffers[2]));
}
