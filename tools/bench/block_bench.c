/*
 * accel-block-bench: what GPU block semantics cost on the null (CPU)
 * plugin, in nanoseconds per barrier (or warp shuffle) per thread.
 *
 *   accel-block-bench IMAGE     IMAGE: build/kernels/accel-kernels-blocks.so
 *
 * For each block size it times, on one host thread (ACCEL_NULL_THREADS=1
 * is set unless the caller set it), a grid of kernels that run R rounds of
 * a barrier, of a shuffle, and of the same loop with neither, and prints
 * (time - time without) / (threads * R): the machinery's own cost. Medians
 * of 7 runs. Time is the process's CPU time, not the wall clock, so that
 * a machine shared with other work still gives the figure; the waiting
 * thread sleeps after a short spin, so it adds little.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define RUNS 7
#define ROUNDS 64u
#define BLOCKS 64u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of one launch of `kernel` over BLOCKS blocks of `block`. */
static double time_kernel(accel_stream *stream, accel_kernel *kernel,
                          uint32_t block, accel_ref out)
{
    uint32_t rounds = ROUNDS;
    accel_arg args[] = {ACCEL_ARG_VALUE(rounds), ACCEL_ARG_REF(out)};
    double runs[RUNS];

    for (int i = 0; i < RUNS; i++) {
        double start = now_s();
        if (accel_launch(stream, kernel, (accel_dim3){BLOCKS, 1, 1},
                         (accel_dim3){block, 1, 1}, 0, args, 2) != ACCEL_OK ||
            accel_stream_sync(stream) != ACCEL_OK) {
            fprintf(stderr, "accel-block-bench: launch failed: %s\n",
                    accel_last_error());
            exit(1);
        }
        runs[i] = now_s() - start;
    }
    qsort(runs, RUNS, sizeof(runs[0]), compare_double);
    return runs[RUNS / 2];
}

int main(int argc, char **argv)
{
    static const uint32_t blocks[] = {32, 64, 256, 1024};
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
    accel_kernel *barriers, *shuffles, *plain;
    accel_ref out;

    if (argc != 2) {
        fprintf(
            stderr,
            "usage: accel-block-bench build/kernels/accel-kernels-blocks.so\n");
        return 2;
    }
    setenv("ACCEL_NULL_THREADS", "1", 0);
    if (accel_host_create(NULL, &host) != ACCEL_OK ||
        accel_device_open(host, "null", 0, &device) != ACCEL_OK ||
        accel_stream_create(device, &stream) != ACCEL_OK ||
        accel_module_load_file(device, argv[1], &module) != ACCEL_OK ||
        accel_kernel_get(module, "block_barriers", &barriers) != ACCEL_OK ||
        accel_kernel_get(module, "block_shuffles", &shuffles) != ACCEL_OK ||
        accel_kernel_get(module, "block_no_barriers", &plain) != ACCEL_OK ||
        accel_alloc(device, ACCEL_U32, 1024, &out) != ACCEL_OK) {
        fprintf(stderr, "accel-block-bench: setup failed: %s\n",
                accel_last_error());
        return 1;
    }
    printf("%-8s %14s %14s %14s\n", "threads", "none (ns/blk)",
           "barrier ns/thr", "shuffle ns/thr");
    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
        double base = time_kernel(stream, plain, blocks[i], out);
        double bar = time_kernel(stream, barriers, blocks[i], out);
        double shf = time_kernel(stream, shuffles, blocks[i], out);
        double per = (double)BLOCKS * blocks[i] * ROUNDS;
        printf("%-8u %14.1f %14.2f %14.2f\n", blocks[i], base * 1e9 / BLOCKS,
               (bar - base) * 1e9 / per, (shf - base) * 1e9 / per);
    }
    accel_free(device, out);
    accel_module_unload(module);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
    return 0;
}
