// HeCBench's adam kernel (src/adam-cuda/main.cu; Apache-2.0, Copyright
// 2021- The Colossal-ai Authors) in OpenCL C for accel-bench, the instance
// adam<float, float> that main launches: the same grid-stride loop and
// arithmetic in the same order; powf is OpenCL's pow on floats. OpenCL
// kernels take no size_t, so vector_size is a ulong, and the enum mode an
// int.
#define ADAM_MODE_0 0
#define ADAM_MODE_1 1

__kernel void adam_float(__global float *restrict p,
                         __global float *restrict m,
                         __global float *restrict v,
                         __global const float *restrict g,
                         const float b1,
                         const float b2,
                         const float eps,
                         const float grad_scale,
                         const float step_size,
                         const int time_step,
                         const ulong vector_size,
                         const int mode,
                         const float decay)
{
  const size_t i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  const size_t totThreads = get_num_groups(0) * get_local_size(0);

  for (size_t j = i; j < vector_size; j += totThreads) {
    for (int t = 1; t <= time_step; t++) {
      float scaled_grad = g[j]/grad_scale;
      m[j] = b1*m[j] + (1.f-b1)*scaled_grad;
      v[j] = b2*v[j] + (1.f-b2)*scaled_grad*scaled_grad;
      float m_corrected = m[j] / (1.f-pow(b1, (float)t));
      float v_corrected = v[j] / (1.f-pow(b2, (float)t));
      float denom;
      if (mode == ADAM_MODE_0)
        denom = sqrt(v_corrected + eps);
      else // Mode 1
        denom = sqrt(v_corrected) + eps;
      float update = (m_corrected/denom) + (decay*p[j]);
      p[j] -= (step_size*update);
    }
  }
}
