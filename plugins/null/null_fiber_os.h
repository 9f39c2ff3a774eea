/*
 * The machine-specific half of a fiber switch: assembly where it is
 * written (null_fiber_<arch>.S), ucontext elsewhere. null_fiber.c is the
 * only user.
 */
#ifndef ACCEL_NULL_FIBER_OS_H
#define ACCEL_NULL_FIBER_OS_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define NULL_FIBER_ASM 1
/* The saved stack pointer; the callee-saved registers are on that stack. */
struct null_ctx_regs {
    void *sp;
};
#else
#define NULL_FIBER_ASM 0
#include <ucontext.h>
struct null_ctx_regs {
    ucontext_t uc;
};
#endif

#endif /* ACCEL_NULL_FIBER_OS_H */
