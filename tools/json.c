#include "json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

size_t json_utf8_length(const unsigned char *s, size_t n)
{
    unsigned char lead;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    size_t len;

    if (n == 0)
        return 0;
    lead = s[0];
    if (lead < 0x80)
        return 1;
    if (lead >= 0xc2 && lead <= 0xdf) {
        len = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        len = 3;
        if (lead == 0xe0)
            lo = 0xa0;
        if (lead == 0xed)
            hi = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        len = 4;
        if (lead == 0xf0)
            lo = 0x90;
        if (lead == 0xf4)
            hi = 0x8f;
    } else {
        return 0;
    }
    if (len > n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

static void write_escaped(FILE *out, const char *value, size_t len)
{
    const unsigned char *s = (const unsigned char *)value;

    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t seq;

        switch (c) {
        case '"':
            fputs("\\\"", out);
            i++;
            continue;
        case '\\':
            fputs("\\\\", out);
            i++;
            continue;
        case '\b':
            fputs("\\b", out);
            i++;
            continue;
        case '\f':
            fputs("\\f", out);
            i++;
            continue;
        case '\n':
            fputs("\\n", out);
            i++;
            continue;
        case '\r':
            fputs("\\r", out);
            i++;
            continue;
        case '\t':
            fputs("\\t", out);
            i++;
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            i++;
            continue;
        }
        seq = json_utf8_length(s + i, len - i);
        if (seq == 0) {
            /* Not text: say so rather than emit bytes a parser rejects. */
            fputs("\\ufffd", out);
            i++;
            continue;
        }
        fwrite(s + i, 1, seq, out);
        i += seq;
    }
    fputc('"', out);
}

static void indent(struct json_writer *w, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", w->out);
}

/* Start a value: the comma and line break it needs, then its key. */
static void begin_value(struct json_writer *w, const char *key)
{
    if (w->depth > 0) {
        if (w->has_member[w->depth - 1])
            fputc(',', w->out);
        fputc('\n', w->out);
        indent(w, w->depth);
        w->has_member[w->depth - 1] = true;
    }
    /* Members of an object have keys; array elements and the root do not. */
    assert((key != NULL) == (w->depth > 0 && w->in_object[w->depth - 1]));
    if (key != NULL) {
        write_escaped(w->out, key, strlen(key));
        fputs(": ", w->out);
    }
}

static void open_container(struct json_writer *w, const char *key, char bracket)
{
    begin_value(w, key);
    assert(w->depth < JSON_MAX_DEPTH);
    fputc(bracket, w->out);
    w->in_object[w->depth] = bracket == '{';
    w->has_member[w->depth] = false;
    w->depth++;
}

static void close_container(struct json_writer *w, char bracket)
{
    assert(w->depth > 0);
    w->depth--;
    if (w->has_member[w->depth]) {
        fputc('\n', w->out);
        indent(w, w->depth);
    }
    fputc(bracket, w->out);
}

void json_writer_init(struct json_writer *w, FILE *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
}

void json_writer_finish(struct json_writer *w)
{
    assert(w->depth == 0);
    fputc('\n', w->out);
}

void json_begin_object(struct json_writer *w, const char *key)
{
    open_container(w, key, '{');
}

void json_end_object(struct json_writer *w)
{
    close_container(w, '}');
}

void json_begin_array(struct json_writer *w, const char *key)
{
    open_container(w, key, '[');
}

void json_end_array(struct json_writer *w)
{
    close_container(w, ']');
}

void json_string(struct json_writer *w, const char *key, const char *value)
{
    if (value == NULL) {
        json_null(w, key);
        return;
    }
    begin_value(w, key);
    write_escaped(w->out, value, strlen(value));
}

void json_string_n(struct json_writer *w, const char *key, const char *value,
                   size_t len)
{
    begin_value(w, key);
    write_escaped(w->out, value, strnlen(value, len));
}

void json_uint(struct json_writer *w, const char *key, uint64_t value)
{
    begin_value(w, key);
    fprintf(w->out, "%" PRIu64, value);
}

void json_int(struct json_writer *w, const char *key, int64_t value)
{
    begin_value(w, key);
    fprintf(w->out, "%" PRId64, value);
}

void json_bool(struct json_writer *w, const char *key, bool value)
{
    begin_value(w, key);
    fputs(value ? "true" : "false", w->out);
}

void json_null(struct json_writer *w, const char *key)
{
    begin_value(w, key);
    fputs("null", w->out);
}

void json_double(struct json_writer *w, const char *key, double value)
{
    if (!isfinite(value)) {
        json_null(w, key);
        return;
    }
    begin_value(w, key);
    fprintf(w->out, "%.6g", value);
}
