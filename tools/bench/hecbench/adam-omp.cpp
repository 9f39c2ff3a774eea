// Copyright 2021- The Colossal-ai Authors. All rights reserved.
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
// From HeCBench (src/adam-omp/main.cpp and src/adam-cuda/reference.h,
// commit f27000a51): the OpenMP adam function, its pragma and loop
// unchanged, called once a step as main's loop calls it; the host
// reference, unchanged, run with repeat 1; and main's input generation
// (std::mt19937 seeded 19937, uniform floats in [0, 1)), which is C++ and
// so lives here for the C descriptor (adam.c) to call. The constants are
// the CUDA main's: its eps is 1e-8f where the OpenMP main has 1e-10f, and
// a step here is the CUDA program's step.
#include <math.h>
#include <stddef.h>
#include <omp.h>
#include <random>

// reference.h
typedef enum {
  ADAM_MODE_0 = 0, // eps under square root
  ADAM_MODE_1 = 1  // eps outside square root
} adamMode_t;

template <typename T, typename G>
void reference (
  int repeat,
  T* p,
  T* m,
  T* v,
  const G* g,
  const float b1,
  const float b2,
  const float eps,
  const float grad_scale,
  const float step_size,
  const int time_step,
  const size_t vector_size,
  adamMode_t mode,
  const float decay)
{
  for (int i = 0; i < repeat; i++) {
    for (size_t j = 0; j < vector_size; j++) {
      for (int t = 1; t <= time_step; t++) {
        T scaled_grad = g[j]/grad_scale;
        m[j] = b1*m[j] + (1.f-b1)*scaled_grad;
        v[j] = b2*v[j] + (1.f-b2)*scaled_grad*scaled_grad;
        float m_corrected = m[j] / (1.f-powf(b1, t));
        float v_corrected = v[j] / (1.f-powf(b2, t));
        float denom;
        if (mode == ADAM_MODE_0)
          denom = sqrtf(v_corrected + eps);
        else // Mode 1
          denom = sqrtf(v_corrected) + eps;
        float update = (m_corrected/denom) + (decay*p[j]);
        p[j] -= (step_size*update);
      }
    }
  }
}

// main.cpp
template <typename T, typename G>
inline void adam (
        T* __restrict p,
        T* __restrict m,
        T* __restrict v,
  const G* __restrict g,
  const float b1,
  const float b2,
  const float eps,
  const float grad_scale,
  const float step_size,
  const int time_step,
  const size_t vector_size,
  adamMode_t mode,
  const float decay)
{
  #pragma omp target teams distribute parallel for thread_limit(256)
  for (size_t j = 0; j < vector_size; j++) {
    for (int t = 1; t <= time_step; t++) {
      T scaled_grad = g[j]/grad_scale;
      m[j] = b1*m[j] + (1.f-b1)*scaled_grad;
      v[j] = b2*v[j] + (1.f-b2)*scaled_grad*scaled_grad;
      float m_corrected = m[j] / (1.f-powf(b1, t));
      float v_corrected = v[j] / (1.f-powf(b2, t));
      float denom;
      if (mode == ADAM_MODE_0)
        denom = sqrtf(v_corrected + eps);
      else // Mode 1
        denom = sqrtf(v_corrected) + eps;
      float update = (m_corrected/denom) + (decay*p[j]);
      p[j] -= (step_size*update);
    }
  }
}

// HeCBench's run line: ./main 10000 200 100 (vector size, time steps,
// repeat); a step is one of the repeats.
static const int vector_size = 10000;
static const int time_step = 200;

// Arbitrary constants (the CUDA main's)
static const float step_size = 1e-3f;
static const float decay = 0.5f;
static const float beta1 = 0.9f;
static const float beta2 = 0.999f;
static const float eps = 1e-8f;
static const float grad_scale = 256.f;

// Buffers in adam.c's order: d_p, d_m, d_v, d_g.
extern "C" void hb_adam_init(void *const buffers[])
{
  float *p = static_cast<float *>(buffers[0]);
  float *m = static_cast<float *>(buffers[1]);
  float *v = static_cast<float *>(buffers[2]);
  float *g = static_cast<float *>(buffers[3]);

  std::mt19937 gen(19937);
  std::uniform_real_distribution<float> dist(0, 1);
  for (int i = 0; i < vector_size; i++) {
    m[i] = dist(gen);
    v[i] = dist(gen);
    g[i] = dist(gen);
    p[i] = dist(gen);
  }
}

extern "C" void hb_adam_openmp(void *const buffers[])
{
  float *p = static_cast<float *>(buffers[0]);
  float *m = static_cast<float *>(buffers[1]);
  float *v = static_cast<float *>(buffers[2]);
  float *g = static_cast<float *>(buffers[3]);
  adamMode_t mode = ADAM_MODE_0;

      adam<float, float>(
        p, m, v, g,
        beta1, beta2,
        eps,
        grad_scale,
        step_size,
        time_step,
        vector_size,
        mode,
        decay);
}

extern "C" void hb_adam_reference(void *const buffers[])
{
  float *p = static_cast<float *>(buffers[0]);
  float *m = static_cast<float *>(buffers[1]);
  float *v = static_cast<float *>(buffers[2]);
  float *g = static_cast<float *>(buffers[3]);
  adamMode_t mode = ADAM_MODE_0;

  reference<float, float>(
    1,
    p, m, v, g,
    beta1, beta2,
    eps,
    grad_scale,
    step_size,
    time_step,
    vector_size,
    mode,
    decay);
}
