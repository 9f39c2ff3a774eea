// MIT License
//
// Copyright (c) 2019 lienliang
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.
//
// From HeCBench (src/phmm-omp/kernel.h and main.cpp, src/phmm-cuda/main.cu
// and constants_types.h, commit f27000a51; the program's own LICENSE, MIT,
// above): one repetition of main's timed loop, the whole wavefront of
// x_dim x y_dim calls of pair_HMM_forward with the swap of the forward
// matrices after each, the function and its pragmas unchanged (in an
// anonymous namespace, which keeps its name out of the link); and main's
// input generation (std::default_random_engine, seed 123), which the
// descriptor's init calls.
//
// The function's parallel region needs exactly states - 1 = 2 threads a
// team (omp_get_thread_num is the state). On the host, GCC's libgomp runs
// the batch teams one after another and the parallel region takes the
// host device's default thread count (the CPUs) capped by thread_limit,
// which is 2 on any host of 2 CPUs or more, so it runs unchanged.
#include <omp.h>
#include <random>

// constants for host and kernel codes
#define x_dim   11
#define y_dim   40
#define batch   4
#define states  3

// forward type
typedef double fArray[y_dim+1][batch][states-1];

// transition type
typedef double tArray[batch][states-1][states];

// likelihood type
typedef double lArray[2][batch][states-1];

// start type
typedef double sArray[states-1];


namespace {
void pair_HMM_forward(
    const int teams,
    const int threads,
    const int cur_i,
    const int cur_j,
    //const double forward_matrix_in[x_dim+1][y_dim+1][batch][states-1],
    const fArray *__restrict forward_matrix_in,
    //const double transitions[x_dim+1][batch][states-1][states],
    const tArray *__restrict transitions,
    //const double emissions[x_dim+1][y_dim+1][batch][states-1],
    const fArray *__restrict emissions,
    // const double likelihood[2][2][batch][states-1],
    const lArray *__restrict likelihood,
    //const double start_transitions[batch][states-1],
    const sArray *__restrict start_transitions,
          //double forward_matrix_out[x_dim+1][y_dim+1][batch][states-1])
          fArray *__restrict forward_matrix_out)
{

  #pragma omp target teams num_teams(teams) thread_limit(threads)
  {
    double e[batch][states-1];
    double f01[1][batch][2];
    double mul_3d[1][batch][2];
    double mul_4d[4][batch][1][2];
    #pragma omp parallel 
    {
      int batch_id = omp_get_team_num();
      int states_id = omp_get_thread_num();
    
      e[batch_id][states_id] = emissions[cur_i][cur_j][batch_id][states_id];
    
      double t[2][2][batch][2][2];
      for (int k = 0; k < 2; k++) {
        for (int l = 0; l < 2; l++) {
          t[0][0][batch_id][k][l] = transitions[cur_i - 1][batch_id][k][l];
          t[0][1][batch_id][k][l] = transitions[cur_i - 1][batch_id][k][l];
          t[1][0][batch_id][k][l] = transitions[cur_i][batch_id][k][l];
          t[1][1][batch_id][k][l] = transitions[cur_i][batch_id][k][l];
        }
      }
      #pragma omp barrier
    
      if (cur_i > 0 && cur_j == 0) {
        if (cur_i == 1) {
          forward_matrix_out[1][0][batch_id][states_id] = 
            start_transitions[batch_id][states_id] * e[0][states_id];
        }
        else {
          double t01[batch][2][2];
          for (int j = 0; j < 2; j++) {
            for (int k = 0; k < 2; k++) {
              t01[batch_id][j][k] = t[0][1][batch_id][j][k];
            }
          }
    
          f01[0][batch_id][states_id] = 
            forward_matrix_in[cur_i - 1][cur_j][batch_id][states_id];
    
          #pragma omp barrier
    
          double s = 0.0;
          for (int k = 0; k < 2; k++)
            s += f01[0][batch_id][k] * t01[batch_id][k][states_id];
          s *= (e[batch_id][states_id] * likelihood[0][1][batch_id][states_id]);
          mul_3d[0][batch_id][states_id] = s;
    
          #pragma omp barrier
    
          forward_matrix_out[cur_i][0][batch_id][states_id] = mul_3d[0][batch_id][states_id];
        }
      }
      else if (cur_i > 0 and cur_j > 0) {
    
        double f[2][2][batch][1][2];
        for (int i = 0; i < 2; i++) {
          f[0][0][batch_id][0][i] = forward_matrix_in[cur_i-1][cur_j-1][batch_id][i];
          f[0][1][batch_id][0][i] = forward_matrix_in[cur_i-1][cur_j][batch_id][i];
          f[1][0][batch_id][0][i] = forward_matrix_in[cur_i][cur_j-1][batch_id][i];
          f[1][1][batch_id][0][i] = forward_matrix_in[cur_i][cur_j][batch_id][i];
        }
        #pragma omp barrier
    
        double s0 = 0.0;
        double s1 = 0.0;
        double s2 = 0.0;
        double s3 = 0.0;
    
        for (int k = 0; k < 2; k++) {
          s0 += f[0][0][batch_id][0][k] * t[0][0][batch_id][k][states_id];
          s1 += f[0][1][batch_id][0][k] * t[0][1][batch_id][k][states_id];
          s2 += f[1][0][batch_id][0][k] * t[1][0][batch_id][k][states_id];
          s3 += f[1][1][batch_id][0][k] * t[1][1][batch_id][k][states_id];
        }
        s0 *= likelihood[0][0][batch_id][states_id];
        s1 *= likelihood[0][1][batch_id][states_id];
        s2 *= likelihood[1][0][batch_id][states_id];
        s3 *= likelihood[1][1][batch_id][states_id];
        mul_4d[0][batch_id][0][states_id] = s0;
        mul_4d[1][batch_id][0][states_id] = s1;
        mul_4d[2][batch_id][0][states_id] = s2;
        mul_4d[3][batch_id][0][states_id] = s3;
    
        #pragma omp barrier
    
        for (int j = 0; j < 2; j++) {
          double summation = mul_4d[0][batch_id][0][j] + 
                             mul_4d[1][batch_id][0][j] +
                             mul_4d[2][batch_id][0][j] +
                             mul_4d[3][batch_id][0][j];
    
          summation *= e[batch_id][j];
    
          forward_matrix_out[cur_i][cur_j][batch_id][j] = summation;
        }
      }
    }
  }
}

}

extern "C" void hb_phmm_openmp(void *const buffers[])
{
  double *d_cur_forward = static_cast<double *>(buffers[0]);
  double *d_next_forward = static_cast<double *>(buffers[1]);
  double *d_emis = static_cast<double *>(buffers[2]);
  double *d_trans = static_cast<double *>(buffers[3]);
  double *d_like = static_cast<double *>(buffers[4]);
  double *d_start = static_cast<double *>(buffers[5]);

    // OMP teams and threads
    const int num_teams = batch;
    const int num_threads = states-1;

      for (int i = 1; i < x_dim + 1; i++) {
        for (int j = 1; j < y_dim + 1; j++) {
          pair_HMM_forward(num_teams, num_threads, i, j, 
                           (fArray*)d_cur_forward, (tArray*)d_trans,
                           (fArray*)d_emis, (lArray*)d_like,
                           (sArray*)d_start, (fArray*)d_next_forward);
          auto t = d_cur_forward;
          d_cur_forward = d_next_forward;
          d_next_forward = t;
        }
      }
}

// main.cu's input, into the buffers of tools/bench/hecbench/phmm.c.
extern "C" void hb_phmm_init(void *const buffers[])
{
  fArray *h_cur_forward = static_cast<fArray *>(buffers[0]);
  fArray *h_emis = static_cast<fArray *>(buffers[2]);
  tArray *h_trans = static_cast<tArray *>(buffers[3]);
  lArray *h_like = static_cast<lArray *>(buffers[4]);
  sArray *h_start = static_cast<sArray *>(buffers[5]);

  std::default_random_engine rng (123);
  std::uniform_real_distribution<double> dist (0.0, 1.0);
  for (int i = 0; i < x_dim+1; i++) {
    for (int j = 0; j < y_dim+1; j++) {
      for (int b = 0; b < batch; b++) {
        for (int s = 0; s < states-1; s++) {
           h_cur_forward[i][j][b][s] = dist(rng);
           h_emis[i][j][b][s] = dist(rng);
        }
      }
    }
  }

  for (int i = 0; i < x_dim+1; i++) {
    for (int b = 0; b < batch; b++) {
      for (int s = 0; s < states-1; s++) {
        for (int t = 0; t < states; t++) {
          h_trans[i][b][s][t] = dist(rng);
        }
      }
    }
  }
         
  for (int i = 0; i < batch; i++) {
    for (int s = 0; s < states-1; s++) {
      h_start[i][s] = dist(rng);
    }
  }

  for (int i = 0; i < 2; i++) {
    for (int j = 0; j< 2; j++) {
      for (int b = 0; b < batch; b++) {
        for (int s = 0; s < states-1; s++) {
          h_like[i][j][b][s] = dist(rng);
        }
      }
    }
  }
}
