#include "null_fiber.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Which sanitizer this file is built with: gcc and clang say it differently. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NULL_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define NULL_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(NULL_ASAN)
#define NULL_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(NULL_TSAN)
#define NULL_TSAN 1
#endif

#ifdef NULL_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef NULL_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#ifdef NULL_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

/* ---- the machine's half ---- */

#if NULL_FIBER_ASM
void accel__null_ctx_swap(void **save_sp, void *to_sp);
void accel__null_ctx_start(void);

/*
 * Lay out a stack as accel__null_ctx_swap leaves it, so that the first
 * switch to it "returns" into accel__null_ctx_start, which calls fn(arg).
 * The floating-point control state is the creating thread's.
 */
static void null_ctx_make(struct null_ctx_regs *regs, unsigned char *lo,
                          size_t bytes, void (*fn)(void *), void *arg)
{
#if defined(__x86_64__)
    uint64_t *sp = (uint64_t *)(void *)(lo + bytes) - 8;
    uint32_t mxcsr = __builtin_ia32_stmxcsr();
    uint16_t fcw;

    __asm__ volatile("fnstcw %0" : "=m"(fcw));
    sp[0] = mxcsr | (uint64_t)fcw << 32;
    sp[1] = sp[2] = sp[5] = sp[6] = 0; /* r15, r14, rbx, rbp */
    sp[3] = (uint64_t)(uintptr_t)arg;  /* r13 */
    sp[4] = (uint64_t)(uintptr_t)fn;   /* r12 */
    sp[7] = (uint64_t)(uintptr_t)accel__null_ctx_start;
#else /* __aarch64__ */
    uint64_t *sp = (uint64_t *)(void *)(lo + bytes) - 22;
    uint64_t fpcr;

    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    for (int i = 0; i < 22; i++)
        sp[i] = 0;
    sp[0] = (uint64_t)(uintptr_t)fn;                     /* x19 */
    sp[1] = (uint64_t)(uintptr_t)arg;                    /* x20 */
    sp[11] = (uint64_t)(uintptr_t)accel__null_ctx_start; /* x30 */
    sp[20] = fpcr;
#endif
    regs->sp = sp;
}

static void null_ctx_swap(struct null_ctx_regs *from, struct null_ctx_regs *to)
{
    accel__null_ctx_swap(&from->sp, to->sp);
}
#else
/* makecontext passes int arguments only: the fiber goes through a TLS slot. */
static _Thread_local struct {
    void (*fn)(void *);
    void *arg;
} null_ctx_starting;

static void null_ctx_trampoline(void)
{
    void (*fn)(void *) = null_ctx_starting.fn;

    fn(null_ctx_starting.arg);
    abort();
}

static void null_ctx_make(struct null_ctx_regs *regs, unsigned char *lo,
                          size_t bytes, void (*fn)(void *), void *arg)
{
    getcontext(&regs->uc);
    regs->uc.uc_stack.ss_sp = lo;
    regs->uc.uc_stack.ss_size = bytes;
    regs->uc.uc_link = NULL;
    makecontext(&regs->uc, null_ctx_trampoline, 0);
    /* Read at the first switch, which follows at once on this thread. */
    null_ctx_starting.fn = fn;
    null_ctx_starting.arg = arg;
}

static void null_ctx_swap(struct null_ctx_regs *from, struct null_ctx_regs *to)
{
    swapcontext(&from->uc, &to->uc);
}
#endif

/* ---- switching ---- */

void accel__null_switch(struct null_ctx *from, struct null_ctx *to)
{
#ifdef NULL_ASAN
    __sanitizer_start_switch_fiber(&from->asan_fake, to->stack_lo,
                                   to->stack_bytes);
#endif
#ifdef NULL_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    null_ctx_swap(&from->regs, &to->regs);
#ifdef NULL_ASAN
    __sanitizer_finish_switch_fiber(from->asan_fake, NULL, NULL);
#endif
}

static void null_fiber_main(void *arg)
{
    struct null_fiber *fiber = arg;

#ifdef NULL_ASAN
    /* The first arrival on this stack: there is no fake stack to restore. */
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    fiber->entry(fiber);
    abort(); /* an entry switches home and is never resumed past its end */
}

void accel__null_ctx_init_native(struct null_ctx *native)
{
    pthread_attr_t attr;
    void *lo = NULL;
    size_t bytes = 0;

    *native = (struct null_ctx){0};
    /* ASan wants the stack a switch lands on; the thread's own is asked for. */
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &lo, &bytes);
        pthread_attr_destroy(&attr);
    }
    native->stack_lo = lo;
    native->stack_bytes = bytes;
#ifdef NULL_TSAN
    native->tsan_fiber = __tsan_get_current_fiber();
#endif
}

void accel__null_ctx_fini_native(struct null_ctx *native)
{
    (void)native; /* the thread's own TSan fiber belongs to the thread */
}

/* ---- stacks ---- */

static size_t null_page_bytes(void)
{
    long page = sysconf(_SC_PAGESIZE);

    return page > 0 ? (size_t)page : 4096u;
}

static void null_fiber_start_over(struct null_fiber *fiber)
{
    size_t page = null_page_bytes();

    fiber->ctx.stack_lo = fiber->map + page;
    fiber->ctx.stack_bytes = fiber->map_bytes - page;
    fiber->ctx.asan_fake = NULL;
    null_ctx_make(&fiber->ctx.regs, fiber->ctx.stack_lo, fiber->ctx.stack_bytes,
                  null_fiber_main, fiber);
}

bool accel__null_fiber_create(struct null_fiber *fiber, size_t stack_bytes,
                              struct null_ctx *home,
                              void (*entry)(struct null_fiber *fiber))
{
    size_t page = null_page_bytes();
    void *map;

    *fiber = (struct null_fiber){.home = home, .entry = entry};
    map = mmap(NULL, stack_bytes + page, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return false;
    /* The stack grows down: the guard is its lowest page. */
    if (mprotect(map, page, PROT_NONE) != 0) {
        munmap(map, stack_bytes + page);
        return false;
    }
    fiber->map = map;
    fiber->map_bytes = stack_bytes + page;
    null_fiber_start_over(fiber);
#ifdef NULL_TSAN
    fiber->ctx.tsan_fiber = __tsan_create_fiber(0);
#endif
#ifdef NULL_HAVE_VALGRIND_H
    fiber->valgrind_id = VALGRIND_STACK_REGISTER(
        fiber->ctx.stack_lo, fiber->ctx.stack_lo + stack_bytes);
#endif
    return true;
}

void accel__null_fiber_reset(struct null_fiber *fiber)
{
#ifdef NULL_ASAN
    /* The abandoned frames leave their redzones poisoned. */
    __asan_unpoison_memory_region(fiber->ctx.stack_lo, fiber->ctx.stack_bytes);
#endif
#ifdef NULL_TSAN
    /* TSan keeps the abandoned frames' call stack: start a fresh fiber. */
    __tsan_destroy_fiber(fiber->ctx.tsan_fiber);
    fiber->ctx.tsan_fiber = __tsan_create_fiber(0);
#endif
    null_fiber_start_over(fiber);
}

void accel__null_fiber_destroy(struct null_fiber *fiber)
{
    if (fiber->map == NULL)
        return;
#ifdef NULL_HAVE_VALGRIND_H
    VALGRIND_STACK_DEREGISTER(fiber->valgrind_id);
#endif
#ifdef NULL_TSAN
    __tsan_destroy_fiber(fiber->ctx.tsan_fiber);
#endif
#ifdef NULL_ASAN
    __asan_unpoison_memory_region(fiber->ctx.stack_lo, fiber->ctx.stack_bytes);
#endif
    munmap(fiber->map, fiber->map_bytes);
    fiber->map = NULL;
}

bool accel__null_fiber_guard_hit(const struct null_fiber *fiber,
                                 const void *address)
{
    uintptr_t a = (uintptr_t)address, lo = (uintptr_t)fiber->map;

    return fiber->map != NULL && a >= lo && a < lo + null_page_bytes();
}
