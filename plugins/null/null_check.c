/*
 * The checked mode (null_check.h): AddressSanitizer's interface found at
 * run time, the table of checked allocations, and the report that names
 * the kernel, block, thread and argument of a bad access.
 */
#include "null_check.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "null_plugin.h"
#include "race/accel_race.h"

/* ---- AddressSanitizer's public interface (sanitizer/asan_interface.h) ---- */

struct null_asan {
    void (*set_error_report_callback)(void (*callback)(const char *));
    void *(*get_report_address)(void);
    int (*get_report_access_type)(void); /* 0: read, 1: write */
    size_t (*get_report_access_size)(void);
    const char *(*get_report_description)(void);
    void (*unpoison_memory_region)(const volatile void *address, size_t bytes);
    null_poisoned_fn address_is_poisoned;
};

static pthread_once_t null_asan_once = PTHREAD_ONCE_INIT;
static struct null_asan null_asan;
static bool null_asan_found;

static void null_report_callback(const char *report);

static void null_asan_resolve(void)
{
    struct null_asan a;

    /* Casts through a union: ISO C has no conversion from void * to a function. */
#define NULL_ASAN_SYM(field, name)                                             \
    do {                                                                       \
        union {                                                                \
            void *object;                                                      \
            __typeof__(a.field) function;                                      \
        } u;                                                                   \
        u.object = dlsym(RTLD_DEFAULT, name);                                  \
        a.field = u.function;                                                  \
    } while (0)
    NULL_ASAN_SYM(set_error_report_callback,
                  "__asan_set_error_report_callback");
    NULL_ASAN_SYM(get_report_address, "__asan_get_report_address");
    NULL_ASAN_SYM(get_report_access_type, "__asan_get_report_access_type");
    NULL_ASAN_SYM(get_report_access_size, "__asan_get_report_access_size");
    NULL_ASAN_SYM(get_report_description, "__asan_get_report_description");
    NULL_ASAN_SYM(unpoison_memory_region, "__asan_unpoison_memory_region");
    NULL_ASAN_SYM(address_is_poisoned, "__asan_address_is_poisoned");
#undef NULL_ASAN_SYM
    if (a.set_error_report_callback == NULL || a.get_report_address == NULL ||
        a.get_report_access_type == NULL || a.get_report_access_size == NULL ||
        a.get_report_description == NULL || a.unpoison_memory_region == NULL ||
        a.address_is_poisoned == NULL)
        return;
    null_asan = a;
    null_asan_found = true;
    null_asan.set_error_report_callback(null_report_callback);
}

/* ---- the race check's runtime (libaccel-race) ---- */

static pthread_once_t null_race_once = PTHREAD_ONCE_INIT;
static accel_race_where_fn null_race_where_of;
static _Atomic uint64_t null_race_launches;

static bool null_race_may_race(uintptr_t address, bool other_block);
static void null_race_report(uintptr_t address, uint32_t size,
                             const struct accel_race_access *now,
                             const struct accel_race_access *then);

static void null_init_access(uintptr_t address, uint32_t size, bool write);

static const struct accel_race_hooks null_race_hooks = {
    .may_race = null_race_may_race,
    .report = null_race_report,
};

/* The initcheck: the same runtime, every access to null_init_access. */
static const struct accel_race_hooks null_init_hooks = {
    .may_race = null_race_may_race,
    .report = null_race_report,
    .access = null_init_access,
};

static accel_race_set_hooks_fn null_race_set_hooks;

static void null_race_resolve(void)
{
    union {
        void *object;
        accel_race_where_fn function;
    } where;
    union {
        void *object;
        accel_race_set_hooks_fn function;
    } set_hooks;

    where.object = dlsym(RTLD_DEFAULT, "accel_race_where");
    set_hooks.object = dlsym(RTLD_DEFAULT, "accel_race_set_hooks");
    if (where.object == NULL || set_hooks.object == NULL)
        return;
    null_race_set_hooks = set_hooks.function;
    null_race_where_of = where.function;
}

void accel__null_race_enter(uint64_t launch, uint64_t block, uint32_t thread,
                            uint32_t epoch)
{
    struct accel_race_where *where = null_race_where_of();

    *where = (struct accel_race_where){launch, block, thread, epoch};
}

void accel__null_race_leave(void)
{
    null_race_where_of()->launch = 0;
}

/* Launches of the race and init checks running now (null_init_access). */
static _Atomic uint32_t null_check_running;
static void null_init_free_deferred(void);

uint64_t accel__null_race_next_launch(void)
{
    atomic_fetch_add(&null_check_running, 1);
    return atomic_fetch_add(&null_race_launches, 1) + 1;
}

void accel__null_race_launch_done(void)
{
    if (atomic_fetch_sub(&null_check_running, 1) == 1)
        null_init_free_deferred();
}

/* "memory" or "race": whether the runtime it needs is in the process. */
static bool null_check_runtime(struct accel_drv_plugin *plugin, uint32_t mode)
{
    if (mode == NULL_CHECK_RACE || mode == NULL_CHECK_INIT) {
        pthread_once(&null_race_once, null_race_resolve);
        if (null_race_where_of != NULL) {
            null_race_set_hooks(mode == NULL_CHECK_INIT ? &null_init_hooks
                                                        : &null_race_hooks);
            return true;
        }
        snprintf(
            plugin->no_device_reason, sizeof(plugin->no_device_reason),
            "ACCEL_NULL_CHECK=%s needs libaccel-race in the process: run the "
            "program under accel-check --check %s",
            mode == NULL_CHECK_INIT ? "init" : "race",
            mode == NULL_CHECK_INIT ? "init" : "race");
        return false;
    }
    pthread_once(&null_asan_once, null_asan_resolve);
    if (null_asan_found)
        return true;
    snprintf(plugin->no_device_reason, sizeof(plugin->no_device_reason),
             "ACCEL_NULL_CHECK=memory needs AddressSanitizer's runtime in the "
             "process: run the program under accel-check");
    return false;
}

bool accel__null_check_read(struct accel_drv_plugin *plugin, uint32_t *out_mode)
{
    const char *text = plugin->services->getenv("ACCEL_NULL_CHECK");
    uint32_t mode;

    *out_mode = NULL_CHECK_OFF;
    if (text == NULL || strcmp(text, "off") == 0)
        return true;
    if (strcmp(text, "memory") == 0) {
        mode = NULL_CHECK_MEMORY;
    } else if (strcmp(text, "race") == 0) {
        mode = NULL_CHECK_RACE;
    } else if (strcmp(text, "init") == 0) {
        mode = NULL_CHECK_INIT;
    } else {
        accel__null_reason_bad_value(
            plugin, "ACCEL_NULL_CHECK", text,
            "is not a check: memory, race, init or off");
        return false;
    }
    if (!null_check_runtime(plugin, mode))
        return false;
    *out_mode = mode;
    return true;
}

void accel__null_check_unpoison(void *address, size_t bytes)
{
    if (null_asan_found)
        null_asan.unpoison_memory_region(address, bytes);
}

/* ---- the checked allocations ---- */

/* Freed allocations remembered for reports; older ones are forgotten. */
#define NULL_CHECK_FREED_MAX 1024u
/* How far outside an allocation an access still counts as its overflow. */
#define NULL_CHECK_NEAR_BYTES 4096u

struct null_alloc {
    uintptr_t base;
    uint64_t bytes;
    bool freed;
    uint8_t *written; /* the initcheck's bit per byte, or NULL */
};

static pthread_mutex_t null_allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct null_alloc *null_allocs;
static size_t null_alloc_count, null_alloc_capacity, null_freed_count;
/* Bumped, under the lock, whenever the table changes: the initcheck's
 * per-thread cache of an allocation is good while it stays the same. */
static _Atomic uint64_t null_allocs_generation = 1;
/* Initcheck shadows freed while a checked launch ran, whose threads may
 * still hold them in their caches: freed once none runs. */
static uint8_t **null_init_deferred;
static size_t null_init_deferred_count;

/* Free a freed allocation's shadow, now or once no checked launch runs;
 * under the lock. */
static void null_init_shadow_free(uint8_t *written)
{
    uint8_t **grown;

    atomic_fetch_add(&null_allocs_generation, 1);
    if (written == NULL || atomic_load(&null_check_running) == 0) {
        free(written);
        return;
    }
    grown = realloc(null_init_deferred,
                    (null_init_deferred_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(written); /* a launch frees what it reads: its own bug */
        return;
    }
    null_init_deferred = grown;
    null_init_deferred[null_init_deferred_count++] = written;
}

static void null_init_free_deferred(void)
{
    pthread_mutex_lock(&null_allocs_lock);
    if (atomic_load(&null_check_running) == 0) {
        for (size_t i = 0; i < null_init_deferred_count; i++)
            free(null_init_deferred[i]);
        null_init_deferred_count = 0;
    }
    pthread_mutex_unlock(&null_allocs_lock);
}

/* Drop the oldest freed record; under the lock. */
static void null_allocs_drop_oldest_freed(void)
{
    for (size_t i = 0; i < null_alloc_count; i++) {
        if (null_allocs[i].freed) {
            null_init_shadow_free(null_allocs[i].written);
            memmove(&null_allocs[i], &null_allocs[i + 1],
                    (null_alloc_count - i - 1) * sizeof(null_allocs[0]));
            null_alloc_count--;
            null_freed_count--;
            return;
        }
    }
}

void accel__null_check_track(const void *data, uint64_t bytes, bool shadow)
{
    uint8_t *written = NULL;

    if (shadow && (written = calloc(1, (size_t)(bytes / 8 + 1))) == NULL)
        return; /* untracked: never reported, never a false report */
    pthread_mutex_lock(&null_allocs_lock);
    if (null_alloc_count == null_alloc_capacity) {
        size_t capacity = null_alloc_capacity != 0 ? 2 * null_alloc_capacity : 64;
        struct null_alloc *grown = realloc(null_allocs,
                                           capacity * sizeof(*grown));

        if (grown == NULL) {
            /* Only a report's naming is lost; the check itself is ASan's. */
            pthread_mutex_unlock(&null_allocs_lock);
            free(written);
            return;
        }
        null_allocs = grown;
        null_alloc_capacity = capacity;
    }
    null_allocs[null_alloc_count++] = (struct null_alloc){
        .base = (uintptr_t)data, .bytes = bytes, .written = written};
    atomic_fetch_add(&null_allocs_generation, 1);
    pthread_mutex_unlock(&null_allocs_lock);
}

void accel__null_check_forget(const void *data)
{
    pthread_mutex_lock(&null_allocs_lock);
    /* The newest live record of this address: an address freed and reused
     * has an older, freed record too. */
    for (size_t i = null_alloc_count; i-- > 0;) {
        if (null_allocs[i].base == (uintptr_t)data && !null_allocs[i].freed) {
            null_allocs[i].freed = true;
            null_init_shadow_free(null_allocs[i].written);
            null_allocs[i].written = NULL;
            if (++null_freed_count > NULL_CHECK_FREED_MAX)
                null_allocs_drop_oldest_freed();
            break;
        }
    }
    pthread_mutex_unlock(&null_allocs_lock);
}

/*
 * The allocation `address` is in (newest first), else the live one it is
 * nearest outside of, within NULL_CHECK_NEAR_BYTES; false when none.
 */
static bool null_alloc_find(uintptr_t address, struct null_alloc *out_alloc)
{
    uint64_t best_distance = UINT64_MAX;
    bool found = false;

    pthread_mutex_lock(&null_allocs_lock);
    for (size_t i = null_alloc_count; i-- > 0;) {
        const struct null_alloc *a = &null_allocs[i];
        uint64_t distance;

        if (address >= a->base && address - a->base < a->bytes) {
            *out_alloc = *a;
            found = true;
            break;
        }
        if (a->freed)
            continue;
        distance = address < a->base ? a->base - address
                                     : address - a->base - a->bytes + 1;
        if (distance <= NULL_CHECK_NEAR_BYTES && distance < best_distance) {
            best_distance = distance;
            *out_alloc = *a;
            found = true;
        }
    }
    pthread_mutex_unlock(&null_allocs_lock);
    return found;
}

/* ---- the kernels' parameter declarations (ACCEL_CPU_PARAMS_PREFIX) ---- */

struct null_params {
    const struct accel_cpu_kernel *kernel;
    char *text;
};

static pthread_mutex_t null_params_lock = PTHREAD_MUTEX_INITIALIZER;
static struct null_params *null_params;
static size_t null_params_count, null_params_capacity;

void accel__null_check_note_kernel(const struct accel_cpu_kernel *kernel,
                                   const char *text)
{
    char *copy = strdup(text);

    if (copy == NULL)
        return;
    pthread_mutex_lock(&null_params_lock);
    for (size_t i = 0; i < null_params_count; i++) {
        if (null_params[i].kernel == kernel) {
            free(null_params[i].text);
            null_params[i].text = copy;
            pthread_mutex_unlock(&null_params_lock);
            return;
        }
    }
    if (null_params_count == null_params_capacity) {
        size_t capacity = null_params_capacity != 0 ? 2 * null_params_capacity
                                                    : 16;
        struct null_params *grown = realloc(null_params,
                                            capacity * sizeof(*grown));

        if (grown == NULL) {
            pthread_mutex_unlock(&null_params_lock);
            free(copy);
            return;
        }
        null_params = grown;
        null_params_capacity = capacity;
    }
    null_params[null_params_count++] = (struct null_params){kernel, copy};
    pthread_mutex_unlock(&null_params_lock);
}

/* Parameter `index`'s declaration ("float * y") into buf; false if unknown. */
static bool null_param_text(const struct accel_cpu_kernel *kernel,
                            uint32_t index, char *buf, size_t size)
{
    const char *p = NULL;
    bool found = false;

    pthread_mutex_lock(&null_params_lock);
    for (size_t i = 0; i < null_params_count; i++) {
        if (null_params[i].kernel == kernel)
            p = null_params[i].text;
    }
    for (uint32_t i = 0; p != NULL && i < index; i++) {
        p = strchr(p, ';');
        p = p != NULL ? p + 1 : NULL;
    }
    if (p != NULL && *p != '\0') {
        const char *end = strchr(p, ';');
        int length = (int)(end != NULL ? (size_t)(end - p) : strlen(p));

        snprintf(buf, size, "%.*s", length, p);
        found = true;
    }
    pthread_mutex_unlock(&null_params_lock);
    return found;
}

/*
 * The element type a pointer declaration points to ("const float * x" ->
 * "float") into buf, and its size; 0 when the declaration is no pointer
 * or its element is not a type the plugin knows the size of.
 */
static uint32_t null_element_of(const char *declaration, char *buf, size_t size)
{
    static const struct {
        const char *name;
        uint32_t bytes;
    } types[] = {
        {"float", 4},          {"double", 8},
        {"int8_t", 1},         {"uint8_t", 1},
        {"char", 1},           {"unsigned char", 1},
        {"signed char", 1},    {"int16_t", 2},
        {"uint16_t", 2},       {"short", 2},
        {"unsigned short", 2}, {"int32_t", 4},
        {"uint32_t", 4},       {"int", 4},
        {"unsigned", 4},       {"unsigned int", 4},
        {"int64_t", 8},        {"uint64_t", 8},
        {"long", 8},           {"unsigned long", 8},
        {"long long", 8},      {"unsigned long long", 8},
    };
    const char *star = strrchr(declaration, '*');
    const char *start = declaration;
    size_t length;

    buf[0] = '\0';
    if (star == NULL)
        return 0;
    while (strncmp(start, "const ", 6) == 0 || strncmp(start, "volatile ", 9) == 0)
        start += start[0] == 'c' ? 6 : 9;
    length = (size_t)(star - start);
    while (length > 0 && start[length - 1] == ' ')
        length--;
    snprintf(buf, size, "%.*s", (int)length, start);
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(buf, types[i].name) == 0)
            return types[i].bytes;
    }
    return 0;
}

/* ---- the report ---- */

/* The index of a pointer-sized argument that points into `alloc`, or -1. */
static int null_arg_into(const struct null_where *where,
                         const struct null_alloc *alloc)
{
    for (uint32_t i = 0; i < where->kernel->param_count; i++) {
        uint64_t value;

        if (where->kernel->param_sizes[i] != sizeof(value))
            continue;
        memcpy(&value, where->args[i], sizeof(value));
        if (value >= alloc->base && value - alloc->base <= alloc->bytes)
            return (int)i;
    }
    return -1;
}

/* "N bytes past the end of" / "N bytes before the start of" / "inside". */
static void null_where_in(uintptr_t address, uintptr_t base, uint64_t bytes,
                          char *buf, size_t size)
{
    if (address < base)
        snprintf(buf, size, "%" PRIu64 " bytes before the start of",
                 (uint64_t)(base - address));
    else if (address - base >= bytes)
        snprintf(buf, size, "%" PRIu64 " bytes past the end of",
                 (uint64_t)(address - base - bytes));
    else
        snprintf(buf, size, "inside");
}

/* What the access touched: "argument 2 'float * y' (float[64], 256 bytes) ...". */
static void null_describe_alloc(const struct null_where *where, uintptr_t address,
                                const struct null_alloc *alloc, char *buf,
                                size_t size)
{
    char declaration[96] = "", element[64], in[64];
    int64_t offset = (int64_t)(address - alloc->base);
    int arg = null_arg_into(where, alloc);
    uint32_t element_bytes = 0;
    int used;

    if (arg >= 0 && null_param_text(where->kernel, (uint32_t)arg, declaration,
                                    sizeof(declaration)))
        element_bytes = null_element_of(declaration, element, sizeof(element));
    null_where_in(address, alloc->base, alloc->bytes, in, sizeof(in));
    if (arg < 0)
        used = snprintf(buf, size,
                        "%s a %sdevice allocation of %" PRIu64 " bytes that no "
                        "argument points into",
                        in, alloc->freed ? "FREED " : "", alloc->bytes);
    else if (element_bytes == 0)
        used = snprintf(buf, size, "%s %sargument %d '%s' (%" PRIu64 " bytes)",
                        in, alloc->freed ? "FREED memory reached through " : "",
                        arg, declaration[0] != '\0' ? declaration : "?",
                        alloc->bytes);
    else
        used = snprintf(
            buf, size,
            "%s %sargument %d '%s' (%s[%" PRIu64 "], %" PRIu64 " bytes)", in,
            alloc->freed ? "FREED memory reached through " : "", arg,
            declaration, element, alloc->bytes / element_bytes, alloc->bytes);
    if (used < 0 || (size_t)used >= size)
        return;
    if (element_bytes != 0)
        snprintf(buf + used, size - (size_t)used,
                 ": byte offset %" PRId64 ", element %" PRId64 " of %" PRIu64,
                 offset,
                 offset >= 0 ? offset / element_bytes
                             : -((-offset + element_bytes - 1) / element_bytes),
                 alloc->bytes / element_bytes);
    else
        snprintf(buf + used, size - (size_t)used, ": byte offset %" PRId64,
                 offset);
}

/* What the access touched, whatever it was. */
static void null_describe_target(const struct null_where *where,
                                 uintptr_t address, char *buf, size_t size)
{
    uintptr_t shared = (uintptr_t)where->shared;
    struct null_alloc alloc;

    if (shared != 0 && address + NULL_CHECK_NEAR_BYTES >= shared &&
        address < shared + where->shared_bytes + NULL_CHECK_NEAR_BYTES) {
        char in[64];

        null_where_in(address, shared, where->shared_bytes, in, sizeof(in));
        snprintf(buf, size,
                 "%s the block's dynamic shared memory (%u bytes): byte offset "
                 "%" PRId64,
                 in, where->shared_bytes, (int64_t)(address - shared));
    } else if (null_alloc_find(address, &alloc)) {
        null_describe_alloc(where, address, &alloc, buf, size);
    } else {
        snprintf(buf, size,
                 "memory that is no device allocation of this process");
    }
}

/*
 * ASan's callback, after its report is printed and before the process
 * ends: one more line, for kernels.
 */
static void null_report_callback(const char *report)
{
    struct null_where where;
    uintptr_t address = (uintptr_t)null_asan.get_report_address();
    const char *description = null_asan.get_report_description();
    char target[400], thread[48], line[768];
    int length;

    (void)report;
    if (!accel__null_block_where(&where))
        return;
    if (where.thread_known)
        snprintf(thread, sizeof(thread), "thread (%u,%u,%u)", where.thread[0],
                 where.thread[1], where.thread[2]);
    else
        snprintf(thread, sizeof(thread), "a thread");
    /* ASan calls a touch of a static shared array's zone use-after-poison:
     * the zone says what it is. */
    if (strcmp(description, "use-after-poison") == 0 &&
        accel__null_check_shared_describe(address, null_asan.address_is_poisoned,
                                          target, sizeof(target)))
        description = "shared-array-overflow";
    else
        null_describe_target(&where, address, target, sizeof(target));
    length = snprintf(
        line, sizeof(line),
        "accel-check: %s: kernel '%s' block (%u,%u,%u) %s: %s of %zu bytes "
        "at 0x%" PRIxPTR " %s\n",
        description, where.kernel_name, where.block[0], where.block[1],
        where.block[2], thread,
        null_asan.get_report_access_type() ? "WRITE" : "READ",
        null_asan.get_report_access_size(), address, target);
    if (length > 0 && write(2, line,
                            (size_t)length < sizeof(line) ? (size_t)length
                                                          : sizeof(line) - 1) < 0)
        length = 0; /* the report above stands alone */
}

/* ---- the initcheck ---- */

/* The live allocation holding `address`; under the lock. */
static struct null_alloc *null_alloc_live_locked(uintptr_t address)
{
    for (size_t i = null_alloc_count; i-- > 0;) {
        struct null_alloc *a = &null_allocs[i];

        if (!a->freed && address >= a->base && address - a->base < a->bytes)
            return a;
    }
    return NULL;
}

/* The bits of shadow byte first / 8 for bytes [first, stop), stop no
 * further than that byte's last. */
static uint8_t null_shadow_bits(uint64_t first, uint64_t stop)
{
    return (uint8_t)(((1u << (stop - first)) - 1u) << (first % 8));
}

/* The end of the shadow byte `first` is in, or `end` if sooner. */
static uint64_t null_shadow_stop(uint64_t first, uint64_t end)
{
    uint64_t next = (first | 7u) + 1u;

    return next < end ? next : end;
}

/*
 * Set bits [first, end) of a shadow: kernels on other host threads set
 * bits of the same bytes, so a byte not wholly set takes one atomic OR of
 * its bits (a 4-byte store, the common case, is one OR, not four).
 */
static void null_shadow_mark(uint8_t *written, uint64_t first, uint64_t end)
{
    if (first < end && first % 8 != 0) {
        uint64_t stop = null_shadow_stop(first, end);

        __atomic_fetch_or(&written[first / 8], null_shadow_bits(first, stop),
                          __ATOMIC_RELAXED);
        first = stop;
    }
    if (end - first >= 8) {
        memset(&written[first / 8], 0xff, (size_t)((end - first) / 8));
        first += (end - first) / 8 * 8;
    }
    if (first < end)
        __atomic_fetch_or(&written[first / 8], null_shadow_bits(first, end),
                          __ATOMIC_RELAXED);
}

/* The first byte of [first, end) whose bit is clear, or `end`. */
static uint64_t null_shadow_first_clear(const uint8_t *written, uint64_t first,
                                        uint64_t end)
{
    while (first < end) {
        uint64_t stop = null_shadow_stop(first, end);
        uint8_t want = null_shadow_bits(first, stop);
        uint8_t missing = (uint8_t)(want & ~__atomic_load_n(&written[first / 8],
                                                            __ATOMIC_RELAXED));

        if (missing != 0)
            return first / 8 * 8 + (uint64_t)__builtin_ctz(missing);
        first = stop;
    }
    return end;
}

/* Set the written bits of [address, address + bytes) within `a`. */
static void null_alloc_mark(struct null_alloc *a, uintptr_t address,
                            uint64_t bytes)
{
    uint64_t first = address - a->base;
    uint64_t end = bytes > a->bytes - first ? a->bytes : first + bytes;

    null_shadow_mark(a->written, first, end);
}

void accel__null_check_mark_written(uintptr_t address, uint64_t bytes)
{
    struct null_alloc *a;

    pthread_mutex_lock(&null_allocs_lock);
    a = null_alloc_live_locked(address);
    if (a != NULL && a->written != NULL)
        null_alloc_mark(a, address, bytes);
    pthread_mutex_unlock(&null_allocs_lock);
}

/* A kernel's read of device memory never written: one line, then the end. */
static void null_init_report(uintptr_t address, uint32_t size, uintptr_t unwritten)
{
    char target[400], line[768];
    struct null_where where;
    int length;

    if (!accel__null_block_where(&where))
        return;
    null_describe_target(&where, unwritten, target, sizeof(target));
    length = snprintf(
        line, sizeof(line),
        "accel-check: uninitialised read: kernel '%s' block (%u,%u,%u) thread "
        "(%u,%u,%u): READ of %u bytes at 0x%" PRIxPTR " %s: never written by a "
        "copy or a kernel\n",
        where.kernel_name, where.block[0], where.block[1], where.block[2],
        where.thread[0], where.thread[1], where.thread[2], size, address, target);
    if (length > 0 && write(2, line,
                            (size_t)length < sizeof(line) ? (size_t)length
                                                          : sizeof(line) - 1) < 0)
        length = 0;
    abort();
}

/* The allocation a host thread's kernel accessed last (generation 0: none). */
struct null_init_cache {
    uint64_t generation;
    uintptr_t base;
    uint64_t bytes;
    uint8_t *written;
};
static _Thread_local struct null_init_cache null_init_cache;

/* Fill the cache with the live allocation holding `address`, if shadowed. */
static bool null_init_cache_fill(uintptr_t address, struct null_init_cache *c)
{
    struct null_alloc *a;
    bool found = false;

    pthread_mutex_lock(&null_allocs_lock);
    a = null_alloc_live_locked(address);
    if (a != NULL && a->written != NULL) {
        *c = (struct null_init_cache){atomic_load(&null_allocs_generation),
                                      a->base, a->bytes, a->written};
        found = true;
    }
    pthread_mutex_unlock(&null_allocs_lock);
    return found;
}

/*
 * Every access of a kernel, in the initcheck: writes mark, reads check.
 * The allocation is this thread's last one while the table is unchanged,
 * found without the table's lock (a kernel's accesses run in a few
 * allocations: the lock and the walk on each were most of the check).
 */
static void null_init_access(uintptr_t address, uint32_t size, bool write)
{
    struct null_init_cache *c = &null_init_cache;
    uint64_t first, end, unwritten;

    if ((c->generation != atomic_load(&null_allocs_generation) ||
         address - c->base >= c->bytes) &&
        !null_init_cache_fill(address, c))
        return;
    first = address - c->base;
    end = size > c->bytes - first ? c->bytes : first + size;
    if (write) {
        null_shadow_mark(c->written, first, end);
        return;
    }
    unwritten = null_shadow_first_clear(c->written, first, end);
    if (unwritten < end)
        null_init_report(address, size, c->base + unwritten);
}

/* ---- the race check's reports ---- */

static bool null_race_may_race(uintptr_t address, bool other_block)
{
    struct null_alloc alloc;

    if (!other_block)
        return !accel__null_block_on_stack(address);
    return null_alloc_find(address, &alloc) && !alloc.freed &&
           address >= alloc.base && address - alloc.base < alloc.bytes;
}

/* "block (x,y,z) thread (x,y,z)" of a linear block and thread of the launch. */
static void null_race_name(const struct null_where *where, uint64_t block,
                           uint32_t thread, char *buf, size_t size)
{
    uint64_t gx = where->grid_dim[0], gy = where->grid_dim[1];
    uint32_t bx = where->block_dim[0], by = where->block_dim[1];

    snprintf(buf, size,
             "block (%" PRIu64 ",%" PRIu64 ",%" PRIu64 ") thread (%u,%u,%u)",
             block % gx, block / gx % gy, block / gx / gy, thread % bx,
             thread / bx % by, thread / bx / by);
}

/*
 * A race: one line naming both accesses, then the process ends, as an ASan
 * report does (what the kernel computed cannot be trusted).
 */
static void null_race_report(uintptr_t address, uint32_t size,
                             const struct accel_race_access *now,
                             const struct accel_race_access *then)
{
    char target[400], who[96], other[96], line[1024];
    struct null_where where;
    int length;

    if (!accel__null_block_where(&where))
        return;
    null_race_name(&where, now->block, now->thread, who, sizeof(who));
    null_race_name(&where, then->block, then->thread, other, sizeof(other));
    null_describe_target(&where, address, target, sizeof(target));
    length = snprintf(
        line, sizeof(line),
        "accel-check: data race: kernel '%s' %s: %s of %u bytes at 0x%" PRIxPTR
        " %s: races with a %s by %s, %s\n",
        where.kernel_name, who, now->write ? "WRITE" : "READ", size, address,
        target, then->write ? "WRITE" : "READ", other,
        then->block == now->block
            ? "a thread of the same block, with no barrier between them"
            : "another block of the same launch (blocks are not ordered: "
              "use an atomic)");
    if (length > 0 && write(2, line,
                            (size_t)length < sizeof(line) ? (size_t)length
                                                          : sizeof(line) - 1) < 0)
        length = 0;
    abort();
}

/*
 * At the plugin's unload: ASan must not call back into code about to go,
 * and the tables go with it.
 */
__attribute__((destructor)) static void null_check_unload(void)
{
    if (null_asan_found)
        null_asan.set_error_report_callback(NULL);
    for (size_t i = 0; i < null_params_count; i++)
        free(null_params[i].text);
    free(null_params);
    for (size_t i = 0; i < null_alloc_count; i++)
        free(null_allocs[i].written);
    free(null_allocs);
    for (size_t i = 0; i < null_init_deferred_count; i++)
        free(null_init_deferred[i]);
    free(null_init_deferred);
}
