/*
 * The fake runtimes' knobs, call counters and memory.
 */
#include "fake_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void fake_fails_read(const char *env_name, fake_code_parse_fn parse, struct fake_fails *out)
{
    const char *text = getenv(env_name);
    char copy[512];
    char *save = NULL;

    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return;
    snprintf(copy, sizeof(copy), "%s", text);
    for (char *item = strtok_r(copy, ",", &save); item != NULL && out->count < FAKE_FAILS_MAX;
         item = strtok_r(NULL, ",", &save)) {
        char *nth = strchr(item, ':');
        char *code = nth != NULL ? strchr(nth + 1, ':') : NULL;

        if (code == NULL)
            continue;
        *nth++ = '\0';
        *code++ = '\0';
        snprintf(out->items[out->count].name, sizeof(out->items[0].name), "%s", item);
        out->items[out->count].nth = strtoull(nth, NULL, 10);
        if (out->items[out->count].nth != 0 && parse(code, &out->items[out->count].code))
            out->count++;
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

int fake_knobs_apply(struct fake_fails *fails, struct fake_lose *lose, const char *name,
                     bool *out_lose)
{
    *out_lose = false;
    for (int i = 0; i < fails->count; i++) {
        if (strcmp(fails->items[i].name, name) == 0 && ++fails->items[i].seen == fails->items[i].nth)
            return fails->items[i].code;
    }
    if (lose->nth != 0 && (lose->name[0] == '\0' || strcmp(lose->name, name) == 0) &&
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

bool fake_block_add(size_t bytes, int device, struct fake_owner *owner, uintptr_t *out_base)
{
    size_t rounded = (bytes + FAKE_ALLOC_ALIGN - 1) & ~(size_t)(FAKE_ALLOC_ALIGN - 1);
    struct fake_block *block = calloc(1, sizeof(*block));
    void *memory = rounded >= bytes ? aligned_alloc(FAKE_ALLOC_ALIGN, rounded) : NULL;

    if (block == NULL || memory == NULL) {
        free(block);
        free(memory);
        return false;
    }
    memset(memory, 0xa5, rounded);
    *block = (struct fake_block){(uintptr_t)memory, bytes, device, owner, fake_blocks};
    fake_blocks = block;
    *out_base = (uintptr_t)memory;
    return true;
}

struct fake_block *fake_block_find(uintptr_t address, size_t bytes, bool device)
{
    for (struct fake_block *block = fake_blocks; block != NULL; block = block->next) {
        if ((block->device >= 0) == device && address >= block->base &&
            address - block->base <= block->bytes &&
            bytes <= block->bytes - (address - block->base))
            return block;
    }
    return NULL;
}

struct fake_block *fake_block_take(uintptr_t base, bool device)
{
    for (struct fake_block **link = &fake_blocks; *link != NULL; link = &(*link)->next) {
        struct fake_block *block = *link;

        if (block->base == base && (block->device >= 0) == device) {
            *link = block->next;
            return block;
        }
    }
    return NULL;
}

size_t fake_block_free(struct fake_block *block)
{
    size_t bytes = block->bytes;

    free((void *)block->base);
    free(block);
    return bytes;
}

/*
 * Pinned host blocks an owner's end takes from the runtime: kept mapped,
 * never freed, so that a caller still holding one (the runtime no longer
 * knows it) writes to memory that exists rather than to freed heap.
 */
static struct fake_block *fake_blocks_orphaned;

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
        if (block->device >= 0) {
            freed += fake_block_free(block);
        } else {
            block->owner = NULL;
            block->next = fake_blocks_orphaned;
            fake_blocks_orphaned = block;
        }
    }
    return freed;
}
