/*
 * Typed kernel signatures (the format of a bundle's signatures entry is
 * specified in signature.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "status.h"
#include "signature.h"

/* The longest kernel or parameter name the signatures entry may hold. */
#define SIGNATURE_NAME_MAX 200u

_Static_assert(ACCEL_PARAM_TYPE_COUNT == ACCEL_ELEM_TYPE_COUNT,
               "<accel/driver.h> numbers the element types of <accel/accel.h>");
_Static_assert(ACCEL_PARAM_KIND_POINTER == 1 && ACCEL_PARAM_KIND_VALUE == 2,
               "the kinds of <accel/driver.h> are frozen");

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* How many word characters `text` starts with, looking at `length` at most. */
static size_t word_length(const char *text, size_t length)
{
    size_t n = 0;
    while (n < length && word_char(text[n]))
        n++;
    return n;
}

/* ---- what a plugin gives ---- */

accel_status accel__signature_check(const char *kernel,
                                    const struct accel_kernel_signature *signature)
{
    if (signature->param_count == ACCEL_PARAM_COUNT_UNKNOWN)
        return ACCEL_OK;
    for (uint32_t i = 0; i < signature->param_count; i++) {
        const char *name = signature->param_names[i];
        size_t length = strnlen(name, sizeof signature->param_names[i]);
        if (signature->param_kinds[i] > ACCEL_PARAM_KIND_VALUE ||
            signature->param_types[i] >= ACCEL_PARAM_TYPE_COUNT ||
            length == sizeof signature->param_names[i] ||
            word_length(name, length) != length)
            return accel__error(
                ACCEL_ERR_PLUGIN_ABI,
                "kernel_get: '%s' parameter %" PRIu32 " has kind %u, type "
                "%u, or a name that is not a NUL-terminated word",
                kernel, i, signature->param_kinds[i], signature->param_types[i]);
    }
    return ACCEL_OK;
}

/* ---- the signatures entry ---- */

/* The element type named by `length` bytes at `text`; false when none is. */
static bool elem_type_named(const char *text, size_t length, uint8_t *out_type)
{
    for (uint8_t type = 0; type < ACCEL_ELEM_TYPE_COUNT; type++) {
        const char *name = accel_elem_type_name((accel_elem_type)type);
        if (strlen(name) == length && memcmp(name, text, length) == 0) {
            *out_type = type;
            return true;
        }
    }
    return false;
}

/*
 * One parameter, NAME:KIND:TYPE, from the `length` bytes at `text` (the
 * rest of the line) into parameter `index` of `out`; *out_used says how
 * many bytes it took. Returns what is wrong, or NULL.
 */
static const char *parse_param(const char *text, size_t length, uint32_t index,
                               struct accel_kernel_signature *out,
                               size_t *out_used)
{
    size_t name = word_length(text, length);
    if (name == 0 || name > SIGNATURE_NAME_MAX)
        return "a parameter name is not 1 to 200 characters of [A-Za-z0-9_]";
    size_t pos = name;
    if (length - pos < 5 || text[pos] != ':' || text[pos + 4] != ':')
        return "a parameter is not NAME:KIND:TYPE";
    if (memcmp(text + pos + 1, "ptr", 3) == 0)
        out->param_kinds[index] = ACCEL_PARAM_KIND_POINTER;
    else if (memcmp(text + pos + 1, "val", 3) == 0)
        out->param_kinds[index] = ACCEL_PARAM_KIND_VALUE;
    else
        return "a parameter's kind is neither ptr nor val";
    pos += 5;
    size_t type = word_length(text + pos, length - pos);
    if (!elem_type_named(text + pos, type, &out->param_types[index]))
        return "a parameter's type is no element type (f32, u8, byte, ...)";
    size_t kept = name < ACCEL_PARAM_NAME_MAX ? name : ACCEL_PARAM_NAME_MAX;
    memcpy(out->param_names[index], text, kept);
    out->param_names[index][kept] = '\0';
    *out_used = pos + type;
    return NULL;
}

/*
 * One kernel's line (`length` bytes, its newline left out) into `out`, the
 * kernel name's length into *out_name_length. Returns what is wrong, or
 * NULL.
 */
static const char *parse_line(const char *line, size_t length,
                              size_t *out_name_length,
                              struct accel_kernel_signature *out)
{
    size_t pos = word_length(line, length);
    if (pos == 0 || pos > SIGNATURE_NAME_MAX)
        return "a kernel name is not 1 to 200 characters of [A-Za-z0-9_]";
    *out_name_length = pos;
    memset(out, 0, sizeof *out);
    while (pos < length) {
        if (line[pos] != ' ' || pos + 1 == length)
            return "the parameters are not separated by single spaces";
        if (out->param_count == ACCEL_KERNEL_MAX_PARAMS)
            return "a kernel has more than 64 parameters";
        size_t used = 0;
        const char *wrong = parse_param(line + pos + 1, length - pos - 1,
                                        out->param_count, out, &used);
        if (wrong != NULL)
            return wrong;
        out->param_count++;
        pos += 1 + used;
    }
    return NULL;
}

/*
 * The lines after the header, one at a time: *pos moves past each. False
 * at the end, or with *out_wrong set when the text breaks off.
 */
static bool next_line(const char *text, size_t size, size_t *pos,
                      const char **out_line, size_t *out_length,
                      const char **out_wrong)
{
    *out_wrong = NULL;
    if (*pos >= size)
        return false;
    const char *end = memchr(text + *pos, '\n', size - *pos);
    if (end == NULL) {
        *out_wrong = "the last line has no newline";
        return false;
    }
    *out_line = text + *pos;
    *out_length = (size_t)(end - *out_line);
    *pos += *out_length + 1;
    return true;
}

static size_t header_length(const char *text, size_t size)
{
    size_t length = strlen(ACCEL__SIGNATURES_HEADER);
    return size >= length && memcmp(text, ACCEL__SIGNATURES_HEADER, length) == 0
               ? length
               : 0;
}

accel_status accel__signatures_check(const char *text, size_t size)
{
    size_t pos = header_length(text, size);
    if (pos == 0)
        return accel__error(ACCEL_ERR_MODULE,
                            "the bundle's signatures do not start with "
                            "\"accel-signatures 1\"");
    const char *line, *wrong = NULL;
    size_t length, name_length;
    struct accel_kernel_signature signature;
    for (uint32_t number = 2;
         next_line(text, size, &pos, &line, &length, &wrong); number++) {
        wrong = parse_line(line, length, &name_length, &signature);
        if (wrong != NULL)
            return accel__error(ACCEL_ERR_MODULE,
                                "the bundle's signatures, line %" PRIu32 ": %s",
                                number, wrong);
    }
    if (wrong != NULL)
        return accel__error(ACCEL_ERR_MODULE, "the bundle's signatures: %s",
                            wrong);
    return ACCEL_OK;
}

/* The size a parameter of the entry implies: 0 for a value of bytes. */
static uint32_t implied_size(const struct accel_kernel_signature *typed,
                             uint32_t i)
{
    if (typed->param_kinds[i] == ACCEL_PARAM_KIND_POINTER)
        return (uint32_t)sizeof(uint64_t);
    if (typed->param_types[i] == ACCEL_BYTE)
        return 0;
    return (uint32_t)accel_elem_size((accel_elem_type)typed->param_types[i]);
}

/* Put the entry's `typed` view of `kernel` into the plugin's `signature`. */
static accel_status merge(const char *kernel,
                          const struct accel_kernel_signature *typed,
                          struct accel_kernel_signature *signature)
{
    bool counted = signature->param_count != ACCEL_PARAM_COUNT_UNKNOWN;
    if (counted && signature->param_count != typed->param_count)
        return accel__error(ACCEL_ERR_MODULE,
                            "kernel '%s': the bundle's signatures give %" PRIu32
                            " parameters, its image %" PRIu32,
                            kernel, typed->param_count, signature->param_count);
    for (uint32_t i = 0; i < typed->param_count; i++) {
        uint32_t size = implied_size(typed, i);
        uint32_t known = counted ? signature->param_sizes[i] : 0;
        if (known != 0 && size != 0 && known != size)
            return accel__error(
                ACCEL_ERR_MODULE,
                "kernel '%s': parameter %" PRIu32 " (%s) is %" PRIu32
                " bytes in the bundle's signatures, %" PRIu32 " in its image",
                kernel, i, typed->param_names[i], size, known);
        signature->param_sizes[i] = known != 0 ? known : size;
        signature->param_kinds[i] = typed->param_kinds[i];
        signature->param_types[i] = typed->param_types[i];
        memcpy(signature->param_names[i], typed->param_names[i],
               sizeof signature->param_names[i]);
    }
    signature->param_count = typed->param_count;
    return ACCEL_OK;
}

static bool has_kinds(const struct accel_kernel_signature *signature)
{
    if (signature->param_count == ACCEL_PARAM_COUNT_UNKNOWN)
        return false;
    for (uint32_t i = 0; i < signature->param_count; i++)
        if (signature->param_kinds[i] != ACCEL_PARAM_KIND_UNKNOWN)
            return true;
    return false;
}

accel_status accel__signature_complete(const char *text, size_t size,
                                       const char *kernel,
                                       struct accel_kernel_signature *signature)
{
    if (text == NULL || has_kinds(signature))
        return ACCEL_OK;
    size_t pos = header_length(text, size), length, name_length;
    size_t kernel_length = strlen(kernel);
    const char *line, *wrong;
    struct accel_kernel_signature typed;
    while (pos > 0 && next_line(text, size, &pos, &line, &length, &wrong)) {
        if (length < kernel_length || memcmp(line, kernel, kernel_length) != 0 ||
            (length > kernel_length && line[kernel_length] != ' '))
            continue;
        wrong = parse_line(line, length, &name_length, &typed);
        if (wrong != NULL)
            return accel__error(ACCEL_ERR_MODULE,
                                "kernel '%s': the bundle's signatures: %s",
                                kernel, wrong);
        return merge(kernel, &typed, signature);
    }
    accel__log(ACCEL_LOG_DEBUG,
               "kernel '%s': no typed signature in the bundle; launches "
               "are checked by size",
               kernel);
    return ACCEL_OK;
}

/* ---- launches ---- */

/* "2 (x)", or "2" for a parameter without a name. */
static const char *param_label(const struct accel_kernel_signature *signature,
                               uint32_t index, char *out, size_t size)
{
    if (signature->param_names[index][0] != '\0')
        snprintf(out, size, "%" PRIu32 " (%s)", index,
                 signature->param_names[index]);
    else
        snprintf(out, size, "%" PRIu32, index);
    return out;
}

/* The parameter's kind, or unknown when the signature does not say. */
static uint8_t kind_of(const struct accel_kernel_signature *signature,
                       uint32_t index)
{
    if (signature->param_count == ACCEL_PARAM_COUNT_UNKNOWN ||
        index >= signature->param_count)
        return ACCEL_PARAM_KIND_UNKNOWN;
    return signature->param_kinds[index];
}

accel_status
accel__signature_check_kind(const char *kernel,
                            const struct accel_kernel_signature *signature,
                            uint32_t index, const accel_arg *arg)
{
    uint8_t kind = kind_of(signature, index);
    char label[ACCEL_PARAM_NAME_MAX + 16];
    const char *type = accel_elem_type_name(
        (accel_elem_type)signature->param_types[index]);
    if (kind == ACCEL_PARAM_KIND_POINTER && arg->kind != ACCEL_ARG_KIND_REF)
        return accel__error(
            ACCEL_ERR_TYPE_MISMATCH,
            "accel_launch: argument %s of '%s' is a pointer to %s: "
            "pass a ref, not a value",
            param_label(signature, index, label, sizeof label), kernel, type);
    if (kind == ACCEL_PARAM_KIND_VALUE && arg->kind == ACCEL_ARG_KIND_REF)
        return accel__error(
            ACCEL_ERR_TYPE_MISMATCH,
            "accel_launch: argument %s of '%s' is a value (%s, %" PRIu32
            " bytes): pass a value, not a ref",
            param_label(signature, index, label, sizeof label), kernel, type,
            signature->param_sizes[index]);
    return ACCEL_OK;
}

accel_status
accel__signature_check_ref_type(const char *kernel,
                                const struct accel_kernel_signature *signature,
                                uint32_t index, uint32_t ref_type)
{
    if (kind_of(signature, index) != ACCEL_PARAM_KIND_POINTER)
        return ACCEL_OK;
    /* Bytes are untyped on either side, as a void * is in C. */
    uint8_t type = signature->param_types[index];
    if (type == ACCEL_BYTE || ref_type == ACCEL_BYTE || type == ref_type)
        return ACCEL_OK;
    char label[ACCEL_PARAM_NAME_MAX + 16];
    return accel__error(
        ACCEL_ERR_TYPE_MISMATCH,
        "accel_launch: argument %s of '%s' points to %s; the ref holds %s",
        param_label(signature, index, label, sizeof label), kernel,
        accel_elem_type_name((accel_elem_type)type),
        accel_elem_type_name((accel_elem_type)ref_type));
}
