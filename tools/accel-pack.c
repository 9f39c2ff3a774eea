/*
 * accel-pack: create, list and extract kernel bundles.
 *
 * A bundle holds one image per backend and target (the format is specified
 * in host/bundle.h); libaccel picks the one that fits the device. This tool
 * writes and reads bundles with libaccel's own parser and writer, so that
 * what it accepts is exactly what the library accepts.
 *
 * Exit status: 0 on success, 1 when a file cannot be read, written or
 * parsed or no image fits, 2 on bad usage.
 */
#include <accel/accel.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cpu_signatures.h"
#include "json.h"

enum { EXIT_USAGE = 2 };

/* Bigger inputs are refused before they are read: kernel images are small,
 * and a bundle must fit in memory to be loaded anyway. */
#define FILE_LIMIT (UINT64_C(1) << 30)

/* ---- files ---- */

/* A whole file in memory. */
struct blob {
    uint8_t *data;
    size_t size;
};

static void blob_free(struct blob *blob)
{
    free(blob->data);
    blob->data = NULL;
    blob->size = 0;
}

/*
 * Read at most `limit` more bytes from `fd` into `out_blob`. The size
 * fstat reports is only a hint: a file may change while it is read, and a
 * pipe has none, so the limit is checked against what actually arrives.
 */
static int read_fd(int fd, const char *path, size_t hint, struct blob *out_blob)
{
    size_t capacity = hint > 0 ? hint + 1 : 65536;
    uint8_t *data = malloc(capacity);
    size_t size = 0;
    if (data == NULL)
        goto no_memory;
    for (;;) {
        if (size == capacity) {
            if (capacity > FILE_LIMIT)
                goto too_big;
            uint8_t *grown = realloc(data, capacity * 2);
            if (grown == NULL)
                goto no_memory;
            data = grown;
            capacity *= 2;
        }
        ssize_t n = read(fd, data + size, capacity - size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "accel-pack: %s: %s\n", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        size += (size_t)n;
        if (size > FILE_LIMIT)
            goto too_big;
    }
    out_blob->data = data;
    out_blob->size = size;
    return 0;

too_big:
    fprintf(stderr, "accel-pack: %s: larger than %" PRIu64 " bytes; refused\n",
            path, FILE_LIMIT);
    goto fail;
no_memory:
    fprintf(stderr, "accel-pack: %s: out of memory\n", path);
fail:
    free(data);
    return -1;
}

static int read_file(const char *path, struct blob *out_blob)
{
    out_blob->data = NULL;
    out_blob->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "accel-pack: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int result = -1;
    if (fstat(fd, &st) != 0) {
        fprintf(stderr, "accel-pack: %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "accel-pack: %s: is a directory\n", path);
        goto done;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > FILE_LIMIT) {
        fprintf(stderr,
                "accel-pack: %s: %" PRIu64 " bytes, larger than %" PRIu64
                "; refused\n",
                path, (uint64_t)st.st_size, FILE_LIMIT);
        goto done;
    }
    result = read_fd(fd, path, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0,
                     out_blob);
done:
    close(fd);
    return result;
}

/* Write all of `data` to `path` ("-" for standard output). */
static int write_file(const char *path, const void *data, size_t size)
{
    bool to_stdout = strcmp(path, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    if (out == NULL) {
        fprintf(stderr, "accel-pack: %s: %s\n", path, strerror(errno));
        return -1;
    }
    bool written = fwrite(data, 1, size, out) == size;
    int saved = errno;
    bool closed = to_stdout ? fflush(out) == 0 : fclose(out) == 0;
    if (written && closed)
        return 0;
    fprintf(stderr, "accel-pack: %s: %s\n", path,
            strerror(written ? errno : saved));
    /* A half-written output would look like a corrupt bundle or image. */
    if (!to_stdout)
        remove(path);
    return -1;
}

/* Read and parse a bundle; the entries point into `out_blob`. */
static int load_bundle(const char *path, struct blob *out_blob,
                       struct accel__bundle_entry *out_entries,
                       uint32_t *out_count)
{
    *out_count = 0;
    if (read_file(path, out_blob) != 0)
        return -1;
    accel_status status = accel__bundle_parse(out_blob->data, out_blob->size,
                                              out_entries, out_count);
    if (status != ACCEL_OK) {
        fprintf(stderr, "accel-pack: %s: %s\n", path, accel_last_error());
        blob_free(out_blob);
        return -1;
    }
    return 0;
}

/* ---- create ---- */

/*
 * Split "backend:target:format=PATH" in place. The target is everything
 * between the first and the last colon, so that a HIP target with
 * features ("gfx90a:xnack-") needs no quoting; the path is everything
 * after the first '='.
 */
static int split_image_arg(char *arg, struct accel__bundle_image *out_image,
                           const char **out_path)
{
    memset(out_image, 0, sizeof *out_image);
    *out_path = NULL;
    char *equals = strchr(arg, '=');
    if (equals == NULL)
        return -1;
    *equals = '\0';
    char *first = strchr(arg, ':');
    char *last = strrchr(arg, ':');
    if (first == NULL || first == last || equals[1] == '\0')
        return -1;
    *first = '\0';
    *last = '\0';
    out_image->backend = arg;
    out_image->target = first + 1;
    out_image->format = last + 1;
    *out_path = equals + 1;
    return 0;
}

/* Read each IMAGE argument's file; `blobs` and `images` have `count`. */
static int read_images(char **args, uint32_t count, struct blob *blobs,
                       struct accel__bundle_image *images)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        const char *path;
        if (split_image_arg(args[i], &images[i], &path) != 0) {
            fprintf(stderr,
                    "accel-pack: '%s' is not backend:target:format="
                    "PATH\n",
                    args[i]);
            return EXIT_USAGE;
        }
        if (read_file(path, &blobs[i]) != 0)
            return EXIT_FAILURE;
        images[i].data = blobs[i].data;
        images[i].size = blobs[i].size;
        total += blobs[i].size;
        if (total > FILE_LIMIT) {
            fprintf(stderr,
                    "accel-pack: the images come to more than %" PRIu64
                    " bytes; refused\n",
                    FILE_LIMIT);
            return EXIT_FAILURE;
        }
    }
    return EXIT_SUCCESS;
}

static int cmd_create(int argc, char **argv)
{
    /* argv[0] is "create": no options, so no getopt. */
    if (argc < 3) {
        fprintf(stderr,
                "accel-pack create: needs OUT and at least one IMAGE\n");
        return EXIT_USAGE;
    }
    const char *out_path = argv[1];
    if (argc - 2 > ACCEL__BUNDLE_MAX_ENTRIES) {
        fprintf(stderr,
                "accel-pack create: %d images; a bundle holds at most "
                "%d\n",
                argc - 2, ACCEL__BUNDLE_MAX_ENTRIES);
        return EXIT_USAGE;
    }
    uint32_t count = (uint32_t)(argc - 2);
    struct blob blobs[ACCEL__BUNDLE_MAX_ENTRIES] = {{0}};
    struct accel__bundle_image images[ACCEL__BUNDLE_MAX_ENTRIES];
    void *bundle = NULL;
    size_t size = 0;

    int exit_code = read_images(argv + 2, count, blobs, images);
    if (exit_code != EXIT_SUCCESS)
        goto done;
    exit_code = EXIT_FAILURE;
    if (accel__bundle_write(images, count, &bundle, &size) != ACCEL_OK) {
        fprintf(stderr, "accel-pack: %s: %s\n", out_path, accel_last_error());
        goto done;
    }
    if (write_file(out_path, bundle, size) == 0)
        exit_code = EXIT_SUCCESS;
done:
    free(bundle);
    for (uint32_t i = 0; i < count; i++)
        blob_free(&blobs[i]);
    return exit_code;
}

/* ---- list ---- */

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static void print_table(const struct accel__bundle_entry *entries, uint32_t count)
{
    int backend_w = (int)strlen("backend");
    int target_w = (int)strlen("target");
    int format_w = (int)strlen("format");
    for (uint32_t i = 0; i < count; i++) {
        backend_w = max_int(backend_w, (int)strlen(entries[i].backend));
        target_w = max_int(target_w, (int)strlen(entries[i].target));
        format_w = max_int(format_w, (int)strlen(entries[i].format));
    }
    printf("%5s  %-*s  %-*s  %-*s  %12s  %12s\n", "index", backend_w, "backend",
           target_w, "target", format_w, "format", "size", "offset");
    for (uint32_t i = 0; i < count; i++)
        printf("%5" PRIu32 "  %-*s  %-*s  %-*s  %12" PRIu64 "  %12" PRIu64 "\n",
               i, backend_w, entries[i].backend, target_w, entries[i].target,
               format_w, entries[i].format, entries[i].size, entries[i].offset);
}

static void print_json(const char *path, size_t size,
                       const struct accel__bundle_entry *entries, uint32_t count)
{
    struct json_writer w;
    json_writer_init(&w, stdout);
    json_begin_object(&w, NULL);
    json_string(&w, "file", path);
    json_uint(&w, "size", size);
    json_begin_array(&w, "images");
    for (uint32_t i = 0; i < count; i++) {
        json_begin_object(&w, NULL);
        json_uint(&w, "index", i);
        json_string(&w, "backend", entries[i].backend);
        json_string(&w, "target", entries[i].target);
        json_string(&w, "format", entries[i].format);
        json_uint(&w, "size", entries[i].size);
        json_uint(&w, "offset", entries[i].offset);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_writer_finish(&w);
}

static int cmd_list(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt != 'j')
            return EXIT_USAGE;
        json = true;
    }
    if (argc - optind != 1) {
        fprintf(stderr, "accel-pack list: needs exactly one FILE\n");
        return EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count;
    struct blob blob;
    if (load_bundle(path, &blob, entries, &count) != 0)
        return EXIT_FAILURE;
    if (json)
        print_json(path, blob.size, entries, count);
    else
        print_table(entries, count);
    blob_free(&blob);
    return EXIT_SUCCESS;
}

/* ---- extract ---- */

/* INDEX: decimal digits only, below `count`. */
static int parse_index(const char *text, uint32_t count, uint32_t *out_index)
{
    *out_index = 0;
    char *end;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 ||
        value >= count) {
        fprintf(stderr,
                "accel-pack extract: INDEX '%s' is not one of 0 to %" PRIu32 "\n",
                text, count - 1);
        return -1;
    }
    *out_index = (uint32_t)value;
    return 0;
}

static int choose_image(const char *path, const char *index_text,
                        const char *backend, const char *target,
                        const struct accel__bundle_entry *entries,
                        uint32_t count, uint32_t *out_index)
{
    if (index_text != NULL)
        return parse_index(index_text, count, out_index);
    if (accel__bundle_pick(entries, count, backend, target, out_index) !=
        ACCEL_OK) {
        fprintf(stderr, "accel-pack: %s: %s\n", path, accel_last_error());
        return -1;
    }
    return 0;
}

static int cmd_extract(int argc, char **argv)
{
    static const struct option options[] = {
        {"backend", required_argument, NULL, 'b'},
        {"target", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const char *backend = NULL;
    const char *target = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == 'b')
            backend = optarg;
        else if (opt == 't')
            target = optarg;
        else
            return EXIT_USAGE;
    }
    bool by_pick = backend != NULL || target != NULL;
    int wanted = by_pick ? 2 : 3;
    if ((by_pick && (backend == NULL || target == NULL)) ||
        argc - optind != wanted) {
        fprintf(stderr, "accel-pack extract: needs FILE INDEX OUT, or FILE "
                        "--backend B --target T OUT\n");
        return EXIT_USAGE;
    }
    const char *path = argv[optind];
    const char *index_text = by_pick ? NULL : argv[optind + 1];
    const char *out_path = argv[argc - 1];

    struct accel__bundle_entry entries[ACCEL__BUNDLE_MAX_ENTRIES];
    uint32_t count, index;
    struct blob blob;
    if (load_bundle(path, &blob, entries, &count) != 0)
        return EXIT_FAILURE;
    int exit_code = EXIT_FAILURE;
    if (choose_image(path, index_text, backend, target, entries, count,
                     &index) == 0 &&
        write_file(out_path, blob.data + entries[index].offset,
                   (size_t)entries[index].size) == 0)
        exit_code = EXIT_SUCCESS;
    blob_free(&blob);
    return exit_code;
}

/* ---- signatures ---- */

static int cmd_signatures(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "accel-pack signatures: needs one CPU_IMAGE\n");
        return EXIT_USAGE;
    }
    if (accel__cpu_signatures_write(argv[1], stdout) != 0 || fflush(stdout) != 0)
        return EXIT_FAILURE;
    return EXIT_SUCCESS;
}

/* ---- main ---- */

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: accel-pack create OUT IMAGE...\n"
        "       accel-pack list [--json] FILE\n"
        "       accel-pack extract FILE INDEX OUT\n"
        "       accel-pack extract FILE --backend B --target T OUT\n"
        "       accel-pack signatures CPU_IMAGE\n"
        "\n"
        "Create, list and extract kernel bundles: files holding one image\n"
        "per backend and target, from which libaccel loads the one that\n"
        "fits the device.\n"
        "\n"
        "  IMAGE is BACKEND:TARGET:FORMAT=PATH, for example\n"
        "    null:x86_64:elf=kernels.so   cuda:sm_90:cubin=kernels.cubin\n"
        "    cuda:compute_80:ptx=kernels.ptx   hip:gfx90a:hsaco=kernels.co\n"
        "  FORMAT is one of ptx, cubin, fatbin, hsaco, elf. TARGET 'any'\n"
        "  fits every device of the backend; PTX for compute_XX fits every\n"
        "  CUDA device sm_XX or newer. accel:any:sig=FILE adds the kernels'\n"
        "  typed signatures, which accel_launch checks every image against.\n"
        "\n"
        "  signatures prints the typed signatures of the kernels of a CPU\n"
        "  image built for this machine with <accel/kernel.h> (it is loaded,\n"
        "  so it must be your own build), as the text of a sig entry.\n"
        "\n"
        "  extract writes one image: by INDEX (as list shows), or the one\n"
        "  libaccel would load on a device of backend B and target T.\n"
        "  OUT may be '-' for standard output. Files over 1 GiB are refused.\n"
        "\n"
        "  --help   show this help\n"
        "\n"
        "Exit status: 0 on success, 1 on a file or bundle error, 2 on bad\n"
        "usage.\n");
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"create", cmd_create},
        {"list", cmd_list},
        {"extract", cmd_extract},
        {"signatures", cmd_signatures},
    };
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_SUCCESS;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        for (int a = 2; a < argc && strcmp(argv[a], "--") != 0; a++)
            if (strcmp(argv[a], "--help") == 0) {
                usage(stdout);
                return EXIT_SUCCESS;
            }
        /* The command sees its own arguments, with its name as argv[0]. */
        int code = commands[i].run(argc - 1, argv + 1);
        if (code == EXIT_USAGE)
            fprintf(stderr, "Try 'accel-pack --help'.\n");
        return code;
    }
    fprintf(stderr, "accel-pack: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
