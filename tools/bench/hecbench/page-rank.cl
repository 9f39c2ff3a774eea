// HeCBench's page-rank kernels (src/page-rank-cuda/main.cu; MIT, Copyright
// (c) 2014, Erick Lavoie, Faiz Khan, Sujay Kathrotia, Vincent
// Foley-Bourgon, Laurie Hendren) in OpenCL C for accel-bench: map and
// reduce, the same loops and arithmetic in the same order.
#define D_FACTOR (0.85f)

__kernel void map(__global const int *restrict pages,
                  __global const float *restrict page_ranks,
                  __global float *restrict maps,
                  __global const unsigned int *restrict noutlinks,
                  const int n)
{
  int i = get_local_id(0) + get_group_id(0) * get_local_size(0);
  int j;
  if(i < n){
    float outbound_rank = page_ranks[i]/(float)noutlinks[i];
    for(j=0; j<n; ++j){
      maps[(size_t)i*n+j] = pages[(size_t)i*n+j]*outbound_rank;
    }
  }
}

__kernel void reduce(__global float *restrict page_ranks,
                     __global const float *restrict maps,
                     const int n,
                     __global float *restrict dif)
{
  int j = get_local_id(0) + get_group_id(0) * get_local_size(0);
  int i;
  float new_rank;
  float old_rank;

  if(j<n){
    old_rank = page_ranks[j];
    new_rank = 0.0f;
    for(i=0; i< n; ++i){
      new_rank += maps[(size_t)i*n + j];
    }

    new_rank = ((1.f-D_FACTOR)/n)+(D_FACTOR*new_rank);
    dif[j] = fmax(fabs(new_rank - old_rank), dif[j]);
    page_ranks[j] = new_rank;
  }
}
