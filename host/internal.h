/*
 * libaccel's internal interfaces, shared between the host modules.
 * Nothing here is exported: internal non-static names start with accel__.
 */
#ifndef ACCEL_HOST_INTERNAL_H
#define ACCEL_HOST_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "accel/accel.h"
#include "pool.h"
#include "trace.h"

/* ---- errors and logging (status.c, log.c) ---- */

/*
 * Record `status` and a formatted detail as the calling thread's last error
 * and return `status`, so that a caller can `return accel__error(...)`.
 */
accel_status accel__error(accel_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * For a plugin call `what` that failed with `status`: keep the detail the
 * plugin recorded, or record a plain one if it recorded none.
 */
accel_status accel__error_keep(accel_status status, const char *what);
/* True for a value that is one of the codes of ACCEL_STATUS_LIST. */
bool accel__status_is_known(int status);
accel_status accel__plugin_failed(accel_status status, const char *what);

/*
 * Take a status a plugin entry `what` returned: ACCEL_OK passes; a known
 * code keeps the plugin's detail; a value outside the list is the plugin's
 * fault and becomes ACCEL_ERR_PLUGIN_ABI.
 */
static inline accel_status accel__from_plugin(accel_status status,
                                              const char *what)
{
    if (status == ACCEL_OK)
        return ACCEL_OK;
    return accel__plugin_failed(status, what);
}

void accel__log(accel_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool accel__log_enabled(accel_log_level level);

/*
 * The minor this host speaks and the services it hands plugins. A test
 * build (ACCEL_HOST_NEXT_MINOR_FIXTURE, tests/test-next-minor-host.c)
 * raises both by one, as the next minor's host would be, to show that an
 * older plugin still loads on it; the library itself never does.
 */
#ifdef ACCEL_HOST_NEXT_MINOR_FIXTURE
#define ACCEL__HOST_MINOR (ACCEL_DRIVER_ABI_MINOR + 1)
struct accel__host_services {
    struct accel_host_services v1;
    uint32_t next_minor_service;
};
#else
#define ACCEL__HOST_MINOR ACCEL_DRIVER_ABI_MINOR
struct accel__host_services {
    struct accel_host_services v1;
};
#endif

/* The services table every plugin receives. */
extern const struct accel_host_services accel__services;

/* ---- the few OS calls (os.c) ---- */

/*
 * The process's real and effective ids. They decide whether the process runs
 * with elevated privileges, and which owners a plugin file may have. Passed
 * as a value, so that tests can present a privileged process's ids.
 */
struct accel__ids {
    uid_t ruid, euid;
    gid_t rgid, egid;
};

void accel__ids_current(struct accel__ids *out_ids);
/* Real and effective user or group ids differ (setuid, setgid, seteuid). */
bool accel__ids_elevated(const struct accel__ids *ids);
/*
 * The environment as a process with `ids` may read it: NULL when the ids are
 * elevated, else secure_getenv (NULL in a setuid, setgid or file-capability
 * program). Every variable libaccel and its plugins read goes through here.
 */
const char *accel__getenv_as(const struct accel__ids *ids, const char *name);
/* accel__getenv_as with the process's current ids. */
const char *accel__getenv(const char *name);
/* The directory holding libaccel itself, malloc'd; NULL if unknown. */
char *accel__library_dir(void);
/* The monotonic clock, in nanoseconds. */
uint64_t accel__now_ns(void);
/* malloc'd printf. NULL when out of memory. */
char *accel__strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* ---- plugins (loader.c) ---- */

/* One candidate plugin file and, when opened, its plugin. */
struct accel__plugin {
    char *path;
    char *name;
    char *reason;
    accel_plugin_state state_kind;
    char *version;                      /* a copy; NULL unless opened */
    uint16_t abi_major, abi_minor;      /* the table's; 0 unless opened */
    char *optional_entries;             /* "host_func, ..."; NULL unless opened */
    int32_t priority;
    uint64_t dev, ino;                  /* the file, to open it only once */
    void *dl;                           /* dlopen handle, NULL unless opened */
    int fd;                             /* the file dl was loaded from; -1 */
    struct accel_driver_v1 drv;         /* the table, zero past struct_size */
    accel_drv_plugin *state;            /* from plugin_open */
    uint32_t device_count;
};

/* What discovery found: parallel arrays, the public view and ours. */
struct accel__catalog {
    const struct accel_host_services *services; /* what plugin_open gets */
    char **search;                      /* the search path, in order */
    size_t search_count;
    struct accel__plugin *plugins;
    accel_plugin_info *infos;
    size_t count;
};

/* What an item's term names a device by (select_parse.c has the grammar). */
enum accel__term_kind {
    ACCEL__TERM_NONE = 0, /* "cuda": the plugin's first device not excluded */
    ACCEL__TERM_INDEX,    /* "cuda:1" */
    ACCEL__TERM_UUID,     /* "cuda:GPU-5b1c": a prefix of the uuid */
    ACCEL__TERM_PCI,      /* "cuda:pci=0000:41:00.0", normalized */
    ACCEL__TERM_NAME      /* "hip:name=*MI300*", an fnmatch glob */
};

/* Room for a term's text (a uuid prefix, a bus id or a glob), with the NUL. */
#define ACCEL__TERM_TEXT_MAX 128

/* One item of a backend selection: [!]name[:term], name "*" for any plugin. */
struct accel__backend_item {
    char name[ACCEL_PLUGIN_NAME_MAX + 1];
    bool exclude;                       /* "!": the item's devices are never picked */
    bool any;                           /* the name is "*" */
    enum accel__term_kind kind;
    uint32_t index;                     /* ACCEL__TERM_INDEX */
    char text[ACCEL__TERM_TEXT_MAX];    /* UUID, PCI, NAME */
    char source[ACCEL__TERM_TEXT_MAX + ACCEL_PLUGIN_NAME_MAX + 4]; /* as written */
};

/*
 * Find every candidate on the search path and open those `wanted` names
 * (all when wanted_count is zero and open_all is true; none when open_all is
 * false and wanted_count is zero). `ids` decide which owners a plugin file
 * may have and whether ACCEL_ALLOW_INSECURE_PLUGINS is read.
 */
accel_status accel__catalog_load(struct accel__catalog *catalog,
                                 const struct accel_host_services *services,
                                 const struct accel__ids *ids,
                                 const char *plugin_path,
                                 const struct accel__backend_item *wanted,
                                 size_t wanted_count, bool open_all);
void accel__catalog_unload(struct accel__catalog *catalog);
/*
 * The first candidate of that name not rejected (loaded, or skipped or
 * failed: see its state_kind), or NULL.
 */
struct accel__plugin *accel__catalog_find(struct accel__catalog *catalog,
                                          const char *name);
/* True for 1..31 characters of [a-z0-9_]. */
bool accel__plugin_name_valid(const char *name, size_t length);

/* ---- selection (select_parse.c, select.c) ---- */

#define ACCEL__BACKEND_ITEMS_MAX 64

/*
 * Parse a backend selection ("cuda", "hip:1, null"). NULL, empty or
 * white space only gives zero items. ACCEL_ERR_INVALID_ARGUMENT with the
 * reason for anything malformed.
 */
accel_status accel__backend_parse(const char *text,
                                  struct accel__backend_item *out_items,
                                  size_t *out_count);
/*
 * Whether discovery opens plugin `name` for these items: a plugin an item
 * names, or every plugin not wholly excluded ("!hip") when an item is "*"
 * or every item is an exclusion. Zero items: every plugin.
 */
bool accel__backend_wants(const struct accel__backend_item *items, size_t count,
                          const char *name);
/* The plugin's description of device `index`: zeroed first, strings ended (device.c). */
accel_status accel__plugin_device_props(struct accel__plugin *plugin, uint32_t index,
                                        struct accel_device_props *out_props);

/* ---- the host ---- */

/*
 * accel_host_create as a process with `ids` would run it: the environment
 * is read, and plugin files are checked, for those ids. accel_host_create
 * passes the process's own; tests pass others.
 */
accel_status accel__host_create_as(const accel_host_options *options,
                                   const struct accel__ids *ids,
                                   accel_host **out_host);

/*
 * The calling process's id: set at the first host's creation and again in
 * the child of every fork() (a pthread_atfork handler). A host and its
 * devices keep the id of the process that made them; a call from another
 * process (a fork's child) is refused, since the threads the objects rely
 * on (plugin stream workers, the callback thread) exist only in the parent.
 */
extern pid_t accel__pid;
/* ACCEL_ERR_NOT_SUPPORTED with its detail, for `what` called after fork. */
accel_status accel__forked(const char *what);

/* ACCEL_OK when `owner` is this process: one load and a compare. */
static inline accel_status accel__process_check(pid_t owner, const char *what)
{
    if (__builtin_expect(owner == accel__pid, 1))
        return ACCEL_OK;
    return accel__forked(what);
}

struct accel_host {
    pid_t pid;                          /* the process that made it */
    struct accel__catalog catalog;
    struct accel__backend_item items[ACCEL__BACKEND_ITEMS_MAX];
    size_t item_count;
    accel_status parse_status;          /* of the selection text */
    char *parse_error;

    pthread_mutex_t lock;               /* guards `devices` */
    struct accel_device *devices;       /* open devices, a list */
    /* What this host's plugins receive: the shared services, with this
     * host's minor and its privilege and opt-in. */
    struct accel__host_services services;
};

/* ---- devices, refs, streams (device.c, refs.c, stream.c) ---- */

/* One allocation behind a ref. */
struct accel__slot {
    uint32_t generation; /* bumped at each free; starts at 1 */
    bool live;
    bool pinned;         /* its native address was handed out: never moved */
    uint32_t type;
    uint64_t count;
    uint64_t bytes;
    struct accel__slice slice; /* where it is now; the pool may move it */
    uint64_t lanes;      /* streams that enqueued work on it (lane bits) */
};

struct accel__ref_table {
    struct accel__slot *slots;
    uint32_t capacity;
    uint32_t used;       /* slots ever handed out: [0, used) */
    uint32_t *free_list; /* indexes of dead slots to reuse */
    uint32_t free_count;
};

struct accel__host_block {
    void *ptr;
    size_t bytes;
};

/*
 * Streams have a lane: a bit that refs record when work on the stream
 * uses them. Lanes 0..62 are a stream's own; later streams share lane 63.
 */
#define ACCEL__LANES 64

/*
 * The callbacks of one stream, counted, so that a sync can wait for those
 * enqueued before it (completion.c). Shared by the stream, its callback
 * records, and the events and waiters that wait for them; the last to let
 * go frees it. Every field under the completion lock.
 */
struct accel__cb_counter {
    uint64_t added;          /* callbacks enqueued on the stream */
    uint64_t done;           /* of those, the ones that have run */
    uint32_t refs;
    bool running;            /* one of them runs now, on `runner` */
    pthread_t runner;
};

/* The callbacks of a stream enqueued before some point: done >= target. */
struct accel__cb_point {
    struct accel__cb_counter *counter; /* NULL: nothing to wait for */
    uint64_t target;
};

struct accel_stream {
    struct accel_device *device;
    accel_drv_stream *drv;   /* NULL while the device is lost */
    uint32_t lane;
    /* Made at the first callback; device lock. */
    struct accel__cb_counter *callbacks;
    struct accel_stream *next;
};

static inline uint64_t accel__lane_bit(const struct accel_stream *stream)
{
    return 1ull << stream->lane;
}

/* Events the host records for itself, waited for together. */
struct accel__fence {
    accel_drv_event **events;
    uint32_t count;
};

/* Memory waiting on the drop queue for its fence. */
struct accel__drop {
    struct accel__slice slice;  /* a freed slice, or */
    struct accel__page *page;   /* a page emptied by relocation */
    uint64_t bytes;
    struct accel__fence fence;
    struct accel__drop *next;
};

#define ACCEL__STAGING_MAX_BUFFERS 8

struct accel__staging_buffer {
    void *ptr;                 /* pinned, `chunk` bytes */
    accel_drv_event *event;    /* recorded behind its last transfer */
};

struct accel__staging {
    struct accel__staging_buffer idle[ACCEL__STAGING_MAX_BUFFERS];
    uint32_t idle_count;
    uint32_t total;            /* idle and checked out */
    uint64_t chunk;
    pthread_cond_t returned;   /* with the device lock */
};

struct accel_event {
    struct accel_device *device;
    accel_drv_event *drv;    /* NULL while the device is lost */
    /* The callbacks enqueued before the event's last record: it completes
     * only once they have run. Device lock; `callbacks_pending` is read
     * without it by the lockless query. */
    struct accel__cb_point callbacks;
    _Atomic bool callbacks_pending;
    bool recorded;           /* since its plugin event was made; device lock */
    struct accel_event *next;
};

/* Completion callbacks of one device (completion.c). */
struct accel__callback;
struct accel__completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_cond_t ran;                  /* a callback ran, or became ready */
    struct accel__callback *outstanding; /* enqueued, not yet reached */
    struct accel__callback *ready;       /* reached, to be run, in order */
    struct accel__callback *ready_tail;
    size_t ready_count;
    pthread_t thread;
    bool thread_running;
    bool stopping;
    int fd;                              /* eventfd in fd mode, else -1 */
};

accel_status accel__completion_init(struct accel__completion *completion);
/* Deliver what is left (as lost), stop the thread, free. */
void accel__completion_deinit(struct accel__completion *completion);
/* Callbacks whose streams are gone are delivered as lost. */
void accel__completion_abandon(struct accel__completion *completion);
/* Before a close: drop loss callbacks not yet run, stop the thread. */
void accel__completion_quiesce(struct accel__completion *completion);
/*
 * The point after the callbacks `counter` has counted so far (NULL, or
 * all of them run: an empty point). Takes a reference; give it back with
 * accel__cb_point_release. Any lock but the completion's may be held.
 */
void accel__cb_point_take(struct accel__completion *completion,
                          struct accel__cb_counter *counter,
                          struct accel__cb_point *out_point);
/* A second reference to the same point. */
void accel__cb_point_copy(struct accel__completion *completion,
                          const struct accel__cb_point *point,
                          struct accel__cb_point *out_point);
void accel__cb_point_release(struct accel__completion *completion,
                             struct accel__cb_point *point);
/* True once every callback before the point has run. */
bool accel__cb_point_reached(struct accel__completion *completion,
                             const struct accel__cb_point *point);
/* True when this thread is inside one of the point's stream's callbacks. */
bool accel__cb_point_running_here(struct accel__completion *completion,
                                  const struct accel__cb_point *point);
/*
 * Wait until every callback before the point has run, at most until
 * `deadline_ns` (accel__now_ns; UINT64_MAX: no limit). In fd mode, and on
 * the thread that runs callbacks, the caller runs the ready ones of that
 * stream itself. No device lock may be held: a callback may use the device.
 */
accel_status accel__cb_point_wait(struct accel__completion *completion,
                                  const struct accel__cb_point *point,
                                  uint64_t deadline_ns);
/* Queue on_loss(device, generation, status, user) where callbacks run. */
void accel__completion_notify_loss(struct accel__completion *completion,
                                   accel_device *device, accel_loss_callback on_loss,
                                   void *user, uint32_t generation,
                                   accel_status status);

/* Loss bookkeeping and automatic recovery (recovery.c); device lock held. */
struct accel__recovery {
    accel_recovery_policy policy;
    uint64_t losses[ACCEL_RECOVERY_MAX_LOSSES + 1]; /* times, a ring */
    uint32_t first, count;
    /* Plugin objects in use outside the device lock: a reset waits for them. */
    uint32_t borrowed;
    bool pending;                     /* lost; rebuild once this thread may */
    _Atomic bool unrecoverable;
};

struct accel_device {
    accel_host *host;
    pid_t pid;                          /* the host's, here for one load */
    struct accel__plugin *plugin;
    const struct accel_driver_v1 *drv;
    accel_drv_device *drv_device;
    uint32_t index;
    uint32_t id;
    struct accel_device_props props;

    /* The device lock: the ref table, the object lists, the state. */
    pthread_mutex_t lock;
    _Atomic uint32_t generation;
    _Atomic bool lost;
    /*
     * A reset is under way, the application's or the host's after a loss,
     * made by `resetter`. It is not a loss: calls that begin meanwhile wait
     * for it (accel__device_reset_wait), and the lockless query treats it
     * as it treats `lost`. Written under the lock.
     */
    _Atomic bool resetting;
    pthread_t resetter;
    /*
     * Calls into the plugin made without the lock (event queries): a
     * rebuild marks the device lost, then waits until none is left before
     * it changes a plugin object (accel__lockless_drain).
     */
    _Atomic uint32_t lockless_calls;
    struct accel__ref_table refs;
    struct accel__pool pool;
    struct accel_stream *streams;
    uint64_t lanes_taken;
    struct accel_event *events;
    struct accel_module *modules;
    /* The host's own work: relocations, and the synchronous transfers of
     * copies between plugins. Made when first needed. */
    accel_drv_stream *internal;
    accel_drv_event *relocated;   /* recorded behind the last relocation */
    accel_drv_event **spare_events;
    size_t spare_event_count;
    size_t spare_event_capacity;
    struct accel__drop *drops;    /* oldest first */
    uint32_t drop_count;
    uint64_t drop_bytes;
    struct accel__staging staging;
    struct accel__completion completion;
    struct accel__host_block *host_blocks;
    size_t host_block_count;
    size_t host_block_capacity;
    struct accel__recovery recovery;
    struct accel__trace_device *trace; /* ACCEL_TRACE's part; NULL when off */

    struct accel_device *next; /* in host->devices */
};

/*
 * After a plugin call failed with `status`: if the device reports itself
 * lost, mark it lost (bumping the generation, so refs go stale) and return
 * ACCEL_ERR_DEVICE_LOST (ACCEL_ERR_UNRECOVERABLE once so marked); else
 * return `status`. Call with the lock held, and no other device's: a new
 * loss goes to its recovery policy, which may rebuild the device (and let
 * go of the lock meanwhile) before this returns.
 */
accel_status accel__device_check_loss(accel_device *device, accel_status status);
/*
 * The same for a call made without the device lock: the lock is taken for
 * the check only when `status` is a failure. Call with no device lock held,
 * since a recovery may wait for other threads.
 */
accel_status accel__device_check_loss_unlocked(accel_device *device,
                                               accel_status status);
/*
 * Wait while another thread resets the device, unless this thread holds
 * borrowed objects (the reset waits for those: it goes on, and its refs are
 * stale already). Lock held; it is let go while waiting.
 */
void accel__device_reset_wait(accel_device *device);
/*
 * After accel__device_reset_wait: ACCEL_ERR_DEVICE_LOST (or UNRECOVERABLE)
 * with its detail, else ACCEL_OK. Lock held.
 */
accel_status accel__device_usable(accel_device *device);
/* The error for a handle whose plugin object is gone with the device. */
accel_status accel__device_gone(const accel_device *device, const char *what);
/*
 * The heart of a reset: wait for other threads' borrowed objects (the lock
 * is let go meanwhile), empty the device, reset it through the plugin, and
 * rebuild streams, events and modules. Lock held.
 */
accel_status accel__device_rebuild(accel_device *device);

/*
 * A loss was just marked: count it and recover as the policy says. Lock
 * held; it may rebuild the device before returning.
 */
void accel__recovery_on_loss(accel_device *device);
/* Forget the loss history and the unrecoverable mark (a manual reset). */
void accel__recovery_forgive(accel_device *device);
/*
 * A plugin object taken out from under the lock for a call made without it
 * (a sync, a wait, staging buffers). Lock held for both; giving the last
 * one back is when a recovery put off by this thread runs.
 */
void accel__borrow_begin(accel_device *device);
void accel__borrow_end(accel_device *device);
/* Let go of the device lock, then make the mem_free of the pages taken out
 * of the pool under it (pool.c), the device borrowed meanwhile. */
void accel__device_unlock(accel_device *device);
/* Wait until no other thread holds a borrowed object; lock held. */
void accel__borrowed_wait(accel_device *device);
/* True while the calling thread holds a borrowed object of any device. */
bool accel__borrowing_here(void);
/* Wait for the calls made without the lock; `lost` is already set. */
void accel__lockless_drain(accel_device *device);

/* Ref table; every call with the device lock held. */
void accel__refs_init(struct accel__ref_table *table);
/* Free every live allocation through the plugin, then the table. */
void accel__refs_release_all(accel_device *device);
void accel__refs_deinit(struct accel__ref_table *table);
/* Validate `ref` against the device; on success the slot. */
accel_status accel__ref_resolve(accel_device *device, accel_ref ref,
                                struct accel__slot **out_slot);
/* ACCEL_ERR_FREED_REF for a ref no device ever minted (a zeroed one). */
accel_status accel__ref_unminted(accel_ref ref);

/* Streams and events: drop and rebuild the plugin's objects at reset. */
void accel__streams_release(accel_device *device);
/* Wait for every user stream, failures ignored (a lost device completes
 * nothing); device lock held. */
void accel__streams_wait_all(accel_device *device);
accel_status accel__streams_rebuild(accel_device *device);
/* The callback point of every stream that has had callbacks; lock held. */
accel_status accel__streams_cb_points(accel_device *device,
                                      struct accel__cb_point **out_points,
                                      size_t *out_count);
/* After device work that ended with `status`, wait for the points' callbacks
 * (unless it failed) and let go of them; no device lock held. */
accel_status accel__cb_points_finish(accel_device *device, accel_status status,
                                     struct accel__cb_point *points, size_t count);

/*
 * Begin a submission on a stream: take the device lock and check that the
 * device and stream can take work. On failure the lock is not held.
 */
accel_status accel__submit_begin(accel_stream *stream, const char *what);
/* End it: check a failure for device loss, release the lock. */
accel_status accel__submit_end(accel_stream *stream, accel_status status);

/* ---- the drop queue and internal events (drop.c), device lock held ---- */

accel_status accel__event_take(accel_device *device, accel_drv_event **out_event);
void accel__event_give(accel_device *device, accel_drv_event *event);
void accel__events_release(accel_device *device);
/* Record an event on each stream whose lane is in `lanes`. */
accel_status accel__fence_lanes(accel_device *device, uint64_t lanes,
                                struct accel__fence *out_fence);
accel_status accel__fence_stream(accel_device *device, accel_drv_stream *stream,
                                 struct accel__fence *out_fence);
/* Add an event recorded on `stream` to a fence. */
accel_status accel__fence_add(accel_device *device, struct accel__fence *fence,
                              accel_drv_stream *stream);
/* Give a fence's events back without waiting for them. */
void accel__fence_release(accel_device *device, struct accel__fence *fence);
/* Free a slice once the streams in `lanes` are past their current work. */
accel_status accel__drop_slice(accel_device *device, struct accel__slice slice,
                               uint64_t bytes, uint64_t lanes);
/* Free an emptied page once `fence` has completed; takes the fence. */
void accel__drop_page(accel_device *device, struct accel__page *page,
                      struct accel__fence *fence);
/* Release what has completed; with `wait`, wait for everything first. */
void accel__drop_collect(accel_device *device, bool wait);
/* Forget every entry (reset, close): the pool's release frees the memory. */
void accel__drop_release_all(accel_device *device);

/* ---- modules (module.c), device lock held ---- */

/* Unload the plugin's modules (reset, close); the handles stay. */
void accel__modules_release(accel_device *device);
/* Load them again after a reset. */
accel_status accel__modules_rebuild(accel_device *device);
/* Free the handles (close). */
void accel__modules_free(accel_device *device);

/* ---- relocation (compact.c), device lock held ---- */

accel_status accel__compact(accel_device *device, uint32_t *out_moved_pages);
/* Make the device's internal stream unless it exists. */
accel_status accel__internal_stream(accel_device *device);

/* ---- staging (staging.c) ---- */

uint64_t accel__staging_chunk_from_env(void);
/* Copy between pageable host memory and a ref through pinned chunks. The
 * layout is normalized. Called without the device lock. */
accel_status accel__staged_copy(accel_stream *stream, accel_ref ref, void *host,
                                const struct accel_copy_layout *layout,
                                bool host_is_source);
/*
 * Copy between a ref of the stream's device and one of `there`, a device of
 * another plugin, through host memory; synchronous. `dst_here` says which
 * ref is the stream's. The layout is normalized and must be contiguous.
 */
accel_status accel__copy_through_host(accel_stream *stream, accel_device *there,
                                      accel_ref dst, accel_ref src,
                                      const struct accel_copy_layout *layout,
                                      bool dst_here);
/* Free the idle staging buffers (reset, close); device lock held. */
void accel__staging_release(accel_device *device);

/* ---- copies (layout.c) ---- */

/*
 * Check a layout and put it in the form a plugin receives: rows and depth
 * at least 1, every extent inside [0, src_limit) and [0, dst_limit) without
 * overflow, contiguous rows and slices folded into one row.
 */
accel_status accel__layout_normalize(const struct accel_copy_layout *layout,
                                     uint64_t src_limit, uint64_t dst_limit,
                                     struct accel_copy_layout *out_layout);
/* One row of `bytes`, already in normalized form. */
struct accel_copy_layout accel__layout_linear(uint64_t src_offset,
                                              uint64_t dst_offset, uint64_t bytes);
/* The bytes a normalized layout moves. */
static inline uint64_t accel__layout_bytes(const struct accel_copy_layout *layout)
{
    return layout->row_bytes * layout->rows * layout->depth;
}
/* The bytes [first, end) a normalized layout touches on each side. */
void accel__layout_span(const struct accel_copy_layout *layout, bool source,
                        uint64_t *out_first, uint64_t *out_end);

#endif /* ACCEL_HOST_INTERNAL_H */
