/*
 * The memory check's naming of static shared arrays (ACCEL_SHARED): in an
 * ASan image each lies between two poisoned zones that describe it
 * (struct accel__shared_zone, <accel/kernel.h>), and a bad access lands in
 * one of them. The zone is found from the address alone: the lower one
 * starts the array's storage, the upper one sits at the first 16-byte
 * boundary past its end, so either is within a few 16-byte steps of any
 * address in it.
 */
#include "null_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The steps tried above and below the address: the zone before an array
 * spans its alignment (up to 64 bytes), the one after up to 64 + 64. */
#define NULL_SHARED_STEPS_UP 1
#define NULL_SHARED_STEPS_DOWN 9

/*
 * Whether a zone's worth of memory at `at` is poisoned and describes itself:
 * only then is it read, so that nothing outside ASan's knowledge is. It
 * reads poisoned memory on purpose: not instrumented (the plugin is, in an
 * ASan build of accel), and field by field, never through memcpy, which
 * ASan intercepts.
 */
__attribute__((no_sanitize_address)) static bool
null_zone_at(uintptr_t at, null_poisoned_fn poisoned,
             struct accel__shared_zone *out_zone)
{
    const volatile struct accel__shared_zone *zone = (const void *)at;

    if (!poisoned((const void *)at) ||
        !poisoned((const void *)(at + sizeof(*zone) - 1)))
        return false;
    out_zone->self = zone->self;
    out_zone->array = zone->array;
    out_zone->declaration = zone->declaration;
    out_zone->bytes = zone->bytes;
    out_zone->element_bytes = zone->element_bytes;
    return out_zone->self == zone && out_zone->declaration != NULL &&
           out_zone->element_bytes != 0 &&
           out_zone->bytes % out_zone->element_bytes == 0;
}

/* Whether `address` is in the zone at `at`, before or after the array. */
static bool null_zone_holds(uintptr_t at, const struct accel__shared_zone *zone,
                            uintptr_t address)
{
    uintptr_t array = (uintptr_t)zone->array, end = array + zone->bytes;

    if (array > at) /* the lower zone: from it to the array */
        return address >= at && address < array && array - at <= 128;
    return at >= end && at - end < 16 && address >= end &&
           address < at + 2 * sizeof(*zone);
}

/* The element type of "float s[32]": the text before the name. */
static void null_declared_type(const char *declaration, char *buf, size_t size)
{
    const char *bracket = strchr(declaration, '[');
    size_t length = bracket != NULL ? (size_t)(bracket - declaration)
                                    : strlen(declaration);

    while (length > 0 && declaration[length - 1] != ' ')
        length--;
    while (length > 0 && declaration[length - 1] == ' ')
        length--;
    snprintf(buf, size, "%.*s", (int)length, declaration);
}

bool accel__null_check_shared_describe(uintptr_t address,
                                       null_poisoned_fn poisoned, char *buf,
                                       size_t size)
{
    uintptr_t base = address & ~(uintptr_t)15;
    struct accel__shared_zone zone;

    if (poisoned == NULL || !poisoned((const void *)address))
        return false;
    for (int step = NULL_SHARED_STEPS_UP; step >= -NULL_SHARED_STEPS_DOWN;
         step--) {
        uintptr_t at = base + (uintptr_t)((intptr_t)step * 16);
        int64_t offset;
        uint32_t count;
        char type[64];

        if (!null_zone_at(at, poisoned, &zone) ||
            !null_zone_holds(at, &zone, address))
            continue;
        offset = (int64_t)(address - (uintptr_t)zone.array);
        count = zone.bytes / zone.element_bytes;
        null_declared_type(zone.declaration, type, sizeof(type));
        snprintf(buf, size,
                 "%" PRIu64 " bytes %s static shared array '%s' (%s[%u], %u "
                 "bytes): byte offset %" PRId64 ", element %" PRId64 " of %u",
                 offset < 0 ? (uint64_t)-offset : (uint64_t)offset - zone.bytes,
                 offset < 0 ? "before the start of" : "past the end of",
                 zone.declaration, type, count, zone.bytes, offset,
                 offset >= 0
                     ? offset / zone.element_bytes
                     : -((-offset + zone.element_bytes - 1) / zone.element_bytes),
                 count);
        return true;
    }
    return false;
}
