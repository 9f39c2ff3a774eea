/*
 * Text from outside the program (a file name, a plugin's words) made safe
 * to print: every control byte (below 0x20, and 0x7f) becomes \xNN, so that
 * a strange name cannot break a log line or drive the terminal that shows
 * it. Other bytes are kept as they are. libaccel escapes what it logs and
 * every reason and error detail this way; accel-info prints the same.
 */
#ifndef ACCEL_COMMON_ESCAPE_H
#define ACCEL_COMMON_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* True when `text` has a byte that accel__escape would rewrite. */
bool accel__escape_needed(const char *text);

/*
 * Write `text` escaped into `out` (`size` bytes, always terminated when
 * size > 0), cut short rather than leave half an escape. Returns the length
 * the whole escaped text has, as snprintf does.
 */
size_t accel__escape(char *out, size_t size, const char *text);

#endif /* ACCEL_COMMON_ESCAPE_H */
