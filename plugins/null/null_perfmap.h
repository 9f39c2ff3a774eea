/*
 * A perf map for kernel images: a CPU module is loaded from a memory
 * file, which perf cannot read back once it is gone, so that samples in a
 * kernel show only "memfd:accel-module (deleted)". With ACCEL_PERF_MAP=1
 * the plugin appends each loaded image's functions, at their addresses in
 * this process, to /tmp/perf-PID.map, the file perf reads for code it
 * cannot find on disk (as JIT compilers write it).
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

#endif /* ACCEL_NULL_PERFMAP_H */
