/*
 * Public structs that grow (sized.c): each starts with its uint32_t
 * struct_size, as accel.h's "structs that grow" says.
 */
#ifndef ACCEL_HOST_SIZED_H
#define ACCEL_HOST_SIZED_H

#include <stddef.h>

#include "accel/types.h"

/* The bytes up to the end of a struct's first field after struct_size. */
#define ACCEL__STRUCT_MIN(type, first_field)                                   \
    (offsetof(type, first_field) + sizeof(((type *)0)->first_field))

/*
 * Read a caller's struct `in` into `out` (the library's layout, `out_size`
 * bytes): the bytes its struct_size covers, zero past them; struct_size 0
 * means `out_size`. ACCEL_ERR_INVALID_ARGUMENT naming `what` for a size
 * under `min_size`.
 */
accel_status accel__struct_in(void *out, size_t out_size, const void *in,
                              size_t min_size, const char *what);
/*
 * Write the library's struct `full` (`full_size` bytes) into the caller's
 * `out` of `out_size` bytes: no byte past it, zero past what the library
 * knows, struct_size set to the bytes written. ACCEL_ERR_INVALID_ARGUMENT
 * naming `what` for an `out_size` under `min_size`.
 */
accel_status accel__struct_out(void *out, size_t out_size, const void *full,
                               size_t full_size, size_t min_size,
                               const char *what);

#endif /* ACCEL_HOST_SIZED_H */
