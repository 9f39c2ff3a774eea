/*
 * A CPU image's kernels are found by name in its dynamic symbol table (the
 * exported accel_cpu_kernel_NAME descriptors), read from the file as ELF64
 * sections, then looked up with dlsym in the loaded image, whose
 * descriptors hold pointers (the parameter names) that only the dynamic
 * loader resolves.
 */
#include "cpu_signatures.h"

#include <accel/accel.h>
#include <accel/kernel.h>

#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The file in memory; kernel images are small. */
static unsigned char *read_all(const char *path, size_t *out_size)
{
    FILE *file = fopen(path, "rb");
    unsigned char *data = NULL;
    long length = -1;
    if (file != NULL && fseek(file, 0, SEEK_END) == 0)
        length = ftell(file);
    if (length > 0 && length < (1l << 30) && fseek(file, 0, SEEK_SET) == 0)
        data = malloc((size_t)length);
    if (data != NULL && fread(data, 1, (size_t)length, file) != (size_t)length) {
        free(data);
        data = NULL;
    }
    if (file != NULL)
        fclose(file);
    *out_size = data != NULL ? (size_t)length : 0;
    return data;
}

/* Section `index` of the image, when its header lies inside the file. */
static const Elf64_Shdr *section(const unsigned char *data, size_t size,
                                 size_t index)
{
    const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)data;
    uint64_t at = ehdr->e_shoff + (uint64_t)index * sizeof(Elf64_Shdr);
    if (index >= ehdr->e_shnum || at > size || size - at < sizeof(Elf64_Shdr))
        return NULL;
    return (const Elf64_Shdr *)(data + at);
}

static bool inside(const Elf64_Shdr *s, size_t size)
{
    return s != NULL && s->sh_offset <= size && s->sh_size <= size - s->sh_offset;
}

/* The length of the parameter name at `names` (" n a x"), or 0 for none. */
static size_t name_length(const char *names)
{
    size_t n = 0;
    if (names[0] != ' ')
        return 0;
    while ((names[1 + n] >= 'a' && names[1 + n] <= 'z') ||
           (names[1 + n] >= 'A' && names[1 + n] <= 'Z') ||
           (names[1 + n] >= '0' && names[1 + n] <= '9') || names[1 + n] == '_')
        n++;
    return n;
}

/* Whether a descriptor's typed signature is whole: a kind, a type and a name each. */
static bool kernel_typed(const struct accel_cpu_kernel *kernel)
{
    const char *names = kernel->param_names;
    if (kernel->abi != 3 || names == NULL ||
        kernel->param_count > ACCEL_CPU_KERNEL_MAX_PARAMS)
        return false;
    for (uint32_t i = 0; i < kernel->param_count; i++) {
        size_t length = name_length(names);
        if (length == 0 || length > 200 ||
            (kernel->param_kinds[i] != ACCEL_CPU_PARAM_POINTER &&
             kernel->param_kinds[i] != ACCEL_CPU_PARAM_VALUE) ||
            kernel->param_types[i] >= ACCEL_ELEM_TYPE_COUNT)
            return false;
        names += 1 + length;
    }
    return names[0] == '\0';
}

/* One kernel's line: its name, then NAME:KIND:TYPE for each parameter. */
static void write_kernel(const char *name,
                         const struct accel_cpu_kernel *kernel, FILE *out)
{
    const char *names = kernel->param_names;
    fputs(name, out);
    for (uint32_t i = 0; i < kernel->param_count; i++) {
        size_t length = name_length(names);
        fprintf(out, " %.*s:%s:%s", (int)length, names + 1,
                kernel->param_kinds[i] == ACCEL_CPU_PARAM_POINTER ? "ptr" : "val",
                accel_elem_type_name((accel_elem_type)kernel->param_types[i]));
        names += 1 + length;
    }
    fputc('\n', out);
}

/* Each accel_cpu_kernel_* symbol the dynamic symbol table defines. */
static int write_kernels(const unsigned char *data, size_t size, void *image,
                         FILE *out)
{
    const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)data;
    const size_t prefix = strlen(ACCEL_CPU_KERNEL_PREFIX);
    for (size_t i = 0; i < ehdr->e_shnum; i++) {
        const Elf64_Shdr *symtab = section(data, size, i);
        if (symtab == NULL || symtab->sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Shdr *strtab = section(data, size, symtab->sh_link);
        if (!inside(symtab, size) || !inside(strtab, size) ||
            strtab->sh_size == 0 ||
            data[strtab->sh_offset + strtab->sh_size - 1] != '\0')
            return -1;
        const Elf64_Sym *syms = (const Elf64_Sym *)(data + symtab->sh_offset);
        const char *strings = (const char *)(data + strtab->sh_offset);
        for (size_t s = 0; s < symtab->sh_size / sizeof(Elf64_Sym); s++) {
            if (syms[s].st_shndx == SHN_UNDEF ||
                syms[s].st_name >= strtab->sh_size)
                continue;
            const char *symbol = strings + syms[s].st_name;
            if (strncmp(symbol, ACCEL_CPU_KERNEL_PREFIX, prefix) != 0)
                continue;
            const struct accel_cpu_kernel *kernel = dlsym(image, symbol);
            if (kernel == NULL || !kernel_typed(kernel))
                fprintf(
                    stderr,
                    "accel-pack signatures: kernel %s has no typed signature "
                    "(CPU kernel ABI %u, ABI 3 has one) or a malformed one: "
                    "left "
                    "out\n",
                    symbol + prefix, kernel != NULL ? kernel->abi : 0);
            else
                write_kernel(symbol + prefix, kernel, out);
        }
        return 0;
    }
    return -1;
}

int accel__cpu_signatures_write(const char *path, FILE *out)
{
    size_t size = 0;
    unsigned char *data = read_all(path, &size);
    if (data == NULL || size < sizeof(Elf64_Ehdr) ||
        memcmp(data, ELFMAG, SELFMAG) != 0 || data[EI_CLASS] != ELFCLASS64) {
        fprintf(stderr,
                "accel-pack signatures: %s: not a readable 64-bit ELF image\n",
                path);
        free(data);
        return -1;
    }
    /* A bare file name would send dlopen down the library path. */
    char *local = NULL;
    if (strchr(path, '/') == NULL && (local = malloc(strlen(path) + 3)) != NULL)
        sprintf(local, "./%s", path);
    void *image = dlopen(local != NULL ? local : path, RTLD_NOW | RTLD_LOCAL);
    free(local);
    int result = -1;
    if (image == NULL) {
        fprintf(stderr, "accel-pack signatures: %s: %s\n", path, dlerror());
    } else {
        fputs("accel-signatures 1\n", out);
        result = write_kernels(data, size, image, out);
        if (result != 0)
            fprintf(stderr,
                    "accel-pack signatures: %s: no dynamic symbol table\n", path);
        dlclose(image);
    }
    free(data);
    return result;
}
