/*
 * The fake runtimes' knobs, call counters and memory.
 */
#include "fake_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

struct fake_core fake_core = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .progress = PTHREAD_COND_INITIALIZER,
};

/* ---- knobs ---- */

uint64_t fake_env_number(const char *name, uint64_t fallback)
{
    const char *text = getenv(name);
    char *end = NULL;
    unsigned long long value;

    if (text == NULL || *text == '\0')
        return fallback;
    value = strtoull(text, &end, 10);
    return end != text && *end == '\0' ? (uint64_t)value : fallback;
}

void fake_fails_read(const char *env_name, fake_code_parse_fn parse,
                     struct fake_fails *out)
{
    const char *text = getenv(env_name);
    char copy[512];
    char *save = NULL;

    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return;
    snprintf(copy, sizeof(copy), "%s", text);
    for (char *item = strtok_r(copy, ",", &save);
         item != NULL && out->count < FAKE_FAILS_MAX;
         item = strtok_r(NULL, ",", &save)) {
        char *nth = strchr(item, ':');
        char *code = nth != NULL ? strchr(nth + 1, ':') : NULL;

        if (code == NULL)
            continue;
        *nth++ = '\0';
        *code++ = '\0';
        snprintf(out->items[out->count].name, sizeof(out->items[0].name), "%s",
                 item);
        out->items[out->count].nth = strtoull(nth, NULL, 10);
        if (out->items[out->count].nth != 0 &&
            parse(code, &out->items[out->count].code))
            out->count++;
    }
}

void fake_kernel_limits_read(const char *env_name, struct fake_kernel_limits *out)
{
    const char *text = getenv(env_name);
    char copy[512];
    char *save = NULL;

    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return;
    snprintf(copy, sizeof(copy), "%s", text);
    for (char *item = strtok_r(copy, ",", &save);
         item != NULL && out->count < FAKE_KERNEL_LIMITS_MAX;
         item = strtok_r(NULL, ",", &save)) {
        char *threads = strchr(item, ':');
        char *shared = threads != NULL ? strchr(threads + 1, ':') : NULL;

        if (threads == NULL)
            continue;
        *threads++ = '\0';
        if (shared != NULL)
            *shared++ = '\0';
        snprintf(out->items[out->count].name, sizeof(out->items[0].name), "%s",
                 item);
        out->items[out->count].max_threads = atoi(threads);
        out->items[out->count].static_shared = shared != NULL ? atoi(shared) : 0;
        out->count++;
    }
}

void fake_kernel_limits_of(const struct fake_kernel_limits *limits,
                           const char *name, int *out_threads,
                           int *out_static_shared)
{
    *out_threads = 1024;
    *out_static_shared = 0;
    for (int i = 0; i < limits->count; i++) {
        if (strcmp(limits->items[i].name, name) == 0) {
            *out_threads = limits->items[i].max_threads;
            *out_static_shared = limits->items[i].static_shared;
        }
    }
}

void fake_lose_read(const char *env_name, struct fake_lose *out)
{
    const char *text = getenv(env_name);
    const char *colon;

    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return;
    colon = strchr(text, ':');
    if (colon != NULL) {
        snprintf(out->name, sizeof(out->name), "%.*s", (int)(colon - text), text);
        text = colon + 1;
    }
    out->nth = strtoull(text, NULL, 10);
}

int fake_knobs_apply(struct fake_fails *fails, struct fake_lose *lose,
                     const char *name, bool *out_lose)
{
    *out_lose = false;
    for (int i = 0; i < fails->count; i++) {
        if (strcmp(fails->items[i].name, name) == 0 &&
            ++fails->items[i].seen == fails->items[i].nth)
            return fails->items[i].code;
    }
    if (lose->nth != 0 &&
        (lose->name[0] == '\0' || strcmp(lose->name, name) == 0) &&
        ++lose->seen == lose->nth)
        *out_lose = true;
    return 0;
}

/* ---- call counters ---- */

#define FAKE_COUNTERS_MAX 96

static struct {
    const char *name;
    uint64_t calls;
} fake_counters[FAKE_COUNTERS_MAX];

void fake_count(const char *name)
{
    for (int i = 0; i < FAKE_COUNTERS_MAX; i++) {
        if (fake_counters[i].name == NULL)
            fake_counters[i].name = name;
        if (strcmp(fake_counters[i].name, name) == 0) {
            fake_counters[i].calls++;
            return;
        }
    }
}

uint64_t fake_calls(const char *name)
{
    uint64_t calls = 0;

    pthread_mutex_lock(&fake_core.lock);
    for (int i = 0; i < FAKE_COUNTERS_MAX && fake_counters[i].name != NULL; i++) {
        if (strcmp(fake_counters[i].name, name) == 0)
            calls = fake_counters[i].calls;
    }
    pthread_mutex_unlock(&fake_core.lock);
    return calls;
}

/* ---- contexts ---- */

void fake_owner_lose(struct fake_owner *owner)
{
    if (owner != NULL)
        owner->lost = true;
    pthread_cond_broadcast(&fake_core.progress);
}

/* ---- memory ---- */

static struct fake_block *fake_blocks;

/*
 * Device blocks a context's end freed: kept (filled with 0xdd and poisoned
 * for AddressSanitizer meanwhile) and handed out again, at the same
 * address, by the next allocation of the same size on the device, as a
 * GPU's allocator does after a reset: a stale address then names another
 * open's new memory, not nothing.
 */
static struct fake_block *fake_blocks_reusable;

/* A reusable block of `rounded` bytes on `device`, taken off the list; NULL when none. */
static struct fake_block *fake_block_reuse(size_t rounded, int device)
{
    for (struct fake_block **link = &fake_blocks_reusable; *link != NULL;
         link = &(*link)->next) {
        struct fake_block *block = *link;

        if (block->device == device && block->bytes == rounded) {
            *link = block->next;
            ASAN_UNPOISON_MEMORY_REGION((void *)block->base, rounded);
            return block;
        }
    }
    return NULL;
}

bool fake_block_add(size_t bytes, int device, struct fake_owner *owner,
                    uintptr_t *out_base)
{
    size_t rounded = (bytes + FAKE_ALLOC_ALIGN - 1) &
                     ~(size_t)(FAKE_ALLOC_ALIGN - 1);
    struct fake_block *block = device >= 0 && rounded >= bytes
                                   ? fake_block_reuse(rounded, device)
                                   : NULL;
    void *memory = block != NULL ? (void *)block->base : NULL;

    if (block == NULL) {
        block = calloc(1, sizeof(*block));
        memory = rounded >= bytes ? aligned_alloc(FAKE_ALLOC_ALIGN, rounded)
                                  : NULL;
    }

    if (block == NULL || memory == NULL) {
        free(block);
        free(memory);
        return false;
    }
    memset(memory, 0xa5, rounded);
    *block = (struct fake_block){(uintptr_t)memory, bytes, device, owner, false,
                                 fake_blocks};
    fake_blocks = block;
    *out_base = (uintptr_t)memory;
    return true;
}

struct fake_block *fake_block_find(uintptr_t address, size_t bytes, bool device)
{
    for (struct fake_block *block = fake_blocks; block != NULL;
         block = block->next) {
        if ((block->device >= 0) == device && address >= block->base &&
            address - block->base <= block->bytes &&
            bytes <= block->bytes - (address - block->base))
            return block;
    }
    return NULL;
}

/* Take the block of that kind, registered or not, that starts at `base` off the list. */
static struct fake_block *fake_take(uintptr_t base, bool device, bool registered)
{
    for (struct fake_block **link = &fake_blocks; *link != NULL;
         link = &(*link)->next) {
        struct fake_block *block = *link;

        if (block->base == base && (block->device >= 0) == device &&
            block->registered == registered) {
            *link = block->next;
            return block;
        }
    }
    return NULL;
}

struct fake_block *fake_block_take(uintptr_t base, bool device)
{
    return fake_take(base, device, false);
}

/* The bytes registered now (fake_host_register), over every owner. */
static uint64_t fake_registered;

size_t fake_block_free(struct fake_block *block)
{
    size_t bytes = block->bytes;

    if (block->registered)
        fake_registered -= bytes;
    else
        free((void *)block->base);
    free(block);
    return bytes;
}

/*
 * The runtime's own pinned blocks that an owner's end freed: kept, filled
 * with 0xdd and poisoned for AddressSanitizer, never handed out again, so
 * that a caller still holding one is caught reading or writing it.
 */
static struct fake_block *fake_blocks_orphaned;

static void fake_block_orphan(struct fake_block *block)
{
    memset((void *)block->base, 0xdd, block->bytes);
    ASAN_POISON_MEMORY_REGION((void *)block->base, block->bytes);
    block->owner = NULL;
    block->next = fake_blocks_orphaned;
    fake_blocks_orphaned = block;
}

/* Keep a device block a context's end freed, for fake_block_reuse; its bytes. */
static size_t fake_block_keep_for_reuse(struct fake_block *block)
{
    size_t bytes = block->bytes;
    size_t rounded = (bytes + FAKE_ALLOC_ALIGN - 1) &
                     ~(size_t)(FAKE_ALLOC_ALIGN - 1);

    memset((void *)block->base, 0xdd, rounded);
    ASAN_POISON_MEMORY_REGION((void *)block->base, rounded);
    block->bytes = rounded;
    block->owner = NULL;
    block->next = fake_blocks_reusable;
    fake_blocks_reusable = block;
    return bytes;
}

size_t fake_blocks_release(struct fake_owner *owner)
{
    struct fake_block **link = &fake_blocks;
    size_t freed = 0;

    while (*link != NULL) {
        struct fake_block *block = *link;

        if (block->owner != owner) {
            link = &block->next;
            continue;
        }
        *link = block->next;
        if (block->device >= 0)
            freed += fake_block_keep_for_reuse(block);
        else if (block->registered)
            fake_block_free(block);
        else
            fake_block_orphan(block);
    }
    return freed;
}

/* ---- registered host memory ---- */

/* Whether any pinned host block, the runtime's or registered, meets [base, base + bytes). */
static bool fake_host_overlaps(uintptr_t base, size_t bytes)
{
    for (struct fake_block *block = fake_blocks; block != NULL;
         block = block->next) {
        if (block->device < 0 && base < block->base + block->bytes &&
            block->base < base + bytes)
            return true;
    }
    return false;
}

enum fake_register_result fake_host_register(uintptr_t base, size_t bytes,
                                             struct fake_owner *owner)
{
    struct fake_block *block;

    if (fake_host_overlaps(base, bytes))
        return FAKE_REGISTER_OVERLAPS;
    block = calloc(1, sizeof(*block));
    if (block == NULL)
        return FAKE_REGISTER_NO_MEMORY;
    *block = (struct fake_block){base, bytes, -1, owner, true, fake_blocks};
    fake_blocks = block;
    fake_registered += bytes;
    return FAKE_REGISTER_DONE;
}

bool fake_host_unregister(uintptr_t base)
{
    struct fake_block *block = fake_take(base, false, true);

    if (block == NULL)
        return false;
    fake_block_free(block);
    return true;
}

uint64_t fake_registered_bytes(void)
{
    uint64_t bytes;

    pthread_mutex_lock(&fake_core.lock);
    bytes = fake_registered;
    pthread_mutex_unlock(&fake_core.lock);
    return bytes;
}

/* ---- the environment the fake was loaded with ---- */

/*
 * A copy of the environment as it was when the library was loaded, the
 * moment a real runtime's constructors would read it: tests ask which
 * variables a plugin removed before it opened the fake.
 */
static char **fake_environment_at_load;

__attribute__((constructor)) static void fake_environment_copy(void)
{
    extern char **environ;
    size_t count = 0;

    while (environ != NULL && environ[count] != NULL)
        count++;
    fake_environment_at_load = calloc(count + 1, sizeof(char *));
    for (size_t i = 0; fake_environment_at_load != NULL && i < count; i++)
        fake_environment_at_load[i] = strdup(environ[i]);
}

__attribute__((destructor)) static void fake_environment_free(void)
{
    for (size_t i = 0;
         fake_environment_at_load != NULL && fake_environment_at_load[i] != NULL;
         i++)
        free(fake_environment_at_load[i]);
    free(fake_environment_at_load);
    fake_environment_at_load = NULL;
}

/* Whether `name` was set in the environment when the library was loaded. */
FAKE_EXPORT bool fake_loaded_with_variable(const char *name)
{
    size_t length = strlen(name);

    for (size_t i = 0;
         fake_environment_at_load != NULL && fake_environment_at_load[i] != NULL;
         i++) {
        if (strncmp(fake_environment_at_load[i], name, length) == 0 &&
            fake_environment_at_load[i][length] == '=')
            return true;
    }
    return false;
}
