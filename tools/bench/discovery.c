/*
 * The discovery case: from a fresh process's start to a device ready for
 * work, measured in child processes of this executable.
 *
 * The parent reads the clock, starts `accel-bench --child IMPL` with
 * posix_spawn (a vfork: the cost does not grow with the parent's memory),
 * and the child, once its device and a stream are ready, writes the
 * monotonic clock (one clock for the whole machine) into a pipe and exits
 * at once. An empty child (IMPL "none") writes as soon as main runs; it
 * pays for the same exec and dynamic linking, so the difference of the two
 * is what discovery itself costs. The two alternate, so that drift in the
 * machine's state touches both alike.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static const struct bench_impl *const child_impls[] = {
    &bench_impl_accel,
    &bench_impl_opencl,
    &bench_impl_cuda_raw,
};

int bench_discovery_child(const char *impl, const char *arg, int report_fd)
{
    bool ready = strcmp(impl, "none") == 0;
    uint64_t now;

    for (size_t i = 0;
         !ready && i < sizeof(child_impls) / sizeof(child_impls[0]); i++)
        if (strcmp(child_impls[i]->name, impl) == 0 &&
            child_impls[i]->discover != NULL)
            ready = child_impls[i]->discover(arg);
    if (!ready)
        return 1;
    now = bench_now_ns();
    if (write(report_fd, &now, sizeof(now)) != (ssize_t)sizeof(now))
        return 1;
    /* Teardown is not part of the figure, and its cost is not ours to wait for. */
    _exit(0);
}

/* Start one child and return start-to-ready in nanoseconds, or a negative value. */
static double spawn_child(struct bench_run *run, const char *impl, const char *arg)
{
    char fd_text[16];
    char *argv[8];
    int fds[2], argc = 0, wstatus = 0;
    posix_spawn_file_actions_t actions;
    uint64_t start, ready = 0;
    ssize_t got;
    pid_t pid;
    int rc;

    if (pipe(fds) != 0) {
        bench_fail(run, "pipe: %s", strerror(errno));
        return -1;
    }
    snprintf(fd_text, sizeof(fd_text), "%d", fds[1]);
    argv[argc++] = (char *)run->env->self_path;
    argv[argc++] = "--child";
    argv[argc++] = (char *)impl;
    argv[argc++] = "--report-fd";
    argv[argc++] = fd_text;
    if (arg != NULL) {
        argv[argc++] = "--child-arg";
        argv[argc++] = (char *)arg;
    }
    argv[argc] = NULL;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    start = bench_now_ns();
    rc = posix_spawn(&pid, run->env->self_path, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        bench_fail(run, "posix_spawn %s: %s", run->env->self_path, strerror(rc));
        return -1;
    }
    do {
        got = read(fds[0], &ready, sizeof(ready));
    } while (got < 0 && errno == EINTR);
    close(fds[0]);
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof(ready) || ready < start) {
        bench_fail(run,
                   "the %s discovery child failed (%s %d); run "
                   "`accel-bench --child %s --report-fd 1` to see why",
                   impl, WIFEXITED(wstatus) ? "exit status" : "signal",
                   WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus),
                   impl);
        return -1;
    }
    return (double)(ready - start);
}

bool bench_discovery_measure(struct bench_run *run, const char *child,
                             const char *arg, const char *detail)
{
    return bench_discovery_measure_as(run, child, arg, NULL, detail);
}

bool bench_discovery_measure_as(struct bench_run *run, const char *child,
                                const char *arg, const char *label,
                                const char *detail)
{
    char gross_name[32], net_name[32];
    const struct bench_budget *budget = &run->budget;
    struct bench_samples gross = {0}, net = {0}, empty = {0};
    uint64_t start;
    bool ok = false;

    if (!bench_samples_init(&gross, budget->max_runs) ||
        !bench_samples_init(&net, budget->max_runs) ||
        !bench_samples_init(&empty, budget->max_runs))
        goto done;
    for (uint32_t i = 0; i < budget->warmup; i++)
        if (spawn_child(run, child != NULL ? child : "none", arg) < 0)
            goto done;
    start = bench_now_ns();
    while (gross.count < budget->max_runs &&
           (gross.count < budget->min_runs ||
            bench_now_ns() - start < budget->max_ns)) {
        double base = spawn_child(run, "none", NULL);
        double full = child != NULL ? spawn_child(run, child, arg) : base;

        if (base < 0 || full < 0)
            goto done;
        bench_samples_add(&empty, base);
        bench_samples_add(&gross, full);
        bench_samples_add(&net, full - base);
    }
    snprintf(gross_name, sizeof(gross_name), "gross%s%s", label ? "-" : "",
             label ? label : "");
    snprintf(net_name, sizeof(net_name), "net%s%s", label ? "-" : "",
             label ? label : "");
    if (child == NULL)
        ok = bench_emit_time(run, gross_name, detail, &empty);
    else
        ok = bench_emit_time(run, gross_name, detail, &gross) &&
             bench_emit_time(run, net_name, detail, &net);
done:
    bench_samples_deinit(&empty);
    bench_samples_deinit(&net);
    bench_samples_deinit(&gross);
    return ok;
}
