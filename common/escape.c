/* The one escaper for text from outside the program: see escape.h. */
#include "escape.h"

#include <stdio.h>

static bool is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

bool accel__escape_needed(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (is_control(*p))
            return true;
    }
    return false;
}

size_t accel__escape(char *out, size_t size, const char *text)
{
    size_t length = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        size_t need = is_control(*p) ? 4 : 1;
        if (size > 0 && length + need < size) {
            if (need == 4)
                snprintf(out + length, 5, "\\x%02x", *p);
            else
                out[length] = (char)*p;
        } else if (size > 0 && length < size) {
            /* Full: terminate here and only count from now on. */
            out[length] = '\0';
            size = length;
        }
        length += need;
    }
    if (size > 0 && length < size)
        out[length] = '\0';
    return length;
}
