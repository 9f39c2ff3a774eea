/*
 * Opening the MPI library and telling its ABI (see mpi_lib.h).
 */
#include "mpi_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Open MPI's name (3.0 and later), then MPICH's ABI name (MPICH 3.1 and
 * later, Intel MPI 5 and later, MVAPICH2 2.x). */
static const char *const default_names[] = {"libmpi.so.40", "libmpi.so.12", NULL};

/*
 * MPI must see its own symbols from the components it dlopens in turn
 * (Open MPI's mca_*.so resolve against libmpi globally), hence GLOBAL; and
 * once MPI_Init has started its threads the library must never be
 * unmapped, hence NODELETE.
 */
static const int open_flags = RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE;

static void append(char *reason, size_t size, const char *fmt, const char *a,
                   const char *b)
{
    size_t used = strlen(reason);
    if (used < size)
        snprintf(reason + used, size - used, fmt, a, b);
}

static accel_status open_library(const struct accel_comm_services *services,
                                 struct mpi_lib *lib, char *reason, size_t size)
{
    const char *named = services->getenv("ACCEL_MPI_LIBRARY");
    reason[0] = '\0';
    if (named != NULL && named[0] != '\0') {
        /* Only the named one: a typo must show, not be covered. */
        lib->dl = dlopen(named, open_flags);
        if (lib->dl == NULL) {
            append(reason, size, "ACCEL_MPI_LIBRARY=%s: %s", named, dlerror());
            return ACCEL_ERR_NOT_SUPPORTED;
        }
        snprintf(lib->path, sizeof lib->path, "%s", named);
        return ACCEL_OK;
    }
    for (size_t i = 0; default_names[i] != NULL; i++) {
        lib->dl = dlopen(default_names[i], open_flags);
        if (lib->dl != NULL) {
            snprintf(lib->path, sizeof lib->path, "%s", default_names[i]);
            return ACCEL_OK;
        }
        append(reason, size, "%s%s", reason[0] != '\0' ? "; " : "", dlerror());
    }
    return ACCEL_ERR_NOT_SUPPORTED;
}

static accel_status resolve_functions(struct mpi_lib *lib, char *reason,
                                      size_t size)
{
    size_t missing = 0;
    reason[0] = '\0';
#define MPI_RESOLVE_(name, required)                                           \
    lib->fn.name = (mpi_fn)dlsym(lib->dl, #name);                              \
    if (lib->fn.name == NULL && (required)) {                                  \
        append(reason, size, "%s%s", missing++ ? ", " : "", #name);            \
    }
    MPI_FUNCTION_LIST(MPI_RESOLVE_)
#undef MPI_RESOLVE_
    if (missing == 0)
        return ACCEL_OK;
    char list[512];
    snprintf(list, sizeof list, "%s", reason);
    snprintf(reason, size, "%s is not a usable MPI: it lacks %s", lib->path,
             list);
    return ACCEL_ERR_NOT_SUPPORTED;
}

/* An Open MPI predefined object: its address is the handle. */
static accel_status ompi_object(struct mpi_lib *lib, const char *name,
                                mpi_h *out, char *reason, size_t size)
{
    void *object = dlsym(lib->dl, name);
    if (object == NULL) {
        snprintf(reason, size, "%s looks like Open MPI but lacks %s", lib->path,
                 name);
        return ACCEL_ERR_NOT_SUPPORTED;
    }
    *out = (mpi_h)object;
    return ACCEL_OK;
}

/* Open MPI 3 and later (mpi.h: OMPI_PREDEFINED_GLOBAL, MPI_IN_PLACE
 * ((void *) 1), MPI_UNDEFINED -32766). */
static accel_status fill_open_mpi(struct mpi_lib *lib, char *reason, size_t size)
{
    static const struct {
        const char *symbol;
        size_t offset;
    } objects[] = {
        {"ompi_mpi_comm_world", offsetof(struct mpi_handles, comm_world)},
        {"ompi_mpi_comm_null", offsetof(struct mpi_handles, comm_null)},
        {"ompi_request_null", offsetof(struct mpi_handles, request_null)},
        {"ompi_mpi_errors_return", offsetof(struct mpi_handles, errors_return)},
        {"ompi_mpi_byte", offsetof(struct mpi_handles, byte)},
        {"ompi_mpi_float", offsetof(struct mpi_handles, f32)},
        {"ompi_mpi_double", offsetof(struct mpi_handles, f64)},
        {"ompi_mpi_int8_t", offsetof(struct mpi_handles, i8)},
        {"ompi_mpi_int16_t", offsetof(struct mpi_handles, i16)},
        {"ompi_mpi_int32_t", offsetof(struct mpi_handles, i32)},
        {"ompi_mpi_int64_t", offsetof(struct mpi_handles, i64)},
        {"ompi_mpi_uint8_t", offsetof(struct mpi_handles, u8)},
        {"ompi_mpi_uint16_t", offsetof(struct mpi_handles, u16)},
        {"ompi_mpi_uint32_t", offsetof(struct mpi_handles, u32)},
        {"ompi_mpi_uint64_t", offsetof(struct mpi_handles, u64)},
        {"ompi_mpi_op_sum", offsetof(struct mpi_handles, sum)},
        {"ompi_mpi_op_prod", offsetof(struct mpi_handles, prod)},
        {"ompi_mpi_op_min", offsetof(struct mpi_handles, min)},
        {"ompi_mpi_op_max", offsetof(struct mpi_handles, max)},
    };
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
        mpi_h *slot = (mpi_h *)((char *)&lib->h + objects[i].offset);
        accel_status status = ompi_object(lib, objects[i].symbol, slot, reason,
                                          size);
        if (status != ACCEL_OK)
            return status;
    }
    lib->h.in_place = (void *)1;
    lib->h.undefined = -32766;
    lib->abi = MPI_ABI_OPEN_MPI;
    lib->call = &mpi__calls_open_mpi;
    return ACCEL_OK;
}

/*
 * MPICH's fixed handle values, from MPICH's src/include/mpi.h.in (4.x;
 * the same since the MPICH ABI initiative of 3.1): MPI_COMM_WORLD,
 * MPI_COMM_NULL, MPI_REQUEST_NULL, MPI_ERRORS_RETURN, the ops, MPI_IN_PLACE
 * and MPI_UNDEFINED are literal there; the datatypes are filled in by
 * configure, with the values below on every LP64 build (the low byte pair
 * is the size and index: 0x4c00 SS II), as in the generated mpi.h of MPICH
 * 4.1 (MPI_VERSION 4, MPI_SUBVERSION 1).
 */
static void fill_mpich(struct mpi_lib *lib)
{
    struct mpi_handles *h = &lib->h;
    h->comm_world = 0x44000000;
    h->comm_null = 0x04000000;
    h->request_null = 0x2c000000;
    h->errors_return = 0x54000001;
    h->byte = 0x4c00010d;
    h->f32 = 0x4c00040a;
    h->f64 = 0x4c00080b;
    h->i8 = 0x4c000137;
    h->i16 = 0x4c000238;
    h->i32 = 0x4c000439;
    h->i64 = 0x4c00083a;
    h->u8 = 0x4c00013b;
    h->u16 = 0x4c00023c;
    h->u32 = 0x4c00043d;
    h->u64 = 0x4c00083e;
    h->max = 0x58000001;
    h->min = 0x58000002;
    h->sum = 0x58000003;
    h->prod = 0x58000004;
    h->in_place = (void *)-1;
    h->undefined = -32766;
    lib->abi = MPI_ABI_MPICH;
    lib->call = &mpi__calls_mpich;
}

/*
 * Not Open MPI: accept only an MPI that says it is of MPICH's family, since
 * the handle values above hold for that family alone. MPI_Get_library_version
 * may be called before MPI_Init (MPI 3.0).
 */
static accel_status check_mpich_family(struct mpi_lib *lib, char *reason,
                                       size_t size)
{
    static const char *const family[] = {"MPICH", "Intel(R) MPI", "MVAPICH",
                                         NULL};
    int (*version)(char *, int *) = (int (*)(char *, int *))dlsym(
        lib->dl, "MPI_Get_library_version");
    /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192. */
    char text[8192];
    int length = 0;
    if (version == NULL || version(text, &length) != 0) {
        snprintf(reason, size,
                 "%s is neither Open MPI (no ompi_mpi_comm_world) nor says "
                 "which MPI it is (MPI_Get_library_version)",
                 lib->path);
        return ACCEL_ERR_NOT_SUPPORTED;
    }
    text[sizeof text - 1] = '\0';
    for (size_t i = 0; family[i] != NULL; i++)
        if (strstr(text, family[i]) != NULL) {
            fill_mpich(lib);
            return ACCEL_OK;
        }
    snprintf(reason, size,
             "%s is an MPI of unknown ABI (neither Open MPI nor of MPICH's "
             "family): %.120s",
             lib->path, text);
    return ACCEL_ERR_NOT_SUPPORTED;
}

accel_status mpi__lib_open(const struct accel_comm_services *services,
                           struct mpi_lib *lib, char *reason, size_t reason_size)
{
    memset(lib, 0, sizeof *lib);
    accel_status status = open_library(services, lib, reason, reason_size);
    if (status == ACCEL_OK)
        status = resolve_functions(lib, reason, reason_size);
    if (status == ACCEL_OK) {
        if (dlsym(lib->dl, "ompi_mpi_comm_world") != NULL)
            status = fill_open_mpi(lib, reason, reason_size);
        else
            status = check_mpich_family(lib, reason, reason_size);
    }
    /* The library stays mapped (NODELETE) even when refused: nothing of it
     * ran, and closing would only drop the reference. */
    if (status != ACCEL_OK && lib->dl != NULL) {
        dlclose(lib->dl);
        lib->dl = NULL;
    }
    return status;
}

const char *mpi__lib_error_string(const struct mpi_lib *lib, int code,
                                  char *buf, size_t size)
{
    /* MPI_MAX_ERROR_STRING: 256 in Open MPI, 1024 in MPICH. */
    char text[1024];
    int length = 0;
    int (*error_string)(int, char *, int *) = (int (*)(
        int, char *, int *))lib->fn.MPI_Error_string;
    if (error_string(code, text, &length) != 0 || length <= 0)
        snprintf(buf, size, "MPI error %d", code);
    else
        snprintf(buf, size, "%.*s (MPI error %d)", length, text, code);
    return buf;
}
