/*
 * Fibers: the threads of a GPU block, run one at a time on one host
 * thread, each on its own stack, switched by a plain function call.
 *
 * A switch saves only what the C calling convention says a callee keeps
 * (x86-64: rbx, rbp, r12-r15, rsp, MXCSR and the x87 control word;
 * AArch64: x19-x30, d8-d15, sp, FPCR), in a few lines of assembly
 * (null_fiber_<arch>.S). Other machines use ucontext, whose swapcontext
 * also saves the signal mask with a system call per switch: correct, but
 * two orders of magnitude slower.
 *
 * Each fiber's stack is an mmap with one PROT_NONE guard page below it,
 * so that an overflow faults instead of running into other memory (see
 * null_block.c for what happens then). Stacks are reused: a fiber is made
 * once per host thread and slot, and its entry loops, taking one job after
 * another; a fiber abandoned in the middle of a job is reset.
 *
 * Built with AddressSanitizer or ThreadSanitizer, every switch tells the
 * sanitizer which stack runs next, as their fiber interfaces ask.
 */
#ifndef ACCEL_NULL_FIBER_H
#define ACCEL_NULL_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#include "null_fiber_os.h"

/* A place a switch can return to: a fiber, or the host thread's own stack. */
struct null_ctx {
    struct null_ctx_regs regs;
    unsigned char *stack_lo; /* the usable stack, for ASan; NULL: not yet known */
    size_t stack_bytes;
    void *asan_fake;  /* ASan's fake stack while switched away */
    void *tsan_fiber; /* ThreadSanitizer's fiber, or NULL */
};

struct null_fiber {
    struct null_ctx ctx;
    unsigned char *map; /* guard page and stack, from mmap */
    size_t map_bytes;
    struct null_ctx *home; /* where the fiber's entry switches back to */
    void (*entry)(struct null_fiber *fiber);
    unsigned valgrind_id; /* the stack as registered with valgrind */
};

/* The host thread's own context, as the home of its fibers. */
void accel__null_ctx_init_native(struct null_ctx *native);
/* Release what init_native took (ThreadSanitizer's state). */
void accel__null_ctx_fini_native(struct null_ctx *native);

/*
 * Map a stack of `stack_bytes` (a multiple of the page size) below a guard
 * page, and make a fiber that, when first switched to, calls
 * entry(fiber) on it. `entry` must never return: it switches home.
 * false (errno set) when mmap or mprotect fails.
 */
bool accel__null_fiber_create(struct null_fiber *fiber, size_t stack_bytes,
                              struct null_ctx *home,
                              void (*entry)(struct null_fiber *fiber));
/* Start the fiber over at its entry: its stack's frames are abandoned. */
void accel__null_fiber_reset(struct null_fiber *fiber);
void accel__null_fiber_destroy(struct null_fiber *fiber);

/* Whether `address` lies in the fiber's guard page. */
bool accel__null_fiber_guard_hit(const struct null_fiber *fiber,
                                 const void *address);

/*
 * Save the running context into `from` and run `to`; returns when
 * something switches back to `from`.
 */
void accel__null_switch(struct null_ctx *from, struct null_ctx *to);

#endif /* ACCEL_NULL_FIBER_H */
