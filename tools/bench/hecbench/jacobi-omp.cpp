// Copyright (c) 2021, NVIDIA CORPORATION.
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// From HeCBench (src/jacobi-omp/main.cpp, commit f27000a51): one iteration
// of main's loop, its two loops and their pragmas unchanged; the error sum
// is left in buffers[2], where the CUDA kernel adds it.
#include <cmath>
#include <omp.h>

// A multiple of thread block size
#define N 2048

#define IDX(i, j) ((i) + (j) * N)

extern "C" void hb_jacobi_openmp(void *const buffers[])
{
  float *f = static_cast<float *>(buffers[0]);
  float *f_old = static_cast<float *>(buffers[1]);
  float error;

    // Initialize error to zero (we'll add to it the following step)
    // Perform a Jacobi relaxation step
    error = 0.f;
    
    #pragma omp target teams distribute parallel for collapse(2) \
     reduction(+:error) num_teams(N*N/256) thread_limit(256) map(tofrom: error)
    for (int i = 1; i <= N-2; i++) {
      for (int j = 1; j <= N-2; j++) {
        float t = 0.25f * (f_old[IDX(i-1,j)] +
                           f_old[IDX(i+1,j)] +
                           f_old[IDX(i,j-1)] +
                           f_old[IDX(i,j+1)]);
        float df = t - f_old[IDX(i, j)];
        f[IDX(i,j)] = t;
        error += df * df;
      }
    }
      
    // Swap the old data and the new data
    // We're doing this explicitly for pedagogical purposes, even though
    // in this specific application a std::swap would have been OK
    #pragma omp target teams distribute parallel for collapse(2) \
     thread_limit(256)
    for (int j = 0; j < N; j++) 
      for (int i = 0; i < N; i++) 
        if (j >= 1 && j <= N-2 && i >= 1 && i <= N-2)
          f_old[IDX(i,j)] = f[IDX(i,j)];

  *static_cast<float *>(buffers[2]) = error;
}
