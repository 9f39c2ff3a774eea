/*
 * A workload for trace-check.py: fills, copies, a callback, allocations,
 * event timing on two devices, and flushes while two threads copy on
 * their own streams (records read while they are written), on the null
 * plugin with two devices. It checks the calls' results itself and, after
 * the host is gone, that the file names what only this workload does
 * (trace-check.py checks the format).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#define CHECK(expr, want)                                                      \
    do {                                                                       \
        accel_status got_ = (expr);                                            \
        if (got_ != (want)) {                                                  \
            fprintf(stderr, "%s: %s, expected %s: %s\n", #expr,                \
                    accel_status_name(got_), accel_status_name(want),          \
                    accel_last_error());                                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void on_done(void *user, accel_status status)
{
    (void)status;
    *(int *)user = 1;
}

/* Copies and fills on a stream of its own, while the main thread flushes. */
static void *copier(void *arg)
{
    accel_device *device = arg;
    accel_stream *stream;
    accel_ref ref;
    unsigned char host[256] = {0};
    uint16_t pattern = 0xabcd;

    CHECK(accel_stream_create(device, &stream), ACCEL_OK);
    CHECK(accel_alloc(device, ACCEL_BYTE, sizeof(host), &ref), ACCEL_OK);
    for (int i = 0; i < 2000; i++) {
        CHECK(accel_copy_to_device(stream, ref, 0, host, sizeof(host)), ACCEL_OK);
        CHECK(accel_fill(stream, ref, 0, sizeof(host), &pattern, 2), ACCEL_OK);
    }
    CHECK(accel_stream_sync(stream), ACCEL_OK);
    CHECK(accel_free(device, ref), ACCEL_OK);
    accel_stream_destroy(stream);
    return NULL;
}

/* The file holds `text`. */
static int file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    static char buffer[1 << 20];
    size_t n = f ? fread(buffer, 1, sizeof(buffer) - 1, f) : 0;

    if (f)
        fclose(f);
    buffer[n] = '\0';
    return strstr(buffer, text) != NULL;
}

int main(void)
{
    const char *path = getenv("ACCEL_TRACE");
    accel_host *host;
    accel_device *a, *b;
    accel_stream *stream;
    accel_event *ea, *eb;
    accel_ref ref;
    uint32_t pattern = 0x01020304u, back[256];
    int64_t ns;
    int ran = 0;

    CHECK(accel_host_create(NULL, &host), ACCEL_OK);
    CHECK(accel_device_open(host, "null", 0, &a), ACCEL_OK);
    CHECK(accel_device_open(host, "null", 1, &b), ACCEL_OK);
    CHECK(accel_stream_create(a, &stream), ACCEL_OK);
    CHECK(accel_alloc(a, ACCEL_U32, 256, &ref), ACCEL_OK);
    CHECK(accel_fill(stream, ref, 0, sizeof(back), &pattern, 4), ACCEL_OK);
    CHECK(accel_copy_to_host(stream, back, ref, 0, sizeof(back)), ACCEL_OK);
    CHECK(accel_stream_add_callback(stream, on_done, &ran), ACCEL_OK);
    CHECK(accel_stream_sync(stream), ACCEL_OK);
    if (back[255] != pattern || !ran) {
        fprintf(stderr, "the fill or the callback did not happen\n");
        return 1;
    }
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, copier, a) != 0)
            return 1;
    for (int i = 0; i < 20; i++)
        CHECK(accel_trace_flush(), ACCEL_OK);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK(accel_trace_flush(), ACCEL_OK);
    /* Events of two devices cannot be timed against each other. */
    CHECK(accel_event_create(a, &ea), ACCEL_OK);
    CHECK(accel_event_create(b, &eb), ACCEL_OK);
    CHECK(accel_event_record(ea, stream), ACCEL_OK);
    CHECK(accel_event_sync(ea), ACCEL_OK);
    CHECK(accel_event_elapsed(ea, eb, &ns), ACCEL_ERR_DEVICE_MISMATCH);
    CHECK(accel_copy_to_device(stream, ref, 0, back, sizeof(back)), ACCEL_OK);
    CHECK(accel_free(a, ref), ACCEL_OK);
    accel_event_destroy(ea);
    accel_event_destroy(eb);
    accel_stream_destroy(stream);
    accel_host_destroy(host);
    if (path != NULL &&
        (!file_has(path, "\"callback\"") || !file_has(path, "\"accel_fill\"") ||
         !file_has(path, "\"accel_alloc\"") || !file_has(path, "\"fill\""))) {
        fprintf(stderr,
                "the trace lacks the callback, the fill or the allocation\n");
        return 1;
    }
    return 0;
}
