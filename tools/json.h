/*
 * A small streaming JSON writer for the tools' --json output.
 *
 * The writer tracks nesting, commas and indentation, so a tool writes its
 * document as a sequence of calls and the result is always well formed.
 * Strings are escaped as RFC 8259 asks, and bytes that are not valid UTF-8
 * (a path may hold any bytes) become U+FFFD, so that any JSON parser
 * accepts the output.
 *
 * Every call takes a key: the member's name inside an object, NULL inside
 * an array or for the top-level value.
 */
#ifndef ACCEL_TOOLS_JSON_H
#define ACCEL_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Deeper documents are a bug in the tool; the writer asserts. */
#define JSON_MAX_DEPTH 16

struct json_writer {
    FILE *out;
    int depth;
    /* For each open container: an object (else an array), and whether it
     * has a member already. */
    bool in_object[JSON_MAX_DEPTH];
    bool has_member[JSON_MAX_DEPTH];
};

void json_writer_init(struct json_writer *w, FILE *out);
/* Ends the document with a newline. Every container must be closed. */
void json_writer_finish(struct json_writer *w);

void json_begin_object(struct json_writer *w, const char *key);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w, const char *key);
void json_end_array(struct json_writer *w);

/* A NULL value is written as null. */
void json_string(struct json_writer *w, const char *key, const char *value);
/* At most `len` bytes of `value`, stopping early at a NUL. */
void json_string_n(struct json_writer *w, const char *key, const char *value,
                   size_t len);
void json_uint(struct json_writer *w, const char *key, uint64_t value);
void json_int(struct json_writer *w, const char *key, int64_t value);
void json_bool(struct json_writer *w, const char *key, bool value);
void json_null(struct json_writer *w, const char *key);
/* Six significant digits, enough for a measurement; null when the value is
 * not finite, since JSON has no NaN or infinity. */
void json_double(struct json_writer *w, const char *key, double value);

/*
 * The length of the well-formed UTF-8 sequence at the start of the `n`
 * bytes at `s` (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF), or 0 when the bytes there are not one. The writer replaces
 * such bytes with U+FFFD; other writers of text (XML) do the same with it.
 */
size_t json_utf8_length(const unsigned char *s, size_t n);

#endif /* ACCEL_TOOLS_JSON_H */
