/*
 * The MPI library of the mpi provider, opened with dlopen at plugin_open.
 *
 * Two ABIs are in use and a program never sees them side by side, but this
 * provider must serve both without a header of either: Open MPI (libmpi.so.40)
 * whose handles are pointers to objects the library exports
 * (&ompi_mpi_comm_world), and MPICH and its derivatives (libmpi.so.12: Intel
 * MPI, MVAPICH, Cray) whose handles are ints of fixed value. Every handle is
 * kept here as an mpi_h (intptr_t, wide enough for both), and every call goes
 * through a thunk of the library's ABI (mpi_calls.inc, built once per ABI)
 * that converts handles to the types the library's functions take.
 */
#ifndef ACCEL_COMM_MPI_LIB_H
#define ACCEL_COMM_MPI_LIB_H

#include <stddef.h>
#include <stdint.h>

#include <accel/comm.h>

/* A handle of either ABI: a pointer (Open MPI) or an int (MPICH). */
typedef intptr_t mpi_h;

enum mpi_abi { MPI_ABI_OPEN_MPI, MPI_ABI_MPICH };

/* The thread levels of the MPI standard (the same in both ABIs). */
enum {
    MPI_LEVEL_SINGLE = 0,
    MPI_LEVEL_FUNNELED = 1,
    MPI_LEVEL_SERIALIZED = 2,
    MPI_LEVEL_MULTIPLE = 3
};

/* The user reduction of MPI_Op_create: the datatype argument is a pointer
 * in both ABIs (to an int or to a pointer), and is not read here. */
typedef void mpi_user_fn(void *in, void *inout, int *len, void *datatype);

/*
 * Every MPI function the provider calls: X(name, required). Optional ones
 * may be absent (the MPIX queries exist only in MPIs built for a GPU).
 */
#define MPI_FUNCTION_LIST(X)                                                   \
    X(MPI_Initialized, 1)                                                      \
    X(MPI_Finalized, 1)                                                        \
    X(MPI_Init_thread, 1)                                                      \
    X(MPI_Query_thread, 1)                                                     \
    X(MPI_Finalize, 1)                                                         \
    X(MPI_Error_string, 1)                                                     \
    X(MPI_Comm_dup, 1)                                                         \
    X(MPI_Comm_split, 1)                                                       \
    X(MPI_Comm_free, 1)                                                        \
    X(MPI_Comm_rank, 1)                                                        \
    X(MPI_Comm_size, 1)                                                        \
    X(MPI_Comm_set_errhandler, 1)                                              \
    X(MPI_Allreduce, 1)                                                        \
    X(MPI_Iallreduce, 1)                                                       \
    X(MPI_Ibcast, 1)                                                           \
    X(MPI_Ireduce, 1)                                                          \
    X(MPI_Iallgather, 1)                                                       \
    X(MPI_Ireduce_scatter_block, 1)                                            \
    X(MPI_Isend, 1)                                                            \
    X(MPI_Irecv, 1)                                                            \
    X(MPI_Ibarrier, 1)                                                         \
    X(MPI_Test, 1)                                                             \
    X(MPI_Cancel, 1)                                                           \
    X(MPI_Request_free, 1)                                                     \
    X(MPI_Op_create, 1)                                                        \
    X(MPI_Op_free, 1)                                                          \
    X(MPI_Type_contiguous, 1)                                                  \
    X(MPI_Type_commit, 1)                                                      \
    X(MPI_Type_free, 1)                                                        \
    X(MPIX_Query_cuda_support, 0)                                              \
    X(MPIX_Query_rocm_support, 0)

typedef void (*mpi_fn)(void);

struct mpi_functions {
#define MPI_FUNCTION_FIELD_(name, required) mpi_fn name;
    MPI_FUNCTION_LIST(MPI_FUNCTION_FIELD_)
#undef MPI_FUNCTION_FIELD_
};

struct mpi_lib;

/*
 * The calls through the library's ABI. Handles in, handles out; each
 * returns MPI's error code (0 is MPI_SUCCESS). Counts are ints, as in MPI:
 * the caller splits larger ones.
 */
struct mpi_calls {
    int (*comm_dup)(const struct mpi_lib *lib, mpi_h comm, mpi_h *out);
    int (*comm_split)(const struct mpi_lib *lib, mpi_h comm, int color, int key,
                      mpi_h *out);
    int (*comm_free)(const struct mpi_lib *lib, mpi_h *comm);
    int (*comm_rank)(const struct mpi_lib *lib, mpi_h comm, int *out);
    int (*comm_size)(const struct mpi_lib *lib, mpi_h comm, int *out);
    int (*comm_set_errhandler)(const struct mpi_lib *lib, mpi_h comm,
                               mpi_h handler);
    int (*allreduce)(const struct mpi_lib *lib, const void *send, void *recv,
                     int count, mpi_h type, mpi_h op, mpi_h comm);
    int (*iallreduce)(const struct mpi_lib *lib, const void *send, void *recv,
                      int count, mpi_h type, mpi_h op, mpi_h comm,
                      mpi_h *out_req);
    int (*ibcast)(const struct mpi_lib *lib, void *buf, int count, mpi_h type,
                  int root, mpi_h comm, mpi_h *out_req);
    int (*ireduce)(const struct mpi_lib *lib, const void *send, void *recv,
                   int count, mpi_h type, mpi_h op, int root, mpi_h comm,
                   mpi_h *out_req);
    int (*iallgather)(const struct mpi_lib *lib, const void *send, int count,
                      mpi_h type, void *recv, mpi_h comm, mpi_h *out_req);
    int (*ireduce_scatter_block)(const struct mpi_lib *lib, const void *send,
                                 void *recv, int count, mpi_h type, mpi_h op,
                                 mpi_h comm, mpi_h *out_req);
    int (*isend)(const struct mpi_lib *lib, const void *buf, int count,
                 mpi_h type, int peer, int tag, mpi_h comm, mpi_h *out_req);
    int (*irecv)(const struct mpi_lib *lib, void *buf, int count, mpi_h type,
                 int peer, int tag, mpi_h comm, mpi_h *out_req);
    int (*ibarrier)(const struct mpi_lib *lib, mpi_h comm, mpi_h *out_req);
    /* *req becomes the null request when *out_done is set. */
    int (*test)(const struct mpi_lib *lib, mpi_h *req, int *out_done);
    int (*cancel)(const struct mpi_lib *lib, mpi_h *req);
    int (*request_free)(const struct mpi_lib *lib, mpi_h *req);
    int (*op_create)(const struct mpi_lib *lib, mpi_user_fn *fn, int commute,
                     mpi_h *out_op);
    int (*op_free)(const struct mpi_lib *lib, mpi_h *op);
    int (*type_contiguous)(const struct mpi_lib *lib, int count, mpi_h type,
                           mpi_h *out_type);
    int (*type_commit)(const struct mpi_lib *lib, mpi_h *type);
    int (*type_free)(const struct mpi_lib *lib, mpi_h *type);
};

/* The predefined handles the provider uses, as values of its ABI. */
struct mpi_handles {
    mpi_h comm_world;
    mpi_h comm_null;
    mpi_h request_null;
    mpi_h errors_return;
    mpi_h byte;
    mpi_h f32, f64;
    mpi_h i8, i16, i32, i64;
    mpi_h u8, u16, u32, u64;
    mpi_h sum, prod, min, max;
    void *in_place;
    int undefined; /* MPI_UNDEFINED, the color that leaves a split */
};

struct mpi_lib {
    void *dl;
    char path[256];
    enum mpi_abi abi;
    struct mpi_functions fn;
    struct mpi_handles h;
    const struct mpi_calls *call;
};

/* The thunks of each ABI (mpi_calls_ompi.c, mpi_calls_mpich.c). */
extern const struct mpi_calls mpi__calls_open_mpi;
extern const struct mpi_calls mpi__calls_mpich;

/*
 * Open the library: ACCEL_MPI_LIBRARY when set (only it), else
 * libmpi.so.40, else libmpi.so.12. Resolve every function, tell the ABI by
 * the symbols present, and fill the handles. On failure returns
 * ACCEL_ERR_NOT_SUPPORTED with the reason in `reason`.
 */
accel_status mpi__lib_open(const struct accel_comm_services *services,
                           struct mpi_lib *lib, char *reason, size_t reason_size);

/* MPI's text for error code `code`, in buf (always NUL-terminated). */
const char *mpi__lib_error_string(const struct mpi_lib *lib, int code,
                                  char *buf, size_t size);

#endif /* ACCEL_COMM_MPI_LIB_H */
