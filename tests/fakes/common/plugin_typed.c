/*
 * Typed signatures through a GPU plugin over its fake driver: the plugin
 * knows its kernels' parameter sizes at most, so the types come from the
 * bundle's signatures entry (accel-pack signatures of the CPU image the
 * fake runs), and accel_launch refuses what they refuse on the CPU plugin.
 */
#include "plugin_case.h"

#include <stdio.h>

/* typed_params (kernels/testing.cu): its pointers, in order, and their types. */
static const accel_elem_type typed_pointers[] = {
    ACCEL_F32, ACCEL_F64, ACCEL_I8,  ACCEL_I16, ACCEL_I32,
    ACCEL_I64, ACCEL_U8,  ACCEL_U16, ACCEL_U32, ACCEL_U64,
};
enum { POINTERS = 10, RAW = 10, SCALE = 11, COUNT = 12, SUM = 13, ARGS = 14 };

struct typed_launch {
    struct plugin_case *c;
    accel_kernel *kernel;
    accel_ref refs[ACCEL_ELEM_TYPE_COUNT];
    float scale;
    uint32_t n;
    accel_arg args[ARGS];
};

/* Arguments that fit: each pointer the ref of its own type. */
static void typed_args(struct typed_launch *t, float scale, uint32_t n)
{
    for (int i = 0; i < POINTERS; i++)
        t->args[i] = ACCEL_ARG_REF(t->refs[typed_pointers[i]]);
    t->args[RAW] = ACCEL_ARG_REF(t->refs[ACCEL_BYTE]);
    t->scale = scale;
    t->n = n;
    t->args[SCALE] = ACCEL_ARG_VALUE(t->scale);
    t->args[COUNT] = ACCEL_ARG_VALUE(t->n);
    t->args[SUM] = ACCEL_ARG_REF(t->refs[ACCEL_F64]);
}

static accel_status typed_launch(struct typed_launch *t)
{
    return accel_launch(t->c->stream, t->kernel, (accel_dim3){1, 1, 1},
                        (accel_dim3){1, 1, 1}, 0, t->args, ARGS);
}

static void typed_open(struct typed_launch *t, struct plugin_case *c,
                       const char *bundle, accel_module **out_module)
{
    t->c = c;
    *out_module = plugin_case_load_module(c, bundle);
    assert_status(accel_kernel_get(*out_module, "typed_params", &t->kernel),
                  ACCEL_OK);
    for (int type = 0; type < ACCEL_ELEM_TYPE_COUNT; type++)
        assert_status(
            accel_alloc(c->device, (accel_elem_type)type, 1, &t->refs[type]),
            ACCEL_OK);
}

static void typed_close(struct typed_launch *t, accel_module *module)
{
    assert_status(accel_stream_sync(t->c->stream), ACCEL_OK);
    for (int type = 0; type < ACCEL_ELEM_TYPE_COUNT; type++)
        assert_status(accel_free(t->c->device, t->refs[type]), ACCEL_OK);
    accel_module_unload(module);
}

/* Every pointer given a ref of every other element type: each refused. */
static void check_every_ref_mismatch(struct typed_launch *t)
{
    char expected[128];
    for (int p = 0; p < POINTERS; p++) {
        for (int type = 1; type < ACCEL_ELEM_TYPE_COUNT; type++) {
            if ((accel_elem_type)type == typed_pointers[p])
                continue;
            typed_args(t, 0, 0);
            t->args[p] = ACCEL_ARG_REF(t->refs[type]);
            assert_status(typed_launch(t), ACCEL_ERR_TYPE_MISMATCH);
            snprintf(
                expected,
                sizeof expected, "argument %d (%s) of 'typed_params' points to %s; the ref holds %s",
                p, accel_elem_type_name(typed_pointers[p]),
                accel_elem_type_name(typed_pointers[p]),
                accel_elem_type_name((accel_elem_type)type));
            assert_contains(accel_last_error(), expected);
        }
    }
}

void plugin_case_check_typed_signatures(struct plugin_case *c,
                                        const char *typed_bundle,
                                        const char *untyped_bundle)
{
    struct typed_launch t = {0};
    accel_module *module = NULL;
    double sum = 0;

    typed_open(&t, c, typed_bundle, &module);
    check_every_ref_mismatch(&t);
    typed_args(&t, 0, 0);
    t.args[3] = ACCEL_ARG_U64(0x1000);
    assert_status(typed_launch(&t), ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(),
                    "argument 3 (i16) of 'typed_params' is a pointer to "
                    "i16: pass a ref, not a value");
    typed_args(&t, 0, 0);
    t.args[SCALE] = ACCEL_ARG_REF(t.refs[ACCEL_F32]);
    assert_status(typed_launch(&t), ACCEL_ERR_TYPE_MISMATCH);
    assert_contains(accel_last_error(),
                    "argument 11 (scale) of 'typed_params' is a value "
                    "(f32, 4 bytes)");
    /* What fits runs, on the fake's device. */
    typed_args(&t, 0.5f, 9);
    assert_status(typed_launch(&t), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, &sum, t.refs[ACCEL_F64], 1),
                  ACCEL_OK);
    typed_close(&t, module);
    assert_true(sum == 9.5);

    /* The same image without the entry: sizes only, as before. */
    typed_open(&t, c, untyped_bundle, &module);
    typed_args(&t, 0.25f, 3);
    t.args[0] = ACCEL_ARG_REF(t.refs[ACCEL_I32]);
    assert_status(typed_launch(&t), ACCEL_OK);
    assert_status(accel_copy_out(c->stream, &sum, t.refs[ACCEL_F64], 1),
                  ACCEL_OK);
    typed_close(&t, module);
    assert_true(sum == 3.25);
}
