/*
 * A cheap check of an ELF shared object before the dynamic loader maps it,
 * shared by libaccel (plugin files) and the null plugin (CPU module
 * images). It reads only the headers and the dynamic section, through a
 * callback, so a file is checked through its descriptor and an image in
 * memory alike.
 *
 * What it catches: a file that is not ELF, or not for this process (class,
 * byte order, machine), or not a shared object (ET_DYN); program or section
 * headers that lie past the end; a loadable segment whose bytes lie past
 * the end; a dynamic section outside the file or outside every loadable
 * segment; a dynamic entry that points outside every loadable segment, or a
 * string offset past the string table. That is what a truncated, half
 * written, wrong-architecture or damaged file shows, and what would
 * otherwise make dlopen die of SIGBUS or SIGSEGV.
 *
 * What it does not catch: anything an adversary builds on purpose. The
 * relocations, symbol tables and code are not examined; a file that passes
 * is still code run in the process, to be trusted as the program is.
 */
#ifndef ACCEL_COMMON_ELF_CHECK_H
#define ACCEL_COMMON_ELF_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read exactly `size` bytes at `offset`; false when they cannot be read. */
typedef bool (*accel__elf_read_fn)(void *context, uint64_t offset, void *buf,
                                   size_t size);

/*
 * Check the object of `file_size` bytes that `read` reads. NULL when it
 * passes; otherwise `why` (`why_size` bytes) says what is wrong, with the
 * numbers, and is returned.
 */
const char *accel__elf_refusal(accel__elf_read_fn read, void *context,
                               uint64_t file_size, char *why, size_t why_size);

/*
 * How many symbols the object defines and exports (global or weak, of
 * default or protected visibility, in its dynamic symbol table), leaving
 * out names reserved for the implementation ("__..." and "_X...": what
 * compilers and sanitizers add, as ASan's __odr_asan.NAME). false
 * when the section headers do not say (stripped of them, or damaged).
 */
bool accel__elf_exported_symbols(accel__elf_read_fn read, void *context,
                                 uint64_t file_size, uint64_t *out_count);

/* A reader over bytes in memory: `context` is a struct accel__elf_memory. */
struct accel__elf_memory {
    const void *bytes;
    size_t size;
};
bool accel__elf_read_memory(void *context, uint64_t offset, void *buf,
                            size_t size);

#endif /* ACCEL_COMMON_ELF_CHECK_H */
