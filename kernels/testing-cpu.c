/* The CPU form of testing.cu; see examples-cpu.c. */
#include "testing.cu"
