/*
 * accel.h from a C++ host program: the argument macros (lvalues, rvalues,
 * the typed forms, bytes), args copied into a container and launched from
 * there, accel_copy_in/accel_copy_out as templates with C's type rules, and
 * ACCEL_ELEM_TYPE_OF. Built with -std=c++17 -Wall -Wextra -Werror -pedantic.
 */
#include <accel/accel.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

static_assert(ACCEL_ELEM_TYPE_OF((float *)nullptr) == ACCEL_F32, "float");
static_assert(ACCEL_ELEM_TYPE_OF((const double *)nullptr) == ACCEL_F64,
              "const double");
static_assert(ACCEL_ELEM_TYPE_OF((char *)nullptr) == ACCEL_BYTE, "char");
static_assert(ACCEL_ELEM_TYPE_OF((uint8_t *)nullptr) == ACCEL_U8, "uint8_t");
static_assert(ACCEL_ELEM_TYPE_OF((int8_t *)nullptr) == ACCEL_I8, "int8_t");
static_assert(ACCEL_ELEM_TYPE_OF((long long *)nullptr) == ACCEL_I64,
              "long long");
static_assert(ACCEL_ELEM_TYPE_OF((int64_t *)nullptr) == ACCEL_I64, "int64_t");
static_assert(ACCEL_ELEM_TYPE_OF((size_t *)nullptr) == ACCEL_U64, "size_t");
static_assert(ACCEL_ELEM_TYPE_OF((unsigned short *)nullptr) == ACCEL_U16,
              "unsigned short");
static_assert(ACCEL_ELEM_TYPE_OF((accel_bf16 *)nullptr) == ACCEL_BF16, "bf16");

static int failures;

static void expect(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s (%s)\n", what, accel_last_error());
        failures++;
    }
}

static void expect_status(accel_status got, accel_status want, const char *what)
{
    if (got != want) {
        std::fprintf(stderr, "FAILED: %s: %s, expected %s (%s)\n", what,
                     accel_status_name(got), accel_status_name(want),
                     accel_last_error());
        failures++;
    }
}

enum { N = 1000 };

/* Each element of `data` after the adds, read back through accel_copy_out. */
static bool all_equal(accel_stream *stream, accel_ref data, uint32_t want)
{
    std::vector<uint32_t> out(N, 0xdeadbeefu);
    if (accel_copy_out(stream, out.data(), data, N) != ACCEL_OK ||
        accel_stream_sync(stream) != ACCEL_OK)
        return false;
    for (uint32_t v : out)
        if (v != want)
            return false;
    return true;
}

/* Args made in a function and returned by value: the inline forms carry
 * their bytes with them. */
static std::vector<accel_arg> add_args(accel_ref data, uint32_t value)
{
    return {ACCEL_ARG_U32(N), ACCEL_ARG_REF(data), ACCEL_ARG_VALUE(value + 0u)};
}

int main()
{
    accel_host_options options = accel_host_options_default();
    options.plugin_path = NULL_PLUGIN_PATH;
    accel_host *host = nullptr;
    accel_device *device = nullptr;
    accel_stream *stream = nullptr;
    accel_module *module = nullptr;
    accel_kernel *add = nullptr;
    accel_ref data = {};
    if (accel_host_create(&options, &host) != ACCEL_OK ||
        accel_device_open(host, "null", 0, &device) != ACCEL_OK ||
        accel_stream_create(device, &stream) != ACCEL_OK ||
        accel_module_load_file(device, TESTING_CPU_IMAGE, &module) != ACCEL_OK ||
        accel_kernel_get(module, "add_u32", &add) != ACCEL_OK ||
        accel_alloc(device, ACCEL_U32, N, &data) != ACCEL_OK) {
        std::fprintf(stderr, "setup failed: %s\n", accel_last_error());
        return 1;
    }
    const accel_dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};

    const std::vector<uint32_t> zeros(N, 0);
    expect_status(accel_copy_in(stream, data, zeros.data(), N), ACCEL_OK,
                  "accel_copy_in from a const vector");

    /* The C forms' spelling: an lvalue, a ref, an lvalue. */
    uint32_t n = N, three = 3;
    accel_arg lvalues[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                           ACCEL_ARG_VALUE(three)};
    expect_status(accel_launch(stream, add, grid, block, 0, lvalues, 3),
                  ACCEL_OK, "launch with lvalue arguments");

    /* Rvalues and typed forms, copied around before the launch. */
    std::vector<accel_arg> moved = add_args(data, 4);
    std::vector<accel_arg> copied = moved;
    moved.clear();
    expect_status(accel_launch(stream, add, grid, block, 0, copied.data(), 3),
                  ACCEL_OK, "launch with args returned from a function");

    accel_arg typed[] = {ACCEL_ARG_U32(n), ACCEL_ARG_REF(data),
                         ACCEL_ARG_U32(2.0 * three)};
    expect_status(accel_launch(stream, add, grid, block, 0, typed, 3),
                  ACCEL_OK, "launch with typed arguments");

    uint32_t five = 5;
    accel_arg bytes[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                         ACCEL_ARG_BYTES(&five, sizeof five, alignof(uint32_t))};
    expect_status(accel_launch(stream, add, grid, block, 0, bytes, 3),
                  ACCEL_OK, "launch with bytes");
    expect(all_equal(stream, data, 3 + 4 + 6 + 5), "the sums");

    /* An inline value of the wrong size is caught before anything runs. */
    accel_arg wide[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                        ACCEL_ARG_U64(1)};
    expect_status(accel_launch(stream, add, grid, block, 0, wide, 3),
                  ACCEL_ERR_INVALID_ARGUMENT, "an 8-byte value for 4 bytes");
    accel_arg oversized[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_REF(data),
                             ACCEL_ARG_U32(1)};
    oversized[2].size = ACCEL_ARG_INLINE_MAX + 1;
    expect_status(accel_launch(stream, add, grid, block, 0, oversized, 3),
                  ACCEL_ERR_INVALID_ARGUMENT, "an inline value over 32 bytes");
    /* A value where the kernel takes a pointer. */
    accel_arg value_for_ref[] = {ACCEL_ARG_VALUE(n), ACCEL_ARG_U64(0),
                                 ACCEL_ARG_U32(1)};
    accel_status status =
        accel_launch(stream, add, grid, block, 0, value_for_ref, 3);
    expect(status == ACCEL_ERR_TYPE_MISMATCH ||
               status == ACCEL_ERR_INVALID_ARGUMENT,
           "an inline value for a pointer parameter is refused");
    expect(all_equal(stream, data, 18), "refused launches ran nothing");

    /* accel_copy_in refuses a host type that is not the ref's. */
    std::vector<float> floats(N, 1.0f);
    expect_status(accel_copy_in(stream, data, floats.data(), N),
                  ACCEL_ERR_TYPE_MISMATCH, "floats into a U32 ref");

    accel_free(device, data);
    accel_module_unload(module);
    accel_stream_destroy(stream);
    accel_device_close(device);
    accel_host_destroy(host);
    if (failures == 0)
        std::printf("ok\n");
    return failures == 0 ? 0 : 1;
}
