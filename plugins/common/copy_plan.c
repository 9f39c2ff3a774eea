/*
 * How a copy layout becomes driver copy calls.
 *
 * Every step below only merges what the layout already makes adjacent, so
 * a plan never touches a byte the layout does not name. Products are formed
 * only where the host's validation bounds them (a slice is within its
 * allocation, so rows * pitch cannot overflow), and equalities of a product
 * are tested by division.
 */
#include "copy_plan.h"

#include <stdbool.h>

/* Whether `slice_pitch` is exactly `rows` pitches. */
static bool copy_slices_are_rows(uint64_t slice_pitch, uint64_t pitch,
                                 uint64_t rows)
{
    return pitch != 0 && slice_pitch % pitch == 0 && slice_pitch / pitch == rows;
}

/*
 * The layout's own numbers, with what it says is ignored made explicit:
 * no pitch for one row, no slice pitch for one slice.
 */
static void copy_plan_start(const struct accel_copy_layout *layout,
                            struct accel__copy_plan *plan)
{
    *plan = (struct accel__copy_plan){
        .shape = ACCEL__COPY_2D,
        .width = layout->row_bytes,
        .height = layout->rows != 0 ? layout->rows : 1,
        .depth = layout->depth != 0 ? layout->depth : 1,
        .src_offset = layout->src_offset,
        .dst_offset = layout->dst_offset,
        .src_pitch = layout->src_pitch,
        .dst_pitch = layout->dst_pitch,
        .src_slice_pitch = layout->src_slice_pitch,
        .dst_slice_pitch = layout->dst_slice_pitch,
    };
    if (plan->height == 1)
        plan->src_pitch = plan->dst_pitch = plan->width;
    if (plan->depth == 1) {
        plan->src_slice_pitch = plan->height * plan->src_pitch;
        plan->dst_slice_pitch = plan->height * plan->dst_pitch;
    }
}

/* Slices whose rows touch on both sides are single rows: a 2D copy. */
static void copy_plan_slices_as_rows(struct accel__copy_plan *plan)
{
    if (plan->depth == 1 || plan->src_pitch != plan->width ||
        plan->dst_pitch != plan->width)
        return;
    plan->width *= plan->height;
    plan->height = plan->depth;
    plan->depth = 1;
    plan->src_pitch = plan->src_slice_pitch;
    plan->dst_pitch = plan->dst_slice_pitch;
    plan->src_slice_pitch = plan->height * plan->src_pitch;
    plan->dst_slice_pitch = plan->height * plan->dst_pitch;
}

/* Slices exactly `height` pitches apart on both sides continue the rows. */
static void copy_plan_merge_slices(struct accel__copy_plan *plan)
{
    if (plan->depth == 1 ||
        !copy_slices_are_rows(plan->src_slice_pitch, plan->src_pitch,
                              plan->height) ||
        !copy_slices_are_rows(plan->dst_slice_pitch, plan->dst_pitch,
                              plan->height))
        return;
    plan->height *= plan->depth;
    plan->depth = 1;
    plan->src_slice_pitch = plan->height * plan->src_pitch;
    plan->dst_slice_pitch = plan->height * plan->dst_pitch;
}

/* Rows that touch on both sides are one run. */
static void copy_plan_merge_rows(struct accel__copy_plan *plan)
{
    if (plan->depth != 1 || plan->src_pitch != plan->width ||
        plan->dst_pitch != plan->width)
        return;
    plan->width *= plan->height;
    plan->height = 1;
    plan->src_pitch = plan->dst_pitch = plan->width;
    plan->src_slice_pitch = plan->dst_slice_pitch = plan->width;
}

/* What a 3D copy can say: each side's slice pitch in whole rows, no fewer than height. */
static bool copy_plan_fits_3d(struct accel__copy_plan *plan)
{
    if (plan->src_pitch == 0 || plan->dst_pitch == 0 ||
        plan->src_slice_pitch % plan->src_pitch != 0 ||
        plan->dst_slice_pitch % plan->dst_pitch != 0)
        return false;
    plan->src_slice_rows = plan->src_slice_pitch / plan->src_pitch;
    plan->dst_slice_rows = plan->dst_slice_pitch / plan->dst_pitch;
    return plan->src_slice_rows >= plan->height &&
           plan->dst_slice_rows >= plan->height;
}

void accel__copy_plan_make(const struct accel_copy_layout *layout,
                           uint64_t max_pitch, struct accel__copy_plan *out_plan)
{
    struct accel__copy_plan plan;

    copy_plan_start(layout, &plan);
    copy_plan_slices_as_rows(&plan);
    copy_plan_merge_slices(&plan);
    copy_plan_merge_rows(&plan);
    if (plan.height == 1 && plan.depth == 1)
        plan.shape = ACCEL__COPY_1D;
    else if (plan.depth == 1)
        plan.shape = ACCEL__COPY_2D;
    else if (copy_plan_fits_3d(&plan))
        plan.shape = ACCEL__COPY_3D;
    else
        plan.shape = ACCEL__COPY_2D_SLICES;
    if (plan.shape != ACCEL__COPY_1D && max_pitch != 0 &&
        (plan.src_pitch > max_pitch || plan.dst_pitch > max_pitch))
        plan.shape = ACCEL__COPY_1D_ROWS;
    *out_plan = plan;
}

/* The offsets of row `row` of slice `slice` on each side. */
static void copy_plan_offsets(const struct accel__copy_plan *plan, uint64_t slice,
                              uint64_t row, uint64_t *out_src, uint64_t *out_dst)
{
    *out_src = plan->src_offset + slice * plan->src_slice_pitch +
               row * plan->src_pitch;
    *out_dst = plan->dst_offset + slice * plan->dst_slice_pitch +
               row * plan->dst_pitch;
}

/* One 2D copy per slice. */
static accel_status copy_plan_run_slices(const struct accel__copy_plan *plan,
                                         const struct accel__copy_calls *calls,
                                         const void *copy)
{
    accel_status status = ACCEL_OK;
    uint64_t src_offset, dst_offset;

    for (uint64_t z = 0; z < plan->depth && status == ACCEL_OK; z++) {
        copy_plan_offsets(plan, z, 0, &src_offset, &dst_offset);
        status = calls->copy_2d(copy, plan, src_offset, dst_offset);
    }
    return status;
}

/* Every row on its own: for pitches the driver's 2D and 3D copies refuse. */
static accel_status copy_plan_run_rows(const struct accel__copy_plan *plan,
                                       const struct accel__copy_calls *calls,
                                       const void *copy)
{
    accel_status status = ACCEL_OK;
    uint64_t src_offset, dst_offset;

    for (uint64_t z = 0; z < plan->depth && status == ACCEL_OK; z++) {
        for (uint64_t y = 0; y < plan->height && status == ACCEL_OK; y++) {
            copy_plan_offsets(plan, z, y, &src_offset, &dst_offset);
            status = calls->copy_1d(copy, src_offset, dst_offset, plan->width);
        }
    }
    return status;
}

accel_status accel__copy_plan_run(const struct accel__copy_plan *plan,
                                  const struct accel__copy_calls *calls,
                                  const void *copy)
{
    switch (plan->shape) {
    case ACCEL__COPY_1D:
        return calls->copy_1d(copy, plan->src_offset, plan->dst_offset,
                              plan->width);
    case ACCEL__COPY_2D:
        return calls->copy_2d(copy, plan, plan->src_offset, plan->dst_offset);
    case ACCEL__COPY_3D:
        return calls->copy_3d(copy, plan);
    case ACCEL__COPY_2D_SLICES:
        return copy_plan_run_slices(plan, calls, copy);
    case ACCEL__COPY_1D_ROWS:
        return copy_plan_run_rows(plan, calls, copy);
    }
    return ACCEL_ERR_COPY;
}
