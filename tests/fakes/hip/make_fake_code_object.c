/*
 * make-fake-code-object: the module image the fake HIP runtime runs, in
 * the shape hipcc --genco gives a real one.
 *
 *   make-fake-code-object OUT CPU_IMAGE TARGET...
 *
 * writes OUT, a clang offload bundle with a host entry holding CPU_IMAGE
 * (a CPU image of <accel/kernel.h> kernels, which the fake runs) and, for
 * each TARGET ("gfx90a:sramecc+:xnack-"), an entry
 * "hipv4-amdgcn-amd-amdhsa--TARGET" holding an AMDGPU code object with no
 * code but the real metadata note: NT_AMDGPU_METADATA, MessagePack, each
 * kernel's ".name", ".symbol" and ".args" (one "by_value" argument per
 * parameter, at kernel.h's offsets, then the three hidden grid offsets
 * real code objects carry). The HIP plugin reads the kernels' signatures
 * from that note exactly as from hipcc's output; the kernels and their
 * parameter sizes come from the CPU image's accel_cpu_kernel_* descriptors,
 * so the metadata cannot drift from the code the fake runs.
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/kernel.h>

#define EM_AMDGPU_ 224
#define ELFOSABI_AMDGPU_HSA_ 64
#define NT_AMDGPU_METADATA_ 32
#define KERNELS_MAX 256
#define BUNDLE_ALIGN 4096u

/* The host entry's target, as clang names it; the fake only looks for "host-". */
#if defined(__x86_64__)
#define HOST_CPU "x86_64"
#elif defined(__aarch64__)
#define HOST_CPU "aarch64"
#else
#define HOST_CPU "unknown"
#endif

/* ---- a growable byte buffer ---- */

struct buffer {
    unsigned char *data;
    size_t size, capacity;
};

static void die(const char *what)
{
    fprintf(stderr, "make-fake-code-object: %s\n", what);
    exit(1);
}

static void put(struct buffer *b, const void *bytes, size_t n)
{
    if (b->size + n > b->capacity) {
        b->capacity = (b->size + n) * 2 + 64;
        b->data = realloc(b->data, b->capacity);
        if (b->data == NULL)
            die("out of memory");
    }
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
}

static void put_zeros(struct buffer *b, size_t n)
{
    static const unsigned char zeros[64];

    for (; n > sizeof(zeros); n -= sizeof(zeros))
        put(b, zeros, sizeof(zeros));
    put(b, zeros, n);
}

static void put_le(struct buffer *b, uint64_t value, unsigned bytes)
{
    unsigned char le[8];

    for (unsigned i = 0; i < bytes; i++)
        le[i] = (unsigned char)(value >> (8 * i));
    put(b, le, bytes);
}

static void pad_to(struct buffer *b, size_t align)
{
    put_zeros(b, (align - b->size % align) % align);
}

/* ---- MessagePack ---- */

static void mp_head(struct buffer *b, unsigned fix, unsigned fix_max,
                    unsigned char tag16, uint64_t n)
{
    unsigned char byte = (unsigned char)(fix | n);

    if (n <= fix_max) {
        put(b, &byte, 1);
        return;
    }
    put(b, &tag16, 1);
    byte = (unsigned char)(n >> 8);
    put(b, &byte, 1);
    byte = (unsigned char)n;
    put(b, &byte, 1);
}

static void mp_map(struct buffer *b, unsigned n)
{
    mp_head(b, 0x80, 15, 0xde, n);
}
static void mp_array(struct buffer *b, unsigned n)
{
    mp_head(b, 0x90, 15, 0xdc, n);
}

static void mp_str(struct buffer *b, const char *text)
{
    size_t n = strlen(text);
    unsigned char tag = 0xd9, length = (unsigned char)n;

    if (n <= 31) {
        tag = (unsigned char)(0xa0 | n);
        put(b, &tag, 1);
    } else {
        put(b, &tag, 1);
        put(b, &length, 1);
    }
    put(b, text, n);
}

static void mp_uint(struct buffer *b, uint64_t value)
{
    unsigned char tag = 0xcd, byte = (unsigned char)value;

    if (value <= 0x7f) {
        put(b, &byte, 1);
        return;
    }
    put(b, &tag, 1);
    byte = (unsigned char)(value >> 8);
    put(b, &byte, 1);
    byte = (unsigned char)value;
    put(b, &byte, 1);
}

/* ---- the kernels of a CPU image ---- */

struct kernel {
    char name[128];
    const struct accel_cpu_kernel *descriptor;
};

static struct buffer read_file(const char *path)
{
    struct buffer b = {0};
    unsigned char chunk[65536];
    FILE *file = fopen(path, "rb");
    size_t n;

    if (file == NULL)
        die(path);
    while ((n = fread(chunk, 1, sizeof(chunk), file)) > 0)
        put(&b, chunk, n);
    fclose(file);
    return b;
}

/* Every accel_cpu_kernel_NAME in the image's dynamic symbols, and its descriptor. */
static size_t find_kernels(const char *path, const struct buffer *image,
                           struct kernel *out)
{
    const size_t prefix = strlen(ACCEL_CPU_KERNEL_PREFIX);
    const Elf64_Ehdr *header = (const void *)image->data;
    const Elf64_Shdr *sections;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    size_t count = 0;

    if (handle == NULL || image->size < sizeof(*header))
        die("the CPU image does not load");
    sections = (const void *)(image->data + header->e_shoff);
    for (unsigned s = 0; s < header->e_shnum; s++) {
        const Elf64_Shdr *table = &sections[s];
        const char *strings;

        if (table->sh_type != SHT_DYNSYM)
            continue;
        strings = (const char *)image->data + sections[table->sh_link].sh_offset;
        for (size_t i = 0; i < table->sh_size / sizeof(Elf64_Sym); i++) {
            const Elf64_Sym *symbol = (const void *)(image->data +
                                                     table->sh_offset +
                                                     i * sizeof(Elf64_Sym));
            const char *name = strings + symbol->st_name;

            if (symbol->st_shndx == SHN_UNDEF ||
                strncmp(name, ACCEL_CPU_KERNEL_PREFIX, prefix) != 0 ||
                count == KERNELS_MAX)
                continue;
            snprintf(out[count].name, sizeof(out[count].name), "%s",
                     name + prefix);
            out[count].descriptor = dlsym(handle, name);
            if (out[count].descriptor == NULL)
                die("a kernel descriptor is not readable");
            /* The testing image's hand-written refusals (a future ABI) are no kernels. */
            if (out[count].descriptor->abi != ACCEL_CPU_KERNEL_ABI)
                continue;
            count++;
        }
    }
    /* The handle stays open: the descriptors live in it. */
    return count;
}

/* ---- the metadata ---- */

/* Where each parameter sits, as <accel/kernel.h> lays arguments out. */
static uint32_t param_offset(const struct accel_cpu_kernel *kernel, uint32_t index)
{
    uint32_t offset = 0;

    for (uint32_t i = 0; i <= index; i++) {
        uint32_t align = 1;

        while (align < kernel->param_sizes[i] && align < 16)
            align *= 2;
        offset = (offset + align - 1) & ~(align - 1);
        if (i < index)
            offset += kernel->param_sizes[i];
    }
    return offset;
}

static void put_arg(struct buffer *b, uint32_t offset, uint32_t size,
                    const char *kind)
{
    mp_map(b, 3);
    mp_str(b, ".offset");
    mp_uint(b, offset);
    mp_str(b, ".size");
    mp_uint(b, size);
    mp_str(b, ".value_kind");
    mp_str(b, kind);
}

static void put_kernel(struct buffer *b, const struct kernel *k)
{
    static const char *const hidden[] = {"hidden_global_offset_x",
                                         "hidden_global_offset_y",
                                         "hidden_global_offset_z"};
    const struct accel_cpu_kernel *d = k->descriptor;
    uint32_t end = d->param_count == 0 ? 0
                                       : param_offset(d, d->param_count - 1) +
                                             d->param_sizes[d->param_count - 1];
    char symbol[160];

    end = (end + 7u) & ~7u;
    mp_map(b, 5);
    mp_str(b, ".args");
    mp_array(b, d->param_count + 3);
    for (uint32_t i = 0; i < d->param_count; i++)
        put_arg(b, param_offset(d, i), d->param_sizes[i], "by_value");
    for (uint32_t i = 0; i < 3; i++)
        put_arg(b, end + 8 * i, 8, hidden[i]);
    mp_str(b, ".kernarg_segment_align");
    mp_uint(b, 8);
    mp_str(b, ".kernarg_segment_size");
    mp_uint(b, end + 24);
    mp_str(b, ".name");
    mp_str(b, k->name);
    snprintf(symbol, sizeof(symbol), "%.127s.kd", k->name);
    mp_str(b, ".symbol");
    mp_str(b, symbol);
}

static struct buffer metadata(const struct kernel *kernels, size_t count,
                              const char *target)
{
    struct buffer b = {0};
    char triple[160];

    mp_map(&b, 3);
    mp_str(&b, "amdhsa.kernels");
    mp_array(&b, (unsigned)count);
    for (size_t i = 0; i < count; i++)
        put_kernel(&b, &kernels[i]);
    snprintf(triple, sizeof(triple), "amdgcn-amd-amdhsa--%s", target);
    mp_str(&b, "amdhsa.target");
    mp_str(&b, triple);
    mp_str(&b, "amdhsa.version");
    mp_array(&b, 2);
    mp_uint(&b, 1);
    mp_uint(&b, 2);
    return b;
}

/* An AMDGPU ELF with one note section (the metadata) and its section names. */
static struct buffer code_object(const struct buffer *meta)
{
    static const char names[] = "\0.note\0.shstrtab";
    struct buffer b = {0};
    size_t note_at = 64, note_size, names_at, headers_at;

    note_size = 12 + 8 + ((meta->size + 3u) & ~(size_t)3u);
    names_at = note_at + note_size;
    headers_at = (names_at + sizeof(names) + 7u) & ~(size_t)7u;
    /* The ELF header. */
    put(&b, ELFMAG, SELFMAG);
    put(&b,
        (const unsigned char[]){ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
                                ELFOSABI_AMDGPU_HSA_, 2},
        5);
    put_zeros(&b, EI_NIDENT - SELFMAG - 5);
    put_le(&b, ET_DYN, 2);
    put_le(&b, EM_AMDGPU_, 2);
    put_le(&b, EV_CURRENT, 4);
    put_le(&b, 0, 8);          /* e_entry */
    put_le(&b, 0, 8);          /* e_phoff */
    put_le(&b, headers_at, 8); /* e_shoff */
    put_le(&b, 0, 4);          /* e_flags */
    put_le(&b, 64, 2);         /* e_ehsize */
    put_le(&b, 0, 2);          /* e_phentsize */
    put_le(&b, 0, 2);          /* e_phnum */
    put_le(&b, 64, 2);         /* e_shentsize */
    put_le(&b, 3, 2);          /* e_shnum */
    put_le(&b, 2, 2);          /* e_shstrndx */
    /* The note. */
    put_le(&b, 7, 4);
    put_le(&b, meta->size, 4);
    put_le(&b, NT_AMDGPU_METADATA_, 4);
    put(&b, "AMDGPU\0", 8);
    put(&b, meta->data, meta->size);
    pad_to(&b, 4);
    put(&b, names, sizeof(names));
    pad_to(&b, 8);
    /* Section headers: null, .note, .shstrtab. */
    put_zeros(&b, 64);
    put_le(&b, 1, 4);
    put_le(&b, SHT_NOTE, 4);
    put_le(&b, SHF_ALLOC, 8);
    put_le(&b, note_at, 8);
    put_le(&b, note_at, 8);
    put_le(&b, note_size, 8);
    put_le(&b, 0, 4);
    put_le(&b, 0, 4);
    put_le(&b, 4, 8);
    put_le(&b, 0, 8);
    put_le(&b, 7, 4);
    put_le(&b, SHT_STRTAB, 4);
    put_le(&b, 0, 8);
    put_le(&b, 0, 8);
    put_le(&b, names_at, 8);
    put_le(&b, sizeof(names), 8);
    put_le(&b, 0, 4);
    put_le(&b, 0, 4);
    put_le(&b, 1, 8);
    put_le(&b, 0, 8);
    return b;
}

/* ---- the bundle ---- */

struct entry {
    char id[160];
    struct buffer code;
};

static struct buffer bundle(const struct entry *entries, size_t count)
{
    struct buffer b = {0};
    size_t header = 24 + 8, offset;

    for (size_t i = 0; i < count; i++)
        header += 24 + strlen(entries[i].id);
    put(&b, "__CLANG_OFFLOAD_BUNDLE__", 24);
    put_le(&b, count, 8);
    offset = (header + BUNDLE_ALIGN - 1) & ~(size_t)(BUNDLE_ALIGN - 1);
    for (size_t i = 0; i < count; i++) {
        put_le(&b, offset, 8);
        put_le(&b, entries[i].code.size, 8);
        put_le(&b, strlen(entries[i].id), 8);
        put(&b, entries[i].id, strlen(entries[i].id));
        offset = (offset + entries[i].code.size + BUNDLE_ALIGN - 1) &
                 ~(size_t)(BUNDLE_ALIGN - 1);
    }
    for (size_t i = 0; i < count; i++) {
        pad_to(&b, BUNDLE_ALIGN);
        put(&b, entries[i].code.data, entries[i].code.size);
    }
    return b;
}

int main(int argc, char **argv)
{
    static struct kernel kernels[KERNELS_MAX];
    struct entry entries[17];
    struct buffer image, out;
    size_t count;
    FILE *file;

    if (argc < 4 || argc - 3 > 16)
        die("usage: make-fake-code-object OUT CPU_IMAGE TARGET... (1 to 16 "
            "targets)");
    image = read_file(argv[2]);
    count = find_kernels(argv[2], &image, kernels);
    if (count == 0)
        die("the CPU image has no kernels");
    snprintf(entries[0].id, sizeof(entries[0].id), "host-%s-unknown-linux",
             HOST_CPU);
    entries[0].code = image;
    for (int t = 3; t < argc; t++) {
        struct buffer meta = metadata(kernels, count, argv[t]);

        snprintf(entries[t - 2].id, sizeof(entries[0].id),
                 "hipv4-amdgcn-amd-amdhsa--%s", argv[t]);
        entries[t - 2].code = code_object(&meta);
        free(meta.data);
    }
    out = bundle(entries, (size_t)argc - 2);
    file = fopen(argv[1], "wb");
    if (file == NULL || fwrite(out.data, 1, out.size, file) != out.size ||
        fclose(file) != 0)
        die(argv[1]);
    for (int i = 0; i < argc - 2; i++)
        free(entries[i].code.data);
    free(out.data);
    return 0;
}
