/*
 * The real-code suite where accel-bench was built without a C++ compiler
 * with OpenMP, which its programs' OpenMP versions need: no programs.
 */
#include "../hecbench.h"

const struct hb_program *const hb_programs[] = {NULL};

/* No OpenMP library to tell (hecbench_openmp.c). */
void hb_openmp_set_threads(int threads);
void hb_openmp_set_threads(int threads)
{
    (void)threads;
}
