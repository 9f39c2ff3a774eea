/*
 * Kernel images perf can name. A CPU module is loaded from a memory file,
 * which perf cannot read back once it is gone, so that samples in a kernel
 * show only "memfd:accel-module (deleted)" at raw offsets; and perf 6.1
 * reads /tmp/perf-PID.map only for anonymous memory, not for a memfd
 * mapping. With ACCEL_PERF_MAP=1 the plugin therefore loads each image
 * from a named file instead, /tmp/accel-perf-UID/module-HASH-SIZE.so,
 * kept after the process so that `perf report` reads its symbols there,
 * and also appends the image's functions, at their addresses in this
 * process, to /tmp/perf-PID.map (for tools that read perf maps).
 *
 * Read through the host's getenv service, so never under elevated
 * privileges. The map is only appended to: a module unloaded and a new one
 * loaded at the same addresses leave both in it, the newer line last.
 */
#ifndef ACCEL_NULL_PERFMAP_H
#define ACCEL_NULL_PERFMAP_H

#include <stddef.h>

#include <accel/driver.h>

/*
 * When ACCEL_PERF_MAP is 1, append the functions of `image` (`size` bytes,
 * already checked by module_load) as loaded at `handle` to the perf map.
 * Best effort: a failure is logged as a warning, never fails the load.
 */
void accel__null_perf_map_note(const struct accel_host_services *services,
                               const unsigned char *image, size_t size,
                               void *handle);

/*
 * When ACCEL_PERF_MAP is 1, `image` written to its named file (above),
 * opened for reading: the descriptor to load it from. -1 when the variable
 * is not 1, or, with a warning, when the directory or the file cannot be
 * had safely (the directory must be this user's, mode 0700, not a link):
 * the caller then loads from a memory file as always.
 */
int accel__null_perf_image_fd(const struct accel_host_services *services,
                              const unsigned char *image, size_t size);

#endif /* ACCEL_NULL_PERFMAP_H */
