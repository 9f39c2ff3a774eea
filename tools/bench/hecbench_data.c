/*
 * The real-code suite's shared side (hecbench.h): its points, each
 * program's first contents and reference result, made once per run, and
 * the comparison every side's result goes through.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hecbench_case.h"

struct bench_hecbench {
    struct bench_hecbench_data data[BENCH_HECBENCH_MAX];
};

static size_t program_count(void)
{
    size_t n = 0;

    while (hb_programs[n] != NULL)
        n++;
    return n;
}

const char *const *bench_hecbench_variants(void)
{
    static const char *names[BENCH_HECBENCH_MAX + 1];

    if (names[0] == NULL)
        for (size_t i = 0; i < program_count() && i < BENCH_HECBENCH_MAX; i++)
            names[i] = hb_programs[i]->name;
    return names;
}

const char *bench_hecbench_program_summary(const char *name)
{
    static char text[256];

    for (size_t i = 0; hb_programs[i] != NULL; i++)
        if (strcmp(hb_programs[i]->name, name) == 0) {
            snprintf(text, sizeof(text), "%s (%s; %s, %s)",
                     hb_programs[i]->covers, hb_programs[i]->size,
                     hb_programs[i]->origin, hb_programs[i]->license);
            return text;
        }
    return "";
}

int bench_hecbench_slot(const struct bench_point *point)
{
    for (int i = 0; hb_programs[i] != NULL && i < BENCH_HECBENCH_MAX; i++)
        if (strcmp(hb_programs[i]->name, point->variant) == 0)
            return i;
    return -1;
}

const struct hb_program *bench_hecbench_program(const struct bench_point *point)
{
    int slot = bench_hecbench_slot(point);

    return slot >= 0 ? hb_programs[slot] : NULL;
}

static void free_buffers(void *buffers[HB_MAX_BUFFERS])
{
    for (int i = 0; i < HB_MAX_BUFFERS; i++) {
        free(buffers[i]);
        buffers[i] = NULL;
    }
}

bool bench_hecbench_buffers(const struct hb_program *p,
                            void *const from[HB_MAX_BUFFERS],
                            void *out[HB_MAX_BUFFERS])
{
    memset(out, 0, HB_MAX_BUFFERS * sizeof(out[0]));
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        out[i] = bench_alloc_touched(p->buffers[i].bytes);
        if (out[i] == NULL) {
            free_buffers(out);
            return false;
        }
        if (from != NULL)
            memcpy(out[i], from[i], p->buffers[i].bytes);
    }
    return true;
}

void bench_hecbench_buffers_free(void *buffers[HB_MAX_BUFFERS])
{
    free_buffers(buffers);
}

void bench_hecbench_restore(const struct hb_program *p,
                            const struct bench_hecbench_data *d,
                            void *const buffers[HB_MAX_BUFFERS])
{
    for (uint32_t i = 0; i < p->buffer_count; i++)
        if (p->buffers[i].reset)
            memcpy(buffers[i], d->initial[i], p->buffers[i].bytes);
}

const struct bench_hecbench_data *bench_hecbench_data(struct bench_run *run)
{
    struct bench_env *env = run->env;
    const struct hb_program *p = bench_hecbench_program(run->point);
    struct bench_hecbench_data *d;

    if (p == NULL) {
        bench_fail(run, "no such program");
        return NULL;
    }
    if (env->hecbench == NULL &&
        (env->hecbench = calloc(1, sizeof(*env->hecbench))) == NULL) {
        bench_fail(run, "out of host memory");
        return NULL;
    }
    d = &env->hecbench->data[bench_hecbench_slot(run->point)];
    if (d->reference[0] != NULL)
        return d;
    if (!bench_hecbench_buffers(p, NULL, d->initial)) {
        bench_fail(run, "out of host memory for %s's buffers", p->name);
        return NULL;
    }
    p->init(d->initial);
    if (!bench_hecbench_buffers(p, d->initial, d->reference)) {
        free_buffers(d->initial);
        bench_fail(run, "out of host memory for %s's reference", p->name);
        return NULL;
    }
    /* The reference of one step, from the first contents. */
    (p->reference != NULL ? p->reference : p->openmp)(d->reference);
    return d;
}

void bench_hecbench_free(struct bench_env *env)
{
    if (env->hecbench == NULL)
        return;
    for (int i = 0; i < BENCH_HECBENCH_MAX; i++) {
        free_buffers(env->hecbench->data[i].initial);
        free_buffers(env->hecbench->data[i].reference);
    }
    free(env->hecbench);
    env->hecbench = NULL;
}

int bench_hecbench_kernel_slot(const char *const names[BENCH_HECBENCH_KERNELS],
                               const char *name, bool *out_found)
{
    for (int i = 0; i < BENCH_HECBENCH_KERNELS; i++) {
        *out_found = names[i] != NULL;
        if (names[i] == NULL || strcmp(names[i], name) == 0)
            return i;
    }
    return -1;
}

bool bench_hecbench_check_outputs(struct bench_run *run,
                                  const struct hb_program *p,
                                  const struct bench_hecbench_data *d,
                                  bench_hecbench_read_fn read, void *context)
{
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        void *got;
        bool ok;

        if (!p->buffers[i].check)
            continue;
        if ((got = malloc(p->buffers[i].bytes)) == NULL)
            return bench_fail(run, "out of host memory");
        ok = read(context, i, got) && bench_hecbench_check(run, p, d, i, got);
        free(got);
        if (!ok)
            return false;
    }
    return true;
}

static double element(enum hb_type type, const void *base, uint64_t i)
{
    switch (type) {
    case HB_F32:
        return ((const float *)base)[i];
    case HB_F64:
        return ((const double *)base)[i];
    case HB_I32:
        return ((const int32_t *)base)[i];
    default:
        return ((const uint32_t *)base)[i];
    }
}

static uint64_t element_size(enum hb_type type)
{
    return type == HB_F64 ? 8 : 4;
}

bool bench_hecbench_check(struct bench_run *run, const struct hb_program *p,
                          const struct bench_hecbench_data *d, uint32_t buffer,
                          const void *got)
{
    const struct hb_buffer *b = &p->buffers[buffer];
    uint64_t count = b->bytes / element_size(b->type);
    bool exact = b->type == HB_I32 || b->type == HB_U32 || p->tolerance == 0;

    for (uint64_t i = 0; i < count; i++) {
        double have = element(b->type, got, i),
               want = element(b->type, d->reference[buffer], i);
        double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;

        if (exact ? have != want : !(fabs(have - want) <= p->tolerance * scale))
            return bench_fail(run, "%s: %s's %s[%llu] is %.9g, expected %.9g",
                              p->name, run->impl, b->name,
                              (unsigned long long)i, have, want);
    }
    return true;
}
