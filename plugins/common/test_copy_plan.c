/*
 * copy_plan.h against a reference: for every small layout the host would
 * pass (validated, with pitches and slice pitches of every kind), executing
 * the plan's driver calls on memory (as a driver would) moves exactly the
 * bytes the layout names, and uses the cheapest shape that can.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_plan.h"

#define MEMORY 4096

static unsigned char src[MEMORY], dst[MEMORY], want[MEMORY];
static unsigned long failures, plans, shapes[5];

/* What a driver does with each of the three calls, on memory. */
static accel_status run_1d(const void *unused, uint64_t s, uint64_t d,
                           uint64_t bytes)
{
    (void)unused;
    memcpy(dst + d, src + s, bytes);
    return ACCEL_OK;
}

/* `height` rows from a slice's start. */
static accel_status run_2d(const void *unused, const struct accel__copy_plan *p,
                           uint64_t s, uint64_t d)
{
    (void)unused;
    for (uint64_t y = 0; y < p->height; y++)
        memcpy(dst + d + y * p->dst_pitch, src + s + y * p->src_pitch, p->width);
    return ACCEL_OK;
}

/* CUDA_MEMCPY3D: slice z starts z * srcHeight * srcPitch in. */
static accel_status run_3d(const void *unused, const struct accel__copy_plan *p)
{
    for (uint64_t z = 0; z < p->depth; z++)
        run_2d(unused, p, p->src_offset + z * p->src_slice_rows * p->src_pitch,
               p->dst_offset + z * p->dst_slice_rows * p->dst_pitch);
    return ACCEL_OK;
}

static const struct accel__copy_calls run_calls = {run_1d, run_2d, run_3d};

static void run_reference(const struct accel_copy_layout *l)
{
    for (uint64_t z = 0; z < l->depth; z++) {
        for (uint64_t y = 0; y < l->rows; y++)
            memcpy(
                want + l->dst_offset + z * l->dst_slice_pitch + y * l->dst_pitch,
                src + l->src_offset + z * l->src_slice_pitch + y * l->src_pitch,
                l->row_bytes);
    }
}

static uint64_t reach(const struct accel_copy_layout *l, uint64_t offset,
                      uint64_t pitch, uint64_t slice)
{
    return offset + (l->depth - 1) * slice + (l->rows - 1) * pitch + l->row_bytes;
}

static void check(const struct accel_copy_layout *l, uint64_t max_pitch)
{
    struct accel__copy_plan plan;

    if (reach(l, l->src_offset, l->src_pitch, l->src_slice_pitch) > MEMORY ||
        reach(l, l->dst_offset, l->dst_pitch, l->dst_slice_pitch) > MEMORY)
        return;
    memset(dst, 0, MEMORY);
    memset(want, 0, MEMORY);
    run_reference(l);
    accel__copy_plan_make(l, max_pitch, &plan);
    accel__copy_plan_run(&plan, &run_calls, NULL);
    plans++;
    shapes[plan.shape]++;
    if (memcmp(dst, want, MEMORY) != 0 ||
        (max_pitch != 0 && plan.shape != ACCEL__COPY_1D &&
         plan.shape != ACCEL__COPY_1D_ROWS &&
         (plan.src_pitch > max_pitch || plan.dst_pitch > max_pitch))) {
        if (failures++ < 10)
            printf("wrong: row_bytes %llu rows %llu depth %llu pitches "
                   "%llu/%llu slices "
                   "%llu/%llu max %llu -> shape %d\n",
                   (unsigned long long)l->row_bytes, (unsigned long long)l->rows,
                   (unsigned long long)l->depth, (unsigned long long)l->src_pitch,
                   (unsigned long long)l->dst_pitch,
                   (unsigned long long)l->src_slice_pitch,
                   (unsigned long long)l->dst_slice_pitch,
                   (unsigned long long)max_pitch, plan.shape);
    }
}

/* Contiguous layouts must be one call; slice pitches in rows, one 3D call. */
static int check_cheapest(void)
{
    struct accel_copy_layout contiguous = {0, 0, 8, 4, 8, 8, 3, 32, 32};
    struct accel_copy_layout whole_rows = {0,  0, 8,      4,     16,
                                           10, 3, 16 * 5, 10 * 6};
    struct accel__copy_plan plan;
    int wrong = 0;

    accel__copy_plan_make(&contiguous, 0, &plan);
    wrong += plan.shape != ACCEL__COPY_1D || plan.width != 96;
    accel__copy_plan_make(&whole_rows, 0, &plan);
    wrong += plan.shape != ACCEL__COPY_3D || plan.src_slice_rows != 5 ||
             plan.dst_slice_rows != 6;
    if (wrong != 0)
        printf("a layout was not planned as its cheapest shape\n");
    return wrong;
}

int main(void)
{
    static const uint64_t widths[] = {1, 3, 8};
    static const uint64_t counts[] = {1, 2, 3};
    static const uint64_t extras[] = {0, 1, 5, 8};
    static const uint64_t slice_extras[] = {0, 1, 3, 16};
    static const uint64_t max_pitches[] = {0, 9};

    for (size_t i = 0; i < MEMORY; i++)
        src[i] = (unsigned char)(i * 37u + 11u);
    for (size_t w = 0; w < 3; w++)
        for (size_t r = 0; r < 3; r++)
            for (size_t d = 0; d < 3; d++)
                for (size_t sp = 0; sp < 4; sp++)
                    for (size_t dp = 0; dp < 4; dp++)
                        for (size_t ss = 0; ss < 4; ss++)
                            for (size_t ds = 0; ds < 4; ds++)
                                for (size_t m = 0; m < 2; m++) {
                                    uint64_t rb = widths[w], rows = counts[r];
                                    struct accel_copy_layout l = {
                                        .src_offset = 3,
                                        .dst_offset = 7,
                                        .row_bytes = rb,
                                        .rows = rows,
                                        .depth = counts[d],
                                        .src_pitch = rb + extras[sp],
                                        .dst_pitch = rb + extras[dp]};

                                    /* Slices kept apart, as the host validates. */
                                    l.src_slice_pitch = (rows - 1) * l.src_pitch +
                                                        rb + slice_extras[ss];
                                    l.dst_slice_pitch = (rows - 1) * l.dst_pitch +
                                                        rb + slice_extras[ds];
                                    check(&l, max_pitches[m]);
                                    /* And slice pitches a whole number of rows. */
                                    l.src_slice_pitch = l.src_pitch * (rows + ss);
                                    l.dst_slice_pitch = l.dst_pitch * (rows + ds);
                                    check(&l, max_pitches[m]);
                                }
    printf("%lu layouts: %lu 1D, %lu 2D, %lu 3D, %lu 2D per slice, %lu 1D per "
           "row\n",
           plans, shapes[0], shapes[1], shapes[2], shapes[3], shapes[4]);
    return failures == 0 && check_cheapest() == 0 && shapes[2] != 0 &&
                   shapes[3] != 0 && shapes[4] != 0
               ? 0
               : 1;
}
