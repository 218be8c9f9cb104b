/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * safe_file.h - writing a file the user names without following what
 * someone else may have put in its place: the bytes go to a new file next
 * to it under a random name, created with O_CREAT|O_EXCL|O_NOFOLLOW (an
 * existing file or symbolic link of that name fails it, and another name
 * is drawn), and are renamed over the name at the end. A symbolic link at
 * the name itself is replaced, never written through; a reader sees the
 * old file or the whole new one; a failed write leaves no temporary file.
 *
 * The temporary file is "<path>.tmp-<16 hex digits>" in the same directory
 * (rename() needs the same file system).
 */
#ifndef PCIESCOPE_SAFE_FILE_H
#define PCIESCOPE_SAFE_FILE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct safe_file {
        int fd;              /* the temporary file; -1 when none is open */
        char path[PATH_MAX]; /* the name it becomes */
        char tmp[PATH_MAX];  /* the temporary name; "" when there is none */
};

/*
 * safe_file_open - create the temporary file for @path, with @mode less
 * the umask (0666: like any new file; 0600: private). Returns 0 (write to
 * f->fd), -ENAMETOOLONG, -EEXIST (64 random names all taken), or the
 * -errno of open() (-ENOENT: no such directory, -EACCES, ...).
 */
int safe_file_open(struct safe_file *f, const char *path, mode_t mode);

/*
 * safe_file_commit - flush the temporary file to disk, close it and rename
 * it to f->path. Returns 0 or -errno; on failure the temporary file is
 * removed and f->path is as it was.
 */
int safe_file_commit(struct safe_file *f);

/* safe_file_abort - close and remove the temporary file, if any. */
void safe_file_abort(struct safe_file *f);

/*
 * safe_file_write - @len bytes of @data as the whole of @path, as above.
 * Returns 0 or -errno (nothing left behind on failure).
 */
int safe_file_write(const char *path, const void *data, size_t len, mode_t mode);

#endif /* PCIESCOPE_SAFE_FILE_H */
