/*
 * libaccel-race: the race check's runtime (ACCEL_NULL_CHECK=race).
 *
 * Kernel images built by accel-cc --check carry a "-race" image compiled
 * with -fsanitize=thread, whose every load and store calls __tsan_read4,
 * __tsan_write8, ... and whose atomics call __tsan_atomic32_fetch_add and
 * the like. This small library, preloaded by accel-check, is that
 * interface: not ThreadSanitizer, but a checker of the GPU's rules, which
 * the null plugin tells where each host thread is (the launch, the block,
 * the thread and how many barriers it has passed). Two accesses to one
 * place race, and the plugin is told, when
 *
 *  - two threads of one block make them between the same two barriers
 *    and one is a write (a barrier missing between them), or
 *  - two blocks of one launch make them to device memory and one is a
 *    write (blocks are not ordered; atomics are the way).
 *
 * Atomics are performed and not recorded: they never race with each
 * other. Outside a kernel (launch 0) nothing is recorded. The shadow is
 * a table of the last write and the last read of each place, in groups
 * of 64 entries, each under its own lock; a full group forgets an entry,
 * so a race may be missed, never made up.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accel_race.h"

#define RACE_EXPORT __attribute__((visibility("default")))

#define RACE_GROUP_BITS 14u
#define RACE_GROUP_SLOTS 64u

struct race_entry {
    uintptr_t key; /* 0: free */
    struct accel_race_access write, read;
};

struct race_group {
    pthread_mutex_t lock;
    struct race_entry slot[RACE_GROUP_SLOTS];
};

static struct race_group *race_table;
static pthread_once_t race_once = PTHREAD_ONCE_INIT;
static const struct accel_race_hooks *race_hooks;
static _Thread_local struct accel_race_where race_where;

static void race_table_make(void)
{
    race_table = calloc((size_t)1 << RACE_GROUP_BITS, sizeof(*race_table));
    for (size_t g = 0; race_table != NULL && g < ((size_t)1 << RACE_GROUP_BITS);
         g++)
        pthread_mutex_init(&race_table[g].lock, NULL);
}

RACE_EXPORT struct accel_race_where *accel_race_where(void)
{
    return &race_where;
}

RACE_EXPORT void accel_race_set_hooks(const struct accel_race_hooks *hooks)
{
    pthread_once(&race_once, race_table_make);
    race_hooks = hooks;
}

/* Whether `then`, recorded at the same place, conflicts with `now`. */
static bool race_conflicts(const struct accel_race_access *then,
                           const struct accel_race_access *now, uintptr_t address)
{
    if (then->launch != now->launch)
        return false;
    if (then->block != now->block)
        return race_hooks->may_race(address, true);
    return then->thread != now->thread && then->epoch == now->epoch &&
           race_hooks->may_race(address, false);
}

static struct race_entry *race_entry_of(struct race_group *group, uintptr_t key)
{
    struct race_entry *free_slot = NULL;

    for (uint32_t i = 0; i < RACE_GROUP_SLOTS; i++) {
        if (group->slot[i].key == key)
            return &group->slot[i];
        if (free_slot == NULL && group->slot[i].key == 0)
            free_slot = &group->slot[i];
    }
    if (free_slot == NULL) /* full: forget one place */
        free_slot = &group->slot[(key >> 2) % RACE_GROUP_SLOTS];
    memset(free_slot, 0, sizeof(*free_slot));
    free_slot->key = key;
    return free_slot;
}

/* Check and record one place (a byte, or a 4-byte word). */
static void race_place(uintptr_t key, uintptr_t address, uint32_t size, bool write)
{
    uint64_t hash = (key >> 2) * 0x9e3779b97f4a7c15ull;
    struct race_group *group = &race_table[hash >> (64 - RACE_GROUP_BITS)];
    struct accel_race_access now = {
        .launch = race_where.launch,
        .block = race_where.block,
        .thread = race_where.thread,
        .epoch = race_where.epoch,
        .write = write,
    };
    struct accel_race_access then = {0};
    bool race = false;
    struct race_entry *e;

    pthread_mutex_lock(&group->lock);
    e = race_entry_of(group, key);
    if (race_conflicts(&e->write, &now, key)) {
        then = e->write;
        race = true;
    } else if (write && race_conflicts(&e->read, &now, key)) {
        then = e->read;
        race = true;
    }
    if (write)
        e->write = now;
    else
        e->read = now;
    pthread_mutex_unlock(&group->lock);
    if (race)
        race_hooks->report(address, size, &now, &then);
}

static void race_access(const void *pointer, uint32_t size, bool write)
{
    uintptr_t address = (uintptr_t)pointer;

    if (race_where.launch == 0 || race_hooks == NULL || race_table == NULL)
        return;
    if (race_hooks->access != NULL) {
        race_hooks->access(address, size, write);
        return;
    }
    if (size < 4 || (address & 3u) != 0) {
        for (uint32_t i = 0; i < size; i++)
            race_place(address + i, address, size, write);
        return;
    }
    for (uint32_t i = 0; i < size; i += 4)
        race_place(address + i, address, size, write);
}

/* ---- the interface -fsanitize=thread code calls ---- */

RACE_EXPORT void __tsan_init(void)
{
}
RACE_EXPORT void __tsan_func_entry(void *pc)
{
    (void)pc;
}
RACE_EXPORT void __tsan_func_exit(void)
{
}

#define RACE_RW(n)                                                             \
    RACE_EXPORT void __tsan_read##n(void *p)                                   \
    {                                                                          \
        race_access(p, n, false);                                              \
    }                                                                          \
    RACE_EXPORT void __tsan_write##n(void *p)                                  \
    {                                                                          \
        race_access(p, n, true);                                               \
    }                                                                          \
    RACE_EXPORT void __tsan_unaligned_read##n(void *p)                         \
    {                                                                          \
        race_access(p, n, false);                                              \
    }                                                                          \
    RACE_EXPORT void __tsan_unaligned_write##n(void *p)                        \
    {                                                                          \
        race_access(p, n, true);                                               \
    }
RACE_RW(1)
RACE_RW(2)
RACE_RW(4)
RACE_RW(8)
RACE_RW(16)

RACE_EXPORT void __tsan_read_range(void *p, unsigned long size)
{
    race_access(p, (uint32_t)size, false);
}
RACE_EXPORT void __tsan_write_range(void *p, unsigned long size)
{
    race_access(p, (uint32_t)size, true);
}
RACE_EXPORT void __tsan_vptr_update(void **p, void *v)
{
    *p = v;
}
RACE_EXPORT void __tsan_vptr_read(void **p)
{
    (void)p;
}
RACE_EXPORT void __tsan_atomic_thread_fence(int order)
{
    __atomic_thread_fence(order);
}
RACE_EXPORT void __tsan_atomic_signal_fence(int order)
{
    __atomic_signal_fence(order);
}

/*
 * The atomics, performed (sequentially consistent: at least what was
 * asked) and not recorded.
 */
#define RACE_ATOMICS(n, T)                                                      \
    RACE_EXPORT T __tsan_atomic##n##_load(const volatile T *p, int mo)          \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);                            \
    }                                                                           \
    RACE_EXPORT void __tsan_atomic##n##_store(volatile T *p, T v, int mo)       \
    {                                                                           \
        (void)mo;                                                               \
        __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                               \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_exchange(volatile T *p, T v, int mo)       \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                     \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_add(volatile T *p, T v, int mo)      \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                      \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_sub(volatile T *p, T v, int mo)      \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                      \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_and(volatile T *p, T v, int mo)      \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                      \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_or(volatile T *p, T v, int mo)       \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                       \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_xor(volatile T *p, T v, int mo)      \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                      \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_fetch_nand(volatile T *p, T v, int mo)     \
    {                                                                           \
        (void)mo;                                                               \
        return __atomic_fetch_nand(p, v, __ATOMIC_SEQ_CST);                     \
    }                                                                           \
    RACE_EXPORT int __tsan_atomic##n##_compare_exchange_strong(                 \
        volatile T *p, T *expected, T v, int mo, int fail_mo)                   \
    {                                                                           \
        (void)mo;                                                               \
        (void)fail_mo;                                                          \
        return __atomic_compare_exchange_n(p, expected, v, 0,                   \
                                           __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    }                                                                           \
    RACE_EXPORT int __tsan_atomic##n##_compare_exchange_weak(                   \
        volatile T *p, T *expected, T v, int mo, int fail_mo)                   \
    {                                                                           \
        (void)mo;                                                               \
        (void)fail_mo;                                                          \
        return __atomic_compare_exchange_n(p, expected, v, 1,                   \
                                           __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    }                                                                           \
    RACE_EXPORT T __tsan_atomic##n##_compare_exchange_val(                      \
        volatile T *p, T expected, T v, int mo, int fail_mo)                    \
    {                                                                           \
        (void)mo;                                                               \
        (void)fail_mo;                                                          \
        __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_SEQ_CST,       \
                                    __ATOMIC_SEQ_CST);                          \
        return expected;                                                        \
    }
RACE_ATOMICS(8, uint8_t)
RACE_ATOMICS(16, uint16_t)
RACE_ATOMICS(32, uint32_t)
RACE_ATOMICS(64, uint64_t)
