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
// From HeCBench (github.com/zjin-lcf/HeCBench, src/adam-cuda/main.cu and
// reference.h, commit f27000a51; the program's LICENSE is the one above):
// the templated kernel adam, its body unchanged; only its declaration
// line is accel's (ACCEL_KERNEL_TEMPLATE), and ACCEL_KERNEL_INSTANCE names
// the one instance main launches, adam<float, float>, as adam_float. The
// enum adamMode_t comes from reference.h, where main.cu finds it. Each
// thread calls powf(b1, t) and powf(b2, t) of the same t as every other
// thread: block-uniform libm calls in a loop.
#include <accel/kernel.h>

typedef enum {
  ADAM_MODE_0 = 0, // eps under square root
  ADAM_MODE_1 = 1  // eps outside square root
} adamMode_t;

ACCEL_KERNEL_TEMPLATE((typename T, typename G), adam,
        (T* __restrict__, p),
        (T* __restrict__, m),
        (T* __restrict__, v),
  (const G* __restrict__, g),
  (const float, b1),
  (const float, b2),
  (const float, eps),
  (const float, grad_scale),
  (const float, step_size),
  (const int, time_step),
  (const size_t, vector_size),
  (adamMode_t, mode),
  (const float, decay))
{
  const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t totThreads = gridDim.x*blockDim.x;

  for (size_t j = i; j < vector_size; j += totThreads) {
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
ACCEL_KERNEL_INSTANCE(adam, (float, float), adam_float,
        (float* __restrict__, p),
        (float* __restrict__, m),
        (float* __restrict__, v),
  (const float* __restrict__, g),
  (const float, b1),
  (const float, b2),
  (const float, eps),
  (const float, grad_scale),
  (const float, step_size),
  (const int, time_step),
  (const size_t, vector_size),
  (adamMode_t, mode),
  (const float, decay))
