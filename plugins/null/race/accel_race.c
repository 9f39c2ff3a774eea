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
 * a table of the last write and the last read of each place, an entry
 * per place at the bits of its address, each under a spin lock; a place
 * whose entry another takes is forgotten, so a race may be missed, never
 * made up.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accel_race.h"

#define RACE_EXPORT __attribute__((visibility("default")))

/*
 * The shadow: 2^RACE_SLOT_BITS entries of one cache line each, a place's
 * entry chosen by the bits of its address (not a hash: a kernel's
 * neighbouring accesses land in neighbouring entries, as the data they
 * shadow does), each under its own spin lock, in its own line. One line
 * per access is what the check costs: the earlier table (groups of 64
 * places at hashed addresses, scanned for every new place, pthread
 * mutexes) made vadd's 48M fresh places take minutes. A place whose entry
 * holds another forgets that one.
 */
#define RACE_SLOT_BITS 20u

/* An access, recorded (what struct accel_race_access says, packed). */
struct race_rec {
    uint64_t block;
    uint32_t launch; /* the low bits: launches 2^32 apart never overlap */
    uint32_t epoch;
    uint32_t thread;
};

struct race_entry {
    _Alignas(64) atomic_flag busy;
    uintptr_t key; /* 0: free */
    struct race_rec write, read;
};
_Static_assert(sizeof(struct race_entry) == 64, "an entry is one cache line");

static struct race_entry *race_table;
static pthread_once_t race_once = PTHREAD_ONCE_INIT;
static const struct accel_race_hooks *race_hooks;
/* Initial-exec: every access reads it, and a general-dynamic TLS variable
 * would cost a __tls_get_addr call each time. The library is preloaded
 * (accel-check), so its TLS is static. */
static _Thread_local struct accel_race_where race_where
    __attribute__((tls_model("initial-exec")));

static void race_table_make(void)
{
    race_table = aligned_alloc(64, sizeof(*race_table) << RACE_SLOT_BITS);
    if (race_table != NULL)
        memset(race_table, 0, sizeof(*race_table) << RACE_SLOT_BITS);
}

static void race_entry_lock(struct race_entry *e)
{
    for (uint32_t spins = 0;
         atomic_flag_test_and_set_explicit(&e->busy, memory_order_acquire);
         spins++) {
        if (spins >= 64) /* its holder was preempted: let it run */
            sched_yield();
    }
}

static void race_entry_unlock(struct race_entry *e)
{
    atomic_flag_clear_explicit(&e->busy, memory_order_release);
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

static struct race_rec race_rec_of(const struct accel_race_access *a)
{
    return (struct race_rec){.block = a->block,
                             .launch = (uint32_t)a->launch,
                             .epoch = a->epoch,
                             .thread = a->thread};
}

static struct accel_race_access race_access_of(const struct race_rec *r,
                                               uint64_t launch, bool write)
{
    return (struct accel_race_access){.launch = launch,
                                      .block = r->block,
                                      .thread = r->thread,
                                      .epoch = r->epoch,
                                      .write = write};
}

/* Whether `then`, recorded at the same place, conflicts with `now`. */
static bool race_conflicts(const struct race_rec *then,
                           const struct accel_race_access *now, uintptr_t address)
{
    if (then->launch == 0 || then->launch != (uint32_t)now->launch)
        return false; /* none recorded, or of another launch */
    if (then->block != now->block)
        return race_hooks->may_race(address, true);
    return then->thread != now->thread && then->epoch == now->epoch &&
           race_hooks->may_race(address, false);
}

/* Check and record one place (a byte, or a 4-byte word). */
static void race_place(uintptr_t key, uintptr_t address, uint32_t size, bool write)
{
    /* A word's bytes, when checked apart, spread over a quarter each. */
    uintptr_t index = (key >> 2) +
                      (key & 3u) * ((uintptr_t)1 << (RACE_SLOT_BITS - 2));
    struct race_entry *e =
        &race_table[index & (((uintptr_t)1 << RACE_SLOT_BITS) - 1)];
    struct accel_race_access now = {
        .launch = race_where.launch,
        .block = race_where.block,
        .thread = race_where.thread,
        .epoch = race_where.epoch,
        .write = write,
    };
    struct accel_race_access then = {0};
    bool race = false;

    race_entry_lock(e);
    if (e->key != key) { /* another place's, or none: forget it */
        e->key = key;
        e->write = (struct race_rec){0};
        e->read = (struct race_rec){0};
    }
    if (race_conflicts(&e->write, &now, key)) {
        then = race_access_of(&e->write, now.launch, true);
        race = true;
    } else if (write && race_conflicts(&e->read, &now, key)) {
        then = race_access_of(&e->read, now.launch, false);
        race = true;
    }
    if (write)
        e->write = race_rec_of(&now);
    else
        e->read = race_rec_of(&now);
    race_entry_unlock(e);
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
