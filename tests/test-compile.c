/*
 * Kernels from source on the null plugin (accel_module_compile): they run,
 * a compile error comes back with the compiler's whole log, and a source
 * or option outside the dialect is refused before any compiler runs.
 */
#include "compile_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_saxpy_compiled_from_source_computes(void **state)
{
    struct compile_case *c = *state;
    accel_module *module = compile_case_saxpy(c, "-DSAXPY_BIAS=0.0f");
    assert_int_equal(compile_case_runs(c), 1);
    compile_case_check_saxpy(c, module, 0.0f);
    accel_module_unload(module);
}

static void test_options_define_macros_in_order(void **state)
{
    struct compile_case *c = *state;
    accel_module *module = compile_case_saxpy(
        c, "-DSAXPY_BIAS=9.0f  -USAXPY_BIAS\t-DSAXPY_BIAS=1.5f");
    compile_case_check_saxpy(c, module, 1.5f);
    accel_module_unload(module);
}

/* A block reverses its slice through shared memory across a barrier. */
static const char barrier_source[] =
    "#include <accel/kernel.h>\n"
    "ACCEL_KERNEL(block_reverse, (const uint32_t *, in), (uint32_t *, out))\n"
    "{\n"
    "    ACCEL_SHARED(uint32_t, s, 256);\n"
    "    uint32_t t = threadIdx.x, size = blockDim.x;\n"
    "    uint64_t base = (uint64_t)blockIdx.x * size;\n"
    "    s[t] = in[base + t];\n"
    "    accel_sync_threads();\n"
    "    out[base + t] = s[size - 1 - t];\n"
    "}\n";

static void test_barrier_kernel_compiled_from_source_computes(void **state)
{
    struct compile_case *c = *state;
    enum { BLOCK = 256, BLOCKS = 8, N = BLOCK * BLOCKS };
    accel_module *module = NULL;
    accel_status status = accel_module_compile(c->null.device, barrier_source,
                                               NULL, &module);
    if (status != ACCEL_OK)
        fail_msg("%s\n%s", accel_last_error(), accel_last_build_log());
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(module, "block_reverse", &kernel), ACCEL_OK);
    static uint32_t in[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        in[i] = i * 7u + 1u;
    accel_ref din, dout;
    assert_status(accel_alloc(c->null.device, ACCEL_U32, N, &din), ACCEL_OK);
    assert_status(accel_alloc(c->null.device, ACCEL_U32, N, &dout), ACCEL_OK);
    assert_status(accel_copy_to_device(c->null.stream, din, 0, in, sizeof in),
                  ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_REF(din), ACCEL_ARG_REF(dout)};
    assert_status(accel_launch(c->null.stream, kernel, (accel_dim3){BLOCKS, 1, 1},
                               (accel_dim3){BLOCK, 1, 1}, 0, args, 2),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->null.stream, out, dout, 0, sizeof out),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->null.stream), ACCEL_OK);
    for (uint32_t b = 0; b < BLOCKS; b++)
        for (uint32_t t = 0; t < BLOCK; t++)
            assert_int_equal(out[b * BLOCK + t], in[b * BLOCK + BLOCK - 1 - t]);
    accel_free(c->null.device, din);
    accel_free(c->null.device, dout);
    accel_module_unload(module);
}

/*
 * What an image links against since the plugin links with -nostdlib: a
 * math call (libm), a 128-bit division (__udivti3, from libgcc.a) and a
 * zeroing loop that gcc turns into a memset call (libc, through libm's
 * dependency). Any of them missing and the image does not load.
 */
static const char helpers_source[] =
    "#include <accel/kernel.h>\n"
    "ACCEL_KERNEL(helpers, (uint32_t, n), (const float *, x), (float *, y),\n"
    "             (uint64_t *, q), (uint8_t *, z))\n"
    "{\n"
    "    uint64_t i = accel_global_idx_x();\n"
    "    if (i >= n)\n"
    "        return;\n"
    "    y[i] = sinf(x[i]);\n"
    "    unsigned __int128 wide = ((unsigned __int128)q[i] << 64) | q[i];\n"
    "    q[i] = (uint64_t)(wide / (q[i] + 3u));\n"
    "    for (uint32_t k = 0; k < n; k++)\n"
    "        z[i * n + k] = 0;\n"
    "}\n";

struct helpers_data {
    float x[64], y[64];
    uint64_t q[64];
    uint8_t z[64 * 64];
};

static void helpers_run(struct compile_case *c, accel_kernel *kernel,
                        struct helpers_data *d)
{
    uint32_t n = 64;
    accel_ref x, y, q, z;
    accel_device *dev = c->null.device;
    assert_status(accel_alloc(dev, ACCEL_F32, n, &x), ACCEL_OK);
    assert_status(accel_alloc(dev, ACCEL_F32, n, &y), ACCEL_OK);
    assert_status(accel_alloc(dev, ACCEL_U64, n, &q), ACCEL_OK);
    assert_status(accel_alloc(dev, ACCEL_U8, (size_t)n * n, &z), ACCEL_OK);
    accel_stream *s = c->null.stream;
    assert_status(accel_copy_to_device(s, x, 0, d->x, sizeof d->x), ACCEL_OK);
    assert_status(accel_copy_to_device(s, q, 0, d->q, sizeof d->q), ACCEL_OK);
    assert_status(accel_copy_to_device(s, z, 0, d->z, sizeof d->z), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(x), ACCEL_ARG_REF(y),
                        ACCEL_ARG_REF(q), ACCEL_ARG_REF(z)};
    assert_status(accel_launch(s, kernel, (accel_dim3){2, 1, 1},
                               (accel_dim3){32, 1, 1}, 0, args, 5),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(s, d->y, y, 0, sizeof d->y), ACCEL_OK);
    assert_status(accel_copy_to_host(s, d->q, q, 0, sizeof d->q), ACCEL_OK);
    assert_status(accel_copy_to_host(s, d->z, z, 0, sizeof d->z), ACCEL_OK);
    assert_status(accel_stream_sync(s), ACCEL_OK);
    accel_free(dev, x);
    accel_free(dev, y);
    accel_free(dev, q);
    accel_free(dev, z);
}

static void test_kernel_using_libm_libgcc_and_libc_loads_and_computes(void **state)
{
    struct compile_case *c = *state;
    accel_module *module = NULL;
    if (accel_module_compile(c->null.device, helpers_source, NULL, &module) !=
        ACCEL_OK)
        fail_msg("%s\n%s", accel_last_error(), accel_last_build_log());
    accel_kernel *kernel = NULL;
    assert_status(accel_kernel_get(module, "helpers", &kernel), ACCEL_OK);
    static struct helpers_data d, want;
    for (uint32_t i = 0; i < 64; i++) {
        d.x[i] = (float)i * 0.1f - 3.0f;
        d.q[i] = 0x9e3779b97f4a7c15ull * (i + 1u);
        want.y[i] = sinf(d.x[i]);
        unsigned __int128 wide = ((unsigned __int128)d.q[i] << 64) | d.q[i];
        want.q[i] = (uint64_t)(wide / (d.q[i] + 3u));
    }
    memset(d.z, 0xa5, sizeof d.z);
    helpers_run(c, kernel, &d);
    for (uint32_t i = 0; i < 64; i++) {
        assert_float_equal(d.y[i], want.y[i], 1e-6);
        assert_int_equal(d.q[i], want.q[i]);
    }
    assert_memory_equal(d.z, want.z, sizeof d.z);
    accel_module_unload(module);
}

static void test_syntax_error_returns_the_whole_log_with_its_line(void **state)
{
    struct compile_case *c = *state;
    static const char source[] = "#include <accel/kernel.h>\n"
                                 "ACCEL_KERNEL(broken, (uint32_t, n))\n"
                                 "{\n"
                                 "    uint32_t i = n +;\n"
                                 "}\n";
    accel_module *module = (accel_module *)&module;
    assert_status(accel_module_compile(c->null.device, source, NULL, &module),
                  ACCEL_ERR_MODULE);
    assert_null(module);
    const char *log = accel_last_build_log();
    assert_contains(log, "kernel.c:4:");
    assert_contains(log, "error");
    assert_contains(accel_last_error(), "accel_last_build_log");
    /* Nothing was cached: the same source compiles (and fails) again. */
    assert_status(accel_module_compile(c->null.device, source, NULL, &module),
                  ACCEL_ERR_MODULE);
    assert_int_equal(compile_case_runs(c), 2);
    assert_int_equal(compile_case_entries(c, NULL, 0), 0);
}

static void
test_includes_outside_the_dialect_are_refused_before_compiling(void **state)
{
    struct compile_case *c = *state;
    static const char *sources[] = {
        "#include <accel/kernel.h>\n#include <stdio.h>\n",
        "#include <accel/kernel.h>\n  #  include \"../../etc/passwd\"\n",
        "#define HEADER <accel/kernel.h>\n#include HEADER\n",
        "#include <accel/kernel.h>\n/**/#/**/include_next <accel/kernel.h>\n",
        "#include <accel/kernel.h>\n#embed \"/etc/passwd\"\n",
        "#include <accel/kernel.h> extra\n",
        "#include <accel/kernel.h>\n%:include <stdio.h>\n",
        "#include <accel/kernel.h>\n#inc\\\nlude <stdio.h>\n",
        "#include <accel/kernel.h>\n/* a\n comment */\n\n#include <stdio.h>\n",
    };
    static const char *lines[] = {"line 2", "line 2", "line 2",
                                  "line 2", "line 2", "line 1",
                                  "line 2", "line 2", "line 5"};
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        accel_module *module = NULL;
        assert_status(
            accel_module_compile(c->null.device, sources[i], NULL, &module),
            ACCEL_ERR_MODULE);
        assert_null(module);
        assert_contains(accel_last_error(), "outside the dialect");
        assert_contains(accel_last_error(), lines[i]);
    }
    assert_int_equal(compile_case_runs(c), 0);
}

static void test_options_other_than_defines_are_refused(void **state)
{
    struct compile_case *c = *state;
    static const char *options[] = {
        "-I/etc",
        "-include /etc/passwd",
        "-o /tmp/x",
        "-DX=\"a\"",
        "-D1X",
        "-UX=1",
        "-DX=`id`",
        "--help",
        "-DX -fplugin=/tmp/p.so",
        "-x c++",
        "-xfortran",
        "-xc++x",
        "-xc -xcu",
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        accel_module *module = NULL;
        assert_status(accel_module_compile(c->null.device, SAXPY_SOURCE,
                                           options[i], &module),
                      ACCEL_ERR_INVALID_ARGUMENT);
        assert_null(module);
    }
    assert_int_equal(compile_case_runs(c), 0);
}

/* The size of 'a' in the source's language: 4 in C, 1 in C++. */
static const char char_size_source[] =
    "#include <accel/kernel.h>\n"
    "ACCEL_KERNEL(char_size, (uint32_t *, out))\n"
    "{\n"
    "    out[0] = (uint32_t)sizeof('a');\n"
    "}\n";

static uint32_t char_size_with(struct compile_case *c, const char *options)
{
    accel_module *module = NULL;
    accel_kernel *kernel = NULL;
    accel_ref out;
    uint32_t size = 0;

    if (accel_module_compile(c->null.device, char_size_source, options,
                             &module) != ACCEL_OK)
        fail_msg("%s\n%s", accel_last_error(), accel_last_build_log());
    assert_status(accel_kernel_get(module, "char_size", &kernel), ACCEL_OK);
    assert_status(accel_alloc(c->null.device, ACCEL_U32, 1, &out), ACCEL_OK);
    accel_arg args[] = {ACCEL_ARG_REF(out)};
    assert_status(accel_launch(c->null.stream, kernel, (accel_dim3){1, 1, 1},
                               (accel_dim3){1, 1, 1}, 0, args, 1),
                  ACCEL_OK);
    assert_status(accel_copy_to_host(c->null.stream, &size, out, 0, sizeof size),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->null.stream), ACCEL_OK);
    accel_free(c->null.device, out);
    accel_module_unload(module);
    return size;
}

/* C11 by default and with -xc, C++17 with -xc++; the last one given counts. */
static void test_language_option_picks_c_or_cxx(void **state)
{
    struct compile_case *c = *state;

    if (!COMPILE_HAVE_CXX) {
        print_message("skipped: no C++ compiler (for gcc, g++)\n");
        skip();
    }
    static const char template_source[] =
        "#include <accel/kernel.h>\n"
        "ACCEL_KERNEL_TEMPLATE((typename T), fill, (T *, out)) { out[0] = "
        "T(3); }\n"
        "ACCEL_KERNEL_INSTANCE(fill, (float), fill_f32, (float *, out))\n";
    accel_module *module = NULL;

    assert_int_equal(char_size_with(c, NULL), 4);
    assert_int_equal(char_size_with(c, "-xc"), 4);
    assert_int_equal(char_size_with(c, "-xc++"), 1);
    assert_int_equal(char_size_with(c, "-xc++ -xc"), 4);
    assert_status(
        accel_module_compile(c->null.device, template_source, NULL, &module),
        ACCEL_ERR_MODULE);
    assert_contains(accel_last_build_log(), "is C++");
    assert_status(
        accel_module_compile(c->null.device, template_source, "-xc++", &module),
        ACCEL_OK);
    accel_module_unload(module);
}

static void test_null_and_empty_arguments_are_invalid(void **state)
{
    struct compile_case *c = *state;
    accel_module *module = NULL;
    assert_status(accel_module_compile(NULL, SAXPY_SOURCE, NULL, &module),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_module_compile(c->null.device, NULL, NULL, &module),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_module_compile(c->null.device, "", NULL, &module),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_module_compile(c->null.device, SAXPY_SOURCE, NULL, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_missing_compiler_is_not_supported(void **state)
{
    struct compile_case *c = *state;
    setenv("ACCEL_CC", "/nonexistent/accel-test-cc", 1);
    accel_module *module = NULL;
    assert_status(accel_module_compile(c->null.device, SAXPY_SOURCE,
                                       "-DSAXPY_BIAS=0", &module),
                  ACCEL_ERR_NOT_SUPPORTED);
    assert_contains(accel_last_error(), "accel-test-cc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define CASE(test)                                                             \
    cmocka_unit_test_setup_teardown(test, compile_case_setup,                  \
                                    compile_case_teardown)
        CASE(test_saxpy_compiled_from_source_computes),
        CASE(test_options_define_macros_in_order),
        CASE(test_barrier_kernel_compiled_from_source_computes),
        CASE(test_kernel_using_libm_libgcc_and_libc_loads_and_computes),
        CASE(test_syntax_error_returns_the_whole_log_with_its_line),
        CASE(test_includes_outside_the_dialect_are_refused_before_compiling),
        CASE(test_options_other_than_defines_are_refused),
        CASE(test_language_option_picks_c_or_cxx),
        CASE(test_null_and_empty_arguments_are_invalid),
        CASE(test_missing_compiler_is_not_supported),
#undef CASE
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
