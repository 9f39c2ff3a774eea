/*
 * Copyright (c) 2018-2020, NVIDIA CORPORATION.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */


// From HeCBench (src/stddev-omp/main.cpp and src/stddev-cuda/reference.h,
// commit f27000a51): one call of stddev<float, int>, the step main times,
// its loops unchanged, and the host reference stddev_ref, unchanged.
//
// The second target region needs a team of exactly TPB threads
// (omp_get_thread_num is the kernel's threadIdx.x), which a GPU gives
// through thread_limit(TPB). On the host, GCC's libgomp runs the teams
// one after another, and a parallel region in a target region takes the
// host device's default thread count (the CPUs; omp_set_num_threads
// outside the target region does not reach it), capped by thread_limit,
// which leaves most rows out. The one change: that region's
// `#pragma omp parallel` has num_threads(TPB), so the host runs every
// team as 256 OpenMP threads on the CPUs there are.
#include <math.h>
#include <omp.h>

template <typename Type, typename IdxType>
void stddev_ref(Type *std, const Type *data, IdxType D, IdxType N, bool sample) {
  IdxType sample_size = sample ? N-1 : N;
  for (IdxType c = 0; c < D; c++) {
    Type sum = 0;
    for (IdxType r = 0; r < N; r++)
      sum += data[r*D+c] * data[r*D+c];
    std[c] = sqrtf(sum / sample_size);
  }
}

/**
 * @brief Compute stddev of the input matrix
 *
 * Stddev operation is assumed to be performed on a given column.
 *
 * @tparam Type the data type
 * @tparam IdxType Integer type used to for addressing
 * @param std the output stddev vector
 * @param data the input matrix
 * @param D number of columns of data
 * @param N number of rows of data
 * @param sample whether to evaluate sample stddev or not. In other words,
 * whether
 *  to normalize the output using N-1 or N, for true or false, respectively
 */
template <typename Type, typename IdxType = int>
void stddev(Type *std, const Type *data, IdxType D, IdxType N, bool sample) {
  static const int TPB = 256;
  static const int RowsPerThread = 4;
  static const int ColsPerBlk = 32;
  static const int RowsPerBlk = (TPB / ColsPerBlk) * RowsPerThread;

  static const int TeamX = (N + (IdxType)RowsPerBlk - 1) / (IdxType)RowsPerBlk;
  static const int TeamY = (D + (IdxType)ColsPerBlk - 1) / (IdxType)ColsPerBlk;
  static const int Teams = TeamX * TeamY;

  // required for atomics
  #pragma omp target teams distribute parallel for thread_limit(256)
  for (int i = 0; i < D; i++)
    std[i] = (Type)0;

  #pragma omp target teams num_teams(Teams) thread_limit(TPB)
  {
    Type sstd[ColsPerBlk];
    #pragma omp parallel num_threads(TPB)
    {
      int tx = omp_get_thread_num();
      int bx = omp_get_team_num() % TeamX;
      int by = omp_get_team_num() / TeamX;
      int gridDim_x = TeamX;
 
      const int RowsPerBlkPerIter = TPB / ColsPerBlk;
      IdxType thisColId = tx % ColsPerBlk;
      IdxType thisRowId = tx / ColsPerBlk;
      IdxType colId = thisColId + ((IdxType)by * ColsPerBlk);
      IdxType rowId = thisRowId + ((IdxType)bx * RowsPerBlkPerIter);
      Type thread_data = Type(0);
      const IdxType stride = RowsPerBlkPerIter * gridDim_x;
      for (IdxType i = rowId; i < N; i += stride) {
        Type val = (colId < D) ? data[i * D + colId] : Type(0);
        thread_data += val * val;
      }
      if (tx < ColsPerBlk) sstd[tx] = Type(0);
      #pragma omp barrier

      #pragma omp atomic update
      sstd[thisColId] += thread_data;

      #pragma omp barrier

      if (tx < ColsPerBlk) {
        #pragma omp atomic update
        std[colId] += sstd[thisColId];
      }
    }
  }

  IdxType sampleSize = sample ? N-1 : N;
  #pragma omp target teams distribute parallel for thread_limit(TPB)
  for (int i = 0; i < D; i++)
    std[i] = sqrtf(std[i] / sampleSize);
}

// The sizes of tools/bench/hecbench/stddev.c.
#define HB_STDDEV_D 1024
#define HB_STDDEV_N 256

extern "C" void hb_stddev_openmp(void *const buffers[])
{
  stddev(static_cast<float *>(buffers[1]), static_cast<const float *>(buffers[0]),
         HB_STDDEV_D, HB_STDDEV_N, true);
}

extern "C" void hb_stddev_reference(void *const buffers[])
{
  stddev_ref(static_cast<float *>(buffers[1]), static_cast<const float *>(buffers[0]),
             HB_STDDEV_D, HB_STDDEV_N, true);
}
