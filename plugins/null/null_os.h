/*
 * The few operating-system and CPU details the null plugin needs, kept in
 * one place so that the rest of the plugin has no platform conditionals.
 */
#ifndef ACCEL_NULL_OS_H
#define ACCEL_NULL_OS_H

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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
 * Write all `size` bytes, through short writes and EINTR. False, with
 * errno set (EIO for a write of nothing), when a write fails.
 */
static inline bool null_write_all(int fd, const void *bytes, size_t size)
{
    size_t done = 0;

    while (done < size) {
        ssize_t n = write(fd, (const char *)bytes + done, size - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        done += (size_t)n;
    }
    return true;
}

/*
 * The symbolic name of an errno value ("EAGAIN"), which is what a reader of
 * an error detail searches for; the description where the C library cannot
 * name it.
 */
static inline const char *null_errno_name(int err)
{
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char *name = strerrorname_np(err);

    if (name != NULL)
        return name;
#endif
    return strerror(err);
}

/*
 * Start a thread running fn(arg), named `name` (at most 15 characters)
 * for gdb, top and perf. It starts with every signal blocked, so that the
 * application's signal handlers never run on a thread it did not make.
 * 0, or pthread_create's error number.
 */
static inline int null_thread_start(pthread_t *thread, void *(*fn)(void *),
                                    void *arg, const char *name)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(thread, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        pthread_setname_np(*thread, name);
    return rc;
}

/* Sleep for `ns` nanoseconds, the whole time even if a signal interrupts. */
static inline void null_sleep_ns(uint64_t ns)
{
    struct timespec left = {.tv_sec = (time_t)(ns / 1000000000u),
                            .tv_nsec = (long)(ns % 1000000000u)};

    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

/*
 * The CPUs this process may run on: its affinity mask (what taskset and
 * cgroup cpusets leave it), else the CPUs online; at least 1.
 */
static inline uint32_t null_cpu_count(void)
{
    cpu_set_t set;
    long online;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (uint32_t)CPU_COUNT(&set);
    online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (uint32_t)online : 1u;
}

/* An anonymous in-memory file (close-on-exec); -1 with errno on failure. */
static inline int null_memfd_create(const char *name)
{
    return memfd_create(name, MFD_CLOEXEC);
}

/* The path under which the dynamic loader opens a file descriptor. */
#define NULL_FD_PATH_FORMAT "/proc/self/fd/%d"

/*
 * What an ELF shared object must say to run in this process: the class,
 * byte order and machine this plugin was built for. NULL_ELF_MACHINE is
 * EM_NONE where the plugin does not know its machine; the check is then
 * left to the dynamic loader.
 */
typedef ElfW(Ehdr) null_elf_ehdr;
typedef ElfW(Phdr) null_elf_phdr;
typedef ElfW(Shdr) null_elf_shdr;
#define NULL_ELF_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NULL_ELF_DATA ELFDATA2LSB
#else
#define NULL_ELF_DATA ELFDATA2MSB
#endif
#if defined(__x86_64__)
#define NULL_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NULL_ELF_MACHINE EM_AARCH64
#elif defined(__riscv)
#define NULL_ELF_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define NULL_ELF_MACHINE EM_PPC64
#elif defined(__s390x__)
#define NULL_ELF_MACHINE EM_S390
#elif defined(__i386__)
#define NULL_ELF_MACHINE EM_386
#elif defined(__arm__)
#define NULL_ELF_MACHINE EM_ARM
#else
#define NULL_ELF_MACHINE EM_NONE
#endif

#endif /* ACCEL_NULL_OS_H */
