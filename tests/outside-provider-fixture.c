/*
 * A communication provider written by a vendor from <accel/comm.h> alone,
 * wrong (or merely old, or new) in one way per variant, for
 * outside-provider.c. Built as outside-provider-VARIANT.so and installed as
 * accel-comm-outside.so. Every variant that is accepted opens and then
 * declines each communicator, so that only the table's checks are seen.
 *
 *   OUTSIDE_NULL_ENTRY=e    the required entry e is NULL
 *   OUTSIDE_NAME=expr       the table's name
 *   OUTSIDE_STRUCT_SIZE=n   struct_size
 *   OUTSIDE_OLD_TABLE       the symbol is a 1.0 table (no bootstrap entry)
 *   OUTSIDE_FUTURE_TABLE    the symbol is a table of a later minor, two
 *                           entries longer, abi_minor 9
 *   OUTSIDE_ABI_MAJOR=n     abi_major
 *   OUTSIDE_ABI_MINOR=n     abi_minor
 *   OUTSIDE_OPEN_STATUS=s   plugin_open returns s without set_error
 */
#include <stddef.h>

#include <accel/comm.h>

#ifndef OUTSIDE_NAME
#define OUTSIDE_NAME "outside"
#endif
#ifndef OUTSIDE_ABI_MAJOR
#define OUTSIDE_ABI_MAJOR ACCEL_COMM_ABI_MAJOR
#endif
#ifndef OUTSIDE_ABI_MINOR
#define OUTSIDE_ABI_MINOR ACCEL_COMM_ABI_MINOR
#endif

static const struct accel_comm_services *services;

static accel_status outside_open(const struct accel_comm_services *s,
                                 accel_comm_provider **out)
{
    services = s;
#ifdef OUTSIDE_OPEN_STATUS
    (void)out;
    return (accel_status)(OUTSIDE_OPEN_STATUS);
#else
    static int state;
    *out = (accel_comm_provider *)&state;
    return ACCEL_OK;
#endif
}

static void outside_close(accel_comm_provider *p)
{
    (void)p;
}

static accel_status outside_accepts(accel_comm_provider *p, accel_native_kind k)
{
    (void)p;
    (void)k;
    return ACCEL_OK;
}

static accel_status outside_create(accel_comm_provider *p,
                                   const struct accel_comm_init *init,
                                   accel_comm_handle **out)
{
    (void)p;
    (void)init;
    (void)out;
    return services->set_error(ACCEL_ERR_NOT_SUPPORTED, "outside declines");
}

static void outside_destroy(accel_comm_handle *c)
{
    (void)c;
}

static accel_status outside_error(accel_comm_handle *c)
{
    (void)c;
    return ACCEL_OK;
}

static accel_status outside_submit(accel_comm_handle *c,
                                   const struct accel_comm_op *op)
{
    (void)c;
    (void)op;
    return ACCEL_ERR_NOT_SUPPORTED;
}

/* Each required entry, NULL in the variant that names it. */
#define OUTSIDE_NULL_plugin_close 1
#define OUTSIDE_NULL_accepts_memory 2
#define OUTSIDE_NULL_comm_create 3
#define OUTSIDE_NULL_comm_destroy 4
#define OUTSIDE_NULL_comm_abort 5
#define OUTSIDE_NULL_comm_error 6
#define OUTSIDE_NULL_plugin_open 7
#define OUTSIDE_CAT_(a, b) a##b
#define OUTSIDE_CAT(a, b) OUTSIDE_CAT_(a, b)
#ifdef OUTSIDE_NULL_ENTRY
#define OUTSIDE_NULLED OUTSIDE_CAT(OUTSIDE_NULL_, OUTSIDE_NULL_ENTRY)
#else
#define OUTSIDE_NULLED 0
#endif
#define OUTSIDE_ENTRY(which, fn) (OUTSIDE_NULLED == (which) ? NULL : (fn))

/* The header of every table, entries 0 to 9 (the 1.0 table). */
#define OUTSIDE_V1_0_FIELDS                                                    \
    .abi_major = OUTSIDE_ABI_MAJOR, .abi_minor = OUTSIDE_ABI_MINOR,            \
    .name = OUTSIDE_NAME, .caps = ACCEL_COMM_CAP_LOOPBACK,                     \
    .plugin_open = OUTSIDE_ENTRY(7, outside_open),                             \
    .plugin_close = OUTSIDE_ENTRY(1, outside_close),                           \
    .accepts_memory = OUTSIDE_ENTRY(2, outside_accepts),                       \
    .comm_create = OUTSIDE_ENTRY(3, outside_create),                           \
    .comm_destroy = OUTSIDE_ENTRY(4, outside_destroy),                         \
    .comm_abort = OUTSIDE_ENTRY(5, outside_destroy),                           \
    .comm_error = OUTSIDE_ENTRY(6, outside_error), .submit = outside_submit

#if defined(OUTSIDE_OLD_TABLE)
/* What a vendor built against the 1.0 header exports: the same fields,
 * without bootstrap. */
struct outside_v1_0 {
    uint32_t struct_size;
    uint16_t abi_major;
    uint16_t abi_minor;
    const char *name;
    uint32_t caps;
    uint32_t reserved;
    accel_status (*plugin_open)(const struct accel_comm_services *,
                                accel_comm_provider **);
    void (*plugin_close)(accel_comm_provider *);
    accel_status (*accepts_memory)(accel_comm_provider *, accel_native_kind);
    accel_status (*unique_id)(accel_comm_provider *, void *, size_t, size_t *);
    accel_status (*comm_create)(accel_comm_provider *,
                                const struct accel_comm_init *,
                                accel_comm_handle **);
    accel_status (*comm_split)(accel_comm_handle *, int, int,
                               accel_comm_handle **);
    void (*comm_destroy)(accel_comm_handle *);
    void (*comm_abort)(accel_comm_handle *);
    accel_status (*comm_error)(accel_comm_handle *);
    accel_status (*submit)(accel_comm_handle *, const struct accel_comm_op *);
};
_Static_assert(sizeof(struct outside_v1_0) == ACCEL_COMM_V1_0_SIZE,
               "the 1.0 table");
#ifndef OUTSIDE_STRUCT_SIZE
#define OUTSIDE_STRUCT_SIZE ACCEL_COMM_V1_0_SIZE
#endif
ACCEL_COMM_EXPORT const struct outside_v1_0 accel_comm_v1 = {
    .struct_size = OUTSIDE_STRUCT_SIZE,
    OUTSIDE_V1_0_FIELDS,
};
#elif defined(OUTSIDE_FUTURE_TABLE)
/* A later minor's table: this header's, and two entries it does not know. */
struct outside_future {
    struct accel_comm_v1 known;
    void (*later[2])(void);
};
static void outside_later(void)
{
}
ACCEL_COMM_EXPORT const struct outside_future accel_comm_v1 = {
    .known = {.struct_size = sizeof(struct outside_future), OUTSIDE_V1_0_FIELDS},
    .later = {outside_later, outside_later},
};
#else
#ifndef OUTSIDE_STRUCT_SIZE
#define OUTSIDE_STRUCT_SIZE sizeof(struct accel_comm_v1)
#endif
ACCEL_COMM_EXPORT const struct accel_comm_v1 accel_comm_v1 = {
    .struct_size = OUTSIDE_STRUCT_SIZE,
    OUTSIDE_V1_0_FIELDS,
};
#endif
