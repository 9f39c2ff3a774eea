/*
 * The null plugin's shared internals: the plugin and device objects, the
 * list that tracks what a device owns, and the table entries that live in
 * the other files. Nothing here crosses the plugin boundary except through
 * the table in null_plugin.c.
 */
#ifndef ACCEL_NULL_PLUGIN_H
#define ACCEL_NULL_PLUGIN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <accel/driver.h>

/* The most devices ACCEL_NULL_DEVICES may ask for. */
#define NULL_DEVICES_MAX 64u

/* An intrusive doubly linked list; a head is a link that points to itself. */
struct null_list {
    struct null_list *prev;
    struct null_list *next;
};

#define null_container_of(ptr, type, member)                                   \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

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

struct accel_drv_plugin {
    const struct accel_host_services *services;
    uint32_t device_count;
    /* Why there are no devices; empty while there are some. */
    char no_device_reason[160];
    /* What every device reports, except its name. */
    struct accel_device_props props;
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
};

static inline const struct accel_host_services *
null_services(const accel_drv_device *device)
{
    return device->plugin->services;
}

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

/* ---- table entries, null_memory.c ---- */

accel_status accel__null_mem_alloc(accel_drv_device *device, uint64_t bytes,
                                   accel_drv_mem **out_mem, uint64_t *out_address);
void accel__null_mem_free(accel_drv_device *device, accel_drv_mem *mem);
accel_status accel__null_host_alloc(accel_drv_device *device, size_t bytes,
                                    void **out_ptr);
void accel__null_host_free(accel_drv_device *device, void *ptr);

/* ---- table entries, null_stream.c ---- */

accel_status accel__null_stream_create(accel_drv_device *device,
                                       accel_drv_stream **out_stream);
void accel__null_stream_destroy(accel_drv_device *device, accel_drv_stream *stream);
accel_status accel__null_stream_sync(accel_drv_device *device,
                                     accel_drv_stream *stream);
accel_status accel__null_event_create(accel_drv_device *device,
                                      accel_drv_event **out_event);
void accel__null_event_destroy(accel_drv_device *device, accel_drv_event *event);
accel_status accel__null_event_record(accel_drv_device *device, accel_drv_event *event,
                                      accel_drv_stream *stream);
accel_status accel__null_event_query(accel_drv_device *device, accel_drv_event *event);
accel_status accel__null_event_sync(accel_drv_device *device, accel_drv_event *event);
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
accel_status accel__null_host_func(accel_drv_device *device, accel_drv_stream *stream,
                                   void (*fn)(void *user), void *user);

#endif /* ACCEL_NULL_PLUGIN_H */
