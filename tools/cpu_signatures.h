/*
 * The typed signatures of a CPU kernel image's kernels, as the text of a
 * bundle's signatures entry (host/signature.h): accel-pack signatures, which
 * accel-cc runs to give the GPU images of a bundle the types that the CPU
 * image's descriptors carry.
 */
#ifndef ACCEL_TOOLS_CPU_SIGNATURES_H
#define ACCEL_TOOLS_CPU_SIGNATURES_H

#include <stdio.h>

/*
 * Write the signatures of every kernel of the CPU image at `path` (an ELF
 * shared object built with <accel/kernel.h>) to `out`. The image is opened
 * with dlopen, so it must be built for this machine, and its constructors
 * run: it is the caller's own build. A kernel of CPU kernel ABI 1 or 2 has
 * no types: it is left out, with a warning on stderr. Returns 0, or -1
 * after a message on stderr.
 */
int accel__cpu_signatures_write(const char *path, FILE *out);

#endif /* ACCEL_TOOLS_CPU_SIGNATURES_H */
