/*
 * The HIP plugin's code object reader (plugins/hip/hip_code_object.c): the
 * kernels' signatures from hipcc's real output of kernels/examples.cu (when
 * hipcc was found at build time) and from the fake runtime's images, the
 * bundle's targets, and that damaged images (flipped bytes, truncations,
 * absurd nesting) give fewer kernels, never a crash or a read out of
 * bounds (run under the sanitizers and valgrind by CI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hip_code_object.h"

struct file {
    unsigned char *data;
    size_t size;
};

static struct file read_file(const char *path)
{
    struct file f = {NULL, 0};
    FILE *stream = fopen(path, "rb");
    long size;

    assert_non_null(stream);
    assert_int_equal(fseek(stream, 0, SEEK_END), 0);
    size = ftell(stream);
    assert_true(size > 0);
    rewind(stream);
    f.data = malloc((size_t)size);
    assert_non_null(f.data);
    assert_int_equal(fread(f.data, 1, (size_t)size, stream), (size_t)size);
    fclose(stream);
    f.size = (size_t)size;
    return f;
}

static void assert_signature(const struct accel__hip_code_object *object,
                             const char *name, uint32_t count,
                             const uint32_t *sizes)
{
    const struct accel_kernel_signature *signature =
        accel__hip_code_object_signature(object, name);

    if (signature == NULL)
        fail_msg("kernel %s is not in the metadata", name);
    assert_int_equal(signature->param_count, count);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(signature->param_sizes[i], sizes[i]);
}

/* The example kernels' parameters, as kernels/examples.cu declares them. */
static void assert_examples(const struct accel__hip_code_object *object)
{
    static const uint32_t saxpy[] = {4, 4, 8, 8};
    static const uint32_t vadd[] = {4, 8, 8, 8};
    static const uint32_t transpose[] = {8, 8, 8, 8, 4, 4};
    static const uint32_t reduce[] = {8, 8, 8, 8};

    assert_signature(object, "empty", 0, NULL);
    assert_signature(object, "saxpy", 4, saxpy);
    assert_signature(object, "vadd", 4, vadd);
    assert_signature(object, "transpose_f32", 6, transpose);
    assert_signature(object, "reduce_sum_f32", 4, reduce);
    assert_null(accel__hip_code_object_signature(object, "no_such_kernel"));
}

static void
test_fake_bundle_gives_every_signature_without_hidden_arguments(void **state)
{
    struct file image = read_file(FAKE_HIP_EXAMPLES);
    struct accel__hip_code_object object;

    (void)state;
    assert_true(
        accel__hip_code_object_read(image.data, image.size, "gfx90a", &object));
    assert_int_equal(object.kind, ACCEL__HIP_IMAGE_BUNDLE);
    assert_string_equal(object.targets, "gfx90a:sramecc+:xnack-, gfx1100");
    assert_true(object.has_device_target);
    assert_examples(&object);
    accel__hip_code_object_free(&object);
    free(image.data);
}

static void
test_bundle_without_the_device_target_still_gives_signatures(void **state)
{
    struct file image = read_file(FAKE_HIP_EXAMPLES);
    struct accel__hip_code_object object;

    (void)state;
    assert_true(
        accel__hip_code_object_read(image.data, image.size, "gfx942", &object));
    assert_false(object.has_device_target);
    assert_string_equal(object.targets, "gfx90a:sramecc+:xnack-, gfx1100");
    assert_examples(&object);
    accel__hip_code_object_free(&object);
    free(image.data);
}

static void test_hipcc_code_object_gives_every_signature(void **state)
{
    struct accel__hip_code_object object;
    struct file image;

    (void)state;
    if (HIPCC_EXAMPLES[0] == '\0') {
        print_message(
            "hipcc was not found at build time: no real code object to read\n");
        skip();
    }
    image = read_file(HIPCC_EXAMPLES);
    assert_true(
        accel__hip_code_object_read(image.data, image.size, "gfx90a", &object));
    assert_int_equal(object.kind, ACCEL__HIP_IMAGE_BUNDLE);
    assert_string_equal(object.targets, "gfx90a");
    assert_true(object.has_device_target);
    assert_examples(&object);
    accel__hip_code_object_free(&object);
    free(image.data);
}

/* The first GPU entry of a bundle, as a bare code object. */
static struct file bundle_gpu_entry(const struct file *bundle)
{
    uint64_t count, offset, size, id_length;
    size_t at = 32;
    struct file entry = {NULL, 0};

    memcpy(&count, bundle->data + 24, 8);
    for (uint64_t i = 0; i < count; i++) {
        memcpy(&offset, bundle->data + at, 8);
        memcpy(&size, bundle->data + at + 8, 8);
        memcpy(&id_length, bundle->data + at + 16, 8);
        if (memmem(bundle->data + at + 24, id_length, "amdgcn", 6) != NULL &&
            size != 0) {
            entry.data = malloc(size);
            assert_non_null(entry.data);
            memcpy(entry.data, bundle->data + offset, size);
            entry.size = size;
            return entry;
        }
        at += 24 + id_length;
    }
    fail_msg("the bundle has no GPU entry");
    return entry;
}

static void test_bare_code_object_gives_every_signature(void **state)
{
    struct file image = read_file(FAKE_HIP_EXAMPLES);
    struct file elf = bundle_gpu_entry(&image);
    struct accel__hip_code_object object;

    (void)state;
    assert_true(
        accel__hip_code_object_read(elf.data, elf.size, "gfx90a", &object));
    assert_int_equal(object.kind, ACCEL__HIP_IMAGE_ELF);
    assert_examples(&object);
    accel__hip_code_object_free(&object);
    free(elf.data);
    free(image.data);
}

static void test_target_ids_give_their_processor(void **state)
{
    static const char *const cases[][2] = {
        {"gfx90a:sramecc+:xnack-", "gfx90a"},
        {"gfx1100", "gfx1100"},
        {"hipv4-amdgcn-amd-amdhsa--gfx942:xnack+", "gfx942"},
        {"hip-amdgcn-amd-amdhsa-gfx906", "gfx906"},
        {"amdgcn-amd-amdhsa--gfx908", "gfx908"},
        {"host-x86_64-unknown-linux", ""},
        {"", ""},
    };
    char out[16];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        accel__hip_target_processor(cases[i][0], out, sizeof(out));
        assert_string_equal(out, cases[i][1]);
    }
    accel__hip_target_processor("gfx90a:xnack-", out, 4);
    assert_string_equal(out, "gfx");
}

static void test_other_images_have_no_signatures(void **state)
{
    static const char garbage[] = "this is not a module image for any device\n";
    static const unsigned char compressed[] = "CCOB\x01\x00\x02\x00 compressed";
    struct accel__hip_code_object object;

    (void)state;
    assert_true(accel__hip_code_object_read(garbage, sizeof(garbage) - 1,
                                            "gfx90a", &object));
    assert_int_equal(object.kind, ACCEL__HIP_IMAGE_UNKNOWN);
    assert_int_equal(object.kind, 0);
    assert_int_equal(object.kernel_count, 0);
    accel__hip_code_object_free(&object);
    assert_true(accel__hip_code_object_read(compressed, sizeof(compressed),
                                            "gfx90a", &object));
    assert_int_equal(object.kind, ACCEL__HIP_IMAGE_COMPRESSED);
    assert_int_equal(object.kernel_count, 0);
    accel__hip_code_object_free(&object);
    assert_true(accel__hip_code_object_read(NULL, 0, "gfx90a", &object));
    assert_int_equal(object.kernel_count, 0);
}

/* Read a copy of exactly `size` bytes, so that the sanitizers see any read past it. */
static uint32_t read_copy(const unsigned char *bytes, size_t size)
{
    unsigned char *copy = malloc(size != 0 ? size : 1);
    struct accel__hip_code_object object;
    uint32_t kernels;

    assert_non_null(copy);
    memcpy(copy, bytes, size);
    assert_true(accel__hip_code_object_read(copy, size, "gfx90a", &object));
    kernels = object.kernel_count;
    for (uint32_t i = 0; i < kernels; i++)
        assert_true(object.kernels[i].signature.param_count <=
                    ACCEL_KERNEL_MAX_PARAMS);
    accel__hip_code_object_free(&object);
    free(copy);
    return kernels;
}

static void test_damaged_images_never_read_out_of_bounds(void **state)
{
    struct file images[2] = {read_file(FAKE_HIP_EXAMPLES), {NULL, 0}};
    unsigned seed = 12345;

    (void)state;
    images[1] = bundle_gpu_entry(&images[0]);
    for (int which = 0; which < 2; which++) {
        struct file *image = &images[which];
        unsigned char *damaged = malloc(image->size);

        assert_non_null(damaged);
        /* Every truncation of the code object, a sample of the bundle's. */
        for (size_t size = 0; size < image->size; size += which == 1 ? 1 : 97)
            read_copy(image->data, size);
        /* Bytes changed at random, a few at a time. */
        for (int round = 0; round < 3000; round++) {
            memcpy(damaged, image->data, image->size);
            for (int flips = 1 + round % 4; flips > 0; flips--) {
                seed = seed * 1103515245u + 12345u;
                damaged[(seed >> 8) % image->size] = (unsigned char)(seed >> 3);
            }
            read_copy(damaged, image->size);
        }
        free(damaged);
        free(image->data);
    }
}

/* An ELF code object whose note holds `payload` as its metadata. */
static size_t note_elf(const unsigned char *payload, size_t size,
                       unsigned char *out)
{
    size_t note = 64, note_size = 20 + ((size + 3) & ~(size_t)3),
           headers = note + note_size;
    uint64_t shoff = headers;
    uint16_t entry = 64, count = 2;
    uint32_t name_size = 7, desc_size = (uint32_t)size, type = 32, sht_note = 7;
    uint64_t offset = note, length = note_size;

    memset(out, 0, headers + 2 * 64);
    memcpy(out, "\177ELF\2\1\1", 7);
    memcpy(out + 0x28, &shoff, 8);
    memcpy(out + 0x3a, &entry, 2);
    memcpy(out + 0x3c, &count, 2);
    memcpy(out + note, &name_size, 4);
    memcpy(out + note + 4, &desc_size, 4);
    memcpy(out + note + 8, &type, 4);
    memcpy(out + note + 12, "AMDGPU", 7);
    memcpy(out + note + 20, payload, size);
    memcpy(out + headers + 64 + 4, &sht_note, 4);
    memcpy(out + headers + 64 + 0x18, &offset, 8);
    memcpy(out + headers + 64 + 0x20, &length, 8);
    return headers + 2 * 64;
}

static void test_absurd_metadata_is_refused_not_followed(void **state)
{
    enum { DEPTH = 5000 };
    static unsigned char payload[DEPTH + 64], elf[DEPTH + 512];
    /* {"amdhsa.kernels": [{".name": "k", ".x": [[[[...]]]]}]}: too deep to skip. */
    static const unsigned char head[] = {
        0x81, 0xae, 'a', 'm', 'd',  'h', 's',  'a',  '.',  'k',
        'e',  'r',  'n', 'e', 'l',  's', 0x91, 0x82, 0xa5, '.',
        'n',  'a',  'm', 'e', 0xa1, 'k', 0xa2, '.',  'x'};
    /* A map that claims 2^32 - 1 pairs in a dozen bytes. */
    static const unsigned char huge[] = {0xdf, 0xff, 0xff, 0xff,
                                         0xff, 0xa1, 'x',  0xc0};
    size_t size = sizeof(head);

    (void)state;
    memcpy(payload, head, sizeof(head));
    memset(payload + size, 0x91, DEPTH);
    size += DEPTH;
    payload[size++] = 0x90;
    assert_int_equal(read_copy(elf, note_elf(payload, size, elf)), 0);
    assert_int_equal(read_copy(elf, note_elf(huge, sizeof(huge), elf)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_fake_bundle_gives_every_signature_without_hidden_arguments),
        cmocka_unit_test(
            test_bundle_without_the_device_target_still_gives_signatures),
        cmocka_unit_test(test_hipcc_code_object_gives_every_signature),
        cmocka_unit_test(test_bare_code_object_gives_every_signature),
        cmocka_unit_test(test_target_ids_give_their_processor),
        cmocka_unit_test(test_other_images_have_no_signatures),
        cmocka_unit_test(test_damaged_images_never_read_out_of_bounds),
        cmocka_unit_test(test_absurd_metadata_is_refused_not_followed),
    };

    return cmocka_run_group_tests_name("hip-code-object", tests, NULL, NULL);
}
