/*
 * Runs one kernel of the checked-mode corpus (kernels/check.cu) or the
 * correct block kernels (kernels/blocks.cu), for tests/test-check.c, which
 * runs this under accel-check:
 *
 *   check-corpus CASE
 *
 * A buggy case is ended by AddressSanitizer's report; if it is not, this
 * exits 3 ("the bug went unseen"). The correct case checks the kernels'
 * results and exits 0. Exit 1: setup failed (the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

struct corpus {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
};

static void fail(const char *what)
{
    fprintf(stderr, "check-corpus: %s: %s\n", what, accel_last_error());
    exit(1);
}

static void ok(accel_status status, const char *what)
{
    if (status != ACCEL_OK)
        fail(what);
}

static void corpus_open(struct corpus *c, const char *bundle)
{
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};

    ok(accel_host_create(&options, &c->host), "accel_host_create");
    ok(accel_device_open(c->host, "null", 0, &c->device), "accel_device_open");
    ok(accel_stream_create(c->device, &c->stream), "accel_stream_create");
    ok(accel_module_load_file(c->device, bundle, &c->module),
       "accel_module_load_file");
}

static void corpus_close(struct corpus *c)
{
    accel_module_unload(c->module);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
}

/* A device array of `count` elements of `type`, filled with 1, 2, 3, ... */
static accel_ref array(struct corpus *c, accel_elem_type type, uint32_t count)
{
    size_t bytes = (size_t)count * accel_elem_size(type);
    uint32_t *data = malloc(bytes);
    accel_ref ref;

    if (data == NULL)
        fail("malloc");
    for (size_t i = 0; i < bytes / 4; i++)
        data[i] = type == ACCEL_F32 ? 0x3f800000u
                                    : (uint32_t)i + 1; /* 1.0f, or i + 1 */
    ok(accel_alloc(c->device, type, count, &ref), "accel_alloc");
    ok(accel_copy_to_device(c->stream, ref, 0, data, bytes),
       "accel_copy_to_device");
    ok(accel_stream_sync(c->stream), "accel_stream_sync");
    free(data);
    return ref;
}

static void launch(struct corpus *c, const char *name, uint32_t grid,
                   uint32_t block, uint32_t shared, const accel_arg *args,
                   uint32_t nargs)
{
    accel_kernel *kernel;

    ok(accel_kernel_get(c->module, name, &kernel), name);
    ok(accel_launch(c->stream, kernel, (accel_dim3){grid, 1, 1},
                    (accel_dim3){block, 1, 1}, shared, args, nargs),
       name);
    ok(accel_stream_sync(c->stream), name);
}

/* n = 64 floats, blocks of 32: each bug is one thread's. */
static void run_bug(struct corpus *c, const char *name)
{
    uint32_t n = 64;
    accel_ref x = array(c, ACCEL_F32, n), y = array(c, ACCEL_F32, n);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};

    if (strcmp(name, "check_off_by_one_write") == 0)
        launch(c, name, 3, 32, 0, args, 3); /* 96 threads: i == 64 is block 2 */
    else if (strcmp(name, "check_shared_overflow") == 0 ||
             strcmp(name, "check_missing_barrier") == 0)
        launch(c, name, 1, 32, 32 * sizeof(float), args + 1, 2);
    else if (strncmp(name, "check_static_shared_", 20) == 0)
        launch(c, name, 1, 32, 0, args + 1, 2); /* float s[32], 32 threads */
    else if (strcmp(name, "check_blocks_write_one") == 0)
        launch(c, name, 2, 32, 0, args + 2, 1);
    else
        launch(c, name, 2, 32, 0, args, 3);
}

/* A raw address of a freed allocation, read by a kernel. */
static void run_use_after_free(struct corpus *c)
{
    uint32_t n = 64;
    accel_ref x = array(c, ACCEL_F32, n), y = array(c, ACCEL_F32, n);
    uint64_t address;

    ok(accel_ref_native(c->device, x, &address), "accel_ref_native");
    ok(accel_free(c->device, x), "accel_free");
    ok(accel_device_sync(c->device), "accel_device_sync");
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(address),
                        ACCEL_ARG_REF(y)};
    launch(c, "check_read_raw", 2, 32, 0, args, 3);
}

/* Half of x written by a copy, all of it read by a kernel. */
static void run_uninit(struct corpus *c)
{
    uint32_t n = 64;
    float half[32] = {0};
    accel_ref x, y = array(c, ACCEL_F32, n);

    ok(accel_alloc(c->device, ACCEL_F32, n, &x), "accel_alloc");
    ok(accel_copy_to_device(c->stream, x, 0, half, sizeof(half)), "copy");
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(x), ACCEL_ARG_REF(y)};
    launch(c, "check_copy", 2, 32, 0, args, 3);
}

/* The race fixed by an atomic: 64 threads of 2 blocks add 1 each. */
static void run_atomic(struct corpus *c)
{
    uint32_t zero = 0, sum = 0;
    accel_ref out;

    ok(accel_alloc(c->device, ACCEL_U32, 1, &out), "accel_alloc");
    ok(accel_copy_to_device(c->stream, out, 0, &zero, sizeof(zero)), "copy");
    accel_arg args[] = {ACCEL_ARG_REF(out)};
    launch(c, "check_blocks_atomic", 2, 32, 0, args, 1);
    ok(accel_copy_to_host(c->stream, &sum, out, 0, sizeof(sum)), "copy");
    ok(accel_stream_sync(c->stream), "accel_stream_sync");
    if (sum != 64) {
        fprintf(stderr, "check-corpus: the atomic sum is %u, not 64\n", sum);
        exit(1);
    }
}

/* Correct kernels of kernels/blocks.cu: they must run clean and right. */
static void run_correct(struct corpus *c)
{
    uint32_t n = 1000, blocks = (n + 255) / 256, sums[4] = {0}, want[4] = {0};
    uint32_t bins[256] = {0}, total = 0;
    accel_ref x = array(c, ACCEL_U32, n), partial = array(c, ACCEL_U32, blocks);
    accel_ref hist = array(c, ACCEL_U32, 256), out = array(c, ACCEL_U32, 1024);
    accel_arg reduce[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(x),
                          ACCEL_ARG_REF(partial)};
    accel_arg histogram[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(x),
                             ACCEL_ARG_REF(hist)};
    accel_arg reverse[] = {ACCEL_ARG_REF(x), ACCEL_ARG_REF(out)};

    launch(c, "block_reduce_shared", blocks, 256, 0, reduce, 3);
    launch(c, "block_reduce_warp", blocks, 256, 0, reduce, 3);
    ok(accel_copy_to_host(c->stream, sums, partial, 0, sizeof(sums)), "copy");
    ok(accel_copy_to_device(c->stream, hist, 0, bins, sizeof(bins)), "copy");
    launch(c, "block_histogram", 4, 128, 0, histogram, 3);
    ok(accel_copy_to_host(c->stream, bins, hist, 0, sizeof(bins)), "copy");
    launch(c, "block_reverse_dynamic", 3, 256, 256 * sizeof(uint32_t), reverse,
           2);
    ok(accel_stream_sync(c->stream), "accel_stream_sync");
    for (uint32_t i = 0; i < n; i++)
        want[i / 256] += i + 1;
    for (uint32_t b = 0; b < 256; b++)
        total += bins[b];
    if (memcmp(sums, want, sizeof(sums)) != 0 || total != n) {
        fprintf(stderr,
                "check-corpus: wrong results: sums %u %u %u %u, histogram %u\n",
                sums[0], sums[1], sums[2], sums[3], total);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    struct corpus c = {0};

    if (argc != 3) {
        fprintf(stderr, "usage: check-corpus BUNDLE CASE\n");
        return 1;
    }
    corpus_open(&c, argv[1]);
    if (strcmp(argv[2], "correct") == 0 || strcmp(argv[2], "atomic") == 0) {
        if (strcmp(argv[2], "correct") == 0)
            run_correct(&c);
        else
            run_atomic(&c);
        corpus_close(&c);
        return 0;
    }
    if (strcmp(argv[2], "use_after_free") == 0)
        run_use_after_free(&c);
    else if (strcmp(argv[2], "uninit") == 0)
        run_uninit(&c);
    else
        run_bug(&c, argv[2]);
    fprintf(stderr, "check-corpus: %s ran to the end: the bug went unseen\n",
            argv[2]);
    corpus_close(&c);
    return 3;
}
