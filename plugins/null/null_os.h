/*
 * The few operating-system and CPU details the null plugin needs, kept in
 * one place so that the rest of the plugin has no platform conditionals.
 */
#ifndef ACCEL_NULL_OS_H
#define ACCEL_NULL_OS_H

#include <stdint.h>
#include <string.h>
#include <time.h>

/* Makes one symbol visible although the plugin is built with hidden default. */
#define NULL_EXPORT __attribute__((visibility("default")))

/*
 * Tell the CPU that this is a spin-wait loop: it saves power and lets the
 * sibling hyper-thread (often the one we wait for) run faster.
 */
static inline void null_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Monotonic time in nanoseconds; only differences mean anything. */
static inline uint64_t null_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The symbolic name of an errno value ("EAGAIN"), which is what a reader of
 * an error detail searches for; the description where the C library cannot
 * name it.
 */
static inline const char *null_errno_name(int err)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char *name = strerrorname_np(err);

    if (name != NULL)
        return name;
#endif
    return strerror(err);
}

#endif /* ACCEL_NULL_OS_H */
