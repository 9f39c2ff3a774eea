/*
 * accel-bench: what a user of accel cares about, on the selected device,
 * with a peer and the physical limit measured beside each figure in the
 * same run: plain C on the CPU, OpenCL through the ICD loader (when built
 * with it), and raw CUDA Driver API calls on a CUDA device.
 *
 * Exit status: 0 when every accel measurement ran, 1 when one failed (the
 * notes say why) or the output could not be written, 2 for bad usage or
 * when no device can be opened.
 */
#include <accel/accel.h>

#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "targets.h"
#include "hecbench_case.h"
#include "workloads.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* What each case measures, for --list and --help. */
static const char *const case_summaries[BENCH_CASE_COUNT] = {
    [BENCH_DISCOVERY] =
        "a fresh process's start to a device and a stream ready for work",
    [BENCH_DISCOVERY_MANY] =
        "accel_host_create over a directory of 4,096 candidate files "
        "(scanned) and of 50,000 (over the cap, refused); "
        "1,024 and 5,000 with --quick",
    [BENCH_DISPATCH] =
        "the host's cost of one no-op plugin call (an event query)",
    [BENCH_LAUNCH_EMPTY] =
        "an empty kernel of one block launched and waited for",
    [BENCH_LAUNCH_STREAM] =
        "empty launches back to back on one stream, per launch",
    [BENCH_VADD] = "c = a + b over 16M floats, GB/s counting three arrays",
    [BENCH_COPY_H2D] =
        "host to device, from pageable and from pinned memory, 4 KiB-256 MiB",
    [BENCH_COPY_D2H] =
        "device to host, to pageable and to pinned memory, 4 KiB-256 MiB",
    [BENCH_COPY_D2D] = "device to device, 4 KiB-256 MiB",
    [BENCH_FILL] =
        "accel_fill of a 4-byte pattern against memset, 4 KiB-256 MiB",
    [BENCH_ALLOC_FREE] =
        "one allocation and one free of the pool, per pair, over sizes",
    [BENCH_MATVEC] =
        "y = A x, 4096 x 4096 floats, a thread per row (32x8, 256x1 blocks)",
    [BENCH_STENCIL_2D] =
        "a 5-point Jacobi step over 4096 x 4096 floats (and tiled, shared)",
    [BENCH_CONV3D] = "a 3x3x3 convolution of 256^3 floats",
    [BENCH_HISTOGRAM] = "256 bins of 16M words, global atomics",
    [BENCH_GEMM_TILED] = "C = A B, 512 x 512 floats, shared 16x16 tiles and "
                         "barriers (and naive)",
    [BENCH_REDUCE_SHARED] =
        "the sum of each 256 of 4M floats, a tree in shared memory",
    [BENCH_SCAN_BLOCK] = "the prefix sums of each 256 of 4M floats, "
                         "Hillis-Steele in shared memory",
    [BENCH_HECBENCH] = "programs of HeCBench, their CUDA kernels unchanged, "
                       "against their OpenMP versions and OpenCL on PoCL",
    [BENCH_COMPILE] = "the example kernels from source: cold (a new source) "
                      "and warm (cached)",
    [BENCH_ALLREDUCE] = "accel_allreduce (comm) against MPI_Allreduce (mpi) "
                        "under mpirun, 4 KiB-256 MiB; only when named",
};

static void usage(FILE *out)
{
    fputs("Usage: accel-bench [--quick] [--case NAME[,NAME...]] [--impl "
          "NAME[,NAME...]]\n"
          "                   [--json] [--svg FILE] [--bundle FILE] [--list]\n"
          "\n"
          "Measure accel on the device ACCEL_BACKEND (or automatic selection) "
          "picks, with\n"
          "baselines measured in the same run: plain C (c), the plugin's entry "
          "called\n"
          "directly (plugin), OpenCL (opencl) and raw CUDA Driver API calls "
          "(cuda-raw).\n"
          "\n"
          "  --quick        a run of a few seconds: fewer sizes, shorter "
          "budgets\n"
          "  --case LIST    only these cases (--list names them)\n"
          "  --impl LIST    only these implementations: "
          "accel,plugin,c,opencl,cuda-raw,openmp\n"
          "  --program LIST only these programs of the hecbench case\n"
          "  --json         print one JSON document instead of the table\n"
          "  --svg FILE     also write a plot of copy bandwidth against "
          "transfer size\n"
          "                 and of the workload cases\n"
          "  --bundle FILE  the example kernels (default: found beside the "
          "tool)\n"
          "  --list         list the cases and exit\n",
          out);
}

static void list_cases(void)
{
    for (int id = 0; id < BENCH_CASE_COUNT; id++)
        printf("%-14s %s\n", bench_case_name((enum bench_case_id)id),
               case_summaries[id]);
    for (const char *const *p = bench_hecbench_variants(); *p != NULL; p++)
        printf("  %-12s %s\n", *p, bench_hecbench_program_summary(*p));
}

/* --case LIST into options->cases; false (with a message) for an unknown name. */
static bool parse_cases(const char *list, struct bench_options *options)
{
    memset(options->cases, 0, sizeof(options->cases));
    for (const char *p = list; *p != '\0';) {
        size_t length = strcspn(p, ",");
        enum bench_case_id id;

        if (!bench_case_from_name(p, length, &id)) {
            fprintf(stderr,
                    "accel-bench: no case named \"%.*s\" (--list names them)\n",
                    (int)length, p);
            return false;
        }
        options->cases[id] = true;
        p += length;
        p += *p == ',';
    }
    return true;
}

/* 0 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct bench_options *options)
{
    static const struct option long_options[] = {
        {"quick", no_argument, NULL, 'q'},
        {"case", required_argument, NULL, 'c'},
        {"impl", required_argument, NULL, 'i'},
        {"program", required_argument, NULL, 'p'},
        {"json", no_argument, NULL, 'j'},
        {"svg", required_argument, NULL, 's'},
        {"bundle", required_argument, NULL, 'b'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *bad;
    size_t bad_length;
    int c;

    /* allreduce needs a launcher and every rank in step: only on request. */
    for (int id = 0; id < BENCH_CASE_COUNT; id++)
        options->cases[id] = id != BENCH_ALLREDUCE;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case 'q':
            options->quick = true;
            break;
        case 'j':
            options->json = true;
            break;
        case 's':
            options->svg_path = optarg;
            break;
        case 'b':
            options->bundle_path = optarg;
            break;
        case 'i':
            options->impls = optarg;
            break;
        case 'p':
            options->programs = optarg;
            break;
        case 'c':
            if (!parse_cases(optarg, options))
                return EXIT_USAGE;
            break;
        case 'l':
            list_cases();
            return -1;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (options->impls != NULL &&
        !bench_impl_names_valid(options->impls, &bad, &bad_length)) {
        fprintf(stderr, "accel-bench: no implementation named \"%.*s\"\n",
                (int)bad_length, bad);
        return EXIT_USAGE;
    }
    if (options->programs != NULL && bench_hecbench_variants()[0] == NULL) {
        fputs("accel-bench: this build has no hecbench programs (they need a "
              "C++ compiler with OpenMP, and no ThreadSanitizer)\n",
              stderr);
        return EXIT_USAGE;
    }
    if (options->programs != NULL &&
        !bench_list_known(options->programs, bench_hecbench_variants(), &bad,
                          &bad_length)) {
        fprintf(stderr,
                "accel-bench: no hecbench program named \"%.*s\" (--list "
                "names them)\n",
                (int)bad_length, bad);
        return EXIT_USAGE;
    }
    return 0;
}

/* argv of a discovery child: --child IMPL --report-fd FD [--child-arg ARG]. */
static int child_main(int argc, char **argv)
{
    const char *arg = NULL;

    if (argc != 5 && argc != 7)
        return EXIT_USAGE;
    if (strcmp(argv[3], "--report-fd") != 0 ||
        (argc == 7 && strcmp(argv[5], "--child-arg") != 0))
        return EXIT_USAGE;
    if (argc == 7)
        arg = argv[6];
    return bench_discovery_child(argv[2], arg, atoi(argv[4]));
}

/* This executable's path, malloc'd; NULL when unknown. */
static char *self_path(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

    if (n <= 0)
        return NULL;
    path[n] = '\0';
    return strdup(path);
}

/* The example kernels beside the tool: in the build tree or where installed. */
static char *find_bundle(const char *self)
{
    static const char *const beside[] = {
        "../../kernels/accel-kernels-examples.accelpack",
        "../share/accel/accel-kernels-examples.accelpack",
    };
    char dir[4096], path[4300];
    char *slash;

    if (self == NULL)
        return NULL;
    snprintf(dir, sizeof(dir), "%s", self);
    slash = strrchr(dir, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, beside[i]);
        if (access(path, R_OK) == 0)
            return realpath(path, NULL);
    }
    return NULL;
}

static uint32_t cpu_count(void)
{
    cpu_set_t set;
    long online;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (uint32_t)CPU_COUNT(&set);
    online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (uint32_t)online : 1u;
}

/* Open the selected device and describe it; false with the error printed. */
static bool open_device(struct bench_env *env)
{
    const accel_plugin_info *plugins;
    accel_status status;
    size_t count;

    if ((status = accel_host_create(NULL, &env->host)) != ACCEL_OK ||
        (status = accel_device_open_selected(env->host, &env->device)) !=
            ACCEL_OK ||
        (status = accel_device_info_get(env->device, &env->info)) != ACCEL_OK) {
        fprintf(stderr, "accel-bench: no device: %s: %s\n",
                accel_status_name(status), accel_last_error());
        return false;
    }
    accel_host_plugins(env->host, &plugins, &count);
    for (size_t i = 0; i < count && env->plugin_path == NULL; i++)
        if (plugins[i].state == ACCEL_PLUGIN_LOADED &&
            strcmp(plugins[i].name, env->info.plugin) == 0)
            env->plugin_path = plugins[i].path;
    env->device_is_cpu = (env->info.props.caps &
                          ACCEL_DEVICE_CAP_HOST_VISIBLE) != 0;
    return true;
}

static void describe_machine(struct bench_env *env)
{
    struct bench_machine *m = &env->report->machine;

    snprintf(m->plugin, sizeof(m->plugin), "%s", env->info.plugin);
    m->device_index = env->info.index;
    snprintf(m->device_name, sizeof(m->device_name), "%s", env->info.props.name);
    snprintf(m->arch, sizeof(m->arch), "%s", env->info.props.arch);
    m->cpus = env->cpus;
    m->quick = env->options->quick;
}

static bool write_svg(const struct bench_report *report, const char *path)
{
    FILE *out = fopen(path, "w");
    bool ok;

    if (out == NULL) {
        perror(path);
        return false;
    }
    bench_write_svg(report, out);
    ok = !ferror(out);
    if (fclose(out) != 0 || !ok) {
        fprintf(stderr, "accel-bench: writing %s failed\n", path);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    struct bench_options options = {0};
    struct bench_report report;
    struct bench_env env = {.options = &options, .report = &report};
    char *self, *found_bundle = NULL;
    int status;

    if (argc >= 2 && strcmp(argv[1], "--child") == 0)
        return child_main(argc, argv);
    status = parse_options(argc, argv, &options);
    if (status != 0)
        return status < 0 ? 0 : status;

    bench_report_init(&report);
    self = self_path();
    env.self_path = self;
    if (options.bundle_path == NULL)
        found_bundle = find_bundle(self);
    env.bundle_path = options.bundle_path != NULL ? options.bundle_path
                                                  : found_bundle;
    env.cpus = cpu_count();
    env.max_copy_bytes = bench_max_copy_bytes(options.quick);
    env.stream_launches = options.quick ? 256 : 1000;
    env.progress_tty = isatty(STDERR_FILENO);
    status = EXIT_USAGE;
    if (self == NULL || !open_device(&env)) {
        if (self == NULL)
            fputs("accel-bench: cannot find its own executable "
                  "(/proc/self/exe)\n",
                  stderr);
        goto done;
    }
    describe_machine(&env);

    status = bench_run_all(&env) ? 0 : EXIT_FAILED;
    if (options.json) {
        bench_write_json(&report, stdout);
    } else {
        bench_write_table(&report, stdout);
        bench_write_targets(&report, stdout);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        status = EXIT_FAILED;
    if (options.svg_path != NULL && !write_svg(&report, options.svg_path))
        status = EXIT_FAILED;

done:
    accel_device_close(env.device);
    accel_host_destroy(env.host);
    bench_report_deinit(&report);
    bench_workloads_free(&env);
    bench_hecbench_free(&env);
    free(found_bundle);
    free(self);
    return status;
}
