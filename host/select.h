/*
 * Backend selection (select_parse.c, select.c): the items of ACCEL_BACKEND or the
 * host's options.
 */
#ifndef ACCEL_HOST_SELECT_H
#define ACCEL_HOST_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/accel.h"
#include "accel/driver.h"

/* What an item's term names a device by (select_parse.c has the grammar). */
enum accel__term_kind {
    ACCEL__TERM_NONE = 0, /* "cuda": the plugin's first device not excluded */
    ACCEL__TERM_INDEX,    /* "cuda:1" */
    ACCEL__TERM_UUID,     /* "cuda:GPU-5b1c": a prefix of the uuid */
    ACCEL__TERM_PCI,      /* "cuda:pci=0000:41:00.0", normalized */
    ACCEL__TERM_NAME,     /* "hip:name=*MI300*", an fnmatch glob */
    ACCEL__TERM_LOCAL,    /* "null:%local", "null:%local%": by local rank */
    ACCEL__TERM_RANK      /* "null:%rank", "null:%rank%": by rank */
};

/* Room for a term's text (a uuid prefix, a bus id or a glob), with the NUL. */
#define ACCEL__TERM_TEXT_MAX 128

/* One item of a backend selection: [!]name[:term], name "*" for any plugin. */
struct accel__backend_item {
    char name[ACCEL_PLUGIN_NAME_MAX + 1];
    bool exclude; /* "!": the item's devices are never picked */
    bool any;     /* the name is "*" */
    enum accel__term_kind kind;
    uint32_t index; /* ACCEL__TERM_INDEX */
    bool modulo;    /* LOCAL, RANK: the rank modulo the devices ("%local%") */
    char text[ACCEL__TERM_TEXT_MAX]; /* UUID, PCI, NAME */
    char source[ACCEL__TERM_TEXT_MAX + ACCEL_PLUGIN_NAME_MAX + 4]; /* as written */
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
/*
 * Whether discovery opens plugin `name` for these items: a plugin an item
 * names, or every plugin not wholly excluded ("!hip") when an item is "*"
 * or every item is an exclusion. Zero items: every plugin.
 */
bool accel__backend_wants(const struct accel__backend_item *items, size_t count,
                          const char *name);

#endif /* ACCEL_HOST_SELECT_H */
