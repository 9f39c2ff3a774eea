/*
 * accel-demo: the main job, end to end, on the device ACCEL_BACKEND (or
 * automatic selection) picks.
 *
 * It opens the selected device and runs a list of jobs on one stream. Each
 * job moves data through the device and checks every element that comes
 * back; the demo says "round trip verified" only when all of them pass, and
 * exits non-zero with the library's error detail on any failure.
 *
 * A job is one function in `jobs` below: to run other work (a kernel, say),
 * write a function of the same shape and list it there.
 */
#include <accel/accel.h>

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What every job gets: the device, a stream on it, and the size asked for. */
struct demo {
    accel_device *device;
    accel_stream *stream;
    uint64_t count;     /* elements in the 1D job and in saxpy */
    const char *bundle; /* the example kernels; NULL: look beside the tool */
    bool allreduce;     /* --allreduce: the data-parallel step instead */
    const char *where;  /* "null:1", the device, for the --allreduce line */
};

/* Runs on demo->stream, checks its own result, reports its own failure. */
struct job {
    const char *name;
    accel_status (*run)(const struct demo *demo);
};

/* Bytes around the copied region that no copy may touch. */
enum { SENTINEL = 0xa5 };

static void report_failure(const char *what, accel_status status)
{
    fprintf(stderr, "accel-demo: %s: %s: %s\n", what, accel_status_name(status),
            accel_last_error());
}

/* Run an accel call; on failure say which call and why, and clean up. */
#define TRY(call)                                                              \
    do {                                                                       \
        status = (call);                                                       \
        if (status != ACCEL_OK) {                                              \
            report_failure(#call, status);                                     \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

/* Allocate host memory, or fail the job the way TRY does. */
#define TRY_MALLOC(ptr, bytes)                                                 \
    do {                                                                       \
        (ptr) = malloc(bytes);                                                 \
        if ((ptr) == NULL) {                                                   \
            status = ACCEL_ERR_OUT_OF_HOST_MEMORY;                             \
            fprintf(stderr, "accel-demo: malloc(%zu): out of host memory\n",   \
                    (size_t)(bytes));                                          \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Values that are exact in f32 and differ between neighbours. */
static void fill_pattern(float *data, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        data[i] = (float)(i % 8191) * 0.25f - 1000.0f;
}

/* A ref that accel_alloc never filled has count 0 and is not freed. */
static void free_ref(accel_device *device, accel_ref ref)
{
    if (ref.count != 0)
        accel_free(device, ref);
}

/*
 * Check `rows` rows of `row_bytes` bytes, found at `offset + r * pitch` in
 * `got`, against the packed rows of `want`. Names the first wrong element.
 */
static accel_status compare_rows(const char *what, const unsigned char *got,
                                 uint64_t offset, uint64_t pitch,
                                 const float *want, uint64_t rows,
                                 uint64_t row_bytes)
{
    uint64_t per_row = row_bytes / sizeof(float);

    for (uint64_t r = 0; r < rows; r++) {
        const unsigned char *row = got + offset + r * pitch;
        const float *expected = want + r * per_row;

        if (memcmp(row, expected, row_bytes) == 0)
            continue;
        for (uint64_t i = 0; i < per_row; i++) {
            float value;

            memcpy(&value, row + i * sizeof(float), sizeof(value));
            if (memcmp(&value, &expected[i], sizeof(value)) != 0) {
                fprintf(stderr,
                        "accel-demo: %s: row %" PRIu64 " element %" PRIu64
                        " is %g, expected %g\n",
                        what, r, i, (double)value, (double)expected[i]);
                break;
            }
        }
        return ACCEL_ERR_COPY;
    }
    return ACCEL_OK;
}

static bool all_sentinel(const unsigned char *buf, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++)
        if (buf[i] != SENTINEL)
            return false;
    return true;
}

/*
 * Check that the bytes of `buf` (`size` bytes) outside the copied rows are
 * still SENTINEL: before `offset`, between rows, and after the last.
 */
static accel_status check_untouched(const char *what, const unsigned char *buf,
                                    uint64_t size, uint64_t offset,
                                    uint64_t pitch, uint64_t rows,
                                    uint64_t row_bytes)
{
    bool untouched = all_sentinel(buf, 0, offset);

    for (uint64_t r = 0; r < rows && untouched; r++) {
        uint64_t gap_end = offset + (r + 1) * pitch;

        untouched = all_sentinel(buf, offset + r * pitch + row_bytes,
                                 gap_end < size ? gap_end : size);
    }
    if (untouched)
        untouched = all_sentinel(buf, offset + rows * pitch, size);
    if (!untouched) {
        fprintf(stderr,
                "accel-demo: %s: a byte outside the copied rows was "
                "overwritten\n",
                what);
        return ACCEL_ERR_COPY;
    }
    return ACCEL_OK;
}

/*
 * Host -> ref a -> ref b -> host, `count` floats: the copy on the device is
 * what sends the data back, so each hop is checked by the final compare.
 */
static accel_status run_round_trip(const struct demo *demo)
{
    uint64_t n = demo->count;
    uint64_t bytes = n * sizeof(float);
    accel_ref a = {0}, b = {0};
    float *src = NULL, *dst = NULL;
    accel_status status;

    printf("1D round trip: %" PRIu64 " f32 (%.1f MiB), host -> device -> "
           "device -> host\n",
           n, (double)bytes / (1024.0 * 1024.0));
    TRY_MALLOC(src, bytes);
    TRY_MALLOC(dst, bytes);
    fill_pattern(src, n);
    memset(dst, SENTINEL, bytes);

    TRY(accel_alloc(demo->device, ACCEL_F32, n, &a));
    TRY(accel_alloc(demo->device, ACCEL_F32, n, &b));
    TRY(accel_copy_in(demo->stream, a, src, n));
    TRY(accel_copy_on_device(demo->stream, b, 0, a, 0, bytes));
    TRY(accel_copy_out(demo->stream, dst, b, n));
    TRY(accel_stream_sync(demo->stream));
    status = compare_rows("1D round trip", (const unsigned char *)dst, 0, bytes,
                          src, 1, bytes);

fail:
    /* Nothing enqueued may still read or write the host buffers. */
    accel_stream_sync(demo->stream);
    free_ref(demo->device, b);
    free_ref(demo->device, a);
    free(dst);
    free(src);
    return status;
}

/*
 * A packed host image goes to a device buffer with padded rows, comes back
 * into a host buffer with a different pitch and offset, and is read back
 * whole in one 1D copy too, so that a plugin that ignored the pitch the same
 * way in both directions is caught.
 */
static accel_status run_pitched_round_trip(const struct demo *demo)
{
    const uint64_t rows = 512, cols = 1000;
    const uint64_t row_bytes = cols * sizeof(float);
    const uint64_t dev_pitch = (row_bytes + 255) / 256 * 256;
    const uint64_t host_offset = 8, host_pitch = row_bytes + 12;
    const uint64_t out_size = host_offset + rows * host_pitch;
    const struct accel_copy_layout in = {
        .row_bytes = row_bytes,
        .rows = rows,
        .src_pitch = row_bytes,
        .dst_pitch = dev_pitch,
        .depth = 1,
    };
    const struct accel_copy_layout out = {
        .dst_offset = host_offset,
        .row_bytes = row_bytes,
        .rows = rows,
        .src_pitch = dev_pitch,
        .dst_pitch = host_pitch,
        .depth = 1,
    };
    accel_ref image = {0};
    float *src = NULL;
    unsigned char *dst = NULL, *whole = NULL;
    accel_status status;

    printf("2D pitched round trip: %" PRIu64 " rows of %" PRIu64 " bytes, "
           "device pitch %" PRIu64 ", host pitch %" PRIu64 " at offset %" PRIu64
           "\n",
           rows, row_bytes, dev_pitch, host_pitch, host_offset);
    TRY_MALLOC(src, rows * row_bytes);
    TRY_MALLOC(dst, out_size);
    TRY_MALLOC(whole, rows * dev_pitch);
    fill_pattern(src, rows * cols);
    memset(dst, SENTINEL, out_size);

    TRY(accel_alloc(demo->device, ACCEL_F32, rows * dev_pitch / sizeof(float),
                    &image));
    TRY(accel_copy_to_device_layout(demo->stream, image, src, &in));
    TRY(accel_copy_to_host_layout(demo->stream, dst, image, &out));
    TRY(accel_copy_to_host(demo->stream, whole, image, 0, rows * dev_pitch));
    TRY(accel_stream_sync(demo->stream));

    status = compare_rows("2D device image", whole, 0, dev_pitch, src, rows,
                          row_bytes);
    if (status == ACCEL_OK)
        status = compare_rows("2D round trip", dst, host_offset, host_pitch,
                              src, rows, row_bytes);
    if (status == ACCEL_OK)
        status = check_untouched("2D round trip", dst, out_size, host_offset,
                                 host_pitch, rows, row_bytes);

fail:
    accel_stream_sync(demo->stream);
    free_ref(demo->device, image);
    free(whole);
    free(dst);
    free(src);
    return status;
}

/* The bundle of example kernels: where the build puts it beside the tool,
 * or where an install does. */
static char *find_bundle(void)
{
    static const char *const beside[] = {
        "../kernels/accel-kernels-examples.accelpack",
        "../share/accel/accel-kernels-examples.accelpack",
    };
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return NULL;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", self, beside[i]);
        if (access(path, R_OK) == 0)
            return realpath(path, NULL);
    }
    return NULL;
}

/* y = a * x + y on the device, from the example bundle, checked on the host. */
static accel_status run_saxpy(const struct demo *demo)
{
    enum { BLOCK = 256 };
    uint32_t n = demo->count > UINT32_MAX ? UINT32_MAX : (uint32_t)demo->count;
    float a = 2.5f;
    float *x = NULL, *y = NULL, *out = NULL;
    accel_ref dx = {0}, dy = {0};
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    accel_status status;
    char *found = demo->bundle ? NULL : find_bundle();
    const char *bundle = demo->bundle ? demo->bundle : found;

    if (bundle == NULL) {
        fprintf(stderr, "accel-demo: the example kernel bundle was not found "
                        "beside the tool; give it with --bundle\n");
        return ACCEL_ERR_NOT_FOUND;
    }
    printf("saxpy: %" PRIu32 " f32, kernel from %s\n", n, bundle);
    TRY_MALLOC(x, (size_t)n * sizeof(float));
    TRY_MALLOC(y, (size_t)n * sizeof(float));
    TRY_MALLOC(out, (size_t)n * sizeof(float));
    /* Quarter steps times 2.5, plus integers: every result is exact in
     * f32, with or without a fused multiply-add. */
    fill_pattern(x, n);
    for (uint32_t i = 0; i < n; i++)
        y[i] = (float)(i % 1000);
    TRY(accel_module_load_file(demo->device, bundle, &module));
    TRY(accel_kernel_get(module, "saxpy", &saxpy));
    TRY(accel_alloc(demo->device, ACCEL_F32, n, &dx));
    TRY(accel_alloc(demo->device, ACCEL_F32, n, &dy));
    TRY(accel_copy_in(demo->stream, dx, x, n));
    TRY(accel_copy_in(demo->stream, dy, y, n));
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
    accel_dim3 grid = {(n + BLOCK - 1) / BLOCK, 1, 1}, block = {BLOCK, 1, 1};
    TRY(accel_launch(demo->stream, saxpy, grid, block, 0, args, 4));
    TRY(accel_copy_out(demo->stream, out, dy, n));
    TRY(accel_stream_sync(demo->stream));
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] != a * x[i] + y[i]) {
            fprintf(stderr,
                    "accel-demo: saxpy: element %" PRIu32 " is %g, "
                    "expected %g\n",
                    i, (double)out[i], (double)(a * x[i] + y[i]));
            status = ACCEL_ERR_LAUNCH;
            goto fail;
        }
    }

fail:
    accel_stream_sync(demo->stream);
    free_ref(demo->device, dx);
    free_ref(demo->device, dy);
    accel_module_unload(module);
    free(found);
    free(out);
    free(y);
    free(x);
    return status;
}

/*
 * --allreduce: one data-parallel step of an MPI job. Each rank scales x by
 * rank + 1 on its device (saxpy with y = 0), all-reduces the result (sum)
 * over the ranks, and checks it against the serial reference
 * x * (1 + 2 + ... + size), exact in f32 for the pattern's quarter steps.
 */
static accel_status run_allreduce(const struct demo *demo)
{
    enum { BLOCK = 256 };
    uint32_t n = demo->count > UINT32_MAX ? UINT32_MAX : (uint32_t)demo->count;
    float *x = NULL, *out = NULL;
    accel_ref dx = {0}, dy = {0};
    accel_module *module = NULL;
    accel_kernel *saxpy = NULL;
    accel_comm *comm = NULL;
    accel_status status;
    char *found = demo->bundle ? NULL : find_bundle();
    const char *bundle = demo->bundle ? demo->bundle : found;

    if (bundle == NULL) {
        fprintf(stderr, "accel-demo: the example kernel bundle was not found "
                        "beside the tool; give it with --bundle\n");
        return ACCEL_ERR_NOT_FOUND;
    }
    TRY(accel_comm_create(demo->device, &comm));
    int rank = accel_comm_rank(comm), size = accel_comm_size(comm);
    float a = (float)(rank + 1);
    TRY_MALLOC(x, (size_t)n * sizeof(float));
    TRY_MALLOC(out, (size_t)n * sizeof(float));
    fill_pattern(x, n);
    TRY(accel_module_load_file(demo->device, bundle, &module));
    TRY(accel_kernel_get(module, "saxpy", &saxpy));
    TRY(accel_alloc(demo->device, ACCEL_F32, n, &dx));
    TRY(accel_alloc(demo->device, ACCEL_F32, n, &dy));
    TRY(accel_copy_in(demo->stream, dx, x, n));
    static const float zero = 0.0f;
    TRY(accel_fill(demo->stream, dy, 0, (uint64_t)n * sizeof(float), &zero,
                   sizeof zero));
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_VALUE(a),
                        ACCEL_ARG_REF(dx), ACCEL_ARG_REF(dy)};
    accel_dim3 grid = {(n + BLOCK - 1) / BLOCK, 1, 1}, block = {BLOCK, 1, 1};
    TRY(accel_launch(demo->stream, saxpy, grid, block, 0, args, 4));
    /* In place, ordered after the kernel by the stream. */
    TRY(accel_allreduce(comm, demo->stream, dy, dy, n, ACCEL_REDUCE_SUM));
    TRY(accel_copy_out(demo->stream, out, dy, n));
    TRY(accel_stream_sync(demo->stream));
    float ranks_sum = (float)size * (float)(size + 1) / 2.0f;
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] != ranks_sum * x[i]) {
            fprintf(stderr,
                    "accel-demo: rank %d: element %" PRIu32 " is %g, "
                    "expected %g\n",
                    rank, i, (double)out[i], (double)(ranks_sum * x[i]));
            status = ACCEL_ERR_COPY;
            goto fail;
        }
    }
    printf("rank %d of %d: device %s, provider %s: x * (rank + 1) all-reduced "
           "over %" PRIu32 " f32, verified against the serial reference\n",
           rank, size, demo->where, accel_comm_provider_name(comm), n);

fail:
    accel_stream_sync(demo->stream);
    free_ref(demo->device, dx);
    free_ref(demo->device, dy);
    accel_module_unload(module);
    accel_comm_destroy(comm);
    free(found);
    free(out);
    free(x);
    return status;
}

static const struct job jobs[] = {
    {"saxpy", run_saxpy},
    {"1D round trip", run_round_trip},
    {"2D pitched round trip", run_pitched_round_trip},
};

static const char *plugin_version(const accel_host *host, const char *name)
{
    const accel_plugin_info *plugins;
    size_t count;

    accel_host_plugins(host, &plugins, &count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(plugins[i].name, name) == 0 && plugins[i].version != NULL)
            return plugins[i].version;
    return "(unknown version)";
}

static void print_device(const accel_host *host, const accel_device_info *info)
{
    const struct accel_device_props *props = &info->props;

    printf("plugin: %s %s\n", info->plugin, plugin_version(host, info->plugin));
    printf("device: %s:%" PRIu32 " %.*s (%.*s)\n", info->plugin, info->index,
           (int)strnlen(props->name, sizeof(props->name)), props->name,
           (int)strnlen(props->arch, sizeof(props->arch)), props->arch);
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: accel-demo [--count N] [--bundle FILE] [--allreduce]\n"
        "\n"
        "Open the device ACCEL_BACKEND (or automatic selection) picks, run\n"
        "saxpy from the example kernel bundle, move data host -> device ->\n"
        "device -> host, in 1D and as a pitched 2D copy, and check every\n"
        "element that comes back.\n"
        "\n"
        "  --count N      f32 elements in saxpy and the 1D round trip\n"
        "                 (default 1048576)\n"
        "  --bundle FILE  the example kernels (default: found beside the "
        "tool)\n"
        "  --allreduce    under mpirun, one rank per device\n"
        "                 (ACCEL_BACKEND=null:%%local): scale x by rank + 1,\n"
        "                 all-reduce, check against the serial reference,\n"
        "                 print one line per rank\n"
        "  --help      show this help\n"
        "\n"
        "Exit status: 0 when every round trip is verified, 1 otherwise.\n");
}

/* Parse the options into `demo`; returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, struct demo *demo)
{
    static const struct option options[] = {
        {"count", required_argument, NULL, 'n'},
        {"bundle", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {"allreduce", no_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    char *end;
    int opt;

    while ((opt = getopt_long(argc, argv, "n:b:h", options, NULL)) != -1) {
        switch (opt) {
        case 'b':
            demo->bundle = optarg;
            break;
        case 'n':
            errno = 0;
            demo->count = strtoull(optarg, &end, 10);
            if (errno != 0 || end == optarg || *end != '\0' || demo->count == 0 ||
                optarg[0] == '-' || demo->count > UINT64_MAX / sizeof(float)) {
                fprintf(stderr,
                        "accel-demo: --count: not a positive "
                        "element count: '%s'\n",
                        optarg);
                return EXIT_FAILURE;
            }
            break;
        case 'a':
            demo->allreduce = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        default:
            usage(stderr);
            return EXIT_FAILURE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "accel-demo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return EXIT_FAILURE;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct demo demo = {.count = UINT64_C(1) << 20};
    accel_device_info info;
    accel_host *host = NULL;
    accel_status status;
    double total_ms = 0.0;
    int exit_code = parse_args(argc, argv, &demo);

    if (exit_code >= 0)
        return exit_code;

    TRY(accel_host_create(NULL, &host));
    TRY(accel_device_open_selected(host, &demo.device));
    TRY(accel_device_info_get(demo.device, &info));
    if (!demo.allreduce)
        print_device(host, &info);
    TRY(accel_stream_create(demo.device, &demo.stream));
    if (demo.allreduce) {
        char where[64];
        snprintf(where, sizeof where, "%s:%" PRIu32, info.plugin, info.index);
        demo.where = where;
        status = run_allreduce(&demo);
        goto fail;
    }

    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        double start = now_ms(), elapsed;

        status = jobs[i].run(&demo);
        if (status != ACCEL_OK) {
            fprintf(stderr, "accel-demo: %s failed\n", jobs[i].name);
            goto fail;
        }
        elapsed = now_ms() - start;
        total_ms += elapsed;
        printf("  %s verified in %.2f ms\n", jobs[i].name, elapsed);
    }
    printf("verified: saxpy and round trips on %s:%" PRIu32 " in %.2f ms\n",
           info.plugin, info.index, total_ms);

fail:
    accel_stream_destroy(demo.stream);
    accel_device_close(demo.device);
    accel_host_destroy(host);
    return status == ACCEL_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}
