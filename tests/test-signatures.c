/*
 * Typed kernel signatures on the CPU plugin: ACCEL_KERNEL records each
 * parameter's kind, element type and name; accel_launch refuses a ref of
 * another element type, a value for a pointer and a ref for a value, naming
 * the parameter; images from before (CPU kernel ABI 1 and 2) still launch,
 * checked by size; a bundle's signatures entry types an image that carries
 * none. The ACCEL_ARG_<TYPE> macros take expressions.
 */
#include "support.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/kernel.h>

#include "bundle.h"
#include "signature.h"

struct sig_case {
    accel_host *host;
    accel_device *device;
    accel_stream *stream;
    accel_module *module;
    accel_kernel *typed; /* typed_params, kernels/testing.cu */
    accel_ref refs[ACCEL_ELEM_TYPE_COUNT]; /* one element of each type */
    float scale;                           /* typed_params' values, which the */
    uint32_t n;                            /* arguments point to */
};

/* typed_params' pointer parameters, in order, and their element types. */
static const accel_elem_type pointer_types[] = {
    ACCEL_F32, ACCEL_F64, ACCEL_I8,  ACCEL_I16, ACCEL_I32,
    ACCEL_I64, ACCEL_U8,  ACCEL_U16, ACCEL_U32, ACCEL_U64,
};
static const char *const pointer_names[] = {
    "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
};
enum {
    TYPED_POINTERS = 10,
    RAW = 10,
    SCALE = 11,
    COUNT = 12,
    SUM = 13,
    TYPED_ARGS = 14
};

static const accel_dim3 one = {1, 1, 1};

static int setup(void **state)
{
    support_clean_environment();
    struct sig_case *c = calloc(1, sizeof *c);
    accel_host_options options = {.plugin_path = NULL_PLUGIN_PATH};
    int result = -1;
    if (c != NULL && accel_host_create(&options, &c->host) == ACCEL_OK &&
        accel_device_open(c->host, "null", 0, &c->device) == ACCEL_OK &&
        accel_stream_create(c->device, &c->stream) == ACCEL_OK &&
        accel_module_load_file(c->device, TESTING_CPU_IMAGE, &c->module) ==
            ACCEL_OK &&
        accel_kernel_get(c->module, "typed_params", &c->typed) == ACCEL_OK)
        result = 0;
    for (int t = 0; result == 0 && t < ACCEL_ELEM_TYPE_COUNT; t++)
        if (accel_alloc(c->device, (accel_elem_type)t, 1, &c->refs[t]) != ACCEL_OK)
            result = -1;
    if (result != 0)
        print_error("setup failed: %s\n", accel_last_error());
    *state = c;
    return result;
}

static int teardown(void **state)
{
    struct sig_case *c = *state;
    if (c == NULL)
        return 0;
    accel_module_unload(c->module);
    accel_stream_destroy(c->stream);
    accel_device_close(c->device);
    accel_host_destroy(c->host);
    free(c);
    return 0;
}

/* typed_params' arguments, each pointer given the ref of its own type. */
static void typed_args(struct sig_case *c, accel_arg *args, float scale,
                       uint32_t n)
{
    for (int i = 0; i < TYPED_POINTERS; i++)
        args[i] = ACCEL_ARG_REF(c->refs[pointer_types[i]]);
    args[RAW] = ACCEL_ARG_REF(c->refs[ACCEL_BYTE]);
    c->scale = scale;
    c->n = n;
    args[SCALE] = ACCEL_ARG_VALUE(c->scale);
    args[COUNT] = ACCEL_ARG_VALUE(c->n);
    args[SUM] = ACCEL_ARG_REF(c->refs[ACCEL_F64]);
}

/* The launch's result: typed_params writes n + scale to sum[0]. */
static double launched_sum(struct sig_case *c)
{
    double sum = -1;
    assert_status(accel_copy_out(c->stream, &sum, c->refs[ACCEL_F64], 1),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    return sum;
}

static void test_descriptor_records_kinds_types_and_names(void **state)
{
    (void)state;
    void *image = dlopen(TESTING_CPU_IMAGE, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(image);
    const struct accel_cpu_kernel *k = dlsym(image,
                                             "accel_cpu_kernel_typed_params");
    assert_non_null(k);
    assert_int_equal(k->abi, 3);
    assert_int_equal(k->param_count, TYPED_ARGS);
    assert_string_equal(
        k->param_names,
        " f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 raw scale n sum");
    for (int i = 0; i < TYPED_POINTERS; i++) {
        assert_int_equal(k->param_kinds[i], ACCEL_CPU_PARAM_POINTER);
        assert_int_equal(k->param_types[i], pointer_types[i]);
    }
    assert_int_equal(k->param_kinds[RAW], ACCEL_CPU_PARAM_POINTER);
    assert_int_equal(k->param_types[RAW], ACCEL_BYTE);
    assert_int_equal(k->param_kinds[SCALE], ACCEL_CPU_PARAM_VALUE);
    assert_int_equal(k->param_types[SCALE], ACCEL_F32);
    assert_int_equal(k->param_kinds[COUNT], ACCEL_CPU_PARAM_VALUE);
    assert_int_equal(k->param_types[COUNT], ACCEL_U32);
    const struct accel_cpu_kernel *add = dlsym(image,
                                               "accel_cpu_kernel_add_u32");
    assert_non_null(add);
    assert_string_equal(add->param_names, " n data value");
    dlclose(image);
    /* const and restrict leave a pointer's element type as it is. */
    image = dlopen(EXAMPLES_CPU_IMAGE, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(image);
    const struct accel_cpu_kernel *saxpy = dlsym(image,
                                                 "accel_cpu_kernel_saxpy");
    assert_non_null(saxpy);
    static const uint8_t kinds[] = {ACCEL_CPU_PARAM_VALUE, ACCEL_CPU_PARAM_VALUE,
                                    ACCEL_CPU_PARAM_POINTER,
                                    ACCEL_CPU_PARAM_POINTER};
    static const uint8_t types[] = {ACCEL_U32, ACCEL_F32, ACCEL_F32, ACCEL_F32};
    assert_memory_equal(saxpy->param_kinds, kinds, sizeof kinds);
    assert_memory_equal(saxpy->param_types, types, sizeof types);
    assert_string_equal(saxpy->param_names, " n a x y");
    dlclose(image);
}

static void test_matching_refs_launch(void **state)
{
    struct sig_case *c = *state;
    accel_arg args[TYPED_ARGS];
    typed_args(c, args, 0.5f, 41);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_OK);
    assert_true(launched_sum(c) == 41.5);
}

static void test_ref_of_every_other_element_type_is_refused(void **state)
{
    struct sig_case *c = *state;
    accel_arg args[TYPED_ARGS];
    char expected[128];
    for (int p = 0; p < TYPED_POINTERS; p++) {
        for (int t = 1; t < ACCEL_ELEM_TYPE_COUNT; t++) {
            if ((accel_elem_type)t == pointer_types[p])
                continue;
            typed_args(c, args, 0, 0);
            args[p] = ACCEL_ARG_REF(c->refs[t]);
            assert_status(accel_launch(c->stream, c->typed, one, one, 0, args,
                                       TYPED_ARGS),
                          ACCEL_ERR_TYPE_MISMATCH);
            snprintf(expected, sizeof expected,
                     "argument %d (%s) of 'typed_params' points "
                     "to %s; the ref holds %s",
                     p, pointer_names[p], accel_elem_type_name(pointer_types[p]),
                     accel_elem_type_name((accel_elem_type)t));
            assert_contains(accel_last_error(), expected);
        }
    }
    /* Nothing of it ran. */
    typed_args(c, args, 0.25f, 7);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_OK);
    assert_true(launched_sum(c) == 7.25);
}

static void test_bytes_fit_any_pointer_and_any_ref_fits_bytes(void **state)
{
    struct sig_case *c = *state;
    accel_arg args[TYPED_ARGS];
    for (int t = 0; t < ACCEL_ELEM_TYPE_COUNT; t++) {
        typed_args(c, args, 0, (uint32_t)t);
        args[RAW] = ACCEL_ARG_REF(c->refs[t]);
        assert_status(
            accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
            ACCEL_OK);
    }
    for (int p = 0; p < TYPED_POINTERS; p++) {
        typed_args(c, args, 0, 3);
        args[p] = ACCEL_ARG_REF(c->refs[ACCEL_BYTE]);
        assert_status(
            accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
            ACCEL_OK);
    }
    assert_true(launched_sum(c) == 3.0);
}

static void test_value_for_a_pointer_is_refused_with_its_name(void **state)
{
    struct sig_case *c = *state;
    accel_arg args[TYPED_ARGS];
    for (int p = 0; p <= RAW; p++) {
        typed_args(c, args, 0, 0);
        args[p] = ACCEL_ARG_U64(0x1000);
        assert_status(
            accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
            ACCEL_ERR_TYPE_MISMATCH);
        char expected[96];
        snprintf(expected, sizeof expected,
                 "argument %d (%s) of 'typed_params' is a pointer", p,
                 p == RAW ? "raw" : pointer_names[p]);
        assert_contains(accel_last_error(), expected);
        assert_contains(accel_last_error(), "pass a ref, not a value");
    }
}

static void test_ref_for_a_value_is_refused_with_its_name(void **state)
{
    struct sig_case *c = *state;
    accel_arg args[TYPED_ARGS];
    typed_args(c, args, 0, 0);
    args[SCALE] = ACCEL_ARG_REF(c->refs[ACCEL_F32]);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(
        accel_last_error(),
        "argument 11 (scale) of 'typed_params' is a value (f32, 4 bytes)");
    typed_args(c, args, 0, 0);
    args[COUNT] = ACCEL_ARG_REF(c->refs[ACCEL_U32]);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(),
                    "argument 12 (n) of 'typed_params' is a value (u32");
}

static void test_freed_ref_is_freed_before_its_type(void **state)
{
    struct sig_case *c = *state;
    accel_ref gone;
    assert_status(accel_alloc(c->device, ACCEL_I16, 1, &gone), ACCEL_OK);
    assert_status(accel_free(c->device, gone), ACCEL_OK);
    accel_arg args[TYPED_ARGS];
    typed_args(c, args, 0, 0);
    args[0] = ACCEL_ARG_REF(gone);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_ERR_FREED_REF);
}

/* The 16-bit floats, where the compiler that built the image has them. */
static void check_half_kernel(struct sig_case *c, const char *name,
                              accel_elem_type type)
{
    accel_kernel *kernel = NULL;
    if (accel_kernel_get(c->module, name, &kernel) != ACCEL_OK) {
        print_message("(%s: the compiler of the CPU image has no such type)\n",
                      name);
        return;
    }
    for (int t = 1; t < ACCEL_ELEM_TYPE_COUNT; t++) {
        accel_arg arg = ACCEL_ARG_REF(c->refs[t]);
        assert_status(accel_launch(c->stream, kernel, one, one, 0, &arg, 1),
                      (accel_elem_type)t == type ? ACCEL_OK
                                                 : ACCEL_ERR_TYPE_MISMATCH);
    }
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

static void test_half_refs_must_match_half_pointers(void **state)
{
    struct sig_case *c = *state;
    check_half_kernel(c, "typed_f16", ACCEL_F16);
    check_half_kernel(c, "typed_bf16", ACCEL_BF16);
}

/* Every ACCEL_ARG_<TYPE> holds the converted value, its size and alignment. */
#define CHECK_ARG(macro, T, expr, expected)                                    \
    do {                                                                       \
        accel_arg arg_ = macro(expr);                                          \
        assert_int_equal(arg_.kind, ACCEL_ARG_KIND_VALUE);                     \
        assert_int_equal(arg_.size, sizeof(T));                                \
        assert_int_equal(arg_.align, _Alignof(T));                             \
        T value_;                                                              \
        memcpy(&value_, arg_.value, sizeof value_);                            \
        assert_true(value_ == (expected));                                     \
    } while (0)

static void test_arg_macros_take_expressions(void **state)
{
    struct sig_case *c = *state;
    uint32_t n = 40;
    float a = 0.75f;
    int wide = 300;
    CHECK_ARG(ACCEL_ARG_F32, float, 2.0f * a, 1.5f);
    CHECK_ARG(ACCEL_ARG_F64, double, a / 2, 0.375);
    CHECK_ARG(ACCEL_ARG_I8, int8_t, -wide / 100, -3);
    CHECK_ARG(ACCEL_ARG_I16, int16_t, -wide, -300);
    CHECK_ARG(ACCEL_ARG_I32, int32_t, wide * -1000, -300000);
    CHECK_ARG(ACCEL_ARG_I64, int64_t, (int64_t)wide << 40, (int64_t)300 << 40);
    CHECK_ARG(ACCEL_ARG_U8, uint8_t, wide, (uint8_t)300);
    CHECK_ARG(ACCEL_ARG_U16, uint16_t, n * 1000, 40000);
    CHECK_ARG(ACCEL_ARG_U32, uint32_t, n + 1, 41);
    CHECK_ARG(ACCEL_ARG_U64, uint64_t, (uint64_t)n << 33, (uint64_t)40 << 33);
    accel_arg half = ACCEL_ARG_F16(((accel_f16){0x3c00}));
    assert_int_equal(half.size, 2);
    assert_int_equal(((const accel_f16 *)half.value)->bits, 0x3c00);
    accel_arg bhalf = ACCEL_ARG_BF16(((accel_bf16){0x3f80}));
    assert_int_equal(bhalf.size, 2);
    assert_int_equal(((const accel_bf16 *)bhalf.value)->bits, 0x3f80);

    /* In a launch: no variable for either value. */
    accel_arg args[TYPED_ARGS];
    typed_args(c, args, 0, 0);
    args[SCALE] = ACCEL_ARG_F32(2.0f * a);
    args[COUNT] = ACCEL_ARG_U32(n + 1);
    assert_status(accel_launch(c->stream, c->typed, one, one, 0, args, TYPED_ARGS),
                  ACCEL_OK);
    assert_true(launched_sum(c) == 42.5);
}

static void test_malformed_typed_descriptors_are_refused(void **state)
{
    struct sig_case *c = *state;
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(c->module, "bad_kind", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "parameter 0 kind 7");
    assert_status(accel_kernel_get(c->module, "unnamed", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "no name for parameter 1");
}

/* add_one_v1 or add_one_v2 of an old image over 8 u32s of a ref of `type`. */
static void run_old_add_one(struct sig_case *c, const char *path, const char *name)
{
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;
    assert_status(accel_module_load_file(c->device, path, &module), ACCEL_OK);
    assert_status(accel_kernel_get(module, name, &kernel), ACCEL_OK);
    /* Sizes only: a ref of any type goes, a value of the wrong size does not. */
    accel_ref data;
    uint32_t zeros[8] = {0}, out[8];
    assert_status(accel_alloc(c->device, ACCEL_F32, 8, &data), ACCEL_OK);
    assert_status(accel_copy_to_device(c->stream, data, 0, zeros, sizeof zeros),
                  ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_U32(8), ACCEL_ARG_REF(data)};
    accel_dim3 block = {8, 1, 1};
    assert_status(accel_launch(c->stream, kernel, one, block, 0, args, 2),
                  ACCEL_OK);
    args[0] = ACCEL_ARG_U64(8);
    assert_status(accel_launch(c->stream, kernel, one, block, 0, args, 2),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_copy_to_host(c->stream, out, data, 0, sizeof out),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], 1);
    assert_status(accel_free(c->device, data), ACCEL_OK);
    accel_module_unload(module);
}

static void test_images_of_abi_1_and_2_launch_by_size(void **state)
{
    struct sig_case *c = *state;
    run_old_add_one(c, ABI1_CPU_IMAGE, "add_one_v1");
    run_old_add_one(c, ABI2_CPU_IMAGE, "add_one_v2");
}

/* A bundle of the ABI 2 image and `signatures` (NULL: none). */
static accel_status load_abi2_bundle(struct sig_case *c, const char *signatures,
                                     accel_module **out_module)
{
    size_t image_size = 0, size = 0;
    void *image = support_read_file(ABI2_CPU_IMAGE, &image_size), *bundle = NULL;
    assert_non_null(image);
    struct accel__bundle_image images[2] = {
        {"null", "any", "elf", image, image_size},
        {ACCEL__BUNDLE_SIGNATURES_BACKEND, ACCEL__BUNDLE_SIGNATURES_TARGET,
         ACCEL__BUNDLE_SIGNATURES_FORMAT, signatures,
         signatures ? strlen(signatures) : 0},
    };
    assert_status(accel__bundle_write(images, signatures ? 2 : 1, &bundle, &size),
                  ACCEL_OK);
    accel_status status = accel_module_load(c->device, bundle, size, out_module);
    free(bundle);
    free(image);
    return status;
}

static void test_bundle_signatures_type_an_untyped_image(void **state)
{
    struct sig_case *c = *state;
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;
    assert_status(load_abi2_bundle(c,
                                   "accel-signatures 1\n"
                                   "add_one_v2 count:val:u32 data:ptr:u32\n",
                                   &module),
                  ACCEL_OK);
    assert_status(accel_kernel_get(module, "add_one_v2", &kernel), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_U32(1), ACCEL_ARG_REF(c->refs[ACCEL_F32])};
    assert_status(accel_launch(c->stream, kernel, one, one, 0, args, 2),
                  ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(),
                    "argument 1 (data) of 'add_one_v2' points to u32; "
                    "the ref holds f32");
    args[1] = ACCEL_ARG_REF(c->refs[ACCEL_U32]);
    assert_status(accel_launch(c->stream, kernel, one, one, 0, args, 2),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    accel_module_unload(module);
}

static void test_bundle_signatures_that_disagree_or_break_are_refused(void **state)
{
    struct sig_case *c = *state;
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;
    /* Three parameters where the image has two. */
    assert_status(
        load_abi2_bundle(c,
                         "accel-signatures 1\n"
                         "add_one_v2 n:val:u32 data:ptr:u32 more:val:u8\n",
                         &module),
        ACCEL_OK);
    assert_status(accel_kernel_get(module, "add_one_v2", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "give 3 parameters, its image 2");
    accel_module_unload(module);
    /* A value of 8 bytes where the image has 4. */
    assert_status(load_abi2_bundle(c,
                                   "accel-signatures 1\n"
                                   "add_one_v2 n:val:u64 data:ptr:u32\n",
                                   &module),
                  ACCEL_OK);
    assert_status(accel_kernel_get(module, "add_one_v2", &kernel),
                  ACCEL_ERR_MODULE);
    assert_contains(accel_last_error(), "parameter 0 (n) is 8 bytes");
    accel_module_unload(module);
    static const char *const broken[] = {
        "accel-signatures 2\nadd_one_v2\n",
        "accel-signatures 1\nadd_one_v2 n:val:u32",
        "accel-signatures 1\nadd_one_v2 n:val:u33\n",
        "accel-signatures 1\nadd_one_v2 n:ref:u32\n",
        "accel-signatures 1\nadd_one_v2  n:val:u32\n",
        "accel-signatures 1\nadd_one_v2 n:val:u32 \n",
        "accel-signatures 1\nadd-one n:val:u32\n",
        "accel-signatures 1\nadd_one_v2 n\n",
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        assert_status(load_abi2_bundle(c, broken[i], &module), ACCEL_ERR_MODULE);
        assert_null(module);
        assert_contains(accel_last_error(), "signatures");
    }
}

static void test_bundle_without_signatures_checks_by_size(void **state)
{
    struct sig_case *c = *state;
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;
    assert_status(load_abi2_bundle(c, NULL, &module), ACCEL_OK);
    assert_status(accel_kernel_get(module, "add_one_v2", &kernel), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_U32(1), ACCEL_ARG_REF(c->refs[ACCEL_F64])};
    assert_status(accel_launch(c->stream, kernel, one, one, 0, args, 2),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    accel_module_unload(module);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_descriptor_records_kinds_types_and_names),
        T(test_matching_refs_launch),
        T(test_ref_of_every_other_element_type_is_refused),
        T(test_bytes_fit_any_pointer_and_any_ref_fits_bytes),
        T(test_value_for_a_pointer_is_refused_with_its_name),
        T(test_ref_for_a_value_is_refused_with_its_name),
        T(test_freed_ref_is_freed_before_its_type),
        T(test_half_refs_must_match_half_pointers),
        T(test_arg_macros_take_expressions),
        T(test_malformed_typed_descriptors_are_refused),
        T(test_images_of_abi_1_and_2_launch_by_size),
        T(test_bundle_signatures_type_an_untyped_image),
        T(test_bundle_signatures_that_disagree_or_break_are_refused),
        T(test_bundle_without_signatures_checks_by_size),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
