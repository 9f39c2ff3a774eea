/*
 * ACCEL_TRACE (trace.h): records kept per thread, commands placed by the
 * device's clock, the file written as one JSON array that stays valid
 * after every flush (each flush ends it with "]" and the next one writes
 * over that end).
 *
 * Locks, in the order they may be taken: a device's lock, `devices_lock`,
 * a device node's lock, `g.lock`, a thread buffer's lock. A flush places
 * the devices' finished commands first (devices_lock, each node) and only
 * then writes (g.lock), so that it never holds g.lock while it waits for a
 * node.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "trace.h"

_Atomic bool accel__trace_on;

/* Host threads are process 1; device N is process ACCEL__TRACE_DEVICE_PID + N. */
#define TRACE_HOST_PID 1u
#define TRACE_DEVICE_PID 2u
/* Commands waiting for their events are placed once this many are pending. */
#define TRACE_PLACE_BATCH 64u
#define TRACE_KERNEL_NAME 48u

enum rec_type { REC_API, REC_COMMAND, REC_MARK, REC_CALLBACK };

struct rec {
    uint8_t type;
    uint8_t kind;            /* enum accel__trace_kind, for commands */
    bool device_timed;       /* a command placed by the device's clock */
    int32_t status;
    uint32_t pid, tid;
    uint64_t ts, dur;        /* ns, accel__now_ns's clock */
    uint64_t bytes;
    const char *name;        /* a static string */
    uint32_t geometry[6];
    char kernel[TRACE_KERNEL_NAME];
};

/* One thread's records. */
struct tbuf {
    pthread_mutex_t lock;
    uint32_t tid;
    struct rec *recs;
    size_t count, capacity;
    struct tbuf *next;
};

/* A command waiting for its event. */
struct pending {
    accel_drv_event *event;
    uint64_t submit_ns;
    uint32_t lane;
    struct accel__trace_command command;
    char kernel[TRACE_KERNEL_NAME];
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
    uint64_t start_ns;
    bool wrote_any;
    struct tbuf *bufs;
    uint32_t next_tid;
    struct label *labels;
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
    if (buf == NULL || pthread_mutex_init(&buf->lock, NULL) != 0) {
        free(buf);
        return NULL;
    }
    pthread_mutex_lock(&g.lock);
    buf->tid = ++g.next_tid;
    buf->next = g.bufs;
    g.bufs = buf;
    pthread_mutex_unlock(&g.lock);
    self = buf;
    return buf;
}

/* Append a record to this thread's buffer; dropped when out of memory. */
static void rec_push(const struct rec *rec)
{
    struct tbuf *buf = tbuf_self();
    if (buf == NULL)
        return;
    pthread_mutex_lock(&buf->lock);
    if (buf->count == buf->capacity) {
        size_t capacity = buf->capacity ? buf->capacity * 2 : 1024;
        struct rec *grown = realloc(buf->recs, capacity * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&buf->lock);
            return;
        }
        buf->recs = grown;
        buf->capacity = capacity;
    }
    buf->recs[buf->count] = *rec;
    if (rec->pid == TRACE_HOST_PID)
        buf->recs[buf->count].tid = buf->tid;
    buf->count++;
    pthread_mutex_unlock(&buf->lock);
}

uint64_t accel__trace_now(void)
{
    return accel__tracing() ? accel__now_ns() : 0;
}

void accel__trace_api(const char *name, uint64_t begin, accel_status status,
                      uint64_t bytes)
{
    uint64_t end = accel__now_ns();
    struct rec rec = {.type = REC_API, .status = status, .pid = TRACE_HOST_PID,
                      .ts = begin, .dur = end - begin, .bytes = bytes, .name = name};
    rec_push(&rec);
}

void accel__trace_callback(uint64_t begin)
{
    if (begin == 0)
        return;
    struct rec rec = {.type = REC_CALLBACK, .pid = TRACE_HOST_PID, .ts = begin,
                      .dur = accel__now_ns() - begin, .name = "callback"};
    rec_push(&rec);
}

void accel__trace_device_mark(accel_device *device, const char *what, uint64_t bytes)
{
    if (!accel__tracing())
        return;
    struct rec rec = {.type = REC_MARK, .pid = TRACE_DEVICE_PID + device->id,
                      .ts = accel__now_ns(), .bytes = bytes, .name = what};
    rec_push(&rec);
}

/* ---- placing commands by the device's clock (node lock held) ---- */

static accel_drv_event *spare_take(struct accel__trace_device *node)
{
    accel_device *device = node->device;
    accel_drv_event *event = NULL;
    if (node->spare_count > 0)
        return node->spare[--node->spare_count];
    if (device->drv->event_create(device->drv_device, &event) != ACCEL_OK)
        return NULL;
    return event;
}

static void spare_give(struct accel__trace_device *node, accel_drv_event *event)
{
    if (node->spare_count == node->spare_capacity) {
        size_t capacity = node->spare_capacity ? node->spare_capacity * 2 : 64;
        accel_drv_event **grown = realloc(node->spare, capacity * sizeof *grown);
        if (grown == NULL) {
            node->device->drv->event_destroy(node->device->drv_device, event);
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
    if (device->drv->event_elapsed == NULL || accel__internal_stream(device) != ACCEL_OK) {
        node->untimable = true;
        return;
    }
    accel_drv_event *anchor = spare_take(node);
    uint64_t before = accel__now_ns();
    if (anchor == NULL ||
        device->drv->event_record(device->drv_device, anchor, device->internal) != ACCEL_OK ||
        device->drv->event_sync(device->drv_device, anchor) != ACCEL_OK ||
        device->drv->event_query(device->drv_device, anchor) != ACCEL_OK) {
        if (anchor != NULL)
            spare_give(node, anchor);
        node->untimable = true;
        return;
    }
    node->anchor_ns = before + (accel__now_ns() - before) / 2;
    node->anchor = anchor;
}

static const char *const kind_names[] = {
    [ACCEL__TRACE_COPY_H2D] = "copy h2d", [ACCEL__TRACE_COPY_D2H] = "copy d2h",
    [ACCEL__TRACE_COPY_D2D] = "copy d2d", [ACCEL__TRACE_COPY_PEER] = "copy peer",
    [ACCEL__TRACE_FILL] = "fill",         [ACCEL__TRACE_LAUNCH] = "launch",
};

static void command_rec(struct accel__trace_device *node, const struct pending *p,
                        uint64_t begin, uint64_t end, bool device_timed)
{
    struct rec rec = {.type = REC_COMMAND, .kind = (uint8_t)p->command.kind,
                      .device_timed = device_timed, .pid = node->pid, .tid = p->lane + 1,
                      .ts = begin, .dur = end - begin, .bytes = p->command.bytes,
                      .name = kind_names[p->command.kind]};
    memcpy(rec.geometry, p->command.grid, sizeof p->command.grid);
    memcpy(rec.geometry + 3, p->command.block, sizeof p->command.block);
    memcpy(rec.kernel, p->kernel, sizeof rec.kernel);
    rec_push(&rec);
}

/* When the oldest pending command ended, on the host's clock; false while
 * it has not. An event that cannot be timed gives its submission time. */
static bool pending_end(struct accel__trace_device *node, struct pending *p, bool wait,
                        uint64_t *out_end, bool *out_timed)
{
    accel_device *device = node->device;
    int64_t ns = 0;
    if (wait)
        device->drv->event_sync(device->drv_device, p->event);
    accel_status status = device->drv->event_query(device->drv_device, p->event);
    if (status == ACCEL_NOT_READY)
        return false;
    *out_timed = status == ACCEL_OK && node->anchor != NULL &&
                 device->drv->event_elapsed(device->drv_device, node->anchor, p->event,
                                            &ns) == ACCEL_OK;
    *out_end = p->submit_ns;
    if (*out_timed && (ns >= 0 || (uint64_t)-ns <= node->anchor_ns))
        *out_end = node->anchor_ns + (uint64_t)ns;
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
        uint64_t begin = node->last_end[p->lane] > p->submit_ns ? node->last_end[p->lane]
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

/* The device's node, made at its first command; device lock held. */
static struct accel__trace_device *node_of(accel_device *device)
{
    if (device->trace != NULL)
        return device->trace;
    struct accel__trace_device *node = calloc(1, sizeof *node);
    struct label *label = calloc(1, sizeof *label);
    if (node == NULL || label == NULL || pthread_mutex_init(&node->lock, NULL) != 0) {
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

void accel__trace_command(accel_stream *stream, const struct accel__trace_command *command)
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
    struct pending p = {.submit_ns = accel__now_ns(), .lane = stream->lane,
                        .command = *command};
    if (command->kernel != NULL)
        snprintf(p.kernel, sizeof p.kernel, "%s", command->kernel);
    p.command.kernel = NULL;
    if (node->anchor != NULL && pending_room(node))
        p.event = spare_take(node);
    if (p.event != NULL &&
        device->drv->event_record(device->drv_device, p.event, stream->drv) != ACCEL_OK) {
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
        device->drv->event_destroy(device->drv_device, node->spare[--node->spare_count]);
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
        fprintf(file, "\"status\":\"%s\"", accel_status_name((accel_status)rec->status));
        if (rec->bytes != 0)
            fprintf(file, ",\"bytes\":%llu", (unsigned long long)rec->bytes);
    } else if (rec->type == REC_COMMAND && rec->kind == ACCEL__TRACE_LAUNCH) {
        const uint32_t *g3 = rec->geometry;
        fputs("\"kernel\":", file);
        json_string(file, rec->kernel);
        fprintf(file, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", g3[0], g3[1], g3[2],
                g3[3], g3[4], g3[5]);
    } else if (rec->type == REC_COMMAND) {
        fprintf(file, "\"bytes\":%llu", (unsigned long long)rec->bytes);
        if (rec->kind != ACCEL__TRACE_FILL)
            fprintf(file, ",\"direction\":\"%s\"", rec->name + 5);
    } else if (rec->type == REC_MARK && rec->bytes != 0) {
        fprintf(file, "\"bytes\":%llu", (unsigned long long)rec->bytes);
    }
    if (rec->type == REC_COMMAND)
        fprintf(file, "%s\"timing\":\"%s\"", ",", rec->device_timed ? "device" : "host");
}

static void rec_write(FILE *file, const struct rec *rec)
{
    static const char *const cats[] = {"api", "command", "device", "callback"};
    fputs(g.wrote_any ? ",\n{\"name\":" : "{\"name\":", file);
    g.wrote_any = true;
    json_string(file, rec->type == REC_COMMAND && rec->kind == ACCEL__TRACE_LAUNCH
                          ? rec->kernel
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
    fprintf(file, "%s{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
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

/* Take every thread's records; g.lock held. */
static accel_status records_take(struct rec **out_recs, size_t *out_count)
{
    size_t total = 0, at = 0;
    for (struct tbuf *buf = g.bufs; buf != NULL; buf = buf->next) {
        pthread_mutex_lock(&buf->lock);
        total += buf->count;
        pthread_mutex_unlock(&buf->lock);
    }
    /* Records added meanwhile wait for the next flush. */
    struct rec *recs = malloc((total ? total : 1) * sizeof *recs);
    if (recs == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "accel_trace_flush: %zu records",
                            total);
    for (struct tbuf *buf = g.bufs; buf != NULL; buf = buf->next) {
        pthread_mutex_lock(&buf->lock);
        size_t n = buf->count < total - at ? buf->count : total - at;
        memcpy(recs + at, buf->recs + buf->count - n, n * sizeof *recs);
        buf->count -= n;
        at += n;
        pthread_mutex_unlock(&buf->lock);
    }
    qsort(recs, at, sizeof *recs, rec_order);
    *out_recs = recs;
    *out_count = at;
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
        return accel__error(ACCEL_ERR_NOT_SUPPORTED, "ACCEL_TRACE: writing %s failed: %s",
                            g.path, strerror(errno));
    return ACCEL_OK;
}

/* Place what every device has finished; no device lock held. */
static void devices_place(void)
{
    pthread_mutex_lock(&devices_lock);
    for (struct accel__trace_device *node = devices; node != NULL; node = node->next) {
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
    accel_status status = g.file != NULL ? trace_write() : ACCEL_OK;
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
            accel__log(ACCEL_LOG_WARN, "ACCEL_TRACE: cannot write %s: %s; not tracing",
                       path, strerror(errno));
        } else {
            fputs("[\n", g.file);
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
