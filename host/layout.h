/*
 * Copy layouts (layout.c): validation and the plugin's normalized form.
 */
#ifndef ACCEL_HOST_LAYOUT_H
#define ACCEL_HOST_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/types.h"

/*
 * Check a layout and put it in the form a plugin receives: rows and depth
 * at least 1, every extent inside [0, src_limit) and [0, dst_limit) without
 * overflow, contiguous rows and slices folded into one row.
 */
accel_status accel__layout_normalize(const struct accel_copy_layout *layout,
                                     uint64_t src_limit, uint64_t dst_limit,
                                     struct accel_copy_layout *out_layout);
/* One row of `bytes`, already in normalized form. */
struct accel_copy_layout
accel__layout_linear(uint64_t src_offset, uint64_t dst_offset, uint64_t bytes);
/* The bytes a normalized layout moves. */
static inline uint64_t accel__layout_bytes(const struct accel_copy_layout *layout)
{
    return layout->row_bytes * layout->rows * layout->depth;
}
/* The bytes [first, end) a normalized layout touches on each side. */
void accel__layout_span(const struct accel_copy_layout *layout, bool source,
                        uint64_t *out_first, uint64_t *out_end);

#endif /* ACCEL_HOST_LAYOUT_H */
