/*
 * Plugin files: opened once, checked through the descriptor, loaded through
 * the descriptor. See plugin_file.h for the order of the steps.
 */
#include "os.h"
#include "status.h"
#include "plugin_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "elf_check.h"

void (*accel__plugin_file_test_hook)(const char *shown, int fd);

/* The opening flags of a candidate: never follow, never block on a FIFO,
 * never take a terminal. */
#define FILE_OPEN_FLAGS                                                        \
    (O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
#define DIR_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_DIRECTORY)

/* Root and the effective user are the owners a process already trusts. */
static bool owner_trusted(const struct accel__trust *trust, uid_t owner)
{
    return owner == 0 || owner == trust->euid;
}

static const char *kind_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "of an unknown kind";
}

/* ---- POSIX ACLs, read from the descriptor ---- */

/*
 * The kernel's xattr form of a POSIX ACL (linux/posix_acl_xattr.h): a
 * 4-byte version (2), then 8-byte entries {u16 tag, u16 perm, u32 id},
 * little-endian. Read by hand: no libacl for four fields.
 */
#define ACL_XATTR_VERSION 2u
#define ACL_TAG_USER 0x02u
#define ACL_TAG_GROUP 0x08u
#define ACL_TAG_MASK 0x10u
#define ACL_PERM_WRITE 0x02u
#define ACL_ENTRIES_MAX 1024u

static uint32_t le_read(const unsigned char *p, size_t bytes)
{
    uint32_t value = 0;
    for (size_t i = bytes; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

/*
 * Who other than a trusted user can write through the ACL `xattr` of `fd`:
 * false when nobody; true with "uid N" or "gid N" (or why the ACL cannot be
 * read) in `who`. Named users and named groups count, after the mask; the
 * owner, the owning group and others are what the mode bits show.
 */
static bool acl_writer(const struct accel__trust *trust, int fd,
                       const char *xattr, char *who, size_t size)
{
    unsigned char acl[4 + 8 * ACL_ENTRIES_MAX];
    ssize_t length = fgetxattr(fd, xattr, acl, sizeof acl);
    if (length < 0 && (errno == ENODATA || errno == ENOTSUP))
        return false;
    if (length < 0 || length < 4 || (length - 4) % 8 != 0 ||
        le_read(acl, 4) != ACL_XATTR_VERSION) {
        snprintf(who, size, "an ACL that cannot be read (%s)",
                 length < 0 ? strerror(errno) : "malformed");
        return true;
    }
    size_t count = (size_t)(length - 4) / 8;
    uint32_t mask = 07;
    for (size_t i = 0; i < count; i++) {
        if (le_read(acl + 4 + 8 * i, 2) == ACL_TAG_MASK)
            mask = le_read(acl + 4 + 8 * i + 2, 2);
    }
    for (size_t i = 0; i < count; i++) {
        const unsigned char *entry = acl + 4 + 8 * i;
        uint32_t tag = le_read(entry, 2), perm = le_read(entry + 2, 2) & mask;
        uint32_t id = le_read(entry + 4, 4);
        if (!(perm & ACL_PERM_WRITE))
            continue;
        if (tag == ACL_TAG_USER && !owner_trusted(trust, (uid_t)id)) {
            snprintf(who, size, "uid %u", (unsigned)id);
            return true;
        }
        if (tag == ACL_TAG_GROUP) {
            snprintf(who, size, "gid %u", (unsigned)id);
            return true;
        }
    }
    return false;
}

/* ---- directories ---- */

static bool dir_refused(const struct accel__trust *trust,
                        struct accel__dir *dir, const char *role)
{
    char who[128];
    unsigned mode = (unsigned)(dir->st.st_mode & 07777);
    bool sticky = dir->st.st_mode & S_ISVTX;
    char *why = dir->refusal;
    size_t size = sizeof dir->refusal;
    if (!owner_trusted(trust, dir->st.st_uid))
        snprintf(why, size,
                 "%s %s is owned by uid %u, neither root nor the effective "
                 "user (uid %u)",
                 role, dir->path, (unsigned)dir->st.st_uid,
                 (unsigned)trust->euid);
    else if ((dir->st.st_mode & S_IWOTH) && !sticky)
        snprintf(why, size,
                 "%s %s is writable by other users and not sticky (mode %04o)",
                 role, dir->path, mode);
    else if (acl_writer(trust, dir->fd, "system.posix_acl_access", who,
                        sizeof who) &&
             !sticky)
        snprintf(why, size,
                 "%s %s is writable by %s through its ACL "
                 "(system.posix_acl_access) and not sticky",
                 role, dir->path, who);
    else if (acl_writer(trust, dir->fd, "system.posix_acl_default", who,
                        sizeof who))
        snprintf(why, size,
                 "%s %s gives %s write access to the files made in it, through "
                 "its default ACL (system.posix_acl_default)",
                 role, dir->path, who);
    else
        return false;
    return true;
}

/* Open the directory `relative` to `at`, shown as `path`, and check it. */
static accel_status dir_open_at(const struct accel__trust *trust, int at,
                                const char *relative, const char *path,
                                const char *role, struct accel__dir *out_dir)
{
    memset(out_dir, 0, sizeof *out_dir);
    out_dir->fd = -1; /* so that accel__dir_close is safe on every path */
    out_dir->path = strdup(path);
    if (out_dir->path == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin directory");
    out_dir->fd = openat(at, relative, DIR_OPEN_FLAGS);
    if (out_dir->fd < 0 || fstat(out_dir->fd, &out_dir->st) != 0) {
        snprintf(out_dir->refusal, sizeof out_dir->refusal,
                 "%s %s cannot be examined: %s", role, path, strerror(errno));
        if (out_dir->fd >= 0)
            close(out_dir->fd);
        out_dir->fd = -1;
        return ACCEL_OK;
    }
    char who[128];
    out_dir->others_write = (out_dir->st.st_mode & S_IWOTH) ||
                            acl_writer(trust, out_dir->fd,
                                       "system.posix_acl_access", who,
                                       sizeof who);
    if (!trust->insecure)
        dir_refused(trust, out_dir, role);
    return ACCEL_OK;
}

accel_status accel__dir_open(const struct accel__trust *trust, const char *path,
                             const char *role, struct accel__dir *out_dir)
{
    return dir_open_at(trust, AT_FDCWD, path, path, role, out_dir);
}

void accel__dir_close(struct accel__dir *dir)
{
    if (dir->fd >= 0)
        close(dir->fd);
    free(dir->path);
    memset(dir, 0, sizeof *dir);
    dir->fd = -1;
}

/* ---- the file ---- */

static bool file_refused(const struct accel__trust *trust,
                         struct accel__plugin_file *file)
{
    const struct stat *st = &file->st;
    char *why = file->refusal, who[128];
    size_t size = sizeof file->refusal;
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if (!S_ISREG(st->st_mode))
        snprintf(why, size, "not a regular file: %s", kind_name(st->st_mode));
    else if (st->st_size == 0)
        snprintf(why, size, "the file is empty");
    else if (trust->insecure)
        return false;
    else if (!owner_trusted(trust, st->st_uid))
        snprintf(why, size,
                 "the file is owned by uid %u, neither root nor the effective "
                 "user (uid %u)",
                 (unsigned)st->st_uid, (unsigned)trust->euid);
    else if (st->st_mode & S_IWOTH)
        snprintf(why, size, "the file is writable by other users (mode %04o)",
                 mode);
    else if (acl_writer(trust, file->fd, "system.posix_acl_access", who,
                        sizeof who))
        snprintf(why, size,
                 "the file is writable by %s through its ACL "
                 "(system.posix_acl_access)",
                 who);
    else if (st->st_mode & S_IWGRP)
        snprintf(why, size, "the file is writable by its group (mode %04o)",
                 mode);
    else
        return false;
    return true;
}

/* Open `name` in the directory `dirfd`, never following a link. */
static void open_in(struct accel__plugin_file *file, int dirfd, const char *name)
{
    file->fd = openat(dirfd, name, FILE_OPEN_FLAGS);
    if (file->fd >= 0 && fstat(file->fd, &file->st) != 0) {
        close(file->fd);
        file->fd = -1;
    }
}

/* The directory and last component of a link's target: "." when none. */
static accel_status target_split(const char *target, char **out_dir,
                                 const char **out_base)
{
    const char *slash = strrchr(target, '/');
    *out_base = slash ? slash + 1 : target;
    if ((*out_base)[0] == '\0')
        *out_base = ".";
    *out_dir = slash == NULL
                   ? strdup(".")
                   : strndup(target,
                             slash == target ? 1 : (size_t)(slash - target));
    if (*out_dir == NULL)
        return accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin path");
    return ACCEL_OK;
}

/* The target's directory as a person reads it: relative to the link's. */
static char *target_dir_shown(const struct accel__dir *dir, const char *target,
                              const char *target_dir)
{
    if (target[0] == '/')
        return strdup(target_dir);
    return accel__strdup_printf("%s/%s", dir->path, target_dir);
}

/* Open the target, after its directory, without following a second link. */
static void open_target(const struct accel__trust *trust,
                        const struct accel__dir *target_dir, const char *base,
                        const char *target, struct accel__plugin_file *file)
{
    struct stat st;
    char *why = file->refusal;
    size_t size = sizeof file->refusal;
    if (fstatat(target_dir->fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(why, size, "a broken symbolic link to %.300s: %s", target,
                 strerror(errno));
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(why, size,
                 "a symbolic link to %.300s, itself a symbolic link: only one "
                 "link is followed",
                 target);
        return;
    }
    file->st = st;
    if (!S_ISREG(st.st_mode)) {
        file_refused(trust, file); /* the kind, without opening it */
        return;
    }
    open_in(file, target_dir->fd, base);
    if (file->fd < 0)
        snprintf(why, size, "the link's target %.300s cannot be opened: %s",
                 target, strerror(errno));
}

/*
 * The candidate is a symbolic link: check who may have made it, then open
 * its target's directory and the target, once each.
 */
static accel_status follow_link(const struct accel__trust *trust,
                                const struct accel__dir *dir, const char *name,
                                struct accel__plugin_file *file,
                                struct accel__dir *target_dir)
{
    char target[PATH_MAX];
    char *why = file->refusal;
    size_t size = sizeof file->refusal;
    if (!trust->insecure && dir->others_write &&
        !owner_trusted(trust, file->st.st_uid)) {
        snprintf(why, size,
                 "the symbolic link is owned by uid %u, neither root nor the "
                 "effective user (uid %u), in a directory others can write to",
                 (unsigned)file->st.st_uid, (unsigned)trust->euid);
        return ACCEL_OK;
    }
    ssize_t length = readlinkat(dir->fd, name, target, sizeof target);
    if (length < 0 || (size_t)length >= sizeof target) {
        snprintf(why, size, "a symbolic link that cannot be read: %s",
                 length < 0 ? strerror(errno) : "its target is too long");
        return ACCEL_OK;
    }
    target[length] = '\0';
    char *relative = NULL;
    const char *base = NULL;
    accel_status status = target_split(target, &relative, &base);
    char *shown = status == ACCEL_OK ? target_dir_shown(dir, target, relative)
                                     : NULL;
    if (status == ACCEL_OK && shown == NULL)
        status = accel__error(ACCEL_ERR_OUT_OF_HOST_MEMORY, "plugin path");
    if (status == ACCEL_OK)
        status = dir_open_at(trust, dir->fd, relative, shown,
                             "the directory of its link's target,", target_dir);
    if (status == ACCEL_OK && target_dir->fd < 0)
        snprintf(why, size, "a broken symbolic link to %.300s: %s", target,
                 target_dir->refusal);
    else if (status == ACCEL_OK)
        open_target(trust, target_dir, base, target, file);
    free(shown);
    free(relative);
    return status;
}

/* The first reason among the file's, its directory's, its target's. */
static void location_refused(const struct accel__trust *trust,
                             struct accel__plugin_file *file,
                             const struct accel__dir *dir,
                             const struct accel__dir *target_dir)
{
    if (file->refusal[0] != '\0' || file_refused(trust, file))
        return;
    if (dir->refusal[0] != '\0')
        snprintf(file->refusal, sizeof file->refusal, "%s", dir->refusal);
    else if (target_dir->refusal[0] != '\0')
        snprintf(file->refusal, sizeof file->refusal, "%s", target_dir->refusal);
}

accel_status accel__plugin_file_open(const struct accel__trust *trust,
                                     const struct accel__dir *dir,
                                     const char *name, const char *shown,
                                     struct accel__plugin_file *out_file)
{
    memset(out_file, 0, sizeof *out_file);
    out_file->fd = -1;
    struct accel__dir target_dir;
    memset(&target_dir, 0, sizeof target_dir);
    target_dir.fd = -1;
    if (dir->fd < 0) {
        snprintf(out_file->refusal, sizeof out_file->refusal, "%s", dir->refusal);
        return ACCEL_OK;
    }
    if (fstatat(dir->fd, name, &out_file->st, AT_SYMLINK_NOFOLLOW) != 0) {
        accel__log(ACCEL_LOG_INFO, "%s: skipped: %s", shown, strerror(errno));
        out_file->gone = true;
        return ACCEL_OK;
    }
    accel_status status = ACCEL_OK;
    if (S_ISLNK(out_file->st.st_mode))
        status = follow_link(trust, dir, name, out_file, &target_dir);
    else if (S_ISREG(out_file->st.st_mode)) {
        open_in(out_file, dir->fd, name);
        if (out_file->fd < 0)
            snprintf(out_file->refusal, sizeof out_file->refusal,
                     "the file cannot be opened: %s", strerror(errno));
    }
    if (status == ACCEL_OK)
        location_refused(trust, out_file, dir, &target_dir);
    accel__dir_close(&target_dir);
    return status;
}

void accel__plugin_file_close(struct accel__plugin_file *file)
{
    if (file->fd >= 0)
        close(file->fd);
    file->fd = -1;
}

/* ---- loading through the descriptor ---- */

static bool read_fd(void *context, uint64_t offset, void *buf, size_t size)
{
    int fd = *(const int *)context;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, (char *)buf + done, size - done,
                          (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

bool accel__plugin_file_exports(const struct accel__plugin_file *file,
                                uint64_t *out_count)
{
    int fd = file->fd;
    *out_count = 0;
    return fd >= 0 && accel__elf_exported_symbols(
                          read_fd, &fd, (uint64_t)file->st.st_size, out_count);
}

/* The name of the loaded object behind `handle`; "" when unknown. */
static const char *handle_name(void *handle)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL)
        return "";
    return map->l_name;
}

/*
 * The path dlopen gets for descriptor `fd`. The dynamic loader takes an
 * object it has under the same name for the one asked, so a name an
 * earlier object still holds (one that dlclose did not unload, opened
 * through a descriptor that has been closed since and whose number is
 * reused) is not used: the file gets another number instead. *out_fd is
 * `fd` or a duplicate of it; the caller closes the one it does not keep.
 */
static const char *name_for(int fd, const struct stat *st, int *out_fd,
                            char *path, size_t path_size, char *why,
                            size_t why_size)
{
    *out_fd = fd;
    for (int attempt = 0; attempt < 8; attempt++) {
        struct stat seen;
        snprintf(path, path_size, "/proc/self/fd/%d", *out_fd);
        errno = 0;
        if (stat(path, &seen) != 0 || seen.st_dev != st->st_dev ||
            seen.st_ino != st->st_ino) {
            snprintf(why, why_size,
                     "it cannot be loaded through its descriptor: %s %s (is "
                     "/proc mounted?); it is not loaded by its path instead",
                     path, errno ? strerror(errno) : "leads elsewhere");
            return why;
        }
        void *held = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        bool taken = held != NULL && strcmp(handle_name(held), path) == 0;
        if (held != NULL)
            dlclose(held);
        if (!taken)
            return NULL;
        int next = fcntl(fd, F_DUPFD_CLOEXEC, *out_fd + 1);
        if (*out_fd != fd)
            close(*out_fd);
        *out_fd = next;
        if (next < 0)
            break;
    }
    if (*out_fd >= 0 && *out_fd != fd)
        close(*out_fd);
    *out_fd = fd;
    snprintf(why, why_size,
             "no free name to load its descriptor under: "
             "objects the dynamic loader kept hold them");
    return why;
}

/*
 * Whether `handle` is the file checked. Loaded under our own fresh name it
 * is; under another name it is an object the dynamic loader already had,
 * which is ours only if it is the same inode (a second host in the same
 * process), not another with the same DT_SONAME.
 */
static const char *identity_refusal(void *handle, const char *path,
                                    const struct stat *st, char *why,
                                    size_t why_size)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) {
        snprintf(why, why_size, "the dynamic loader cannot say what it loaded");
        return why;
    }
    if (strcmp(map->l_name, path) == 0)
        return NULL;
    dev_t dev = 0;
    ino_t ino = 0;
    if (accel__mapped_file(map->l_ld, &dev, &ino) && dev == st->st_dev &&
        ino == st->st_ino)
        return NULL;
    snprintf(why, why_size,
             "the dynamic loader gave back %.300s, already loaded, which is "
             "not the file checked (a DT_SONAME they share?)",
             map->l_name[0] != '\0' ? map->l_name : "the program");
    return why;
}

const char *accel__plugin_file_load(int *fd, const struct stat *st,
                                    void **out_handle, char *why, size_t why_size)
{
    *out_handle = NULL;
    char elf_why[512], path[64];
    if (accel__elf_refusal(read_fd, fd, (uint64_t)st->st_size, elf_why,
                           sizeof elf_why) != NULL) {
        snprintf(why, why_size, "not a loadable shared object: %s", elf_why);
        return why;
    }
    int load_fd = *fd;
    if (name_for(*fd, st, &load_fd, path, sizeof path, why, why_size) != NULL)
        return why;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *refusal = NULL;
    if (handle == NULL) {
        const char *message = dlerror();
        snprintf(why, why_size, "dlopen failed: %s",
                 message ? message : "unknown error");
        refusal = why;
    } else if ((refusal = identity_refusal(handle, path, st, why, why_size)) !=
               NULL) {
        dlclose(handle);
    }
    if (refusal != NULL) {
        if (load_fd != *fd)
            close(load_fd);
        return refusal;
    }
    if (load_fd != *fd) {
        close(*fd);
        *fd = load_fd;
    }
    *out_handle = handle;
    return NULL;
}

bool accel__mapped_file(const void *address, dev_t *out_dev, ino_t *out_ino)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL)
        return false;
    char line[4096];
    bool found = false;
    uintptr_t at = (uintptr_t)address;
    while (!found && fgets(line, sizeof line, maps) != NULL) {
        uintptr_t start = 0, end = 0;
        unsigned major = 0, minor = 0;
        unsigned long long inode = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %x:%x %llu", &start,
                   &end, &major, &minor, &inode) == 5 &&
            at >= start && at < end) {
            *out_dev = makedev(major, minor);
            *out_ino = (ino_t)inode;
            found = true;
        }
    }
    fclose(maps);
    return found;
}
