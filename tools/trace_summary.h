/* accel-info --trace-summary (trace_summary.c). */
#ifndef ACCEL_TOOLS_TRACE_SUMMARY_H
#define ACCEL_TOOLS_TRACE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

/* Print per-kernel and per-copy totals of the trace at `path`; the exit
 * status: 0, or 1 with the reason on stderr. */
int accel_info_trace_summary(const char *path);

#endif /* ACCEL_TOOLS_TRACE_SUMMARY_H */
