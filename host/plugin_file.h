/*
 * A plugin file, opened once and checked through its descriptor, then
 * loaded through that same descriptor: what is checked is what is loaded.
 *
 * A directory on the search path is opened and fstat'ed (owner, mode,
 * ACLs); each candidate in it is opened relative to that descriptor with
 * O_NOFOLLOW, or, when it is a symbolic link, the link's owner is checked
 * and its target's directory is opened and checked the same way before the
 * target is opened with O_NOFOLLOW (one link level, never two). Every check
 * of the file (kind, size, owner, mode, ACL) is on fstat and fgetxattr of
 * the descriptor; the ELF checks read it with pread; dlopen opens it as
 * /proc/self/fd/N, and the descriptor stays open while the handle lives.
 */
#ifndef ACCEL_HOST_PLUGIN_FILE_H
#define ACCEL_HOST_PLUGIN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "accel/types.h"

/* Whose files a discovery trusts. */
struct accel__trust {
    uid_t euid; /* with root, the owners trusted */
    bool insecure; /* ACCEL_ALLOW_INSECURE_PLUGINS=1: no owner, mode or ACL check */
};

/* A directory opened for its candidates, with its own checks done. */
struct accel__dir {
    int fd;     /* -1 when it could not be opened */
    char *path; /* as shown in reasons */
    struct stat st;
    bool others_write; /* others may add entries here (a sticky dir) */
    char refusal[640]; /* why no file in it is loaded; "" when safe */
};

/*
 * Open the directory at `path` and check it for `trust`; `role` names it in
 * a refusal ("its directory"). ACCEL_ERR_OUT_OF_HOST_MEMORY is the only
 * error; a directory that cannot be opened has fd -1 and the reason.
 */
accel_status accel__dir_open(const struct accel__trust *trust, const char *path,
                             const char *role, struct accel__dir *out_dir);
void accel__dir_close(struct accel__dir *dir);

/* One candidate file, opened and checked. */
struct accel__plugin_file {
    int fd;             /* the file, -1 when not opened */
    struct stat st;     /* fstat of fd; lstat of the entry when fd is -1 */
    bool gone;          /* nothing by that name: not a candidate */
    char refusal[1024]; /* why it may not be loaded; "" when it may */
};

/*
 * Open `name` in `dir` and run every check on the descriptor. `shown` is
 * the path the candidate is listed by, for log lines.
 */
accel_status accel__plugin_file_open(const struct accel__trust *trust,
                                     const struct accel__dir *dir,
                                     const char *name, const char *shown,
                                     struct accel__plugin_file *out_file);
void accel__plugin_file_close(struct accel__plugin_file *file);
/*
 * How many symbols the opened file exports (read from its ELF dynamic
 * symbol table before it is loaded); false when it does not say.
 */
bool accel__plugin_file_exports(const struct accel__plugin_file *file,
                                uint64_t *out_count);

/*
 * Check the ELF headers through *fd and dlopen exactly that file, as
 * /proc/self/fd/N (RTLD_NOW | RTLD_LOCAL). On success *out_handle is the
 * handle and *fd the descriptor to keep open until after dlclose (it may be
 * a new number: see plugin_file.c). On refusal returns the reason in `why`
 * and *fd is left as it was.
 */
const char *accel__plugin_file_load(int *fd, const struct stat *st,
                                    void **out_handle, char *why,
                                    size_t why_size);

/*
 * The test seam of the check-then-load race: when set, called with the
 * listed path and the descriptor after every check has passed and just
 * before the file is loaded. Tests swap the file there; NULL otherwise.
 */
extern void (*accel__plugin_file_test_hook)(const char *shown, int fd);

/*
 * The device and inode of the file mapped at `address` in this process,
 * from /proc/self/maps. False when it cannot be told.
 */
bool accel__mapped_file(const void *address, dev_t *out_dev, ino_t *out_ino);

#endif /* ACCEL_HOST_PLUGIN_FILE_H */
