#include "device_id.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void accel__uuid_format(const char *prefix, const unsigned char bytes[16],
                        char *out, size_t size)
{
    const unsigned char *b = bytes;
    bool printable = true;

    for (int i = 0; i < 16; i++)
        printable = printable && b[i] > 0x20 && b[i] < 0x7f;
    if (printable) {
        snprintf(out, size, "%s-%.16s", prefix, (const char *)bytes);
        return;
    }
    snprintf(
        out,
        size, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
        prefix, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
        b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Read 1..max_digits hex digits at *p (before end); false when there are none or more. */
static bool hex_field(const char **p, const char *end, int max_digits,
                      uint32_t *out)
{
    uint32_t value = 0;
    int digits = 0;

    for (; *p < end; (*p)++, digits++) {
        char c = **p;
        uint32_t digit;

        if (c >= '0' && c <= '9')
            digit = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = (uint32_t)(c - 'A' + 10);
        else
            break;
        if (digits == max_digits)
            return false;
        value = value * 16 + digit;
    }
    *out = value;
    return digits > 0;
}

/* Whether `text` has `c` at *p, stepping over it. */
static bool expect(const char **p, const char *end, char c)
{
    if (*p == end || **p != c)
        return false;
    (*p)++;
    return true;
}

bool accel__pci_bus_id_normalize(const char *text, size_t length, char *out,
                                 size_t size)
{
    const char *p = text, *end = text + length;
    uint32_t domain = 0, bus = 0, device = 0, function = 0;
    int colons = 0;

    for (size_t i = 0; i < length; i++)
        colons += text[i] == ':';
    if (colons == 2 && (!hex_field(&p, end, 8, &domain) || !expect(&p, end, ':')))
        return false;
    if ((colons != 1 && colons != 2) || !hex_field(&p, end, 2, &bus) ||
        !expect(&p, end, ':') || !hex_field(&p, end, 2, &device) ||
        !expect(&p, end, '.') || !hex_field(&p, end, 1, &function) ||
        p != end || device > 0x1f || function > 7)
        return false;
    if (domain > 0xffff)
        snprintf(out, size, "%08x:%02x:%02x.%x", domain, bus, device, function);
    else
        snprintf(out, size, "%04x:%02x:%02x.%x", domain, bus, device, function);
    return true;
}
