#include "null_perfmap.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "null_os.h"

typedef ElfW(Sym) null_elf_sym;

/* Section `index` of the image, or false when it lies outside it. */
static bool null_section(const unsigned char *image, size_t size,
                         unsigned index, null_elf_shdr *out_section)
{
    null_elf_ehdr header;

    memcpy(&header, image, sizeof(header));
    if (index >= header.e_shnum)
        return false;
    /* module_load checked that the section header table fits. */
    memcpy(out_section,
           image + header.e_shoff + (size_t)index * sizeof(*out_section),
           sizeof(*out_section));
    return out_section->sh_type == SHT_NOBITS ||
           (out_section->sh_offset <= size &&
            out_section->sh_size <= size - out_section->sh_offset);
}

/* The image's full symbol table if it kept one, else its dynamic one. */
static bool null_symbol_table(const unsigned char *image, size_t size,
                              null_elf_shdr *out_symbols,
                              null_elf_shdr *out_names)
{
    null_elf_ehdr header;
    uint32_t wanted[] = {SHT_SYMTAB, SHT_DYNSYM};

    memcpy(&header, image, sizeof(header));
    for (unsigned w = 0; w < 2; w++) {
        for (unsigned i = 0; i < header.e_shnum; i++) {
            if (null_section(image, size, i, out_symbols) &&
                out_symbols->sh_type == wanted[w] &&
                null_section(image, size, out_symbols->sh_link, out_names) &&
                out_names->sh_type == SHT_STRTAB)
                return true;
        }
    }
    return false;
}

/* "ADDRESS SIZE NAME\n" of each defined function, in hex as perf reads them. */
static void null_perf_map_write(int fd, const unsigned char *image, size_t size,
                                uintptr_t base)
{
    null_elf_shdr symbols, names;
    char line[512];

    if (!null_symbol_table(image, size, &symbols, &names))
        return;
    for (size_t offset = 0; offset + sizeof(null_elf_sym) <= symbols.sh_size;
         offset += sizeof(null_elf_sym)) {
        null_elf_sym symbol;
        const char *name;
        int length;

        memcpy(&symbol, image + symbols.sh_offset + offset, sizeof(symbol));
        if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC ||
            symbol.st_shndx == SHN_UNDEF || symbol.st_size == 0 ||
            symbol.st_name >= names.sh_size)
            continue;
        name = (const char *)image + names.sh_offset + symbol.st_name;
        if (memchr(name, '\0', names.sh_size - symbol.st_name) == NULL)
            continue;
        length = snprintf(line, sizeof(line), "%" PRIxPTR " %" PRIx64 " %s\n",
                          base + (uintptr_t)symbol.st_value,
                          (uint64_t)symbol.st_size, name);
        if (length > 0 && (size_t)length < sizeof(line) &&
            write(fd, line, (size_t)length) != length)
            return;
    }
}

/*
 * Open /tmp/perf-PID.map to append, refusing a link or a file someone else
 * made there (/tmp is shared).
 */
static int null_perf_map_open(const struct accel_host_services *services,
                              char *path, size_t path_size)
{
    struct stat st;
    int fd;

    snprintf(path, path_size, "/tmp/perf-%ld.map", (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        services->log(ACCEL_LOG_WARN, "null: ACCEL_PERF_MAP: cannot open %s: %s",
                      path, null_errno_name(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        services->log(ACCEL_LOG_WARN,
                      "null: ACCEL_PERF_MAP: %s is not a regular file of "
                      "this user; not written",
                      path);
        close(fd);
        return -1;
    }
    return fd;
}

static bool null_perf_wanted(const struct accel_host_services *services)
{
    const char *wanted = services->getenv("ACCEL_PERF_MAP");

    return wanted != NULL && strcmp(wanted, "1") == 0;
}

void accel__null_perf_map_note(const struct accel_host_services *services,
                               const unsigned char *image, size_t size,
                               void *handle)
{
    struct link_map *map = NULL;
    char path[64];
    int fd;

    if (!null_perf_wanted(services))
        return;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL)
        return;
    fd = null_perf_map_open(services, path, sizeof(path));
    if (fd < 0)
        return;
    null_perf_map_write(fd, image, size, (uintptr_t)map->l_addr);
    close(fd);
}

/* ---- images in named files ---- */

/* FNV-1a, 64 bits: names the file by the image's bytes. */
static uint64_t null_image_hash(const unsigned char *image, size_t size)
{
    uint64_t hash = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < size; i++)
        hash = (hash ^ image[i]) * 0x100000001b3ull;
    return hash;
}

/*
 * /tmp/accel-perf-UID, made 0700 if missing; refused unless it is a
 * directory of this user that no one else can write (/tmp is shared).
 */
static bool null_perf_dir(const struct accel_host_services *services,
                          char *path, size_t path_size)
{
    struct stat st;

    snprintf(path, path_size, "/tmp/accel-perf-%ld", (long)geteuid());
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        services->log(ACCEL_LOG_WARN,
                      "null: ACCEL_PERF_MAP: cannot make %s: %s; images "
                      "load from memory files, which perf cannot name",
                      path, null_errno_name(errno));
        return false;
    }
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        services->log(ACCEL_LOG_WARN,
                      "null: ACCEL_PERF_MAP: %s is not a directory of this "
                      "user with mode 0700; images load from memory files, "
                      "which perf cannot name",
                      path);
        return false;
    }
    return true;
}

/*
 * Written to a fresh file and renamed into place, so that a process still
 * running an older file of the same name keeps its own, and a reader never
 * sees half an image.
 */
int accel__null_perf_image_fd(const struct accel_host_services *services,
                              const unsigned char *image, size_t size)
{
    char dir[64], temp[128], path[160];
    int fd;

    if (!null_perf_wanted(services) || !null_perf_dir(services, dir, sizeof(dir)))
        return -1;
    snprintf(temp, sizeof(temp), "%s/.module-XXXXXX", dir);
    snprintf(path, sizeof(path), "%s/module-%016" PRIx64 "-%zu.so", dir,
             null_image_hash(image, size), size);
    fd = mkstemp(temp);
    if (fd < 0) {
        services->log(ACCEL_LOG_WARN,
                      "null: ACCEL_PERF_MAP: cannot write in %s: %s", dir,
                      null_errno_name(errno));
        return -1;
    }
    if (!null_write_all(fd, image, size) || fchmod(fd, 0600) != 0 ||
        rename(temp, path) != 0) {
        services->log(ACCEL_LOG_WARN, "null: ACCEL_PERF_MAP: cannot write %s: %s",
                      path, null_errno_name(errno));
        unlink(temp);
        close(fd);
        return -1;
    }
    /* O_CLOEXEC, as the memory file is: a child need not inherit it. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}
