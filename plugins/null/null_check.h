/*
 * The null plugin's checked mode (ACCEL_NULL_CHECK): kernels' memory
 * errors found by AddressSanitizer and reported by kernel, block, thread
 * and argument.
 *
 * The plugin is not built with AddressSanitizer and does not link its
 * runtime. In checked mode the runtime must already be in the process
 * (accel-check preloads it); the plugin finds its interface with dlsym,
 * and without it the plugin reports no device, saying why. Then:
 *
 *  - every device allocation is its own heap block (from ASan's malloc,
 *    with red zones on both sides), of exactly the bytes asked for, and
 *    the devices report ACCEL_DEVICE_CAP_OWN_ALLOCATIONS so that the host
 *    neither slices pages nor rounds sizes; a freed block goes through
 *    ASan's quarantine, poisoned, so a stale native address is caught;
 *  - the devices' arch gains "-asan" ("x86_64-asan"), so that a bundle's
 *    ASan image (accel-cc --check) is picked, and only then;
 *  - blocks run thread by thread (never the image's straight loop), with
 *    their dynamic shared memory a heap block of exactly shared_bytes;
 *  - an ASan report made while a kernel runs is followed by a line that
 *    names the kernel, the block, the thread and the argument (declared
 *    type and name, element count, offset touched) or the shared memory.
 *
 * The race check (ACCEL_NULL_CHECK=race) shares all of that but ASan: its
 * runtime is libaccel-race (race/accel_race.h), which the "-race" images'
 * -fsanitize=thread calls reach; the devices' arch gains "-race", the
 * blocks run with a runtime that tells libaccel-race, after every barrier
 * and warp operation and at every thread's start, which launch, block and
 * thread runs and how many barriers it has passed, and a race found is
 * reported the same way, naming both accesses, and ends the process.
 *
 * Nothing of this runs when the mode is off: the entries test one flag
 * before a device allocation and before a grid runs, never per thread.
 */
#ifndef ACCEL_NULL_CHECK_H
#define ACCEL_NULL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/kernel.h>

struct accel_drv_plugin;

enum null_check_mode {
    NULL_CHECK_OFF = 0,
    NULL_CHECK_MEMORY = 1,
    NULL_CHECK_RACE = 2,
    NULL_CHECK_INIT = 3
};

/* The fiber stacks of a checked run are at least this big: ASan's frames
 * are larger, and its report (stack trace, symbols) runs on them. */
#define NULL_CHECK_STACK_BYTES (1024u * 1024u)

/*
 * Read ACCEL_NULL_CHECK ("memory", or "off"/unset) into *out_mode. false,
 * with the plugin's no-device reason set, for any other value, or for
 * "memory" in a process without AddressSanitizer's runtime.
 */
bool accel__null_check_read(struct accel_drv_plugin *plugin, uint32_t *out_mode);

/*
 * Keep a checked device allocation in the table reports name it from;
 * with `shadow` (the initcheck), with a bit per byte, set once written.
 */
void accel__null_check_track(const void *data, uint64_t bytes, bool shadow);
/* The initcheck: bytes a copy writes into device memory. */
void accel__null_check_mark_written(uintptr_t address, uint64_t bytes);
/* It was freed: reports now say so of addresses in it. */
void accel__null_check_forget(const void *data);

/* Keep the kernel's parameter declarations (from its image) for reports. */
void accel__null_check_note_kernel(const struct accel_cpu_kernel *kernel,
                                   const char *text);

/*
 * Where the calling host thread is in a kernel, for a report; filled by
 * accel__null_block_where (null_block.c).
 */
struct null_where {
    const struct accel_cpu_kernel *kernel;
    uint32_t grid_dim[3];
    uint32_t block_dim[3];
    const char *kernel_name;
    uint32_t block[3];
    uint32_t thread[3];
    bool thread_known;
    void *const *args;
    const void *shared;
    uint32_t shared_bytes;
};

bool accel__null_block_where(struct null_where *out_where);
/* Whether `address` is on a stack of the calling host thread's fibers. */
bool accel__null_block_on_stack(uintptr_t address);

/*
 * The race check (ACCEL_NULL_CHECK=race, libaccel-race): the calling host
 * thread now runs thread `thread` of block `block` (linear) of launch
 * `launch`, past `epoch` barriers; leave: it runs no kernel.
 */
void accel__null_race_enter(uint64_t launch, uint64_t block, uint32_t thread,
                            uint32_t epoch);
void accel__null_race_leave(void);
/* A number for a new launch, from 1; the launch is done: launch_done. */
uint64_t accel__null_race_next_launch(void);
void accel__null_race_launch_done(void);

/* ASan's __asan_address_is_poisoned. */
typedef int (*null_poisoned_fn)(const volatile void *address);

/*
 * Describe `address` as in a poisoned zone of a static shared array of an
 * ASan image ("4 bytes past the end of static shared array 'float s[32]'
 * ..."), into buf; false when it is in none (null_check_shared.c).
 */
bool accel__null_check_shared_describe(uintptr_t address,
                                       null_poisoned_fn poisoned, char *buf,
                                       size_t size);

/* Unpoison a fiber stack's shadow, when the runtime is there (a fiber
 * abandoned mid-frame leaves red zones behind). */
void accel__null_check_unpoison(void *address, size_t bytes);

#endif /* ACCEL_NULL_CHECK_H */
