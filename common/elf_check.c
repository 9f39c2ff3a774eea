/* The ELF checker run before a dlopen: see elf_check.h for what it catches. */
#include "elf_check.h"

#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ElfW(Ehdr) elf_ehdr;
typedef ElfW(Phdr) elf_phdr;
typedef ElfW(Shdr) elf_shdr;
typedef ElfW(Dyn) elf_dyn;

#define ELF_CLASS_HERE (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELF_DATA_HERE ELFDATA2LSB
#else
#define ELF_DATA_HERE ELFDATA2MSB
#endif
#if defined(__x86_64__)
#define ELF_MACHINE_HERE EM_X86_64
#elif defined(__aarch64__)
#define ELF_MACHINE_HERE EM_AARCH64
#elif defined(__riscv)
#define ELF_MACHINE_HERE EM_RISCV
#elif defined(__powerpc64__)
#define ELF_MACHINE_HERE EM_PPC64
#elif defined(__s390x__)
#define ELF_MACHINE_HERE EM_S390
#elif defined(__i386__)
#define ELF_MACHINE_HERE EM_386
#elif defined(__arm__)
#define ELF_MACHINE_HERE EM_ARM
#else
#define ELF_MACHINE_HERE EM_NONE /* unknown here: the dynamic loader decides */
#endif

/* Far more program headers and dynamic entries than any linker writes
 * (about 10 and 40): past these the file is damaged, and the checks, which
 * compare the two, stay cheap. */
#define PHNUM_MAX 1024u
#define DYNAMIC_MAX 1024u

/* What the check carries: the reader, the size, the headers read once. */
struct elf_view {
    accel__elf_read_fn read;
    void *context;
    uint64_t size;
    elf_ehdr header;
    elf_phdr *phdrs; /* e_phnum of them */
    elf_dyn *dyn;    /* the dynamic entries before DT_NULL */
    size_t dyn_count;
    char *why;
    size_t why_size;
};

bool accel__elf_read_memory(void *context, uint64_t offset, void *buf, size_t size)
{
    const struct accel__elf_memory *memory = context;
    if (offset > memory->size || size > memory->size - offset)
        return false;
    memcpy(buf, (const unsigned char *)memory->bytes + offset, size);
    return true;
}

static const char *machine_name(unsigned machine)
{
    switch (machine) {
    case EM_386:
        return "i386";
    case EM_ARM:
        return "arm";
    case EM_X86_64:
        return "x86_64";
    case EM_AARCH64:
        return "aarch64";
    case EM_RISCV:
        return "riscv";
    case EM_PPC64:
        return "ppc64";
    case EM_S390:
        return "s390";
    case EM_CUDA:
        return "CUDA (a cubin, for the cuda plugin)";
    case 224:
        return "AMD GPU (a code object, for the hip plugin)"; /* EM_AMDGPU */
    default:
        return "unknown";
    }
}

/* Whether [offset, offset + count * size) lies within `total` bytes. */
static bool range_fits(uint64_t offset, uint64_t count, uint64_t size,
                       uint64_t total)
{
    if (count != 0 && size > UINT64_MAX / count)
        return false;
    return offset <= total && count * size <= total - offset;
}

static const char *refuse(struct elf_view *view, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *refuse(struct elf_view *view, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(view->why, view->why_size, fmt, args);
    va_end(args);
    return view->why;
}

static const char *header_refusal(struct elf_view *view)
{
    const elf_ehdr *h = &view->header;
    if (h->e_ident[EI_CLASS] != ELF_CLASS_HERE)
        return refuse(view, "ELF class %u; this process loads class %u (%u-bit)",
                      h->e_ident[EI_CLASS], (unsigned)ELF_CLASS_HERE,
                      (unsigned)(sizeof(void *) * 8));
    if (h->e_ident[EI_DATA] != ELF_DATA_HERE)
        return refuse(view, "the byte order (EI_DATA %u) is not this machine's",
                      h->e_ident[EI_DATA]);
    if (ELF_MACHINE_HERE != EM_NONE && h->e_machine != ELF_MACHINE_HERE)
        return refuse(view, "ELF machine %u (%s); this process runs %s",
                      h->e_machine, machine_name(h->e_machine),
                      machine_name(ELF_MACHINE_HERE));
    if (h->e_type != ET_DYN)
        return refuse(view, "not a shared object (ELF type %u, not ET_DYN)",
                      h->e_type);
    if (h->e_phentsize != sizeof(elf_phdr) || h->e_phnum == 0 ||
        h->e_phnum > PHNUM_MAX ||
        !range_fits(h->e_phoff, h->e_phnum, sizeof(elf_phdr), view->size))
        return refuse(
            view,
            "the program headers (%u of %u bytes at offset %" PRIu64
            ") do not fit in the file's %" PRIu64 " bytes; truncated?",
            h->e_phnum, h->e_phentsize, (uint64_t)h->e_phoff, view->size);
    if (h->e_shnum != 0 &&
        (h->e_shentsize != sizeof(elf_shdr) ||
         !range_fits(h->e_shoff, h->e_shnum, sizeof(elf_shdr), view->size)))
        return refuse(view,
                      "the section headers (%u at offset %" PRIu64
                      ") do not fit "
                      "in the file's %" PRIu64 " bytes; truncated?",
                      h->e_shnum, (uint64_t)h->e_shoff, view->size);
    return NULL;
}

static const char *phdrs_read(struct elf_view *view)
{
    size_t bytes = (size_t)view->header.e_phnum * sizeof(elf_phdr);
    view->phdrs = malloc(bytes);
    if (view->phdrs == NULL)
        return refuse(view, "out of memory for the program headers");
    if (!view->read(view->context, view->header.e_phoff, view->phdrs, bytes))
        return refuse(view, "the program headers cannot be read");
    return NULL;
}

/* Whether [address, address + size) lies in one loadable segment's memory. */
static bool in_load_memory(struct elf_view *view, uint64_t address, uint64_t size)
{
    for (unsigned i = 0; i < view->header.e_phnum; i++) {
        const elf_phdr p = view->phdrs[i];
        if (p.p_type == PT_LOAD && address >= p.p_vaddr &&
            address - p.p_vaddr <= p.p_memsz &&
            size <= p.p_memsz - (address - p.p_vaddr))
            return true;
    }
    return false;
}

/* Whether [offset, offset + size) lies in one loadable segment's file bytes. */
static bool in_load_file(struct elf_view *view, uint64_t offset, uint64_t size)
{
    for (unsigned i = 0; i < view->header.e_phnum; i++) {
        const elf_phdr p = view->phdrs[i];
        if (p.p_type == PT_LOAD && offset >= p.p_offset &&
            offset - p.p_offset <= p.p_filesz &&
            size <= p.p_filesz - (offset - p.p_offset))
            return true;
    }
    return false;
}

static const char *sections_refusal(struct elf_view *view)
{
    elf_shdr s;
    for (unsigned i = 0; i < view->header.e_shnum; i++) {
        if (!view->read(view->context,
                        view->header.e_shoff + (uint64_t)i * sizeof s, &s,
                        sizeof s))
            return refuse(view, "section header %u cannot be read", i);
        if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL &&
            !range_fits(s.sh_offset, 1, s.sh_size, view->size))
            return refuse(view,
                          "section %u (%" PRIu64 " bytes at offset %" PRIu64
                          ") runs past the file's %" PRIu64 " bytes; damaged?",
                          i, (uint64_t)s.sh_size, (uint64_t)s.sh_offset,
                          view->size);
    }
    return NULL;
}

/* Every PT_LOAD's bytes in the file; the PT_DYNAMIC, if any, in *out. */
static const char *segments_refusal(struct elf_view *view, elf_phdr *out_dynamic)
{
    unsigned loads = 0;
    memset(out_dynamic, 0, sizeof *out_dynamic);
    for (unsigned i = 0; i < view->header.e_phnum; i++) {
        const elf_phdr p = view->phdrs[i];
        if (p.p_type == PT_DYNAMIC)
            *out_dynamic = p;
        if (p.p_type != PT_LOAD)
            continue;
        loads++;
        if (!range_fits(p.p_offset, 1, p.p_filesz, view->size))
            return refuse(
                view,
                "segment %u (%" PRIu64 " bytes at offset %" PRIu64
                ") runs past the file's %" PRIu64 " bytes; truncated?",
                i, (uint64_t)p.p_filesz, (uint64_t)p.p_offset, view->size);
        if (p.p_filesz > p.p_memsz)
            return refuse(view,
                          "segment %u has more bytes in the file (%" PRIu64
                          ") than in memory (%" PRIu64 "); damaged?",
                          i, (uint64_t)p.p_filesz, (uint64_t)p.p_memsz);
    }
    if (loads == 0)
        return refuse(view, "no loadable segment");
    return NULL;
}

/* An entry whose value is an address in the image, and its size's tag. */
struct address_tag {
    int64_t tag;
    int64_t size_tag; /* DT_NULL: one byte is checked */
    const char *name;
};

static const struct address_tag address_tags[] = {
    {DT_STRTAB, DT_STRSZ, "DT_STRTAB"},
    {DT_SYMTAB, DT_NULL, "DT_SYMTAB"},
    {DT_HASH, DT_NULL, "DT_HASH"},
    {DT_GNU_HASH, DT_NULL, "DT_GNU_HASH"},
    {DT_RELA, DT_RELASZ, "DT_RELA"},
    {DT_REL, DT_RELSZ, "DT_REL"},
    {DT_JMPREL, DT_PLTRELSZ, "DT_JMPREL"},
    {DT_PLTGOT, DT_NULL, "DT_PLTGOT"},
    {DT_INIT, DT_NULL, "DT_INIT"},
    {DT_FINI, DT_NULL, "DT_FINI"},
    {DT_INIT_ARRAY, DT_INIT_ARRAYSZ, "DT_INIT_ARRAY"},
    {DT_FINI_ARRAY, DT_FINI_ARRAYSZ, "DT_FINI_ARRAY"},
    {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, "DT_PREINIT_ARRAY"},
    {DT_VERSYM, DT_NULL, "DT_VERSYM"},
    {DT_VERDEF, DT_NULL, "DT_VERDEF"},
    {DT_VERNEED, DT_NULL, "DT_VERNEED"},
};

/* The value of the first entry with `tag`; `fallback` when there is none. */
static uint64_t dynamic_value(const struct elf_view *view, int64_t tag,
                              uint64_t fallback)
{
    for (size_t i = 0; i < view->dyn_count; i++) {
        if (view->dyn[i].d_tag == tag)
            return view->dyn[i].d_un.d_val;
    }
    return fallback;
}

/* One dynamic entry: an address inside the image, a string in the table. */
static const char *entry_refusal(struct elf_view *view, const elf_dyn *d,
                                 uint64_t i)
{
    for (size_t t = 0; t < sizeof address_tags / sizeof address_tags[0]; t++) {
        const struct address_tag *at = &address_tags[t];
        if (d->d_tag != at->tag)
            continue;
        uint64_t size = at->size_tag == DT_NULL
                            ? 1
                            : dynamic_value(view, at->size_tag, 1);
        if (!in_load_memory(view, d->d_un.d_ptr, size))
            return refuse(view,
                          "dynamic entry %" PRIu64 " (%s: %" PRIu64 " bytes at "
                          "0x%" PRIx64 ") lies outside every loadable segment; "
                          "damaged?",
                          i, at->name, size, (uint64_t)d->d_un.d_ptr);
    }
    if (d->d_tag == DT_NEEDED || d->d_tag == DT_SONAME ||
        d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH) {
        uint64_t strsz = dynamic_value(view, DT_STRSZ, 0);
        if (d->d_un.d_val >= strsz)
            return refuse(view,
                          "dynamic entry %" PRIu64 " (tag %" PRId64 ") names "
                          "string %" PRIu64 ", past the string table's %" PRIu64
                          " bytes; damaged?",
                          i, (int64_t)d->d_tag, (uint64_t)d->d_un.d_val, strsz);
    }
    return NULL;
}

/* Read the entries up to DT_NULL into view->dyn, then check each. */
static const char *dynamic_entries_refusal(struct elf_view *view,
                                           const elf_phdr *dynamic)
{
    uint64_t count = dynamic->p_filesz / sizeof(elf_dyn);
    if (count > DYNAMIC_MAX)
        count = DYNAMIC_MAX;
    view->dyn = calloc(count ? count : 1, sizeof(elf_dyn));
    if (view->dyn == NULL)
        return refuse(view, "out of memory for the dynamic section");
    bool ended = false;
    while (!ended && view->dyn_count < count) {
        elf_dyn *d = &view->dyn[view->dyn_count];
        if (!view->read(view->context,
                        dynamic->p_offset + view->dyn_count * sizeof *d, d,
                        sizeof *d))
            return refuse(view, "dynamic entry %zu cannot be read",
                          view->dyn_count);
        ended = d->d_tag == DT_NULL;
        if (!ended)
            view->dyn_count++;
    }
    if (!ended)
        return refuse(view,
                      "the dynamic section has no DT_NULL end within %" PRIu64
                      " entries; damaged?",
                      count);
    for (size_t i = 0; i < view->dyn_count; i++) {
        const char *refusal = entry_refusal(view, &view->dyn[i], i);
        if (refusal != NULL)
            return refusal;
    }
    return NULL;
}

static const char *dynamic_refusal(struct elf_view *view, const elf_phdr *dynamic)
{
    if (dynamic->p_type != PT_DYNAMIC)
        return NULL;
    if (!range_fits(dynamic->p_offset, 1, dynamic->p_filesz, view->size) ||
        !in_load_file(view, dynamic->p_offset, dynamic->p_filesz) ||
        !in_load_memory(view, dynamic->p_vaddr, dynamic->p_memsz))
        return refuse(view,
                      "the dynamic section (%" PRIu64
                      " bytes at offset %" PRIu64 ", address 0x%" PRIx64
                      ") lies outside the file or outside "
                      "every loadable segment; damaged?",
                      (uint64_t)dynamic->p_filesz, (uint64_t)dynamic->p_offset,
                      (uint64_t)dynamic->p_vaddr);
    return dynamic_entries_refusal(view, dynamic);
}

const char *accel__elf_refusal(accel__elf_read_fn read, void *context,
                               uint64_t file_size, char *why, size_t why_size)
{
    struct elf_view view = {
        .read = read,
        .context = context,
        .size = file_size,
        .why = why,
        .why_size = why_size,
    };
    unsigned char magic[SELFMAG];
    if (file_size < SELFMAG || !read(context, 0, magic, SELFMAG) ||
        memcmp(magic, ELFMAG, SELFMAG) != 0)
        return refuse(&view, "not an ELF file (%" PRIu64 " bytes, no ELF magic)",
                      file_size);
    if (file_size < sizeof view.header ||
        !read(context, 0, &view.header, sizeof view.header))
        return refuse(&view,
                      "%" PRIu64 " bytes, shorter than an ELF header "
                      "(%zu); truncated?",
                      file_size, sizeof view.header);
    elf_phdr dynamic;
    memset(&dynamic, 0, sizeof dynamic);
    const char *refusal = header_refusal(&view);
    if (refusal == NULL)
        refusal = phdrs_read(&view);
    if (refusal == NULL)
        refusal = segments_refusal(&view, &dynamic);
    if (refusal == NULL)
        refusal = sections_refusal(&view);
    if (refusal == NULL)
        refusal = dynamic_refusal(&view, &dynamic);
    free(view.phdrs);
    free(view.dyn);
    return refusal;
}

/* More symbols than any plugin exports by mistake: past it, counting stops. */
#define DYNSYM_MAX (1u << 20)

/* Whether a .dynsym entry is one the object defines and exports. */
static bool symbol_exported(const ElfW(Sym) * sym)
{
    unsigned bind = ELF64_ST_BIND(sym->st_info),
             type = ELF64_ST_TYPE(sym->st_info);
    unsigned visibility = ELF64_ST_VISIBILITY(sym->st_other);
    /* SHN_ABS: a version script's version names, not code or data. */
    if (sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS)
        return false;
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
        return false;
    if (type == STT_SECTION || type == STT_FILE)
        return false;
    return visibility == STV_DEFAULT || visibility == STV_PROTECTED;
}

/*
 * Whether the symbol's name is reserved for the implementation ("__" or
 * "_" and a capital): what compilers and sanitizers add themselves
 * (ASan's __odr_asan.NAME beside an exported variable), not the vendor's.
 */
static bool name_reserved(accel__elf_read_fn read, void *context,
                          uint64_t file_size, const ElfW(Shdr) * strings,
                          uint32_t name)
{
    unsigned char start[2] = {0, 0};
    if (name >= strings->sh_size || strings->sh_size - name < sizeof start ||
        !range_fits(strings->sh_offset + name, 1, sizeof start, file_size) ||
        !read(context, strings->sh_offset + name, start, sizeof start))
        return false;
    return start[0] == '_' &&
           (start[1] == '_' || (start[1] >= 'A' && start[1] <= 'Z'));
}

/* The section `index` of the object; false when it cannot be read. */
static bool section_read(accel__elf_read_fn read, void *context,
                         const ElfW(Ehdr) * header, uint64_t index,
                         ElfW(Shdr) * out_section)
{
    return index < header->e_shnum &&
           read(context, header->e_shoff + index * sizeof *out_section,
                out_section, sizeof *out_section);
}

bool accel__elf_exported_symbols(accel__elf_read_fn read, void *context,
                                 uint64_t file_size, uint64_t *out_count)
{
    ElfW(Ehdr) header;
    *out_count = 0;
    if (file_size < sizeof header || !read(context, 0, &header, sizeof header) ||
        header.e_shentsize != sizeof(ElfW(Shdr)) || header.e_shnum == 0 ||
        !range_fits(header.e_shoff, header.e_shnum, sizeof(ElfW(Shdr)), file_size))
        return false;
    for (unsigned i = 0; i < header.e_shnum; i++) {
        ElfW(Shdr) section, strings;
        if (!section_read(read, context, &header, i, &section))
            return false;
        if (section.sh_type != SHT_DYNSYM)
            continue;
        if (!section_read(read, context, &header, section.sh_link, &strings) ||
            section.sh_entsize != sizeof(ElfW(Sym)) ||
            section.sh_size / sizeof(ElfW(Sym)) > DYNSYM_MAX ||
            !range_fits(section.sh_offset, section.sh_size / sizeof(ElfW(Sym)),
                        sizeof(ElfW(Sym)), file_size))
            return false;
        for (uint64_t s = 0; s < section.sh_size / sizeof(ElfW(Sym)); s++) {
            ElfW(Sym) sym;
            if (!read(context, section.sh_offset + s * sizeof sym, &sym,
                      sizeof sym))
                return false;
            *out_count += symbol_exported(&sym) &&
                          !name_reserved(read, context, file_size, &strings,
                                         sym.st_name);
        }
        return true;
    }
    return false;
}
