//==============================================================
// Copyright © 2019 Intel Corporation
//
// SPDX-License-Identifier: MIT
// =============================================================
//
// From HeCBench (src/iso2dfd-omp/iso2dfd.cpp and iso2dfd.h, commit
// f27000a51): iso_2dfd_kernel, its loop and pragma unchanged, called once
// as main's first time step calls it (next, prev, vel); the grid size is
// the descriptor's (tools/bench/hecbench/iso2dfd.c).
#include <cstddef>
#include <omp.h>

#define DT 0.002f
#define DXY 20.0f
#define HALF_LENGTH 1

#define ISO2DFD_N 2048

void iso_2dfd_kernel(float* next, const float* prev, const float* vel, 
                     const float dtDIVdxy, const size_t nRows, const size_t nCols) {
  #pragma omp target teams distribute parallel for simd collapse(2) thread_limit(256) 
  for (size_t gidRow = 0; gidRow < nRows ; gidRow++)
    for (size_t gidCol = 0; gidCol < nCols ; gidCol++) {
      size_t gid = (gidRow)*nCols + gidCol;
      // Computation to solve wave equation in 2D
      // First check if gid is inside the effective grid (not in halo)
      if ((gidCol >= HALF_LENGTH && gidCol < nCols - HALF_LENGTH) &&
          (gidRow >= HALF_LENGTH && gidRow < nRows - HALF_LENGTH)) {
        // Stencil code to update grid point at position given by global id (gid)
        // New time step for grid point is computed based on the values of the
        //    the immediate neighbors in both the horizontal and vertical
        //    directions, as well as the value of grid point at a previous time step
        float value = 0.f;
        value += prev[gid + 1] - 2.f * prev[gid] + prev[gid - 1];
        value += prev[gid + nCols] - 2.f * prev[gid] + prev[gid - nCols];
        value *= dtDIVdxy * vel[gid];
        next[gid] = 2.f * prev[gid] - next[gid] + value;
      }
  }
}

extern "C" void hb_iso2dfd_openmp(void *const buffers[])
{
  float *next_base = static_cast<float *>(buffers[0]);
  float *prev_base = static_cast<float *>(buffers[1]);
  float *vel_base = static_cast<float *>(buffers[2]);
  float dtDIVdxy = (DT * DT) / (DXY * DXY);

  iso_2dfd_kernel(next_base, prev_base, vel_base, dtDIVdxy, ISO2DFD_N,
                  ISO2DFD_N);
}
