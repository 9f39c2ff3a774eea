/*
 * The README's collectives snippet ("Collectives"), as a newcomer copies
 * it: the build extracts it into outside-readme-collectives.inc and this
 * program supplies what the snippet takes as given (a device and its
 * stream, a ref `grad` of `count` elements, four devices), then checks
 * what the snippet promises: an in-place all-reduce over the launcher's
 * ranks (here a process no launcher started: rank 0 of 1, so the sum is
 * the rank's own data) and four communicators of ranks as threads.
 */
#include <stdio.h>
#include <stdlib.h>

#include <accel/accel.h>

static int check(accel_status status, const char *what)
{
    if (status == ACCEL_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", what, accel_status_name(status),
            accel_last_error());
    return 1;
}

/* The snippet, with its names bound; returns 0 when it did what it says. */
static int snippet(accel_device *device, accel_stream *stream, accel_ref grad,
                   uint64_t count, accel_device **devices)
{
#include "outside-readme-collectives.inc"
    int failed = check(accel_comm_status(comms[0]), "comms[0]");
    for (int i = 0; i < 4; i++) {
        if (accel_comm_rank(comms[i]) != i || accel_comm_size(comms[i]) != 4) {
            fprintf(stderr, "comms[%d] is rank %d of %d\n", i,
                    accel_comm_rank(comms[i]), accel_comm_size(comms[i]));
            failed = 1;
        }
        accel_comm_destroy(comms[i]);
    }
    return failed;
}

int main(void)
{
    enum { N = 256 };
    float data[N];
    for (int i = 0; i < N; i++)
        data[i] = (float)i;
    accel_host *host = NULL;
    accel_device *devices[4] = {NULL, NULL, NULL, NULL};
    accel_stream *stream = NULL;
    accel_ref grad = {0};
    int failed = check(accel_host_create(NULL, &host), "accel_host_create");
    for (uint32_t i = 0; !failed && i < 4; i++)
        failed = check(accel_device_open(host, "null", i, &devices[i]),
                       "accel_device_open");
    if (!failed)
        failed = check(accel_stream_create(devices[0], &stream),
                       "accel_stream_create") ||
                 check(accel_alloc(devices[0], ACCEL_F32, N, &grad),
                       "accel_alloc") ||
                 check(accel_copy_in(stream, grad, data, N), "accel_copy_in");
    if (!failed)
        failed = snippet(devices[0], stream, grad, N, devices);
    if (!failed)
        failed = check(accel_copy_out(stream, data, grad, N),
                       "accel_copy_out") ||
                 check(accel_stream_sync(stream), "accel_stream_sync");
    for (int i = 0; !failed && i < N; i++)
        if (data[i] != (float)i) {
            fprintf(stderr, "grad[%d] is %g, not %d\n", i, (double)data[i], i);
            failed = 1;
        }
    accel_stream_destroy(stream);
    accel_host_destroy(host);
    if (!failed)
        printf("the README's collectives snippet ran as written\n");
    return failed;
}
