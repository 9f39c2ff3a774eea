/*
 * The checks a plugin's table passes before the host calls anything in it:
 * the symbol's kind and size, the ABI major, struct_size (whole entries
 * only), the name, the version and the entries (see driver.h).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"

/* The smallest table a plugin can have: up to its last required entry. */
#define V1_0_MIN_SIZE ACCEL_DRIVER_V1_MIN_SIZE
/* The longest version text a table may give. */
#define VERSION_MAX 127

/* What the dynamic linker says of the table's symbol. */
struct symbol_facts {
    bool known;
    size_t size;
    unsigned type;    /* STT_OBJECT for a table */
    const void *base; /* the plugin's load address */
};

static void symbol_facts_of(const void *symbol, struct symbol_facts *out)
{
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    memset(out, 0, sizeof *out);
    if (dladdr1(symbol, &info, (void **)&entry, RTLD_DL_SYMENT) == 0 ||
        entry == NULL)
        return;
    out->known = true;
    out->size = entry->st_size;
    out->type = ELF64_ST_TYPE(entry->st_info);
    out->base = info.dli_fbase;
}

/*
 * Whether a string the table names lies in the plugin's own image, as a
 * constant does: a pointer anywhere else, or nowhere, is refused before it
 * is read.
 */
static bool in_image(const void *text, const struct symbol_facts *facts)
{
    Dl_info info;
    if (!facts->known)
        return true;
    return dladdr(text, &info) != 0 && info.dli_fbase == facts->base;
}

/* The entry of the host's table that `size` ends inside of; NULL if none. */
static const char *entry_cut_by(size_t size, size_t *out_start)
{
    *out_start = 0;
#define ACCEL__ENTRY_CUT(entry, need, since, slot)                             \
    if (size > ACCEL_DRIVER_V1_ENTRY_OFFSET(slot) &&                           \
        size < ACCEL_DRIVER_V1_ENTRY_OFFSET((slot) + 1)) {                     \
        *out_start = ACCEL_DRIVER_V1_ENTRY_OFFSET(slot);                       \
        return #entry;                                                         \
    }
    ACCEL_DRIVER_V1_ENTRIES(ACCEL__ENTRY_CUT)
#undef ACCEL__ENTRY_CUT
    return NULL;
}

static const char *header_refusal(const struct accel_driver_v1 *table,
                                  const struct symbol_facts *facts, char *why,
                                  size_t why_size)
{
    size_t cut_start = 0;
    const char *cut = entry_cut_by(table->struct_size, &cut_start);
    if (facts->known && facts->type != STT_OBJECT)
        snprintf(why, why_size,
                 "symbol accel_driver_v1 is not a data object (ELF symbol "
                 "type %u)",
                 facts->type);
    else if (facts->known && facts->size < V1_0_MIN_SIZE)
        snprintf(why, why_size,
                 "symbol accel_driver_v1 is %zu bytes, smaller than a 1.0 "
                 "table (%zu)",
                 facts->size, (size_t)V1_0_MIN_SIZE);
    else if (table->abi_major != ACCEL_DRIVER_ABI_MAJOR)
        snprintf(why, why_size, "ABI major version %u, this host speaks %u",
                 (unsigned)table->abi_major, (unsigned)ACCEL_DRIVER_ABI_MAJOR);
    else if (table->struct_size < V1_0_MIN_SIZE ||
             (facts->known && table->struct_size > facts->size))
        snprintf(why, why_size,
                 "table size %u does not fit a 1.0 table (at least %zu bytes, "
                 "at most the symbol's %zu)",
                 (unsigned)table->struct_size, (size_t)V1_0_MIN_SIZE,
                 facts->size);
    else if (cut != NULL)
        /* Half a function pointer is no entry: the table is read entry by
         * entry or not at all. */
        snprintf(why, why_size,
                 "table size %u ends %zu bytes into entry '%s' (bytes %zu to "
                 "%zu): a table must cover each entry whole",
                 (unsigned)table->struct_size,
                 (size_t)table->struct_size - cut_start, cut, cut_start,
                 cut_start + sizeof(void (*)(void)));
    else
        return NULL;
    return why;
}

/* Where a name of `length` bytes first leaves [a-z0-9_]. */
static size_t name_bad_char(const char *name, size_t length)
{
    size_t i = 0;
    while (i < length && accel__plugin_name_valid(name + i, 1))
        i++;
    return i;
}

static const char *name_refusal(const char *name, const char *file_name,
                                const struct symbol_facts *facts, char *why,
                                size_t why_size)
{
    size_t length = 0;
    if (name == NULL)
        snprintf(why, why_size, "the table's name is NULL");
    else if (!in_image(name, facts))
        snprintf(why, why_size, "the table's name points outside the plugin");
    else if ((length = strnlen(name, ACCEL_PLUGIN_NAME_MAX + 1)) == 0)
        snprintf(why, why_size, "the table's name is empty");
    else if (length > ACCEL_PLUGIN_NAME_MAX)
        snprintf(why, why_size, "the table's name is longer than %d characters",
                 ACCEL_PLUGIN_NAME_MAX);
    else if (!accel__plugin_name_valid(name, length))
        snprintf(why, why_size,
                 "the table's name has byte 0x%02x at %zu, outside [a-z0-9_]",
                 (unsigned char)name[name_bad_char(name, length)],
                 name_bad_char(name, length));
    else if (strcmp(name, file_name) != 0)
        snprintf(why, why_size,
                 "the table's name '%s' does not match the file name's '%s'",
                 name, file_name);
    else
        return NULL;
    return why;
}

/* The version is free text: NULL, or printable, of bounded length. */
static const char *version_refusal(const char *version,
                                   const struct symbol_facts *facts, char *why,
                                   size_t why_size)
{
    if (version == NULL)
        return NULL;
    if (!in_image(version, facts)) {
        snprintf(why, why_size, "the table's version points outside the plugin");
        return why;
    }
    size_t length = strnlen(version, VERSION_MAX + 1);
    if (length > VERSION_MAX) {
        snprintf(why, why_size, "the table's version is longer than %d bytes",
                 VERSION_MAX);
        return why;
    }
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)version[i];
        if (c < 0x20 || c == 0x7f) {
            snprintf(why, why_size,
                     "the table's version has control byte 0x%02x at %zu", c, i);
            return why;
        }
    }
    return NULL;
}

/*
 * Every required entry is set, and the kernel entries are all set or all
 * NULL (a plugin whose devices run no kernels; the host then answers
 * module loads itself, see ACCEL_DEVICE_CAP_KERNELS). The one place
 * outside submit.c that reads the table's entries: it checks the table
 * before any entry is called (tests/submit-check.sh allows this file).
 */
static const char *entries_refusal(const struct accel_driver_v1 *drv, char *why,
                                   size_t why_size)
{
    const char *kernel_set = NULL, *kernel_null = NULL;
#define ACCEL__CHECK_ENTRY(entry, need, since, slot)                           \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_REQUIRED && drv->entry == NULL) {    \
        snprintf(why, why_size, "required entry '%s' is NULL", #entry);        \
        return why;                                                            \
    }                                                                          \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_KERNELS) {                           \
        if (drv->entry != NULL && kernel_set == NULL)                          \
            kernel_set = #entry;                                               \
        if (drv->entry == NULL && kernel_null == NULL)                         \
            kernel_null = #entry;                                              \
    }
    ACCEL_DRIVER_V1_ENTRIES(ACCEL__CHECK_ENTRY)
#undef ACCEL__CHECK_ENTRY
    if (kernel_set != NULL && kernel_null != NULL) {
        snprintf(why, why_size,
                 "kernel entry '%s' is NULL but '%s' is set: the kernel "
                 "entries are all set or all NULL",
                 kernel_null, kernel_set);
        return why;
    }
    return NULL;
}

/*
 * Copy the plugin's table into the host's own, zero past what the plugin's
 * struct_size covers: an entry a 1.0 plugin does not have reads as NULL.
 */
static void table_copy(struct accel_driver_v1 *dst,
                       const struct accel_driver_v1 *src)
{
    size_t size = src->struct_size < sizeof *dst ? src->struct_size : sizeof *dst;
    memset(dst, 0, sizeof *dst);
    memcpy(dst, src, size);
}

const char *accel__driver_table_refusal(const struct accel_driver_v1 *table,
                                        const char *file_name,
                                        struct accel_driver_v1 *out_drv,
                                        char *why, size_t why_size)
{
    if (table == NULL)
        return "no symbol accel_driver_v1";
    struct symbol_facts facts;
    symbol_facts_of(table, &facts);
    const char *refusal = header_refusal(table, &facts, why, why_size);
    if (refusal != NULL)
        return refusal;
    table_copy(out_drv, table);
    refusal = name_refusal(out_drv->name, file_name, &facts, why, why_size);
    if (refusal == NULL)
        refusal = version_refusal(out_drv->version, &facts, why, why_size);
    if (refusal == NULL)
        refusal = entries_refusal(out_drv, why, why_size);
    return refusal;
}

char *accel__driver_optional_entries(const struct accel_driver_v1 *table)
{
    size_t length = 1;
#define ENTRY_LENGTH_(entry, need, since, slot)                                \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_OPTIONAL && table->entry != NULL)    \
        length += sizeof #entry + 1;
    ACCEL_DRIVER_V1_ENTRIES(ENTRY_LENGTH_)
#undef ENTRY_LENGTH_
    char *names = malloc(length);
    if (names == NULL)
        return NULL;
    names[0] = '\0';
#define ENTRY_NAME_(entry, need, since, slot)                                  \
    if (ACCEL_ENTRY_##need == ACCEL_ENTRY_OPTIONAL && table->entry != NULL) {  \
        if (names[0] != '\0')                                                  \
            strcat(names, ", ");                                               \
        strcat(names, #entry);                                                 \
    }
    ACCEL_DRIVER_V1_ENTRIES(ENTRY_NAME_)
#undef ENTRY_NAME_
    return names;
}
