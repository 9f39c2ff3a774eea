/*
 * What libaccel-race (accel_race.c) and the null plugin's race check
 * share. The plugin finds accel_race_where and accel_race_set_hooks with
 * dlsym in a process that has the library (accel-check preloads it).
 */
#ifndef ACCEL_RACE_H
#define ACCEL_RACE_H

#include <stdbool.h>
#include <stdint.h>

/* Where the calling host thread is; launch 0: in no kernel. */
struct accel_race_where {
    uint64_t launch; /* a number per launch, from 1 */
    uint64_t block;  /* linear, x fastest */
    uint32_t thread; /* linear in the block, x fastest */
    uint32_t epoch;  /* barriers the thread has passed in this block */
};

/* One recorded access. */
struct accel_race_access {
    uint64_t launch;
    uint64_t block;
    uint32_t thread;
    uint32_t epoch;
    bool write;
};

struct accel_race_hooks {
    /*
     * Whether two accesses to `address` can race: between blocks
     * (`other_block`), only in device memory (shared memory is each
     * block's own, though its addresses are reused); within a block, not
     * on a thread's stack (stacks are reused by the block's threads).
     */
    bool (*may_race)(uintptr_t address, bool other_block);
    /* A race between `then`, recorded, and `now`, on the calling thread. */
    void (*report)(uintptr_t address, uint32_t size,
                   const struct accel_race_access *now,
                   const struct accel_race_access *then);
    /* When set (the initcheck), every access in a kernel goes here instead
     * of to the race check. */
    void (*access)(uintptr_t address, uint32_t size, bool write);
};

typedef struct accel_race_where *(*accel_race_where_fn)(void);
typedef void (*accel_race_set_hooks_fn)(const struct accel_race_hooks *hooks);

#endif /* ACCEL_RACE_H */
