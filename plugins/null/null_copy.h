/*
 * Copies as the null plugin's stream workers run them. Device memory is
 * host memory here, so every direction is the same walk over a layout.
 */
#ifndef ACCEL_NULL_COPY_H
#define ACCEL_NULL_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include <accel/driver.h>

/* One enqueued copy: both bases, the layout (offsets not yet applied). */
struct null_copy {
    void *dst;
    const void *src;
    struct accel_copy_layout layout;
    /*
     * Device-to-device copies may overlap (a pool moving a slice within a
     * page), where memcpy is undefined; host copies never do.
     */
    bool may_overlap;
    /*
     * A fill instead of a copy when non-zero: `pattern_size` bytes (1, 2, 4
     * or 8) of `pattern` repeated over row_bytes at dst; src is unused.
     */
    uint32_t pattern_size;
    uint8_t pattern[8];
};

/*
 * Run the copy now. The layout was validated by the host; a contiguous one
 * becomes a single memcpy, a 2D one a memcpy per row, a 3D one per slice.
 */
void accel__null_copy_run(const struct null_copy *copy);
/* How many bytes the copy moves: row_bytes times its rows and slices. */
uint64_t accel__null_copy_bytes(const struct null_copy *copy);

#endif /* ACCEL_NULL_COPY_H */
