/*
 * Rank awareness without a dependency: the launcher's environment says
 * which rank of how many this process is, and which of how many on its
 * machine, before any MPI library is loaded.
 *
 * Launchers, in the order they are believed (the first whose rank
 * variable is set supplies the values; one launcher, so that a job
 * started inside another's allocation does not mix the two):
 *
 *   Open MPI   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
 *   MVAPICH2   MV2_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
 *   PMI        PMI_RANK, PMI_SIZE, PMI_LOCAL_RANK or MPI_LOCALRANKID,
 *              PMI_LOCAL_SIZE or MPI_LOCALNRANKS (MPICH's Hydra, Intel
 *              MPI, Cray PALS)
 *   Flux       FLUX_TASK_RANK, FLUX_JOB_SIZE, FLUX_TASK_LOCAL_ID
 *   Slurm      SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
 *              SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE
 *   PMIx       PMIX_RANK (PMIx exports no size: another launcher's
 *              variable or ACCEL_SIZE must give it)
 *
 * MPI launchers come before the resource managers because `mpirun` run
 * inside a Slurm or Flux allocation leaves the allocation's variables in
 * every rank's environment, describing the batch script, not the rank.
 * What the first launcher lacks (srun's PMI-2 sets PMI_RANK and PMI_SIZE
 * only) is taken from a later one whose rank and size are the same
 * numbers, which shows that it describes the same process. Then
 * ACCEL_RANK, ACCEL_SIZE, ACCEL_LOCAL_RANK and ACCEL_LOCAL_SIZE replace
 * each value. Every variable is read through the secure getenv, and ""
 * counts as unset, as for every accel variable.
 */
#include <stdio.h>
#include <string.h>

#include "rank.h"
#include "sized.h"
#include "status.h"

/* The four values, in the order accel_rank_info lists them. */
enum which { RANK, SIZE, LOCAL_RANK, LOCAL_SIZE, WHICH_COUNT };

static const char *const what_names[WHICH_COUNT] = {"rank", "size",
                                                    "local rank", "local size"};

/* Up to two variables per value, the first set wins. */
struct launcher {
    const char *vars[WHICH_COUNT][2];
};

static const struct launcher launchers[] = {
    {{{"OMPI_COMM_WORLD_RANK"},
      {"OMPI_COMM_WORLD_SIZE"},
      {"OMPI_COMM_WORLD_LOCAL_RANK"},
      {"OMPI_COMM_WORLD_LOCAL_SIZE"}}},
    {{{"MV2_COMM_WORLD_RANK"},
      {"MV2_COMM_WORLD_SIZE"},
      {"MV2_COMM_WORLD_LOCAL_RANK"},
      {"MV2_COMM_WORLD_LOCAL_SIZE"}}},
    {{{"PMI_RANK"},
      {"PMI_SIZE"},
      {"PMI_LOCAL_RANK", "MPI_LOCALRANKID"},
      {"PMI_LOCAL_SIZE", "MPI_LOCALNRANKS"}}},
    {{{"FLUX_TASK_RANK"}, {"FLUX_JOB_SIZE"}, {"FLUX_TASK_LOCAL_ID"}, {NULL}}},
    {{{"SLURM_PROCID"},
      {"SLURM_NTASKS"},
      {"SLURM_LOCALID"},
      {"SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}}},
    {{{"PMIX_RANK"}, {NULL}, {NULL}, {NULL}}},
};

#define LAUNCHER_COUNT (sizeof launchers / sizeof launchers[0])

static const char *const overrides[WHICH_COUNT] = {
    "ACCEL_RANK", "ACCEL_SIZE", "ACCEL_LOCAL_RANK", "ACCEL_LOCAL_SIZE"};

/* A value and the variable it came from; source NULL: none gave it. */
struct value {
    int32_t number;
    const char *source;
};

static const char *env(const struct accel__ids *ids, const char *name)
{
    const char *text = accel__getenv_as(ids, name);
    return text != NULL && text[0] != '\0' ? text : NULL;
}

/* Decimal digits alone, from `min` to INT32_MAX; NULL on success, else why. */
static const char *parse_number(const char *p, const char *end, int32_t min,
                                int32_t *out)
{
    int64_t value = 0;
    if (p == end)
        return "is empty where a number belongs";
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return "is not a whole number (decimal digits alone)";
        value = value * 10 + (*p - '0');
        if (value > INT32_MAX)
            return "is larger than 2147483647";
    }
    if (value < min)
        return min == 1 ? "is 0 where a count of at least 1 belongs"
                        : "is too small";
    *out = (int32_t)value;
    return NULL;
}

static accel_status malformed(const char *name, const char *text, const char *why)
{
    bool override = strncmp(name, "ACCEL_", 6) == 0;
    return accel__error(ACCEL_ERR_INVALID_ARGUMENT, "%s='%.64s' %s%s", name,
                        text, why,
                        override ? ""
                                 : " (a launcher's variable: ACCEL_RANK, "
                                   "ACCEL_SIZE, ACCEL_LOCAL_RANK and "
                                   "ACCEL_LOCAL_SIZE replace its values)");
}

/*
 * SLURM_TASKS_PER_NODE: "2(x3),1", tasks per node in node order. This
 * node's figure is at SLURM_NODEID; without it, the first (a job of one
 * node, or an even spread).
 */
static accel_status parse_tasks_per_node(const struct accel__ids *ids,
                                         const char *text, int32_t *out)
{
    int32_t node = 0;
    const char *node_text = env(ids, "SLURM_NODEID");
    const char *why = NULL;
    if (node_text != NULL) {
        why = parse_number(node_text, node_text + strlen(node_text), 0, &node);
        if (why != NULL)
            return malformed("SLURM_NODEID", node_text, why);
    }
    for (const char *p = text;;) {
        const char *end = p + strcspn(p, "(,");
        int32_t tasks = 0, repeat = 1;
        why = parse_number(p, end, 1, &tasks);
        if (why == NULL && *end == '(') {
            const char *close = strchr(end, ')');
            why = close == NULL || end[1] != 'x'
                      ? "is not of the form 2(x3),1"
                      : parse_number(end + 2, close, 1, &repeat);
            end = close != NULL ? close + 1 : end;
        }
        if (why == NULL && *end != ',' && *end != '\0')
            why = "is not of the form 2(x3),1";
        if (why != NULL)
            return malformed("SLURM_TASKS_PER_NODE", text, why);
        if (node < repeat) {
            *out = tasks;
            return ACCEL_OK;
        }
        node -= repeat;
        if (*end == '\0')
            return malformed("SLURM_TASKS_PER_NODE", text,
                             "lists fewer nodes than SLURM_NODEID names");
        p = end + 1;
    }
}

/* Variable `name` into `out` when set; an error when set but malformed. */
static accel_status read_var(const struct accel__ids *ids, const char *name,
                             enum which which, struct value *out)
{
    const char *text = env(ids, name);
    if (text == NULL)
        return ACCEL_OK;
    int32_t number = 0;
    if (strcmp(name, "SLURM_TASKS_PER_NODE") == 0) {
        accel_status status = parse_tasks_per_node(ids, text, &number);
        if (status != ACCEL_OK)
            return status;
    } else {
        int32_t min = which == SIZE || which == LOCAL_SIZE ? 1 : 0;
        const char *why = parse_number(text, text + strlen(text), min, &number);
        if (why != NULL)
            return malformed(name, text, why);
    }
    out->number = number;
    out->source = name;
    return ACCEL_OK;
}

/* The values launcher `l` gives, each from its first variable that is set. */
static accel_status read_launcher(const struct accel__ids *ids,
                                  const struct launcher *l,
                                  struct value out[WHICH_COUNT])
{
    memset(out, 0, WHICH_COUNT * sizeof *out);
    for (int w = 0; w < WHICH_COUNT; w++) {
        for (int v = 0; v < 2 && l->vars[w][v] != NULL && !out[w].source; v++) {
            accel_status status = read_var(ids, l->vars[w][v], w, &out[w]);
            if (status != ACCEL_OK)
                return status;
        }
    }
    return ACCEL_OK;
}

static bool complete(const struct value values[WHICH_COUNT])
{
    for (int w = 0; w < WHICH_COUNT; w++) {
        if (values[w].source == NULL)
            return false;
    }
    return true;
}

static bool same_job(const struct value a[WHICH_COUNT],
                     const struct value b[WHICH_COUNT])
{
    return a[SIZE].source != NULL && b[RANK].source != NULL &&
           b[SIZE].source != NULL && a[RANK].number == b[RANK].number &&
           a[SIZE].number == b[SIZE].number;
}

/* The first launcher whose rank is set, completed by the later ones. */
static accel_status read_launchers(const struct accel__ids *ids,
                                   struct value values[WHICH_COUNT])
{
    size_t first = 0;
    memset(values, 0, WHICH_COUNT * sizeof *values);
    for (; first < LAUNCHER_COUNT; first++) {
        if (env(ids, launchers[first].vars[RANK][0]) != NULL)
            break;
    }
    if (first == LAUNCHER_COUNT)
        return ACCEL_OK;
    accel_status status = read_launcher(ids, &launchers[first], values);
    /* Only what the first lacks is looked for, so that a stale variable of
     * an allocation around the job cannot make a complete answer fail. */
    for (size_t l = first + 1;
         l < LAUNCHER_COUNT && status == ACCEL_OK && !complete(values); l++) {
        if (env(ids, launchers[l].vars[RANK][0]) == NULL)
            continue;
        struct value other[WHICH_COUNT];
        status = read_launcher(ids, &launchers[l], other);
        if (status != ACCEL_OK || !same_job(values, other))
            continue;
        for (int w = 0; w < WHICH_COUNT; w++) {
            if (values[w].source == NULL)
                values[w] = other[w];
        }
    }
    return status;
}

static accel_status read_overrides(const struct accel__ids *ids,
                                   struct value values[WHICH_COUNT])
{
    for (int w = 0; w < WHICH_COUNT; w++) {
        struct value given = {0, NULL};
        accel_status status = read_var(ids, overrides[w], w, &given);
        if (status != ACCEL_OK)
            return status;
        if (given.source != NULL)
            values[w] = given;
    }
    return ACCEL_OK;
}

/* What no variable gave: a default where the others settle it, else unknown. */
static accel_status fill_defaults(struct value values[WHICH_COUNT])
{
    struct value *v = values;
    if (v[RANK].source == NULL && v[SIZE].source == NULL) {
        v[RANK] = (struct value){0, "default"};
        v[SIZE] = (struct value){1, "default"};
    }
    for (int w = RANK; w <= SIZE; w++) {
        if (v[w].source == NULL)
            return accel__error(
                ACCEL_ERR_INVALID_ARGUMENT,
                "%s gives the %s but no variable gives the %s: set %s",
                v[RANK + SIZE - w].source, what_names[RANK + SIZE - w],
                what_names[w], overrides[w]);
    }
    /* One rank, or one rank on this machine: the other local value follows. */
    if (v[SIZE].number == 1 ||
        (v[LOCAL_SIZE].source && v[LOCAL_SIZE].number == 1)) {
        if (v[LOCAL_RANK].source == NULL)
            v[LOCAL_RANK] = (struct value){0, "default"};
        if (v[LOCAL_SIZE].source == NULL)
            v[LOCAL_SIZE] = (struct value){1, "default"};
    }
    for (int w = LOCAL_RANK; w <= LOCAL_SIZE; w++) {
        if (v[w].source == NULL)
            v[w] = (struct value){-1, ACCEL__RANK_UNKNOWN};
    }
    return ACCEL_OK;
}

/* `small` must be below `large` (or at most, `or_equal`); both known. */
static accel_status check_order(const struct value *small, enum which s,
                                const struct value *large, enum which l,
                                bool or_equal)
{
    if (small->number < 0 || large->number < 0)
        return ACCEL_OK;
    if (small->number < large->number ||
        (or_equal && small->number == large->number))
        return ACCEL_OK;
    return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                        "the %s %d (%s) is %s the %s %d (%s)", what_names[s],
                        (int)small->number, small->source,
                        or_equal ? "more than" : "not below", what_names[l],
                        (int)large->number, large->source);
}

static accel_status check_values(const struct value v[WHICH_COUNT])
{
    accel_status status = check_order(&v[RANK], RANK, &v[SIZE], SIZE, false);
    if (status == ACCEL_OK)
        status = check_order(&v[LOCAL_RANK], LOCAL_RANK, &v[LOCAL_SIZE],
                             LOCAL_SIZE, false);
    if (status == ACCEL_OK)
        status = check_order(&v[LOCAL_SIZE], LOCAL_SIZE, &v[SIZE], SIZE, true);
    if (status == ACCEL_OK)
        status = check_order(&v[LOCAL_RANK], LOCAL_RANK, &v[SIZE], SIZE, false);
    return status;
}

accel_status accel__rank_info_as(const struct accel__ids *ids,
                                 accel_rank_info *out_info)
{
    memset(out_info, 0, sizeof *out_info);
    struct value v[WHICH_COUNT];
    accel_status status = read_launchers(ids, v);
    if (status == ACCEL_OK)
        status = read_overrides(ids, v);
    if (status == ACCEL_OK)
        status = fill_defaults(v);
    if (status == ACCEL_OK)
        status = check_values(v);
    if (status != ACCEL_OK)
        return status;
    *out_info = (accel_rank_info){
        .struct_size = sizeof *out_info,
        .rank = v[RANK].number,
        .size = v[SIZE].number,
        .local_rank = v[LOCAL_RANK].number,
        .local_size = v[LOCAL_SIZE].number,
        .rank_source = v[RANK].source,
        .size_source = v[SIZE].source,
        .local_rank_source = v[LOCAL_RANK].source,
        .local_size_source = v[LOCAL_SIZE].source,
    };
    return ACCEL_OK;
}

accel_status accel_rank_info_get_sized(accel_rank_info *out_info, size_t info_size)
{
    if (out_info == NULL)
        return accel__error(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_rank_info_get: out_info is NULL");
    struct accel__ids ids;
    accel__ids_current(&ids);
    accel_rank_info full;
    accel_status status = accel__rank_info_as(&ids, &full);
    size_t min = ACCEL__STRUCT_MIN(accel_rank_info, rank);
    if (status != ACCEL_OK) {
        /* Nothing half-read: the caller's struct is cleared where it can be. */
        if (info_size >= min)
            memset(out_info, 0, info_size);
        return status;
    }
    return accel__struct_out(out_info, info_size, &full, sizeof full, min,
                             "accel_rank_info_get");
}
