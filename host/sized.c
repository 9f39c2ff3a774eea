/*
 * Public structs that grow: what a caller compiled against an older (or
 * newer) accel.h passes in or receives, by the struct_size it carries.
 */
#include <string.h>

#include "accel/accel.h"
#include "status.h"
#include "sized.h"

accel_status accel__struct_in(void *out, size_t out_size, const void *in,
                              size_t min_size, const char *what)
{
    memset(out, 0, out_size);
    uint32_t size;
    memcpy(&size, in, sizeof size);
    /* 0: the struct as first published with struct_size, this layout. */
    size_t covered = size == 0 ? out_size : size;
    if (covered < min_size)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: struct_size %u is less than %zu, the size "
                            "of its first field's end",
                            what, size, min_size);
    /* A newer caller's fields past ours are not ours to read. */
    memcpy(out, in, covered < out_size ? covered : out_size);
    return ACCEL_OK;
}

accel_status accel__struct_out(void *out, size_t out_size, const void *full,
                               size_t full_size, size_t min_size,
                               const char *what)
{
    if (out_size < min_size)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "%s: a struct of %zu bytes is less than %zu, the "
                            "size of its first field's end",
                            what, out_size, min_size);
    memset(out, 0, out_size);
    size_t written = out_size < full_size ? out_size : full_size;
    memcpy(out, full, written);
    uint32_t size = (uint32_t)written;
    memcpy(out, &size, sizeof size);
    return ACCEL_OK;
}

uint32_t accel_version(void)
{
    return ACCEL_VERSION;
}
