/* The CPU form of blocks.cu; see examples-cpu.c. */
#include "blocks.cu"
