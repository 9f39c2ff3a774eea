/*
 * Uses of the typed copy macros that must not compile: a host pointer whose
 * element type the macros cannot map (void, a struct, bool, ...), and a
 * const destination for accel_copy_out. run.sh compiles this file once per
 * case, with -DCASE_name, and expects the compiler to refuse it with the
 * macros' _Generic error naming the host type: the extended regular
 * expression after each case. Without a case the file compiles (the same
 * calls with float data), so that each refusal is the case's own.
 */
/* run.sh finds each case by its lines as written: */
// clang-format off
#include <accel/accel.h>

#include <complex.h>
#include <stdbool.h>

struct pair {
    float a, b;
};
union bits {
    float f;
    uint32_t u;
};

accel_status use(accel_stream *s, accel_ref r);

accel_status use(accel_stream *s, accel_ref r)
{
    accel_status status = ACCEL_OK;
    float floats[4] = { 0 };
    (void)s;
    (void)r;
    (void)floats;
#if defined(CASE_void_in) /* 'void \*' */
    void *host = floats;
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_void_out) /* 'void \*' */
    void *host = floats;
    status = accel_copy_out(s, host, r, 4);
#elif defined(CASE_const_void_in) /* 'const void \*' */
    const void *host = floats;
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_void_elem_type_of) /* 'void \*' */
    void *host = floats;
    status = (accel_status)ACCEL_ELEM_TYPE_OF(host);
#elif defined(CASE_struct_in) /* 'struct pair \*' */
    struct pair host[2] = { { 0, 0 } };
    status = accel_copy_in(s, r, host, 2);
#elif defined(CASE_struct_out) /* 'struct pair \*' */
    struct pair host[2];
    status = accel_copy_out(s, host, r, 2);
#elif defined(CASE_const_struct_in) /* 'const struct pair \*' */
    const struct pair host[2] = { { 0, 0 } };
    status = accel_copy_in(s, r, host, 2);
#elif defined(CASE_union_in) /* 'union bits \*' */
    union bits host[2] = { { 0 } };
    status = accel_copy_in(s, r, host, 2);
#elif defined(CASE_bool_in) /* '(_Bool|bool) \*' */
    bool host[4] = { false };
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_long_double_in) /* 'long double \*' */
    long double host[4] = { 0 };
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_complex_in) /* '(_Complex|complex) float \*' */
    float complex host[2] = { 0 };
    status = accel_copy_in(s, r, host, 2);
#elif defined(CASE_volatile_in) /* 'volatile float \*' */
    volatile float host[4] = { 0 };
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_pointer_to_pointer_in) /* 'float \*\*' */
    float *host[4] = { floats };
    status = accel_copy_in(s, r, host, 4);
#elif defined(CASE_function_pointer_in) /* '.*\(\*\)\(.*\)' */
    status = accel_copy_in(s, r, &use, 1);
#elif defined(CASE_value_not_pointer_in) /* 'float' */
    float host = 0;
    status = accel_copy_in(s, r, host, 1);
#elif defined(CASE_const_float_out) /* 'const float \*' */
    const float host[4] = { 0 };
    status = accel_copy_out(s, host, r, 4);
#elif defined(CASE_const_char_out) /* 'const char \*' */
    const char host[4] = "abc";
    status = accel_copy_out(s, host, r, 4);
#elif defined(CASE_const_u8_out) /* 'const (unsigned char|uint8_t) \*' */
    const uint8_t host[4] = { 0 };
    status = accel_copy_out(s, host, r, 4);
#else
    /* The control: the same calls with a host type the macros know. */
    status = accel_copy_in(s, r, floats, 4);
    if (status == ACCEL_OK)
        status = accel_copy_out(s, floats, r, 4);
#endif
    return status;
}
