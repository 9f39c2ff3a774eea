/*
 * ACCEL_TRACE (trace.h): records kept per thread, commands placed by the
 * device's clock, the file written as one JSON array that stays valid
 * after every flush (each flush ends it with "]" and the next one writes
 * over that end).
 *
 * Locks, in the order they may be taken: a device's lock, `devices_lock`,
 * a device node's lock, `g.lock`. A flush places the devices' finished
 * commands first (devices_lock, each node) and only then writes (g.lock),
 * so that it never holds g.lock while it waits for a node. A thread's
 * records need no lock (see struct tbuf).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "host.h"
#include "os.h"
#include "status.h"
#include "stream.h"
#include "submit.h"
#include "trace.h"

_Atomic bool accel__trace_on;

/* Host threads are process 1; device N is process TRACE_DEVICE_PID + N. */
#define TRACE_HOST_PID 1u
#define TRACE_DEVICE_PID 2u
/* Commands waiting for their events are placed once this many are pending. */
#define TRACE_PLACE_BATCH 64u
#define TRACE_KERNEL_NAME 48u

enum rec_type { REC_API, REC_COMMAND, REC_MARK, REC_CALLBACK };

/* A launch's kernel and geometry, kept once for every launch like it. */
struct launch_info {
    const char *key; /* the kernel's name pointer when first seen */
    char kernel[TRACE_KERNEL_NAME];
    uint32_t grid[3], block[3];
    struct launch_info *next;
};

/* One record, kept small: a busy loop's trace fills memory fast, and
 * touching new pages is what a record costs most. */
struct rec {
    uint8_t type;
    uint8_t kind;      /* enum accel__trace_kind, for commands */
    bool device_timed; /* a command placed by the device's clock */
    int8_t status;
    uint32_t pid, tid;
    uint64_t ts, dur; /* ns, accel__now_ns's clock */
    union {
        uint64_t bytes;
        const struct launch_info *launch; /* launches */
    } u;
    const char *name; /* a static string */
};

/*
 * One thread's records: chunks that only its thread appends to, and that
 * a flush reads behind it without a lock (one writer, one reader). The
 * writer publishes each record with a release store of the chunk's count
 * and moves to a new chunk when one is full; the reader frees a chunk once
 * it has read it whole and the writer has moved on (its `next` is set).
 */
#define TRACE_CHUNK 1024u

struct chunk {
    _Atomic size_t count;
    struct chunk *_Atomic next;
    struct chunk *spare_next; /* in a spare list */
    struct rec recs[TRACE_CHUNK];
};

struct tbuf {
    uint32_t tid;
    struct chunk *tail;  /* the writer's */
    struct chunk *ready; /* the writer's: spare chunks taken from `spare` */
    struct chunk *head;  /* the reader's (g.lock) */
    size_t read;         /* records of head already read */
    /* Chunks the reader has read, for the writer to fill again: new pages
     * would cost a fault each. The reader pushes, the writer takes all. */
    struct chunk *_Atomic spare;
    struct tbuf *next;
};

/* A command waiting for its event. */
struct pending {
    accel_drv_event *event;
    uint64_t submit_ns;
    uint32_t lane;
    enum accel__trace_kind kind;
    uint64_t bytes;
    const struct launch_info *launch;
};

/* What the trace keeps of one open device. */
struct accel__trace_device {
    pthread_mutex_t lock;
    accel_device *device;
    uint32_t pid;
    bool untimable;          /* no event_elapsed, or the anchor failed */
    accel_drv_event *anchor; /* completed at anchor_ns; NULL: make one */
    uint64_t anchor_ns;
    struct pending *pending; /* a ring */
    size_t head, count, capacity;
    accel_drv_event **spare;
    size_t spare_count, spare_capacity;
    uint64_t last_end[ACCEL__LANES];
    struct launch_info *launches[64]; /* the last seen, by a hash */
    struct accel__trace_device *next;
};

/* A device's track name, kept for the file after the device closes. */
struct label {
    uint32_t pid;
    char text[96];
    struct label *next;
};

static struct {
    pthread_mutex_t lock;
    FILE *file;
    char *path;
    pid_t pid; /* the process that opened the file */
    uint64_t start_ns;
    bool wrote_any;
    struct tbuf *bufs;
    uint32_t next_tid;
    struct label *labels;
    struct launch_info *launches; /* every one made, kept to the end */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct accel__trace_device *devices;
static _Thread_local struct tbuf *self;

/* ---- records ---- */

static struct tbuf *tbuf_self(void)
{
    if (self != NULL)
        return self;
    struct tbuf *buf = calloc(1, sizeof *buf);
    struct chunk *first = malloc(sizeof *first);
    if (buf == NULL || first == NULL) {
        free(buf);
        free(first);
        return NULL;
    }
    atomic_init(&first->count, 0);
    buf->tail = buf->head = first;
    pthread_mutex_lock(&g.lock);
    buf->tid = ++g.next_tid;
    buf->next = g.bufs;
    g.bufs = buf;
    pthread_mutex_unlock(&g.lock);
    self = buf;
    return buf;
}

/* An empty chunk for the writer: a spare one, else a new one. */
static struct chunk *chunk_take(struct tbuf *buf)
{
    if (buf->ready == NULL)
        buf->ready = atomic_exchange_explicit(&buf->spare, NULL,
                                              memory_order_acquire);
    struct chunk *chunk = buf->ready;
    if (chunk != NULL)
        buf->ready = chunk->spare_next;
    else
        chunk = malloc(sizeof *chunk);
    if (chunk != NULL) {
        atomic_init(&chunk->count, 0);
        atomic_init(&chunk->next, NULL);
    }
    return chunk;
}

/* Give a chunk the reader has read back to its writer; g.lock held. */
static void chunk_give(struct tbuf *buf, struct chunk *chunk)
{
    struct chunk *top = atomic_load_explicit(&buf->spare, memory_order_relaxed);
    do
        chunk->spare_next = top;
    while (!atomic_compare_exchange_weak_explicit(
        &buf->spare, &top, chunk, memory_order_release, memory_order_relaxed));
}

/* Append a record to this thread's buffer; dropped when out of memory. */
static void rec_push(const struct rec *rec)
{
    struct tbuf *buf = tbuf_self();
    if (buf == NULL)
        return;
    struct chunk *chunk = buf->tail;
    size_t at = atomic_load_explicit(&chunk->count, memory_order_relaxed);
    if (at == TRACE_CHUNK) {
        struct chunk *fresh = chunk_take(buf);
        if (fresh == NULL)
            return;
        atomic_store_explicit(&chunk->next, fresh, memory_order_release);
        buf->tail = chunk = fresh;
        at = 0;
    }
    chunk->recs[at] = *rec;
    if (rec->pid == TRACE_HOST_PID)
        chunk->recs[at].tid = buf->tid;
    atomic_store_explicit(&chunk->count, at + 1, memory_order_release);
}

/* When this thread's current traced call began: a command's submission. */
static _Thread_local uint64_t call_begin;

_Thread_local const char *accel__api_call;

uint64_t accel__trace_now(void)
{
    call_begin = accel__now_ns();
    return call_begin;
}

void accel__trace_api(const char *name, uint64_t begin, accel_status status,
                      uint64_t bytes)
{
    uint64_t end = accel__now_ns();
    struct rec rec = {.type = REC_API,
                      .status = (int8_t)status,
                      .pid = TRACE_HOST_PID,
                      .ts = begin,
                      .dur = end - begin,
                      .u.bytes = bytes,
                      .name = name};
    rec_push(&rec);
}

void accel__trace_callback(uint64_t begin)
{
    if (begin == 0)
        return;
    struct rec rec = {.type = REC_CALLBACK,
                      .pid = TRACE_HOST_PID,
                      .ts = begin,
                      .dur = accel__now_ns() - begin,
                      .name = "callback"};
    rec_push(&rec);
}

void accel__trace_device_mark(accel_device *device, const char *what,
                              uint64_t bytes)
{
    if (!accel__tracing())
        return;
    struct rec rec = {.type = REC_MARK,
                      .pid = TRACE_DEVICE_PID + device->id,
                      .ts = accel__now_ns(),
                      .u.bytes = bytes,
                      .name = what};
    rec_push(&rec);
}

/* ---- placing commands by the device's clock (node lock held) ---- */

static accel_drv_event *spare_take(struct accel__trace_device *node)
{
    accel_device *device = node->device;
    accel_drv_event *event = NULL;
    if (node->spare_count > 0)
        return node->spare[--node->spare_count];
    if (ACCEL__DRV_TRY(device, event_create, &event) != ACCEL_OK)
        return NULL;
    return event;
}

static void spare_give(struct accel__trace_device *node, accel_drv_event *event)
{
    if (node->spare_count == node->spare_capacity) {
        size_t capacity = node->spare_capacity ? node->spare_capacity * 2 : 64;
        accel_drv_event **grown = realloc(node->spare, capacity * sizeof *grown);
        if (grown == NULL) {
            ACCEL__DRV_VOID(node->device, event_destroy, event);
            return;
        }
        node->spare = grown;
        node->spare_capacity = capacity;
    }
    node->spare[node->spare_count++] = event;
}

/*
 * The anchor: an event recorded on the device's idle internal stream and
 * waited for, whose host time is the middle of that wait. Device lock held.
 */
static void anchor_make(struct accel__trace_device *node)
{
    accel_device *device = node->device;
    if (!ACCEL__DRV_HAS(device, event_elapsed) ||
        accel__internal_stream(device) != ACCEL_OK) {
        node->untimable = true;
        return;
    }
    accel_drv_event *anchor = spare_take(node);
    uint64_t before = accel__now_ns();
    if (anchor == NULL ||
        ACCEL__DRV_TRY(device, event_record, anchor, device->own.stream) !=
            ACCEL_OK ||
        ACCEL__DRV_TRY(device, event_sync, anchor) != ACCEL_OK ||
        ACCEL__DRV_TRY(device, event_query, anchor) != ACCEL_OK) {
        if (anchor != NULL)
            spare_give(node, anchor);
        node->untimable = true;
        return;
    }
    node->anchor_ns = before + (accel__now_ns() - before) / 2;
    node->anchor = anchor;
}

static const char *const kind_names[] = {
    [ACCEL__TRACE_COPY_H2D] = "copy h2d",
    [ACCEL__TRACE_COPY_D2H] = "copy d2h",
    [ACCEL__TRACE_COPY_D2D] = "copy d2d",
    [ACCEL__TRACE_COPY_PEER] = "copy peer",
    [ACCEL__TRACE_FILL] = "fill",
    [ACCEL__TRACE_LAUNCH] = "launch",
};

static void command_rec(struct accel__trace_device *node, const struct pending *p,
                        uint64_t begin, uint64_t end, bool device_timed)
{
    struct rec rec = {.type = REC_COMMAND,
                      .kind = (uint8_t)p->kind,
                      .device_timed = device_timed,
                      .pid = node->pid,
                      .tid = p->lane + 1,
                      .ts = begin,
                      .dur = end - begin,
                      .u.bytes = p->bytes,
                      .name = kind_names[p->kind]};
    if (p->kind == ACCEL__TRACE_LAUNCH)
        rec.u.launch = p->launch;
    rec_push(&rec);
}

/*
 * When the oldest pending command ended, on the host's clock; false while
 * it has not. event_elapsed answers ACCEL_NOT_READY for an event not yet
 * reached, so one call both asks and times. An event that cannot be timed
 * (the device failed, or the plugin no longer knows) is drawn at its
 * submission.
 */
static bool pending_end(struct accel__trace_device *node, struct pending *p,
                        bool wait, uint64_t *out_end, bool *out_timed)
{
    accel_device *device = node->device;
    int64_t ns = 0;
    if (wait)
        ACCEL__DRV_TRY(device, event_sync, p->event);
    accel_status status = ACCEL__DRV_TRY(device, event_elapsed, node->anchor,
                                         p->event, &ns);
    if (status == ACCEL_NOT_READY)
        return false;
    *out_timed = status == ACCEL_OK &&
                 (ns >= 0 || (uint64_t)-ns <= node->anchor_ns);
    *out_end = *out_timed ? node->anchor_ns + (uint64_t)ns : p->submit_ns;
    return true;
}

/* Place the pending commands that have completed, oldest first. */
static void place_done(struct accel__trace_device *node, bool wait)
{
    while (node->count > 0) {
        struct pending *p = &node->pending[node->head];
        uint64_t end = 0;
        bool timed = false;
        if (!pending_end(node, p, wait, &end, &timed))
            break;
        /* On an in-order stream a command starts once the one before it has
         * ended, or when it was submitted if the stream was idle then. */
        uint64_t begin = node->last_end[p->lane] > p->submit_ns
                             ? node->last_end[p->lane]
                             : p->submit_ns;
        if (begin > end)
            begin = end;
        node->last_end[p->lane] = end;
        command_rec(node, p, begin, end, timed);
        spare_give(node, p->event);
        node->head = (node->head + 1) % node->capacity;
        node->count--;
    }
}

static bool pending_room(struct accel__trace_device *node)
{
    if (node->count < node->capacity)
        return true;
    size_t capacity = node->capacity ? node->capacity * 2 : 256;
    struct pending *grown = malloc(capacity * sizeof *grown);
    if (grown == NULL)
        return false;
    for (size_t i = 0; i < node->count; i++)
        grown[i] = node->pending[(node->head + i) % node->capacity];
    free(node->pending);
    node->pending = grown;
    node->head = 0;
    node->capacity = capacity;
    return true;
}

static bool launch_matches(const struct launch_info *info,
                           const struct accel__trace_command *command)
{
    return info->key == command->kernel &&
           memcmp(info->grid, command->grid, sizeof info->grid) == 0 &&
           memcmp(info->block, command->block, sizeof info->block) == 0 &&
           strncmp(info->kernel, command->kernel, sizeof info->kernel - 1) == 0;
}

/* The kept description of a launch like `command`; node lock held. */
static const struct launch_info *
launch_info_of(struct accel__trace_device *node,
               const struct accel__trace_command *command)
{
    size_t slot = ((uintptr_t)command->kernel >> 4 ^ command->grid[0] * 31u ^
                   command->block[0] * 17u) %
                  64u;
    struct launch_info *info = node->launches[slot];
    if (info != NULL && launch_matches(info, command))
        return info;
    info = calloc(1, sizeof *info);
    if (info == NULL)
        return NULL;
    info->key = command->kernel;
    snprintf(info->kernel, sizeof info->kernel, "%s", command->kernel);
    memcpy(info->grid, command->grid, sizeof info->grid);
    memcpy(info->block, command->block, sizeof info->block);
    pthread_mutex_lock(&g.lock);
    info->next = g.launches;
    g.launches = info;
    pthread_mutex_unlock(&g.lock);
    node->launches[slot] = info;
    return info;
}

/* The device's node, made at its first command; device lock held. */
static struct accel__trace_device *node_of(accel_device *device)
{
    if (device->trace != NULL)
        return device->trace;
    struct accel__trace_device *node = calloc(1, sizeof *node);
    struct label *label = calloc(1, sizeof *label);
    if (node == NULL || label == NULL ||
        pthread_mutex_init(&node->lock, NULL) != 0) {
        free(node);
        free(label);
        return NULL;
    }
    node->device = device;
    node->pid = TRACE_DEVICE_PID + device->id;
    label->pid = node->pid;
    snprintf(label->text, sizeof label->text, "device %u (%s:%u)", device->id,
             device->plugin->name, device->index);
    pthread_mutex_lock(&devices_lock);
    node->next = devices;
    devices = node;
    pthread_mutex_unlock(&devices_lock);
    pthread_mutex_lock(&g.lock);
    label->next = g.labels;
    g.labels = label;
    pthread_mutex_unlock(&g.lock);
    device->trace = node;
    return node;
}

void accel__trace_command(accel_stream *stream,
                          const struct accel__trace_command *command)
{
    accel_device *device = stream->device;
    struct accel__trace_device *node = node_of(device);
    if (node == NULL)
        return;
    pthread_mutex_lock(&node->lock);
    if (node->anchor == NULL && !node->untimable)
        anchor_make(node);
    if (node->count >= TRACE_PLACE_BATCH)
        place_done(node, false);
    /* The call that submits it began a moment before: one clock read less. */
    uint64_t submit_ns = call_begin != 0 ? call_begin : accel__now_ns();
    struct pending p = {.submit_ns = submit_ns,
                        .lane = stream->lane,
                        .kind = command->kind,
                        .bytes = command->bytes};
    if (command->kind == ACCEL__TRACE_LAUNCH) {
        p.launch = launch_info_of(node, command);
        if (p.launch == NULL) {
            pthread_mutex_unlock(&node->lock);
            return;
        }
    }
    if (node->anchor != NULL && pending_room(node))
        p.event = spare_take(node);
    if (p.event != NULL &&
        ACCEL__DRV_TRY(device, event_record, p.event, stream->drv) != ACCEL_OK) {
        spare_give(node, p.event);
        p.event = NULL;
    }
    if (p.event != NULL)
        node->pending[(node->head + node->count++) % node->capacity] = p;
    else
        command_rec(node, &p, p.submit_ns, p.submit_ns, false);
    pthread_mutex_unlock(&node->lock);
}

void accel__trace_device_empty(accel_device *device)
{
    struct accel__trace_device *node = device->trace;
    if (node == NULL)
        return;
    pthread_mutex_lock(&node->lock);
    place_done(node, true);
    /* A lost device completes nothing: what is left is dropped. */
    for (; node->count > 0; node->count--) {
        spare_give(node, node->pending[node->head].event);
        node->head = (node->head + 1) % node->capacity;
    }
    if (node->anchor != NULL)
        spare_give(node, node->anchor);
    node->anchor = NULL;
    node->untimable = false;
    while (node->spare_count > 0)
        ACCEL__DRV_VOID(device, event_destroy, node->spare[--node->spare_count]);
    memset(node->last_end, 0, sizeof node->last_end);
    pthread_mutex_unlock(&node->lock);
}

void accel__trace_device_close(accel_device *device)
{
    struct accel__trace_device *node = device->trace;
    if (node == NULL)
        return;
    pthread_mutex_lock(&devices_lock);
    for (struct accel__trace_device **p = &devices; *p != NULL; p = &(*p)->next) {
        if (*p == node) {
            *p = node->next;
            break;
        }
    }
    pthread_mutex_unlock(&devices_lock);
    device->trace = NULL;
    pthread_mutex_destroy(&node->lock);
    free(node->pending);
    free(node->spare);
    free(node);
}

/* ---- writing ---- */

static void json_string(FILE *file, const char *text)
{
    fputc('"', file);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(file, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(file, "\\u%04x", *c);
        else
            fputc(*c, file);
    }
    fputc('"', file);
}

static double trace_us(uint64_t ns)
{
    return ns > g.start_ns ? (double)(ns - g.start_ns) / 1000.0 : 0.0;
}

static void rec_args(FILE *file, const struct rec *rec)
{
    if (rec->type == REC_API) {
        fprintf(file, "\"status\":\"%s\"",
                accel_status_name((accel_status)rec->status));
        if (rec->u.bytes != 0)
            fprintf(file, ",\"bytes\":%llu", (unsigned long long)rec->u.bytes);
    } else if (rec->type == REC_COMMAND && rec->kind == ACCEL__TRACE_LAUNCH) {
        const struct launch_info *l = rec->u.launch;
        fputs("\"kernel\":", file);
        json_string(file, l->kernel);
        fprintf(file, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", l->grid[0],
                l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
    } else if (rec->type == REC_COMMAND) {
        fprintf(file, "\"bytes\":%llu", (unsigned long long)rec->u.bytes);
        if (rec->kind != ACCEL__TRACE_FILL)
            fprintf(file, ",\"direction\":\"%s\"", rec->name + 5);
    } else if (rec->type == REC_MARK && rec->u.bytes != 0) {
        fprintf(file, "\"bytes\":%llu", (unsigned long long)rec->u.bytes);
    }
    if (rec->type == REC_COMMAND)
        fprintf(file, "%s\"timing\":\"%s\"", ",",
                rec->device_timed ? "device" : "host");
}

static void rec_write(FILE *file, const struct rec *rec)
{
    static const char *const cats[] = {"api", "command", "device", "callback"};
    fputs(g.wrote_any ? ",\n{\"name\":" : "{\"name\":", file);
    g.wrote_any = true;
    json_string(file, rec->type == REC_COMMAND && rec->kind == ACCEL__TRACE_LAUNCH
                          ? rec->u.launch->kernel
                          : rec->name);
    fprintf(file, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":%.3f,", cats[rec->type],
            rec->type == REC_MARK ? "i" : "X", trace_us(rec->ts));
    if (rec->type == REC_MARK)
        fputs("\"s\":\"p\",", file);
    else
        fprintf(file, "\"dur\":%.3f,", (double)rec->dur / 1000.0);
    fprintf(file, "\"pid\":%u,\"tid\":%u,\"args\":{", rec->pid, rec->tid);
    rec_args(file, rec);
    fputs("}}", file);
}

static void meta_write(FILE *file, const char *what, uint32_t pid, uint32_t tid,
                       const char *name)
{
    fprintf(
        file, "%s{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
        g.wrote_any ? ",\n" : "", what, pid, tid);
    json_string(file, name);
    fputs("}}", file);
    g.wrote_any = true;
}

/* Name every process and track once per flush: the file may be cut short
 * by a crash after any flush, and a later name wins anyway. */
static void names_write(FILE *file, const struct rec *recs, size_t count)
{
    char text[64];
    meta_write(file, "process_name", TRACE_HOST_PID, 0, "accel host threads");
    for (struct label *label = g.labels; label != NULL; label = label->next) {
        meta_write(file, "process_name", label->pid, 0, label->text);
        meta_write(file, "thread_name", label->pid, 0, "device events");
    }
    for (struct tbuf *buf = g.bufs; buf != NULL; buf = buf->next) {
        snprintf(text, sizeof text, "thread %u", buf->tid);
        meta_write(file, "thread_name", TRACE_HOST_PID, buf->tid, text);
    }
    uint64_t named[256] = {0};
    size_t named_count = 0;
    for (size_t i = 0; i < count && named_count < 256; i++) {
        uint64_t key = (uint64_t)recs[i].pid << 32 | recs[i].tid;
        bool seen = recs[i].type != REC_COMMAND;
        for (size_t j = 0; j < named_count && !seen; j++)
            seen = named[j] == key;
        if (seen)
            continue;
        named[named_count++] = key;
        snprintf(text, sizeof text, "stream lane %u", recs[i].tid - 1);
        meta_write(file, "thread_name", recs[i].pid, recs[i].tid, text);
    }
}

static int rec_order(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    /* The enclosing call first, so that nested calls nest in the file. */
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

/* Append what `buf` has published since the last read; g.lock held. */
static bool buf_read(struct tbuf *buf, struct rec **recs, size_t *count,
                     size_t *capacity)
{
    for (;;) {
        struct chunk *chunk = buf->head;
        size_t published = atomic_load_explicit(&chunk->count,
                                                memory_order_acquire);
        size_t n = published - buf->read;
        if (*count + n > *capacity) {
            size_t grown = *capacity * 2 > *count + n ? *capacity * 2
                                                      : *count + n;
            struct rec *more = realloc(*recs, grown * sizeof *more);
            if (more == NULL)
                return false;
            *recs = more;
            *capacity = grown;
        }
        memcpy(*recs + *count, chunk->recs + buf->read, n * sizeof **recs);
        *count += n;
        buf->read = published;
        struct chunk *next = atomic_load_explicit(&chunk->next,
                                                  memory_order_acquire);
        if (published < TRACE_CHUNK || next == NULL)
            return true;
        buf->head = next;
        buf->read = 0;
        chunk_give(buf, chunk);
    }
}

/* Take every thread's records, sorted by time; g.lock held. */
static accel_status records_take(struct rec **out_recs, size_t *out_count)
{
    size_t count = 0, capacity = 1024;
    struct rec *recs = malloc(capacity * sizeof *recs);
    bool ok = recs != NULL;
    for (struct tbuf *buf = g.bufs; buf != NULL && ok; buf = buf->next)
        ok = buf_read(buf, &recs, &count, &capacity);
    if (!ok) {
        free(recs);
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                            "accel_trace_flush: %zu records", count);
    }
    qsort(recs, count, sizeof *recs, rec_order);
    *out_recs = recs;
    *out_count = count;
    return ACCEL_OK;
}

/* Write what is buffered and end the array; g.lock held. */
static accel_status trace_write(void)
{
    struct rec *recs = NULL;
    size_t count = 0;
    accel_status status = records_take(&recs, &count);
    if (status != ACCEL_OK)
        return status;
    names_write(g.file, recs, count);
    for (size_t i = 0; i < count; i++)
        rec_write(g.file, &recs[i]);
    free(recs);
    /* End the array so that the file is whole now; the next flush writes
     * over the end. */
    fputs("\n]\n", g.file);
    bool failed = fflush(g.file) != 0 || fseek(g.file, -3, SEEK_CUR) != 0;
    if (failed)
        return accel__error(ACCEL_ERR_NOT_SUPPORTED,
                            "ACCEL_TRACE: writing %s failed: %s", g.path,
                            strerror(errno));
    return ACCEL_OK;
}

/* Place what every device has finished; no device lock held. */
static void devices_place(void)
{
    pthread_mutex_lock(&devices_lock);
    for (struct accel__trace_device *node = devices; node != NULL;
         node = node->next) {
        pthread_mutex_lock(&node->lock);
        place_done(node, false);
        pthread_mutex_unlock(&node->lock);
    }
    pthread_mutex_unlock(&devices_lock);
}

accel_status accel_trace_flush(void)
{
    if (!accel__tracing())
        return ACCEL_OK;
    devices_place();
    pthread_mutex_lock(&g.lock);
    /* A fork's child shares the parent's open file: it writes nothing. */
    accel_status status = g.file != NULL && g.pid == accel__pid ? trace_write()
                                                                : ACCEL_OK;
    pthread_mutex_unlock(&g.lock);
    return status;
}

void accel__trace_host_begin(const struct accel__ids *ids)
{
    const char *path = accel__getenv_as(ids, "ACCEL_TRACE");
    if (path == NULL || path[0] == '\0')
        return;
    pthread_mutex_lock(&g.lock);
    /* The file stays open for the process's life: a later host adds to it. */
    if (g.file == NULL && g.path == NULL) {
        g.path = strdup(path);
        g.file = g.path != NULL ? fopen(path, "we") : NULL;
        if (g.file == NULL) {
            accel__log(ACCEL_LOG_WARN,
                       "ACCEL_TRACE: cannot write %s: %s; not tracing", path,
                       strerror(errno));
        } else {
            fputs("[\n", g.file);
            g.pid = accel__pid;
            g.start_ns = accel__now_ns();
            atomic_store(&accel__trace_on, true);
        }
    }
    pthread_mutex_unlock(&g.lock);
}

void accel__trace_host_end(void)
{
    accel_status status = accel_trace_flush();
    if (status != ACCEL_OK)
        accel__log(ACCEL_LOG_WARN, "%s", accel_last_error());
}
