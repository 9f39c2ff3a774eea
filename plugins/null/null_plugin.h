/*
 * The null plugin's shared internals: the plugin and device objects, the
 * list that tracks what a device owns, and the table entries that live in
 * the other files. Nothing here crosses the plugin boundary except through
 * the table in null_plugin.c.
 */
#ifndef ACCEL_NULL_PLUGIN_H
#define ACCEL_NULL_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>

#include "null_fault.h"

/* The most devices ACCEL_NULL_DEVICES may ask for. */
#define NULL_DEVICES_MAX 64u
/* The most threads ACCEL_NULL_THREADS may ask for. */
#define NULL_THREADS_MAX 1024u
/* The longest ACCEL_NULL_DELAY_US: ten seconds. */
#define NULL_DELAY_US_MAX 10000000u
/*
 * Dynamic shared memory per block, as a GPU offers. Each thread that runs
 * blocks keeps a buffer of this size on its stack.
 */
#define NULL_MAX_SHARED_BYTES (48u * 1024u)

struct null_pool;

/* An intrusive doubly linked list; a head is a link that points to itself. */
struct null_list {
    struct null_list *prev;
    struct null_list *next;
};

#define null_container_of(ptr, type, member)                                   \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void null_list_init(struct null_list *head)
{
    head->prev = head;
    head->next = head;
}

static inline void null_list_insert(struct null_list *head, struct null_list *link)
{
    link->prev = head;
    link->next = head->next;
    head->next->prev = link;
    head->next = link;
}

static inline void null_list_remove(struct null_list *link)
{
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link;
    link->next = link;
}

/* The first element, or NULL when the list is empty. */
static inline struct null_list *null_list_first(struct null_list *head)
{
    return head->next != head ? head->next : NULL;
}

/*
 * Take every element off the list and hand each link to `free_link`, which
 * owns it from then on; how many there were.
 */
static inline uint32_t null_list_drain(struct null_list *head,
                                       void (*free_link)(struct null_list *link))
{
    struct null_list *link;
    uint32_t count = 0;

    while ((link = null_list_first(head)) != NULL) {
        null_list_remove(link);
        free_link(link);
        count++;
    }
    return count;
}

struct accel_drv_plugin {
    const struct accel_host_services *services;
    uint32_t device_count;
    /* Why there are no devices; empty while there are some. */
    char no_device_reason[160];
    /* What every device reports, except its name and uuid. */
    struct accel_device_props props;
    /* The machine's identity (machine-id, else the host name), hashed: each
     * device's uuid is derived from it and the device's index. */
    uint64_t machine_hash;
    /* Host threads that run one grid's blocks, the stream's own included. */
    uint32_t threads;
    /* The stack of each fiber that runs a kernel's thread (ACCEL_NULL_STACK_KB). */
    size_t stack_bytes;
    /* Added before every command a stream worker runs (ACCEL_NULL_DELAY_US). */
    uint64_t delay_ns;
    /*
     * The worker pool, shared by every device (they are all this machine).
     * Started by the first module load, so that a program that never runs
     * a kernel starts no threads for it; NULL until then, and always when
     * `threads` is 1. `lock` guards its creation.
     */
    pthread_mutex_t lock;
    _Atomic(struct null_pool *) pool;
    /* The fault-injection knobs and the calls counted (null_fault.h). */
    struct null_faults faults;
    /* ACCEL_NULL_CHECK: enum null_check_mode (null_check.h). */
    uint32_t check;
};

struct accel_drv_device {
    accel_drv_plugin *plugin;
    uint32_t index;
    /*
     * Everything made on the device, so that device_close can free what a
     * careless host left behind. `lock` guards the lists only.
     */
    pthread_mutex_t lock;
    struct null_list mems;
    struct null_list host_blocks;
    struct null_list streams;
    struct null_list events;
    struct null_list modules;
    /*
     * Set when ACCEL_NULL_LOSE_AT makes the device lost, cleared by
     * device_reset. While it is set every entry on the device fails with
     * ACCEL_ERR_DEVICE_LOST and the stream workers drop what they have not
     * started.
     */
    _Atomic bool lost;
};

static inline const struct accel_host_services *
null_services(const accel_drv_device *device)
{
    return device->plugin->services;
}

/*
 * Reading the ACCEL_NULL_* variables. A whole number from 0 to `max` (at
 * most 10^18), written as the `length` characters at `text`, digits only:
 * true with *out_value set, else false with *out_value 0.
 */
bool accel__null_parse_whole(const char *text, size_t length, uint64_t max,
                             uint64_t *out_value);
/*
 * Keep as the plugin's reason for having no devices that variable `name`
 * has the bad value `text`: "NAME='text' " (the value cut at 40 characters,
 * then "..."), followed by `format` filled in.
 */
void accel__null_reason_bad_value(accel_drv_plugin *plugin, const char *name,
                                  const char *text, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Add `link` to one of the device's lists, or take it off, under its lock. */
void accel__null_device_track(accel_drv_device *device, struct null_list *list,
                              struct null_list *link);
void accel__null_device_untrack(accel_drv_device *device, struct null_list *link);

/*
 * Free whatever the host left on a closing device; each returns how many
 * objects it freed. Nothing else may use the device any more.
 */
uint32_t accel__null_memory_release_all(accel_drv_device *device);
uint32_t accel__null_streams_release_all(accel_drv_device *device);
uint32_t accel__null_events_release_all(accel_drv_device *device);
uint32_t accel__null_modules_release_all(accel_drv_device *device);

/*
 * The plugin's worker pool, started on first use; *out_pool is NULL when
 * the plugin runs grids on the stream workers alone (ACCEL_NULL_THREADS=1).
 * Errors: ACCEL_ERR_OUT_OF_HOST_MEMORY.
 */
accel_status accel__null_plugin_pool(accel_drv_plugin *plugin,
                                     struct null_pool **out_pool);

/* ---- table entries, null_memory.c ---- */

accel_status accel__null_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                   accel_drv_mem **out_mem,
                                   uint64_t *out_address);
void accel__null_mem_free(accel_drv_device *device, accel_drv_mem *mem);
accel_status accel__null_host_alloc(accel_drv_device *device, size_t bytes,
                                    void **out_ptr);
void accel__null_host_free(accel_drv_device *device, void *ptr);

/* ---- table entries, null_stream.c ---- */

accel_status accel__null_stream_create(accel_drv_device *device,
                                       accel_drv_stream **out_stream);
void accel__null_stream_destroy(accel_drv_device *device,
                                accel_drv_stream *stream);
accel_status accel__null_stream_sync(accel_drv_device *device,
                                     accel_drv_stream *stream);
accel_status accel__null_event_create(accel_drv_device *device,
                                      accel_drv_event **out_event);
void accel__null_event_destroy(accel_drv_device *device, accel_drv_event *event);
accel_status accel__null_event_record(accel_drv_device *device,
                                      accel_drv_event *event,
                                      accel_drv_stream *stream);
accel_status accel__null_event_query(accel_drv_device *device,
                                     accel_drv_event *event);
accel_status accel__null_event_sync(accel_drv_device *device,
                                    accel_drv_event *event);
accel_status accel__null_stream_wait_event(accel_drv_device *device,
                                           accel_drv_stream *stream,
                                           accel_drv_event *event);
accel_status accel__null_copy_to_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        const void *src,
                                        const struct accel_copy_layout *layout);
accel_status accel__null_copy_to_host(accel_drv_device *device,
                                      accel_drv_stream *stream, void *dst,
                                      uint64_t src,
                                      const struct accel_copy_layout *layout);
accel_status accel__null_copy_on_device(accel_drv_device *device,
                                        accel_drv_stream *stream, uint64_t dst,
                                        uint64_t src,
                                        const struct accel_copy_layout *layout);
accel_status accel__null_fill(accel_drv_device *device, accel_drv_stream *stream,
                              uint64_t dst, uint64_t bytes, const void *pattern,
                              uint32_t pattern_size);
accel_status accel__null_event_elapsed(accel_drv_device *device,
                                       accel_drv_event *start,
                                       accel_drv_event *end, int64_t *out_ns);
/* Kind CPU, the device's index, and the stream's queue as its handle. */
accel_status accel__null_native_handles(accel_drv_device *device,
                                        accel_drv_stream *stream,
                                        struct accel_native_handles *out);
accel_status accel__null_host_func(accel_drv_device *device,
                                   accel_drv_stream *stream,
                                   void (*fn)(void *user), void *user);
accel_status accel__null_launch(accel_drv_device *device,
                                accel_drv_stream *stream,
                                accel_drv_kernel *kernel,
                                const struct accel_launch_config *config,
                                void *const *args, const size_t *arg_sizes,
                                uint32_t nargs);

/* ---- table entries, null_module.c ---- */

/* Kernel source through the system C compiler (null_compile.c). */
accel_status
accel__null_module_compile(accel_drv_device *device,
                           const struct accel_compile_request *request);
accel_status accel__null_compiler_identity(accel_drv_device *device,
                                           char *out_identity, size_t capacity);
accel_status accel__null_module_load(accel_drv_device *device, const void *image,
                                     size_t size, accel_drv_module **out_module);
void accel__null_module_unload(accel_drv_device *device,
                               accel_drv_module *module);
accel_status accel__null_kernel_get(accel_drv_device *device,
                                    accel_drv_module *module, const char *name,
                                    accel_drv_kernel **out_kernel,
                                    struct accel_kernel_signature *out_signature);

#endif /* ACCEL_NULL_PLUGIN_H */
