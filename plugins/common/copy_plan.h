/*
 * How a copy layout becomes driver copy calls.
 *
 * GPU drivers copy in three shapes: a run of bytes (1D), rows of a width
 * with a pitch on each side (2D: cuMemcpy2DAsync, hipMemcpy2DAsync), and
 * slices of such rows, each side's slice pitch given as a whole number of
 * its rows (3D: CUDA_MEMCPY3D's srcHeight, hipMemcpy3DParms' extent). A
 * struct accel_copy_layout is more general: a slice pitch need not be a
 * multiple of the pitch, and a pitch may pass what the driver takes. This
 * picks the cheapest shape that copies exactly the layout's bytes:
 *
 *  - contiguous (one row, or rows and slices that touch on both sides):
 *    one 1D copy;
 *  - one slice, or slices that are whole pitches apart on both sides
 *    (slice pitch == rows * pitch): one 2D copy of every row;
 *  - slices whose pitch is a whole number of rows, at least `rows`, on
 *    both sides: one 3D copy;
 *  - any other slices: one 2D copy per slice;
 *  - any pitch above the driver's limit: one 1D copy per row.
 *
 * A slice of one row is a row: slices of single rows are a 2D copy whose
 * pitch is the slice pitch.
 */
#ifndef ACCEL_PLUGIN_COMMON_COPY_PLAN_H
#define ACCEL_PLUGIN_COMMON_COPY_PLAN_H

#include <stdint.h>

#include <accel/driver.h>

enum accel__copy_shape {
    ACCEL__COPY_1D,        /* one copy of `width` bytes */
    ACCEL__COPY_2D,        /* one copy of `height` rows */
    ACCEL__COPY_3D,        /* one copy of `depth` slices of `height` rows */
    ACCEL__COPY_2D_SLICES, /* `depth` copies of `height` rows */
    ACCEL__COPY_1D_ROWS    /* `depth` * `height` copies of `width` bytes */
};

struct accel__copy_plan {
    enum accel__copy_shape shape;
    uint64_t width;  /* bytes of a row */
    uint64_t height; /* rows of a slice */
    uint64_t depth;  /* slices */
    uint64_t src_offset, dst_offset;
    uint64_t src_pitch, dst_pitch;             /* bytes from row to row */
    uint64_t src_slice_pitch, dst_slice_pitch; /* bytes from slice to slice */
    /* ACCEL__COPY_3D: each side's slice pitch in rows (CUDA's srcHeight). */
    uint64_t src_slice_rows, dst_slice_rows;
};

/*
 * Plan the copy of a validated layout (see struct accel_copy_layout).
 * `max_pitch` is the largest pitch the driver's 2D and 3D copies take;
 * 0 means no limit.
 */
void accel__copy_plan_make(const struct accel_copy_layout *layout,
                           uint64_t max_pitch, struct accel__copy_plan *out_plan);

/*
 * A driver's three copies, for accel__copy_plan_run. `copy` is the
 * caller's, passed through: the stream, the two sides, the direction. Each
 * returns ACCEL_OK or the error it recorded.
 */
struct accel__copy_calls {
    /* `bytes` contiguous bytes, at these offsets into each side. */
    accel_status (*copy_1d)(const void *copy, uint64_t src_offset,
                            uint64_t dst_offset, uint64_t bytes);
    /* The plan's `height` rows of `width` bytes, one slice's, starting at these offsets. */
    accel_status (*copy_2d)(const void *copy, const struct accel__copy_plan *plan,
                            uint64_t src_offset, uint64_t dst_offset);
    /* The whole plan in one call (ACCEL__COPY_3D), from the plan's offsets. */
    accel_status (*copy_3d)(const void *copy,
                            const struct accel__copy_plan *plan);
};

/*
 * Make the plan's copies through `calls`, in order, stopping at the first
 * that fails: its status is returned.
 */
accel_status accel__copy_plan_run(const struct accel__copy_plan *plan,
                                  const struct accel__copy_calls *calls,
                                  const void *copy);

#endif /* ACCEL_PLUGIN_COMMON_COPY_PLAN_H */
