/*
 ** The MIT License (MIT)
 **
 ** Copyright (c) 2014, Erick Lavoie, Faiz Khan, Sujay Kathrotia, Vincent
 ** Foley-Bourgon, Laurie Hendren
 **
 ** Permission is hereby granted, free of charge, to any person obtaining a copy
 **of this software and associated documentation files (the "Software"), to deal
 ** in the Software without restriction, including without limitation the rights
 ** to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 ** copies of the Software, and to permit persons to whom the Software is
 ** furnished to do so, subject to the following conditions:
 **
 ** The above copyright notice and this permission notice shall be included in all
 ** copies or substantial portions of the Software.
 **
 ** THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 ** IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 ** FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 ** AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 ** LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 ** OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 ** SOFTWARE.
 **
 **/
// From HeCBench (src/page-rank-omp/main.cpp and src/page-rank-cuda/
// reference.h, commit f27000a51): one iteration of main's loop, its two
// loops and their pragmas unchanged (block_size as main computes it), and
// the host reference's map_ref and reduce_ref, unchanged, which main runs
// to check the result. The size is page-rank.c's.
#include <math.h>
#include <stddef.h>
#include <omp.h>

// reference.h, included before main defines D_FACTOR (reduce_ref has a
// local constant of that name)
void map_ref(const int *__restrict__ pages,
             const float *__restrict__ page_ranks,
                   float *__restrict__ maps,
             const unsigned int *__restrict__ noutlinks,
             const int n)
{
  #pragma omp parallel for
  for (int i = 0; i < n; i++) {
    float outbound_rank = page_ranks[i]/(float)noutlinks[i];
    for(int j=0; j<n; ++j){
      maps[(size_t)i*n+j] = pages[(size_t)i*n+j]*outbound_rank;
    }
  }
}

void reduce_ref(float *__restrict__ page_ranks,
                const float *__restrict__ maps,
                const int n,
                float *__restrict__ dif)
{
  const float D_FACTOR = 0.85f;
  #pragma omp parallel for
  for (int j = 0; j < n; j++) {
    float old_rank = page_ranks[j];
    float new_rank = 0.0f;
    for(int i=0; i< n; ++i){
      new_rank += maps[(size_t)i*n + j];
    }

    new_rank = ((1.f-D_FACTOR)/n)+(D_FACTOR*new_rank);
    dif[j] = fmaxf(fabsf(new_rank - old_rank), dif[j]);
    page_ranks[j] = new_rank;
  }
}

// main.cpp
#define D_FACTOR (0.85f)
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

// The number of pages (page-rank.c's HB_N).
#define HB_PAGE_RANK_N 4096

// Buffers in page-rank.c's order: d_pages, d_page_ranks, d_maps,
// d_noutlinks, d_diffs.
extern "C" void hb_page_rank_openmp(void *const buffers[])
{
  const int *pages = static_cast<const int *>(buffers[0]);
  float *page_ranks = static_cast<float *>(buffers[1]);
  float *maps = static_cast<float *>(buffers[2]);
  const unsigned int *noutlinks = static_cast<const unsigned int *>(buffers[3]);
  float *diffs = static_cast<float *>(buffers[4]);
  const int n = HB_PAGE_RANK_N;
  size_t block_size  = n < BLOCK_SIZE ? n : BLOCK_SIZE;

       #pragma omp target teams distribute parallel for thread_limit(block_size) 
       for (int i = 0; i < n; i++) {
         float outbound_rank = page_ranks[i]/(float)noutlinks[i];
         for(int j=0; j<n; ++j)
           maps[(size_t)i*n+j] = pages[(size_t)i*n+j]*outbound_rank;
       }
   
       #pragma omp target teams distribute parallel for thread_limit(block_size) 
       for (int j = 0; j < n; j++) {
         float new_rank;
         float old_rank;
         old_rank = page_ranks[j];
         new_rank = 0.0f;
         for(int i=0; i< n; ++i) new_rank += maps[(size_t)i*n + j];
         new_rank = ((1.f-D_FACTOR)/n)+(D_FACTOR*new_rank);
         diffs[j] = fmaxf(fabsf(new_rank - old_rank), diffs[j]);
         page_ranks[j] = new_rank;
       }
}

extern "C" void hb_page_rank_reference(void *const buffers[])
{
  const int n = HB_PAGE_RANK_N;

  map_ref(static_cast<const int *>(buffers[0]),
          static_cast<const float *>(buffers[1]),
          static_cast<float *>(buffers[2]),
          static_cast<const unsigned int *>(buffers[3]), n);
  reduce_ref(static_cast<float *>(buffers[1]),
             static_cast<const float *>(buffers[2]), n,
             static_cast<float *>(buffers[4]));
}
