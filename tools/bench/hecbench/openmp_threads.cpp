// The OpenMP side's thread count (tools/bench/hecbench_openmp.c), set
// from the OpenMP library that the programs' OpenMP versions use.
#include <omp.h>

extern "C" void hb_openmp_set_threads(int threads)
{
    omp_set_num_threads(threads);
}
