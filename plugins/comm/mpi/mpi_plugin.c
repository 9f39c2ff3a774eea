/*
 * accel-comm-mpi: collectives between the ranks of an MPI job, through the
 * MPI the job was launched with (Open MPI or MPICH, opened with dlopen).
 * Host-run: submit blocks until the operation completed on this rank.
 */
#include "mpi_provider.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_half.h"

/* Variables a launcher sets in each process it starts: Open MPI's mpirun,
 * PMIx and PMI launchers (MPICH's hydra, Slurm's srun --mpi), Intel MPI,
 * MVAPICH, Flux. Without one, MPI_Init would make a singleton job of one
 * rank, which is not what a user of ACCEL_COMM=mpi wants. */
static const char *const launcher_variables[] = {
    "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",           "PMI_RANK",       "PMI_SIZE",
    "MPI_LOCALRANKID",      "MV2_COMM_WORLD_RANK", "FLUX_TASK_RANK", NULL};

static const char *launcher_variable(const struct accel_comm_services *s)
{
    for (size_t i = 0; launcher_variables[i] != NULL; i++) {
        const char *value = s->getenv(launcher_variables[i]);
        if (value != NULL && value[0] != '\0')
            return launcher_variables[i];
    }
    return NULL;
}

static uint64_t env_u64(const struct accel_comm_services *s, const char *name,
                        uint64_t fallback)
{
    const char *text = s->getenv(name);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] == '-') {
        s->log(ACCEL_LOG_WARN, "%s=%s is not a number: %llu is used", name,
               text, (unsigned long long)fallback);
        return fallback;
    }
    return value;
}

static void read_settings(accel_comm_provider *p)
{
    const struct accel_comm_services *s = p->services;
    p->timeout_ns = env_u64(s, "ACCEL_COMM_TIMEOUT_MS", 300000) * 1000000u;
    uint64_t chunk = env_u64(s, "ACCEL_MPI_CHUNK_ELEMS", INT_MAX);
    p->chunk_elems = chunk == 0 || chunk > INT_MAX ? INT_MAX : (int)chunk;
    const char *check = s->getenv("ACCEL_COMM_CHECK");
    p->check = check != NULL && strcmp(check, "1") == 0;
}

/*
 * MPI_Initialized, then MPI_Init_thread only where a launcher started this
 * process. A program that initialised MPI itself keeps it: the provider
 * neither initialises nor finalises it then.
 */
static accel_status init_mpi(accel_comm_provider *p)
{
    const struct mpi_lib *lib = &p->lib;
    int initialised = 0, finalised = 0, level = 0;
    ((int (*)(int *))lib->fn.MPI_Initialized)(&initialised);
    ((int (*)(int *))lib->fn.MPI_Finalized)(&finalised);
    if (finalised)
        return p->services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                      "MPI (%s) was finalised already in "
                                      "this process and cannot start again",
                                      lib->path);
    if (!initialised) {
        if (launcher_variable(p->services) == NULL)
            return p->services->set_error(
                ACCEL_ERR_NOT_SUPPORTED,
                "not started by mpirun (or another MPI launcher: none of "
                "OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK, MPI_LOCALRANKID "
                "is set), and the program did not initialise MPI");
        int rc = ((int (*)(int *, char ***, int, int *))lib->fn.MPI_Init_thread)(
            NULL, NULL, MPI_LEVEL_MULTIPLE, &level);
        if (rc != 0)
            return mpi__fail(p, "MPI_Init_thread", rc);
        p->initialised_here = true;
    } else {
        ((int (*)(int *))lib->fn.MPI_Query_thread)(&level);
    }
    /* submit runs on the host's progress thread, not the main one. */
    if (level < MPI_LEVEL_SERIALIZED)
        return p->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "MPI gives thread level %d; accel calls MPI from its progress "
            "thread and needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE "
            "(initialise MPI with MPI_Init_thread)",
            level);
    p->serialise = level < MPI_LEVEL_MULTIPLE;
    return ACCEL_OK;
}

static accel_status make_half_ops(accel_comm_provider *p)
{
    static const accel_elem_type types[2] = {ACCEL_F16, ACCEL_BF16};
    for (int t = 0; t < 2; t++)
        for (int op = 0; op < ACCEL_REDUCE_OP_COUNT; op++) {
            mpi_user_fn *fn = mpi__half_reduce_fn(types[t], op);
            int rc = p->lib.call->op_create(&p->lib, fn, 1, &p->half_ops[t][op]);
            if (rc != 0)
                return mpi__fail(p, "MPI_Op_create", rc);
        }
    return ACCEL_OK;
}

static void free_half_ops(accel_comm_provider *p)
{
    for (int t = 0; t < 2; t++)
        for (int op = 0; op < ACCEL_REDUCE_OP_COUNT; op++)
            if (p->half_ops[t][op] != 0)
                p->lib.call->op_free(&p->lib, &p->half_ops[t][op]);
}

static accel_status make_boot(accel_comm_provider *p)
{
    mpi_h world_dup;
    int rc = p->lib.call->comm_dup(&p->lib, p->lib.h.comm_world, &world_dup);
    if (rc != 0)
        return mpi__fail(p, "MPI_Comm_dup", rc);
    accel_status status = mpi__comm_adopt(p, &p->boot, world_dup);
    if (status != ACCEL_OK) {
        p->lib.call->comm_free(&p->lib, &world_dup);
        return status;
    }
    p->boot_made = true;
    return ACCEL_OK;
}

static void mpi_plugin_close(accel_comm_provider *p);

static accel_status mpi_plugin_open(const struct accel_comm_services *services,
                                    accel_comm_provider **out_provider)
{
    char reason[1024];
    *out_provider = NULL;
    accel_comm_provider *p = calloc(1, sizeof *p);
    if (p == NULL)
        return services->set_error(ACCEL_ERR_OUT_OF_HOST_MEMORY,
                                   "no memory for the mpi provider");
    p->services = services;
    pthread_mutex_init(&p->serial, NULL);
    pthread_mutex_init(&p->boot_lock, NULL);
    read_settings(p);
    accel_status status = mpi__lib_open(services, &p->lib, reason, sizeof reason);
    if (status != ACCEL_OK) {
        services->set_error(status, "no usable MPI library: %s", reason);
        goto fail;
    }
    status = init_mpi(p);
    if (status == ACCEL_OK)
        status = make_half_ops(p);
    if (status == ACCEL_OK)
        status = make_boot(p);
    if (status != ACCEL_OK)
        goto fail;
    services->log(ACCEL_LOG_INFO, "mpi: %s (%s), %s", p->lib.path,
                  p->lib.abi == MPI_ABI_OPEN_MPI ? "Open MPI" : "MPICH ABI",
                  p->initialised_here ? "initialised here"
                                      : "initialised by the program");
    *out_provider = p;
    return ACCEL_OK;
fail:
    mpi_plugin_close(p);
    return status;
}

static void mpi_plugin_close(accel_comm_provider *p)
{
    if (p == NULL)
        return;
    if (p->lib.dl != NULL) {
        if (p->boot_made)
            p->lib.call->comm_free(&p->lib, &p->boot.comm);
        free(atomic_load(&p->boot.stage_cache));
        free_half_ops(p);
        if (p->initialised_here)
            ((int (*)(void))p->lib.fn.MPI_Finalize)();
    }
    /* libmpi stays mapped (RTLD_NODELETE, mpi_lib.c). */
    pthread_mutex_destroy(&p->boot_lock);
    pthread_mutex_destroy(&p->serial);
    free(p);
}

/* CPU memory always; a GPU's only where MPI says it is built for it. */
accel_status mpi__accepts_memory(accel_comm_provider *p, accel_native_kind kind)
{
    const char *query = NULL;
    mpi_fn fn = NULL;
    if (kind == ACCEL_NATIVE_CPU)
        return ACCEL_OK;
    if (kind == ACCEL_NATIVE_CUDA) {
        query = "MPIX_Query_cuda_support";
        fn = p->lib.fn.MPIX_Query_cuda_support;
    } else if (kind == ACCEL_NATIVE_HIP) {
        query = "MPIX_Query_rocm_support";
        fn = p->lib.fn.MPIX_Query_rocm_support;
    } else {
        return p->services->set_error(ACCEL_ERR_NOT_SUPPORTED,
                                      "unknown memory kind %d", (int)kind);
    }
    if (fn == NULL)
        return p->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s has no %s: the host stages through pinned memory", p->lib.path,
            query);
    if (((int (*)(void))fn)() != 1)
        return p->services->set_error(
            ACCEL_ERR_NOT_SUPPORTED,
            "%s says %s() = 0 (not GPU-aware): the host stages through "
            "pinned memory",
            p->lib.path, query);
    return ACCEL_OK;
}

/* ---- the bootstrap: byte exchanges over the world dup ---- */

static accel_status boot_run(accel_comm_provider *p, int is_broadcast,
                             const void *send, void *data, size_t bytes, int root)
{
    accel_comm_handle *boot = &p->boot;
    if (bytes > (size_t)INT_MAX)
        return p->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                      "a bootstrap exchange of %zu bytes is "
                                      "larger than MPI's INT_MAX",
                                      bytes);
    if (is_broadcast && (root < 0 || root >= boot->size))
        return p->services->set_error(ACCEL_ERR_INVALID_ARGUMENT,
                                      "bootstrap root %d is not a rank of "
                                      "the %d",
                                      root, boot->size);
    accel_status status = mpi__comm_check_usable(boot);
    if (status != ACCEL_OK)
        return status;
    mpi_h req = p->lib.h.request_null;
    mpi__enter(p);
    int rc = is_broadcast
                 ? p->lib.call->ibcast(&p->lib, data, (int)bytes, p->lib.h.byte,
                                       root, boot->comm, &req)
                 : p->lib.call->iallgather(&p->lib, send, (int)bytes,
                                           p->lib.h.byte, data, boot->comm, &req);
    mpi__leave(p);
    if (rc != 0)
        return mpi__fail(p, is_broadcast ? "MPI_Ibcast" : "MPI_Iallgather", rc);
    return mpi__wait(boot, &req, 1, false, mpi__deadline(p->timeout_ns), bytes);
}

static accel_status boot_broadcast(void *ctx, void *data, size_t bytes, int root)
{
    accel_comm_provider *p = ctx;
    pthread_mutex_lock(&p->boot_lock);
    accel_status status = boot_run(p, 1, NULL, data, bytes, root);
    pthread_mutex_unlock(&p->boot_lock);
    return status;
}

static accel_status boot_allgather(void *ctx, const void *send, void *out,
                                   size_t bytes)
{
    accel_comm_provider *p = ctx;
    pthread_mutex_lock(&p->boot_lock);
    accel_status status = boot_run(p, 0, send, out, bytes, 0);
    pthread_mutex_unlock(&p->boot_lock);
    return status;
}

static accel_status mpi_bootstrap(accel_comm_provider *p,
                                  struct accel_comm_bootstrap *out)
{
    memset(out, 0, sizeof *out);
    out->ctx = p;
    out->broadcast = boot_broadcast;
    out->allgather = boot_allgather;
    return ACCEL_OK;
}

ACCEL_COMM_EXPORT const struct accel_comm_v1 accel_comm_v1 = {
    .struct_size = sizeof(struct accel_comm_v1),
    .abi_major = ACCEL_COMM_ABI_MAJOR,
    .abi_minor = ACCEL_COMM_ABI_MINOR,
    .name = "mpi",
    .caps = ACCEL_COMM_CAP_BOOTSTRAP,
    .plugin_open = mpi_plugin_open,
    .plugin_close = mpi_plugin_close,
    .accepts_memory = mpi__accepts_memory,
    .unique_id = NULL,
    .comm_create = mpi__comm_create,
    .comm_split = mpi__comm_split,
    .comm_destroy = mpi__comm_destroy,
    .comm_abort = mpi__comm_abort,
    .comm_error = mpi__comm_error,
    .submit = mpi__submit,
    .bootstrap = mpi_bootstrap,
};
