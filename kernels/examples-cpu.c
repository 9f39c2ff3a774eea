/*
 * The CPU form of examples.cu. Meson takes a .cu file for CUDA, so the C
 * build includes it from a .c file; this is `cc -x c examples.cu`.
 */
#include "examples.cu"
