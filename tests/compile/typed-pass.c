/*
 * What the typed copy macros must accept, and the element each host type
 * maps to, checked at compile time. run.sh compiles this file with the same
 * flags as typed-fail.c (-pedantic and -Werror included) and expects it to
 * compile: a harness that refused everything would fail here.
 */
/* run.sh finds each case by its lines as written: */
// clang-format off
#include <accel/accel.h>

#include <stddef.h>
#include <stdint.h>

#define MAPS(T, want)                                                          \
    _Static_assert(ACCEL_ELEM_TYPE_OF((T *)0) == (want), #T " maps to " #want); \
    _Static_assert(ACCEL_ELEM_TYPE_OF((const T *)0) == (want),                 \
                   "const " #T " maps to " #want)

#define SIGNED(T) (sizeof(T) == 8 ? ACCEL_I64 : ACCEL_I32)
#define UNSIGNED(T) (sizeof(T) == 8 ? ACCEL_U64 : ACCEL_U32)

MAPS(float, ACCEL_F32);
MAPS(double, ACCEL_F64);
MAPS(accel_f16, ACCEL_F16);
MAPS(accel_bf16, ACCEL_BF16);
MAPS(char, ACCEL_BYTE);
MAPS(signed char, ACCEL_I8);
MAPS(unsigned char, ACCEL_U8);
MAPS(short, ACCEL_I16);
MAPS(unsigned short, ACCEL_U16);
MAPS(int, ACCEL_I32);
MAPS(unsigned int, ACCEL_U32);
MAPS(long, SIGNED(long));
MAPS(unsigned long, UNSIGNED(long));
MAPS(long long, ACCEL_I64);
MAPS(unsigned long long, ACCEL_U64);
MAPS(int8_t, ACCEL_I8);
MAPS(int16_t, ACCEL_I16);
MAPS(int32_t, ACCEL_I32);
MAPS(int64_t, ACCEL_I64);
MAPS(uint8_t, ACCEL_U8);
MAPS(uint16_t, ACCEL_U16);
MAPS(uint32_t, ACCEL_U32);
MAPS(uint64_t, ACCEL_U64);
MAPS(size_t, UNSIGNED(size_t));
MAPS(ptrdiff_t, SIGNED(ptrdiff_t));
MAPS(intptr_t, SIGNED(intptr_t));
MAPS(uintptr_t, UNSIGNED(uintptr_t));
#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 float16;
MAPS(float16, ACCEL_F16);
#endif
#if defined(__BFLT16_MAX__)
__extension__ typedef __bf16 bfloat16;
MAPS(bfloat16, ACCEL_BF16);
#endif

accel_status use(accel_stream *s, accel_ref r);

/* Calls as a program writes them: arrays, const sources, pointers that are
 * themselves const. */
accel_status use(accel_stream *s, accel_ref r)
{
    float floats[4] = { 0 };
    const double doubles[2] = { 0 };
    char text[4] = "abc";
    unsigned long long wide[2] = { 0 };
    int32_t *const fixed = NULL;
    accel_status status = accel_copy_in(s, r, floats, 4);
    if (status == ACCEL_OK)
        status = accel_copy_out(s, floats, r, 4);
    if (status == ACCEL_OK)
        status = accel_copy_in(s, r, doubles, 2);
    if (status == ACCEL_OK)
        status = accel_copy_in(s, r, text, 4);
    if (status == ACCEL_OK)
        status = accel_copy_out(s, text, r, 4);
    if (status == ACCEL_OK)
        status = accel_copy_out(s, wide, r, 2);
    if (status == ACCEL_OK)
        status = accel_copy_out(s, fixed, r, 0);
    return status;
}
