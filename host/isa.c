/*
 * The CPU's ISA level, for picking among the CPU images of a bundle: on
 * x86-64 the psABI's micro-architecture levels (x86-64 baseline = 1, v2,
 * v3, v4), as glibc's hwcaps directories use them; elsewhere only the
 * baseline. A level counts only when the operating system also saves the
 * registers it needs (XCR0), so that an image for v4 is never picked where
 * AVX-512 would fault.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bundle.h"

#if defined(__x86_64__)
#include <cpuid.h>

/* Bits of CPUID leaves, named as in the Intel SDM and the x86-64 psABI. */
enum {
    /* leaf 1, ecx */
    L1C_SSE3 = 1u << 0,
    L1C_SSSE3 = 1u << 9,
    L1C_FMA = 1u << 12,
    L1C_CX16 = 1u << 13,
    L1C_SSE41 = 1u << 19,
    L1C_SSE42 = 1u << 20,
    L1C_MOVBE = 1u << 22,
    L1C_POPCNT = 1u << 23,
    L1C_OSXSAVE = 1u << 27,
    L1C_AVX = 1u << 28,
    L1C_F16C = 1u << 29,
    /* leaf 0x80000001, ecx */
    LXC_LAHF = 1u << 0,
    LXC_LZCNT = 1u << 5,
    /* leaf 7 subleaf 0, ebx */
    L7B_BMI1 = 1u << 3,
    L7B_AVX2 = 1u << 5,
    L7B_BMI2 = 1u << 8,
    L7B_AVX512F = 1u << 16,
    L7B_AVX512DQ = 1u << 17,
    L7B_AVX512CD = 1u << 28,
    L7B_AVX512BW = 1u << 30,
    L7B_AVX512VL = 1u << 31,
};

/* XCR0: SSE and AVX state; AVX-512's opmask, upper ZMM and high ZMM too. */
#define XCR0_AVX 0x6u
#define XCR0_AVX512 0xe6u

static bool all(uint32_t word, uint32_t bits)
{
    return (word & bits) == bits;
}

static uint64_t read_xcr0(void)
{
    uint32_t low, high;

    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return ((uint64_t)high << 32) | low;
}

static unsigned x86_64_level(void)
{
    uint32_t a, b, c1, d, c_ext, b7;
    uint64_t xcr0;

    if (!__get_cpuid(1, &a, &b, &c1, &d) ||
        !__get_cpuid(0x80000001u, &a, &b, &c_ext, &d))
        return 1;
    if (!all(c1, L1C_SSE3 | L1C_SSSE3 | L1C_SSE41 | L1C_SSE42 | L1C_POPCNT |
                     L1C_CX16) ||
        !all(c_ext, LXC_LAHF))
        return 1;
    if (!all(c1, L1C_OSXSAVE) || !__get_cpuid_count(7, 0, &a, &b7, &c_ext, &d))
        return 2;
    __get_cpuid(0x80000001u, &a, &b, &c_ext, &d);
    xcr0 = read_xcr0();
    if ((xcr0 & XCR0_AVX) != XCR0_AVX ||
        !all(c1, L1C_AVX | L1C_FMA | L1C_F16C | L1C_MOVBE) ||
        !all(c_ext, LXC_LZCNT) || !all(b7, L7B_AVX2 | L7B_BMI1 | L7B_BMI2))
        return 2;
    if ((xcr0 & XCR0_AVX512) != XCR0_AVX512 ||
        !all(b7, L7B_AVX512F | L7B_AVX512BW | L7B_AVX512CD | L7B_AVX512DQ |
                     L7B_AVX512VL))
        return 3;
    return 4;
}
#endif

unsigned accel__cpu_isa_level(const char *arch)
{
#if defined(__x86_64__)
    if (arch != NULL && strcmp(arch, "x86_64") == 0)
        return x86_64_level();
#else
    (void)arch;
#endif
    return 1;
}
