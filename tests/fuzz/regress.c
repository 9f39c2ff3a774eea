/*
 * A main() for the fuzz targets without libFuzzer: feed every file named on
 * the command line, or found under a directory named there (as libFuzzer
 * reads a corpus), to LLVMFuzzerTestOneInput once. Each input is copied
 * into a buffer of its exact size, so that a sanitizer sees a read past its
 * end.
 *
 * This is how the seed corpora, and every input that once found a bug, run
 * in every build and with any compiler. It fails when no input was found,
 * so that a missing corpus cannot pass unnoticed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        perror(path);
        return -1;
    }
    struct stat st;
    if (fstat(fileno(file), &st) != 0 || st.st_size < 0) {
        perror(path);
        fclose(file);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    /* malloc(0) may return NULL; the target still gets a valid pointer. */
    uint8_t *data = malloc(size ? size : 1);
    if (data == NULL || fread(data, 1, size, file) != size) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(data);
        fclose(file);
        return -1;
    }
    fclose(file);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static long run_directory(const char *dir_path);

/* A file, or a directory and everything under it. Returns inputs run. */
static long run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return run_directory(path);
    if (!S_ISREG(st.st_mode))
        return 0;
    return run_file(path) == 0 ? 1 : -1;
}

/* Every file under a directory, in name order. Returns inputs run. */
static long run_directory(const char *dir_path)
{
    struct dirent **entries = NULL;
    int n = scandir(dir_path, &entries, NULL, alphasort);
    if (n < 0) {
        perror(dir_path);
        return -1;
    }
    long ran = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, entries[i]->d_name);
        if (entries[i]->d_name[0] != '.') {
            long more = run_path(path);
            ran = (ran < 0 || more < 0) ? -1 : ran + more;
        }
        free(entries[i]);
    }
    free(entries);
    return ran;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        long ran = run_path(argv[i]);
        if (ran < 0)
            return 1;
        total += ran;
    }
    printf("%ld input(s) ran without a failed check\n", total);
    if (total == 0) {
        fprintf(stderr, "no input found\n");
        return 1;
    }
    return 0;
}
