// From HeCBench (src/rtm8-omp/rtm8.cpp, commit f27000a51; BSD-3-Clause,
// HeCBench's own LICENSE, Zheming Jin): the target loop of one repetition
// of main's timed loop, its pragma and body unchanged, in a function whose
// parameters carry the names the loop uses. HeCBench's rtm8-omp binds those
// names to main's arrays of the same names, but its CUDA main launches
// rtm8(vsq, current_s, next_s, current_r, next_r, ...) against the
// parameters (vsq, current_s, current_r, next_s, next_r, ...), and both
// mains' host reference rtm8_cpu is called the same way; so the OpenMP loop
// as HeCBench binds it computes something else than its CUDA kernel and
// its own reference (the interior of the image is (2 + div)^2 there, 0 in
// the other two). Here the loop's names are bound as the CUDA launch binds
// the kernel's (hb_rtm8_openmp below), so that all three sides do the same
// step.
#include <stddef.h>

#define nx 680
#define ny 134
#define nz 112

inline int indexTo1D(int x, int y, int z){
  return x + y*nx + z*nx*ny;
}

static void rtm8_omp(float *vsq, float *current_s,
                     float *current_r, float *next_s, float *next_r,
                     float *image_gpu, float *a)
{
      #pragma omp target teams distribute parallel for collapse(3) thread_limit(256)
      for (int z = 4; z < nz - 4; z++) {
        for (int y = 4; y < ny - 4; y++) {
          for (int x = 4; x < nx - 4; x++) {
            float div =
              a[0] * current_s[indexTo1D(x,y,z)] +
              a[1] * (current_s[indexTo1D(x+1,y,z)] + current_s[indexTo1D(x-1,y,z)] +
                  current_s[indexTo1D(x,y+1,z)] + current_s[indexTo1D(x,y-1,z)] +
                  current_s[indexTo1D(x,y,z+1)] + current_s[indexTo1D(x,y,z-1)]) +
              a[2] * (current_s[indexTo1D(x+2,y,z)] + current_s[indexTo1D(x-2,y,z)] +
                  current_s[indexTo1D(x,y+2,z)] + current_s[indexTo1D(x,y-2,z)] +
                  current_s[indexTo1D(x,y,z+2)] + current_s[indexTo1D(x,y,z-2)]) +
              a[3] * (current_s[indexTo1D(x+3,y,z)] + current_s[indexTo1D(x-3,y,z)] +
                  current_s[indexTo1D(x,y+3,z)] + current_s[indexTo1D(x,y-3,z)] +
                  current_s[indexTo1D(x,y,z+3)] + current_s[indexTo1D(x,y,z-3)]) +
              a[4] * (current_s[indexTo1D(x+4,y,z)] + current_s[indexTo1D(x-4,y,z)] +
                  current_s[indexTo1D(x,y+4,z)] + current_s[indexTo1D(x,y-4,z)] +
                  current_s[indexTo1D(x,y,z+4)] + current_s[indexTo1D(x,y,z-4)]);
  
            next_s[indexTo1D(x,y,z)] = 2*current_s[indexTo1D(x,y,z)] - next_s[indexTo1D(x,y,z)]
              + vsq[indexTo1D(x,y,z)]*div;
            div =
              a[0] * current_r[indexTo1D(x,y,z)] +
              a[1] * (current_r[indexTo1D(x+1,y,z)] + current_r[indexTo1D(x-1,y,z)] +
                  current_r[indexTo1D(x,y+1,z)] + current_r[indexTo1D(x,y-1,z)] +
                  current_r[indexTo1D(x,y,z+1)] + current_r[indexTo1D(x,y,z-1)]) +
              a[2] * (current_r[indexTo1D(x+2,y,z)] + current_r[indexTo1D(x-2,y,z)] +
                  current_r[indexTo1D(x,y+2,z)] + current_r[indexTo1D(x,y-2,z)] +
                  current_r[indexTo1D(x,y,z+2)] + current_r[indexTo1D(x,y,z-2)]) +
              a[3] * (current_r[indexTo1D(x+3,y,z)] + current_r[indexTo1D(x-3,y,z)] +
                  current_r[indexTo1D(x,y+3,z)] + current_r[indexTo1D(x,y-3,z)] +
                  current_r[indexTo1D(x,y,z+3)] + current_r[indexTo1D(x,y,z-3)]) +
              a[4] * (current_r[indexTo1D(x+4,y,z)] + current_r[indexTo1D(x-4,y,z)] +
                  current_r[indexTo1D(x,y+4,z)] + current_r[indexTo1D(x,y-4,z)] +
                  current_r[indexTo1D(x,y,z+4)] + current_r[indexTo1D(x,y,z-4)]);
  
            next_r[indexTo1D(x,y,z)] = 2 * current_r[indexTo1D(x,y,z)]
              - next_r[indexTo1D(x,y,z)] + vsq[indexTo1D(x,y,z)] * div;
  
            image_gpu[indexTo1D(x,y,z)] = next_s[indexTo1D(x,y,z)] * next_r[indexTo1D(x,y,z)];
  	}
        }
      }
}

// The buffers in the descriptor's order (tools/bench/hecbench/rtm8.c):
// vsq, next_s, current_s, next_r, current_r, image, a; bound as the CUDA
// launch binds them.
extern "C" void hb_rtm8_openmp(void *const buffers[])
{
  float *vsq = static_cast<float *>(buffers[0]);
  float *next_s = static_cast<float *>(buffers[1]);
  float *current_s = static_cast<float *>(buffers[2]);
  float *next_r = static_cast<float *>(buffers[3]);
  float *current_r = static_cast<float *>(buffers[4]);
  float *image = static_cast<float *>(buffers[5]);
  float *a = static_cast<float *>(buffers[6]);

  rtm8_omp(vsq, current_s, next_s, current_r, next_r, image, a);
}

/*
 * HeCBench's host reference (src/rtm8-cuda/rtm8.cu), unchanged; it takes N
 * and does not use it, which the build's -Werror would reject.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void rtm8_cpu(float *vsq, float *current_s, float *current_r,
                     float *next_s, float *next_r, float *image, float *a,
                     size_t N)
{
#ifdef _OPENMP
#pragma omp parallel for collapse(3)
#endif
    for (int z = 4; z < nz - 4; z++) {
        for (int y = 4; y < ny - 4; y++) {
            for (int x = 4; x < nx - 4; x++) {
                float div = a[0] * current_s[indexTo1D(x, y, z)] +
                            a[1] * (current_s[indexTo1D(x + 1, y, z)] +
                                    current_s[indexTo1D(x - 1, y, z)] +
                                    current_s[indexTo1D(x, y + 1, z)] +
                                    current_s[indexTo1D(x, y - 1, z)] +
                                    current_s[indexTo1D(x, y, z + 1)] +
                                    current_s[indexTo1D(x, y, z - 1)]) +
                            a[2] * (current_s[indexTo1D(x + 2, y, z)] +
                                    current_s[indexTo1D(x - 2, y, z)] +
                                    current_s[indexTo1D(x, y + 2, z)] +
                                    current_s[indexTo1D(x, y - 2, z)] +
                                    current_s[indexTo1D(x, y, z + 2)] +
                                    current_s[indexTo1D(x, y, z - 2)]) +
                            a[3] * (current_s[indexTo1D(x + 3, y, z)] +
                                    current_s[indexTo1D(x - 3, y, z)] +
                                    current_s[indexTo1D(x, y + 3, z)] +
                                    current_s[indexTo1D(x, y - 3, z)] +
                                    current_s[indexTo1D(x, y, z + 3)] +
                                    current_s[indexTo1D(x, y, z - 3)]) +
                            a[4] * (current_s[indexTo1D(x + 4, y, z)] +
                                    current_s[indexTo1D(x - 4, y, z)] +
                                    current_s[indexTo1D(x, y + 4, z)] +
                                    current_s[indexTo1D(x, y - 4, z)] +
                                    current_s[indexTo1D(x, y, z + 4)] +
                                    current_s[indexTo1D(x, y, z - 4)]);

                next_s[indexTo1D(x, y, z)] = 2 * current_s[indexTo1D(x, y, z)] -
                                             next_s[indexTo1D(x, y, z)] +
                                             vsq[indexTo1D(x, y, z)] * div;
                div = a[0] * current_r[indexTo1D(x, y, z)] +
                      a[1] * (current_r[indexTo1D(x + 1, y, z)] +
                              current_r[indexTo1D(x - 1, y, z)] +
                              current_r[indexTo1D(x, y + 1, z)] +
                              current_r[indexTo1D(x, y - 1, z)] +
                              current_r[indexTo1D(x, y, z + 1)] +
                              current_r[indexTo1D(x, y, z - 1)]) +
                      a[2] * (current_r[indexTo1D(x + 2, y, z)] +
                              current_r[indexTo1D(x - 2, y, z)] +
                              current_r[indexTo1D(x, y + 2, z)] +
                              current_r[indexTo1D(x, y - 2, z)] +
                              current_r[indexTo1D(x, y, z + 2)] +
                              current_r[indexTo1D(x, y, z - 2)]) +
                      a[3] * (current_r[indexTo1D(x + 3, y, z)] +
                              current_r[indexTo1D(x - 3, y, z)] +
                              current_r[indexTo1D(x, y + 3, z)] +
                              current_r[indexTo1D(x, y - 3, z)] +
                              current_r[indexTo1D(x, y, z + 3)] +
                              current_r[indexTo1D(x, y, z - 3)]) +
                      a[4] * (current_r[indexTo1D(x + 4, y, z)] +
                              current_r[indexTo1D(x - 4, y, z)] +
                              current_r[indexTo1D(x, y + 4, z)] +
                              current_r[indexTo1D(x, y - 4, z)] +
                              current_r[indexTo1D(x, y, z + 4)] +
                              current_r[indexTo1D(x, y, z - 4)]);

                next_r[indexTo1D(x, y, z)] = 2 * current_r[indexTo1D(x, y, z)] -
                                             next_r[indexTo1D(x, y, z)] +
                                             vsq[indexTo1D(x, y, z)] * div;

                image[indexTo1D(x, y, z)] = next_s[indexTo1D(x, y, z)] *
                                            next_r[indexTo1D(x, y, z)];
            }
        }
    }
}
#pragma GCC diagnostic pop

// main's call of its host reference, with the launch's order of arrays.
extern "C" void hb_rtm8_reference(void *const buffers[])
{
  rtm8_cpu(static_cast<float *>(buffers[0]), static_cast<float *>(buffers[2]),
           static_cast<float *>(buffers[1]), static_cast<float *>(buffers[4]),
           static_cast<float *>(buffers[3]), static_cast<float *>(buffers[5]),
           static_cast<float *>(buffers[6]), (size_t)nx * ny * nz);
}
