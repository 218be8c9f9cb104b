// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hw_env.c - defaults, logging and bounded file reads for the seam.
 */
#include "hw_env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hw_env_init_system(struct hw_env *env)
{
        memset(env, 0, sizeof(*env));
        env->sysfs_root = "/sys";
        env->proc_root = "/proc";
        env->perf = &perf_ops_system;
        env->mmio = &mmio_ops_system;
        env->load = &load_ops_system;
}

void hw_logf(const struct hw_env *env, enum hw_log_level level, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        if (!env || !env->log)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        env->log(env->log_ctx, level, msg);
}

int hw_path(const struct hw_env *env, enum hw_fs fs, char *out, size_t size, const char *relpath)
{
        const char *root = fs == HW_SYSFS ? env->sysfs_root : env->proc_root;
        int n;

        if (!root || !*root)
                return -ENOENT;
        n = snprintf(out, size, "%s/%s", root, relpath);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* The absolute path of a printf-style path below the root. */
static int path_of(const struct hw_env *env, enum hw_fs fs, char *path, size_t size,
                   const char *relpath_fmt, va_list ap)
{
        char rel[512];
        int n = vsnprintf(rel, sizeof(rel), relpath_fmt, ap);

        if (n < 0 || (size_t)n >= sizeof(rel))
                return -ENAMETOOLONG;
        return hw_path(env, fs, path, size, rel);
}

ssize_t hw_read_file_v(const struct hw_env *env, enum hw_fs fs, char *buf, size_t size,
                       const char *relpath_fmt, va_list ap)
{
        char path[1024];
        size_t used = 0;
        int fd, err;

        if (!size)
                return -EINVAL;
        buf[0] = '\0';
        err = path_of(env, fs, path, sizeof(path), relpath_fmt, ap);
        if (err)
                return err;
        /* O_NONBLOCK: a FIFO planted under the root must not block the
         * reading thread in open(); only regular files are read (sysfs
         * attributes and procfs files are), never a device or a FIFO. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        {
                struct stat st;

                if (fstat(fd, &st) < 0)
                        err = -errno;
                else if (!S_ISREG(st.st_mode))
                        err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
                if (err) {
                        close(fd);
                        return err;
                }
        }
        /* Loop: sysfs answers in one read, but procfs and plain files in a
         * fixture tree may come in pieces. */
        for (;;) {
                ssize_t got;

                if (used == size - 1) {
                        /* Buffer full: the file fits only if it ends here. */
                        char extra;

                        got = read(fd, &extra, 1);
                        close(fd);
                        buf[used] = '\0';
                        return got > 0 ? -EFBIG : (ssize_t)used;
                }
                got = read(fd, buf + used, size - 1 - used);
                if (got < 0) {
                        if (errno == EINTR)
                                continue;
                        err = -errno;
                        close(fd);
                        return err;
                }
                if (got == 0)
                        break;
                used += (size_t)got;
        }
        close(fd);
        buf[used] = '\0';
        return (ssize_t)used;
}

ssize_t hw_read_file(const struct hw_env *env, enum hw_fs fs, char *buf, size_t size,
                     const char *relpath_fmt, ...)
{
        va_list ap;
        ssize_t ret;

        va_start(ap, relpath_fmt);
        ret = hw_read_file_v(env, fs, buf, size, relpath_fmt, ap);
        va_end(ap);
        return ret;
}

int hw_write_file(const struct hw_env *env, enum hw_fs fs, const char *text,
                  const char *relpath_fmt, ...)
{
        char path[1024];
        size_t len = strlen(text), done = 0;
        va_list ap;
        int fd, err;

        va_start(ap, relpath_fmt);
        err = path_of(env, fs, path, sizeof(path), relpath_fmt, ap);
        va_end(ap);
        if (err)
                return err;
        /* No O_CREAT: a sysfs attribute exists or the write is wrong.
         * O_TRUNC as the shell's `echo 1 >` does: sysfs ignores it, a plain
         * file in a fixture tree needs it. */
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* sysfs takes one write() per value; a short write is an error. */
        while (done < len) {
                ssize_t put = write(fd, text + done, len - done);

                if (put < 0 && errno == EINTR)
                        continue;
                if (put <= 0) {
                        err = put < 0 ? -errno : -EIO;
                        close(fd);
                        return err;
                }
                done += (size_t)put;
        }
        if (close(fd) < 0)
                return -errno;
        return 0;
}

int hw_list_dir(const struct hw_env *env, enum hw_fs fs, hw_dir_visit_fn visit, void *ctx,
                const char *relpath_fmt, ...)
{
        char path[1024];
        struct dirent *de;
        va_list ap;
        DIR *dir;
        int err;

        va_start(ap, relpath_fmt);
        err = path_of(env, fs, path, sizeof(path), relpath_fmt, ap);
        va_end(ap);
        if (err)
                return err;
        dir = opendir(path);
        if (!dir)
                return -errno;
        while (!err && (de = readdir(dir)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        err = visit(ctx, de->d_name);
        closedir(dir);
        return err;
}
