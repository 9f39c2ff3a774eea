/*
 * Modules from kernel source: accel_module_compile checks the source and
 * the options, asks the plugin who its compiler is, and loads the image
 * from the on-disk cache (kcache.h) when an entry of the same key is
 * there; otherwise the plugin compiles (driver.h: module_compile) and the
 * image is stored. The compiler's whole log stays with the calling thread
 * for accel_last_build_log.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "host.h"
#include "kcache.h"
#include "status.h"
#include "submit.h"
#include "trace.h"

/* The most log kept of one compile; the rest is cut with a note. */
#define BUILD_LOG_MAX (16u << 20)
#define OPTIONS_MAX 256u
#define SOURCE_MAX (64u << 20)

/* What module_compile's two calls fill in. */
struct compile_output {
    void *image;
    size_t image_size;
    char *log;
    size_t log_size;
    bool log_cut;
};

static _Thread_local char *thread_build_log;
static pthread_key_t build_log_key;
static pthread_once_t build_log_once = PTHREAD_ONCE_INIT;

static void build_log_key_create(void)
{
    /* The key frees a thread's last log when the thread exits. */
    pthread_key_create(&build_log_key, free);
}

/* The thread's log becomes `log` (owned), the previous one freed. */
static void build_log_set(char *log)
{
    pthread_once(&build_log_once, build_log_key_create);
    free(thread_build_log);
    thread_build_log = log;
    pthread_setspecific(build_log_key, log);
}

const char *accel_last_build_log(void)
{
    return thread_build_log != NULL ? thread_build_log : "";
}

static accel_status put_image(void *host, const void *image, size_t size)
{
    struct compile_output *out = host;
    if (out->image != NULL || image == NULL || size == 0)
        return ACCEL_ERR_INVALID_ARGUMENT;
    out->image = malloc(size);
    if (out->image == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    memcpy(out->image, image, size);
    out->image_size = size;
    return ACCEL_OK;
}

static accel_status put_log(void *host, const char *text, size_t size)
{
    struct compile_output *out = host;
    if (text == NULL || size == 0 || out->log_cut)
        return ACCEL_OK;
    if (size > BUILD_LOG_MAX - out->log_size) {
        size = BUILD_LOG_MAX - out->log_size;
        out->log_cut = true;
    }
    char *grown = realloc(out->log, out->log_size + size + 1);
    if (grown == NULL)
        return ACCEL_ERR_OUT_OF_HOST_MEMORY;
    memcpy(grown + out->log_size, text, size);
    out->log = grown;
    out->log_size += size;
    out->log[out->log_size] = '\0';
    return ACCEL_OK;
}

static void log_note_cut(struct compile_output *out)
{
    static const char note[] = "\n[accel: the log was cut here at 16 MiB]\n";
    char *grown = realloc(out->log, out->log_size + sizeof note);
    if (grown == NULL)
        return;
    memcpy(grown + out->log_size, note, sizeof note);
    out->log = grown;
    out->log_size += sizeof note - 1;
}

/* Past spaces and tabs, and comments (a line comment ends the line). */
static const char *skip_blank(const char *at)
{
    for (;;) {
        if (*at == ' ' || *at == '\t')
            at++;
        else if (at[0] == '/' && at[1] == '*') {
            const char *end = strstr(at + 2, "*/");
            at = end != NULL ? end + 2 : at + strlen(at);
        } else
            return at;
    }
}

static bool directive_is(const char *at, const char *word)
{
    size_t length = strlen(word);
    return strncmp(at, word, length) == 0 &&
           !isalnum((unsigned char)at[length]) && at[length] != '_';
}

/* Whether an include's operand names the dialect's header and nothing else. */
static bool include_allowed(const char *at)
{
    at = skip_blank(at);
    const char *allowed[] = {"<accel/kernel.h>", "\"accel/kernel.h\""};
    for (size_t i = 0; i < 2; i++) {
        size_t length = strlen(allowed[i]);
        if (strncmp(at, allowed[i], length) == 0) {
            const char *rest = skip_blank(at + length);
            return *rest == '\n' || *rest == '\0' ||
                   (rest[0] == '/' && rest[1] == '/');
        }
    }
    return false;
}

/*
 * The source as the preprocessor reads its directives: line splices
 * (backslash, newline) removed, as translation phase 2 does, so that
 * "#inc\<newline>lude" is seen whole. NULL when out of memory.
 */
static char *splice_lines(const char *source)
{
    char *out = malloc(strlen(source) + 1);
    if (out == NULL)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; source[i] != '\0'; i++) {
        if (source[i] == '\\' && source[i + 1] == '\n')
            i++;
        else
            out[j++] = source[i];
    }
    out[j] = '\0';
    return out;
}

/* The source's line of offset `at` of its spliced copy. */
static unsigned source_line(const char *source, size_t at)
{
    unsigned line = 1;
    for (size_t i = 0, j = 0; source[i] != '\0' && j < at; i++) {
        if (source[i] == '\n')
            line++;
        if (source[i] == '\\' && source[i + 1] == '\n') {
            line++;
            i++;
        } else {
            j++;
        }
    }
    return line;
}

/*
 * Where a directive in `text` (spliced) includes or embeds a file other
 * than <accel/kernel.h>: its offset, or -1. "%:" is "#" (a digraph). A
 * macro operand counts: it could name any file.
 */
static long foreign_include(const char *text, const char **out_directive)
{
    static const char *reading[] = {"include", "include_next", "import", "embed"};
    for (const char *at = text; *at != '\0';) {
        const char *start = skip_blank(at);
        bool hash = *start == '#' || (start[0] == '%' && start[1] == ':');
        if (hash) {
            const char *word = skip_blank(start + (*start == '#' ? 1 : 2));
            for (size_t i = 0; i < sizeof reading / sizeof reading[0]; i++)
                if (directive_is(word, reading[i]) &&
                    (i != 0 || !include_allowed(word + strlen(reading[i])))) {
                    *out_directive = reading[i];
                    return (long)(start - text);
                }
        }
        const char *end = strchr(start, '\n');
        if (end == NULL)
            break;
        at = end + 1;
    }
    return -1;
}

/*
 * The dialect is <accel/kernel.h> and nothing else: the same source must
 * compile for every plugin, and only that header is supplied to each
 * compiler. A directive that includes or embeds anything else is refused
 * with its line.
 */
static accel_status source_refusal(const char *source)
{
    char *text = splice_lines(source);
    if (text == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "accel_module_compile");
    const char *directive = NULL;
    long at = foreign_include(text, &directive);
    free(text);
    if (at < 0)
        return ACCEL_OK;
    return accel__error(
        ACCEL_ERR_MODULE,
        "accel_module_compile: line %u: #%s of a file outside the "
        "dialect (only <accel/kernel.h>)",
        source_line(source, (size_t)at), directive);
}

static bool identifier_at(const char *text, size_t length)
{
    if (length == 0 || isdigit((unsigned char)text[0]))
        return false;
    for (size_t i = 0; i < length; i++)
        if (!isalnum((unsigned char)text[i]) && text[i] != '_')
            return false;
    return true;
}

/*
 * -DNAME, -DNAME=VALUE, -UNAME, or the source's language for the CPU
 * plugin (-xc, -xc++): nothing that could name a file or another flag.
 */
static bool option_valid(const char *option)
{
    if (strcmp(option, "-xc") == 0 || strcmp(option, "-xc++") == 0)
        return true;
    if (option[0] != '-' || (option[1] != 'D' && option[1] != 'U'))
        return false;
    const char *name = option + 2;
    const char *equals = strchr(name, '=');
    size_t name_length = equals != NULL ? (size_t)(equals - name) : strlen(name);
    if (!identifier_at(name, name_length) || (equals != NULL && option[1] == 'U'))
        return false;
    for (const char *value = equals != NULL ? equals + 1 : ""; *value != '\0';
         value++)
        if (!isgraph((unsigned char)*value) || strchr("\"'\\`", *value) != NULL)
            return false;
    return true;
}

/*
 * Split `options` at blanks into `words` (a copy, cut in place) and check
 * each one. NULL or "" is no option.
 */
static accel_status options_split(const char *options, char **out_copy,
                                  const char **words, uint32_t *out_count)
{
    *out_copy = NULL;
    *out_count = 0;
    if (options == NULL)
        return ACCEL_OK;
    char *copy = strdup(options);
    if (copy == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "accel_module_compile");
    char *save = NULL;
    for (char *word = strtok_r(copy, " \t\n", &save); word != NULL;
         word = strtok_r(NULL, " \t\n", &save)) {
        if (!option_valid(word) || *out_count == OPTIONS_MAX) {
            accel_status status = accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "accel_module_compile: option %.64s%s: only -DNAME, "
                "-DNAME=VALUE, -UNAME, -xc and -xc++ (at most %u; a value "
                "without quotes, backslashes or blanks)",
                word, strlen(word) > 64 ? "..." : "", OPTIONS_MAX);
            free(copy);
            return status;
        }
        words[(*out_count)++] = word;
    }
    *out_copy = copy;
    return ACCEL_OK;
}

/*
 * The cache key: everything that decides the image. Fields are separated
 * by their lengths, so that no two requests hash the same bytes.
 */
static void cache_key(const accel_device *device, const char *identity,
                      const char *const *options, uint32_t option_count,
                      const char *source,
                      unsigned char out_key[ACCEL__SHA256_BYTES])
{
    struct accel__sha256 sha;
    accel__sha256_init(&sha);
    const char *fields[3] = {"accel-kcache-1", device->plugin->name, identity};
    for (uint32_t i = 0; i < 3 + option_count + 1; i++) {
        const char *field = i < 3                  ? fields[i]
                            : i < 3 + option_count ? options[i - 3]
                                                   : source;
        uint64_t length = strlen(field);
        accel__sha256_update(&sha, &length, sizeof length);
        accel__sha256_update(&sha, field, (size_t)length);
    }
    accel__sha256_final(&sha, out_key);
}

static accel_status compile_refusal(const accel_device *device)
{
    if ((device->props.caps & ACCEL_DEVICE_CAP_KERNELS) != 0 &&
        ACCEL__DRV_HAS(device, module_load) &&
        ACCEL__DRV_HAS(device, module_compile) &&
        ACCEL__DRV_HAS(device, compiler_identity))
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                        "accel_module_compile: device %s:%u (%s) compiles no "
                        "source (%s)",
                        device->plugin->name, device->index, device->props.name,
                        (device->props.caps & ACCEL_DEVICE_CAP_KERNELS) == 0
                            ? "it runs no kernels"
                            : "its plugin has no module_compile entry");
}

/* The first line of the log that names an error, for the error's detail. */
static void first_error_line(const char *log, char *out, size_t size)
{
    const char *line = log != NULL ? strstr(log, "error") : NULL;
    out[0] = '\0';
    if (line == NULL)
        return;
    while (line > log && line[-1] != '\n')
        line--;
    size_t length = strcspn(line, "\n");
    snprintf(out, size, ": %.*s", (int)(length < 200 ? length : 200), line);
}

/* The plugin's compile; on failure the detail names the log. */
static accel_status run_compiler(accel_device *device, const char *source,
                                 const char *const *options,
                                 uint32_t option_count,
                                 struct compile_output *out)
{
    struct accel_compile_request request = {
        .struct_size = sizeof request,
        .option_count = option_count,
        .source = source,
        .source_size = strlen(source),
        .options = options,
        .host = out,
        .put_image = put_image,
        .put_log = put_log,
    };
    accel_status status = ACCEL__DRV_CALL(device, module_compile, &request);
    if (status == ACCEL_OK && out->image == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "module_compile succeeded without an image");
    if (out->log_cut)
        log_note_cut(out);
    if (status == ACCEL_ERR_MODULE) {
        char line[256];
        first_error_line(out->log, line, sizeof line);
        accel__error(
            ACCEL_ERR_MODULE,
            "accel_module_compile: %s:%u's compiler refused the source "
            "(whole log: accel_last_build_log)%s",
            device->plugin->name, device->index, line);
    }
    return status;
}

static accel_status compiler_identity(accel_device *device, char *out, size_t size)
{
    out[0] = '\0';
    accel_status status = ACCEL__DRV_CALL(device, compiler_identity, out, size);
    if (status == ACCEL_OK && memchr(out, '\0', size) == NULL)
        status = accel__error(ACCEL_ERR_PLUGIN_ABI,
                              "compiler_identity: no NUL within %zu bytes", size);
    return status;
}

/* The image from the cache, loaded; false on a miss (or a load failure). */
static bool load_cached(accel_device *device, struct accel__kcache *cache,
                        const unsigned char key[ACCEL__SHA256_BYTES],
                        accel_module **out_module)
{
    void *image = NULL;
    size_t size = 0;
    if (!accel__kcache_get(cache, key, &image, &size))
        return false;
    accel_status status = accel_module_load(device, image, size, out_module);
    free(image);
    if (status != ACCEL_OK)
        accel__log(ACCEL_LOG_WARN,
                   "kernel cache: a cached image failed to load "
                   "(%s); compiling again",
                   accel_last_error());
    return status == ACCEL_OK;
}

static accel_status compile_checks(accel_device *device, const char *source)
{
    size_t length = strnlen(source, SOURCE_MAX + 1);
    if (length == 0 || length > SOURCE_MAX)
        return accel__error(
            ACCEL_ERR_INVALID_ARGUMENT,
            "accel_module_compile: empty source or over %u bytes", SOURCE_MAX);
    if (accel__process_check(device->pid, "accel_module_compile") != ACCEL_OK)
        return ACCEL_ERR_NOT_SUPPORTED;
    accel_status status = compile_refusal(device);
    return status != ACCEL_OK ? status : source_refusal(source);
}

static accel_status compile_untraced(accel_device *device, const char *source,
                                     const char *options,
                                     accel_module **out_module)
{
    if (out_module != NULL)
        *out_module = NULL;
    build_log_set(NULL);
    if (device == NULL || source == NULL || out_module == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_module_compile: NULL argument");
    accel_status status = compile_checks(device, source);
    const char *words[OPTIONS_MAX];
    uint32_t count = 0;
    char *copy = NULL;
    if (status == ACCEL_OK)
        status = options_split(options, &copy, words, &count);
    char identity[ACCEL_COMPILER_IDENTITY_MAX];
    if (status == ACCEL_OK)
        status = compiler_identity(device, identity, sizeof identity);
    if (status != ACCEL_OK) {
        free(copy);
        return status;
    }
    unsigned char key[ACCEL__SHA256_BYTES];
    cache_key(device, identity, words, count, source, key);
    struct accel__kcache cache;
    bool elevated = (device->host->services.v1.privilege &
                     ACCEL_HOST_PRIVILEGE_ELEVATED) != 0;
    bool cached = accel__kcache_open(elevated, &cache);
    if (cached && load_cached(device, &cache, key, out_module)) {
        accel__kcache_close(&cache);
        free(copy);
        return ACCEL_OK;
    }
    struct compile_output out = {0};
    status = run_compiler(device, source, words, count, &out);
    free(copy);
    build_log_set(out.log);
    if (status == ACCEL_OK && cached)
        accel__kcache_put(&cache, key, out.image, out.image_size);
    if (cached)
        accel__kcache_close(&cache);
    if (status == ACCEL_OK)
        status = accel_module_load(device, out.image, out.image_size, out_module);
    free(out.image);
    return status;
}

accel_status accel_module_compile(accel_device *device, const char *source,
                                  const char *options, accel_module **out_module)
{
    struct accel__traced traced = ACCEL__TRACE_BEGIN();
    accel_status status = compile_untraced(device, source, options, out_module);
    return accel__trace_end(traced, status, 0);
}
