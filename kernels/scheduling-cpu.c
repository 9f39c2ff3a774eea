/* The CPU form of scheduling.cu; see examples-cpu.c. */
#include "scheduling.cu"
