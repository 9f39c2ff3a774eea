#include "null_perfmap.h"

#include <dlfcn.h>
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

void accel__null_perf_map_note(const struct accel_host_services *services,
                               const unsigned char *image, size_t size,
                               void *handle)
{
    const char *wanted = services->getenv("ACCEL_PERF_MAP");
    struct link_map *map = NULL;
    char path[64];
    int fd;

    if (wanted == NULL || strcmp(wanted, "1") != 0)
        return;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL)
        return;
    fd = null_perf_map_open(services, path, sizeof(path));
    if (fd < 0)
        return;
    null_perf_map_write(fd, image, size, (uintptr_t)map->l_addr);
    close(fd);
}
