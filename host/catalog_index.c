/*
 * The catalog's index during discovery: candidates by inode and by name,
 * so that each candidate is looked up in constant time and discovery stays
 * O(n log n) in the entries it reads (the sort of each directory), however
 * many candidates the path holds. Open addressing, linear probing; a slot
 * holds an index into catalog->plugins plus one, 0 when empty.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "status.h"
#include "discovery.h"

static uint64_t hash_inode(uint64_t dev, uint64_t ino)
{
    uint64_t h = (dev * 0x9e3779b97f4a7c15u) ^ ino;
    return h ^ (h >> 29);
}

static uint64_t hash_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 0x100000001b3u;
    return h;
}

static uint64_t hash_of(const struct accel__plugin *plugin,
                        enum accel__seen_key key)
{
    return key == ACCEL__SEEN_INODE ? hash_inode(plugin->dev, plugin->ino)
                                    : hash_name(plugin->name);
}

size_t accel__seen_find(const struct accel__seen *set,
                        const struct accel__catalog *catalog,
                        enum accel__seen_key key, const struct stat *st,
                        const char *name)
{
    if (set->capacity == 0)
        return ACCEL__SEEN_NONE;
    size_t last = set->capacity - 1;
    uint64_t h = key == ACCEL__SEEN_INODE ? hash_inode(st->st_dev, st->st_ino)
                                          : hash_name(name);
    for (size_t at = h & last; set->slots[at] != 0; at = (at + 1) & last) {
        const struct accel__plugin *p = &catalog->plugins[set->slots[at] - 1];
        bool same = key == ACCEL__SEEN_INODE
                        ? p->dev == st->st_dev && p->ino == st->st_ino
                        : strcmp(p->name, name) == 0;
        if (same)
            return set->slots[at] - 1;
    }
    return ACCEL__SEEN_NONE;
}

static void put(struct accel__seen *set, const struct accel__catalog *catalog,
                enum accel__seen_key key, size_t index)
{
    size_t last = set->capacity - 1;
    size_t at = hash_of(&catalog->plugins[index], key) & last;
    while (set->slots[at] != 0)
        at = (at + 1) & last;
    set->slots[at] = index + 1;
    set->count++;
}

accel_status accel__seen_add(struct accel__seen *set,
                             const struct accel__catalog *catalog,
                             enum accel__seen_key key, size_t index)
{
    /* At most half full, so that a probe ends soon. */
    if ((set->count + 1) * 2 > set->capacity) {
        struct accel__seen grown = {
            .capacity = set->capacity ? set->capacity * 2 : 64,
        };
        grown.slots = calloc(grown.capacity, sizeof *grown.slots);
        if (grown.slots == NULL)
            return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin list");
        for (size_t i = 0; i < set->capacity; i++) {
            if (set->slots[i] != 0)
                put(&grown, catalog, key, set->slots[i] - 1);
        }
        free(set->slots);
        *set = grown;
    }
    put(set, catalog, key, index);
    return ACCEL_OK;
}
