/*
 * Backend selection (select.c): the items of ACCEL_BACKEND or the
 * host's options.
 */
#ifndef ACCEL_HOST_SELECT_H
#define ACCEL_HOST_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

/* One item of a backend selection: name[:index]. */
struct accel__backend_item {
    char name[ACCEL_PLUGIN_NAME_MAX + 1];
    bool has_index;
    uint32_t index;
};

#define ACCEL__BACKEND_ITEMS_MAX 64

/*
 * Parse a backend selection ("cuda", "hip:1, null"). NULL, empty or
 * white space only gives zero items. ACCEL_ERR_INVALID_ARGUMENT with the
 * reason for anything malformed.
 */
accel_status accel__backend_parse(const char *text,
                                  struct accel__backend_item *out_items,
                                  size_t *out_count);

#endif /* ACCEL_HOST_SELECT_H */
